/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "emu_common.h"
#include "emu_pid.h"
#include "emu_uaccess.h"

/* process_vm_*() write memory behind valgrind's back: tell it, when UCX's
 * configure asked for valgrind annotations (--with-valgrind; by default its
 * config.h defines NVALGRIND and no valgrind header is needed) */
#ifndef NVALGRIND
#  include <valgrind/memcheck.h>
#  define EMU_MEM_DEFINED(_ptr, _len) VALGRIND_MAKE_MEM_DEFINED(_ptr, _len)
#else
#  define EMU_MEM_DEFINED(_ptr, _len)
#endif

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>


/* This thread's stack, [lo, hi), looked up once per thread */
static __thread uintptr_t emu_uaccess_stack_lo;
static __thread uintptr_t emu_uaccess_stack_hi;
static __thread int       emu_uaccess_stack_known;


static void emu_uaccess_stack_init(void)
{
    pthread_attr_t attr;
    size_t size;
    void *base;

    emu_uaccess_stack_known = 1;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) {
        return;     /* never on the stack: every copy is checked */
    }

    if (pthread_attr_getstack(&attr, &base, &size) == 0) {
        emu_uaccess_stack_lo = (uintptr_t)base;
        emu_uaccess_stack_hi = (uintptr_t)base + size;
    }
    pthread_attr_destroy(&attr);
}

/* Is [addr, addr + len) in the live part of this thread's stack, between
 * our own frame and the stack's top? That memory is mapped read-write, so
 * the copy needs no check: an argument struct or chunk array of the caller
 * (the transports keep them on the stack) costs no system call, where a
 * process_vm_*() call costs microseconds in a VM. */
static int emu_uaccess_on_stack(uint64_t addr, size_t len)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);

    if (!emu_uaccess_stack_known) {
        emu_uaccess_stack_init();
    }

    /* (on a signal or coroutine stack, @sp is outside: checked copy) */
    return (sp >= emu_uaccess_stack_lo) && (sp < emu_uaccess_stack_hi) &&
           (addr >= sp) && (addr < emu_uaccess_stack_hi) &&
           (len <= emu_uaccess_stack_hi - addr);
}

/* process_vm_*() on ourselves; -ENOSYS if the kernel refuses them */
static int emu_uaccess_vm(void *local, uint64_t remote, size_t len,
                          int write)
{
    struct iovec liov = {local, len};
    struct iovec riov = {(void*)(uintptr_t)remote, len};
    ssize_t n;

    if (len == 0) {
        return 0;
    }

    if (remote == 0) {
        return -EFAULT;
    }

    n = write ? process_vm_writev(emu_getpid(), &liov, 1, &riov, 1, 0) :
                process_vm_readv(emu_getpid(), &liov, 1, &riov, 1, 0);
    if (n == (ssize_t)len) {
        EMU_MEM_DEFINED(write ? riov.iov_base : liov.iov_base, len);
        return 0;
    } else if ((n < 0) && ((errno == ENOSYS) || (errno == EPERM))) {
        return -ENOSYS;
    }

    return -EFAULT;
}

int emu_copy_from_user(void *dst, uint64_t src, size_t len)
{
    int ret;

    if (emu_uaccess_on_stack(src, len)) {
        memcpy(dst, (const void*)(uintptr_t)src, len);
        return 0;
    }

    ret = emu_uaccess_vm(dst, src, len, 0);

    if (ret == -ENOSYS) {
        memcpy(dst, (const void*)(uintptr_t)src, len);
        ret = 0;
    }

    return ret;
}

int emu_copy_to_user(uint64_t dst, const void *src, size_t len)
{
    int ret;

    if (emu_uaccess_on_stack(dst, len)) {
        memcpy((void*)(uintptr_t)dst, src, len);
        return 0;
    }

    ret = emu_uaccess_vm((void*)src, dst, len, 1);

    if (ret == -ENOSYS) {
        memcpy((void*)(uintptr_t)dst, src, len);
        ret = 0;
    }

    return ret;
}

/* statfs(2) f_type of the filesystems whose shared mappings still pin
 * (linux/magic.h) */
#define EMU_TMPFS_MAGIC      0x01021994
#define EMU_HUGETLBFS_MAGIC  0x958458f6

static char *emu_read_maps(void)
{
    size_t size = 0, cap = 65536;
    char *buf = NULL, *tmp;
    ssize_t n;
    int fd;

    fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return NULL;
    }

    do {
        if ((buf == NULL) || (size + 1 >= cap)) {
            cap *= (buf == NULL) ? 1 : 2;
            tmp  = realloc(buf, cap);
            if (tmp == NULL) {
                free(buf);
                close(fd);
                return NULL;
            }
            buf = tmp;
        }
        n = read(fd, buf + size, cap - size - 1);
        if (n > 0) {
            size += n;
        }
    } while ((n > 0) || ((n < 0) && (errno == EINTR)));

    close(fd);
    buf[size] = '\0';
    return buf;
}

/*
 * Whether the kernel (6.5 on) refuses a long-term pin of a writable shared
 * mapping of @a path (the rest of a /proc/self/maps line):
 * mm/gup.c check_vma_flags() -> writable_file_mapping_allowed() ->
 * vma_needs_dirty_tracking(): a file whose filesystem writes dirty pages
 * back (ext4, xfs, NFS...), or whose mapping has page_mkwrite (ramfs's
 * generic_file_vm_ops does). shmem (tmpfs, /dev/shm, memfd, SysV shm) and
 * hugetlbfs still pin. What cannot be told is taken as refused.
 */
static int emu_uaccess_needs_writeback(const char *path)
{
    static const char *const deleted = " (deleted)";
    char file[PATH_MAX];
    struct statfs fs;
    size_t len;
    char *slash;

    if ((strncmp(path, "/memfd:", 7) == 0) ||
        (strncmp(path, "/SYSV", 5) == 0) || (strcmp(path, "/dev/zero") == 0)) {
        return 0;
    }

    snprintf(file, sizeof(file), "%s", path);
    len = strlen(file);
    if ((len > strlen(deleted)) &&
        !strcmp(file + len - strlen(deleted), deleted)) {
        file[len - strlen(deleted)] = '\0';
    }
    if (statfs(file, &fs) != 0) {
        /* gone: its directory's filesystem, else the device tells */
        slash = strrchr(file, '/');
        if (slash != NULL) {
            *slash = '\0';
        }
        if ((slash == NULL) || (statfs(file, &fs) != 0)) {
            return 1;
        }
    }

    return (fs.f_type != EMU_TMPFS_MAGIC) &&
           (fs.f_type != EMU_HUGETLBFS_MAGIC);
}

int emu_check_user_pinnable(uint64_t addr, uint64_t len, int shared_files_ok)
{
    uint64_t cur = addr, end = addr + len;
    unsigned long long start, stop;
    unsigned major, minor;
    unsigned long inode;
    char perms[8];
    char *maps, *line, *nl;
    int ret = -EFAULT;
    int path;

    if ((addr == 0) || (end < addr)) {
        return -EFAULT;
    }

    maps = emu_read_maps();
    if (maps == NULL) {
        return -ENOMEM;
    }

    /* /proc/self/maps is sorted: walk the regions covering [addr, end) */
    for (line = maps; (line != NULL) && (*line != '\0');
         line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        path = 0;
        if (sscanf(line, "%llx-%llx %7s %*x %x:%x %lu %n", &start, &stop,
                   perms, &major, &minor, &inode, &path) < 6) {
            continue;
        }
        if (stop <= cur) {
            continue;
        }
        if ((start > cur) || (perms[1] != 'w')) {
            break;
        }
        if (!shared_files_ok && (perms[3] == 's') && (inode != 0) &&
            (path > 0) && (line[path] == '/')) {
            nl = strchr(line + path, '\n');
            if (nl != NULL) {
                *nl = '\0';
            }
            if (emu_uaccess_needs_writeback(line + path)) {
                break;      /* the kernel refuses it: -EFAULT */
            }
            if (nl != NULL) {
                *nl = '\n';
            }
        }
        cur = stop;
        if (cur >= end) {
            ret = 0;
            break;
        }
    }

    free(maps);
    return ret;
}
