#!/bin/bash
# e2e: bad flags and missing things fail with one clear line, no crash:
#   argus record without -o; argus save --last xyz; argus start --size
#   banana; argus dump /nonexistent; argus status with no collector (says
#   it is not running and how to start it).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

expect_clean_error '-o' "$ARGUS" record -- true
expect_clean_error 'xyz' "$ARGUS" save --last xyz -o "$T/f.argus"
[ ! -e "$T/f.argus" ] || fail "save with a bad --last still wrote $T/f.argus"
expect_clean_error 'banana' "$ARGUS" start --size banana
[ ! -e "$ARGUS_RUN_DIR/argusd.sock" ] || fail "start --size banana started a collector anyway"
expect_clean_error '/nonexistent' "$ARGUS" dump /nonexistent
expect_clean_error 'not running.*argus start' "$ARGUS" status
expect_clean_error 'not running' "$ARGUS" stop
expect_clean_error 'unknown command' "$ARGUS" frobnicate
pass "bad flags and missing things: clean one-line errors"
