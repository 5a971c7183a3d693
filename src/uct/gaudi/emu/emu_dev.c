/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_dev.h"
#include "emu_dmabuf.h"
#include "emu_global.h"
#include "emu_hbm.h"

#include <unistd.h>


int emu_dev_operational(emu_shm_dev_t *sdev)
{
    return emu_dev_status(sdev) == HL_DEVICE_STATUS_OPERATIONAL;
}

uint32_t emu_dev_status(emu_shm_dev_t *sdev)
{
    return __atomic_load_n(&sdev->status, __ATOMIC_ACQUIRE);
}

uint64_t emu_dev_epoch(emu_shm_dev_t *sdev)
{
    return __atomic_load_n(&sdev->reset_epoch, __ATOMIC_ACQUIRE);
}

void emu_dev_fail_locked(emu_shm_dev_t *sdev, uint32_t status)
{
    sdev->reset_ns = emu_now_ns();
    __atomic_add_fetch(&sdev->reset_epoch, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&sdev->status, status, __ATOMIC_RELEASE);
}

void emu_dev_fail(emu_shm_dev_t *sdev, uint32_t status)
{
    emu_state_lock(sdev);
    emu_dev_fail_locked(sdev, status);
    emu_state_unlock(sdev);
}

void emu_dev_reset_complete_locked(emu_shm_dev_t *sdev, uint64_t now)
{
    if ((sdev->status != HL_DEVICE_STATUS_OPERATIONAL) ||
        sdev->watchdog_active) {
        ++sdev->hard_reset_cnt;
        __atomic_store_n(&sdev->status, HL_DEVICE_STATUS_OPERATIONAL,
                         __ATOMIC_RELEASE);
    }

    sdev->watchdog_active = 0;
    sdev->kill_ns         = 0;
    (void)now;
}

void emu_dev_cleanup_owner(int dev, emu_shm_dev_t *sdev)
{
    /* memory behind a DMA-BUF someone still holds outlives its context */
    emu_dmabuf_protect(dev, sdev);
    emu_hbm_free_owner(dev, sdev, 0);
    if (!emu_g.asic->dram_vm) {
        sdev->dram_used = 0;    /* Gaudi1: user-reported accounting */
    }
    sdev->cs_queued    = 0;
    sdev->last_done_ns = 0;
    if (sdev->owner_ctx != 0) {
        sdev->last_open_period_ms = (emu_now_ns() - sdev->open_ns) /
                                    1000000ull;
    }
    sdev->owner_ctx     = 0;
    sdev->owner_pid     = 0;
    sdev->owner_eventfd = 0;
}

int emu_dev_acquire(int dev, emu_shm_dev_t *sdev, uint64_t ctx_id)
{
    uint64_t now = emu_now_ns();
    int ret      = 0;

    emu_state_lock(sdev);

    /* we hold the compute lock: whatever is recorded belongs to a context
     * that is gone */
    emu_dev_cleanup_owner(dev, sdev);

    if ((sdev->status != HL_DEVICE_STATUS_OPERATIONAL) ||
        sdev->watchdog_active) {
        /* a reset nobody completed (its process died, or it was started
         * without an owner): it completes now, this open is too early */
        emu_dev_reset_complete_locked(sdev, now);
        ret = -EAGAIN;
    } else {
        sdev->owner_ctx = ctx_id;
        sdev->owner_pid = getpid();
        sdev->open_ns   = now;
        ++sdev->open_counter;
    }

    emu_state_unlock(sdev);
    return ret;
}

void emu_dev_release(int dev, emu_shm_dev_t *sdev, uint64_t ctx_id)
{
    emu_state_lock(sdev);
    if (sdev->owner_ctx == ctx_id) {
        emu_dev_cleanup_owner(dev, sdev);
        /* hpriv_release: the reset a reset event waits for */
        emu_dev_reset_complete_locked(sdev, emu_now_ns());
    }
    emu_state_unlock(sdev);
}
