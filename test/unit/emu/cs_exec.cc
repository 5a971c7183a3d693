/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_cs_test.h"

#include <sched.h>
#include <thread>
#include <time.h>

/*
 * Who executes a CS (docs/emulator.md, "Execution"): the thread that waits
 * for it, in submission order; the worker thread only what nobody polls for
 * GAUDI_EMU_EXEC_GRACE_NS. Order, abort, reset, timeout and the timing model
 * with and without a poller.
 */

class emu_cs_exec : public emu_cs_test {
protected:
    enum { SLOT = 64, BUF = 64 * 1024 };

    virtual void SetUp()
    {
        emu_cs_test::SetUp();
        for (int i = 0; i < 3; ++i) {
            m_host[i].assign(BUF, 0);
        }
    }

    static uint64_t now_ns()
    {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000000000ull + ts.tv_nsec;
    }

    /* Open the node and map three host buffers; buffer 0 gets a pattern */
    void open_buffers()
    {
        open_ok();
        for (int i = 0; i < 3; ++i) {
            ASSERT_EQ(0, map_host(m_fd, m_host[i].data(), BUF, &m_host_va[i]));
        }
        for (size_t i = 0; i < BUF; ++i) {
            m_host[0][i] = (uint8_t)(i * 7 + 3);
        }
    }

    /* One LIN_DMA in CB slot @slot: every CS queued at once needs its own
     * packets, since a user CB is read when the CS executes */
    int copy(unsigned slot, uint64_t src, uint64_t dst, uint32_t size,
             uint64_t *seq)
    {
        struct uct_gaudi_pkt_lin_dma pkt = lin_dma(src, dst, size, false,
                                                   false);

        memcpy((uint8_t*)m_cb + slot * SLOT, &pkt, sizeof(pkt));
        return submit_raw(sizeof(pkt), seq, 0, 0, -1,
                          m_cb_va + slot * SLOT);
    }

    bool hw_idle()
    {
        struct hl_info_hw_idle idle;

        memset(&idle, 0, sizeof(idle));
        EXPECT_EQ(0, info(m_fd, HL_INFO_HW_IDLE, &idle, sizeof(idle)));
        return idle.is_idle;
    }

    /* Poll HW_IDLE (which is no WAIT_CS) until the device is idle, at most
     * @timeout_ns; returns the time it took */
    uint64_t wait_idle(uint64_t timeout_ns)
    {
        uint64_t t0 = now_ns();

        while (!hw_idle() && (now_ns() - t0 < timeout_ns)) {
            usleep(100);
        }
        return now_ns() - t0;
    }

    bool moved(int i, size_t size) const
    {
        return memcmp(m_host[0].data(), m_host[i].data(), size) == 0;
    }

    std::vector<uint8_t> m_host[3];
    uint64_t             m_host_va[3];
};


class emu_cs_exec_mode : public emu_cs_exec,
                         public ::testing::WithParamInterface<
                                 gaudi_emu_exec_t> {
protected:
    virtual void SetUp()
    {
        emu_cs_exec::SetUp();
        m_cfg.exec = GetParam();
    }
};

/* CS 2 reads what CS 1 wrote and CS 3 what CS 2 wrote: waiting for the last
 * only runs all three, in order */
TEST_P(emu_cs_exec_mode, waiter_runs_the_queue_in_order) {
    open_buffers();
    uint64_t dev = dev_buffer(2 << 20);
    uint64_t seq[3];

    ASSERT_EQ(0, copy(0, m_host_va[0], dev, BUF, &seq[0]));
    ASSERT_EQ(0, copy(1, dev, dev + BUF, BUF, &seq[1]));
    ASSERT_EQ(0, copy(2, dev + BUF, m_host_va[1], BUF, &seq[2]));

    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq[2]));
    EXPECT_TRUE(moved(1, BUF));

    struct hl_wait_cs_out out;
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(0, wait(seq[i], 0, &out));
        EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, out.status);
    }
}

INSTANTIATE_TEST_SUITE_P(exec, emu_cs_exec_mode,
                         ::testing::Values(GAUDI_EMU_EXEC_THREAD,
                                           GAUDI_EMU_EXEC_INLINE));

/* The CS ioctl returns before the data moves: nothing runs it until a
 * WAIT_CS, or the worker after the grace time */
TEST_F(emu_cs_exec, cs_returns_before_the_data_moves) {
    open_buffers();
    int checked = 0;

    for (unsigned i = 0; (i < 20) && (checked < 3); ++i) {
        uint64_t seq, t0 = now_ns();

        m_host[0][0] = (uint8_t)(i + 1);
        ASSERT_EQ(0, copy(0, m_host_va[0], m_host_va[1], 8, &seq));
        bool early = moved(1, 8);
        if (now_ns() - t0 < GAUDI_EMU_EXEC_GRACE_NS) {
            /* (a slower check, on a busy machine, proves nothing) */
            EXPECT_FALSE(early) << "iteration " << i;
            ++checked;
        }
        EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
        EXPECT_TRUE(moved(1, 8));
    }
    /* a loaded machine may be slower than the grace every time: then
     * nothing was checked, which is not a failure */
    if (checked == 0) {
        GTEST_SKIP() << "no submission was checked within the grace ("
                     << GAUDI_EMU_EXEC_GRACE_NS << " ns) in 20 tries";
    }
}

/* Nobody polls: the worker runs the CS once the grace time has passed */
TEST_F(emu_cs_exec, unpolled_cs_completes) {
    open_buffers();
    uint64_t seq;

    ASSERT_EQ(0, copy(0, m_host_va[0], m_host_va[1], BUF, &seq));
    uint64_t took = wait_idle(5000000000ull);

    EXPECT_TRUE(hw_idle());
    EXPECT_GE(took + 200000, GAUDI_EMU_EXEC_GRACE_NS);
    EXPECT_TRUE(moved(1, BUF));

    struct hl_wait_cs_out out;
    EXPECT_EQ(0, wait(seq, 0, &out));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, out.status);
}

/* The poller and the engine share one CPU: a completion must not wait for
 * the scheduler to run another thread (it used to take a tick per CS). Told
 * by counting, not by time, which a loaded machine stretches: the poll
 * right after the submission executes the CS itself, so (nearly) every CS
 * is complete at its first poll; with the engine thread only, (nearly)
 * none was. The worker may still take one over when the poller is
 * preempted for longer than the grace between submission and poll. */
TEST_F(emu_cs_exec, poller_on_a_shared_cpu) {
    cpu_set_t old_set, one;

    ASSERT_EQ(0, sched_getaffinity(0, sizeof(old_set), &old_set));
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &old_set)) {
            CPU_SET(cpu, &one);
            break;
        }
    }
    /* before the first CS: the worker thread inherits the affinity */
    ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
    open_buffers();

    const int count = 200;
    int at_first_poll = 0;
    uint64_t polls = 0, t0 = now_ns();
    for (int i = 0; i < count; ++i) {
        struct hl_wait_cs_out out;
        uint64_t seq;
        int n = 0;

        ASSERT_EQ(0, copy(0, m_host_va[0], m_host_va[1], 8, &seq));
        do {
            ASSERT_EQ(0, wait(seq, 0, &out));   /* a pure poll, as UCT's */
            ++n;
        } while (out.status == HL_WAIT_CS_STATUS_BUSY);
        ASSERT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, out.status);
        at_first_poll += (n == 1);
        polls         += n;
    }
    uint64_t took = now_ns() - t0;
    sched_setaffinity(0, sizeof(old_set), &old_set);

    EXPECT_GE(at_first_poll, count / 2)
            << polls << " polls for " << count << " CSs, "
            << took / count << " ns per CS";
}

/* Closing the context aborts what nobody ran yet: its data never moves */
TEST_F(emu_cs_exec, close_aborts_queued) {
    open_buffers();
    int checked = 0;

    for (unsigned i = 0; (i < 20) && (checked < 2); ++i) {
        uint64_t seq, t0 = now_ns();

        ASSERT_EQ(0, copy(0, m_host_va[0], m_host_va[1], BUF, &seq));
        ASSERT_EQ(0, m_ops->close(m_fd));
        m_fd = -1;
        if (now_ns() - t0 < GAUDI_EMU_EXEC_GRACE_NS) {
            EXPECT_FALSE(moved(1, BUF)) << "iteration " << i;
            ++checked;
        }

        /* whatever happened, the device is free again and works */
        m_host[1].assign(BUF, 0);
        free(m_cb);
        m_cb = NULL;
        open_buffers();
    }
    /* a loaded machine may take longer than the grace for every copy and
     * close: then nothing was checked, which is not a failure */
    if (checked == 0) {
        GTEST_SKIP() << "no copy + close took less than the grace ("
                     << GAUDI_EMU_EXEC_GRACE_NS << " ns) in 20 tries";
    }
}

/* An injected abort in the middle of the queue: the waiter for a later CS
 * runs all of them; the aborted one moved nothing, the others did */
TEST_F(emu_cs_exec, abort_in_the_queue) {
    m_cfg.faults = "cs_abort:2";
    open_buffers();
    uint64_t seq[3];
    int err;

    ASSERT_EQ(0, copy(0, m_host_va[0], m_host_va[1], 4096, &seq[0]));
    ASSERT_EQ(0, copy(1, m_host_va[0], m_host_va[2], 4096, &seq[1]));
    ASSERT_EQ(0, copy(2, m_host_va[0] + 4096, m_host_va[1] + 4096, 4096,
                      &seq[2]));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq[2]));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_ABORTED, wait_done(seq[1], &err));
    EXPECT_EQ(EIO, err);
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq[0]));

    EXPECT_TRUE(moved(1, 8192));
    EXPECT_EQ(std::vector<uint8_t>(BUF, 0), m_host[2]);
}

/* A reset while a CS is queued: whoever runs it later finds the new epoch
 * and aborts it without moving data */
TEST_F(emu_cs_exec, reset_aborts_queued) {
    /* ioctls: #1 the CB MAP of open_ok(), #2..#4 the buffers, #5 the CS */
    m_cfg.faults  = "reset:5";
    m_cfg.no_kill = 1;  /* this test process holds the device in reset */
    open_buffers();
    uint64_t seq;
    int err;

    ASSERT_EQ(0, copy(0, m_host_va[0], m_host_va[1], BUF, &seq));
    EXPECT_EQ((uint32_t)HL_DEVICE_STATUS_IN_RESET, dev_status(m_fd));
    /* as hl_wait_ioctl: no wait while the device is not operational */
    struct hl_wait_cs_out out;
    err = wait(seq, 0, &out);
    EXPECT_EQ(EBUSY, err);
    /* the worker finds the CS after its grace time, in the new epoch */
    usleep(20000);
    EXPECT_EQ(std::vector<uint8_t>(BUF, 0), m_host[1]);
}

/* A WAIT_CS that times out while the modelled time runs: BUSY, rc 0, after
 * at least its timeout; the waiter already moved the data. A wait that ends
 * after the modelled time (a loaded machine preempted the test for 0.3 s)
 * sees the CS complete instead, which proves nothing: tried up to 5 times,
 * one BUSY answer is needed (a wait that ran to the completion would never
 * give one). */
TEST_F(emu_cs_exec, wait_times_out_while_modelled) {
    m_cfg.latency = 0.3;
    open_buffers();
    int busy = 0;

    for (int i = 0; (i < 5) && !busy; ++i) {
        struct hl_wait_cs_out out;
        uint64_t seq;

        m_host[1].assign(BUF, 0);
        uint64_t t0 = now_ns();
        ASSERT_EQ(0, copy(0, m_host_va[0], m_host_va[1], BUF, &seq));
        EXPECT_EQ(0, wait(seq, 20000, &out));
        uint64_t took = now_ns() - t0;
        if (out.status == HL_WAIT_CS_STATUS_BUSY) {
            EXPECT_GE(took, 20000000ull);
            ++busy;
        } else {
            EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, out.status);
            EXPECT_GE(took, 300000000ull) << "complete before its time";
        }
        EXPECT_TRUE(moved(1, BUF));

        EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
        EXPECT_GE(now_ns() - t0, 300000000ull);
    }
    EXPECT_EQ(1, busy) << "no WAIT_CS of 20 ms timed out before the 0.3 s "
                          "of its CS in 5 tries";
}

/* The model with a poller: each CS takes its latency after the previous
 * one, whoever executes it */
TEST_F(emu_cs_exec, timing_model_with_a_poller) {
    m_cfg.latency = 0.05;
    open_buffers();
    uint64_t seq[3];

    uint64_t t0 = now_ns();
    for (unsigned i = 0; i < 3; ++i) {
        ASSERT_EQ(0, copy(i, m_host_va[0], m_host_va[1], 64, &seq[i]));
    }
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq[2]));
    EXPECT_GE(now_ns() - t0, 150000000ull);
}

/* The model without a poller: the device is busy for the modelled time
 * from the submission (HW_IDLE), and a CS polled only after that time is
 * complete at once */
TEST_F(emu_cs_exec, timing_model_without_a_poller) {
    m_cfg.latency = 0.1;
    open_buffers();
    struct hl_wait_cs_out out;
    uint64_t seq;

    uint64_t t0 = now_ns();
    ASSERT_EQ(0, copy(0, m_host_va[0], m_host_va[1], BUF, &seq));
    usleep(30000);
    bool idle = hw_idle();
    /* busy when asked before the modelled time is over (a test preempted
     * for longer may find it idle already) */
    if (now_ns() - t0 < 100000000ull) {
        EXPECT_FALSE(idle);
    }
    wait_idle(5000000000ull);
    EXPECT_GE(now_ns() - t0, 100000000ull);
    EXPECT_TRUE(moved(1, BUF));

    /* polled after its time: complete at the first poll */
    EXPECT_EQ(0, wait(seq, 0, &out));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, out.status);
}

/*
 * CB DESTROY while a CS executes packets that read the CB through its device
 * VA: the thread that executes a CS holds no lock while the data moves, so
 * the emulator must not free the CB's memory under it (the driver frees a
 * CB at its last reference only, hl_cb_destroy). The CS completes, or fails
 * with an MMU fault if it reached the CB after the destroy. Found by
 * gaudi_fuzz.ioctl under load: the emulator's worker thread died of a SEGV.
 * In a child process, since before the fix it crashed.
 */
TEST_F(emu_cs_exec, cb_destroy_while_executing) {
    enum { ROUNDS = 8, COPIES = 32, CB_BYTES = 2 << 20 };

    /* the emulator unmaps the CB's VA at its DESTROY (the driver at its
     * last mmap: emulator.md §11): the faults this test provokes are the
     * emulator's, and must not reset the device between rounds */
    m_cfg.page_fault_cs_only = 1;
    int status = in_child([this]() -> int {
        if (init() != 0) {
            return 10;
        }
        m_fd = open_node(0, false);
        if (m_fd < 0) {
            return 11;
        }

        uint64_t dst = dev_buffer(CB_BYTES);
        for (unsigned round = 0; round < ROUNDS; ++round) {
            union hl_cb_args cb = cb_args(HL_CB_OP_CREATE, HL_MAX_CB_SIZE);

            cb.in.flags = HL_CB_FLAGS_MAP;
            if (ioctl_err(m_fd, UCT_GAUDI_IOC_CB, &cb) != 0) {
                return 12;
            }
            uint64_t handle = cb.out.cb_handle;
            void *ptr = m_ops->mmap(NULL, CB_BYTES, PROT_READ | PROT_WRITE,
                                    MAP_SHARED, m_fd, handle);
            if (ptr == MAP_FAILED) {
                return 13;
            }
            cb              = cb_args(HL_CB_OP_INFO);
            cb.in.cb_handle = handle;
            cb.in.flags     = HL_CB_FLAGS_GET_DEVICE_VA;
            if (ioctl_err(m_fd, UCT_GAUDI_IOC_CB, &cb) != 0) {
                return 14;
            }
            uint64_t cb_va = cb.out.device_va;

            /* each packet copies the whole CB, read through its VA */
            struct uct_gaudi_pkt_lin_dma pkts[COPIES];
            for (unsigned i = 0; i < COPIES; ++i) {
                pkts[i] = lin_dma(cb_va, dst, CB_BYTES, false, false);
            }
            memcpy(ptr, pkts, sizeof(pkts));
            uint64_t seq;
            if (submit_raw(sizeof(pkts), &seq, 0, 0, -1, cb_va) != 0) {
                return 15;
            }

            /* another thread executes it (as its waiter) while this one
             * destroys the CB, at a different point in each round */
            volatile int started = 0;
            uint32_t cs_status = 0;
            std::thread waiter([&]() {
                started   = 1;
                cs_status = wait_done(seq);
            });
            while (!started) {
                sched_yield();
            }
            usleep(round * 500);
            cb              = cb_args(HL_CB_OP_DESTROY);
            cb.in.cb_handle = handle;
            int err = ioctl_err(m_fd, UCT_GAUDI_IOC_CB, &cb);
            waiter.join();
            m_ops->munmap(ptr, CB_BYTES);
            if (err != 0) {
                return 16;
            }
            if ((cs_status != HL_WAIT_CS_STATUS_COMPLETED) &&
                (cs_status != HL_WAIT_CS_STATUS_ABORTED)) {
                return 17;
            }
        }
        m_ops->close(m_fd);
        return 0;
    });

    EXPECT_EQ(0, status) << "the child " << ((status < 0) ?
                            "crashed (killed by a signal)" :
                            "failed a check (exit code: see the test)");
}
