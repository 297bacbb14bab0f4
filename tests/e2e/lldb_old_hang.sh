#!/bin/bash
# e2e: lldb attached to a hang older than the snapshot `argus diagnose`
# takes.  A user finds a program hung for minutes and attaches; the plugin
# saves the last 2 min of the ring, in which the hung thread only sleeps
# until lldb's attach wakes it (or, attached a while before asking, does
# nothing at all).  Before, the answer was "no hang of process P".
#
# Real programs: util-linux flock(1).  `flock L sleep 120` holds the lock,
# `flock L true` waits for it; ground truth from /proc/locks (the holder's
# pid) and /proc/PID/task/PID/children (its sleep).  The plugin's default
# window is shortened to 3 s through ARGUS_LLDB_LAST (so the test need
# not wait 2 minutes); the waiter has waited 6 s when lldb attaches.
# Asserts:
#   1. lldb, `argus diagnose`: says the thread slept from before the
#      snapshot, takes a 10 min one, and blames the /proc/locks holder
#      with its sleep child next; the same with --json, whose output
#      stays one clean JSON object;
#   2. the CLI on a 3 s snapshot of the still-waiting process (nothing of
#      it in the snapshot): exit 3 and one line saying the wait is older
#      than the trace, not "no process"; on a 10 min snapshot, the same
#      culprit as lldb.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/lldb_lib.sh"
lldb_require
command -v flock >/dev/null || fail "no flock (util-linux)"

start_collector --dir "$T/ring" --size 256M

L=$T/lock
: >"$L"
ino=$(stat -c %i "$L")
# (no output fds: the holder's sleep, if ever left behind, must not
# keep ctest's pipe open)
flock "$L" sleep 120 >/dev/null 2>&1 </dev/null &
H=$!
E2E_PIDS+=("$H")
holds() { grep -E "^[0-9]+: FLOCK +ADVISORY +WRITE +[0-9]+ [0-9a-f]+:[0-9a-f]+:$ino " /proc/locks; }
for _ in $(seq 200); do holds >/dev/null && break; sleep 0.05; done
holds >/dev/null || fail "the holder never took the lock"
HOLDER=$(holds | awk '{print $5}')
CHILD=$(awk '{print $1}' "/proc/$HOLDER/task/$HOLDER/children")
E2E_PIDS+=("$CHILD")
flock "$L" true >/dev/null 2>&1 </dev/null &
V=$!
E2E_PIDS+=("$V")
for _ in $(seq 200); do
	grep -qE "^[0-9]+: -> FLOCK +ADVISORY +WRITE +$V [0-9a-f]+:[0-9a-f]+:$ino " /proc/locks && break
	sleep 0.05
done
grep -qE -- "-> FLOCK +ADVISORY +WRITE +$V " /proc/locks || fail "the second flock never waited"
log "ground truth: waiter $V, holder $HOLDER (flock), its child $CHILD ($(cat "/proc/$CHILD/comm")); /proc/locks: $(grep -E ":$ino " /proc/locks | tr -s ' ' | paste -sd '|')"
sleep 6

# culprit JSON PID CHILD WHAT: the diagnosis names PID, then CHILD
check_culprit_json() {
	python3 - "$1" "$2" "$3" "$4" <<'PY' || fail "$4: the culprit is not the /proc/locks holder" "$1"
import json, sys
path, holder, child, what = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
d = json.load(open(path))
c = d.get("culprit") or {}
chain = [x.get("pid") for x in d.get("chain") or []]
print(f"[lldb_old_hang] {what}: culprit {c.get('comm')} {c.get('pid')} rule {c.get('rule')}, "
      f"chain {chain}, hang {d['hang']['duration_ns'] / 1e9:.1f} s", file=sys.stderr)
sys.exit(0 if c.get("pid") == holder and chain[:1] == [child] else 1)
PY
}

# -- 1. lldb -----------------------------------------------------------------
ARGUS_LLDB_LAST=3s lldb_run old -p "$V" -o "plugin load $PLUGIN" -o "argus diagnose" \
	-o "script print('JSON_BEGIN')" -o "argus diagnose --json" -o "script print('JSON_END')" \
	-o "script lldb.debugger.GetSelectedTarget().GetProcess().Detach()"
lldb_no_crash
[ "$LLDB_RC" -eq 0 ] || fail "the lldb session failed" "$LLDB_OUT" 60
expect_in "$LLDB_OUT" "thread $V slept from before the trace began until a debugger woke it" \
	"lldb's diagnose did not say the wait is older than its snapshot"
expect_in "$LLDB_OUT" "^argus: saved the last 10m of the collector's ring" \
	"lldb's diagnose did not take the longer snapshot"
expect_in "$LLDB_OUT" "^culprit +flock $HOLDER/$HOLDER " "lldb's diagnose did not blame the holder flock $HOLDER"
sed -n '/^JSON_BEGIN/,/^JSON_END/p' "$LLDB_OUT" | grep '^{' >"$T/lldb.json"
[ "$(wc -l <"$T/lldb.json")" -eq 1 ] || fail "argus diagnose --json printed more than one JSON line" "$LLDB_OUT" 60
check_culprit_json "$T/lldb.json" "$HOLDER" "$CHILD" "lldb --json"
sed -n '/^(lldb) argus diagnose$/,/^(lldb) script/p' "$LLDB_OUT" | head -n 12 | sed 's/^/    /' >&2

# -- 2. the CLI ----------------------------------------------------------------
# lldb's detach let the waiter restart its flock(2): 4 s later a 3 s
# snapshot holds nothing of it
kill -0 "$V" 2>/dev/null || fail "the waiter is gone before the CLI part"
sleep 4
"$ARGUS" save --last 3s -o "$T/short.argus" 2>"$T/save.err" || fail "argus save --last 3s failed" "$T/save.err"
expect_clean_error "process $V is alive but did nothing in the trace" "$ARGUS" diagnose "$T/short.argus" --pid "$V"
[ "$ERR_RC" -eq 3 ] || fail "argus diagnose of a process asleep through the snapshot exited $ERR_RC, not 3"
"$ARGUS" save --last 10m -o "$T/long.argus" 2>"$T/save.err" || fail "argus save --last 10m failed" "$T/save.err"
"$ARGUS" diagnose "$T/long.argus" --pid "$V" --json >"$T/cli.json" 2>"$T/cli.err" ||
	fail "argus diagnose on the 10 min snapshot failed" "$T/cli.err"
check_culprit_json "$T/cli.json" "$HOLDER" "$CHILD" "CLI, 10 min snapshot"

# the sleep first: flock(1) killed would leave it holding the lock
kill "$CHILD" "$H" "$V" 2>/dev/null
pass "a hang older than the snapshot: lldb takes a longer one and blames the /proc/locks holder; the CLI exits 3 with why"
