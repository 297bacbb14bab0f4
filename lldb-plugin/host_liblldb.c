/* host_liblldb.c - the plugin in a host that loaded liblldb privately.
 *
 * The plugin does not list liblldb as a needed library (CMakeLists.txt:
 * a second liblldb must never be pulled into the debugger), so its SB API
 * calls are bound lazily, at their first call, to whatever liblldb is in
 * the process's global symbol scope.  The lldb-16 binary links liblldb
 * normally: it is global.  Python's `import lldb` dlopens liblldb (as
 * lldb/_lldb.cpython-*.so) with RTLD_LOCAL: its symbols are in no scope the
 * plugin sees, and the first SB call ends the process ("symbol lookup
 * error").  So lldb::PluginInitialize first re-opens the liblldb that
 * called it with RTLD_NOLOAD | RTLD_GLOBAL: glibc then adds the object
 * already loaded to the global scope (no second copy is loaded, no
 * constructor runs again), and later lazy bindings find it there.
 *
 * Invariant: the plugin takes no SB API address at load time (no
 * R_X86_64_GLOB_DAT against liblldb; `readelf -r` shows only JUMP_SLOTs),
 * or dlopen itself would fail before PluginInitialize could run ("this
 * file does not represent a loadable dylib").  Which liblldb: the object
 * that holds our caller's return address (lldb's own LoadPlugin), else
 * the first liblldb* or _lldb* object loaded. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "host_liblldb.h"

static const char *base_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static bool is_liblldb(const char *path)
{
	const char *b = base_of(path);

	return !strncmp(b, "liblldb", 7) || !strncmp(b, "_lldb", 5);
}

struct find {
	char name[PATH_MAX];
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find *f = data;

	(void)size;
	if (!info->dlpi_name || !*info->dlpi_name || !is_liblldb(info->dlpi_name))
		return 0;
	strncpy(f->name, info->dlpi_name, sizeof(f->name) - 1);
	return 1;
}

int argus_lldb_host__promote(const void *caller, char *path, size_t len)
{
	struct find f = { "" };
	Dl_info info;
	void *h;

	if (caller && dladdr(caller, &info) && info.dli_fname && is_liblldb(info.dli_fname))
		strncpy(f.name, info.dli_fname, sizeof(f.name) - 1);
	else
		dl_iterate_phdr(find_cb, &f);
	if (!f.name[0])
		return -ENOENT;
	/* never closed: the plugin stays loaded as long as lldb */
	h = dlopen(f.name, RTLD_LAZY | RTLD_NOLOAD | RTLD_GLOBAL);
	if (!h)
		return -ENOENT;
	if (len) {
		char real[PATH_MAX];

		strncpy(path, realpath(f.name, real) ? real : f.name, len - 1);
		path[len - 1] = 0;
	}
	return 0;
}
