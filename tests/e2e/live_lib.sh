# live_lib.sh - shared by the `argus inject` / `argus instrument` tests
# (live_inject.sh, live_instrument.sh, live_stripped.sh).  Sourced after
# lib.sh and e2e_init.
#
#   live_start NAME CMD...  runs CMD with stdin from the fifo $T/NAME.in
#                           (held open on fd 9), stdout to $T/NAME.out,
#                           stderr to $T/NAME.err; sets LPID (reaped by
#                           lib.sh's EXIT trap, and by live_finish)
#   live_send LINE          one line to the app's stdin
#   live_wait_line RE [S]   waits (S seconds, default 10) for a line of
#                           $T/NAME.out matching RE; fails otherwise
#   live_syscalls           "TID:NR ..." of every thread (NR from
#                           /proc/PID/task/TID/syscall, "running" if none)
#   live_wait_blocked N     until N threads are blocked in a syscall (not
#                           restart_syscall, which only shows after our
#                           own interrupt) for 0.3 s in a row
#   live_finish RC          waits for the app to exit; fails unless RC
#   live_mem ADDR N         N bytes of the app's memory at ADDR, hex
#   live_file_bytes FILE VADDR N   N bytes of ELF FILE at virtual address
#                           VADDR (through its PT_LOAD headers), hex

live_start() {
	local name=$1
	shift
	LNAME=$name
	mkfifo "$T/$name.in"
	"$@" <"$T/$name.in" >"$T/$name.out" 2>"$T/$name.err" &
	LPID=$!
	E2E_PIDS+=("$LPID")
	exec 9>"$T/$name.in"
}

live_send() { printf '%s\n' "$1" >&9; }

live_wait_line() {
	local re=$1 secs=${2:-10} i
	for ((i = 0; i < secs * 20; i++)); do
		grep -qE -- "$re" "$T/$LNAME.out" 2>/dev/null && return 0
		kill -0 "$LPID" 2>/dev/null || break
		sleep 0.05
	done
	grep -qE -- "$re" "$T/$LNAME.out" 2>/dev/null && return 0
	cat "$T/$LNAME.err" >>"$T/$LNAME.out" 2>/dev/null
	fail "the app printed no line matching /$re/ (alive: $(kill -0 "$LPID" 2>/dev/null && echo yes || echo no))" "$T/$LNAME.out"
}

live_syscalls() {
	local t nr out=""
	for t in /proc/"$LPID"/task/*; do
		nr=$(cut -d' ' -f1 "$t/syscall" 2>/dev/null)
		out+="${t##*/}:${nr:-gone} "
	done
	printf '%s\n' "$out"
}

live_wait_blocked() {
	local want=$1 i n ok=0
	for ((i = 0; i < 200; i++)); do
		n=$(live_syscalls | tr ' ' '\n' | grep -E ':[0-9]+$' | grep -vc ':219$' || true)
		if [ "$n" -ge "$want" ]; then
			ok=$((ok + 1))
			[ $ok -ge 6 ] && return 0
		else
			ok=0
		fi
		sleep 0.05
	done
	fail "the app's threads did not all block in a syscall: $(live_syscalls)"
}

live_finish() {
	local want=$1 rc
	exec 9>&-
	wait "$LPID"
	rc=$?
	[ "$rc" = "$want" ] || fail "the app exited $rc, expected $want (stderr below)" "$T/$LNAME.err"
}

live_mem() {
	/usr/bin/python3 - "$LPID" "$1" "$2" <<'PY'
import sys
pid, addr, n = int(sys.argv[1]), int(sys.argv[2], 0), int(sys.argv[3])
with open("/proc/%d/mem" % pid, "rb") as f:
    f.seek(addr)
    print(f.read(n).hex())
PY
}

live_file_bytes() {
	/usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
path, vaddr, n = sys.argv[1], int(sys.argv[2], 0), int(sys.argv[3])
d = open(path, "rb").read()
assert d[:4] == b"\x7fELF" and d[4] == 2, "not a 64-bit ELF"
phoff, = struct.unpack_from("<Q", d, 0x20)
phentsize, phnum = struct.unpack_from("<HH", d, 0x36)
for i in range(phnum):
    p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
    if p_type == 1 and p_vaddr <= vaddr < p_vaddr + p_filesz:
        o = vaddr - p_vaddr + p_offset
        print(d[o:o + n].hex())
        sys.exit(0)
sys.exit("no PT_LOAD holds %#x" % vaddr)
PY
}

# live_same_blocked BEFORE: every thread of BEFORE (live_syscalls output)
# is blocked again in the same syscall.  A poll with a timeout that was
# interrupted restarts through restart_syscall (219) with the time left;
# futex without a timeout and pause re-run the same number.
live_same_blocked() {
	local before=$1 after tn tid nr now
	after=$(live_syscalls)
	kill -0 "$LPID" 2>/dev/null || fail "the app died" "$T/$LNAME.err"
	for tn in $before; do
		tid=${tn%%:*} nr=${tn##*:}
		now=$(printf '%s\n' $after | sed -n "s/^$tid://p")
		[ "$now" = "$nr" ] || { [ "$nr" = 7 ] && [ "$now" = 219 ]; } ||
			fail "thread $tid was in syscall $nr before, is in '$now' now ($before -> $after)"
	done
}
