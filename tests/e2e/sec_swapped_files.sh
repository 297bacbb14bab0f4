#!/bin/bash
# e2e (security): a process swaps a file it mapped for something else, and
# the collector (and root's CLI) must neither block, nor take a terminal,
# nor read what is now at the path.  As nobody (tests/e2e/sec/swap_mapped.c),
# under a private collector: map DIR/lib.bin, block in it (the collector
# learns the mapping), unmap it, put at the path
#   a FIFO            (an open would block forever),
#   a link to its pty (an open would make it argusd's controlling terminal;
#                      closing the master then sends it SIGHUP),
#   another file      (a different inode: not what was mapped),
# and spin so that samples are unwound with the stale maps (the attack
# waits until the collector has read its maps naming lib.bin).  Asserts after
# each: argusd answers `status` within 1 s, its event count grows, it lost
# no events meanwhile, and files_skipped grew; argusd is no session leader
# and has no controlling terminal; root's `argus dump --stacks` of a trace
# naming the FIFO finishes within 20 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec_lib.sh"
e2e_init "$@"
sec_init
sec_build swap_mapped

sec_start
read -r _ _ _ _ _ sess tty _ <"/proc/$ARGUSD_PID/stat"
[ "$sess" != "$ARGUSD_PID" ] || fail "argusd is a session leader: a tty it opened could become its terminal"
[ "$tty" = 0 ] || fail "argusd has a controlling terminal (tty_nr $tty)"
log "argusd: session $sess (not its own pid), no controlling terminal"

status_within_1s
skipped0=$(status_key files_skipped)
lost0=$(status_key lost)
# attack MODE TRY: one run of swap_mapped, in a directory of its own
# (nothing deleted until the end: ext4 hands a freed inode number out
# again at once, and a new lib.bin on the inode of one the unwinder cached
# while it was mapped would be answered from the cache)
attack() {
	as_nobody mkdir "$ATT/$1.$2"
	# its worst case: two waits of 10 s, 16 probe rounds of 0.3 s and
	# the 2 s spin (~32 s); past it, the program hangs
	timeout 40 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$PUBDIR/swap_mapped" "$ATT/$1.$2" "$1" 2 >"$T/$1.out" 2>&1 ||
		fail "the $1 attack program failed" "$T/$1.out"
	grep -q "SWAPPED $1" "$T/$1.out" || fail "the $1 attack did not get to swap" "$T/$1.out"
	if grep -q "^LEARNT" "$T/$1.out"; then
		log "$1 try $2: the collector read the maps naming lib.bin, then $(kv REREADS "$T/$1.out") more time(s) before the swap"
	else
		log "$1 try $2: no maps read named the barrier's probe, or then lib.bin, within 10 s"
	fi
	! grep -q "^UNSETTLED" "$T/$1.out" ||
		log "$1 try $2: the collector kept reading the maps: lib.bin was unmapped before a quiet round"
}

for mode in fifo pty file; do
	# swap_mapped waits until the collector has read its maps and swaps
	# with no stack copy on the way (its header says how).  What can
	# still spoil a try: a sample on the few instructions between its
	# raw syscalls, which has the collector open the real file, rightly,
	# and keep it; or a collector over 300 ms behind.  So up to 4 tries,
	# each a new process.
	for try in 1 2 3 4; do
		attack "$mode" "$try"
		still_recording "the $mode swap (try $try)"
		skipped=$(status_key files_skipped)
		[ "$skipped" -gt "$skipped0" ] && break
		log "$mode try $try: the collector had opened lib.bin before the swap; again"
	done
	[ "$skipped" -gt "$skipped0" ] ||
		fail "after 4 $mode swaps files_skipped did not grow ($skipped0 -> $skipped)" "$STATUS"
	log "$mode: files_skipped $skipped0 -> $skipped"
	skipped0=$skipped
	if [ "$mode" = fifo ]; then
		# root's CLI over a trace that names the FIFO, which is still there
		"$ARGUS" save -o "$T/fifo.argus" >/dev/null 2>"$T/save.err" || fail "argus save failed" "$T/save.err"
		[ -p "$ATT/fifo.$try/lib.bin" ] || fail "the FIFO is gone before the CLI could be tried"
		fpid=$(kv PID "$T/fifo.out")
		timeout 20 "$ARGUS" dump "$T/fifo.argus" --stacks --pid "$fpid" >"$T/fifo.dump" 2>"$T/fifo.dump.err"
		rc=$?
		[ $rc -ne 124 ] || fail "argus dump --stacks hung on the FIFO (killed after 20 s)" "$T/fifo.dump.err"
		[ $rc -eq 0 ] || fail "argus dump --stacks failed ($rc)" "$T/fifo.dump.err"
		grep -q "^	" "$T/fifo.dump" || fail "the dump has no stack of the FIFO process to symbolize" "$T/fifo.dump"
		log "root's dump --stacks over the FIFO finished"
	fi
done
is_argusd "$ARGUSD_PID" || fail "argusd died (SIGHUP from the pty?)"
lost=$(status_key lost)
[ "$lost" = "$lost0" ] || fail "argusd lost events during the attacks ($lost0 -> $lost)" "$STATUS"
pass "FIFO, pty and swapped file at a mapped path: skipped and counted, argusd kept answering and recording"
