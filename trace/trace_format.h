/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * trace_format.h - the Argus trace file: writer (chunk builder + file ring)
 * and reader.  docs/trace-format.md is the prose version of this header;
 * keep the two in step.
 *
 * The file is a header block followed by a ring of self-describing chunks.
 *
 *   file header (ARGUS_FILE_HEADER_SIZE bytes, see struct argus_file_header)
 *   ring area:  chunks, each starting on an ARGUS_BLOCK_SIZE boundary
 *
 * A chunk is a 64-byte struct argus_chunk_header followed by `payload_len`
 * bytes: raw, one zlib stream (ARGUS_CHUNK_ZLIB) or one zstd frame
 * (ARGUS_CHUNK_ZSTD), never both flags.  The inflated payload
 * is a list of sections `varint tag, varint len, bytes[len]`; a reader skips
 * tags it does not know.  Everything a chunk's events refer to (strings,
 * stacks, tasks, maps, the event schema) is inside the same chunk, so any
 * chunk can be decoded alone: that is what lets the oldest chunks be
 * overwritten and lets `argus save` copy chunks without re-encoding.
 *
 * Invariants:
 *   - timestamps are CLOCK_MONOTONIC ns; within one CPU stream of one chunk
 *     they never decrease (the collector sorts and holds back a few ms);
 *   - chunk `seq` strictly increases in write order; the reader orders
 *     chunks by seq, never by file offset (the ring wraps);
 *   - a chunk header is written after its payload, so a crash leaves at most
 *     the chunk in flight unreadable;
 *   - ids of strings/stacks in struct argus_event are global to the open
 *     trace (the reader remaps the per-chunk ids); 0 means "none".
 *
 * Library conventions (libbpf style): int functions return 0 or -errno;
 * constructors return NULL and fill *err; free functions accept NULL; the
 * library never prints.
 */
#ifndef ARGUS_TRACE_FORMAT_H
#define ARGUS_TRACE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARGUS_FILE_MAGIC "ARGUSTRC"      /* 8 bytes, no NUL */
/* Version 2 added zstd chunks (ARGUS_CHUNK_ZSTD); a reader reads every
 * version from ARGUS_FORMAT_VERSION_MIN on, a writer writes the newest. */
#define ARGUS_FORMAT_VERSION 2
#define ARGUS_FORMAT_VERSION_MIN 1
#define ARGUS_FILE_HEADER_SIZE 4096
#define ARGUS_BLOCK_SIZE 4096
#define ARGUS_CHUNK_MAGIC 0x4b484341u    /* "ACHK" little-endian */
#define ARGUS_CHUNK_HEADER_SIZE 64

/* argus_file_header.flags */
#define ARGUS_FILE_RING 0x1      /* bounded ring: old chunks get overwritten */
#define ARGUS_FILE_SNAPSHOT 0x2  /* written once, sequentially (save/record) */
#define ARGUS_FILE_WAIT_STACKS 0x4 /* the collector ran with --wait-stacks:
				      blocking switch-outs' stacks were
				      DWARF-unwound, not frame pointers only */

/* argus_chunk_header.flags: how the payload is compressed, at most one.
 * The collector writes zstd (half of zlib's CPU per event and smaller, see
 * docs/trace-format.md); zlib chunks of older files stay readable.  Either
 * way raw_len <= payload_len * 1032 + 64 (deflate's limit): a writer whose
 * zstd frame compresses better than that stores the chunk as zlib, so a
 * reader never allocates more than deflate could claim. */
#define ARGUS_CHUNK_ZLIB 0x1
#define ARGUS_CHUNK_ZSTD 0x2
#define ARGUS_CHUNK_COMPRESSED (ARGUS_CHUNK_ZLIB | ARGUS_CHUNK_ZSTD)

/* How argus_chunk_builder__finish() compresses a chunk. */
enum argus_codec {
	ARGUS_CODEC_ZLIB = 0,   /* the default of a new builder */
	ARGUS_CODEC_ZSTD = 1,
};

/* On-disk file header, little-endian, at offset 0. */
struct argus_file_header {
	char magic[8];            /* ARGUS_FILE_MAGIC */
	uint32_t version;         /* ARGUS_FORMAT_VERSION */
	uint32_t header_size;     /* ARGUS_FILE_HEADER_SIZE */
	uint64_t data_size;       /* ring area bytes; 0 = append-only */
	uint32_t block_size;      /* ARGUS_BLOCK_SIZE */
	uint32_t flags;           /* ARGUS_FILE_* */
	uint64_t created_mono_ns; /* CLOCK_MONOTONIC at creation */
	uint64_t created_real_ns; /* CLOCK_REALTIME at the same instant */
	uint32_t ncpus;           /* possible CPUs of the traced machine */
	uint32_t header_crc;      /* crc32 (zlib) of bytes [0, 52) */
	char hostname[64];
	char kernel[64];          /* uname -r */
};

/* On-disk chunk header, little-endian, 64 bytes. */
struct argus_chunk_header {
	uint32_t magic;           /* ARGUS_CHUNK_MAGIC */
	uint16_t version;         /* ARGUS_FORMAT_VERSION */
	uint16_t flags;           /* ARGUS_CHUNK_* */
	uint64_t seq;             /* write order, strictly increasing */
	uint32_t payload_len;     /* bytes on disk after this header */
	uint32_t raw_len;         /* payload bytes once inflated */
	uint32_t payload_crc;     /* crc32 of the on-disk payload */
	uint32_t nevents;
	uint64_t min_ts;          /* smallest event ts in the chunk */
	uint64_t max_ts;          /* largest */
	uint16_t nstreams;        /* per-CPU event streams */
	uint16_t pad;
	uint32_t reserved;
	uint32_t reserved2;
	uint32_t header_crc;      /* crc32 of bytes [0, 60) */
};

/* Payload section tags. */
enum argus_section {
	ARGUS_SEC_SCHEMA = 1,   /* event-type descriptors (self-description) */
	ARGUS_SEC_STRINGS = 2,
	ARGUS_SEC_STACKS = 3,
	ARGUS_SEC_TASKS = 4,
	ARGUS_SEC_MAPS = 5,
	ARGUS_SEC_CPUS = 6,     /* per-CPU min/max ts, lost counts, events */
	ARGUS_SEC_STREAM = 7,   /* one per CPU */
};

/*
 * A decoded event.  `type` is enum ae_type from kernel-patch/argus_events.h.
 * f[] holds the type's fields in the order given by ARGUS_F_* below;
 * unused slots are 0.  Signed fields are stored sign-extended in f[].
 */
#define ARGUS_NFIELDS 8
struct argus_event {
	uint64_t ts;        /* CLOCK_MONOTONIC ns */
	uint32_t tid;       /* current task when the event fired */
	uint32_t pid;       /* its tgid */
	uint16_t type;      /* enum ae_type */
	uint16_t cpu;
	uint8_t ctx;        /* enum ae_ctx */
	uint8_t pad[3];
	uint32_t stack;     /* stack id, 0 = none */
	uint32_t str;       /* string id, 0 = none (see per-type notes) */
	uint32_t str2;      /* second string id, 0 = none */
	uint32_t pad2;      /* 0; explicit, so that every byte of an event the
	                       reader returns is defined (no compiler padding
	                       left as whatever the buffer held) */
	uint64_t f[ARGUS_NFIELDS];
};

/* Field positions, per type (see argus_events.h for meanings). */
enum {
	/* AE_SWITCH: str = next comm, stack = prev's user stack if blocking */
	ARGUS_F_SW_NEXT_TID = 0, ARGUS_F_SW_NEXT_PID, ARGUS_F_SW_PREV_STATE,
	ARGUS_F_SW_SYS_NR, ARGUS_F_SW_SYS_ARG, ARGUS_F_SW_OBJ_KIND,
	ARGUS_F_SW_OBJ, ARGUS_F_SW_PEER,
};
enum {
	/* AE_WAKING */
	ARGUS_F_WK_TARGET_TID = 0, ARGUS_F_WK_TARGET_PID, ARGUS_F_WK_TARGET_CPU,
	ARGUS_F_WK_VECTOR, ARGUS_F_WK_HRTIMER,
};
enum {
	/* AE_WAKEUP_NEW, AE_FORK, AE_FREE: str = comm */
	ARGUS_F_TK_CHILD_TID = 0, ARGUS_F_TK_CHILD_PID, ARGUS_F_TK_CLONE_FLAGS,
};
/* AE_EXEC: f[0] = old tid; str = comm, str2 = filename */
#define ARGUS_F_EX_OLD_TID 0
/* AE_EXIT: f[0] = exit code, f[1] = 1 if the last thread of its process */
#define ARGUS_F_EXIT_CODE 0
#define ARGUS_F_EXIT_GROUP_DEAD 1
/* AE_RENAME: str = new comm */
enum {
	/* AE_SYS_ENTER: f[1..6] = args 0..5 (only the first 7 slots used) */
	ARGUS_F_SE_NR = 0, ARGUS_F_SE_ARG0,
};
enum {
	/* AE_SYS_EXIT */
	ARGUS_F_SX_NR = 0, ARGUS_F_SX_RET, ARGUS_F_SX_ARG0, ARGUS_F_SX_OBJ_KIND,
	ARGUS_F_SX_OBJ, ARGUS_F_SX_PEER,
};
enum {
	/* AE_HRT_START / EXPIRE / CANCEL */
	ARGUS_F_HT_TIMER = 0, ARGUS_F_HT_FUNCTION, ARGUS_F_HT_EXPIRES,
	ARGUS_F_HT_MODE, ARGUS_F_HT_OWNER_TID,
};
/* AE_IRQ_*, AE_SOFTIRQ_*: f[0] = vector, f[1] = ret */
#define ARGUS_F_IRQ_VECTOR 0
#define ARGUS_F_IRQ_RET 1
/* AE_WQ_*: f[0] = work, f[1] = function */
#define ARGUS_F_WQ_WORK 0
#define ARGUS_F_WQ_FUNCTION 1
enum {
	/* AE_HWWATCH: stack = the writer's user stack; reader = the tid
	 * `argus watch --reader` named, 0 none (absent in older chunks) */
	ARGUS_F_HW_ADDR = 0, ARGUS_F_HW_VALUE, ARGUS_F_HW_LEN, ARGUS_F_HW_ID,
	ARGUS_F_HW_IP, ARGUS_F_HW_VALUE_OK, ARGUS_F_HW_READER,
};
/* AE_MUTEX_WAIT / ACQUIRED / WAKE (the interposer): f[0] = the mutex's
 * address; f[1] = WAIT: the holder's tid (0 unknown), ACQUIRED: 0 or the
 * lock call's errno, WAKE: 0 */
#define ARGUS_F_MX_ADDR 0
#define ARGUS_F_MX_OTHER 1
/* appended (older chunks have 2 fields, read as 0 = a mutex): f[2] the
 * kind (enum ae_sync_kind), f[3] the kind's third field: WAIT rwlock:
 * readers registered; WAIT/ACQUIRED cond: the mutex's address; WAKE
 * cond: 1 broadcast.  WAKE's f[1] is 0 for a mutex or rwlock and the
 * waiters glibc counted for a semaphore post or a condvar signal. */
#define ARGUS_F_MX_KIND 2
#define ARGUS_F_MX_ARG 3
/* AE_WORK_ENQUEUE / BEGIN / END (the interposer's work items): f[0] = the
 * item's address, f[1] = its callback (0 unknown), f[2] = who made it
 * (enum aip_work_kind).  AE_WORK_BOUNDARY: f[0] = the tag. */
#define ARGUS_F_WI_ITEM 0
#define ARGUS_F_WI_FN 1
#define ARGUS_F_WI_KIND 2
/* AE_LIVE_HIT (argus instrument --via uprobe): the function's entry, its
 * first argument (the work item), the kind (1 boundary 2 enqueue 3 begin
 * 4 end) */
#define ARGUS_F_LIVE_FUNC 0
#define ARGUS_F_LIVE_ITEM 1
#define ARGUS_F_LIVE_KIND 2
/* AE_SAMPLE: stack only.  AE_LOST: f[0] = count. */
#define ARGUS_F_LOST_COUNT 0
/* AE_MARK: str = text; pid/tid = the sender (SO_PEERCRED); f[0] = the
 * sender's uid, f[1] = 1 when f[0] is known.  Marks of older writers had
 * no fields and read as f[1] = 0: "uid unknown", not root. */
#define ARGUS_F_MARK_UID 0
#define ARGUS_F_MARK_HAS_UID 1

/* A task-table entry (one per thread seen in a chunk). */
struct argus_task {
	uint32_t tid;
	uint32_t pid;       /* tgid */
	uint32_t ppid;      /* parent's tgid, 0 if unknown */
	uint32_t comm;      /* string id */
};

/* One executable mapping of a process, captured from /proc/PID/maps. */
#define ARGUS_BUILD_ID_MAX 20
struct argus_map {
	uint32_t pid;
	uint32_t path;          /* string id */
	uint64_t ts;            /* when it was captured */
	uint64_t start, end;    /* virtual address range [start, end) */
	uint64_t pgoff;         /* file offset of start */
	uint8_t build_id_len;
	uint8_t build_id[ARGUS_BUILD_ID_MAX];
};

/* Per-CPU totals of a chunk or of a whole trace. */
struct argus_cpu_stats {
	uint64_t min_ts, max_ts;
	uint64_t events;
	uint64_t lost;          /* records the kernel could not hand over */
};

struct argus_error {
	int code;               /* -errno style */
	uint64_t offset;        /* file offset the error is about */
	char msg[256];          /* one line, names the file and what is wrong */
};

/* ---------------------------------------------------------------------
 * Writing: build a chunk, then append it to a file ring.
 */
struct argus_chunk_builder;

struct argus_chunk_builder *argus_chunk_builder__new(void);
void argus_chunk_builder__free(struct argus_chunk_builder *b);
/* Intern a string / stack into the chunk being built: local id, >= 1. */
uint32_t argus_chunk_builder__string(struct argus_chunk_builder *b,
				     const char *s, size_t len);
uint32_t argus_chunk_builder__stack(struct argus_chunk_builder *b,
				    const uint64_t *ips, uint32_t nr);
/* t->comm and m->path are local string ids from __string(). */
int argus_chunk_builder__task(struct argus_chunk_builder *b,
			      const struct argus_task *t);
int argus_chunk_builder__map(struct argus_chunk_builder *b,
			     const struct argus_map *m);
int argus_chunk_builder__lost(struct argus_chunk_builder *b, uint16_t cpu,
			      uint64_t count);
/* ev->stack/str/str2 are local ids.  Per CPU, ts must not decrease:
 * -EINVAL otherwise. */
int argus_chunk_builder__event(struct argus_chunk_builder *b,
			       const struct argus_event *ev);
size_t argus_chunk_builder__nevents(const struct argus_chunk_builder *b);
size_t argus_chunk_builder__raw_bytes(const struct argus_chunk_builder *b);
/* Encode header + payload into a malloc'd buffer (*out, *len) and reset
 * the builder for the next chunk.  level: 1 (fastest) to 9, -1 the codec's
 * default (zlib 6, zstd 3), 0 = store raw.  A payload the codec cannot
 * shrink is stored raw. */
int argus_chunk_builder__finish(struct argus_chunk_builder *b, uint64_t seq,
				int level, void **out, size_t *len);
/* The codec of the builder's next chunks (ARGUS_CODEC_ZLIB until set);
 * -EINVAL for an unknown one. */
int argus_chunk_builder__set_codec(struct argus_chunk_builder *b,
				   enum argus_codec codec);
/* Drop everything added since the last __finish (e.g. after it failed). */
void argus_chunk_builder__reset(struct argus_chunk_builder *b);
/* Built-in name of an event type ("switch", "sys_enter"...), NULL if
 * unknown to this build. */
const char *argus_event_type_str(uint16_t type);
/* Name of an object kind (enum ae_obj_kind): "pipe", "unix"...; "?" if
 * unknown. */
const char *argus_obj_kind_str(uint64_t kind);

struct argus_ring;

struct argus_ring_opts {
	size_t sz;              /* sizeof(struct argus_ring_opts) */
	uint64_t data_size;     /* ring bytes; 0 = append-only snapshot */
	uint32_t ncpus;
	int fd_mode;            /* file mode, default 0600 */
	uint32_t flags;         /* ARGUS_FILE_* bits to set besides RING or
	                           SNAPSHOT (ARGUS_FILE_WAIT_STACKS) */
	uint32_t out_flags;     /* ARGUS_OUT_* (safe_file.h): 0 refuses to
	                           overwrite a file argus did not create */
};
/* Create a trace file, 0600, O_EXCL|O_NOFOLLOW: an existing file is
 * truncated only if argus could have made it (argus_out__open() in
 * safe_file.h), else -EEXIST unless opts->out_flags has ARGUS_OUT_FORCE.
 * Ring files are preallocated. */
struct argus_ring *argus_ring__create(const char *path,
				      const struct argus_ring_opts *opts,
				      struct argus_error *err);
/* Append one finished chunk.  In a ring, wraps to the start when the end
 * is reached, overwriting the oldest chunks; on ENOSPC the ring shrinks to
 * what the disk holds and wraps instead of failing. */
int argus_ring__append(struct argus_ring *r, const void *chunk, size_t len);
int argus_ring__sync(struct argus_ring *r);
uint64_t argus_ring__bytes_written(const struct argus_ring *r);
uint64_t argus_ring__wraps(const struct argus_ring *r);
uint64_t argus_ring__fill(const struct argus_ring *r); /* bytes in use */
void argus_ring__close(struct argus_ring *r);

/* ---------------------------------------------------------------------
 * Reading.
 */
struct argus_trace;

struct argus_trace_stats {
	uint64_t chunks;             /* decodable chunks */
	uint64_t chunks_overwritten; /* ring chunks partly overwritten */
	uint64_t chunks_incomplete;  /* newest ring chunk cut by a crash */
	/* Ring chunks skipped as corrupt: a valid header but a bad payload
	 * somewhere other than the newest chunk (power loss can tear any of
	 * the last writes the disk had not flushed).  In a snapshot the same
	 * is a hard error: it is written once and synced. */
	uint64_t chunks_corrupt;
	uint64_t corrupt_offset;     /* file offset of the first one */
	char corrupt_why[200];       /* and what was wrong with it */
	uint64_t events;             /* events returned so far */
	uint64_t out_of_order;       /* events older than the previous one */
	uint64_t inflated_ahead;     /* chunks of those whose payload the
	                                prefetch thread had inflated */
	uint64_t min_ts, max_ts;     /* over all decodable chunks */
	uint32_t ncpus;
	struct argus_cpu_stats cpu[256];
};

struct argus_trace *argus_trace__open(const char *path,
				      struct argus_error *err);
/* Same, over a memory buffer (the fuzz target uses this); the buffer must
 * stay valid and unchanged until __close(). */
struct argus_trace *argus_trace__open_mem(const void *buf, size_t len,
					  struct argus_error *err);
void argus_trace__close(struct argus_trace *t);
/* Next event in timestamp order: 1 = got one, 0 = end, <0 = error, with
 * the reason in *err (a corrupt chunk: none of its events is returned, and
 * calling again goes on with the next chunk). */
int argus_trace__next(struct argus_trace *t, struct argus_event *ev,
		      struct argus_error *err);
/* The same events, a batch at a time, without copying them: *evs points
 * at n events in timestamp order, valid until the next call on t (any
 * __next, __next_batch, __rewind or __close).  Returns n > 0, 0 at the
 * end, or < 0 on error as __next() does.  A batch is the rest of one
 * chunk, so it can be large (a chunk's events). */
int argus_trace__next_batch(struct argus_trace *t,
			    const struct argus_event **evs,
			    struct argus_error *err);
int argus_trace__rewind(struct argus_trace *t);
/* Whether __next and __next_batch inflate the next chunk on a second
 * thread while the caller works on this one (on by default; off on one
 * CPU).  The events are the same either way; off is for measuring. */
void argus_trace__prefetch(struct argus_trace *t, bool on);
/* Lookups are valid for ids returned by __next() so far. */
const char *argus_trace__string(const struct argus_trace *t, uint32_t id);
int argus_trace__stack(const struct argus_trace *t, uint32_t id,
		       const uint64_t **ips, uint32_t *nr);
const struct argus_task *argus_trace__task(const struct argus_trace *t,
					   uint32_t tid);
/* The mapping of pid containing ip, captured closest before ts. */
const struct argus_map *argus_trace__map(const struct argus_trace *t,
					 uint32_t pid, uint64_t ip,
					 uint64_t ts);
const struct argus_trace_stats *argus_trace__stats(const struct argus_trace *t);
const struct argus_file_header *argus_trace__header(const struct argus_trace *t);

/* The decodable chunks, in seq order (what __next() walks). */
struct argus_chunk_info {
	uint64_t offset;        /* file offset of the chunk header */
	uint64_t seq;
	uint64_t min_ts, max_ts;
	uint32_t nevents;
	uint32_t size;          /* header + payload bytes on disk */
	const void *data;       /* those bytes, valid until __close() */
};
size_t argus_trace__nchunks(const struct argus_trace *t);
int argus_trace__chunk(const struct argus_trace *t, size_t i,
		       struct argus_chunk_info *info);
/* Whether chunk i decodes in full (sections, strings, stacks, tasks, maps
 * and every event), as __next() would decode it: 0 yes; 1 it changed
 * since open (a live ring moved on); -EBADMSG it is corrupt although its
 * crc is good (counted in the stats' chunks_corrupt, with where and why);
 * other -errno.  Not during an iteration: it reuses the decode buffer. */
int argus_trace__chunk_check(struct argus_trace *t, size_t i);

/* Copy the raw chunks whose max_ts >= from_ts into a new snapshot file,
 * without re-encoding; a chunk is copied only if it decodes in full
 * (__chunk_check), so the snapshot never holds one the reader refuses.
 * Returns 0 or -errno (*err says why).  src_stats (may be NULL) gets the
 * source's stats, e.g. how many corrupt chunks were skipped (at open, or
 * because they did not decode). */
int argus_trace__save(const char *src_path, const char *dst_path,
		      uint64_t from_ts, struct argus_trace_stats *src_stats,
		      struct argus_error *err);
/* Same, with ARGUS_OUT_* flags for creating dst (safe_file.h). */
int argus_trace__save_to(const char *src_path, const char *dst_path,
			 unsigned out_flags, uint64_t from_ts,
			 struct argus_trace_stats *src_stats,
			 struct argus_error *err);

#endif /* ARGUS_TRACE_FORMAT_H */
