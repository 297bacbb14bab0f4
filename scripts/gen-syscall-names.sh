#!/bin/sh
# Generates a C table of x86_64 syscall names from the kernel UAPI header,
# so names follow the installed headers instead of a hand-kept list.
# usage: gen-syscall-names.sh OUT.h
hdr=/usr/include/x86_64-linux-gnu/asm/unistd_64.h
[ -f "$hdr" ] || hdr=/usr/include/asm/unistd_64.h
{
  echo "/* generated from $hdr by scripts/gen-syscall-names.sh */"
  echo "static const char *const argus_syscall_table[] = {"
  sed -n 's/^#define __NR_\([a-z0-9_]*\) \([0-9]*\)$/\t[\2] = "\1",/p' "$hdr"
  echo "};"
} > "$1"
