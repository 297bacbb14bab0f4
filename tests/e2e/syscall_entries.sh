#!/bin/bash
# e2e: where syscall entries come from (docs/collector.md, "Where entries
# come from").  By default the entries of the entry set (futex, the poll
# family, ...) come from per-call tracepoints syscalls:sys_enter_NAME and
# no raw sys_enter program is attached, so read/write run no BPF on entry;
# --all-entries attaches the raw sys_enter program instead.  Asserts, for
# the argus record process's own attachments (bpftool perf show, taken from
# inside the recorded command) and for the trace of tests/apps/futex_handoff:
#   default:       sys_enter_futex attached, no raw sys_enter, raw sys_exit;
#                  B's futex entries recorded with their uaddr, and the
#                  app's write exits recorded without entries;
#   --all-entries: raw sys_enter attached, no per-call tracepoint; the
#                  app's write entries recorded too.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
command -v bpftool >/dev/null || fail "bpftool is needed (scripts/install-deps.sh installs it)"

# $PPID of the recorded shell is argus record: its attachments only, not
# those of any other tracer on the machine.
snap='bpftool perf show | grep "^pid $PPID " > "$0"; exec "$@"'

record def -- bash -c "$snap" "$T/def.perf" "$APPS/futex_handoff" 10 2000
dump_to "$TRACE" "$T/def.dump"
export A=$(kv A_TID) B=$(kv B_TID) APP=$(kv PID)
log "argus record's attachments: $(wc -l <"$T/def.perf") perf events"
grep -q ' tracepoint  sys_enter_futex$' "$T/def.perf" ||
	fail "no per-call tracepoint sys_enter_futex attached by argus record" "$T/def.perf"
grep -q ' raw_tracepoint  sys_enter$' "$T/def.perf" &&
	fail "argus record attached the raw sys_enter program by default" "$T/def.perf"
grep -q ' raw_tracepoint  sys_exit$' "$T/def.perf" ||
	fail "argus record did not attach the raw sys_exit program" "$T/def.perf"
check_dump "$T/def.dump" '
B, APP = int(ENV["B"]), int(ENV["APP"])
fx = [e for e in ev if e["type"] == "sys_enter" and e["tid"] == B and e.get("sys", "") == "futex" and e["args"][0]]
we = [e for e in ev if e["type"] == "sys_enter" and e["pid"] == APP and e.get("sys", "") == "write"]
wx = [e for e in ev if e["type"] == "sys_exit" and e["pid"] == APP and e.get("sys", "") == "write"]
if not fx:
	say("FAIL: no sys_enter futex(uaddr) by B %d; its events:" % B); show(e for e in ev if e["tid"] == B); sys.exit(1)
if we:
	say("FAIL: write entries recorded without --all-entries:"); show(we); sys.exit(1)
if not wx:
	say("FAIL: no write exit of the app %d" % APP); sys.exit(1)
say("ok: %d futex entries by B, e.g.\n    %s\nok: %d write exits and no write entry" % (len(fx), fx[0]["line"], len(wx)))
' || fail "default syscall entries are wrong (see above)"

record all --all-entries -- bash -c "$snap" "$T/all.perf" "$APPS/futex_handoff" 10 2000
dump_to "$TRACE" "$T/all.dump"
export APP=$(kv PID)
grep -q ' raw_tracepoint  sys_enter$' "$T/all.perf" ||
	fail "--all-entries did not attach the raw sys_enter program" "$T/all.perf"
grep -q ' tracepoint  sys_enter_' "$T/all.perf" &&
	fail "--all-entries attached per-call tracepoints as well (entries twice)" "$T/all.perf"
check_dump "$T/all.dump" '
APP = int(ENV["APP"])
we = [e for e in ev if e["type"] == "sys_enter" and e["pid"] == APP and e.get("sys", "") == "write"]
if not we:
	say("FAIL: --all-entries recorded no write entry of the app %d" % APP); sys.exit(1)
say("ok: --all-entries: %d write entries, e.g.\n    %s" % (len(we), we[0]["line"]))
' || fail "--all-entries syscall entries are wrong (see above)"
pass "entries from per-call tracepoints by default, from raw sys_enter with --all-entries"
