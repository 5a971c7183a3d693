/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <uct/gaudi/seam/gaudi_drv.h>

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


/* open() is variadic; the seam's open is not */
static int uct_gaudi_drv_kernel_open(const char *path, int flags)
{
    return open(path, flags);
}

static int uct_gaudi_drv_kernel_ioctl(int fd, unsigned long request, void *arg)
{
    return ioctl(fd, request, arg);
}

static ssize_t uct_gaudi_drv_kernel_read_attr(const char *path, char *buf,
                                              size_t max)
{
    ssize_t nread;
    int saved_errno;
    int fd;

    if (max == 0) {
        errno = EINVAL;
        return -1;
    }

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }

    nread       = read(fd, buf, max - 1);
    saved_errno = errno;
    close(fd);
    if (nread < 0) {
        errno = saved_errno;
        return -1;
    }

    buf[nread] = '\0';
    return nread;
}

static int uct_gaudi_drv_kernel_exists(const char *path)
{
    return access(path, F_OK);
}

static int uct_gaudi_drv_kernel_list_dir(const char *path,
                                         uct_gaudi_drv_dir_cb_t cb, void *arg)
{
    struct dirent *entry;
    DIR *dir;

    dir = opendir(path);
    if (dir == NULL) {
        return -1;
    }

    while ((entry = readdir(dir)) != NULL) {
        if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, "..")) {
            continue;
        }

        if (cb(entry->d_name, arg)) {
            break;
        }
    }

    closedir(dir);
    return 0;
}

static int uct_gaudi_drv_kernel_fd_path(int fd, char *buf, size_t max)
{
    char link[64];
    ssize_t len;

    if (max == 0) {
        errno = EINVAL;
        return -1;
    }

    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    len = readlink(link, buf, max - 1);
    if (len < 0) {
        return -1;
    }

    buf[len] = '\0';
    return 0;
}

/* dup3 over the number closes the old file atomically; an ioctl already
 * in it keeps it until it returns, and the driver releases it then */
static int uct_gaudi_drv_kernel_revoke(int fd)
{
    int null_fd, ret;

    null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0) {
        return -1;
    }

    ret = dup3(null_fd, fd, O_CLOEXEC);
    close(null_fd);
    return (ret < 0) ? -1 : 0;
}

const uct_gaudi_drv_ops_t uct_gaudi_drv_kernel_ops = {
    .name      = "kernel",
    .open      = uct_gaudi_drv_kernel_open,
    .close     = close,
    .ioctl     = uct_gaudi_drv_kernel_ioctl,
    .mmap      = mmap,
    .munmap    = munmap,
    .read_attr = uct_gaudi_drv_kernel_read_attr,
    .exists    = uct_gaudi_drv_kernel_exists,
    .list_dir  = uct_gaudi_drv_kernel_list_dir,
    .fd_path   = uct_gaudi_drv_kernel_fd_path,
    .revoke    = uct_gaudi_drv_kernel_revoke
};
