#!/bin/bash
# e2e (security): the mark group (issue 15 §3, docs/collector.md "Marks
# from the desktop").  A throw-away group and a throw-away user in it (as a
# supplementary group only), a private collector started with
# --mark-group that group.  Asserts:
#   - with a group that does not exist, `argus start` says in one line that
#     marks are root-only, and no mark socket is made;
#   - the member's `argus mark TEXT` (through a wrapper that prints its pid
#     and execs argus) is in the saved trace with the member's uid
#     (`id -u USER`) and the wrapper's pid;
#   - the member cannot `argus save`, `argus status`, read the ring or dump
#     it: each refused with one clear line;
#   - on the mark socket itself the member gets one error line for status,
#     flush and stop, for forged text (an escape sequence, a NUL) and for
#     oversized text, none of which is recorded; argusd keeps recording;
#   - nobody (not in the group) cannot mark;
#   - a mark the member sends in the middle of an app's hang (case_busy)
#     is shown by `argus hangs` (text and --json) with its pid and uid;
#   - members are kept apart (issue 25, F7): while the member keeps 16
#     silent connections open and floods marks, a second member's marks
#     all go through (at most 4 connections per uid; a rate bucket per
#     uid), the first member's flood is cut ("too many marks", counted),
#     and a bidi override (U+202E) in the second member's mark is shown
#     escaped (\u202e) by `argus dump` (JSON keeps the exact string:
#     test_graph_export).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec_lib.sh"
e2e_init "$@"
sec_init
command -v useradd >/dev/null && command -v groupadd >/dev/null ||
	fail "useradd and groupadd (passwd) are needed"

# the member's names: short (useradd takes 32 bytes), unique per run
G=argm$$
U=argu$$
U2=argv$$
MARK_USER_MADE=0
MARK_USER2_MADE=0
MARK_GROUP_MADE=0
mark_cleanup() {
	local rc=$?
	[ $MARK_USER_MADE = 1 ] && userdel "$U" 2>/dev/null
	[ $MARK_USER2_MADE = 1 ] && userdel "$U2" 2>/dev/null
	[ $MARK_GROUP_MADE = 1 ] && groupdel "$G" 2>/dev/null
	(exit $rc)
	sec_cleanup
}
trap mark_cleanup EXIT
groupadd "$G" || fail "groupadd $G failed"
MARK_GROUP_MADE=1
# primary group nogroup: the member carries $G as a supplementary group,
# as a desktop user added with `usermod -aG` does
useradd -M -N -g 65534 -G "$G" -d /nonexistent -s /usr/sbin/nologin "$U" || fail "useradd $U failed"
MARK_USER_MADE=1
useradd -M -N -g 65534 -G "$G" -d /nonexistent -s /usr/sbin/nologin "$U2" || fail "useradd $U2 failed"
MARK_USER2_MADE=1
MUID=$(id -u "$U")
MUID2=$(id -u "$U2")
log "member $U uid $MUID in group $G ($(id -G "$U"))"

# The run dir under $PUBDIR (755): the member must reach <run dir>-mark;
# the run dir itself stays root's 0700, the ring dir too.
export ARGUS_RUN_DIR=$PUBDIR/run
E2E_RUNDIRS+=("$ARGUS_RUN_DIR")
MARKSOCK=$PUBDIR/run-mark/mark.sock
MEM=$PUBDIR/mem
mkdir "$MEM" && chown "$MUID" "$MEM" && chmod 755 "$MEM"
as_member() { setpriv --reuid="$MUID" --regid=65534 --init-groups "$@"; }
as_member2() { setpriv --reuid="$MUID2" --regid=65534 --init-groups "$@"; }
as_member id -G | has -w "$(getent group "$G" | cut -d: -f3)" ||
	fail "setpriv --init-groups did not give the member its group"

# 1. a group that does not exist: root-only marks, said in one line
mkdir -p "$PUBDIR/ring"
start_collector --dir "$PUBDIR/ring" --size 64M --no-watch-interactive --mark-group "nx$$"
grep -c "no group 'nx$$': marks are root-only" "$T/start.out" | has -x 1 ||
	fail "argus start with a missing --mark-group did not say marks are root-only" "$T/start.out"
[ -e "$MARKSOCK" ] && fail "a mark socket exists although the group does not"
"$ARGUS" stop >/dev/null 2>&1 || fail "argus stop failed"

# 2. the real group
start_collector --dir "$PUBDIR/ring" --size 64M --no-watch-interactive --mark-group "$G"
ARGUSD_PID=$(collector_pid)
is_argusd "$ARGUSD_PID" || fail "no argusd after start"
grep -q "members of group $G may send \`argus mark\` ($MARKSOCK)" "$T/start.out" ||
	fail "argus start did not name the mark group and socket" "$T/start.out"
perm=$(stat -c '%a %U %G' "$MARKSOCK") || fail "no mark socket at $MARKSOCK"
[ "$perm" = "660 root $G" ] || fail "mark socket is '$perm', want '660 root $G'"
# the control socket is untouched: root's 0600, in root's run dir that no
# one else can list or write (0700, or 0711 with the interposer's socket)
perm=$(stat -c '%a %U' "$ARGUS_RUN_DIR/argusd.sock")
[ "$perm" = "600 root" ] || fail "the control socket is '$perm', want '600 root'"
perm=$(stat -c '%a %U' "$ARGUS_RUN_DIR")
case $perm in "700 root"|"711 root") ;; *) fail "the run dir is '$perm', want '700 root' or '711 root'" ;; esac

# the member marks, through a wrapper whose pid becomes argus's
cat >"$PUBDIR/markwrap" <<EOF
#!/bin/sh
echo \$\$ >"$MEM/pid"
exec "$ARGUS" mark "\$@"
EOF
chmod 755 "$PUBDIR/markwrap"
TEXT="froze at $$ $RANDOM"
as_member "$PUBDIR/markwrap" "$TEXT" >"$T/mark.out" 2>"$T/mark.err" ||
	fail "the member's argus mark failed" "$T/mark.err"
WPID=$(cat "$MEM/pid")
log "member marked \"$TEXT\" from pid $WPID"

# 3. what the member cannot do, each with one line
refused() {     # WHAT REGEX CMD...
	local what=$1 re=$2 rc
	shift 2
	as_member "$@" >"$T/ref.out" 2>"$T/ref.err"
	rc=$?
	[ $rc -ne 0 ] || fail "the member could $what" "$T/ref.out"
	[ "$(wc -l <"$T/ref.err")" -eq 1 ] || fail "$what: not one line of error" "$T/ref.err"
	grep -qiE "$re" "$T/ref.err" || fail "$what: unclear refusal" "$T/ref.err"
	log "member cannot $what: $(cat "$T/ref.err")"
}
refused "argus save" "permission denied.*root only" "$ARGUS" save -o "$MEM/stolen.argus"
[ -e "$MEM/stolen.argus" ] && fail "argus save as the member wrote a file"
refused "argus status" "permission denied.*root only" "$ARGUS" status
refused "read the ring" "permission denied" cat "$PUBDIR/ring/ring.argus"
refused "dump the ring" "permission denied" "$ARGUS" dump "$PUBDIR/ring/ring.argus"

# straight on the mark socket: one error line for everything but a mark
sockreq() {     # NAME PYTHON-BYTES: the member sends the bytes, answer in $T/NAME.ans
	as_member /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
try:
    s.sendall(eval(sys.argv[2]))
    s.shutdown(socket.SHUT_WR)
except OSError:
    pass
out = b""
while True:
    try:
        b = s.recv(4096)
    except OSError:
        break
    if not b:
        break
    out += b
sys.stdout.buffer.write(out)' "$MARKSOCK" "$2" >"$T/$1.ans" 2>"$T/$1.err" ||
		fail "the member cannot talk to the mark socket ($1)" "$T/$1.err"
	[ "$(wc -l <"$T/$1.ans")" -eq 1 ] && grep -q '^error: ' "$T/$1.ans" ||
		fail "$1 on the mark socket: not one error line" "$T/$1.ans"
	log "mark socket, $1: $(cat "$T/$1.ans")"
}
sockreq status "b'status\n'"
grep -q "takes only" "$T/status.ans" || fail "status on the mark socket: unclear refusal" "$T/status.ans"
sockreq flush "b'flush\n'"
sockreq stop "b'stop\n'"
sockreq watch "b'watch 1 0x1000 8\n'"
sockreq escape "b'mark FORGED\x1b[2J\x1b]0;PWNED\x07\n'"
grep -q "printable" "$T/escape.ans" || fail "escape text: unclear refusal" "$T/escape.ans"
sockreq nul "b'mark FORGED\x00status\n'"
sockreq newline "b'mark FORGED\rsshd 1/1 [001]\n'"
sockreq big "b'mark ' + b'FORGED' * 1000 + b'\n'"
grep -q "too long" "$T/big.ans" || fail "oversized text: unclear refusal" "$T/big.ans"
# the CLI refuses oversized text before sending it
refused "mark 2000 bytes" "too long" "$ARGUS" mark "$(head -c 2000 /dev/zero | tr '\0' x)"

# 4. nobody, not in the group, cannot mark
as_nobody env ARGUS_RUN_DIR="$ARGUS_RUN_DIR" "$ARGUS" mark "nobody was here" >"$T/nb.out" 2>"$T/nb.err" &&
	fail "nobody could mark"
[ "$(wc -l <"$T/nb.err")" -eq 1 ] && grep -qi "permission denied.*mark group" "$T/nb.err" ||
	fail "nobody's refusal is not one clear line" "$T/nb.err"
log "nobody cannot mark: $(cat "$T/nb.err")"

# 5. the desktop case: an app hangs (case_busy: its UI thread busy for
# 2.5 s from about 1 s in) and the member presses the "key" in the middle
"$APPS/case_busy" >"$T/busy.out" 2>"$T/busy.err" &
BUSY_PID=$!
E2E_PIDS+=("$BUSY_PID")
sleep 2
HANGTEXT="UI froze $RANDOM"
as_member "$PUBDIR/markwrap" "$HANGTEXT" 2>"$T/mark2.err" || fail "the member's second mark failed" "$T/mark2.err"
HPID=$(cat "$MEM/pid")
wait "$BUSY_PID" || fail "case_busy failed" "$T/busy.err"

# argusd survived all that, and still records
still_recording "the member's refused requests"
status_key group_marks | has -x 2 || fail "argusd counts $(status_key group_marks) group marks, want 2" "$STATUS"

# 5. the trace: the member's mark with its uid and pid, nothing forged
sleep 0.3
"$ARGUS" save -o "$T/s.argus" >/dev/null 2>"$T/save.err" || fail "argus save failed" "$T/save.err"
dump_to "$T/s.argus" "$T/s.dump"
grep ': mark ' "$T/s.dump" >"$T/marks.txt"
TEXT=$TEXT WPID=$WPID MUID=$MUID check_dump "$T/s.dump" '
TEXT, WPID, MUID = ENV["TEXT"], int(ENV["WPID"]), int(ENV["MUID"])
m = [e for e in ev if e["type"] == "mark"]
mine = [e for e in m if e["mark"] == TEXT]
if len(mine) != 1:
	say("want one mark \"%s\", got %d" % (TEXT, len(mine))); show(m); sys.exit(1)
e = mine[0]
if e["pid"] != WPID or e["tid"] != WPID:
	say("the mark names pid %d/tid %d, the member wrapper was %d" % (e["pid"], e["tid"], WPID)); show([e]); sys.exit(1)
if e["uid"] != MUID:
	say("the mark does not carry the member uid %d" % MUID); show([e]); sys.exit(1)
forged = [e for e in m if re.search("FORGED|nobody was here", e["mark"])]
if forged:
	say("refused marks were recorded"); show(forged); sys.exit(1)
' || fail "the member's mark is not in the trace as sent" "$T/marks.txt"
# the hang's listing says who marked it
UI_PID=$(kv UI_PID "$T/busy.out")
timeout -k 5 120 "$ARGUS" hangs "$T/s.argus" --pid "$UI_PID" >"$T/hangs.txt" 2>"$T/hangs.err" ||
	fail "argus hangs failed" "$T/hangs.err"
grep -F "mark \"$HANGTEXT\" by pid $HPID uid $MUID" "$T/hangs.txt" >/dev/null ||
	fail "argus hangs does not show the hang marked \"$HANGTEXT\" by pid $HPID uid $MUID (mark sent at 2 s into case_busy's 1..3.5 s hang)" "$T/hangs.txt"
log "hangs: $(grep -F "$HANGTEXT" "$T/hangs.txt")"
timeout -k 5 120 "$ARGUS" hangs "$T/s.argus" --pid "$UI_PID" --json >"$T/hangs.json" 2>"$T/hangs.err" ||
	fail "argus hangs --json failed" "$T/hangs.err"
HANGTEXT=$HANGTEXT HPID=$HPID MUID=$MUID /usr/bin/python3 -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
hs = d if isinstance(d, list) else d.get("hangs", [])
m = [h for h in hs if h.get("mark") == os.environ["HANGTEXT"]]
sys.exit(0 if m and m[0].get("mark_pid") == int(os.environ["HPID"]) and m[0].get("mark_uid") == int(os.environ["MUID"]) else 1)
' "$T/hangs.json" || fail "argus hangs --json lacks mark_pid $HPID / mark_uid $MUID for the marked hang" "$T/hangs.json"

# 6. one member cannot keep another out: for 2 s the first holds 16
# silent connections (reopened as the collector answers them), then for 2 s
# it floods marks; meanwhile the second marks 6 times, a bidi override in one
as_member /usr/bin/python3 -c '
import socket, sys, threading, time
path, t0 = sys.argv[1], time.time()
silent, ok, many, busy = [], 0, 0, 0
def dial():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(1)
    try:
        s.connect(path)
    except OSError:
        s.close()
        return None
    return s
while time.time() < t0 + 2:
    alive = []
    for s in silent:
        s.setblocking(False)
        try:
            a = s.recv(200)
            busy += b"busy" in a
            s.close()             # answered (busy, timed out): reopen it
        except BlockingIOError:
            alive.append(s)
        except OSError:
            s.close()
    silent = alive
    while len(silent) < 16:
        s = dial()
        if not s:
            break
        silent.append(s)
    time.sleep(0.05)
for s in silent:
    s.close()
res = []
def flood():                      # 4 at once: all the uid may open
    n_ok = n_many = n_full = 0
    while time.time() < t0 + 4:
        m = dial()
        if m:
            try:
                m.sendall(b"mark flood\n")
                a = m.recv(200)
            except OSError:
                a = b""
            m.close()
            n_ok += a == b"ok\n"
            n_many += b"too many marks" in a     # the rate limit
            n_full += b"too many clients" in a   # the connection limit
    res.append((n_ok, n_many, n_full))
th = [threading.Thread(target=flood) for _ in range(4)]
for t in th:
    t.start()
for t in th:
    t.join()
ok, many, full = (sum(r[i] for r in res) for i in range(3))
print("busy=%d ok=%d too_many=%d clients_full=%d" % (busy, ok, many, full))
' "$MARKSOCK" >"$T/flood.out" 2>"$T/flood.err" &
FLOOD=$!
E2E_PIDS+=("$FLOOD")
sleep 0.5
BIDI=$(printf 'second member \xe2\x80\xae gnp.exe')
for i in 1 2 3 4 5 6; do
	txt="second member $i"
	[ $i = 3 ] && txt=$BIDI
	as_member2 env ARGUS_RUN_DIR="$ARGUS_RUN_DIR" "$ARGUS" mark "$txt" >"$T/m2.out" 2>"$T/m2.err" ||
		fail "the second member's mark $i was refused while the first flooded" "$T/m2.err"
	sleep 0.4
done
wait "$FLOOD" || fail "the first member's flood failed" "$T/flood.err"
log "first member's flood: $(cat "$T/flood.out"); the second member's 6 marks all went through"
grep -qE 'busy=[1-9]' "$T/flood.out" || fail "the first member's 16 connections were all taken" "$T/flood.out"
# the rate limit itself, not the connection limit ("too many clients",
# counted apart as clients_full), must have answered the flood
grep -qE 'too_many=[1-9]' "$T/flood.out" || fail "the first member's mark flood was not rate-limited" "$T/flood.out"
status_within_1s
[ "$(status_key group_marks_busy)" -ge 1 ] || fail "no connection of the first member refused as busy" "$STATUS"
[ "$(status_key group_marks_too_many)" -ge 1 ] || fail "no mark counted over the rate" "$STATUS"
sleep 0.3
"$ARGUS" save -o "$T/s2.argus" >/dev/null 2>"$T/save.err" || fail "argus save failed" "$T/save.err"
"$ARGUS" dump "$T/s2.argus" >"$T/s2.dump" 2>&1 || fail "argus dump failed" "$T/s2.dump"
grep -F 'second member \u202e gnp.exe' "$T/s2.dump" >/dev/null ||
	fail "the bidi override in a mark is not shown escaped (\u202e) in the dump" "$T/s2.dump"
LC_ALL=C grep -q $'\xe2\x80\xae' "$T/s2.dump" && fail "a raw U+202E reached the dump's text" "$T/s2.dump"
log "a member's bidi override is shown as \u202e in the dump"

pass "the member (uid $MUID) marked from pid $WPID and nothing else; save, status, the ring, other requests, forged and oversized text and nobody were refused with one line each; argusd kept recording"
