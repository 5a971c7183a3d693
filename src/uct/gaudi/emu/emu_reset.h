/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_RESET_H_
#define GAUDI_EMU_RESET_H_

#include "emu_state.h"

/*
 * Device resets as the driver does them by default (docs/emulator.md §8a,
 * driver-abi.md §10.1): a CS timeout or an error that needs a reset calls
 * hl_device_cond_reset. An owner that registered an eventfd is notified
 * and has the release watchdog to close the device; any other, or one
 * that lets the watchdog pass, gets a hard reset, and a process that still
 * holds the device a second later is killed (SIGKILL), as
 * device_kill_open_processes does.
 */

/* hl_device_cond_reset for device @dev: @events go to the registered
 * eventfds (DEVICE_RESET is added); @tdr: the cause is a CS timeout, which
 * with GAUDI_EMU_LOCKUP_NEEDS_RESET (reset_on_lockup=0) only marks the
 * device as needing a reset */
void emu_reset_cond(int dev, emu_shm_dev_t *sdev, uint64_t events, int tdr);

/* A hard reset of @sdev begins; section lock held */
void emu_reset_hard_locked(emu_shm_dev_t *sdev, uint64_t now);

/* The release watchdog is running on @sdev (WAIT_CS answers EBUSY: the
 * user must close the device, hl_wait_ioctl) */
int emu_reset_watchdog_active(emu_shm_dev_t *sdev);

/* Stop the reset watchers of this process (gaudi_emu_fini) */
void emu_reset_fini(void);

/* Forget, in a forked child, the watchers (they are the parent's) */
void emu_reset_atfork_install(void);

#endif
