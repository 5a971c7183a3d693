/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/* DMA-BUF export, import (op 99) probing, and deferred release of exported
 * memory that is still imported (gaudi_share.h, gaudi_mem.h) */

#include "base_common.h"

#include <stdlib.h>
#include <unistd.h>

extern "C" {
#include <uct/gaudi/base/gaudi_share.h>
}

using namespace gaudi_base_test;


static const size_t MB = 1ul << 20;


static void check_export_import(const char *asic, const char *abi)
{
    uct_gaudi_export_t exp;
    uct_gaudi_dev_t *dev;
    uct_gaudi_mem_t mem;
    uint64_t dva;

    dev = acquire_device();
    ASSERT_TRUE(dev != NULL);
    ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 3 * MB, &mem));

    /* any range inside exports the whole allocation */
    ASSERT_EQ(UCS_OK, uct_gaudi_mem_export(dev, mem.dva + 4096, 100, &exp))
            << asic << "/" << abi;
    EXPECT_GE(exp.fd, 0);
    EXPECT_EQ(mem.dva, exp.base);
    EXPECT_EQ(mem.length, exp.length);

    /* not an allocation of this process: refused, naming the problem */
    {
        log_capture log;
        uct_gaudi_export_t bad;

        EXPECT_EQ(UCS_ERR_INVALID_ADDR,
                  uct_gaudi_mem_export(dev, mem.dva + mem.length, 1, &bad));
        EXPECT_EQ(1u, log.count("not inside a device allocation"));
    }

    /* the emulator imports like the out-of-tree driver by default */
    ASSERT_TRUE(uct_gaudi_dev_can_import(dev));
    ASSERT_EQ(UCS_OK, uct_gaudi_mem_import(dev, exp.fd, exp.length, &dva));
    EXPECT_NE(0u, dva);

    /* exported by its MAP VA and imported: the driver refuses the UNMAP,
     * so the free is deferred, not an error (the 6.1 handle form and Gaudi1
     * physical form pin the memory, not the VA) */
    close(exp.fd);
    EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
    if (std::string(abi) == "drm") {
        EXPECT_EQ(1u, dev->mem.num_deferred);
        EXPECT_EQ(1u, uct_gaudi_mem_retry_deferred(dev));
    }

    /* the importer lets go: the release goes through */
    EXPECT_EQ(UCS_OK, uct_gaudi_mem_unmap(dev, dva));
    EXPECT_EQ(0u, uct_gaudi_mem_retry_deferred(dev));
    EXPECT_EQ(0u, dev->mem.count);
    uct_gaudi_dev_release(dev);
}

TEST(base_share, export_import_deferred_free) {
    static const char *variants[][2] = {
        {"gaudi2", "drm"}, {"gaudi2", "misc"}, {"gaudi1", "misc"}
    };
    state_dir dir;

    for (auto &v : variants) {
        run_in_child([&]() {
            set_emu_env(2, dir, v[0], v[1]);
            check_export_import(v[0], v[1]);
        });
    }
}

TEST(base_share, import_unsupported) {
    state_dir dir;

    run_in_child([&]() {
        uct_gaudi_dev_t *dev;
        uint64_t dva;

        set_emu_env(2, dir);
        setenv("UCX_GAUDI_EMU_OOT_IMPORT", "n", 1);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        EXPECT_FALSE(uct_gaudi_dev_can_import(dev));
        EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_gaudi_mem_import(dev, 0, MB, &dva));
        uct_gaudi_dev_release(dev);
    });
}

TEST(base_share, free_without_importer) {
    state_dir dir;

    run_in_child([&]() {
        uct_gaudi_export_t exp;
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;

        set_emu_env(2, dir);
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_export(dev, mem.dva, MB, &exp));
        close(exp.fd);  /* nobody holds the DMA-BUF: released at once */
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        EXPECT_EQ(0u, dev->mem.num_deferred);
        uct_gaudi_dev_release(dev);
    });
}
