/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_TEST_DRV_TEST_H_
#define UCT_GAUDI_TEST_DRV_TEST_H_

/*
 * Helpers of the driver-library unit tests. The driver library initializes once per
 * process, and the emulator keeps process-wide state, so every test that
 * needs a configuration runs in a forked child (run_in_child) with its own
 * UCX_GAUDI_* environment and emulator state directory.
 */

#include <gtest/gtest.h>

/* gaudi_abi.h is C11; g++ spells the static assertion differently */
#ifndef _Static_assert
#  define _Static_assert static_assert
#endif

extern "C" {
#include <uct/gaudi/drv/gaudi_assign.h>
#include <uct/gaudi/drv/gaudi_lib.h>
#include <uct/gaudi/drv/gaudi_dma.h>
#include <uct/gaudi/drv/gaudi_health.h>
#include <uct/gaudi/drv/gaudi_ioctl.h>
#include <uct/gaudi/drv/gaudi_maptab.h>
#include <uct/gaudi/drv/gaudi_mem.h>
#include <uct/gaudi/drv/gaudi_own.h>
#include <uct/gaudi/drv/gaudi_pool.h>
#include <uct/gaudi/drv/gaudi_seam.h>
#include <uct/gaudi/seam/gaudi_emu.h>
#include <ucs/debug/log_def.h>
}

#include <functional>
#include <string>
#include <vector>


namespace gaudi_drv_test {

/* A fresh emulator state directory, removed at destruction */
class state_dir {
public:
    state_dir();
    ~state_dir();
    const char *path() const { return m_path.c_str(); }

private:
    std::string m_path;
};


/**
 * Run @a fn in a forked child (with a watchdog) and fail the calling test if
 * the child reports a gtest failure, crashes or hangs.
 */
void run_in_child(const std::function<void()> &fn, unsigned timeout_sec = 300);


/* Start @a fn in a forked child without waiting; returns its pid */
pid_t start_child(const std::function<void()> &fn, unsigned timeout_sec = 300);


/* Wait for a child of start_child(); EXPECTs a clean exit */
void wait_child(pid_t pid, const char *what);


/* Environment of an emulated node (call in the child, before init), without
 * any variable of the device assignment rules */
void set_emu_env(unsigned num_devices, const state_dir &dir,
                 const char *asic = "gaudi2", const char *abi = "drm",
                 const char *exec = "thread");


/* Messages logged at warning level or above while alive */
class log_capture {
public:
    log_capture();
    ~log_capture();

    const std::vector<std::string> &messages() const;

    /* Number of messages containing @a text */
    unsigned count(const std::string &text) const;

    void clear();
};


/* Init the driver library and acquire the device; ASSERT-style checks */
uct_gaudi_dev_t *acquire_device();


/* The emulator's accounting of this process (gaudi_emu_get_stats); false
 * (with a test failure) if the emulator is not loaded */
bool emu_stats(gaudi_emu_stats_t *stats);


/* Blocking pipe-based handshake between forked processes */
class barrier {
public:
    barrier();
    ~barrier();
    void signal();   /* one token */
    void wait();     /* take one token */

private:
    int m_fds[2];
};

} /* namespace gaudi_drv_test */

#endif
