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


/* Gaudi2/3 reset after every release (reset_upon_device_release): the
 * window in which an open answers EAGAIN. Nobody owns the device then, so
 * the hot paths of an owner never pay for the clock read */
static int emu_dev_in_release_reset(emu_shm_dev_t *sdev)
{
    uint64_t end = __atomic_load_n(&sdev->release_end_ns, __ATOMIC_ACQUIRE);

    return (end != 0) && (emu_now_ns() < end);
}

int emu_dev_operational(emu_shm_dev_t *sdev)
{
    return emu_dev_status(sdev) == HL_DEVICE_STATUS_OPERATIONAL;
}

uint32_t emu_dev_status(emu_shm_dev_t *sdev)
{
    uint32_t status = __atomic_load_n(&sdev->status, __ATOMIC_ACQUIRE);

    if ((status == HL_DEVICE_STATUS_OPERATIONAL) &&
        emu_dev_in_release_reset(sdev)) {
        return HL_DEVICE_STATUS_IN_RESET_AFTER_DEVICE_RELEASE;
    }

    return status;
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

void emu_dev_reset_complete_locked(emu_shm_dev_t *sdev, uint64_t now,
                                   int release)
{
    if ((sdev->status != HL_DEVICE_STATUS_OPERATIONAL) ||
        sdev->watchdog_active) {
        ++sdev->hard_reset_cnt;
        __atomic_store_n(&sdev->status, HL_DEVICE_STATUS_OPERATIONAL,
                         __ATOMIC_RELEASE);
    }

    sdev->watchdog_active = 0;
    sdev->kill_ns         = 0;
    if (release && (emu_g.release_reset_ns != 0)) {
        __atomic_store_n(&sdev->release_end_ns, now + emu_g.release_reset_ns,
                         __ATOMIC_RELEASE);
    }
}

/* Called with the section lock held */
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
    int release;

    /* the last owner's file is still open while a DMA-BUF it exported is
     * held (hl_release_dmabuf's fput): its context is active
     * (hl_device_open: EBUSY) */
    if (emu_dmabuf_holder(dev) != 0) {
        return -EBUSY;
    }

    emu_state_lock(sdev);

    if ((sdev->status != HL_DEVICE_STATUS_OPERATIONAL) ||
        sdev->watchdog_active) {
        /* a reset nobody completed (its process died, or it was started
         * without an owner): it completes now, this open is too early; a
         * dead owner's file was released, which resets a Gaudi2 too */
        release = (sdev->owner_ctx != 0);
        emu_dev_cleanup_owner(dev, sdev);
        emu_dev_reset_complete_locked(sdev, now, release);
        ret = -EAGAIN;
    } else if (sdev->owner_ctx != 0) {
        /* we hold the compute lock: the owner recorded died without a
         * release (killed, crashed). Its file's release is what resets
         * the device now, as after any release */
        emu_dev_cleanup_owner(dev, sdev);
        emu_dev_reset_complete_locked(sdev, now, 1);
        ret = (emu_g.release_reset_ns != 0) ? -EAGAIN : 0;
    } else if (emu_dev_in_release_reset(sdev)) {
        ret = -EAGAIN;  /* hl_device_open: IN_RESET_AFTER_DEVICE_RELEASE */
    } else {
        emu_dev_cleanup_owner(dev, sdev);
    }

    if (ret == 0) {
        __atomic_store_n(&sdev->release_end_ns, 0, __ATOMIC_RELEASE);
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
        /* hpriv_release: reset_upon_device_release, or the reset a reset
         * event waits for */
        emu_dev_reset_complete_locked(sdev, emu_now_ns(), 1);
    }
    emu_state_unlock(sdev);
}
