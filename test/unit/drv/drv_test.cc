/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "drv_test.h"

#include <dlfcn.h>

#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mutex>


namespace gaudi_drv_test {

/* What log_capture caught; the lock: the async threads log too */
static std::vector<std::string> captured;
static std::mutex               captured_lock;

/* Live log_captures: nested ones share the one handler (two handlers would
 * catch every message twice) */
static unsigned                 capture_depth = 0;

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    return remove(path);
}

state_dir::state_dir()
{
    char tmpl[] = "/tmp/gaudi-base-test.XXXXXX";

    if (mkdtemp(tmpl) == NULL) {
        ADD_FAILURE() << "mkdtemp: " << strerror(errno);
    }
    m_path = tmpl;
}

state_dir::~state_dir()
{
    nftw(m_path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

pid_t start_child(const std::function<void()> &fn, unsigned timeout_sec)
{
    pid_t pid;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid != 0) {
        return pid;
    }

    alarm(timeout_sec);   /* a hang becomes a SIGALRM crash */
    fn();
    fflush(stdout);
    fflush(stderr);
    _exit(::testing::Test::HasFailure() ? 1 : 0);
}

void wait_child(pid_t pid, const char *what)
{
    int status;

    ASSERT_GT(pid, 0) << what << ": fork failed";
    ASSERT_EQ(pid, waitpid(pid, &status, 0)) << what;
    if (WIFSIGNALED(status)) {
        ADD_FAILURE() << what << ": child killed by signal "
                      << WTERMSIG(status) << " (" << strsignal(WTERMSIG(status))
                      << ")";
    } else {
        EXPECT_EQ(0, WEXITSTATUS(status))
                << what << ": child reported failures (see above)";
    }
}

void run_in_child(const std::function<void()> &fn, unsigned timeout_sec)
{
    wait_child(start_child(fn, timeout_sec), "child");
}

void set_emu_env(unsigned num_devices, const state_dir &dir, const char *asic,
                 const char *abi, const char *exec)
{
    setenv("UCX_GAUDI_EMU_DEVICES", std::to_string(num_devices).c_str(), 1);
    setenv("UCX_GAUDI_EMU_STATE_DIR", dir.path(), 1);
    setenv("UCX_GAUDI_EMU_ASIC", asic, 1);
    setenv("UCX_GAUDI_EMU_ABI", abi, 1);
    setenv("UCX_GAUDI_EMU_EXEC", exec, 1);
    /* the ASIC's real HBM and DRAM page (Gaudi2: 80 GiB in 640 MiB pages) */
    unsetenv("UCX_GAUDI_EMU_HBM_SIZE");
    /* the device assignment must not depend on the launcher of the tests */
    for (const char **var = uct_gaudi_assign_rank_vars; *var != NULL; ++var) {
        unsetenv(*var);
    }
    unsetenv("HLS_MODULE_ID");
    unsetenv("HABANA_VISIBLE_MODULES");
}

static ucs_log_func_rc_t
log_handler(const char *file, unsigned line, const char *function,
            ucs_log_level_t level, const ucs_log_component_config_t *comp_conf,
            const char *message, va_list ap)
{
    char buf[1024];
    va_list aq;

    if (level <= UCS_LOG_LEVEL_WARN) {
        va_copy(aq, ap);
        vsnprintf(buf, sizeof(buf), message, aq);
        va_end(aq);
        std::lock_guard<std::mutex> guard(captured_lock);
        captured.push_back(buf);
    }

    return UCS_LOG_FUNC_RC_CONTINUE;
}

log_capture::log_capture()
{
    /* only the outermost capture starts empty: a nested one (a helper's,
     * inside a test's) must not wipe what the test has caught so far; its
     * counts then include the outer messages, which can only fail louder */
    if (capture_depth++ == 0) {
        clear();
        ucs_log_push_handler(log_handler);
    }
}

log_capture::~log_capture()
{
    if (--capture_depth == 0) {
        ucs_log_pop_handler();
    }
}

std::vector<std::string> log_capture::messages() const
{
    std::lock_guard<std::mutex> guard(captured_lock);

    return captured;
}

unsigned log_capture::count(const std::string &text) const
{
    std::lock_guard<std::mutex> guard(captured_lock);
    unsigned n = 0;

    for (const std::string &msg : captured) {
        n += (msg.find(text) != std::string::npos);
    }
    return n;
}

void log_capture::clear()
{
    std::lock_guard<std::mutex> guard(captured_lock);

    captured.clear();
}

uct_gaudi_dev_t *acquire_device()
{
    uct_gaudi_dev_t *dev = NULL;
    ucs_status_t status;

    status = uct_gaudi_lib_init();
    EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
    status = uct_gaudi_own_acquire(&dev);
    EXPECT_EQ(UCS_OK, status) << ucs_status_string(status);
    return (status == UCS_OK) ? dev : NULL;
}

void expect_acquire_fails(ucs_status_t status,
                          const std::vector<std::string> &messages)
{
    log_capture log;
    uct_gaudi_dev_t *dev;

    ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
    EXPECT_EQ(status, uct_gaudi_own_acquire(&dev));
    for (const std::string &message : messages) {
        EXPECT_EQ(1u, log.count(message)) << message;
    }
}

uct_gaudi_dev_t *acquire_adopted(unsigned index, int *app_fd)
{
    uct_gaudi_dev_t *dev;

    if (uct_gaudi_lib_init() != UCS_OK) {
        ADD_FAILURE() << "the driver library's init failed";
        return NULL;
    }
    *app_fd = uct_gaudi_seam_ops->open(
            uct_gaudi_lib_device(index)->compute_path, O_RDWR | O_CLOEXEC);
    if (*app_fd < 0) {
        ADD_FAILURE() << "open: " << strerror(errno);
        return NULL;
    }

    dev = acquire_device();
    if (dev == NULL) {
        return NULL;
    }
    EXPECT_EQ(*app_fd, dev->fd);
    EXPECT_EQ(index, dev->info->index);
    return dev;
}

emu_node::emu_node(unsigned num_devices, const char *asic, const char *abi,
                   const char *exec) :
    m_num_devices(num_devices), m_asic(asic), m_abi(abi), m_exec(exec)
{
}

emu_node &emu_node::env(const char *name, const std::string &value)
{
    m_env.emplace_back(name, value);
    return *this;
}

void emu_node::set_env(const env_vars &extra) const
{
    set_emu_env(m_num_devices, m_dir, m_asic, m_abi, m_exec);
    for (const env_vars *vars : {&m_env, &extra}) {
        for (const auto &var : *vars) {
            setenv(var.first.c_str(), var.second.c_str(), 1);
        }
    }
}

pid_t emu_node::start(const env_vars &extra, const std::function<void()> &fn,
                      unsigned timeout_sec) const
{
    return start_child([&]() {
        set_env(extra);
        fn();
    }, timeout_sec);
}

void emu_node::run(const env_vars &extra, const std::function<void()> &fn,
                   unsigned timeout_sec) const
{
    wait_child(start(extra, fn, timeout_sec), "child");
}

void emu_node::run(const std::function<void()> &fn, unsigned timeout_sec) const
{
    run(env_vars(), fn, timeout_sec);
}

void emu_node::run_with_device(const env_vars &extra, const dev_fn &fn,
                               unsigned timeout_sec) const
{
    run(extra, [&]() {
        log_capture log;
        uct_gaudi_dev_t *dev;

        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        fn(dev, log);
        if (!::testing::Test::HasFatalFailure()) {
            uct_gaudi_own_release(dev);
        }
    }, timeout_sec);
}

void emu_node::run_with_device(const dev_fn &fn, unsigned timeout_sec) const
{
    run_with_device(env_vars(), fn, timeout_sec);
}

device_holder::device_holder(const emu_node &node, const env_vars &extra,
                             const std::function<void(uct_gaudi_dev_t*)> &check,
                             const char *what) :
    m_what(what)
{
    char c;

    if (pipe(m_owned) != 0) {
        ADD_FAILURE() << "pipe: " << strerror(errno);
        return;
    }

    m_pid = node.start(extra, [&]() {
        uct_gaudi_dev_t *dev;

        close(m_owned[0]);
        dev = acquire_device();
        EXPECT_TRUE(dev != NULL) << m_what;
        if (dev != NULL) {
            check(dev);
        }
        /* said after a failure too: the test fails instead of waiting */
        EXPECT_EQ(1, write(m_owned[1], "o", 1));
        if (dev != NULL) {
            m_release.wait();
            uct_gaudi_own_release(dev);
        }
    });

    /* only the child writes: a holder that died without a word is EOF */
    close(m_owned[1]);
    m_owned[1] = -1;
    EXPECT_EQ(1, read(m_owned[0], &c, 1)) << m_what << " holds no device";
}

device_holder::~device_holder()
{
    release();
    if (m_owned[0] >= 0) {
        close(m_owned[0]);
    }
}

void device_holder::release()
{
    if (m_pid == -1) {
        return;
    }

    m_release.signal();
    wait_child(m_pid, m_what);
    m_pid = -1;
}

bool emu_stats(gaudi_emu_stats_t *stats)
{
    gaudi_emu_get_stats_func_t get_stats;
    void *lib;
    int ret;

    /* by its SONAME, matched among the loaded objects without a search:
     * under ASan dlopen()'s caller is libasan, whose search path lacks our
     * rpath */
    lib = dlopen("libgaudi_emu.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL) {
        ADD_FAILURE() << "the emulator is not loaded";
        return false;
    }

    get_stats = (gaudi_emu_get_stats_func_t)dlsym(lib,
                                                  GAUDI_EMU_STATS_SYMBOL);
    ret       = (get_stats != NULL) ? get_stats(stats) : -1;
    dlclose(lib);
    EXPECT_EQ(0, ret);
    return ret == 0;
}

barrier::barrier()
{
    if (pipe(m_fds) != 0) {
        ADD_FAILURE() << "pipe: " << strerror(errno);
    }
}

barrier::~barrier()
{
    close(m_fds[0]);
    close(m_fds[1]);
}

void barrier::signal()
{
    char c = 1;

    ASSERT_EQ(1, write(m_fds[1], &c, 1));
}

void barrier::wait()
{
    char c;

    ASSERT_EQ(1, read(m_fds[0], &c, 1));
}

} /* namespace gaudi_drv_test */
