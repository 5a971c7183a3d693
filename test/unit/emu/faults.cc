/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_cs_test.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/eventfd.h>

/* Fault injection: spec parsing and each fault kind */

class emu_faults : public emu_cs_test {
protected:
    uint32_t nop_cb()
    {
        struct uct_gaudi_pkt_lin_dma pkt = lin_dma(0, 0, 0, false, gaudi1());

        return write_cb(&pkt, sizeof(pkt));
    }

    int timeout_child(bool eventfd, bool close_on_event);

    /* With fault "cs_timeout:2": two CSs, the first completes, the second
     * times out (ETIMEDOUT); @a seq1_p: the first one's sequence */
    void second_cs_times_out(uint64_t *seq1_p)
    {
        uint64_t seq2;
        int err;

        ASSERT_EQ(0, submit_raw(nop_cb(), seq1_p));
        ASSERT_EQ(0, submit_raw(nop_cb(), &seq2));
        EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(*seq1_p));
        EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_TIMEDOUT, wait_done(seq2, &err));
        EXPECT_EQ(ETIMEDOUT, err);
    }

    /* With fault "cs_timeout:2": device 0 open and registered for its
     * events (*efd_p), and second_cs_times_out(); ASSERT-style */
    void time_out_with_eventfd(int *efd_p, uint64_t *seq1_p)
    {
        open_ok();
        *efd_p = register_eventfd(m_fd);
        ASSERT_GE(*efd_p, 0);
        second_cs_times_out(seq1_p);
    }

    /* Device 0's events, once @a efd said there are some (read and
     * cleared) */
    uint64_t poll_events(int efd)
    {
        struct pollfd pfd = {efd, POLLIN, 0};
        uint64_t events   = 0;

        EXPECT_EQ(1, poll(&pfd, 1, 1000));
        EXPECT_EQ(0, info(m_fd, HL_INFO_GET_EVENTS, &events, sizeof(events)));
        return events;
    }

    void expect_hard_resets(int fd, unsigned count)
    {
        struct hl_info_reset_count rc;

        EXPECT_EQ(0, info(fd, HL_INFO_RESET_COUNT, &rc, sizeof(rc)));
        EXPECT_EQ(count, rc.hard_reset_cnt);
    }

    /* Closing device 0 completes its reset: opened again, it is
     * operational, after one hard reset */
    void expect_reset_done_at_close()
    {
        EXPECT_EQ(0, m_ops->close(m_fd));
        m_fd = open_node(0, false);
        ASSERT_GE(m_fd, 0);
        EXPECT_EQ((uint32_t)HL_DEVICE_STATUS_OPERATIONAL, dev_status(m_fd));
        expect_hard_resets(m_fd, 1);
    }

    std::string sysfs_status(int dev)
    {
        char path[64], buf[64];

        snprintf(path, sizeof(path), UCT_GAUDI_SYSFS_DRM_DIR "/status", dev);
        return (m_ops->read_attr(path, buf, sizeof(buf)) > 0) ? buf : "";
    }
};

TEST_F(emu_faults, malformed_specs) {
    const char *bad[] = {
        "bogus", "ioctl:memory:3", "ioctl:memory:0:ENOMEM",
        "ioctl:nosuch:1:ENOMEM", "ioctl:memory:x:ENOMEM",
        "ioctl:memory:1:ENOSUCH", "cs_timeout", "cs_timeout:", "reset:-1",
        "cs_abort:1:2", "ioctl:cs:1:EIO,,", ",", "fail:cs:1+x:EIO"
    };

    for (const char *spec : bad) {
        m_cfg.faults = spec;
        EXPECT_EQ(-EINVAL, init()) << spec;
        EXPECT_NE(std::string::npos,
                  std::string(gaudi_emu_last_error()).find("fault spec"))
                << spec << ": " << gaudi_emu_last_error();
    }

    m_cfg.faults = "ioctl:memory:3:ENOMEM,fail:open:2+:11,cs_timeout:4,"
                   "cs_abort:5,reset:100";
    EXPECT_EQ(0, init()) << gaudi_emu_last_error();
}

TEST_F(emu_faults, nth_memory_ioctl) {
    m_cfg.faults = "ioctl:memory:3:ENOMEM";
    open_ok();                              /* MAP of the CB: memory #1 */

    uint64_t h;
    EXPECT_EQ(0, alloc(m_fd, 1 << 20, &h));         /* #2 */
    EXPECT_EQ(ENOMEM, alloc(m_fd, 1 << 20, &h));    /* #3 */
    EXPECT_EQ(0, alloc(m_fd, 1 << 20, &h));         /* #4 */
}

/* gaudi_emu_set_faults: armed in the middle of a run, counted from then */
TEST_F(emu_faults, set_faults_midway) {
    gaudi_emu_stats_t stats;
    uint64_t h;

    m_cfg.no_kill = 1;  /* this test process holds the device in reset */
    open_ok();
    EXPECT_EQ(0, alloc(m_fd, 1 << 20, &h));
    EXPECT_EQ(0, alloc(m_fd, 1 << 20, &h));

    /* counted from the call: the 2nd MEMORY ioctl after it fails */
    ASSERT_EQ(0, gaudi_emu_set_faults("fail:memory:2:ENOMEM"));
    EXPECT_EQ(0, alloc(m_fd, 1 << 20, &h));
    EXPECT_EQ(ENOMEM, alloc(m_fd, 1 << 20, &h));
    EXPECT_EQ(0, alloc(m_fd, 1 << 20, &h));
    ASSERT_EQ(0, gaudi_emu_get_stats(&stats));
    EXPECT_EQ(1u, stats.faults_fired);

    /* a malformed spec is refused and the one in force stays */
    EXPECT_EQ(-EINVAL, gaudi_emu_set_faults("fail:memory:1"));
    EXPECT_NE(std::string::npos,
              std::string(gaudi_emu_last_error()).find("fault spec"));
    ASSERT_EQ(0, gaudi_emu_get_stats(&stats));
    EXPECT_EQ(1u, stats.faults_fired);

    /* disarmed: nothing fails any more, the count restarts */
    ASSERT_EQ(0, gaudi_emu_set_faults(NULL));
    EXPECT_EQ(0, alloc(m_fd, 1 << 20, &h));
    EXPECT_EQ(0, alloc(m_fd, 1 << 20, &h));
    ASSERT_EQ(0, gaudi_emu_get_stats(&stats));
    EXPECT_EQ(0u, stats.faults_fired);

    /* a reset armed midway hits the next ioctl */
    ASSERT_EQ(0, gaudi_emu_set_faults("reset:1"));
    EXPECT_EQ(0, alloc(m_fd, 1 << 20, &h));
    EXPECT_EQ(EBUSY, alloc(m_fd, 1 << 20, &h));
    EXPECT_EQ("In reset\n", sysfs_status(0));
    ASSERT_EQ(0, gaudi_emu_get_stats(&stats));
    EXPECT_EQ(1u, stats.faults_fired);
}

TEST_F(emu_faults, open_and_repeat) {
    m_cfg.faults = "fail:open:2+:EAGAIN";
    init_ok();

    int fd = open_node(0, true);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(-1, open_node(0, false));
    EXPECT_EQ(EAGAIN, errno);
    EXPECT_EQ(-1, open_node(1, true));
    EXPECT_EQ(EAGAIN, errno);
    m_ops->close(fd);
}

TEST_F(emu_faults, each_ioctl_kind) {
    m_cfg.faults = "fail:info:1:EIO,fail:cb:1:ENOMEM,fail:cs:1:EAGAIN,"
                   "fail:wait_cs:1:EINTR,fail:mmap:1:ENODEV,fail:any:9:EFAULT";
    init_ok();
    m_fd = open_node(0, false);
    ASSERT_GE(m_fd, 0);

    EXPECT_EQ(EIO, info(m_fd, HL_INFO_DEVICE_STATUS, &m_kcb, 8));   /* 1 */
    EXPECT_EQ(HL_DEVICE_STATUS_OPERATIONAL, dev_status(m_fd));     /* 2 */

    union hl_cb_args cb = cb_args(HL_CB_OP_CREATE, 4096);
    EXPECT_EQ(ENOMEM, ioctl_err(m_fd, UCT_GAUDI_IOC_CB, &cb));      /* 3 */
    ASSERT_EQ(0, ioctl_err(m_fd, UCT_GAUDI_IOC_CB, &cb));           /* 4 */
    uint64_t handle = cb.out.cb_handle;

    EXPECT_EQ(MAP_FAILED, m_ops->mmap(NULL, 4096, PROT_READ, MAP_SHARED,
                                      m_fd, handle));
    EXPECT_EQ(ENODEV, errno);
    void *p = m_ops->mmap(NULL, 4096, PROT_READ, MAP_SHARED, m_fd, handle);
    EXPECT_NE(MAP_FAILED, p);

    ASSERT_EQ(0, posix_memalign(&m_cb, 4096, CB_SIZE));
    ASSERT_EQ(0, map_host(m_fd, m_cb, CB_SIZE, &m_cb_va));          /* 5 */
    uint64_t seq;
    EXPECT_EQ(EAGAIN, submit_raw(nop_cb(), &seq));                  /* 6 */
    ASSERT_EQ(0, submit_raw(nop_cb(), &seq));                       /* 7 */
    struct hl_wait_cs_out out;
    EXPECT_EQ(EINTR, wait(seq, 1000000, &out));                     /* 8 */
    EXPECT_EQ(EFAULT, wait(seq, 1000000, &out));                    /* 9 */
    EXPECT_EQ(0, wait(seq, 1000000, &out));                         /* 10 */
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, out.status);
    m_ops->munmap(p, 4096);
}

/* The driver's default (reset_on_lockup): a CS timeout resets the device.
 * An owner registered for events gets them and has the release watchdog:
 * the device looks operational, but waits are refused (EBUSY) and nothing
 * runs any more; closing it within the watchdog completes the reset */
TEST_F(emu_faults, cs_timeout) {
    uint64_t seq1, seq3;
    int efd = -1;

    m_cfg.faults = "cs_timeout:2";
    time_out_with_eventfd(&efd, &seq1);
    ASSERT_FALSE(HasFatalFailure());

    /* the notifier fired: a reset */
    uint64_t events = poll_events(efd);
    EXPECT_TRUE(events & HL_NOTIFIER_EVENT_CS_TIMEOUT);
    EXPECT_TRUE(events & HL_NOTIFIER_EVENT_DEVICE_RESET);
    EXPECT_EQ(0, info(m_fd, HL_INFO_GET_EVENTS, &events, sizeof(events)));
    EXPECT_EQ(0u, events);              /* read and clear */

    /* the release watchdog runs: the status says operational, a CS is
     * taken, but the engines are hung and every wait is refused */
    EXPECT_EQ((uint32_t)HL_DEVICE_STATUS_OPERATIONAL, dev_status(m_fd));
    EXPECT_EQ("Operational\n", sysfs_status(0));
    struct hl_wait_cs_out out;
    EXPECT_EQ(EBUSY, wait(seq1, 0, &out));
    EXPECT_EQ(0, submit_raw(nop_cb(), &seq3));
    EXPECT_EQ(EBUSY, wait(seq3, 0, &out));

    /* closing the context within the watchdog completes the reset */
    expect_reset_done_at_close();
    close(efd);
}

/* reset_on_lockup=0, the driver's non-default mode: the device only needs
 * a reset, every call but a few INFO ops is refused, nobody is killed, and
 * closing the context completes the reset */
TEST_F(emu_faults, cs_timeout_needs_reset) {
    uint64_t seq1, seq3;
    int efd = -1;

    m_cfg.faults = "cs_timeout:2";
    m_cfg.lockup = GAUDI_EMU_LOCKUP_NEEDS_RESET;
    time_out_with_eventfd(&efd, &seq1);
    ASSERT_FALSE(HasFatalFailure());

    /* the device needs a reset: most ioctls are EBUSY */
    EXPECT_EQ((uint32_t)HL_DEVICE_STATUS_NEEDS_RESET, dev_status(m_fd));
    EXPECT_EQ("Needs reset\n", sysfs_status(0));
    EXPECT_EQ(EBUSY, submit_raw(nop_cb(), &seq3));
    uint64_t h;
    EXPECT_EQ(EBUSY, alloc(m_fd, 1 << 20, &h));
    struct hl_info_clk_rate clk;
    EXPECT_EQ(EBUSY, info(m_fd, HL_INFO_CLK_RATE, &clk, sizeof(clk)));

    /* the notifier fired, without a reset */
    uint64_t events = poll_events(efd);
    EXPECT_TRUE(events & HL_NOTIFIER_EVENT_CS_TIMEOUT);
    EXPECT_FALSE(events & HL_NOTIFIER_EVENT_DEVICE_RESET);

    /* closing the context completes the reset */
    expect_reset_done_at_close();
    close(efd);
}

/* What happens to a process that holds device 0 when its CS times out,
 * run in a forked child; returns its wait status. @eventfd: it registers
 * for events first; @close_on_event: it closes the device when told */
int emu_faults::timeout_child(bool eventfd, bool close_on_event)
{
    int closed[2], go_on[2];
    pid_t pid;
    int status;
    char c;

    EXPECT_EQ(0, pipe(closed));
    EXPECT_EQ(0, pipe(go_on));
    pid = fork();
    if (pid == 0) {
        /* the child's own context; gtest assertions do not reach the
         * parent: every failed step exits with its own code */
        uint64_t seq, events = 0;
        int efd = -1, err;

        m_fd = open_node(0, false);
        if ((m_fd < 0) || (posix_memalign(&m_cb, 4096, CB_SIZE) != 0) ||
            (map_host(m_fd, m_cb, CB_SIZE, &m_cb_va) != 0)) {
            _exit(10);
        }
        if (eventfd && ((efd = register_eventfd(m_fd)) < 0)) {
            _exit(11);
        }
        if ((gaudi_emu_set_faults("cs_timeout:1") != 0) ||
            (submit_raw(nop_cb(), &seq) != 0) ||
            (wait_done(seq, &err) != HL_WAIT_CS_STATUS_TIMEDOUT)) {
            _exit(12);
        }
        if (close_on_event) {
            struct pollfd pfd = {efd, POLLIN, 0};

            if ((poll(&pfd, 1, 10000) != 1) ||
                (info(m_fd, HL_INFO_GET_EVENTS, &events, sizeof(events)) !=
                 0) || !(events & HL_NOTIFIER_EVENT_DEVICE_RESET)) {
                _exit(13);
            }
            m_ops->close(m_fd);
            /* closed: the parent sees the reset end, and lets it go */
            close(go_on[1]);
            if ((write(closed[1], "c", 1) != 1) ||
                (read(go_on[0], &c, 1) != 0)) {
                _exit(14);
            }
            _exit(0);
        }
        sleep(30);      /* killed meanwhile */
        _exit(0);
    }

    close(closed[1]);
    close(go_on[0]);
    if (close_on_event && (read(closed[0], &c, 1) == 1)) {
        /* once the reset is over, nothing kills any more */
        int cfd = open_node(0, true);
        EXPECT_GE(cfd, 0);
        for (int i = 0; (i < 1000) &&
             (dev_status(cfd) != HL_DEVICE_STATUS_OPERATIONAL); ++i) {
            usleep(10000);
        }
        EXPECT_EQ((uint32_t)HL_DEVICE_STATUS_OPERATIONAL, dev_status(cfd));
        expect_hard_resets(cfd, 1);
        m_ops->close(cfd);
    }
    close(go_on[1]);
    EXPECT_EQ(pid, waitpid(pid, &status, 0));
    close(closed[0]);
    return status;
}

/* No eventfd: hl_device_reset(HARD) at once, and the process that still
 * holds the device a second later is killed (device_kill_open_processes);
 * the next open finds the reset done (after asking to retry) */
TEST_F(emu_faults, reset_kills_a_process_without_eventfd) {
    init_ok();

    int status = timeout_child(false, false);
    EXPECT_TRUE(WIFSIGNALED(status) && (WTERMSIG(status) == SIGKILL))
            << std::hex << status;

    int fd = open_node(0, false);
    if (fd < 0) {
        EXPECT_EQ(EAGAIN, errno);
        fd = open_node(0, false);
    }
    ASSERT_GE(fd, 0) << strerror(errno);
    EXPECT_EQ((uint32_t)HL_DEVICE_STATUS_OPERATIONAL, dev_status(fd));
    expect_hard_resets(fd, 1);
    m_ops->close(fd);
}

/* With an eventfd, a process that keeps the device past the release
 * watchdog is killed too */
TEST_F(emu_faults, watchdog_kills_a_process_that_keeps_the_device) {
    m_cfg.watchdog = 0.2;
    init_ok();

    int status = timeout_child(true, false);
    EXPECT_TRUE(WIFSIGNALED(status) && (WTERMSIG(status) == SIGKILL))
            << std::hex << status;
}

/* ... and one that closes the device when told is not */
TEST_F(emu_faults, watchdog_spares_a_process_that_releases) {
    m_cfg.watchdog = 0.2;
    init_ok();

    int status = timeout_child(true, true);
    EXPECT_TRUE(WIFEXITED(status) && (WEXITSTATUS(status) == 0))
            << std::hex << status;
    int fd = open_node(0, false);
    ASSERT_GE(fd, 0) << strerror(errno);
    m_ops->close(fd);
}

/* The no-kill knob: the reset waits for the process instead */
TEST_F(emu_faults, no_kill_waits_for_the_holder) {
    m_cfg.no_kill = 1;
    init_ok();

    pid_t pid = fork();
    if (pid == 0) {
        uint64_t seq;
        int err;

        m_fd = open_node(0, false);
        if ((m_fd < 0) || (posix_memalign(&m_cb, 4096, CB_SIZE) != 0) ||
            (map_host(m_fd, m_cb, CB_SIZE, &m_cb_va) != 0) ||
            (gaudi_emu_set_faults("cs_timeout:1") != 0) ||
            (submit_raw(nop_cb(), &seq) != 0) ||
            (wait_done(seq, &err) != HL_WAIT_CS_STATUS_TIMEDOUT)) {
            _exit(10);
        }
        /* past the second device_kill_open_processes gives */
        usleep(1500000);
        if (dev_status(m_fd) != HL_DEVICE_STATUS_IN_RESET) {
            _exit(11);
        }
        m_ops->close(m_fd);
        _exit(0);
    }

    int status;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    EXPECT_TRUE(WIFEXITED(status) && (WEXITSTATUS(status) == 0))
            << std::hex << status;
}

TEST_F(emu_faults, cs_abort) {
    m_cfg.faults = "cs_abort:1";
    open_ok();

    uint64_t seq;
    int err;
    ASSERT_EQ(0, submit_raw(nop_cb(), &seq));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_ABORTED, wait_done(seq, &err));
    EXPECT_EQ(EIO, err);
    EXPECT_EQ((uint32_t)HL_DEVICE_STATUS_OPERATIONAL, dev_status(m_fd));
    ASSERT_EQ(0, submit_raw(nop_cb(), &seq));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
}

/* The driver answers WAIT_CS (or CS) with EIO, ENODEV or ETIMEDOUT only
 * when the device was reset, removed or timed out: an injected one stops
 * the engines too, so the CS queued behind it never writes the host
 * memory the caller gives up on when told the device failed */
TEST_F(emu_faults, injected_fatal_wait_halts_the_device) {
    m_cfg.faults  = "fail:wait_cs:1:EIO";
    m_cfg.no_kill = 1;  /* this test process holds the device in reset */
    m_cfg.latency = 0.2;
    open_ok();

    void *host = NULL;
    uint64_t host_va, seq;
    ASSERT_EQ(0, posix_memalign(&host, 4096, 4096));
    memset(host, 0x5a, 4096);
    ASSERT_EQ(0, map_host(m_fd, host, 4096, &host_va));
    uint64_t dev = dev_buffer(4096);
    /* device memory (zeros) to the host buffer, 0.2 s of modelled time */
    ASSERT_EQ(0, dma(dev, host_va, 4096, &seq));
    struct hl_wait_cs_out out;
    EXPECT_EQ(EIO, wait(seq, 0, &out));
    /* the driver resets (no eventfd registered: at once) */
    EXPECT_EQ((uint32_t)HL_DEVICE_STATUS_IN_RESET, dev_status(m_fd));

    usleep(500000);   /* past the CS's modelled time and the worker's grace */
    for (unsigned i = 0; i < 4096; ++i) {
        ASSERT_EQ(0x5a, ((uint8_t*)host)[i]) << i;
    }
    EXPECT_EQ(EBUSY, wait(seq, 0, &out));

    EXPECT_EQ(0, m_ops->close(m_fd));
    m_fd = -1;
    /* the reset is over; a Gaudi2 resets after the release, as always */
    EXPECT_EQ("In reset after device release\n", sysfs_status(0));
    free(host);
}

TEST_F(emu_faults, reset_aborts_in_flight) {
    /* ioctl #1 is the CB MAP of open_ok(), #2 the CS, #3 resets */
    m_cfg.faults  = "reset:3";
    m_cfg.latency = 0.5;
    m_cfg.no_kill = 1;  /* this test process holds the device in reset */
    open_ok();

    uint64_t seq;
    ASSERT_EQ(0, submit_raw(nop_cb(), &seq));
    struct hl_wait_cs_out out;
    EXPECT_EQ(0, wait(seq, 0, &out));                   /* #3 */
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_BUSY, out.status);

    EXPECT_EQ((uint32_t)HL_DEVICE_STATUS_IN_RESET, dev_status(m_fd));
    EXPECT_EQ("In reset\n", sysfs_status(0));
    /* hl_wait_ioctl and hl_cb_ioctl refuse while the device is not
     * operational: the reset shows as EBUSY, not as an aborted CS */
    EXPECT_EQ(EBUSY, wait(seq, 0, &out));
    union hl_cb_args cb = cb_args(HL_CB_OP_CREATE, 4096);
    EXPECT_EQ(EBUSY, ioctl_err(m_fd, UCT_GAUDI_IOC_CB, &cb));
    uint64_t h;
    EXPECT_EQ(EBUSY, alloc(m_fd, 1 << 20, &h));

    EXPECT_EQ(0, m_ops->close(m_fd));
    m_fd = -1;
    /* the reset is over; a Gaudi2 resets after the release, as always */
    EXPECT_EQ("In reset after device release\n", sysfs_status(0));
}

TEST_F(emu_faults, reset_without_owner) {
    m_cfg.faults = "reset:1";
    init_ok();

    int cfd = open_node(0, true);
    ASSERT_GE(cfd, 0);
    EXPECT_EQ((uint32_t)HL_DEVICE_STATUS_OPERATIONAL, dev_status(cfd));
    EXPECT_EQ((uint32_t)HL_DEVICE_STATUS_IN_RESET, dev_status(cfd));

    /* nobody owns the device: the first open finishes the reset and asks
     * the caller to retry */
    EXPECT_EQ(-1, m_ops->open(node(0, false).c_str(), O_RDWR | O_CLOEXEC));
    EXPECT_EQ(EAGAIN, errno);
    EXPECT_EQ((uint32_t)HL_DEVICE_STATUS_OPERATIONAL, dev_status(cfd));
    int fd = open_node(0, false);
    EXPECT_GE(fd, 0);
    m_ops->close(fd);
    m_ops->close(cfd);
}

/* A Gaudi2 resets after every release (reset_upon_device_release): an open
 * meanwhile answers EAGAIN (hl_device_open) and the status says so; then
 * the device is free again. Gaudi1 does not, nor with the knob off. */
TEST_F(emu_faults, reset_after_release) {
    init_ok();

    int fd = open_node(0, false);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(0, m_ops->close(fd));

    EXPECT_EQ(-1, m_ops->open(node(0, false).c_str(), O_RDWR | O_CLOEXEC));
    EXPECT_EQ(EAGAIN, errno);
    int cfd = open_node(0, true);
    ASSERT_GE(cfd, 0);
    EXPECT_EQ((uint32_t)HL_DEVICE_STATUS_IN_RESET_AFTER_DEVICE_RELEASE,
              dev_status(cfd));
    EXPECT_EQ("In reset after device release\n", sysfs_status(0));
    /* the other device is not concerned */
    fd = m_ops->open(node(1, false).c_str(), O_RDWR | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    m_ops->close(fd);

    /* retried until the reset is over (open_node) */
    fd = open_node(0, false);
    ASSERT_GE(fd, 0) << strerror(errno);
    EXPECT_EQ((uint32_t)HL_DEVICE_STATUS_OPERATIONAL, dev_status(cfd));
    m_ops->close(fd);
    m_ops->close(cfd);
}

/* An owner that dies releases its file too: the next open finds the reset
 * after release */
TEST_F(emu_faults, reset_after_owner_death) {
    init_ok();

    pid_t pid = fork();
    if (pid == 0) {
        _exit((open_node(0, false) >= 0) ? 0 : 1);  /* dies holding it */
    }
    int status;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT_TRUE(WIFEXITED(status) && (WEXITSTATUS(status) == 0));

    EXPECT_EQ(-1, m_ops->open(node(0, false).c_str(), O_RDWR | O_CLOEXEC));
    EXPECT_EQ(EAGAIN, errno);
    int fd = open_node(0, false);
    ASSERT_GE(fd, 0) << strerror(errno);
    m_ops->close(fd);
}

TEST_F(emu_faults, no_reset_after_release_gaudi1_or_knob) {
    for (int gaudi1 = 0; gaudi1 < 2; ++gaudi1) {
        m_cfg.asic          = gaudi1 ? UCT_GAUDI_ASIC_GAUDI1 :
                                       UCT_GAUDI_ASIC_GAUDI2;
        m_cfg.abi           = gaudi1 ? UCT_GAUDI_ABI_MISC : UCT_GAUDI_ABI_DRM;
        m_cfg.release_reset = gaudi1 ? 0 : -1;
        init_ok();

        for (int i = 0; i < 2; ++i) {
            int fd = m_ops->open(node(0, false).c_str(), O_RDWR | O_CLOEXEC);
            EXPECT_GE(fd, 0) << gaudi1 << " " << i << " " << strerror(errno);
            m_ops->close(fd);
        }
        gaudi_emu_fini();
    }
}
