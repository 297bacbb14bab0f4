/* units.c - see units.h. */
#include "units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int parse_scaled(const char *s, const char *const *suf, const double *mul,
			double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	for (int i = 0; suf[i]; i++) {
		if (!strcasecmp(end, suf[i])) {
			*out = v * mul[i];
			return 0;
		}
	}
	return -EINVAL;
}

int argus_parse_size(const char *s, uint64_t *bytes)
{
	static const char *const suf[] = { "", "b", "k", "kb", "kib", "m", "mb", "mib",
					   "g", "gb", "gib", "t", "tb", "tib", NULL };
	static const double mul[] = { 1, 1, 1024., 1024., 1024., 1048576., 1048576.,
				      1048576., 1073741824., 1073741824., 1073741824.,
				      1099511627776., 1099511627776., 1099511627776. };
	double v;

	if (parse_scaled(s, suf, mul, &v) || v >= 1.8e19)
		return -EINVAL;
	*bytes = (uint64_t)v;
	return 0;
}

int argus_parse_duration(const char *s, uint64_t *ns)
{
	static const char *const suf[] = { "ns", "us", "ms", "s", "", "m", "min", "h", NULL };
	static const double mul[] = { 1, 1e3, 1e6, 1e9, 1e9, 60e9, 60e9, 3600e9 };
	double v;

	if (parse_scaled(s, suf, mul, &v) || v >= 1.8e19)
		return -EINVAL;
	*ns = (uint64_t)v;
	return 0;
}

void argus_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int i = 0;

	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.1f %s", v, u[i]);
}
