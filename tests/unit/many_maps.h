/* many_maps.h - a process that maps many files, made up for the tests that
 * give the unwinder more files than it caches or than one message carries
 * (test_symbols.c, test_unwind_helper.c): copies of one ELF file in a temp
 * directory, each described by a mapping like the original's. */
#ifndef ARGUS_TEST_MANY_MAPS_H
#define ARGUS_TEST_MANY_MAPS_H
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc_maps.h"

/* Copy the file *self maps (read whole; under 4 MiB) to dir/0 .. dir/n-1,
 * and describe copy i in out[i]: *self's mapping moved to 0x100000000000
 * + i * 16 MiB (below every real mapping, in address order), with the
 * copy's device, inode and path (paths[i], which out[i].path points to).
 * Returns how many copies were made: n, fewer when a write failed, 0 when
 * self's file could not be read.  The caller unlinks paths[0..return). */
static inline int many_maps_copy(const struct argus_proc_map *self, const char *dir, int n,
				 struct argus_proc_map *out, char (*paths)[64])
{
	static char img[1 << 22];
	ssize_t len = -1;
	int fd, made = 0;

	fd = open(self->path, O_RDONLY);
	if (fd >= 0) {
		len = read(fd, img, sizeof(img));
		close(fd);
	}
	if (len <= 0 || len >= (ssize_t)sizeof(img))
		return 0;
	for (; made < n; made++) {
		struct argus_proc_map *x = &out[made];
		struct stat sb;

		snprintf(paths[made], sizeof(paths[made]), "%s/%d", dir, made);
		fd = open(paths[made], O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0 || write(fd, img, (size_t)len) != len || fstat(fd, &sb)) {
			if (fd >= 0)
				close(fd);
			break;
		}
		close(fd);
		*x = *self;
		x->start = 0x100000000000ull + (uint64_t)made * 0x1000000ull;
		x->end = x->start + (self->end - self->start);
		x->dev = sb.st_dev;
		x->inode = sb.st_ino;
		x->path = paths[made];
	}
	return made;
}
#endif
