#!/bin/bash
# e2e: `argus watch` refuses bad input with one clear line and a non-zero
# exit, and arms nothing then:
#   - no collector running (before `argus start`);
#   - an address not aligned to --len, a --len not in 1/2/4/8;
#   - a pid that names no process (a child that was reaped), and a
#     thread's id instead of its process's;
#   - a --reader that is not a thread of the process (another process's
#     thread, a dead tid), or not a number;
#   - a 5th watch on the same thread (x86 has 4 debug registers): the
#     first 4 arm, the 5th is refused by the kernel (ENOSPC) and says so;
#   - the same watch twice; removing an id that does not exist.
# Then --remove ID and --remove --pid P disarm what --list showed, and
# `argus status` counts the armed watches.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/watch_lib.sh"
e2e_init "$@"
APP=$APPS/flag_writer
[ -x "$APP" ] || fail "no $APP (build first)"

"$APP" "$T/go" >"$T/app.out" 2>"$T/app.err" &
P=$!
E2E_PIDS+=("$P")
for _ in $(seq 1 200); do grep -q OTHER_ADDR "$T/app.out" && break; sleep 0.01; done
ADDR=$(kv FLAG_ADDR "$T/app.out")

expect_clean_error 'collector is not running' "$ARGUS" watch --pid "$P" --addr "$ADDR"
start_collector --dir "$T/ring" --size 64M --no-watch-interactive

printf -v ODD '0x%x' $((ADDR + 2))
expect_clean_error "not aligned to --len 4" "$ARGUS" watch --pid "$P" --addr "$ODD" --len 4
expect_clean_error "bad --len '3': must be 1, 2, 4 or 8" "$ARGUS" watch --pid "$P" --addr "$ADDR" --len 3
expect_clean_error "bad --len '16'" "$ARGUS" watch --pid "$P" --addr "$ADDR" --len 16
expect_clean_error "bad --addr" "$ARGUS" watch --pid "$P" --addr banana
sh -c 'exit 0' &
DEAD=$!
wait "$DEAD"
expect_clean_error "no process $DEAD\$" "$ARGUS" watch --pid "$DEAD" --addr "$ADDR"
/usr/bin/python3 -c 'import threading, time
threading.Thread(target=time.sleep, args=(30,), daemon=True).start(); time.sleep(30)' &
PY=$!
E2E_PIDS+=("$PY")
for _ in $(seq 1 100); do [ "$(ls "/proc/$PY/task" 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.05; done
TH=$(ls "/proc/$PY/task" | grep -vx "$PY" | head -n 1)
[ -n "$TH" ] || fail "the python helper started no thread"
expect_clean_error "$TH is a thread of process $PY: watch the process \(--pid $PY\)" \
	"$ARGUS" watch --pid "$TH" --addr "$ADDR"
# the named reader must be a thread of the watched process: another
# process's thread, or a tid that names nothing, is refused
expect_clean_error "--reader $TH is not a thread of process $P" \
	"$ARGUS" watch --pid "$P" --addr "$ADDR" --reader "$TH"
expect_clean_error "--reader $DEAD is not a thread of process $P" \
	"$ARGUS" watch --pid "$P" --addr "$ADDR" --reader "$DEAD"
expect_clean_error "bad --reader 'x1'" "$ARGUS" watch --pid "$P" --addr "$ADDR" --reader x1
expect_clean_error "--reader goes with --pid and --addr" "$ARGUS" watch --list --reader "$P"
# argusd checks the reader itself: its control socket is the interface,
# the CLI only one client of it
/usr/bin/python3 - "$ARGUS_RUN_DIR/argusd.sock" "watch add $P $ADDR 4 $TH" >"$T/raw.out" 2>&1 <<'PY' ||
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall((sys.argv[2] + "\n").encode())
s.shutdown(socket.SHUT_WR)
ans = b""
while True:
    b = s.recv(4096)
    if not b:
        break
    ans += b
print(ans.decode().strip())
sys.exit(0 if ans.decode().startswith("error: reader %s is a thread of process" % sys.argv[2].split()[-1]) else 1)
PY
	fail "argusd armed a watch whose reader is another process's thread" "$T/raw.out"
log "argusd on a raw request with another process's reader: $(cat "$T/raw.out")"
kill "$PY"
wait "$PY" 2>/dev/null
"$ARGUS" watch --list >"$T/list0" 2>&1
grep -q "no watches armed" "$T/list0" || fail "a refused watch was armed" "$T/list0"

# A machine whose breakpoints do not fire (a VM without the debug
# registers passed through; tests/apps/bp_fires asks, apart from argusd's
# own check): argus watch must say so and arm nothing, not arm a watch
# that records nothing.  The rest needs watchpoints that fire.
if ! "$APPS/bp_fires" >"$T/bp" 2>&1; then
	grep -q '^fired 0 of' "$T/bp" || fail "bp_fires could not open a breakpoint" "$T/bp"
	expect_clean_error "hardware watchpoints do not fire on this machine" \
		"$ARGUS" watch --pid "$P" --addr "$ADDR"
	"$ARGUS" watch --list >"$T/list-nf" 2>&1
	grep -q "no watches armed" "$T/list-nf" || fail "a watch was armed on a machine whose breakpoints do not fire" "$T/list-nf"
	pass "bad input refused with one line each; this machine's breakpoints do not fire ($(cat "$T/bp")): argus watch says so and arms nothing (the register limits need watchpoints that fire)"
fi
# four debug registers: four watches on 8-byte-apart words of the process
for i in 0 1 2 3; do
	printf -v A '0x%x' $((ADDR + 8 * i))
	"$ARGUS" watch --pid "$P" --addr "$A" >"$T/w$i.out" 2>"$T/w$i.err" ||
		fail "watch $((i + 1)) of 4 was refused" "$T/w$i.err"
done
printf -v A5 '0x%x' $((ADDR + 32))
expect_clean_error "no debug register left on thread $P .*x86 has 4 per thread" \
	"$ARGUS" watch --pid "$P" --addr "$A5"
expect_clean_error "already watched" "$ARGUS" watch --pid "$P" --addr "$ADDR"
expect_clean_error "no watch with id 999" "$ARGUS" watch --remove 999
"$ARGUS" watch --list >"$T/list1" 2>&1
[ "$(grep -c "^[0-9]* *$P " "$T/list1")" = 4 ] || fail "--list does not show exactly the 4 armed watches" "$T/list1"
"$ARGUS" status --raw >"$T/st1" 2>&1
grep -q '^hw_watches=4$' "$T/st1" || fail "argus status --raw does not count 4 watches" "$T/st1"

# disarm one by id: a register is free again, the 5th address now arms
ID1=$(awk 'NR == 2 { print $1 }' "$T/list1")
"$ARGUS" watch --remove "$ID1" >"$T/rm1" 2>&1 || fail "--remove $ID1 failed" "$T/rm1"
"$ARGUS" watch --pid "$P" --addr "$A5" >"$T/w5.out" 2>"$T/w5.err" ||
	fail "after --remove the freed debug register could not be used" "$T/w5.err"
"$ARGUS" watch --remove --pid "$P" >"$T/rm2" 2>&1 || fail "--remove --pid failed" "$T/rm2"
grep -q "removed 4 watches" "$T/rm2" || fail "--remove --pid did not remove the 4 watches" "$T/rm2"
"$ARGUS" watch --list >"$T/list2" 2>&1
grep -q "no watches armed" "$T/list2" || fail "watches left after --remove --pid" "$T/list2"
touch "$T/go"
wait "$P" || fail "flag_writer failed" "$T/app.err"
pass "bad input refused in one line each; 4 debug registers, the 5th refused; --remove frees them"
