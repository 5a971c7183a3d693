/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_IPC_DIR_H_
#define UCT_GAUDI_IPC_DIR_H_

/*
 * The rendezvous directory of gaudi_ipc: where the fd servers of one uid's
 * processes bind their sockets and find each other (gaudi_ipc_proto.h).
 * Only our uid may enter it: a directory we own, mode 0700, opened without
 * following a link in its last component, and checked on the open
 * descriptor (so nothing can be swapped in between). Every later operation
 * in it is relative to that descriptor: *at() calls, and socket addresses
 * through /proc/self/fd/<fd>/ where /proc shows it (else the path, which
 * the checks made safe: see uct_gaudi_ipc_dir_open()). Processes in other
 * containers reach us when the same host directory is mounted into theirs.
 */

#include "gaudi_ipc_proto.h"

#include <ucs/type/status.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>


/* The environment variable of the directory's default, and the names under
 * it and under /tmp */
#define UCT_GAUDI_IPC_DIR_RUNTIME_ENV  "XDG_RUNTIME_DIR"
#define UCT_GAUDI_IPC_DIR_RUNTIME_NAME "ucx-gaudi-ipc"
#define UCT_GAUDI_IPC_DIR_TMP_FMT      "/tmp/ucx-gaudi-ipc-%u"


typedef struct uct_gaudi_ipc_dir {
    int      fd;              /* the directory, open */
    uint64_t dev;             /* its st_dev and st_ino: who shares it */
    uint64_t ino;
    char     path[256];       /* as resolved, for messages */
    char     prefix[128];     /* of socket addresses: "/proc/self/fd/N/" or
                                 the path and "/" */
} uct_gaudi_ipc_dir_t;


/**
 * Open (and create if missing) the rendezvous directory @a config_path, or
 * if it is empty, the default: $XDG_RUNTIME_DIR/ucx-gaudi-ipc when that is
 * a directory of ours (the per-user runtime directory), else
 * /tmp/ucx-gaudi-ipc-<uid>. Only the last component is created (mode
 * 0700); it must then be a directory (not a link), owned by our effective
 * uid, with no access for group or others. Anything else is refused with
 * an error that names the directory and what is wrong with it.
 */
ucs_status_t uct_gaudi_ipc_dir_open(uct_gaudi_ipc_dir_t *dir,
                                    const char *config_path);


void uct_gaudi_ipc_dir_close(uct_gaudi_ipc_dir_t *dir);


/* The socket address of entry @a name in @a dir; 0 if it does not fit */
socklen_t uct_gaudi_ipc_dir_addr(const uct_gaudi_ipc_dir_t *dir,
                                 const char *name, struct sockaddr_un *addr);


/* lstat() of entry @a name (never follows a link); -1 with errno if not */
int uct_gaudi_ipc_dir_stat(const uct_gaudi_ipc_dir_t *dir, const char *name,
                           struct stat *st);


/* Remove entry @a name (ENOENT is no error) */
void uct_gaudi_ipc_dir_unlink(const uct_gaudi_ipc_dir_t *dir,
                              const char *name);

#endif
