/* hangs_saved.h - `argus hangs --saved`: the snapshots argusd kept by
 * itself (cli/hangs_saved.c). */
#ifndef ARGUS_HANGS_SAVED_H
#define ARGUS_HANGS_SAVED_H
int hangs_saved_cmd(int argc, char **argv);
#endif
