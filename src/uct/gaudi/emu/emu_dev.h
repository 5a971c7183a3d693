/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_DEV_H_
#define GAUDI_EMU_DEV_H_

#include "emu_state.h"

/* Device-wide state shared by all processes: status, reset, ownership */

int emu_dev_operational(emu_shm_dev_t *sdev);

uint32_t emu_dev_status(emu_shm_dev_t *sdev);

uint64_t emu_dev_epoch(emu_shm_dev_t *sdev);

/* Move the device out of service (IN_RESET, NEEDS_RESET...): in-flight CS
 * of every context abort. The reset completes when the owner closes. */
void emu_dev_fail(emu_shm_dev_t *sdev, uint32_t status);

/* emu_dev_fail() with the section lock held */
void emu_dev_fail_locked(emu_shm_dev_t *sdev, uint32_t status);

/* End a reset: the device is operational again; @release: an owner's
 * file was released (or its process died), which a Gaudi2/3 follows by the
 * reset after release (emu_g.release_reset_ns); section lock held */
void emu_dev_reset_complete_locked(emu_shm_dev_t *sdev, uint64_t now,
                                   int release);

/* Forget the owner and free what it left; section lock held */
void emu_dev_cleanup_owner(int dev, emu_shm_dev_t *sdev);

/* Take ownership of a device whose compute lock the caller holds; cleans up
 * after a dead previous owner. -EAGAIN while the device resets: a pending
 * reset had to be completed first, or the reset after the last release (or
 * death) of its owner runs (the caller retries, as after a real reset). */
int emu_dev_acquire(int dev, emu_shm_dev_t *sdev, uint64_t ctx_id);

/* Drop ownership; frees what the owner left, completes a pending reset and
 * starts the reset after release (hpriv_release) */
void emu_dev_release(int dev, emu_shm_dev_t *sdev, uint64_t ctx_id);

#endif
