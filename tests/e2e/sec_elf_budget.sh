#!/bin/bash
# e2e (security): another user's ELF cannot cost the collector a crash,
# seconds of CPU or its memory.  As nobody (tests/e2e/sec/bignote.c), under
# a private collector: an ELF whose PT_NOTE claims 512 MiB (a sparse hole)
# is run from its mapping, blocked in it, then sampled; once with the file
# truncated 20 ms after the collector opened it (under ELF_C_READ_MMAP
# that was a SIGBUS), once without (that was 1.25 s of argusd CPU).
# Asserts each time: argusd lives, answers `status` within 1 s, keeps
# recording, used under 0.3 s of CPU and grew by under 64 MiB for it, and
# elf_over_budget grew.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec_lib.sh"
e2e_init "$@"
sec_init
sec_build bignote

sec_start
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$ARGUSD_PID/stat"; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$ARGUSD_PID/status"; }
hz=$(getconf CLK_TCK)
status_within_1s
over0=$(status_key elf_over_budget)
n=0
for trunc in 1 0; do
	n=$((n + 1))
	c0=$(cpu_ticks)
	r0=$(rss_kb)
	timeout 20 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$PUBDIR/bignote" "$ATT/big.$n" 0x20000000 "$trunc" >"$T/big.$n.out" 2>&1 ||
		fail "the big-note attack failed" "$T/big.$n.out"
	log "truncate=$trunc: the collector $(cat "$T/big.$n.out")"
	still_recording "the 512 MiB note (truncate=$trunc)"
	c1=$(cpu_ticks)
	r1=$(rss_kb)
	over=$(status_key elf_over_budget)
	log "argusd: $(( (c1 - c0) * 1000 / hz )) ms CPU (status calls included), RSS ${r0} -> ${r1} kB, elf_over_budget $over0 -> $over, unwind helper restarts $(status_key unwind_helper_restarts)"
	[ $(( (c1 - c0) * 1000 / hz )) -lt 300 ] ||
		fail "argusd spent $(( (c1 - c0) * 1000 / hz )) ms of CPU on one file (truncate=$trunc)"
	[ $((r1 - r0)) -lt 65536 ] || fail "argusd grew by $((r1 - r0)) kB for one file"
	[ "$over" -gt "$over0" ] || fail "elf_over_budget did not grow ($over0 -> $over) (truncate=$trunc)" "$STATUS" 80
	over0=$over
done
pass "a 512 MiB note, truncated or not: refused by size, counted, argusd unharmed"
