/* units.h - parsing and printing of sizes ("2G", "512M") and durations
 * ("30s", "5m", "250ms") for flags.  Both return 0 or -EINVAL. */
#ifndef ARGUS_UNITS_H
#define ARGUS_UNITS_H
#include <stddef.h>
#include <stdint.h>
int argus_parse_size(const char *s, uint64_t *bytes);
int argus_parse_duration(const char *s, uint64_t *ns);
/* "1.5 GiB" style */
void argus_format_size(uint64_t bytes, char *buf, size_t len);
#endif
