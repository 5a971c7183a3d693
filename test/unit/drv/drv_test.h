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
#include <utility>
#include <vector>


namespace gaudi_drv_test {

/* A fresh emulator state directory, removed at destruction */
class state_dir {
public:
    state_dir();
    state_dir(const state_dir &) = delete;   /* one removal per directory */
    state_dir &operator=(const state_dir &) = delete;
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


/* Messages logged at warning level or above while alive (from any thread:
 * the driver library and UCX log from their async threads too). A nested
 * one shares the outer one's list and leaves what it caught there */
class log_capture {
public:
    log_capture();
    ~log_capture();

    /* A copy: another thread may log meanwhile */
    std::vector<std::string> messages() const;

    /* Number of messages containing @a text */
    unsigned count(const std::string &text) const;

    void clear();
};


/* Blocking pipe-based handshake between forked processes */
class barrier {
public:
    barrier();
    ~barrier();
    void signal();   /* one token */
    void wait();     /* take one token */

private:
    int m_fds[2] = {-1, -1};
};


/* Init the driver library and acquire the device; ASSERT-style checks */
uct_gaudi_dev_t *acquire_device();


/* Init the driver library: acquiring the device fails with @a status, and
 * says each of @a messages once (in a log captured from before the init) */
void expect_acquire_fails(ucs_status_t status,
                          const std::vector<std::string> &messages);


/* Init the driver library, open the compute node of device @a index as an
 * application would (into *app_fd), and acquire: the device adopts that
 * fd. Returns the device, NULL (with a failure) otherwise */
uct_gaudi_dev_t *acquire_adopted(unsigned index, int *app_fd);


/* Environment variables (name, value), set in the order given */
typedef std::vector<std::pair<std::string, std::string>> env_vars;


/**
 * The emulated node of a test: a fresh emulator state directory (removed
 * with the object), set_emu_env()'s arguments and variables to set on top
 * of them. Its children all see the same node (and its state); @a extra:
 * what one child sets on top of the node's variables.
 */
class emu_node {
public:
    explicit emu_node(unsigned num_devices, const char *asic = "gaudi2",
                      const char *abi = "drm", const char *exec = "thread");
    emu_node(const emu_node &) = delete;
    emu_node &operator=(const emu_node &) = delete;

    const state_dir &dir() const { return m_dir; }

    /* One more variable of the node */
    emu_node &env(const char *name, const std::string &value);

    /* In a child: set_emu_env(), the node's variables, then @a extra */
    void set_env(const env_vars &extra = env_vars()) const;

    /* start_child() / run_in_child() with set_env() before @a fn */
    pid_t start(const env_vars &extra, const std::function<void()> &fn,
                unsigned timeout_sec = 300) const;
    void run(const env_vars &extra, const std::function<void()> &fn,
             unsigned timeout_sec = 300) const;
    void run(const std::function<void()> &fn,
             unsigned timeout_sec = 300) const;

    /**
     * run() with the device acquired for @a fn, which also gets a log
     * captured from before the library's init; the device is released after
     * @a fn (as the test would at its end) unless @a fn failed fatally.
     * @a fn must not release the device itself; a log_capture of its own
     * shares the one list with the one it gets (nested captures do not
     * clear it).
     */
    typedef std::function<void(uct_gaudi_dev_t*, log_capture&)> dev_fn;
    void run_with_device(const env_vars &extra, const dev_fn &fn,
                         unsigned timeout_sec = 300) const;
    void run_with_device(const dev_fn &fn, unsigned timeout_sec = 300) const;

private:
    state_dir  m_dir;
    unsigned   m_num_devices = 0;
    const char *m_asic       = NULL;
    const char *m_abi        = NULL;
    const char *m_exec       = NULL;
    env_vars   m_env;
};


/**
 * Another process of the test that holds a device of @a node (with @a extra
 * set; checked by @a check) until release() or the destruction. The
 * constructor returns once it holds the device, or failed to (then the test
 * fails, without waiting for ever).
 */
class device_holder {
public:
    device_holder(const emu_node &node, const env_vars &extra,
                  const std::function<void(uct_gaudi_dev_t*)> &check,
                  const char *what = "holder");
    device_holder(const device_holder &) = delete;
    device_holder &operator=(const device_holder &) = delete;
    ~device_holder();

    /* Let it release the device and exit; EXPECTs a clean exit */
    void release();

private:
    int        m_owned[2] = {-1, -1}; /* the holder's word: it holds it */
    barrier    m_release;
    const char *m_what    = NULL;
    pid_t      m_pid      = -1;
};


/* The emulator's accounting of this process (gaudi_emu_get_stats); false
 * (with a test failure) if the emulator is not loaded */
bool emu_stats(gaudi_emu_stats_t *stats);

} /* namespace gaudi_drv_test */

#endif
