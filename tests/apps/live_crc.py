# live_crc.py - a real program using a stripped Debian library: CPython's
# zlib.crc32() calls libz.so.1's exported crc32() (zlib1g, stripped: only
# .dynsym).  tests/e2e/live_stripped.sh patches that crc32 while this runs.
# stdin: "crc N" checks N buffers against a pure-Python CRC-32 and prints
# CRC n=N bad=B; "zip N" compresses N buffers with zlib.compress (libz's
# deflate) and checks each decompresses back, printing ZIP n=N bad=B;
# "quit" prints EXIT ok.  Prints PID= and READY=1 first.
import os
import sys
import zlib


def crc_py(b):
    c = 0xFFFFFFFF
    for x in b:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ (0xEDB88320 & -(c & 1))
    return c ^ 0xFFFFFFFF


print("PID=%d\nREADY=1" % os.getpid(), flush=True)
for line in sys.stdin:
    w = line.split()
    if not w or w[0] == "quit":
        break
    n, bad = int(w[1]), 0
    if w[0] == "zip":
        for i in range(n):
            b = (b"argus-%d-" % i) * (i * 37 % 500 + 1)
            if zlib.decompress(zlib.compress(b, 6)) != b:
                bad += 1
        print("ZIP n=%d bad=%d" % (n, bad), flush=True)
        continue
    for i in range(n):
        b = (b"argus-%d-" % i) * (i % 7 + 1)
        if zlib.crc32(b) != crc_py(b):
            bad += 1
    print("CRC n=%d bad=%d" % (n, bad), flush=True)
print("EXIT ok", flush=True)
