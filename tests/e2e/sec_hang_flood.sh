#!/bin/bash
# e2e (security): another user cannot flood root's hang keeper (issue 25,
# F5).  Any process can name itself like the admin's watched program, so
# `--watch COMM` watches only the uids of --watch-uid (default root's),
# and every bound of the keeper is per uid.  A private collector watches
# "victimapp" (--hang-threshold 1000, --hang-keep 2); hanger (sec/hanger.c)
# runs processes named victimapp that block 2 s in read() on a pipe.
#  1. default --watch-uid: nobody's 8 victimapps are not watched (watching
#     0, hangs_seen 0, nothing kept), while root's own victimapp's hang is
#     kept by itself, its .json saying "uid":0;
#  2. --watch-uid 0,nobody: root's hang is kept (snapshot R1); then nobody
#     runs 12 victimapps x 2 hangs while root's victimapp hangs again: at
#     most ARGUS_HANG_PEND_PER_UID (4) of nobody's hangs wait (+ root's
#     one), the rest are dropped and counted (hangs_dropped); root's second
#     hang is kept too (R2), and at the end root's R1 and R2 are both still
#     there -- nobody's hangs only ever pruned nobody's snapshots (at most
#     --hang-keep 2 of them, "uid":65534).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec_lib.sh"
e2e_init "$@"
sec_init
sec_build hanger
HD=$T/hangs
HANG="$PUBDIR/hanger victimapp"

# wait_kept N: until N snapshots of root's victimapp have their .json
# ("uid":0), 60 s at most
root_kept() { grep -l '"uid":0,' "$HD"/*-victimapp-*.json 2>/dev/null | wc -l; }
wait_root_kept() {
	for _ in $(seq 1 600); do
		[ "$(root_kept)" -ge "$1" ] && return 0
		sleep 0.1
	done
	{ ls -la "$HD"; cat "$ARGUS_RUN_DIR/argusd.log"; } >"$T/hd.ls" 2>&1
	fail "root's hang $1 was not kept within 60 s" "$T/hd.ls" 80
}

# ---- 1: by default nobody's victimapps are not watched ----
sec_start --no-watch-interactive --watch victimapp --hang-dir "$HD" --hang-keep 2 \
	--hang-threshold 1000 --hang-grace 1s
as_nobody $HANG 8 2000 1 >"$T/nobody1.out" &
NB=$!
E2E_PIDS+=("$NB")
for _ in $(seq 1 50); do grep -q started "$T/nobody1.out" && break; sleep 0.1; done
grep -q "started 8" "$T/nobody1.out" || fail "nobody's hanger did not start 8 processes" "$T/nobody1.out"
status_within_1s
[ "$(status_key watching)" = 0 ] ||
	fail "nobody's processes named victimapp are watched (watching=$(status_key watching))" "$STATUS"
wait "$NB"
sleep 1.5
status_within_1s
[ "$(status_key hangs_seen)" = 0 ] ||
	fail "nobody's victimapps' hangs were seen (hangs_seen=$(status_key hangs_seen))" "$STATUS"
[ "$(status_key watch_uids)" = 0 ] || fail "the default --watch-uid is not root's only" "$STATUS"
log "default: nobody's 8 victimapps not watched, no hang seen"
$HANG 1 2000 1 >/dev/null || fail "root's hanger failed"
wait_root_kept 1
ls "$HD"/*.argus | wc -l | has -x 1 || fail "more than root's snapshot was kept" "$T/hd.ls"
log "default: root's victimapp hang kept, \"uid\":0"
"$ARGUS" stop >/dev/null 2>&1 || fail "argus stop failed"
rm -rf "$HD"

# ---- 2: nobody watched too: per-uid pending cap, no cross-uid pruning ----
sec_start --no-watch-interactive --watch victimapp --watch-uid 0,nobody --hang-dir "$HD" \
	--hang-keep 2 --hang-threshold 1000 --hang-grace 1s
status_within_1s
[ "$(status_key watch_uids)" = 0,65534 ] || fail "--watch-uid 0,nobody is not 0,65534" "$STATUS"
$HANG 1 2000 1 >/dev/null || fail "root's hanger failed"
wait_root_kept 1
R1=$(grep -l '"uid":0,' "$HD"/*.json)
log "root's first hang kept: $(basename "$R1")"

as_nobody $HANG 12 2000 2 >"$T/nobody2.out" &
NB=$!
E2E_PIDS+=("$NB")
sleep 0.5
$HANG 1 2500 1 >/dev/null &
RH=$!
E2E_PIDS+=("$RH")
maxpend=0
while kill -0 "$NB" 2>/dev/null || kill -0 "$RH" 2>/dev/null; do
	status_within_1s
	p=$(status_key hangs_pending)
	[ "$p" -gt "$maxpend" ] && maxpend=$p
	sleep 0.2
done
grep -q "started 12" "$T/nobody2.out" || fail "nobody's hanger did not start 12 processes" "$T/nobody2.out"
wait_root_kept 2
# the rest of nobody's pending saves
for _ in $(seq 1 900); do
	status_within_1s
	p=$(status_key hangs_pending)
	[ "$p" -gt "$maxpend" ] && maxpend=$p
	[ "$p" = 0 ] && break
	sleep 0.1
done
[ "$p" = 0 ] || fail "hangs still pending 90 s after the flood" "$STATUS"
cp "$STATUS" "$T/status.final"
seen=$(status_key hangs_seen)
dropped=$(status_key hangs_dropped)
log "flood: hangs seen $seen, dropped $dropped, at most $maxpend pending at once"
[ "$seen" -ge 20 ] || fail "nobody's flood was not watched (--watch-uid 0,nobody): seen $seen" "$T/status.final"
[ "$maxpend" -le 5 ] || fail "$maxpend hangs pending at once: nobody's are not capped at 4" "$T/status.final"
[ "${dropped:-0}" -ge 1 ] || fail "no hang dropped: the per-uid pending cap did not act" "$T/status.final"
"$ARGUS" stop >/dev/null 2>&1 || fail "argus stop failed"
ls -la "$HD" >"$T/hd.ls" 2>&1
cat "$ARGUS_RUN_DIR/argusd.log" >>"$T/hd.ls" 2>/dev/null
[ -e "$R1" ] && [ -e "${R1%.json}.argus" ] ||
	fail "nobody's hangs pruned root's first snapshot $(basename "$R1")" "$T/hd.ls"
[ "$(root_kept)" = 2 ] || fail "root does not have its 2 snapshots at the end" "$T/hd.ls"
nob=$(grep -l '"uid":65534,' "$HD"/*.json 2>/dev/null | wc -l)
all=$(ls "$HD"/*.argus | wc -l)
[ "$nob" -ge 1 ] || fail "none of nobody's hangs was kept under --watch-uid 0,nobody" "$T/hd.ls"
[ "$all" -le 4 ] && [ "$nob" -le 2 ] || fail "more than --hang-keep 2 per uid: $all snapshots, $nob of nobody's" "$T/hd.ls"
log "root's 2 snapshots survived; nobody keeps $nob (keep 2 per uid)"
pass "nobody's victimapps are not watched by default; with --watch-uid its flood is capped per uid and never prunes root's snapshots"
