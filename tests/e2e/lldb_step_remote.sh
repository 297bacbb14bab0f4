#!/bin/bash
# e2e: `argus step` inside lldb steps through lldb-server directly
# (lldb-plugin/remote_step.cpp): the same recording as lldb's own
# stepping, lldb's view of the thread and its memory true afterwards, and
# signals handed on.  The checks are in lldb_step_remote.py (one
# Python-hosted lldb-16, as python_flag.sh).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/step_lib.sh"
. "$(dirname "$0")/lldb_lib.sh"
lldb_require
APP=$APPS/step_determ
[ -x "$APP" ] || fail "no $APP"
"$PY" "$(dirname "$0")/lldb_step_remote.py" "$APP" "$PLUGIN" 3000 "$T" >"$T/check.out" 2>&1
rc=$?
cat "$T/check.out" | while read -r l; do log "$l"; done
[ $rc -eq 0 ] || fail "lldb_step_remote.py failed (exit $rc)" "$T/check.out" 40
[ "$(grep -c '^ok: ' "$T/check.out")" -eq 5 ] || fail "not all 5 checks ran" "$T/check.out"
pass
