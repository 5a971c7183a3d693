/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * The speed profile (docs/emulator.md §8b): submissions pipelined behind
 * their latency, the PCIe link shared per direction, and time counted on
 * the model clock, which does not count the emulator's own copying. The
 * bounds checked are the model's own arithmetic (a CS cannot complete
 * before its bytes crossed the link), with wide margins where CPU time of
 * the test itself enters.
 */

#include "emu_cs_test.h"

#include <time.h>

class emu_model : public emu_cs_test {
protected:
    enum { MIB = 1 << 20 };

    static constexpr double LINK_BW = 25e9;   /* the gaudi2 profile's */

    void SetUp() override
    {
        emu_cs_test::SetUp();
        m_cfg.profile         = GAUDI_EMU_PROFILE_GAUDI2;
        m_cfg.profile_latency = 0;
        m_host                = NULL;
    }

    void TearDown() override
    {
        free(m_host);
        emu_cs_test::TearDown();
    }

    void open_buffers(size_t size)
    {
        open_ok();
        ASSERT_EQ(0, posix_memalign(&m_host, 4096, size));
        memset(m_host, 0x3c, size);
        ASSERT_EQ(0, map_host(m_fd, m_host, size, &m_host_va));
        m_dev = dev_buffer(size);
    }

    static uint64_t wall_ns()
    {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (ts.tv_sec * 1000000000ull) + ts.tv_nsec;
    }

    gaudi_emu_stats_t stats()
    {
        gaudi_emu_stats_t s;

        EXPECT_EQ(0, gaudi_emu_get_stats(&s));
        return s;
    }

    /* @count copies of @size, host -> device unless @to_host, on the
     * queues in @queues in turn, submitted at once; waits for the last and
     * returns the model time they took (wall - the emulator's copying) */
    uint64_t run(unsigned count, uint32_t size,
                 const std::vector<uint32_t> &queues, bool to_host = false,
                 uint64_t *copy_ns = NULL)
    {
        gaudi_emu_stats_t s0 = stats();
        uint64_t t0 = wall_ns(), seq = 0;

        for (unsigned i = 0; i < count; ++i) {
            uint32_t queue = queues[i % queues.size()];
            EXPECT_EQ(0, to_host ? dma(m_dev, m_host_va, size, &seq, false,
                                       queue) :
                                   dma(m_host_va, m_dev, size, &seq, false,
                                       queue));
        }
        for (uint64_t s = seq + 1 - count; s <= seq; ++s) {
            EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(s));
        }

        uint64_t wall = wall_ns() - t0;
        gaudi_emu_stats_t s1 = stats();
        uint64_t copy = s1.copy_ns - s0.copy_ns;
        EXPECT_LE(copy, wall);
        if (copy_ns != NULL) {
            *copy_ns = copy;
        }
        return wall - copy;
    }

    static uint64_t link_ns(uint64_t bytes)
    {
        return (uint64_t)(bytes * 1e9 / LINK_BW);
    }

    void     *m_host;
    uint64_t m_host_va;
    uint64_t m_dev;
};

/* The latency of a submission overlaps the work queued before it: 8 CSs
 * submitted at once take one latency, not eight (the serial EMU_LATENCY
 * model took eight) */
TEST_F(emu_model, latency_overlaps_queued_work) {
    m_cfg.profile_latency = 0.02;
    open_buffers(MIB);

    uint64_t model = run(8, MIB, {GAUDI2_QUEUE_ID_PDMA_0_0});
    EXPECT_GE(model, 20000000ull + 8 * link_ns(MIB));
    EXPECT_LT(model, 4 * 20000000ull) << "the latencies were serialized";

    gaudi_emu_stats_t s = stats();
    EXPECT_EQ(8u, s.model_cs);
    EXPECT_GE(s.model_depth_max, 8u) << "8 CSs were in flight at once";
}

/* The PDMA engines share the PCIe link of a direction: two engines move no
 * more than the link does */
TEST_F(emu_model, link_shared_by_engines) {
    open_buffers(4 * MIB);

    uint64_t model = run(8, 4 * MIB, {GAUDI2_QUEUE_ID_PDMA_0_0,
                                      GAUDI2_QUEUE_ID_PDMA_1_0});
    EXPECT_GE(model, 8 * link_ns(4 * MIB));

    model = run(8, 4 * MIB, {GAUDI2_QUEUE_ID_PDMA_0_0,
                             GAUDI2_QUEUE_ID_PDMA_1_0}, true);
    EXPECT_GE(model, 8 * link_ns(4 * MIB));
}

/* The emulator's copying is not model time: a copy slowed down 20 times
 * costs the model clock nothing, and its CS still completes no earlier
 * than its bytes crossed the link */
TEST_F(emu_model, copy_time_not_counted) {
    m_cfg.copy_slowdown = 20;
    open_buffers(4 * MIB);
    uint64_t copy;

    uint64_t model = run(2, 4 * MIB, {GAUDI2_QUEUE_ID_PDMA_0_0}, false,
                         &copy);
    EXPECT_GE(model, 2 * link_ns(4 * MIB));
    EXPECT_LT(model, copy / 4) << "copy " << copy << " ns";

    /* the bytes did move: read the device buffer back */
    memset(m_host, 0, 4 * MIB);
    run(1, 4 * MIB, {GAUDI2_QUEUE_ID_PDMA_1_0}, true);
    EXPECT_EQ(0, memcmp(m_host, std::vector<uint8_t>(4 * MIB, 0x3c).data(),
                        4 * MIB));
}

/* Without a profile nothing is timed on the model clock */
TEST_F(emu_model, off_by_default) {
    m_cfg.profile = GAUDI_EMU_PROFILE_NONE;
    open_buffers(MIB);

    run(4, MIB, {GAUDI2_QUEUE_ID_PDMA_0_0});
    gaudi_emu_stats_t s = stats();
    EXPECT_EQ(0u, s.model_cs);
    EXPECT_EQ(0u, s.copy_ns);
}

TEST_F(emu_model, bad_config) {
    m_cfg.asic = UCT_GAUDI_ASIC_GAUDI1;
    EXPECT_EQ(-EINVAL, init());
    EXPECT_NE(std::string::npos,
              std::string(gaudi_emu_last_error()).find("needs an emulated "
                                                       "Gaudi2"));

    m_cfg.asic            = UCT_GAUDI_ASIC_GAUDI2;
    m_cfg.profile_latency = 2;
    EXPECT_EQ(-EINVAL, init());
    EXPECT_NE(std::string::npos,
              std::string(gaudi_emu_last_error()).find("EMU_PROFILE_LATENCY"));

    m_cfg.profile_latency = 0;
    m_cfg.copy_slowdown   = 5000;
    EXPECT_EQ(-EINVAL, init());
    EXPECT_NE(std::string::npos,
              std::string(gaudi_emu_last_error()).find("EMU_COPY_SLOWDOWN"));

    m_cfg.profile       = (gaudi_emu_profile_t)7;
    m_cfg.copy_slowdown = 0;
    EXPECT_EQ(-EINVAL, init());
}
