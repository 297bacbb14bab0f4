#!/bin/bash
# e2e (security): files root writes cannot be steered by another user.
# nobody prepares, in a directory it owns: a symlink to a file of root's,
# a file of its own (mode 0666), a FIFO.  Asserts, for `argus record -o`,
# `argus save -o` and `argus export -o`:
#   each is refused with one line that names the file and says --force,
#   promptly (a FIFO does not block it), and nothing is written through it:
#   the link's target is unchanged, nobody's file stays nobody's and empty;
#   with --force the link is replaced (not followed) by a root-owned 0600
#   trace, and the target is still unchanged.
# And for `argusd --dir D` (through `argus start`): a D owned by nobody, a
# group-writable D, and a D holding a ring.argus nobody created are each
# refused with one line saying what to fix, before any BPF is loaded.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec_lib.sh"
e2e_init "$@"
sec_init

VICTIM=$PUBDIR/victim
printf 'root data\n' >"$VICTIM"
chmod 644 "$VICTIM"
want_victim=$(sha256sum <"$VICTIM")

plant() {       # fresh attacker files in $ATT
	as_nobody rm -f "$ATT/link" "$ATT/pre" "$ATT/fifo"
	as_nobody ln -s "$VICTIM" "$ATT/link"
	as_nobody sh -c "umask 0; : >'$ATT/pre'"
	as_nobody mkfifo -m 666 "$ATT/fifo"
}

untouched() {   # WHAT: nothing was written through the attacker's files
	[ "$(sha256sum <"$VICTIM")" = "$want_victim" ] || fail "$1 wrote through the symlink into $VICTIM"
	[ "$(stat -c %a "$VICTIM")" = 644 ] || fail "$1 changed the mode of the symlink's target"
	[ -L "$ATT/link" ] || fail "$1 replaced the symlink without --force"
	[ "$(stat -c '%u %s %a' "$ATT/pre")" = "65534 0 666" ] ||
		fail "$1 wrote into nobody's pre-created file: $(stat -c 'uid %u, %s bytes, mode %a' "$ATT/pre")"
	[ -p "$ATT/fifo" ] || fail "$1 replaced the FIFO without --force"
}

refused() {     # WHAT-PATTERN CMD...: refused, one line, promptly
	expect_clean_error "$@"
}

plant
for f in link pre fifo; do
	refused "$ATT/$f.*(exists|symbolic link|FIFO).*--force" \
		"$ARGUS" record -o "$ATT/$f" -- true
done
untouched "argus record -o"

"$ARGUS" record --force -o "$ATT/link" -- true >/dev/null 2>"$T/force.err" ||
	fail "argus record --force -o over a symlink failed" "$T/force.err"
[ ! -L "$ATT/link" ] && [ -f "$ATT/link" ] || fail "--force did not replace the symlink by a file"
[ "$(stat -c '%u %a' "$ATT/link")" = "0 600" ] ||
	fail "--force made $(stat -c 'uid %u mode %a' "$ATT/link"), want root 0600"
"$ARGUS" dump "$ATT/link" --stats >/dev/null 2>"$T/dump.err" || fail "the --force output is no trace" "$T/dump.err"
[ "$(sha256sum <"$VICTIM")" = "$want_victim" ] || fail "record --force wrote through the symlink"
log "record: link, pre-created file and FIFO refused; --force replaced the link, target intact"

sec_start
plant
for f in link pre fifo; do
	refused "$ATT/$f.*(exists|symbolic link|FIFO).*--force" \
		"$ARGUS" save -o "$ATT/$f"
done
untouched "argus save -o"
"$ARGUS" save --force -o "$ATT/pre" >/dev/null 2>"$T/save.err" || fail "argus save --force failed" "$T/save.err"
[ "$(stat -c '%u %a' "$ATT/pre")" = "0 600" ] ||
	fail "save --force over nobody's file made $(stat -c 'uid %u mode %a' "$ATT/pre"), want root 0600"
# a file argus made itself is overwritten without --force (lldb's session
# snapshot is saved again and again to one path)
"$ARGUS" save -o "$ATT/pre" >/dev/null 2>"$T/save2.err" || fail "argus save over its own file failed" "$T/save2.err"
log "save: link, pre-created file and FIFO refused; --force replaced nobody's file by root's 0600"

plant
"$ARGUS" save -o "$T/saved.argus" >/dev/null 2>"$T/save3.err" || fail "argus save failed" "$T/save3.err"
for f in link pre fifo; do
	refused "$ATT/$f.*(exists|symbolic link|FIFO).*--force" \
		"$ARGUS" export "$T/saved.argus" -o "$ATT/$f"
done
untouched "argus export -o"
log "export: link, pre-created file and FIFO refused"

# --dir: checked before anything is loaded, one line saying what to fix
# (another run dir: the collector above is running)
export ARGUS_RUN_DIR=$T/run2
E2E_RUNDIRS+=("$ARGUS_RUN_DIR")
mkdir "$ATT/d" && chown 65534:65534 "$ATT/d"
refused "owned by uid 65534" "$ARGUS" start --dir "$ATT/d" --size 64M
mkdir -m 775 "$PUBDIR/gw" && chmod 775 "$PUBDIR/gw"
refused "writable by group or others.*chmod go-w" "$ARGUS" start --dir "$PUBDIR/gw" --size 64M
mkdir -m 755 "$PUBDIR/pre"
: >"$PUBDIR/pre/ring.argus" && chown 65534:65534 "$PUBDIR/pre/ring.argus" && chmod 666 "$PUBDIR/pre/ring.argus"
refused "ring.argus.*did not create.*uid 65534" "$ARGUS" start --dir "$PUBDIR/pre" --size 64M
[ "$(stat -c '%u %s' "$PUBDIR/pre/ring.argus")" = "65534 0" ] || fail "argusd wrote into the pre-created ring"
log "argusd --dir: nobody's dir, a group-writable dir and a pre-created ring refused"
export ARGUS_RUN_DIR=$T/run
still_recording "the refused attempts"

pass "-o never follows a link or reuses a file argus did not create; --dir and its ring must be root's"
