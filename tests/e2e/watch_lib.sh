# watch_lib.sh - helpers of the `argus watch` tests (sourced after lib.sh).

# sym_addr BINARY SYMBOL PID: the run-time address of SYMBOL (a global or
# static variable) of BINARY in process PID: its offset in the symbol
# table (nm) plus where PID mapped the file's first page (/proc/PID/maps).
# Waits up to 5 s for the mapping (the process may still be exec'ing).
sym_addr() {
	local bin=$1 sym=$2 pid=$3 off base
	off=$(nm "$bin" | awk -v s="$sym" '$3 == s { print $1; exit }')
	[ -n "$off" ] || fail "no symbol $sym in $bin (nm)"
	for _ in $(seq 1 500); do
		base=$(awk -v f="$(readlink -f "$bin")" '$6 == f && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' \
			"/proc/$pid/maps" 2>/dev/null)
		[ -n "$base" ] && break
		sleep 0.01
	done
	[ -n "$base" ] || fail "process $pid never mapped $bin"
	printf '0x%x\n' $((0x$base + 0x$off))
}

# hw_events DUMP: the hwwatch lines of an argus dump, as
# "tid pid addr value watch" (numbers in hex as printed).
hw_events() {
	sed -n 's|^ *.* \([0-9]*\)/\([0-9]*\) .*: hwwatch *addr=\(0x[0-9a-f]*\) len=[0-9]* value=\([^ ]*\) ip=[^ ]* watch=\([0-9]*\)$|\1 \2 \3 \4 \5|p' "$1"
}
