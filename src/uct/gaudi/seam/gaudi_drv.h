/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_DRV_H_
#define UCT_GAUDI_DRV_H_

/*
 * The driver seam: every interaction with the kernel (or the emulator) goes
 * through this table. Paths are the real logical paths ("/dev/accel/accel0",
 * "/sys/class/accel/accel0/device/pci_addr"); the emulator maps them to its
 * own state. Return conventions are those of the corresponding syscalls:
 * -1 (or MAP_FAILED) with errno set on failure.
 *
 * Plain C, no UCS: the emulator library implements the same table.
 */

#include <sys/types.h>
#include <stddef.h>


/* Called by list_dir for each entry name (not "." or ".."). Return non-zero
 * to stop the walk. */
typedef int (*uct_gaudi_drv_dir_cb_t)(const char *name, void *arg);


typedef struct uct_gaudi_drv_ops {
    const char *name;                            /* "kernel", "emulator" */
    int     (*open)(const char *path, int flags);
    int     (*close)(int fd);
    int     (*ioctl)(int fd, unsigned long request, void *arg);
    void   *(*mmap)(void *addr, size_t length, int prot, int flags, int fd,
                    off_t offset);
    int     (*munmap)(void *addr, size_t length);
    /* read a sysfs-like attribute; returns bytes read (NUL-terminated in
     * buf), or -1/errno */
    ssize_t (*read_attr)(const char *path, char *buf, size_t max);
    /* 0 if the path exists, -1/errno otherwise */
    int     (*exists)(const char *path);
    /* walk a directory (e.g. "/dev/accel"); 0 or -1/errno */
    int     (*list_dir)(const char *path, uct_gaudi_drv_dir_cb_t cb,
                        void *arg);
    /* logical path of an open fd of this process (for adopting a compute
     * node the application already opened); 0 or -1/errno */
    int     (*fd_path)(int fd, char *buf, size_t max);
    /* close the file behind @fd in place: the number stays taken, by a file
     * that serves nothing (ioctls fail with ENOTTY), so that a thread still
     * using it never reaches a file that reused the number; close() it
     * later. 0 or -1/errno */
    int     (*revoke)(int fd);
} uct_gaudi_drv_ops_t;


/* The real syscalls */
extern const uct_gaudi_drv_ops_t uct_gaudi_drv_kernel_ops;

#endif
