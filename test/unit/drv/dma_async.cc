/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "drv_test.h"

#include <ucs/time/time.h>
#include <uct/api/uct.h>
#include <climits>

using namespace gaudi_drv_test;

/*
 * The asynchronous DMA engine (channels): posting, completion in progress,
 * batching, back-pressure and failures mid-stream, over the emulator.
 */

static const size_t MB = 1ul << 20;


namespace {

/* A completion that counts its invocations and keeps the last status */
struct test_comp {
    uct_completion_t super;
    unsigned         calls;

    test_comp() : calls(0) {
        super.func   = done;
        super.count  = 1;
        super.status = UCS_OK;
    }

    static void done(uct_completion_t *self) {
        ++ucs_container_of(self, test_comp, super)->calls;
    }

    /* re-arm for another operation */
    void reset() {
        calls        = 0;
        super.count  = 1;
        super.status = UCS_OK;
    }
};

/* Host memory mapped for the device, unmapped at destruction */
struct host_buf {
    uct_gaudi_dev_t      *dev;
    std::vector<uint8_t> data;
    uint64_t             dva;

    host_buf(uct_gaudi_dev_t *d, size_t size, uint8_t fill) :
        dev(d), data(size, fill), dva(0) {
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_map_host(dev, data.data(), size,
                                                 &dva));
    }

    ~host_buf() {
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_unmap(dev, dva));
    }
};

void fill_pattern(uint8_t *buf, size_t length, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 7;
    size_t i;

    for (i = 0; i < length; ++i) {
        x      = x * 1103515245u + 12345u;
        buf[i] = x >> 16;
    }
}

/* Progress until @a comp was invoked (bounded by the DMA timeout) */
void wait_comp(uct_gaudi_dma_chan_t *chan, test_comp &comp)
{
    while (comp.calls == 0) {
        uct_gaudi_dma_chan_progress(chan, UINT_MAX);
    }
}

/* Post one copy and wait for it; returns the completion status */
ucs_status_t chan_copy(uct_gaudi_dma_chan_t *chan, uint64_t dst, uint64_t src,
                       size_t length)
{
    uct_gaudi_dma_xfer_t xfer = {dst, src, length};
    test_comp comp;
    ucs_status_t status;

    status = uct_gaudi_dma_chan_post(chan, &xfer, 1, &comp.super);
    if (status != UCS_INPROGRESS) {
        return status;
    }

    wait_comp(chan, comp);
    EXPECT_EQ(1u, comp.calls);
    return comp.super.status;
}

/* host -> device -> device -> host on one channel, from and to unaligned
 * host offsets; byte exact, nothing written around the destination */
void check_three_directions(uct_gaudi_dev_t *dev, uct_gaudi_dma_chan_t *chan,
                            size_t length, unsigned src_off, unsigned dst_off)
{
    host_buf src(dev, length + 64, 0), dst(dev, length + 64, 0xee);
    uct_gaudi_mem_t a, b;

    fill_pattern(&src.data[src_off], length, (unsigned)length);
    ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, length, &a));
    ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, length, &b));
    EXPECT_EQ(UCS_OK, chan_copy(chan, a.dva, src.dva + src_off, length));
    EXPECT_EQ(UCS_OK, chan_copy(chan, b.dva, a.dva, length));
    EXPECT_EQ(UCS_OK, chan_copy(chan, dst.dva + dst_off, b.dva, length));
    EXPECT_EQ(0, memcmp(&src.data[src_off], &dst.data[dst_off], length))
            << "length " << length;
    EXPECT_EQ(0xee, dst.data[dst_off + length]);
    if (dst_off > 0) {
        EXPECT_EQ(0xee, dst.data[dst_off - 1]);
    }

    EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &a));
    EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &b));
}

/* One MB of device memory, a channel of @a depth submissions (of up to 4
 * packets) and a copy of @a length bytes from the memory's first half to
 * its second: a stream of the same copy, posted again and again */
struct copy_stream {
    uct_gaudi_dma_chan_t chan = {};
    uct_gaudi_dma_xfer_t xfer = {};
    uct_gaudi_mem_t      mem  = {};

    /* ASSERT-style: check HasFatalFailure() after */
    void open(uct_gaudi_dev_t *dev, unsigned depth, size_t length) {
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        ASSERT_EQ(UCS_OK, uct_gaudi_dma_chan_init(dev, depth, 4, &chan));
        xfer = {mem.dva + MB / 2, mem.dva, length};
    }

    /* Post the copy once for each of @a comps; ASSERT-style */
    void post(test_comp *comps, unsigned num) {
        for (unsigned i = 0; i < num; ++i) {
            ASSERT_EQ(UCS_INPROGRESS,
                      uct_gaudi_dma_chan_post(&chan, &xfer, 1,
                                              &comps[i].super)) << i;
        }
    }
};

/* Each of @a comps was called once, with success */
void expect_all_ok(const test_comp *comps, unsigned num)
{
    for (unsigned i = 0; i < num; ++i) {
        EXPECT_EQ(1u, comps[i].calls) << i;
        EXPECT_EQ(UCS_OK, comps[i].super.status) << i;
    }
}

void run_directions(const char *asic, const char *exec)
{
    emu_node(1, asic, "drm", exec).run_with_device(
            [](uct_gaudi_dev_t *dev, log_capture &) {
        static const size_t sizes[] = {1, 3, 4095, 4097, MB + 3, 64 * MB};
        uct_gaudi_dma_chan_t chan;
        unsigned i;

        ASSERT_EQ(UCS_OK, uct_gaudi_dma_chan_init(dev, 8, 16, &chan));
        for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
            check_three_directions(dev, &chan, sizes[i], i % 8,
                                   (i * 5 + 3) % 8);
        }

        /* every direction was used and counted */
        EXPECT_EQ(6u, chan.counters.posted[UCT_GAUDI_DMA_H2D]);
        EXPECT_EQ(6u, chan.counters.posted[UCT_GAUDI_DMA_D2D]);
        EXPECT_EQ(6u, chan.counters.posted[UCT_GAUDI_DMA_D2H]);
        EXPECT_EQ(chan.counters.bytes[UCT_GAUDI_DMA_H2D],
                  chan.counters.bytes[UCT_GAUDI_DMA_D2H]);
        EXPECT_EQ(0u, chan.counters.errors);
        EXPECT_TRUE(uct_gaudi_dma_chan_is_idle(&chan));
        uct_gaudi_dma_chan_cleanup(&chan);
    });
}

} /* namespace */


TEST(drv_dma_async, directions_gaudi2_thread) {
    run_directions("gaudi2", "thread");
}

TEST(drv_dma_async, directions_gaudi2_inline) {
    run_directions("gaudi2", "inline");
}

TEST(drv_dma_async, directions_gaudi1) {
    run_directions("gaudi1", "thread");
}

/* Several copies in one submission, and a batch too large for a CB */
TEST(drv_dma_async, batching) {
    emu_node(1).run_with_device([](uct_gaudi_dev_t *dev, log_capture &) {
        const size_t piece = 1000;
        uct_gaudi_dma_xfer_t xfers[10], too_many[17];
        uct_gaudi_dma_chan_t chan;
        uct_gaudi_mem_t mem;
        test_comp comp;
        uint64_t num_cs;
        unsigned i;

        host_buf src(dev, 10 * piece, 0), dst(dev, 10 * piece, 0);
        fill_pattern(src.data.data(), src.data.size(), 3);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 10 * piece, &mem));
        ASSERT_EQ(UCS_OK, uct_gaudi_dma_chan_init(dev, 4, 16, &chan));

        /* scatter in reverse order, gather back in order */
        for (i = 0; i < 10; ++i) {
            xfers[i] = {mem.dva + (9 - i) * piece, src.dva + i * piece,
                        piece};
        }
        num_cs = chan.counters.num_cs;
        ASSERT_EQ(UCS_INPROGRESS,
                  uct_gaudi_dma_chan_post(&chan, xfers, 10, &comp.super));
        EXPECT_EQ(num_cs + 1, chan.counters.num_cs);
        wait_comp(&chan, comp);
        EXPECT_EQ(UCS_OK, comp.super.status);

        for (i = 0; i < 10; ++i) {
            xfers[i] = {dst.dva + (9 - i) * piece, mem.dva + i * piece,
                        piece};
        }
        comp.reset();
        ASSERT_EQ(UCS_INPROGRESS,
                  uct_gaudi_dma_chan_post(&chan, xfers, 10, &comp.super));
        wait_comp(&chan, comp);
        EXPECT_EQ(UCS_OK, comp.super.status);
        for (i = 0; i < src.data.size(); ++i) {
            ASSERT_EQ(src.data[i], dst.data[i]) << "first difference at " << i;
        }
        EXPECT_EQ(num_cs + 2, chan.counters.num_cs);

        /* more packets than a command buffer holds: refused, not cut */
        for (i = 0; i < 17; ++i) {
            too_many[i] = {mem.dva, src.dva, 1};
        }
        EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
                  uct_gaudi_dma_chan_post(&chan, too_many, 17, NULL));
        /* zero-length copies need no submission */
        xfers[0].length = 0;
        EXPECT_EQ(UCS_OK, uct_gaudi_dma_chan_post(&chan, xfers, 1, NULL));

        uct_gaudi_dma_chan_cleanup(&chan);
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
    });
}

/* A copy longer than one packet may move is split into several packets of
 * one submission (the ASIC's limit, 4 GiB - 1, is lowered for the test) */
TEST(drv_dma_async, splitting) {
    emu_node(1).run_with_device([](uct_gaudi_dev_t *dev, log_capture &) {
        const size_t length = 5 * 4096 + 17;
        uct_gaudi_dma_chan_t chan;
        uct_gaudi_mem_t mem;
        uint64_t num_cs;

        host_buf src(dev, length, 0), dst(dev, length, 0);
        fill_pattern(src.data.data(), length, 11);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, length, &mem));
        ASSERT_EQ(UCS_OK, uct_gaudi_dma_chan_init(dev, 2, 6, &chan));
        chan.max_tsize = 4096;
        num_cs         = chan.counters.num_cs;
        EXPECT_EQ(UCS_OK, chan_copy(&chan, mem.dva, src.dva, length));
        EXPECT_EQ(UCS_OK, chan_copy(&chan, dst.dva, mem.dva, length));
        EXPECT_EQ(num_cs + 2, chan.counters.num_cs);
        EXPECT_EQ(src.data, dst.data);
        /* 7 packets do not fit a command buffer of 6 */
        EXPECT_EQ(UCS_ERR_EXCEEDS_LIMIT,
                  chan_copy(&chan, mem.dva, src.dva, 6 * 4096 + 1));
        uct_gaudi_dma_chan_cleanup(&chan);
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
    });
}

/* A full channel and a full driver queue are back-pressure: the post
 * returns UCS_ERR_NO_RESOURCE at once, and goes through after progress */
TEST(drv_dma_async, back_pressure) {
    emu_node node(1);

    /* every CS takes 50 ms, so two of them keep the channel full */
    node.env("UCX_GAUDI_EMU_LATENCY", "50ms");
    /* the driver's queue is full for the 3rd submission ioctl */
    node.env("UCX_GAUDI_EMU_FAULTS", "fail:cs:3:EAGAIN");
    node.run_with_device([](uct_gaudi_dev_t *dev, log_capture &log) {
        test_comp comps[3];
        copy_stream s;

        ASSERT_NO_FATAL_FAILURE(s.open(dev, 2, MB / 2));
        ASSERT_NO_FATAL_FAILURE(s.post(comps, 2));
        EXPECT_EQ(UCS_ERR_NO_RESOURCE,
                  uct_gaudi_dma_chan_post(&s.chan, &s.xfer, 1,
                                          &comps[2].super));
        EXPECT_EQ(0u, comps[2].calls);
        EXPECT_EQ(1u, s.chan.counters.no_resource);

        /* room in the channel, but the driver's queue is full */
        wait_comp(&s.chan, comps[0]);
        EXPECT_EQ(UCS_ERR_NO_RESOURCE,
                  uct_gaudi_dma_chan_post(&s.chan, &s.xfer, 1,
                                          &comps[2].super));
        EXPECT_EQ(2u, s.chan.counters.no_resource);
        EXPECT_EQ(0u, comps[2].calls);
        ASSERT_NO_FATAL_FAILURE(s.post(&comps[2], 1));
        EXPECT_EQ(UCS_OK, uct_gaudi_dma_chan_wait(&s.chan));
        expect_all_ok(comps, 3);
        EXPECT_FALSE(dev->failed);
        EXPECT_TRUE(log.messages().empty()); /* back-pressure is no error */

        uct_gaudi_dma_chan_cleanup(&s.chan);
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &s.mem));
    });
}

/* UCX_GAUDI_DMA_TIMEOUT bounds how long the device may complete nothing,
 * not how long a submission waits behind others (the driver's TDR starts
 * when the CS before ends): 8 submissions of 80 ms each, the last ending
 * 640 ms after it was posted, under a 200 ms timeout, all succeed. Failed
 * before (issue 28: a loaded machine failed a device whose copies still
 * moved). */
TEST(drv_dma_async, timeout_counts_from_progress) {
    emu_node node(1);

    node.env("UCX_GAUDI_EMU_LATENCY", "80ms");
    node.env("UCX_GAUDI_DMA_TIMEOUT", "0.2s");
    node.run_with_device([](uct_gaudi_dev_t *dev, log_capture &) {
        const unsigned num = 8;
        test_comp comps[num];
        copy_stream s;

        ASSERT_NO_FATAL_FAILURE(s.open(dev, num, 4096));
        ucs_time_t start = ucs_get_time();
        ASSERT_NO_FATAL_FAILURE(s.post(comps, num));

        EXPECT_EQ(UCS_OK, uct_gaudi_dma_chan_wait(&s.chan));
        /* the modelled time passed: the last one did wait > the timeout */
        EXPECT_GE(ucs_time_to_sec(ucs_get_time() - start), 0.6);
        expect_all_ok(comps, num);
        EXPECT_FALSE(dev->failed) << dev->fail_reason;
        uct_gaudi_dma_chan_cleanup(&s.chan);
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &s.mem));
    });
}

/* A CS aborted in the middle of a stream: its completion and every later
 * one report an error (none reports success for a copy that did not
 * happen), nothing hangs, and the device reports the failure afterwards */
TEST(drv_dma_async, abort_mid_stream) {
    emu_node node(1);

    node.env("UCX_GAUDI_EMU_LATENCY", "10ms");
    /* every CS from the third on is aborted, as a device whose CS aborts
     * does not run the ones behind it either. With only the third aborted,
     * the emulator's worker went on to run the later ones, reading their
     * CBs from host memory that the cleanup below had freed (an ASan
     * use-after-free in a fresh root): the emulator pins host memory only
     * by reference (docs/emulator.md §11) */
    node.env("UCX_GAUDI_EMU_FAULTS", "cs_abort:3+");
    node.run_with_device([](uct_gaudi_dev_t *dev, log_capture &) {
        const unsigned num = 6;
        test_comp comps[num];
        unsigned i, ok = 0, failed = 0;
        copy_stream s;

        ASSERT_NO_FATAL_FAILURE(s.open(dev, num, MB / 2));
        ASSERT_NO_FATAL_FAILURE(s.post(comps, num));

        EXPECT_EQ(UCS_ERR_IO_ERROR, uct_gaudi_dma_chan_wait(&s.chan));
        for (i = 0; i < num; ++i) {
            EXPECT_EQ(1u, comps[i].calls) << i;
            if (comps[i].super.status == UCS_OK) {
                ++ok;
                EXPECT_EQ(failed, 0u) << "success after a failure: " << i;
            } else {
                ++failed;
            }
        }
        EXPECT_EQ(2u, ok);
        EXPECT_EQ(num - 2, failed);
        EXPECT_TRUE(dev->failed);
        EXPECT_EQ(UCS_ERR_IO_ERROR,
                  uct_gaudi_dma_chan_post(&s.chan, &s.xfer, 1, NULL));
        EXPECT_EQ(UCS_ERR_IO_ERROR, uct_gaudi_dma_copy(dev, s.mem.dva + 1,
                                                       s.mem.dva, 1));
        uct_gaudi_dma_chan_cleanup(&s.chan);
    });
}

/* Gaudi3 has no public DMA path: ownership refuses it and says why */
/* One channel's submission stays unreaped while another channel pushes
 * more than the driver's fence window (64 on Gaudi2) through the same
 * context: its fence is gone when it is polled. It completed (the device
 * is operational), its data moved, and it is counted as such. */
TEST(drv_dma_async, fence_gone_gaudi2) {
    emu_node(1, "gaudi2", "drm", "thread").run_with_device(
            [](uct_gaudi_dev_t *dev, log_capture &) {
        uct_gaudi_dma_chan_t a, b;
        test_comp comp;
        uct_gaudi_mem_t m;

        host_buf src(dev, 4096, 0x5a), dst(dev, 4096, 0);
        uct_gaudi_dma_xfer_t xfer = {dst.dva, src.dva, 4096};

        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 4096, &m));
        ASSERT_EQ(UCS_OK, uct_gaudi_dma_chan_init(dev, 4, 4, &a));
        ASSERT_EQ(UCS_OK, uct_gaudi_dma_chan_init(dev, 4, 4, &b));
        ASSERT_EQ(UCS_INPROGRESS,
                  uct_gaudi_dma_chan_post(&a, &xfer, 1, &comp.super));
        for (int i = 0; i < 80; ++i) {
            EXPECT_EQ(UCS_OK, chan_copy(&b, m.dva, src.dva, 4096));
        }

        wait_comp(&a, comp);
        EXPECT_EQ(UCS_OK, comp.super.status);
        EXPECT_EQ(1u, a.counters.gone);
        EXPECT_EQ(0u, a.counters.errors);
        EXPECT_EQ(std::vector<uint8_t>(4096, 0x5a), dst.data);
        uct_gaudi_dma_chan_cleanup(&a);
        uct_gaudi_dma_chan_cleanup(&b);
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &m));
    });
}

TEST(drv_dma_async, gaudi3_unsupported) {
    emu_node(1, "gaudi3").run([]() {
        expect_acquire_fails(UCS_ERR_UNSUPPORTED,
                             {"Gaudi3 DMA is not supported"});
    });
}
