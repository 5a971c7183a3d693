/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_cs_test.h"

/* CS validation, LIN_DMA execution, WAIT_CS status matrix, back-pressure */

class emu_dma : public emu_cs_test,
                public ::testing::WithParamInterface<
                        std::tuple<uct_gaudi_asic_t, gaudi_emu_exec_t> > {
protected:
    virtual void SetUp()
    {
        emu_cs_test::SetUp();
        m_cfg.asic = std::get<0>(GetParam());
        m_cfg.exec = std::get<1>(GetParam());
    }
};

TEST_P(emu_dma, copy_roundtrip_unaligned) {
    open_ok();

    const size_t size = 3 * 4096 + 1234;
    std::vector<uint8_t> src(size + 64), dst(size + 64, 0);
    uint8_t *s = src.data() + 7, *d = dst.data() + 13;
    uint64_t s_va, d_va, seq;

    for (size_t i = 0; i < size; ++i) {
        s[i] = (uint8_t)(i * 131 + 17);
    }

    ASSERT_EQ(0, map_host(m_fd, s, size, &s_va));
    ASSERT_EQ(0, map_host(m_fd, d, size, &d_va));
    uint64_t dev = dev_buffer(4 << 20) + 5;   /* unaligned on the device */

    ASSERT_EQ(0, dma(s_va, dev, size, &seq, false, 0));
    EXPECT_EQ(1u, seq);
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));

    ASSERT_EQ(0, dma(dev, d_va, size, &seq, false, 4));
    EXPECT_EQ(2u, seq);
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));

    EXPECT_EQ(0, memcmp(s, d, size));
    EXPECT_EQ(0, d[-1]);                   /* nothing outside the range */
    EXPECT_EQ(0, d[size]);
}

TEST_P(emu_dma, memset_op) {
    open_ok();

    const size_t size = 10000;
    std::vector<uint8_t> dst(size + 2, 0x11);
    uint64_t d_va, seq;

    ASSERT_EQ(0, map_host(m_fd, dst.data() + 1, size, &d_va));
    uint64_t dev = dev_buffer(2 << 20);

    ASSERT_EQ(0, dma(0xABABABABABABABABull, dev, size, &seq, true));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
    ASSERT_EQ(0, dma(dev, d_va, size, &seq));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));

    EXPECT_EQ(0x11, dst[0]);
    EXPECT_EQ(0x11, dst[size + 1]);
    for (size_t i = 1; i <= size; ++i) {
        ASSERT_EQ(0xAB, dst[i]) << i;
    }
}

/* A DMA from a host VA that is no longer mapped: the device MMU faults.
 * A Gaudi1 only fails the CS (gaudi_handle_eqe reports the event); a Gaudi2
 * resets (gaudi2_handle_eqe -> hl_device_cond_reset): its owner, registered
 * for events, is told, nothing runs any more, and closing the device
 * completes the reset */
TEST_P(emu_dma, fault_on_unmapped_va) {
    open_ok();

    std::vector<uint8_t> buf(4096);
    struct hl_wait_cs_out out;
    uint64_t va, seq, events = 0;
    int err, efd;

    efd = register_eventfd(m_fd);
    ASSERT_GE(efd, 0);
    ASSERT_EQ(0, map_host(m_fd, buf.data(), buf.size(), &va));
    ASSERT_EQ(0, unmap(m_fd, va));

    uint64_t dev = dev_buffer(2 << 20);
    ASSERT_EQ(0, dma(va, dev, 100, &seq));   /* accepted: MMU faults later */
    if (gaudi1()) {
        EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_ABORTED, wait_done(seq, &err));
        EXPECT_EQ(EIO, err);
    } else {
        /* aborted; or, once the reset runs, the wait is refused */
        wait_done(seq, &err);
        EXPECT_TRUE((err == EIO) || (err == EBUSY)) << strerror(err);
    }
    EXPECT_EQ(0, info(m_fd, HL_INFO_GET_EVENTS, &events, sizeof(events)));
    EXPECT_TRUE(events & HL_NOTIFIER_EVENT_USER_ENGINE_ERR) << events;

    if (gaudi1()) {
        EXPECT_FALSE(events & HL_NOTIFIER_EVENT_DEVICE_RESET) << events;
        /* the device itself keeps working */
        ASSERT_EQ(0, map_host(m_fd, buf.data(), buf.size(), &va));
        ASSERT_EQ(0, dma(va, dev, 100, &seq));
        EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
    } else {
        EXPECT_TRUE(events & HL_NOTIFIER_EVENT_PAGE_FAULT) << events;
        EXPECT_TRUE(events & HL_NOTIFIER_EVENT_DEVICE_RESET) << events;
        /* the release watchdog runs: nothing completes any more */
        ASSERT_EQ(0, dma(dev, dev + 4096, 100, &seq));
        EXPECT_EQ(EBUSY, wait(seq, 0, &out));

        EXPECT_EQ(0, m_ops->close(m_fd));
        m_fd = open_node(0, false);
        ASSERT_GE(m_fd, 0);
        struct hl_info_reset_count rc;
        EXPECT_EQ(0, info(m_fd, HL_INFO_RESET_COUNT, &rc, sizeof(rc)));
        EXPECT_EQ(1u, rc.hard_reset_cnt);
    }
    close(efd);
}

/* UCX_GAUDI_EMU_PAGE_FAULT_RESET=n: a page fault only fails its CS on
 * every ASIC */
TEST_P(emu_dma, fault_on_unmapped_va_cs_only) {
    m_cfg.page_fault_cs_only = 1;
    open_ok();

    std::vector<uint8_t> buf(4096);
    uint64_t va, seq;
    int err;

    ASSERT_EQ(0, map_host(m_fd, buf.data(), buf.size(), &va));
    ASSERT_EQ(0, unmap(m_fd, va));

    uint64_t dev = dev_buffer(2 << 20);
    ASSERT_EQ(0, dma(va, dev, 100, &seq));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_ABORTED, wait_done(seq, &err));
    EXPECT_EQ(EIO, err);

    ASSERT_EQ(0, map_host(m_fd, buf.data(), buf.size(), &va));
    ASSERT_EQ(0, dma(va, dev, 100, &seq));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
}

INSTANTIATE_TEST_SUITE_P(
        asic, emu_dma,
        ::testing::Combine(::testing::Values(UCT_GAUDI_ASIC_GAUDI2,
                                             UCT_GAUDI_ASIC_GAUDI1),
                           ::testing::Values(GAUDI_EMU_EXEC_THREAD,
                                             GAUDI_EMU_EXEC_INLINE)));


class emu_cs : public emu_cs_test {
};

/* Binning: an EDMA engine the device lacks is not in edma_enabled_mask and
 * its queues are refused */
TEST_F(emu_cs, binned_edma_gaudi2) {
    m_cfg.edma_disabled = 0x3;      /* both engines of DCORE0 */
    open_ok();

    struct hl_info_hw_ip_info hw;
    EXPECT_EQ(0, info(m_fd, HL_INFO_HW_IP_INFO, &hw, sizeof(hw)));
    EXPECT_EQ(0xFCu, hw.edma_enabled_mask);

    struct uct_gaudi_pkt_lin_dma pkt = lin_dma(0, 0, 0, false, false);
    uint32_t size = write_cb(&pkt, sizeof(pkt));
    uint64_t seq;
    EXPECT_EQ(EINVAL, submit_raw(size, &seq, GAUDI2_QUEUE_ID_DCORE0_EDMA_0_0));
    EXPECT_EQ(EINVAL, submit_raw(size, &seq,
                                 GAUDI2_QUEUE_ID_DCORE0_EDMA_0_0 + 4));
    EXPECT_EQ(0, submit_raw(size, &seq, GAUDI2_QUEUE_ID_DCORE1_EDMA_0_0));
}

TEST_F(emu_cs, validation_gaudi2) {
    open_ok();

    struct uct_gaudi_pkt_lin_dma pkt = lin_dma(0, 0, 0, false, false);
    uint32_t size = write_cb(&pkt, sizeof(pkt));
    uint64_t seq;

    EXPECT_EQ(0, submit_raw(size, &seq, 0));
    EXPECT_EQ(0, submit_raw(size, &seq, GAUDI2_QUEUE_ID_DCORE1_EDMA_0_0));
    /* user PDMA streams: PDMA_0_0, PDMA_0_1, PDMA_1_0 only */
    EXPECT_EQ(EINVAL, submit_raw(size, &seq, GAUDI2_QUEUE_ID_PDMA_0_1 + 1));
    EXPECT_EQ(EINVAL, submit_raw(size, &seq, GAUDI2_QUEUE_ID_PDMA_1_1));
    EXPECT_EQ(EINVAL, submit_raw(size, &seq, GAUDI2_QUEUE_ID_PDMA_1_0 + 3));
    EXPECT_EQ(EINVAL, submit_raw(size, &seq, GAUDI2_QUEUE_ID_CPU_PQ));
    EXPECT_EQ(EINVAL, submit_raw(size, &seq, GAUDI2_QUEUE_ID_SIZE));
    EXPECT_EQ(EINVAL, submit_raw(size, &seq, 16));    /* not a DMA queue */
    EXPECT_EQ(EINVAL, submit_raw(size, &seq, 0, 0, 0));  /* no USER flag */
    EXPECT_EQ(EINVAL, submit_raw(4, &seq, 0));           /* cb_size < 8 */
    EXPECT_EQ(EFAULT, submit_raw(size, &seq, 0, 0, -1, 0x1000));
    EXPECT_EQ(EINVAL, submit_raw(size, &seq, 0,
                                 HL_CS_FLAGS_SIGNAL | HL_CS_FLAGS_WAIT));
    EXPECT_EQ(EPERM, submit_raw(size, &seq, 0,
                                HL_CS_FLAGS_STAGED_SUBMISSION));

    struct hl_cs_chunk chunk;
    union hl_cs_args args;
    memset(&chunk, 0, sizeof(chunk));
    chunk.cb_handle      = m_cb_va;
    chunk.cb_size        = size;
    chunk.cs_chunk_flags = HL_CS_CHUNK_FLAGS_USER_ALLOC_CB;
    memset(&args, 0, sizeof(args));
    args.in.chunks_execute     = (uintptr_t)&chunk;
    args.in.num_chunks_execute = 0;
    EXPECT_EQ(EINVAL, ioctl_err(m_fd, UCT_GAUDI_IOC_CS, &args));
    args.in.num_chunks_execute = HL_MAX_JOBS_PER_CS + 1;
    EXPECT_EQ(EINVAL, ioctl_err(m_fd, UCT_GAUDI_IOC_CS, &args));
    args.in.num_chunks_execute = 1;
    args.in.pad[2]             = 1;
    EXPECT_EQ(EINVAL, ioctl_err(m_fd, UCT_GAUDI_IOC_CS, &args));
    args.in.pad[2]             = 0;
    args.in.chunks_execute     = 0x20;
    EXPECT_EQ(EFAULT, ioctl_err(m_fd, UCT_GAUDI_IOC_CS, &args));

    struct hl_info_cs_counters cnt;
    EXPECT_EQ(0, info(m_fd, HL_INFO_CS_COUNTERS, &cnt, sizeof(cnt)));
    EXPECT_GE(cnt.ctx_validation_drop_cnt, 11u);

    /* the rejected CS took no sequence number */
    EXPECT_EQ(0, submit_raw(size, &seq, 0));
    EXPECT_EQ(3u, seq);
}

TEST_F(emu_cs, many_jobs_and_packets) {
    open_ok();

    /* several packets in one CB, several chunks in one CS */
    const size_t n = 8, size = 1000;
    std::vector<uint8_t> src(n * size), dst(n * size, 0);
    uint64_t s_va, d_va, seq;

    for (size_t i = 0; i < src.size(); ++i) {
        src[i] = (uint8_t)(i ^ (i >> 8));
    }
    ASSERT_EQ(0, map_host(m_fd, src.data(), src.size(), &s_va));
    ASSERT_EQ(0, map_host(m_fd, dst.data(), dst.size(), &d_va));

    std::vector<struct uct_gaudi_pkt_lin_dma> pkts;
    for (size_t i = 0; i < n; ++i) {
        pkts.push_back(lin_dma(s_va + i * size, d_va + i * size, size, false,
                               false));
    }
    uint64_t nop[1] = {(uint64_t)UCT_GAUDI_PKT_NOP << 56};
    write_cb(pkts.data(), 4 * sizeof(pkts[0]));
    memcpy((char*)m_cb + 4 * sizeof(pkts[0]), nop, sizeof(nop));

    struct hl_cs_chunk chunks[2];
    memset(chunks, 0, sizeof(chunks));
    chunks[0].cb_handle      = m_cb_va;
    chunks[0].cb_size        = 4 * sizeof(pkts[0]) + sizeof(nop);
    chunks[0].cs_chunk_flags = HL_CS_CHUNK_FLAGS_USER_ALLOC_CB;
    memcpy((char*)m_cb + 4096, &pkts[4], 4 * sizeof(pkts[0]));
    chunks[1]                = chunks[0];
    chunks[1].cb_handle      = m_cb_va + 4096;
    chunks[1].cb_size        = 4 * sizeof(pkts[0]);
    chunks[1].queue_index    = 4;

    union hl_cs_args args;
    memset(&args, 0, sizeof(args));
    args.in.chunks_execute     = (uintptr_t)chunks;
    args.in.num_chunks_execute = 2;
    ASSERT_EQ(0, ioctl_err(m_fd, UCT_GAUDI_IOC_CS, &args));
    seq = args.out.seq;
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
    EXPECT_TRUE(src == dst);
}

TEST_F(emu_cs, bad_packet_aborts) {
    open_ok();

    uint64_t bad[2] = {(uint64_t)0x1F << 56, 0};   /* undefined opcode */
    uint64_t seq;
    int err;

    ASSERT_EQ(0, submit_raw(write_cb(bad, sizeof(bad)), &seq));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_ABORTED, wait_done(seq, &err));
    EXPECT_EQ(EIO, err);
}

/* A large user CB of NOPs, for the fetch tests below */
static void nop_cb(std::vector<uint64_t> &cb)
{
    std::fill(cb.begin(), cb.end(), (uint64_t)UCT_GAUDI_PKT_NOP << 56);
}

/* The engine fetches a CB as it runs it: a STOP ends it, and bytes past the
 * STOP are not read (seed 0x43a0388e of the ioctl fuzzer: a CB with a size of
 * gigabytes was read whole before its first packet ran, seconds under load) */
TEST_F(emu_cs, cb_fetched_as_run) {
    open_ok();

    const size_t cb_size = 32 << 20;
    std::vector<uint64_t> cb(cb_size / 8), src(512, 0x5a5a), dst(512, 0);
    uint64_t cb_va, s_va, d_va, seq, before;
    gaudi_emu_stats_t stats;

    nop_cb(cb);
    ASSERT_EQ(0, map_host(m_fd, src.data(), 4096, &s_va));
    ASSERT_EQ(0, map_host(m_fd, dst.data(), 4096, &d_va));
    struct uct_gaudi_pkt_lin_dma pkt = lin_dma(s_va, d_va, 4096, false, false);
    memcpy(cb.data(), &pkt, sizeof(pkt));
    cb[sizeof(pkt) / 8] = (uint64_t)UCT_GAUDI_PKT_STOP << 56;
    cb[sizeof(pkt) / 8 + 1] = (uint64_t)0x1F << 56;  /* never read */
    ASSERT_EQ(0, map_host(m_fd, cb.data(), cb_size, &cb_va));

    ASSERT_EQ(0, gaudi_emu_get_stats(&stats));
    before = stats.cb_fetch_bytes;
    ASSERT_EQ(0, submit_raw(cb_size, &seq, 0, 0, -1, cb_va));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
    EXPECT_TRUE(src == dst);
    ASSERT_EQ(0, gaudi_emu_get_stats(&stats));
    EXPECT_LE(stats.cb_fetch_bytes - before, (uint64_t)(1 << 20))
            << "a 32 MiB CB whose second packet is a STOP was read whole";

    /* the harsher of the unknown: a CB whose range runs past its mapping
     * faults before a packet runs, as if the engine prefetched it */
    std::fill(dst.begin(), dst.end(), 0);
    ASSERT_EQ(0, unmap(m_fd, cb_va));
    ASSERT_EQ(0, map_host(m_fd, cb.data(), cb_size - 4096, &cb_va));
    int err;
    ASSERT_EQ(0, submit_raw(cb_size, &seq, 0, 0, -1, cb_va));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_ABORTED, wait_done(seq, &err));
    EXPECT_EQ(EIO, err);
    EXPECT_EQ(0u, dst[0]) << "a packet ran before the CB's fault";
}

/* Packets across the fetch windows: one cut by a window's end runs whole,
 * one cut by the CB's end fails the CS */
TEST_F(emu_cs, cb_packet_across_fetches) {
    open_ok();

    const size_t cb_size = (3 << 20) + 4096;
    std::vector<uint64_t> cb(cb_size / 8), src(512), dst(512, 0);
    uint64_t cb_va, s_va, d_va, seq;
    int err;

    nop_cb(cb);
    for (size_t i = 0; i < src.size(); ++i) {
        src[i] = i * 0x9e3779b97f4a7c15ull;
    }
    ASSERT_EQ(0, map_host(m_fd, src.data(), 4096, &s_va));
    ASSERT_EQ(0, map_host(m_fd, dst.data(), 4096, &d_va));
    struct uct_gaudi_pkt_lin_dma pkt = lin_dma(s_va, d_va, 4096, false, false);
    for (size_t off : {(size_t)(1 << 20) - 8, (size_t)(2 << 20) - 16}) {
        memcpy((uint8_t*)cb.data() + off, &pkt, sizeof(pkt));
    }
    ASSERT_EQ(0, map_host(m_fd, cb.data(), cb_size, &cb_va));

    ASSERT_EQ(0, submit_raw(cb_size, &seq, 0, 0, -1, cb_va));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
    EXPECT_TRUE(src == dst);

    /* the last packet cut by the CB's end: the CS fails (after the packets
     * before it ran, as the engine fetched them) */
    std::fill(dst.begin(), dst.end(), 0);
    memcpy((uint8_t*)cb.data() + cb_size - 16, &pkt, 16);
    ASSERT_EQ(0, submit_raw(cb_size, &seq, 0, 0, -1, cb_va));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_ABORTED, wait_done(seq, &err));
    EXPECT_EQ(EIO, err);
}

TEST_F(emu_cs, msg_long_writes) {
    open_ok();

    uint32_t flag = 0;
    uint64_t va, seq;
    ASSERT_EQ(0, map_host(m_fd, &flag, sizeof(flag), &va));

    struct {
        uint32_t value;
        uint32_t ctl;
        uint64_t addr;
    } msg = {0xC0FFEE, UCT_GAUDI_PKT_MSG_LONG << UCT_GAUDI_PKT_OPCODE_SHIFT,
             va};
    ASSERT_EQ(0, submit_raw(write_cb(&msg, sizeof(msg)), &seq));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
    EXPECT_EQ(0xC0FFEEu, flag);
}

TEST_F(emu_cs, wait_matrix) {
    m_cfg.latency = 0.2;        /* every CS takes 200 ms */
    open_ok();

    struct uct_gaudi_pkt_lin_dma pkt = lin_dma(0, 0, 0, false, false);
    uint32_t size = write_cb(&pkt, sizeof(pkt));
    struct hl_wait_cs_out out;
    uint64_t seq;

    /* never submitted */
    EXPECT_EQ(EINVAL, wait(1, 0, &out));
    /* sequences start at 1: the driver has no fence for 0 and answers as
     * for one older than its window */
    EXPECT_EQ(0, wait(0, 0, &out));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, out.status);
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_FLAG_GONE, out.flags);

    ASSERT_EQ(0, submit_raw(size, &seq, 0, HL_CS_FLAGS_TIMESTAMP));
    EXPECT_EQ(EINVAL, wait(seq + 1, 0, &out));

    /* timeout 0: a pure poll */
    EXPECT_EQ(0, wait(seq, 0, &out));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_BUSY, out.status);

    /* a short wait expires: BUSY, rc 0 */
    EXPECT_EQ(0, wait(seq, 1000, &out));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_BUSY, out.status);

    /* a long one completes, with a timestamp */
    EXPECT_EQ(0, wait(seq, 5000000, &out));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, out.status);
    EXPECT_TRUE(out.flags & HL_WAIT_CS_STATUS_FLAG_TIMESTAMP_VLD);
    EXPECT_GT(out.timestamp_nsec, 0);

    EXPECT_EQ(EOPNOTSUPP, wait(seq, 0, &out, HL_WAIT_CS_FLAGS_INTERRUPT));
}

TEST_F(emu_cs, multi_cs) {
    open_ok();

    struct uct_gaudi_pkt_lin_dma pkt = lin_dma(0, 0, 0, false, false);
    uint32_t size = write_cb(&pkt, sizeof(pkt));
    uint64_t seqs[2];

    ASSERT_EQ(0, submit_raw(size, &seqs[0]));
    ASSERT_EQ(0, submit_raw(size, &seqs[1]));
    wait_done(seqs[1]);

    union hl_wait_cs_args args;
    memset(&args, 0, sizeof(args));
    args.in.seq         = (uintptr_t)seqs;
    args.in.timeout_us  = 1000000;
    args.in.flags       = HL_WAIT_CS_FLAGS_MULTI_CS;
    args.in.seq_arr_len = 2;
    ASSERT_EQ(0, ioctl_err(m_fd, UCT_GAUDI_IOC_WAIT_CS, &args));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, args.out.status);
    EXPECT_EQ(3u, args.out.cs_completion_map);
}

/* The driver retains max_pending_cs fences per context (64 on Gaudi2,
 * 16K on Gaudi1): a wait on an older sequence finds none and says
 * COMPLETED + GONE, whatever the CS's own outcome was */
class emu_cs_window : public emu_cs_test,
                      public ::testing::WithParamInterface<
                          std::tuple<uct_gaudi_asic_t, uint64_t>> {
};

TEST_P(emu_cs_window, gone_window) {
    m_cfg.asic = std::get<0>(GetParam());
    m_cfg.exec = GAUDI_EMU_EXEC_INLINE;
    open_ok();

    const uint64_t window = std::get<1>(GetParam());
    struct uct_gaudi_pkt_lin_dma pkt = lin_dma(0, 0, 0, false, gaudi1());
    uint32_t size = write_cb(&pkt, sizeof(pkt));
    struct hl_wait_cs_out out;
    uint64_t seq = 0;

    for (uint64_t i = 0; i < window + 10; ++i) {
        ASSERT_EQ(0, submit_raw(size, &seq));
    }
    EXPECT_EQ(window + 10, seq);

    /* the oldest retained one (the last window sequences are), and the
     * newest that is gone */
    EXPECT_EQ(0, wait(seq - window + 1, 0, &out));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, out.status);
    EXPECT_FALSE(out.flags & HL_WAIT_CS_STATUS_FLAG_GONE);
    EXPECT_EQ(0, wait(seq - window, 0, &out));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, out.status);
    EXPECT_TRUE(out.flags & HL_WAIT_CS_STATUS_FLAG_GONE);

    EXPECT_EQ(0, wait(seq, 0, &out));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, out.status);
    EXPECT_FALSE(out.flags & HL_WAIT_CS_STATUS_FLAG_GONE);
}

INSTANTIATE_TEST_SUITE_P(
    asics, emu_cs_window,
    ::testing::Values(std::make_tuple(UCT_GAUDI_ASIC_GAUDI2, (uint64_t)64),
                      std::make_tuple(UCT_GAUDI_ASIC_GAUDI1,
                                      (uint64_t)16384)));

TEST_F(emu_cs, eagain_backpressure) {
    m_cfg.latency = 0.2;         /* the first CS completes after 200 ms */
    open_ok();

    struct uct_gaudi_pkt_lin_dma pkt = lin_dma(0, 0, 0, false, false);
    uint32_t size = write_cb(&pkt, sizeof(pkt));
    uint64_t seq = 0, last = 0;
    int n, err = 0;

    for (n = 0; n < 200; ++n) {
        err = submit_raw(size, &seq);
        if (err != 0) {
            break;
        }
        last = seq;
    }

    EXPECT_EQ(EAGAIN, err);
    EXPECT_EQ(64, n);                       /* the modelled queue depth */

    struct hl_info_cs_counters cnt;
    EXPECT_EQ(0, info(m_fd, HL_INFO_CS_COUNTERS, &cnt, sizeof(cnt)));
    EXPECT_EQ(1u, cnt.ctx_max_cs_in_flight_drop_cnt);

    /* once the oldest completes, there is room again */
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(1));
    EXPECT_EQ(0, submit_raw(size, &seq));
    EXPECT_EQ(last + 1, seq);
}

TEST_F(emu_cs, bandwidth_model) {
    m_cfg.bandwidth = 100e6;     /* 100 MB/s: 10 MB take 100 ms */
    open_ok();

    const size_t size = 10 << 20;
    void *buf = NULL;
    uint64_t va, seq;
    ASSERT_EQ(0, posix_memalign(&buf, 4096, size));
    memset(buf, 1, size);
    ASSERT_EQ(0, map_host(m_fd, buf, size, &va));
    uint64_t dev = dev_buffer(size);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ASSERT_EQ(0, dma(va, dev, size, &seq));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double sec = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    EXPECT_GE(sec, 0.09);
    free(buf);
}

TEST_F(emu_cs, gaudi1_kernel_cb_rules) {
    m_cfg.asic = UCT_GAUDI_ASIC_GAUDI1;
    open_ok();

    struct uct_gaudi_pkt_lin_dma pkt = lin_dma(0, 0, 0, false, true);
    uint32_t size = write_cb(&pkt, sizeof(pkt));
    uint64_t seq;

    EXPECT_EQ(0, submit_raw(size, &seq, GAUDI_QUEUE_ID_DMA_1_3));
    EXPECT_EQ(EINVAL, submit_raw(size, &seq, GAUDI_QUEUE_ID_CPU_PQ));
    /* a user CB on an external queue is not a kernel CB handle */
    EXPECT_EQ(EINVAL, submit_raw(size, &seq, 0, 0,
                                 HL_CS_CHUNK_FLAGS_USER_ALLOC_CB, m_cb_va));
    EXPECT_EQ(EINVAL, submit_raw(CB_SIZE + 8, &seq, 0));   /* beyond CB */
    EXPECT_EQ(EINVAL, submit_raw(4, &seq, 0));
    /* internal queues only: no completion tracking on Gaudi1 */
    EXPECT_EQ(EINVAL, submit_raw(size, &seq, GAUDI_QUEUE_ID_DMA_2_0, 0,
                                 HL_CS_CHUNK_FLAGS_USER_ALLOC_CB, m_cb_va));

    /* forbidden packets are refused at submission */
    uint64_t bad[2] = {(uint64_t)UCT_GAUDI_PKT_MSG_PROT << 56, 0};
    EXPECT_EQ(EPERM, submit_raw(write_cb(bad, sizeof(bad)), &seq));
    uint64_t stop[1] = {(uint64_t)UCT_GAUDI_PKT_STOP << 56};
    EXPECT_EQ(EPERM, submit_raw(write_cb(stop, sizeof(stop)), &seq));
    uint64_t unknown[1] = {(uint64_t)0x1E << 56};
    EXPECT_EQ(EINVAL, submit_raw(write_cb(unknown, sizeof(unknown)), &seq));
    /* a LIN_DMA cut short by cb_size */
    EXPECT_EQ(EINVAL, submit_raw(16, &seq));
}

TEST_F(emu_cs, gaudi1_cb_ioctl) {
    m_cfg.asic = UCT_GAUDI_ASIC_GAUDI1;
    open_ok();

    union hl_cb_args args;
    memset(&args, 0, sizeof(args));
    args.in.op      = HL_CB_OP_CREATE;
    args.in.cb_size = HL_MAX_CB_SIZE + 1;
    EXPECT_EQ(EINVAL, ioctl_err(m_fd, UCT_GAUDI_IOC_CB, &args));

    memset(&args, 0, sizeof(args));
    args.in.op      = HL_CB_OP_CREATE;
    args.in.cb_size = 100;
    args.in.flags   = HL_CB_FLAGS_MAP;
    ASSERT_EQ(0, ioctl_err(m_fd, UCT_GAUDI_IOC_CB, &args));
    uint64_t handle = args.out.cb_handle;

    /* one mmap, of the page-aligned size */
    EXPECT_EQ(MAP_FAILED, m_ops->mmap(NULL, 100, PROT_READ | PROT_WRITE,
                                      MAP_SHARED, m_fd, handle));
    void *p = m_ops->mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
                          m_fd, handle);
    ASSERT_NE(MAP_FAILED, p);
    EXPECT_EQ(MAP_FAILED, m_ops->mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                      MAP_SHARED, m_fd, handle));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(MAP_FAILED, m_ops->mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                      MAP_SHARED, m_fd, handle + 4096));

    memset(&args, 0, sizeof(args));
    args.in.op        = HL_CB_OP_INFO;
    args.in.cb_handle = handle;
    args.in.flags     = HL_CB_FLAGS_GET_DEVICE_VA;
    ASSERT_EQ(0, ioctl_err(m_fd, UCT_GAUDI_IOC_CB, &args));
    EXPECT_NE(0u, args.out.device_va);

    EXPECT_EQ(0, m_ops->munmap(p, 4096));
    p = m_ops->mmap(NULL, 4096, PROT_READ, MAP_SHARED, m_fd, handle);
    EXPECT_NE(MAP_FAILED, p);

    memset(&args, 0, sizeof(args));
    args.in.op        = HL_CB_OP_DESTROY;
    args.in.cb_handle = handle;
    EXPECT_EQ(0, ioctl_err(m_fd, UCT_GAUDI_IOC_CB, &args));
    EXPECT_EQ(EINVAL, ioctl_err(m_fd, UCT_GAUDI_IOC_CB, &args));
    m_ops->munmap(p, 4096);
}

TEST_F(emu_cs, gaudi3_rejects_cs) {
    m_cfg.asic = UCT_GAUDI_ASIC_GAUDI3;
    open_ok();

    uint64_t seq;
    EXPECT_EQ(EINVAL, submit_raw(24, &seq, 0));
}

TEST_F(emu_cs, freed_memory_reads_zero) {
    open_ok();

    std::vector<uint8_t> buf(8192, 0x77);
    uint64_t h, va, hva, seq;
    ASSERT_EQ(0, map_host(m_fd, buf.data(), buf.size(), &hva));

    ASSERT_NO_FATAL_FAILURE(alloc_map(m_fd, 2 << 20, &h, &va));
    ASSERT_EQ(0, dma(hva, va, buf.size(), &seq));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
    ASSERT_EQ(0, unmap(m_fd, va));
    ASSERT_EQ(0, free_handle(m_fd, h));

    /* first fit: the same pages again, given back to the file system */
    ASSERT_NO_FATAL_FAILURE(alloc_map(m_fd, 2 << 20, &h, &va));
    ASSERT_EQ(0, dma(va, hva, buf.size(), &seq));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
    EXPECT_EQ(0, buf[0]);
    EXPECT_EQ(0, buf[8191]);
}

/* Gaudi2's EDMA engines move data inside the device: a host-range VA (host
 * memory, or a peer's BAR imported by op 99) faults there; the PCI DMA
 * engines reach it */
TEST_F(emu_cs, edma_reaches_only_device_memory) {
    m_cfg.page_fault_cs_only = 1;   /* each fault, not the reset after one */
    open_ok();

    const uint32_t edma = GAUDI2_QUEUE_ID_DCORE0_EDMA_0_0;
    std::vector<uint8_t> host(8192, 3);
    uint64_t h_va, seq;
    int err;

    ASSERT_EQ(0, map_host(m_fd, host.data(), host.size(), &h_va));
    uint64_t a = dev_buffer(1 << 20);
    uint64_t b = dev_buffer(1 << 20);

    ASSERT_EQ(0, dma(a, b, 4096, &seq, false, edma));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
    ASSERT_EQ(0, dma(0x5a, b, 4096, &seq, true, edma));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));

    ASSERT_EQ(0, dma(h_va, b, 4096, &seq, false, edma));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_ABORTED, wait_done(seq, &err));
    EXPECT_EQ(EIO, err);
    ASSERT_EQ(0, dma(a, h_va, 4096, &seq, false, edma));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_ABORTED, wait_done(seq, &err));
    ASSERT_EQ(0, dma(0, h_va, 4096, &seq, true, edma));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_ABORTED, wait_done(seq, &err));

    /* the PCI DMA engines reach host memory */
    ASSERT_EQ(0, dma(h_va, b, 4096, &seq, false, GAUDI2_QUEUE_ID_PDMA_0_0));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
    ASSERT_EQ(0, dma(b, h_va, 4096, &seq, false, GAUDI2_QUEUE_ID_PDMA_1_0));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
    EXPECT_EQ(3, host[100]);
}
