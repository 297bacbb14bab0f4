#!/bin/bash
# e2e: the Debian package (packaging/, docs/install.md), made from this
# build tree with `cpack` (scripts/package.sh makes the same from a Release
# tree of its own; this test does not build a second tree):
#   1. its control data: Depends computed by dpkg-shlibdeps and naming the
#      libraries the binaries link, /etc/default/argus a conffile, the
#      maintainer scripts there;
#   2. its files: argus, argusd, argus-pg-holders in /usr/bin, the plugin
#      and the interposer in the multiarch lib dir, argus_work.h, the unit
#      in /lib/systemd/system, /etc/default/argus, and nothing else;
#   3. unpacked (dpkg-deb -x): argus --help, argus record of `sleep 1`,
#      `argus lldb-init` names the packaged plugin and lldb-16 then knows
#      `help argus`;
#   4. the unit passes `systemd-analyze verify` (on a copy whose ExecStart
#      is the unpacked argusd: verify wants the binary to exist), with no
#      warning at all;
#   5. the unit's argusd as systemd would run it: options from the
#      packaged /etc/default/argus, under the unit's CapabilityBoundingSet
#      and NoNewPrivileges (setpriv), every file system read-only but its
#      ring and run dirs (ProtectSystem=strict, ProtectHome=read-only, in a
#      mount namespace of its own), with NOTIFY_SOCKET: it says READY=1,
#      records, and answers argus status;
#   6. dpkg's life cycle in a scratch root (dpkg --root, maintainer scripts
#      run chrootless with DPKG_ROOT): install; a collector of that root
#      running; remove stops it (no process, none of its BPF programs
#      left) and keeps its ring; purge removes the ring and leaves no file.
# Nothing is installed into this machine's root, and systemd is not needed.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/lldb_lib.sh"   # expect_in, lldb-16
lldb_require
for t in cpack dpkg-deb dpkg dpkg-shlibdeps systemd-analyze setpriv bpftool python3; do
	command -v $t >/dev/null || fail "no $t (scripts/install-deps.sh)"
done
[ -f "$BUILD/CPackConfig.cmake" ] || fail "no $BUILD/CPackConfig.cmake: reconfigure the build (packaging/CMakeLists.txt)"
MA=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)

# -- 1. the package and its control data ---------------------------------------
timeout -k 5 150 cpack --config "$BUILD/CPackConfig.cmake" -B "$T/pkg" >"$T/cpack.out" 2>&1 ||
	fail "cpack failed" "$T/cpack.out" 60
DEB=$(ls "$T"/pkg/argus_*_amd64.deb 2>/dev/null | head -n 1)
[ -n "$DEB" ] || fail "cpack made no argus_*_amd64.deb" "$T/cpack.out"
log "package: $(basename "$DEB"), $(stat -c %s "$DEB") bytes"
dpkg-deb -I "$DEB" >"$T/info" 2>&1 || fail "dpkg-deb -I failed" "$T/info"
dpkg-deb -f "$DEB" Depends >"$T/depends"
log "Depends: $(cat "$T/depends")"
expect_in "$T/info" '^ Package: argus$' "the package is not named argus"
expect_in "$T/info" '^ Architecture: amd64$' "the package is not amd64"
# what the binaries link (objdump -p NEEDED), as dpkg-shlibdeps names it
for lib in 'libc6 \(>= ' 'libbpf1 \(>= ' 'libdw1 \(>= ' 'libelf1 \(>= ' 'zlib1g \(>= ' 'libzstd1 \(>= ' 'libcapstone4 \(>= ' 'libmnl0 \(>= '; do
	expect_in "$T/depends" "(^|, )$lib" "Depends lacks $lib (not computed?)"
done
expect_in "$T/info" '^ Recommends: lldb-16$' "the package does not recommend lldb-16"
dpkg-deb --ctrl-tarfile "$DEB" | tar -t >"$T/control.files"
for f in postinst prerm postrm conffiles; do
	expect_in "$T/control.files" "^\\./$f\$" "no $f in the control archive"
done
dpkg-deb --ctrl-tarfile "$DEB" | tar -xO ./conffiles >"$T/conffiles"
expect_in "$T/conffiles" '^/etc/default/argus$' "/etc/default/argus is not a conffile"

# -- 2. its files --------------------------------------------------------------
dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ {print $6}' | sort >"$T/files"
cat >"$T/files.want" <<EOF
./etc/default/argus
./lib/systemd/system/argus.service
./usr/bin/argus
./usr/bin/argus-pg-holders
./usr/bin/argusd
./usr/include/argus_work.h
./usr/lib/$MA/libargus-interpose.so
./usr/lib/$MA/libargus-lldb.so
./usr/share/bash-completion/completions/argus
./usr/share/doc/argus/README.md
./usr/share/doc/argus/install.md
./usr/share/man/man1/argus.1
./usr/share/man/man8/argusd.8
EOF
# a page per command (argus-COMMAND.1, tests/e2e/manpages.sh checks them)
"$ARGUS" --help | sed -n '/^commands:/,/^$/p' | sed -n 's#^  \([a-z][a-z-]*\) .*#./usr/share/man/man1/argus-\1.1#p' \
	>>"$T/files.want"
sort -o "$T/files.want" "$T/files.want"
diff "$T/files.want" "$T/files" >"$T/files.diff" ||
	fail "the package's files are not the expected ones (< wanted, > in the package)" "$T/files.diff"
dpkg-deb -c "$DEB" | awk '$1 ~ /x/ {print $6}' >"$T/exec"
for f in ./usr/bin/argus ./usr/bin/argusd ./usr/bin/argus-pg-holders; do
	grep -qx "$f" "$T/exec" || fail "$f is not executable in the package" "$T/exec"
done

# -- 3. unpacked: argus runs, records, and wires the plugin into lldb-16 ---------
X=$T/x
dpkg-deb -x "$DEB" "$X"
"$X/usr/bin/argus" --help >"$T/help.out" 2>&1 || fail "the packaged argus --help failed" "$T/help.out"
expect_in "$T/help.out" '^usage: argus COMMAND' "the packaged argus --help prints no usage"
timeout -k 5 60 "$X/usr/bin/argus" record -o "$T/sleep.argus" -- sleep 1 >"$T/record.out" 2>&1 ||
	fail "the packaged argus record -- sleep 1 failed" "$T/record.out"
"$ARGUS" dump "$T/sleep.argus" >"$T/sleep.dump" 2>&1 || fail "cannot dump the packaged argus's recording" "$T/sleep.dump"
expect_in "$T/sleep.dump" '^ *sleep +[0-9]+/[0-9]+ ' "the packaged argus recorded no event of sleep"
log "record: $(tail -n 1 "$T/record.out")"
HOME=$T "$X/usr/bin/argus" lldb-init >"$T/lldbinit.out" 2>&1 || fail "the packaged argus lldb-init failed" "$T/lldbinit.out"
expect_in "$T/.lldbinit" "^plugin load $X/usr/lib/$MA/libargus-lldb.so\$" \
	"lldb-init did not wire the packaged plugin (in the multiarch lib dir) into ~/.lldbinit"
HOME=$T lldb_run help -o "help argus"
lldb_no_crash
[ "$LLDB_RC" -eq 0 ] || fail "lldb-16 with the packaged plugin failed" "$LLDB_OUT"
expect_in "$LLDB_OUT" '^ +diagnose +' "lldb-16's help argus does not list diagnose (plugin not loaded?)"
log "lldb-16: $(grep -cE '^ +[a-z-]+ +' "$LLDB_OUT") lines of argus subcommands"
# the installed pages: `man argus-diagnose`
MANWIDTH=200 man -M "$X/usr/share/man" argus-diagnose >"$T/man.out" 2>&1 ||
	fail "man argus-diagnose (the packaged page) failed" "$T/man.out"
expect_in "$T/man.out" '^ *argus diagnose FILE --pid PID' "the packaged argus-diagnose(1) shows no synopsis"

# -- 4. systemd-analyze verify ---------------------------------------------------
mkdir -p "$T/unit"
sed "s#^ExecStart=/usr/bin/argusd#ExecStart=$X/usr/bin/argusd#" "$X/lib/systemd/system/argus.service" \
	>"$T/unit/argus.service"
grep -q "^ExecStart=$X/usr/bin/argusd \\\$ARGUS_OPTS\$" "$T/unit/argus.service" ||
	fail "the unit's ExecStart is not /usr/bin/argusd \$ARGUS_OPTS" "$T/unit/argus.service"
systemd-analyze verify "$T/unit/argus.service" >"$T/verify.out" 2>&1
rc=$?
[ $rc -eq 0 ] && [ ! -s "$T/verify.out" ] ||
	fail "systemd-analyze verify of the unit: exit $rc, or warnings" "$T/verify.out"
log "systemd-analyze verify: clean"

# -- 5. the unit's argusd: its options, capabilities and notification ------------
CAPS=$(sed -n 's/^CapabilityBoundingSet=//p' "$X/lib/systemd/system/argus.service" |
	tr ' ' '\n' | sed -n 's/^CAP_\(.*\)/+\L\1/p' | paste -sd,)
[ -n "$CAPS" ] || fail "the unit has no CapabilityBoundingSet"
grep -q '^NoNewPrivileges=yes$' "$X/lib/systemd/system/argus.service" || fail "the unit lacks NoNewPrivileges=yes"
grep -q '^Type=notify$' "$X/lib/systemd/system/argus.service" || fail "the unit is not Type=notify"
( . "$X/etc/default/argus"; printf '%s' "$ARGUS_OPTS" ) >"$T/opts"
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1]); s.settimeout(60)
print(s.recv(4096).decode(), flush=True)
' "$T/notify.sock" >"$T/notify.out" 2>&1 &
npid=$!
E2E_PIDS+=("$npid")
for _ in $(seq 50); do [ -S "$T/notify.sock" ] && break; sleep 0.1; done
# as systemd runs it: $ARGUS_OPTS split on blanks, the unit's bounding set
# (root keeps only those capabilities across the exec), no new privileges,
# and ProtectSystem=strict + ProtectHome=read-only as a mount namespace
# where every file system is read-only but the ring and run dirs (the
# unit's ReadWritePaths and RuntimeDirectory); --dir and --size keep this
# test's ring private and small.  Not emulated: PrivateTmp (the ring and
# run dirs of this test are in /tmp).
mkdir -m 700 "$T/svc-ring" "$ARGUS_RUN_DIR"
# shellcheck disable=SC2016
RO_SH='rw=$1 run=$2; shift 2
mount --bind "$rw" "$rw" && mount --bind "$run" "$run" || exit 90
awk "{print \$5}" /proc/self/mountinfo | grep -E "^/(\$|usr|etc|var|home|root|tmp|run|opt|srv|boot|lib)" |
	sort -u | while read -r m; do mount -o remount,bind,ro "$m" || exit 91; done || exit 91
mount -o remount,bind,rw "$rw" && mount -o remount,bind,rw "$run" || exit 92
touch "$rw/../ro-probe" 2>/dev/null && exit 93   # the test dir itself: read-only now
exec "$@"'
# shellcheck disable=SC2046
NOTIFY_SOCKET=$T/notify.sock INVOCATION_ID=e2e unshare -m --propagation private -- \
	sh -c "$RO_SH" sh "$T/svc-ring" "$ARGUS_RUN_DIR" \
	setpriv --bounding-set=-all,"$CAPS" --inh-caps=-all --no-new-privs -- \
	"$X/usr/bin/argusd" $(cat "$T/opts") --dir "$T/svc-ring" --size 64M \
	--mark-group none >"$T/svc.log" 2>&1 &
spid=$!
E2E_PIDS+=("$spid")
for _ in $(seq 300); do grep -q READY=1 "$T/notify.out" && break; kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
grep -q '^READY=1' "$T/notify.out" ||
	fail "the unit's argusd (caps $CAPS, read-only file systems) never said READY=1 on NOTIFY_SOCKET" "$T/svc.log"
grep CapEff "/proc/$spid/status" >"$T/svc.caps"
log "unit's argusd: READY=1 under $CAPS ($(cat "$T/svc.caps")), file systems read-only but its dirs"
sleep 1
"$X/usr/bin/argus" status >"$T/svc.status" 2>&1 || fail "argus status against the unit's argusd failed" "$T/svc.status"
expect_in "$T/svc.status" "^collector +pid $spid, " "argus status does not show the unit's argusd"
"$X/usr/bin/argus" save --last 2s -o "$T/svc.argus" >"$T/svc.save" 2>&1 || fail "argus save from the unit's argusd failed" "$T/svc.save"
"$ARGUS" dump "$T/svc.argus" >"$T/svc.dump" 2>&1 || fail "cannot dump the unit's argusd's ring" "$T/svc.dump"
[ "$(grep -c ': switch ' "$T/svc.dump")" -gt 10 ] || fail "the unit's argusd recorded no scheduler switches" "$T/svc.dump"
"$X/usr/bin/argus" stop >"$T/svc.stop" 2>&1 || fail "argus stop of the unit's argusd failed" "$T/svc.stop"
wait "$spid" 2>/dev/null
log "unit's argusd: recorded $(grep -c ': switch ' "$T/svc.dump") switches, stopped"

# -- 6. install, remove, purge in a scratch root -----------------------------------
R=$T/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
: >"$R/var/lib/dpkg/status"
DPKG=(dpkg --root="$R" --force-script-chrootless --force-not-root --force-depends)
"${DPKG[@]}" -i "$DEB" >"$T/dpkg-i.out" 2>&1 || fail "dpkg -i into $R failed" "$T/dpkg-i.out"
[ -x "$R/usr/bin/argus" ] || fail "dpkg -i did not install usr/bin/argus" "$T/dpkg-i.out"
ARGUS=$R/usr/bin/argus start_collector --dir "$R/var/lib/argus" --size 64M --mark-group none
pid=$(collector_pid)
[ "$(readlink "/proc/$pid/exe")" = "$R/usr/bin/argusd" ] || fail "the installed argus did not start the installed argusd"
progs=$(grep -h '^prog_id:' /proc/"$pid"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u)
[ -n "$progs" ] || fail "the installed argusd holds no BPF program"
log "installed argusd $pid holds $(echo "$progs" | wc -w) BPF programs"
"${DPKG[@]}" -r argus >"$T/dpkg-r.out" 2>&1 || fail "dpkg -r failed" "$T/dpkg-r.out"
# at once, with no grace: prerm waits for the process (a zombie holds
# nothing) and for the kernel to free its programs
[ -e "/proc/$pid" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null &&
	fail "removing the package left its argusd $pid running" "$T/dpkg-r.out"
for id in $progs; do
	bpftool prog show id "$id" >/dev/null 2>&1 && fail "removing the package left BPF program $id loaded"
done
[ -e "$R/usr/bin/argus" ] && fail "dpkg -r left usr/bin/argus"
[ -f "$R/var/lib/argus/ring.argus" ] || fail "dpkg -r removed the ring in /var/lib/argus (only purge may)"
[ -f "$R/etc/default/argus" ] || fail "dpkg -r removed the conffile /etc/default/argus (only purge may)"
log "remove: argusd stopped, its $(echo $progs | wc -w) BPF programs gone, ring and conffile kept"
"${DPKG[@]}" --purge argus >"$T/dpkg-p.out" 2>&1 || fail "dpkg --purge failed" "$T/dpkg-p.out"
find "$R" -mindepth 1 -not -path "$R/var" -not -path "$R/var/lib" -not -path "$R/var/lib/dpkg" \
	-not -path "$R/var/lib/dpkg/*" >"$T/left"
[ -s "$T/left" ] && fail "purge left files behind" "$T/left"
pass "package $(basename "$DEB"): Depends computed, files in place, argus record and the lldb plugin work unpacked, the unit verifies and its argusd runs under its capabilities, remove stops the collector, purge leaves nothing"
