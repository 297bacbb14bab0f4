/* SPDX-License-Identifier: BSD-2-Clause */
/* graph_names.c - printable names of the graph's enums (used by the CLI,
 * the exports and the JSON output, so they are part of the contract). */
#include "argus_graph.h"

#define NAME(tab, i) ((i) < sizeof(tab) / sizeof(tab[0]) ? tab[i] : NULL)

const char *argus_edge_type_str(unsigned type)
{
	static const char *const n[] = {
		[ARGUS_EDGE_WAKEUP] = "wakeup", [ARGUS_EDGE_MESSAGE] = "message",
		[ARGUS_EDGE_FUTEX] = "futex", [ARGUS_EDGE_TIMER] = "timer",
		[ARGUS_EDGE_FORK] = "fork", [ARGUS_EDGE_EXIT] = "exit",
		[ARGUS_EDGE_SIGNAL] = "signal", [ARGUS_EDGE_INTRA] = "intra",
		[ARGUS_EDGE_WORKITEM] = "workitem",
		[ARGUS_EDGE_DATAFLAG] = "dataflag", [ARGUS_EDGE_CUSTOM] = "custom",
		[ARGUS_EDGE_HOLDER] = "holder",
	};
	return NAME(n, type);
}

int argus_edge_type_strong(unsigned type)
{
	return type >= ARGUS_EDGE_WAKEUP && type < ARGUS_EDGE_TYPE_MAX &&
	       type != ARGUS_EDGE_INTRA;
}

const char *argus_filter_reason_str(unsigned r)
{
	static const char *const n[] = {
		[ARGUS_FILT_HARDIRQ] = "hardirq", [ARGUS_FILT_SOFTIRQ] = "softirq",
		[ARGUS_FILT_NMI] = "nmi", [ARGUS_FILT_IRQ_THREAD] = "irq-thread",
		[ARGUS_FILT_KERNEL_WAKER] = "kernel-waker",
		[ARGUS_FILT_KERNEL_TARGET] = "kernel-target",
		[ARGUS_FILT_SCHEMA] = "schema",
		[ARGUS_FILT_RUNNING] = "target-running",
		[ARGUS_FILT_DEBUGGER] = "debugger-stop",
		[ARGUS_FILT_TOOL] = "tool-waker",
	};
	return NAME(n, r);
}

const char *argus_seg_start_str(unsigned r)
{
	static const char *const n[] = {
		[ARGUS_START_TRACE] = "trace-start", [ARGUS_START_THREAD] = "thread-start",
		[ARGUS_START_WAKE] = "wake", [ARGUS_START_SPLIT] = "split",
		[ARGUS_START_SCHEMA] = "schema", [ARGUS_START_WORK] = "work",
	};
	return NAME(n, r);
}

const char *argus_seg_end_str(unsigned r)
{
	static const char *const n[] = {
		[ARGUS_END_TRACE] = "trace-end", [ARGUS_END_EXIT] = "exit",
		[ARGUS_END_WAIT] = "wait", [ARGUS_END_SPLIT] = "split",
		[ARGUS_END_SCHEMA] = "schema", [ARGUS_END_WORK] = "work",
	};
	return NAME(n, r);
}

const char *argus_woken_by_str(unsigned w)
{
	static const char *const n[] = {
		[ARGUS_WOKEN_NA] = "-", [ARGUS_WOKEN_EDGE] = "edge",
		[ARGUS_WOKEN_HARDIRQ] = "hardirq", [ARGUS_WOKEN_SOFTIRQ] = "softirq",
		[ARGUS_WOKEN_NMI] = "nmi", [ARGUS_WOKEN_KERNEL] = "kernel",
		[ARGUS_WOKEN_FILTERED] = "filtered", [ARGUS_WOKEN_UNKNOWN] = "unknown",
		[ARGUS_WOKEN_DEBUGGER] = "debugger",
	};
	return NAME(n, w);
}
