// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * live_uprobe.bpf.c - `argus instrument --via uprobe`: the kernel records a
 * function's entries instead of a patch (docs/interposer.md, "Uprobes").
 *
 * One program, attached by interposer/live/live_uprobe.c to a uprobe perf
 * event (the "uprobe" PMU: file + offset) on every CPU, with a BPF cookie
 * of (tgid << 8) | kind: the probe is on a file, so every process that
 * maps it would hit it; only the instrumented process's hits are kept.
 * Each hit writes one AE_LIVE_HIT into `rb`, which the loader replaces by
 * argusd's own ring (bpf_map__reuse_fd), so argusd merges the records like
 * its own programs' ones.
 *
 * At a uprobe hit, regs->ip is the probed address (the kernel sets it
 * back to the breakpoint before calling handlers) and rdi is still the
 * first argument: nothing of the function has run yet.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "argus_events.h"

/* replaced by argusd's ring before load; this size is never used */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} rb SEC(".maps");

SEC("uprobe")
int on_live_hit(struct pt_regs *ctx)
{
	__u64 ck = bpf_get_attach_cookie(ctx);
	__u64 pt = bpf_get_current_pid_tgid();
	struct ae_live_hit *e;

	if ((pt >> 32) != (ck >> 8))
		return 0;
	e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (!e)
		return 0;
	e->h.ts = bpf_ktime_get_ns();
	e->h.tid = (__u32)pt;
	e->h.pid = pt >> 32;
	e->h.type = AE_LIVE_HIT;
	e->h.size = sizeof(*e);
	e->h.cpu = bpf_get_smp_processor_id();
	e->h.ctx = AE_CTX_TASK;
	e->func = ctx->ip;
	e->item = ctx->di;
	e->kind = ck & 0xff;
	e->pad = 0;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
