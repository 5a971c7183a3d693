/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "drv_test.h"

#include <stdlib.h>

using namespace gaudi_drv_test;


static void fill_pattern(uint8_t *buf, size_t length, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    size_t i;

    for (i = 0; i < length; ++i) {
        x      = x * 1103515245u + 12345u;
        buf[i] = x >> 16;
    }
}

/* host -> device -> host, byte exact, from/to unaligned host buffers */
static void check_roundtrip(uct_gaudi_dev_t *dev, size_t length,
                            unsigned src_off, unsigned dst_off)
{
    std::vector<uint8_t> src(length + 64), dst(length + 64, 0xee);
    uct_gaudi_mem_t mem;

    fill_pattern(&src[src_off], length, length + src_off);
    ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, length, &mem));
    ASSERT_EQ(UCS_OK, uct_gaudi_dma_copy_host(dev, (void*)mem.dva,
                                              &src[src_off], length,
                                              UCT_GAUDI_DMA_H2D))
            << length;
    ASSERT_EQ(UCS_OK, uct_gaudi_dma_copy_host(dev, &dst[dst_off],
                                              (void*)mem.dva, length,
                                              UCT_GAUDI_DMA_D2H))
            << length;
    EXPECT_EQ(0, memcmp(&src[src_off], &dst[dst_off], length))
            << "length " << length << " offsets " << src_off << "/"
            << dst_off;
    /* nothing written around the destination */
    EXPECT_EQ(0xee, dst[dst_off + length]);
    if (dst_off > 0) {
        EXPECT_EQ(0xee, dst[dst_off - 1]);
    }
    EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
}

static void check_copies(uct_gaudi_dev_t *dev)
{
    static const size_t sizes[] = {1, 2, 7, 63, 4095, 4096, 4097, 65536,
                                   (1 << 20) + 3, 8 << 20, 64 << 20};
    unsigned i;

    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        check_roundtrip(dev, sizes[i], i % 8, (i * 3 + 1) % 8);
        if (::testing::Test::HasFailure()) {
            return;
        }
    }
}

static void check_memset_d2d(uct_gaudi_dev_t *dev)
{
    const size_t length = (3 << 20) + 5;
    std::vector<uint8_t> host(length), expect(length);
    uct_gaudi_mem_t a, b;

    ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, length, &a));
    ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, length, &b));

    /* memset, then a device -> device copy of part of it */
    ASSERT_EQ(UCS_OK, uct_gaudi_dma_memset(dev, a.dva, 0xa5, length));
    ASSERT_EQ(UCS_OK, uct_gaudi_dma_memset(dev, b.dva, 0, length));
    ASSERT_EQ(UCS_OK, uct_gaudi_dma_memset(dev, a.dva + 10, 0x3c, 1000));
    ASSERT_EQ(UCS_OK, uct_gaudi_dma_copy(dev, b.dva + 1, a.dva, length - 1));
    ASSERT_EQ(UCS_OK, uct_gaudi_dma_copy_host(dev, host.data(), (void*)b.dva,
                                              length, UCT_GAUDI_DMA_D2H));

    memset(expect.data(), 0xa5, length);
    memset(&expect[10], 0x3c, 1000);
    memmove(&expect[1], &expect[0], length - 1);
    expect[0] = 0;
    EXPECT_EQ(0, memcmp(expect.data(), host.data(), length));

    /* D2D through the host-copy helper */
    ASSERT_EQ(UCS_OK, uct_gaudi_dma_copy_host(dev, (void*)a.dva,
                                              (void*)b.dva, length,
                                              UCT_GAUDI_DMA_D2D));
    ASSERT_EQ(UCS_OK, uct_gaudi_dma_copy_host(dev, host.data(), (void*)a.dva,
                                              length, UCT_GAUDI_DMA_D2H));
    EXPECT_EQ(0, memcmp(expect.data(), host.data(), length));

    /* zero length is a no-op */
    EXPECT_EQ(UCS_OK, uct_gaudi_dma_copy(dev, a.dva, b.dva, 0));
    EXPECT_EQ(UCS_OK, uct_gaudi_dma_memset(dev, a.dva, 1, 0));

    EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &a));
    EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &b));
}

static void run_dma_suite(const char *asic, const char *abi, const char *exec)
{
    state_dir dir;

    run_in_child([&]() {
        uct_gaudi_dev_t *dev;
        uint64_t num_cs;

        set_emu_env(1, dir, asic, abi, exec);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        num_cs = dev->dma->num_cs;
        check_copies(dev);
        check_memset_d2d(dev);
        /* every copy went through a command submission */
        EXPECT_GE(dev->dma->num_cs - num_cs, 22u);
        uct_gaudi_own_release(dev);
    });
}

/* A Gaudi2 whose binning left EDMA engines out: device-to-device copies
 * use an engine it has (the driver refuses the queues of a missing one),
 * or PDMA when it has none */
static void run_binned_edma(const char *disabled, uint32_t expect_queue)
{
    state_dir dir;

    run_in_child([&]() {
        uct_gaudi_dev_t *dev;

        set_emu_env(1, dir, "gaudi2", "drm", "thread");
        setenv("UCX_GAUDI_EMU_EDMA_DISABLE", disabled, 1);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        EXPECT_EQ(0xFFu & ~(uint32_t)strtoul(disabled, NULL, 0),
                  dev->info->edma_mask);
        EXPECT_EQ(expect_queue, dev->dma->queue[UCT_GAUDI_DMA_D2D]);
        check_memset_d2d(dev);
        uct_gaudi_own_release(dev);
    });
}

TEST(drv_dma, gaudi2_binned_edma) {
    run_binned_edma("1", GAUDI2_QUEUE_ID_DCORE0_EDMA_0_0 + 4);
    run_binned_edma("7", GAUDI2_QUEUE_ID_DCORE1_EDMA_0_0 + 4);
    run_binned_edma("255", GAUDI2_QUEUE_ID_PDMA_0_1);
}

TEST(drv_dma, gaudi2_thread) {
    run_dma_suite("gaudi2", "drm", "thread");
}

TEST(drv_dma, gaudi2_inline) {
    run_dma_suite("gaudi2", "trans", "inline");
}

TEST(drv_dma, gaudi1) {
    run_dma_suite("gaudi1", "misc", "thread");
}

TEST(drv_dma, host_to_host_through_device) {
    state_dir dir;

    run_in_child([&]() {
        std::vector<uint8_t> src(10000), dst(10000, 0);
        uint64_t src_dva, dst_dva;
        uct_gaudi_dev_t *dev;

        set_emu_env(1, dir);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        fill_pattern(src.data(), src.size(), 5);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_map_host(dev, src.data(), src.size(),
                                                 &src_dva));
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_map_host(dev, dst.data(), dst.size(),
                                                 &dst_dva));
        ASSERT_EQ(UCS_OK, uct_gaudi_dma_copy(dev, dst_dva, src_dva,
                                             src.size()));
        EXPECT_EQ(src, dst);
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_unmap(dev, src_dva));
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_unmap(dev, dst_dva));
        uct_gaudi_own_release(dev);
    });
}
