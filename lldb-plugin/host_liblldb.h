/* host_liblldb.h - make the loading lldb's liblldb global, so the plugin's
 * SB API calls bind to it (host_liblldb.c). */
#ifndef ARGUS_LLDB_HOST_LIBLLDB_H
#define ARGUS_LLDB_HOST_LIBLLDB_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

/* caller: an address inside the liblldb that loads the plugin (the return
 * address of lldb::PluginInitialize).  Finds that object (else the first
 * loaded liblldb* / _lldb*), re-opens it RTLD_NOLOAD | RTLD_GLOBAL, and
 * writes its path to path.  Returns 0, or -ENOENT when no liblldb is
 * loaded in the process (nothing changed). */
int argus_lldb_host__promote(const void *caller, char *path, size_t len);

#ifdef __cplusplus
}
#endif
#endif
