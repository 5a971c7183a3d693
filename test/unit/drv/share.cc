/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/* DMA-BUF export, import (op 99) probing, and deferred release of exported
 * memory that is still imported (gaudi_share.h, gaudi_mem.h) */

#include "drv_test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <thread>
#include <vector>

extern "C" {
#include <uct/gaudi/drv/gaudi_dma.h>
#include <uct/gaudi/drv/gaudi_share.h>
#include <uct/gaudi/seam/gaudi_emu.h>
}

using namespace gaudi_drv_test;


static const size_t MB = 1ul << 20;


static void check_export_import(uct_gaudi_dev_t *dev, log_capture &log,
                                const char *asic, const char *abi)
{
    uct_gaudi_export_t exp;
    uct_gaudi_mem_t mem;
    uint64_t dva;

    ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 3 * MB, &mem));

    /* any range inside exports the whole allocation; the 6.1 handle form
     * has no offset: there it is the whole chunk the allocation is in */
    ASSERT_EQ(UCS_OK, uct_gaudi_share_export(dev, mem.dva + 4096, 100, &exp))
            << asic << "/" << abi;
    EXPECT_GE(exp.fd, 0);
    if (std::string(asic) == "gaudi2" && std::string(abi) == "misc") {
        EXPECT_EQ(mem.chunk_dva, exp.base);
        EXPECT_EQ(mem.chunk_length, exp.length);
    } else {
        EXPECT_EQ(mem.dva, exp.base);
        EXPECT_EQ(mem.length, exp.length);
    }

    /* not an allocation of this process: refused, naming the problem */
    {
        uct_gaudi_export_t bad;

        log.clear();
        EXPECT_EQ(UCS_ERR_INVALID_ADDR,
                  uct_gaudi_share_export(dev, mem.dva + mem.length, 1, &bad));
        EXPECT_EQ(1u, log.count("not inside a device allocation"));
    }

    /* the emulator imports like the out-of-tree driver by default, which
     * speaks the DRM generation; elsewhere the exporter's own fd is the
     * reference that pins the memory */
    EXPECT_EQ(std::string(abi) == "drm", !!uct_gaudi_share_can_import(dev));
    if (uct_gaudi_share_can_import(dev)) {
        ASSERT_EQ(UCS_OK, uct_gaudi_share_import(dev, exp.fd, exp.length,
                                               &dva));
        EXPECT_NE(0u, dva);
        close(exp.fd);
        exp.fd = -1;
    }

    /* exported by its MAP VA and imported: the driver refuses the UNMAP;
     * exported by its handle (6.1): the UNMAP succeeds, the FREE is refused
     * while the DMA-BUF is referenced. Either way the chunk's release is
     * deferred and retried, not an error (Gaudi1's physical form pins
     * nothing the driver knows of) */
    EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
    if (std::string(asic) == "gaudi2") {
        EXPECT_EQ(1u, dev->mem->num_deferred);
        EXPECT_EQ(1u, uct_gaudi_mem_retry_deferred(dev));
    }

    /* the importer (or the exporter's fd) lets go: the release goes
     * through */
    if (exp.fd < 0) {
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_unmap(dev, dva));
    } else {
        close(exp.fd);
    }
    EXPECT_EQ(0u, uct_gaudi_mem_retry_deferred(dev));
    EXPECT_EQ(0u, dev->mem->count);
}

TEST(drv_share, export_import_deferred_free) {
    static const char *variants[][2] = {
        {"gaudi2", "drm"}, {"gaudi2", "misc"}, {"gaudi1", "misc"}
    };
    emu_node node(2);   /* one state directory for the three of them */

    for (auto &v : variants) {
        node.run_with_device({{"UCX_GAUDI_EMU_ASIC", v[0]},
                              {"UCX_GAUDI_EMU_ABI", v[1]}},
                             [&](uct_gaudi_dev_t *dev, log_capture &log) {
            check_export_import(dev, log, v[0], v[1]);
        });
    }
}

TEST(drv_share, import_unsupported) {
    emu_node node(2);

    node.env("UCX_GAUDI_EMU_OOT_IMPORT", "n");
    node.run_with_device([](uct_gaudi_dev_t *dev, log_capture &) {
        uint64_t dva;

        EXPECT_FALSE(uct_gaudi_share_can_import(dev));
        EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_gaudi_share_import(dev, 0, MB,
                                                              &dva));
    });
}

TEST(drv_share, free_without_importer) {
    emu_node(2).run_with_device([](uct_gaudi_dev_t *dev, log_capture &) {
        uct_gaudi_export_t exp;
        uct_gaudi_mem_t mem;

        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        ASSERT_EQ(UCS_OK, uct_gaudi_share_export(dev, mem.dva, MB, &exp));
        close(exp.fd);  /* nobody holds the DMA-BUF: released at once */
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        EXPECT_EQ(0u, dev->mem->num_deferred);
    });
}

/* An allocation being freed is exported no more: gaudi_ipc exports when a
 * peer asks, on another thread, and an export made while the free runs
 * (here: from the free callback, which runs in that window) would not hold
 * the range back; a peer would keep a DMA-BUF of memory handed out again */
static uct_gaudi_dev_t *g_free_dev;
static ucs_status_t g_export_in_free = UCS_OK;

static void export_from_free_cb(void *arg, uint64_t dva, size_t length)
{
    uct_gaudi_export_t exp;

    g_export_in_free = uct_gaudi_share_export(g_free_dev, dva, length, &exp);
    if (g_export_in_free == UCS_OK) {
        close(exp.fd);
    }
}

TEST(drv_share, no_export_while_freed) {
    emu_node(2).run_with_device([](uct_gaudi_dev_t *dev, log_capture &) {
        gaudi_emu_stats_t stats;
        uint64_t base;
        size_t length;
        uct_gaudi_mem_t mem, found;

        g_free_dev = dev;
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        ASSERT_EQ(UCS_OK, uct_gaudi_share_prepare(dev, mem.dva, MB, &found,
                                                  &base, &length));
        uct_gaudi_mem_set_free_cb(dev, export_from_free_cb, NULL, 1.0);
        /* the refused export says so (in the test's log) */
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        uct_gaudi_mem_set_free_cb(dev, NULL, NULL, 0);
        EXPECT_NE(UCS_OK, g_export_in_free)
                << "an allocation was exported while it was freed";
        ASSERT_TRUE(emu_stats(&stats));
        EXPECT_EQ(0u, stats.exports);
    });
}

/* Allocations share a chunk (one ALLOC + MAP): each one's export carries its
 * offset in the chunk, so an importer reaches exactly that allocation */
TEST(drv_share, export_carries_chunk_offset) {
    emu_node(2).run_with_device([](uct_gaudi_dev_t *dev, log_capture &) {
        std::vector<uint8_t> pattern(8192), back(8192);
        uct_gaudi_mem_t a, b;
        uct_gaudi_export_t exp;
        uint64_t dva;
        size_t i;

        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 8192, &a));
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 8192, &b));
        ASSERT_EQ(a.chunk_dva, b.chunk_dva);
        ASSERT_NE(b.chunk_dva, b.dva);
        for (i = 0; i < pattern.size(); ++i) {
            pattern[i] = (uint8_t)(i * 7 + 1);
        }
        ASSERT_EQ(UCS_OK, uct_gaudi_dma_memset(dev, a.dva, 0xaa, a.length));
        ASSERT_EQ(UCS_OK, uct_gaudi_dma_copy_host(dev, (void*)b.dva,
                                                  pattern.data(),
                                                  pattern.size(),
                                                  UCT_GAUDI_DMA_H2D));

        ASSERT_EQ(UCS_OK, uct_gaudi_share_export(dev, b.dva, 8192, &exp));
        EXPECT_EQ(b.dva, exp.base);
        EXPECT_EQ(b.length, exp.length);
        ASSERT_EQ(UCS_OK, uct_gaudi_share_import(dev, exp.fd, exp.length,
                                               &dva));
        close(exp.fd);
        ASSERT_EQ(UCS_OK, uct_gaudi_dma_copy_host(dev, back.data(),
                                                  (void*)dva, back.size(),
                                                  UCT_GAUDI_DMA_D2H));
        EXPECT_EQ(pattern, back);

        /* freed while imported: kept out of reuse, the chunk stays */
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &b));
        EXPECT_EQ(1u, dev->mem->num_chunks);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 8192, &b));
        EXPECT_NE(exp.base, b.dva);
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &b));

        /* the last allocation goes: the chunk is released once the
         * importer lets go */
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &a));
        EXPECT_EQ(0u, dev->mem->num_chunks);
        EXPECT_EQ(1u, dev->mem->num_deferred);
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_unmap(dev, dva));
        EXPECT_EQ(0u, uct_gaudi_mem_retry_deferred(dev));
    });
}

/* Probing op 99 provokes an error line in the kernel log: never where the
 * ABI generation or sysfs already tells (only the out-of-tree driver has
 * it, it speaks the DRM generation, and it states a module version), and
 * at most once per process and device (probe.cc) */
TEST(drv_share, import_probe_is_quiet) {
    static const char *abis[] = {"misc", "trans", "drm"};

    for (const char *abi : abis) {
        emu_node node(1, "gaudi2", abi);

        node.env("UCX_GAUDI_EMU_OOT_IMPORT", "n");  /* upstream */
        node.run([&]() {
            gaudi_emu_stats_t stats;
            uct_gaudi_dev_t *dev;
            int i;

            for (i = 0; i < 2; ++i) {
                dev = acquire_device();
                ASSERT_TRUE(dev != NULL);
                EXPECT_FALSE(uct_gaudi_share_can_import(dev)) << abi;
                EXPECT_FALSE(uct_gaudi_share_can_import(dev)) << abi;
                uct_gaudi_own_release(dev);
            }

            ASSERT_TRUE(emu_stats(&stats));
            EXPECT_EQ(0u, stats.kernel_log_errors) << abi;
        });
    }
}

static void noop_free_cb(void *arg, uint64_t dva, size_t length)
{
}

/* The release of an adopted device (the runtime's fd, which stays open
 * after it) with a freed chunk a peer still holds: closing the fd would
 * drop it, keeping the fd open leaves it allocated in the application's
 * context. The release waits for the importer as long as the free
 * callback's owner gave it (here 5 s: it lets go after 0.2 s), and says so
 * when it never does (0.2 s). Before, the chunk was forgotten at once. */
TEST(drv_share, adopted_release_waits_for_importer) {
    static const struct {
        double   timeout;     /* the free callback's owner's */
        unsigned held_ms;     /* the importer lets go after it */
        unsigned dram_maps;   /* left in the application's context */
    } cases[] = {{5.0, 200, 0}, {0.2, 2000, 1}};

    for (const auto &test : cases) {
        emu_node(1).run([&test]() {
            gaudi_emu_stats_t stats;
            uct_gaudi_export_t exp;
            uct_gaudi_dev_t *dev;
            uct_gaudi_mem_t mem;
            log_capture log;
            int app_fd;

            dev = acquire_adopted(0, &app_fd);
            ASSERT_TRUE(dev != NULL);
            uct_gaudi_mem_set_free_cb(dev, noop_free_cb, NULL, test.timeout);
            ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
            ASSERT_EQ(UCS_OK, uct_gaudi_share_export(dev, mem.dva, MB, &exp));
            EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
            EXPECT_EQ(1u, dev->mem->num_deferred);
            uct_gaudi_mem_set_free_cb(dev, NULL, NULL, 0); /* MD closed */

            /* the exporter's DMA-BUF fd stands for the importer */
            std::thread importer([&]() {
                usleep(test.held_ms * 1000);
                close(exp.fd);
            });
            uct_gaudi_own_release(dev);
            importer.join();

            ASSERT_TRUE(emu_stats(&stats));
            EXPECT_EQ(test.dram_maps, stats.dram_maps) << test.timeout;
            EXPECT_EQ(test.dram_maps,
                      log.count("stay allocated in the application's "
                                "context"));
            close(app_fd);
        });
    }
}
