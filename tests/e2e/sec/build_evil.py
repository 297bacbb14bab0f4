# build_evil.py SRC OUT OFFSET (sec_uprobe_steer.sh): build evil.c into the
# shared object OUT with its function "handler" at file offset OFFSET
# (padding SKIP bytes of nops before it, adjusted until it lands there).
import subprocess, sys

src, out, target = sys.argv[1], sys.argv[2], int(sys.argv[3], 0)


def where():
    s = subprocess.run(["readelf", "-sW", out], capture_output=True, text=True).stdout
    v = int([l.split()[1] for l in s.splitlines() if l.split()[-1:] == ["handler"]][0], 16)
    ph = subprocess.run(["readelf", "-lW", out], capture_output=True, text=True).stdout
    for l in ph.splitlines():
        f = l.split()
        if f and f[0] == "LOAD":
            o, a, sz = int(f[1], 16), int(f[2], 16), int(f[4], 16)
            if a <= v < a + sz:
                return v - a + o
    return -1


skip = 0
for _ in range(6):
    subprocess.run(["cc", "-shared", "-fPIC", "-O0", "-DSKIP=%d" % skip, "-o", out, src],
                   check=True, stderr=subprocess.DEVNULL)
    o = where()
    if o == target:
        sys.exit(0)
    skip += target - o
sys.exit("could not place handler at %#x" % target)
