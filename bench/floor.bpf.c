// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * floor.bpf.c - the BPF floor peer of bench/overhead.sh: empty programs on
 * the raw tracepoints argus record attaches to that fire on a syscall
 * ping-pong (sched_switch, sched_waking, sys_exit; argus's syscall entries
 * come from per-call tracepoints that read and write do not fire).
 *
 * They record nothing.  What they cost is what any BPF tracer of these
 * tracepoints pays on this kernel before doing any work: the tracepoint
 * dispatch into BPF, and the syscall slow path every task takes once a
 * syscall probe is attached (TIF_SYSCALL_TRACEPOINT).  argus's
 * ratio minus this one is what argus's own programs and collector cost.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("raw_tp/sched_switch")
int floor_switch(void *ctx) { return 0; }

SEC("raw_tp/sched_waking")
int floor_waking(void *ctx) { return 0; }

SEC("raw_tp/sys_exit")
int floor_sys_exit(void *ctx) { return 0; }

char LICENSE[] SEC("license") = "Dual BSD/GPL";
