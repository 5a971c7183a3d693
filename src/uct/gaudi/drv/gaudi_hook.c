/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_hook.h"
#include "gaudi_seam.h"

#include <uct/gaudi/gaudi_ucx_compat.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/sys/compiler_def.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/uio.h>
#include <unistd.h>


typedef int (*uct_gaudi_hook_ioctl_func_t)(int fd, unsigned long request,
                                           ...);


static int uct_gaudi_hook_ioctl(int fd, unsigned long request, ...);


static struct {
    pthread_mutex_t         lock;       /* guards the installation */
    int                     installed;
    unsigned long           mem_request; /* the probed ABI's MEMORY code */
    uct_gaudi_hook_mem_cb_t cb;
    uct_gaudi_reloc_patch_t patch;      /* UCM keeps it in its list */
} uct_gaudi_hook = {
    .lock  = PTHREAD_MUTEX_INITIALIZER,
    .patch = {
        .symbol = "ioctl",
        .value  = (void*)uct_gaudi_hook_ioctl
    }
};

/* > 0 while this thread is in a driver call of the library's own */
static __thread unsigned uct_gaudi_hook_own_depth = 0;


void uct_gaudi_hook_own_begin(void)
{
    ++uct_gaudi_hook_own_depth;
}

void uct_gaudi_hook_own_end(void)
{
    --uct_gaudi_hook_own_depth;
}

static uct_gaudi_hook_ioctl_func_t uct_gaudi_hook_prev(void)
{
    /* set before the patch went in, rewritten by UCM to the same function
     * (the main program's resolved entry) while it patches */
    return (uct_gaudi_hook_ioctl_func_t)
           (*(void* volatile*)&uct_gaudi_hook.patch.prev_value);
}

/* The driver's side of a memory request: the emulator serves its own fds
 * (the file behind one is a plain file the kernel knows nothing of) */
static int uct_gaudi_hook_next(int fd, unsigned long request, void *arg)
{
    char path[PATH_MAX];
    int ret;

    if (uct_gaudi_seam_is_emulated() &&
        (uct_gaudi_seam_ops->fd_path(fd, path, sizeof(path)) == 0)) {
        do {
            ret = uct_gaudi_seam_ops->ioctl(fd, request, arg);
        } while ((ret < 0) && (errno == EINTR));
        return ret;
    }

    return uct_gaudi_hook_prev()(fd, request, arg);
}

/* Whether the application's argument can be read: a bad pointer the
 * driver would answer with EFAULT must not crash us. The kernel reads it
 * for us (process_vm_readv); where that is not allowed (seccomp), it is
 * trusted as the driver's caller trusts it. */
static int uct_gaudi_hook_readable(const void *arg, size_t size)
{
    union hl_mem_args copy;
    struct iovec local  = {&copy, sizeof(copy)};
    struct iovec remote = {(void*)arg, size};

    ucs_assert(size <= sizeof(copy));
    return (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
            (ssize_t)size) || ((errno != EFAULT) && (errno != ENOMEM));
}

static int uct_gaudi_hook_ioctl(int fd, unsigned long request, ...)
{
    uct_gaudi_hook_mem_cb_t cb;
    va_list ap;
    void *arg;

    va_start(ap, request);
    arg = va_arg(ap, void*);
    va_end(ap);

    /* every other request, and ours, go on untouched */
    if (ucs_likely((request != uct_gaudi_hook.mem_request) ||
                   (uct_gaudi_hook_own_depth > 0))) {
        return uct_gaudi_hook_prev()(fd, request, arg);
    }

    cb = *(uct_gaudi_hook_mem_cb_t volatile*)&uct_gaudi_hook.cb;
    if ((cb == NULL) ||
        !uct_gaudi_hook_readable(arg, sizeof(union hl_mem_args))) {
        return uct_gaudi_hook_next(fd, request, arg);
    }

    return cb(fd, request, (union hl_mem_args*)arg, uct_gaudi_hook_next);
}

ucs_status_t uct_gaudi_hook_install(unsigned long mem_request,
                                    uct_gaudi_hook_mem_cb_t cb)
{
    ucs_status_t status = UCS_OK;

    pthread_mutex_lock(&uct_gaudi_hook.lock);
    uct_gaudi_hook.mem_request = mem_request;
    uct_gaudi_hook.cb          = cb;
    if (uct_gaudi_hook.installed || (cb == NULL)) {
        goto out;
    }

    uct_gaudi_hook.patch.prev_value = dlsym(RTLD_DEFAULT, "ioctl");
    if (uct_gaudi_hook.patch.prev_value == NULL) {
        ucs_diag("cannot find ioctl(): %s", dlerror());
        status = UCS_ERR_UNSUPPORTED;
        goto out;
    }

    status = ucm_reloc_modify(&uct_gaudi_hook.patch);
    if (status != UCS_OK) {
        goto out;
    }

    uct_gaudi_hook.installed = 1;
    ucs_debug("ioctl() hooked for the application's Gaudi memory requests "
              "(0x%lx)", mem_request);
out:
    if (status != UCS_OK) {
        uct_gaudi_hook.cb = NULL;
    }
    pthread_mutex_unlock(&uct_gaudi_hook.lock);
    return status;
}
