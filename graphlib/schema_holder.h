/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * schema_holder.h - the `holder` line of the user schema, internal to
 * graphlib (schema_holder.c; the public side is argus_holder_rule.h).
 */
#ifndef ARGUS_SCHEMA_HOLDER_H
#define ARGUS_SCHEMA_HOLDER_H

#include <stddef.h>
#include <stdint.h>

#include "argus_holder_rule.h"

struct argus_schema;

/* words[0..n) of a line whose first word is "holder", line `line`:
 * appends the rule to s->holders and returns 0; -EINVAL with what is
 * wrong in why[len] (one line, quoting the bad word, without the
 * "FILE:LINE: " the caller puts in front); -ENOMEM. */
int schema_holder_parse(struct argus_schema *s, char **words, int n, uint32_t line, char *why,
			size_t len);
/* Frees s->holders (argus_schema__free). */
void schema_holders_free(struct argus_schema *s);

#endif /* ARGUS_SCHEMA_HOLDER_H */
