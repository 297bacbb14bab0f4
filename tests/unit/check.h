/* check.h - the smallest test harness: CHECK() records a failure with its
 * location and goes on; main() returns check_report().  Each test binary
 * is one ctest test; each TEST function is one named behaviour. */
#ifndef ARGUS_CHECK_H
#define ARGUS_CHECK_H
#include <stdio.h>

static int check_failures, check_count;

#define CHECK(cond) do { check_count++; if (!(cond)) { check_failures++; \
	fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_EQ(a, b) do { long long _a = (long long)(a), _b = (long long)(b); check_count++; \
	if (_a != _b) { check_failures++; fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%lld vs %lld)\n", \
	__FILE__, __LINE__, #a, #b, _a, _b); } } while (0)
#define RUN(test) do { int _f = check_failures; test(); \
	fprintf(stderr, "%s %s\n", check_failures == _f ? "ok  " : "FAIL", #test); } while (0)

static inline int check_report(void)
{
	fprintf(stderr, "%d checks, %d failed\n", check_count, check_failures);
	return check_failures ? 1 : 0;
}
#endif
