/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_open.h"
#include "emu_ctx.h"
#include "emu_dev.h"
#include "emu_exec.h"
#include "emu_fault.h"
#include "emu_fd.h"
#include "emu_global.h"
#include "emu_sysfs.h"

#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>


static int emu_open_file(const char *name, int dev, int flags)
{
    char path[PATH_MAX];
    int ret;

    ret = emu_state_path(path, sizeof(path), name, dev);
    if (ret != 0) {
        return emu_fail(-ret);
    }

    return open(path, flags | O_NOFOLLOW);
}

/* Hand @fd out for @ctx; on failure destroys both */
static int emu_open_publish(emu_ctx_t *ctx, int fd, int control)
{
    int ret;

    ctx->fd = fd;
    emu_sys_node_path(ctx->dev, control, ctx->path, sizeof(ctx->path));

    ret = emu_fd_insert(ctx);
    if (ret != 0) {
        emu_ctx_destroy(ctx);
        close(fd);
        return emu_fail(-ret);
    }

    return fd;
}

static int emu_open_compute(int dev, int flags)
{
    emu_ctx_t *ctx;
    int fd, ret;

    fd = emu_open_file("dev", dev, O_RDWR | (flags & O_CLOEXEC));
    if (fd < 0) {
        return -1;
    }

    /* one compute context per device, across all processes */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ret = (errno == EWOULDBLOCK) ? EBUSY : errno;
        close(fd);
        return emu_fail(ret);
    }

    ctx = emu_ctx_create(dev, 1);
    if (ctx == NULL) {
        close(fd);
        return emu_fail(ENOMEM);
    }
    ctx->exec_stop = emu_exec_stop;

    ret = emu_dev_acquire(dev, ctx->sdev, ctx->id);
    if (ret == 0) {
        ctx->hbm = emu_state_hbm(dev);
        ret      = (ctx->hbm == NULL) ? -ENOMEM : 0;
    }

    if (ret != 0) {
        emu_ctx_destroy(ctx);
        close(fd);
        return emu_fail(-ret);
    }

    return emu_open_publish(ctx, fd, 0);
}

static int emu_open_control(int dev, int flags)
{
    emu_ctx_t *ctx;
    int fd;

    fd = emu_open_file("ctl", dev, O_RDONLY | (flags & O_CLOEXEC));
    if (fd < 0) {
        return -1;
    }

    ctx = emu_ctx_create(dev, 0);
    if (ctx == NULL) {
        close(fd);
        return emu_fail(ENOMEM);
    }

    return emu_open_publish(ctx, fd, 1);
}

int emu_open(const char *path, int flags)
{
    emu_sys_node_t node;
    int err;

    if (path == NULL) {
        return emu_fail(EFAULT);
    }

    err = -emu_sys_resolve(path, &node);
    if (err != 0) {
        return emu_fail(err);
    }

    if ((node.kind != EMU_SYS_NODE_COMPUTE) &&
        (node.kind != EMU_SYS_NODE_CONTROL)) {
        /* sysfs attributes are read with read_attr */
        return emu_fail(ENOENT);
    }

    err = emu_fault_call(EMU_FAULT_OPEN);
    if (err != 0) {
        return emu_fail(err);
    }

    return (node.kind == EMU_SYS_NODE_COMPUTE) ?
           emu_open_compute(node.dev, flags) :
           emu_open_control(node.dev, flags);
}

int emu_close(int fd)
{
    emu_ctx_t *ctx = emu_fd_remove(fd);

    /* tear down while still holding the compute lock, so the next owner
     * never sees half-released state */
    if (ctx != NULL) {
        emu_ctx_destroy(ctx);
    }

    return close(fd);
}

int emu_revoke(int fd)
{
    emu_ctx_t *ctx = emu_fd_remove(fd);
    int null_fd, ret;

    if (ctx != NULL) {
        emu_ctx_destroy(ctx);
    }

    null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0) {
        return -1;
    }

    /* replaces (and closes) the node's file, with its exclusivity lock */
    ret = dup3(null_fd, fd, O_CLOEXEC);
    close(null_fd);
    return (ret < 0) ? -1 : 0;
}

int emu_fd_path(int fd, char *buf, size_t max)
{
    emu_ctx_t *ctx;
    int err = 0;

    if (buf == NULL) {
        return emu_fail(EINVAL);
    }

    ctx = emu_fd_get(fd, &err);
    if (ctx == NULL) {
        return emu_fail((err == EBADF) ? EBADF : ENOENT);
    }

    if (strlen(ctx->path) >= max) {
        err = ERANGE;
    } else {
        strcpy(buf, ctx->path);
    }

    emu_fd_put(ctx);
    return (err != 0) ? emu_fail(err) : 0;
}
