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
#include <stdint.h>
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

/* Copy between the application's argument and ours, by the kernel: a bad
 * pointer is an error, never a crash. 0, or -1 with errno: EFAULT for
 * memory that cannot be read (written) whole; another errno where the
 * check is not allowed (seccomp) */
static int uct_gaudi_hook_copy(void *ours, void *theirs, size_t size,
                               int to_app)
{
    struct iovec local  = {ours, size};
    struct iovec remote = {theirs, size};
    ssize_t n;

    n = to_app ? process_vm_writev(getpid(), &local, 1, &remote, 1, 0) :
                 process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (n == (ssize_t)size) {
        return 0;
    }

    if ((n >= 0) || (errno == ENOMEM)) {
        errno = EFAULT; /* a part of it only */
    }
    return -1;
}

/*
 * The application's memory request, run as _hl_ioctl runs it: on a copy of
 * its argument, copied back afterwards whatever the answer, and EFAULT for
 * a pointer that cannot be read (nothing happens) or written (the request
 * has happened). What the callback reads is what the driver gets, whatever
 * another thread does to the argument meanwhile.
 */
static int uct_gaudi_hook_mem(int fd, unsigned long request, void *arg,
                              uct_gaudi_hook_mem_cb_t cb)
{
    union hl_mem_args args;
    int ret, err;

    if (uct_gaudi_hook_copy(&args, arg, sizeof(args), 0) != 0) {
        /* unreadable: the driver's EFAULT; not checkable here: in place,
         * trusted as the driver's caller trusts it */
        return (errno == EFAULT) ? uct_gaudi_hook_next(fd, request, arg) :
               cb(fd, request, (union hl_mem_args*)arg, uct_gaudi_hook_next);
    }

    ret = cb(fd, request, &args, uct_gaudi_hook_next);
    err = errno;
    if (uct_gaudi_hook_copy(&args, arg, sizeof(args), 1) != 0) {
        return -1;      /* EFAULT */
    }

    errno = err;
    return ret;
}

static int uct_gaudi_hook_ioctl(int fd, unsigned long request, ...)
{
    uct_gaudi_hook_mem_cb_t cb;
    va_list ap;
    void *arg;

    va_start(ap, request);
    arg = va_arg(ap, void*);
    va_end(ap);

    /* every other request, and ours, go on untouched (the kernel reads the
     * request as 32 bits: a sign-extended one is the same request) */
    if (ucs_likely(((uint32_t)request !=
                    (uint32_t)uct_gaudi_hook.mem_request) ||
                   (uct_gaudi_hook_own_depth > 0))) {
        return uct_gaudi_hook_prev()(fd, request, arg);
    }

    cb = *(uct_gaudi_hook_mem_cb_t volatile*)&uct_gaudi_hook.cb;
    if (cb == NULL) {
        return uct_gaudi_hook_next(fd, request, arg);
    }

    return uct_gaudi_hook_mem(fd, request, arg, cb);
}

/* A forked child does not own its parent's device (nor its importers):
 * its requests go to the driver unseen */
static void uct_gaudi_hook_atfork_child(void)
{
    uct_gaudi_hook.cb = NULL;
}

/* The patched entries point into this library for ever: it must never be
 * unloaded (UCX does not unload modules, but nothing says so) */
static void uct_gaudi_hook_pin(void)
{
    Dl_info info;

    if (dladdr((void*)uct_gaudi_hook_ioctl, &info) &&
        (info.dli_fname != NULL) &&
        (dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) ==
         NULL)) {
        ucs_debug("cannot pin %s: %s", info.dli_fname, dlerror());
    }
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

    uct_gaudi_hook_pin();
    pthread_atfork(NULL, NULL, uct_gaudi_hook_atfork_child);
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
