/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_config.h"
#include "emu_ctx.h"
#include "emu_fault.h"
#include "emu_fd.h"
#include "emu_reset.h"
#include "emu_global.h"
#include "emu_ioctl.h"
#include "emu_log.h"
#include "emu_open.h"
#include "emu_state.h"
#include "emu_sysfs.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>


emu_global_t emu_g;

static pthread_mutex_t emu_init_lock = PTHREAD_MUTEX_INITIALIZER;

static const uct_gaudi_drv_ops_t emu_ops = {
    .name      = "emulator",
    .open      = emu_open,
    .close     = emu_close,
    .ioctl     = emu_ioctl,
    .mmap      = emu_mmap,
    .munmap    = emu_munmap,
    .read_attr = emu_sys_read_attr,
    .exists    = emu_sys_exists,
    .list_dir  = emu_sys_list_dir,
    .fd_path   = emu_fd_path,
    .revoke    = emu_revoke
};


static void emu_fini_locked(void)
{
    emu_ctx_t *ctx;
    int fd;

    if (!emu_g.initialized) {
        return;
    }

    while ((ctx = emu_fd_remove_any()) != NULL) {
        fd = ctx->fd;
        emu_ctx_destroy(ctx);
        close(fd);
    }

    emu_reset_fini();
    emu_state_close();
    memset(&emu_g, 0, sizeof(emu_g));
}

static int emu_init_locked(const gaudi_emu_config_t *config)
{
    int ret;

    if (emu_g.initialized) {
        if (emu_config_same(config)) {
            return 0;
        }
        if (emu_fd_count() != 0) {
            emu_error("already initialized with another configuration and "
                      "%u emulated node(s) open", emu_fd_count());
            return -EBUSY;
        }
        emu_fini_locked();
    }

    ret = emu_config_load(config);
    if (ret == 0) {
        ret = emu_fault_setup(emu_g.cfg.faults);
    }
    if (ret == 0) {
        ret = emu_state_open();
    }

    if (ret != 0) {
        memset(&emu_g, 0, sizeof(emu_g));
        return ret;
    }

    emu_fd_atfork_install();
    emu_reset_atfork_install();
    emu_g.initialized = 1;
    return 0;
}

EMU_EXPORT int gaudi_emu_init(const gaudi_emu_config_t *config,
                              const uct_gaudi_drv_ops_t **ops_p)
{
    int ret;

    if ((config == NULL) || (ops_p == NULL)) {
        emu_error("gaudi_emu_init: NULL argument");
        return -EINVAL;
    }

    pthread_mutex_lock(&emu_init_lock);
    emu_error_clear();
    ret = emu_init_locked(config);
    pthread_mutex_unlock(&emu_init_lock);

    if (ret == 0) {
        *ops_p = &emu_ops;
    }

    return ret;
}

/*
 * A process that exits without gaudi_emu_fini() (UCX never finalizes its
 * modules; a test program may return from main with nodes open) still
 * leaves the node: the last one out removes the HBM backing files. Nothing
 * is unmapped or closed here: other threads (UCS's async thread, our DMA
 * workers) may still run until the process is gone.
 */
static void __attribute__((destructor)) emu_exit(void)
{
    if (emu_g.initialized) {
        emu_state_leave();
    }
}

EMU_EXPORT void gaudi_emu_fini(void)
{
    pthread_mutex_lock(&emu_init_lock);
    emu_fini_locked();
    pthread_mutex_unlock(&emu_init_lock);
}
