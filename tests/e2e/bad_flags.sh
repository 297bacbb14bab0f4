#!/bin/bash
# e2e: bad flags and missing things fail with one clear line, no crash:
#   argus record without -o; argus save --last xyz; argus start --size
#   banana; argus dump /nonexistent; argus status with no collector (says
#   it is not running and how to start it).  argus start and argusd parse
#   one table (collector/argusd_opts.c): start refuses what argusd would,
#   by the same words, before anything starts.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

expect_clean_error '-o' "$ARGUS" record -- true
expect_clean_error 'xyz' "$ARGUS" save --last xyz -o "$T/f.argus"
[ ! -e "$T/f.argus" ] || fail "save with a bad --last still wrote $T/f.argus"
expect_clean_error 'banana' "$ARGUS" start --size banana
[ ! -e "$ARGUS_RUN_DIR/argusd.sock" ] || fail "start --size banana started a collector anyway"
# one table, one refusal: each bad line refused by start and by argusd,
# the same words after "argus start: " and "argusd: "
ARGUSD=$(dirname "$ARGUS")/argusd
for bad in "--watch-uid no_such_user_argus" "--size 1k" "--hang-threshold 0" \
	   "--watch a/b" "--mark-group -x" "--dir /a --dir /b" "--sample-hz zero" "stray"; do
	# shellcheck disable=SC2086 # each line is several words
	expect_clean_error '' "$ARGUS" start $bad
	s_line=${ERR_LINE#argus start: }
	# shellcheck disable=SC2086
	expect_clean_error '' "$ARGUSD" $bad
	d_line=${ERR_LINE#argusd: }
	[ "$s_line" = "$d_line" ] || fail "start and argusd refuse '$bad' differently: '$s_line' vs '$d_line'"
	[ ! -e "$ARGUS_RUN_DIR/argusd.sock" ] || fail "start $bad started a collector anyway"
done
expect_clean_error 'ready-fd' "$ARGUS" start --ready-fd 3
expect_clean_error '/nonexistent' "$ARGUS" dump /nonexistent
expect_clean_error 'not running.*argus start' "$ARGUS" status
expect_clean_error 'not running' "$ARGUS" stop
expect_clean_error 'unknown command' "$ARGUS" frobnicate
pass "bad flags and missing things: clean one-line errors"
