/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_ipc_dir.h"

#include <ucs/debug/log.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* The default directory under the per-user runtime directory, if there is
 * one of ours: su and sudo keep the variable of the user they came from,
 * whose directory (and whatever it holds) that user controls */
static int uct_gaudi_ipc_dir_runtime(char *path, size_t max)
{
    const char *runtime = getenv(UCT_GAUDI_IPC_DIR_RUNTIME_ENV);
    struct stat st;
    int len;

    if ((runtime == NULL) || (runtime[0] != '/')) {
        return 0;
    }

    if ((lstat(runtime, &st) != 0) || !S_ISDIR(st.st_mode) ||
        (st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        ucs_debug("gaudi_ipc: %s=%s is not a directory of ours (uid %u): "
                  "not used", UCT_GAUDI_IPC_DIR_RUNTIME_ENV, runtime,
                  geteuid());
        return 0;
    }

    len = snprintf(path, max, "%s/%s", runtime, UCT_GAUDI_IPC_DIR_RUNTIME_NAME);
    return (len > 0) && ((size_t)len < max);
}

static ucs_status_t uct_gaudi_ipc_dir_resolve(uct_gaudi_ipc_dir_t *dir,
                                              const char *config_path)
{
    size_t len;

    if ((config_path != NULL) && (config_path[0] != '\0')) {
        /* a relative path would name another directory in every process
         * that has another working directory */
        if (config_path[0] != '/') {
            ucs_error("gaudi_ipc: UCX_GAUDI_IPC_DIR=%s is not an absolute "
                      "path", config_path);
            return UCS_ERR_INVALID_PARAM;
        }
        len = strlen(config_path);
        if (len >= sizeof(dir->path)) {
            ucs_error("gaudi_ipc: UCX_GAUDI_IPC_DIR is longer than %zu "
                      "characters", sizeof(dir->path) - 1);
            return UCS_ERR_INVALID_PARAM;
        }
        memcpy(dir->path, config_path, len + 1);
    } else if (!uct_gaudi_ipc_dir_runtime(dir->path, sizeof(dir->path))) {
        snprintf(dir->path, sizeof(dir->path), UCT_GAUDI_IPC_DIR_TMP_FMT,
                 geteuid());
    }

    len = strlen(dir->path);
    while ((len > 1) && (dir->path[len - 1] == '/')) {
        dir->path[--len] = '\0';
    }
    return UCS_OK;
}

/* Checks on the open directory: whatever the path led to, this is what we
 * use from now on */
static ucs_status_t uct_gaudi_ipc_dir_check(const uct_gaudi_ipc_dir_t *dir,
                                            const struct stat *st)
{
    if (!S_ISDIR(st->st_mode)) {
        ucs_error("gaudi_ipc: %s is not a directory", dir->path);
        return UCS_ERR_INVALID_PARAM;
    } else if (st->st_uid != geteuid()) {
        /* in a shared /tmp anyone may create the name first */
        ucs_error("gaudi_ipc: directory %s belongs to uid %u, not to us "
                  "(uid %u): refused, this process cannot share its Gaudi "
                  "memory; remove it or set UCX_GAUDI_IPC_DIR", dir->path,
                  st->st_uid, geteuid());
        return UCS_ERR_ALREADY_EXISTS;
    } else if (st->st_mode & (S_IRWXG | S_IRWXO)) {
        ucs_error("gaudi_ipc: directory %s has mode 0%o: other users may "
                  "enter it; refused (chmod 700 it)", dir->path,
                  (unsigned)(st->st_mode & 07777));
        return UCS_ERR_INVALID_PARAM;
    } else if ((st->st_mode & S_IRWXU) != S_IRWXU) {
        ucs_error("gaudi_ipc: directory %s has mode 0%o: we cannot create "
                  "and reach entries in it", dir->path,
                  (unsigned)(st->st_mode & 07777));
        return UCS_ERR_INVALID_PARAM;
    }

    return UCS_OK;
}

/* Socket addresses through our descriptor of the directory: what the path
 * names later cannot matter. /proc may be missing (or another PID
 * namespace's, where /proc/self is not us): then the path. */
static ucs_status_t uct_gaudi_ipc_dir_set_prefix(uct_gaudi_ipc_dir_t *dir)
{
    struct sockaddr_un addr;
    struct stat st;

    snprintf(dir->prefix, sizeof(dir->prefix), "/proc/self/fd/%d/", dir->fd);
    if ((stat(dir->prefix, &st) == 0) && (st.st_dev == dir->dev) &&
        (st.st_ino == dir->ino)) {
        return UCS_OK;
    }

    if (strlen(dir->path) + 1 + UCT_GAUDI_IPC_ENTRY_NAME_MAX >
        sizeof(addr.sun_path)) {
        ucs_error("gaudi_ipc: %s is too long a path for a socket address "
                  "(at most %zu characters) and /proc/self/fd cannot "
                  "stand for it", dir->path,
                  sizeof(addr.sun_path) - 1 - UCT_GAUDI_IPC_ENTRY_NAME_MAX);
        return UCS_ERR_INVALID_PARAM;
    }

    ucs_debug("gaudi_ipc: /proc/self/fd does not show %s: addressing it by "
              "its path", dir->path);
    snprintf(dir->prefix, sizeof(dir->prefix), "%s/", dir->path);
    return UCS_OK;
}

ucs_status_t uct_gaudi_ipc_dir_open(uct_gaudi_ipc_dir_t *dir,
                                    const char *config_path)
{
    ucs_status_t status;
    struct stat st;

    dir->fd = -1;
    status  = uct_gaudi_ipc_dir_resolve(dir, config_path);
    if (status != UCS_OK) {
        return status;
    }

    /* the last component only: a missing parent is a configuration error,
     * not ours to fix */
    if ((mkdir(dir->path, S_IRWXU) != 0) && (errno != EEXIST)) {
        ucs_error("gaudi_ipc: cannot create directory %s: %m; this process "
                  "cannot share its Gaudi memory", dir->path);
        return UCS_ERR_IO_ERROR;
    }

    dir->fd = open(dir->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                   O_CLOEXEC);
    if (dir->fd < 0) {
        ucs_error("gaudi_ipc: cannot open directory %s: %m%s", dir->path,
                  ((errno == ELOOP) || (errno == ENOTDIR)) ?
                  " (a symbolic link, or not a directory: refused)" : "");
        return UCS_ERR_IO_ERROR;
    }

    if (fstat(dir->fd, &st) != 0) {
        ucs_error("gaudi_ipc: fstat(%s) failed: %m", dir->path);
        status = UCS_ERR_IO_ERROR;
        goto err_close;
    }

    status = uct_gaudi_ipc_dir_check(dir, &st);
    if (status != UCS_OK) {
        goto err_close;
    }

    dir->dev = st.st_dev;
    dir->ino = st.st_ino;
    status   = uct_gaudi_ipc_dir_set_prefix(dir);
    if (status != UCS_OK) {
        goto err_close;
    }

    ucs_debug("gaudi_ipc: rendezvous directory %s (dev %#lx ino %lu)",
              dir->path, (unsigned long)dir->dev, (unsigned long)dir->ino);
    return UCS_OK;

err_close:
    close(dir->fd);
    dir->fd = -1;
    return status;
}

void uct_gaudi_ipc_dir_close(uct_gaudi_ipc_dir_t *dir)
{
    if (dir->fd >= 0) {
        close(dir->fd);
        dir->fd = -1;
    }
}

socklen_t uct_gaudi_ipc_dir_addr(const uct_gaudi_ipc_dir_t *dir,
                                 const char *name, struct sockaddr_un *addr)
{
    int len;

    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    len = snprintf(addr->sun_path, sizeof(addr->sun_path), "%s%s",
                   dir->prefix, name);
    if ((len < 0) || ((size_t)len >= sizeof(addr->sun_path))) {
        return 0;
    }

    return offsetof(struct sockaddr_un, sun_path) + len + 1;
}

int uct_gaudi_ipc_dir_stat(const uct_gaudi_ipc_dir_t *dir, const char *name,
                           struct stat *st)
{
    return fstatat(dir->fd, name, st, AT_SYMLINK_NOFOLLOW);
}

void uct_gaudi_ipc_dir_unlink(const uct_gaudi_ipc_dir_t *dir,
                              const char *name)
{
    if ((unlinkat(dir->fd, name, 0) != 0) && (errno != ENOENT)) {
        ucs_diag("gaudi_ipc: cannot remove %s/%s: %m", dir->path, name);
    }
}
