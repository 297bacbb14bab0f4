/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * step_format.h - the on-disk layout of a step recording (docs/step-format.md).
 * All integers little-endian, no padding between fields.
 *
 *   header (64 bytes)
 *     0  magic "ARGUSSTP"          8
 *     8  version (1)               u32
 *    12  header size (64)          u32
 *    16  pid, tid                  u32, u32
 *    24  instructions              u64
 *    32  strings                   u32
 *    36  flags (0)                 u32
 *    40  body length               u64
 *    48  body crc32 (zlib)         u32
 *    52  reserved (0)              u32 x 2
 *    60  header crc32 of bytes 0..60  u32
 *   body
 *     start registers              27 x u64 (user_regs_struct order)
 *     strings                      each u16 length + bytes (no NUL)
 *     instructions                 each:
 *       addr u64, flags u16, len u8, nregs u8, nmem u8, sig u8,
 *       sym i32, sym_off u64, bytes[len],
 *       nregs x (reg u8, value u64),
 *       nmem x (addr u64, before u64, after u64, size u16, access u8, valid u8)
 */
#ifndef ARGUS_STEP_FORMAT_H
#define ARGUS_STEP_FORMAT_H

#define STEP_MAGIC "ARGUSSTP"
#define STEP_VERSION 1u
#define STEP_HEADER_SIZE 64u
#define STEP_INSN_FIXED 26u  /* bytes of an instruction before bytes[] */
#define STEP_REG_SIZE 9u
#define STEP_MEM_SIZE 28u
#define STEP_STRING_MAX 4096u
#define STEP_FLAGS_KNOWN 0x1fu /* ARGUS_STEP_F_* */

#endif /* ARGUS_STEP_FORMAT_H */
