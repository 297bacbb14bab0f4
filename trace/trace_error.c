/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * trace_error.c - argus_error__set(), the one way the trace library and
 * safe_file.c fill a struct argus_error.  A file of its own so that what
 * links safe_file.c (the symbolizer, and test_symbols, which stubs the
 * reader's functions) does not pull in the trace reader with it.
 */
#include <stdarg.h>
#include <stdio.h>

#include "trace_format.h"
#include "trace_internal.h"

int argus_error__set(struct argus_error *err, const char *path, int code,
		     uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!err)
		return code;
	err->code = code;
	err->offset = offset;
	if (path)
		n = snprintf(err->msg, sizeof(err->msg), "%s: ", path);
	if (n < 0 || (size_t)n >= sizeof(err->msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}
