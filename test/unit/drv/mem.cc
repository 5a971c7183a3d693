/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "drv_test.h"

#include <sys/mman.h>
#include <sys/statfs.h>

#include <stdlib.h>

#include <algorithm>
#include <utility>
#include <vector>

extern "C" {
#include <ucs/memory/memtype_cache.h>
}

using namespace gaudi_drv_test;


static const size_t MB   = 1ul << 20;
static const size_t PAGE = 4096;


/* The size of the @a i th of many small allocations: 1 to 30001 bytes */
static size_t small_size(unsigned i)
{
    return 1 + (i % 7) * 5000;
}

/* Fill @a mems with small allocations; ASSERT-style */
static void alloc_small(uct_gaudi_dev_t *dev,
                        std::vector<uct_gaudi_mem_t> &mems)
{
    for (unsigned i = 0; i < mems.size(); ++i) {
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, small_size(i), &mems[i]))
                << i;
    }
}

/* Free each of @a mems; ASSERT-style */
static void free_all(uct_gaudi_dev_t *dev, std::vector<uct_gaudi_mem_t> &mems)
{
    for (uct_gaudi_mem_t &mem : mems) {
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
    }
}

/* The whole HBM in one allocation (nothing else is allocated), freed */
static void alloc_whole(uct_gaudi_dev_t *dev)
{
    uct_gaudi_mem_t big;

    ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, dev->info->dram_size, &big));
    EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &big));
}

static void check_alloc_free(uct_gaudi_dev_t *dev)
{
    uct_gaudi_mem_t mem1, mem2;
    size_t alloc_length;
    uint64_t base;

    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_gaudi_mem_alloc(dev, 0, &mem1));

    ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 1, &mem1));
    ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 3 * MB + 1, &mem2));
    EXPECT_EQ(PAGE, mem1.length);
    EXPECT_EQ(3 * MB + PAGE, mem2.length);
    EXPECT_EQ(0u, mem1.dva % PAGE);
    EXPECT_EQ(0u, mem2.dva % PAGE);
    EXPECT_NE(mem1.dva, mem2.dva);
    EXPECT_TRUE((mem1.dva + mem1.length <= mem2.dva) ||
                (mem2.dva + mem2.length <= mem1.dva));

    /* lookup: inside one allocation only */
    ASSERT_EQ(UCS_OK, uct_gaudi_mem_lookup(dev, mem2.dva + 100, 1000, &base,
                                           &alloc_length));
    EXPECT_EQ(mem2.dva, base);
    EXPECT_EQ(mem2.length, alloc_length);
    EXPECT_EQ(UCS_OK, uct_gaudi_mem_lookup(dev, mem2.dva, mem2.length, &base,
                                           &alloc_length));
    EXPECT_EQ(UCS_ERR_NO_ELEM,
              uct_gaudi_mem_lookup(dev, mem2.dva + mem2.length - 1, 2, &base,
                                   &alloc_length));
    EXPECT_EQ(UCS_ERR_NO_ELEM,
              uct_gaudi_mem_lookup(dev, 0x10000, 1, &base, &alloc_length));
    EXPECT_TRUE(uct_gaudi_mem_is_device_address(dev, mem1.dva, mem1.length));
    EXPECT_FALSE(uct_gaudi_mem_is_device_address(dev, (uintptr_t)&base, 8));

    EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem1));
    EXPECT_EQ(UCS_ERR_NO_ELEM, uct_gaudi_mem_lookup(dev, mem1.dva, 1, &base,
                                                    &alloc_length));

    /* a double free, or a range never allocated, is refused */
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_gaudi_mem_free(dev, &mem1));
    mem1.dva     = mem2.dva + 2 * MB;
    mem1.length  = 2 * MB;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_gaudi_mem_free(dev, &mem1));
    EXPECT_EQ(UCS_OK, uct_gaudi_mem_lookup(dev, mem2.dva, mem2.length, &base,
                                           &alloc_length));
    EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem2));
    EXPECT_EQ(0u, dev->mem->count);
}

TEST(drv_mem, gaudi2_alloc_free) {
    emu_node(2).run_with_device([](uct_gaudi_dev_t *dev, log_capture &) {
        uct_gaudi_mem_t mem;

        check_alloc_free(dev);

        /* device VAs and handles, not host pointers */
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        EXPECT_NE(0u, mem.handle);
        EXPECT_GE(mem.dva, dev->info->dram_base);
        EXPECT_GE(mem.dva, 1ull << 47);
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
    });
}

TEST(drv_mem, gaudi1_alloc_free) {
    emu_node(2, "gaudi1", "misc").run_with_device(
            [](uct_gaudi_dev_t *dev, log_capture &) {
        ucs_memory_info_t mem_info;
        uct_gaudi_mem_t mem;

        EXPECT_FALSE(dev->memtype_range); /* physical: could be host VAs */
        check_alloc_free(dev);

        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        EXPECT_EQ(0u, mem.handle);
        EXPECT_EQ(dev->info->dram_base, mem.dva); /* first fit */

        /* registered in the memtype cache per allocation */
        ASSERT_EQ(UCS_OK, ucs_memtype_cache_lookup((void*)(mem.dva + 64), 64,
                                                   &mem_info));
        EXPECT_EQ(UCS_MEMORY_TYPE_GAUDI, mem_info.type);
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        EXPECT_EQ(UCS_ERR_NO_ELEM,
                  ucs_memtype_cache_lookup((void*)(mem.dva + 64), 64,
                                           &mem_info));
    });
}

TEST(drv_mem, out_of_memory) {
    static const char *asics[] = {"gaudi2", "gaudi1"};

    for (const char *asic : asics) {
        emu_node(2, asic).run_with_device(
                [&](uct_gaudi_dev_t *dev, log_capture &log) {
            uct_gaudi_mem_t mem, big;
            size_t dram_size;

            dram_size = dev->info->dram_size;
            EXPECT_EQ(UCS_ERR_NO_MEMORY,
                      uct_gaudi_mem_alloc(dev, dram_size + 1, &mem)) << asic;
            EXPECT_GE(log.messages().size(), 1u);

            /* all of it, then nothing more */
            ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, dram_size, &big));
            EXPECT_EQ(UCS_ERR_NO_MEMORY, uct_gaudi_mem_alloc(dev, MB, &mem));
            EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &big));
            ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
            EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        });
    }
}

/* The 96 GiB Gaudi2 has 6 functional HBMs: pages of 768 MiB. Nothing in
 * the driver library assumes 640 */
TEST(drv_mem, gaudi2_96g_pages) {
    static const unsigned count = 2000;
    emu_node node(1);

    node.env("UCX_GAUDI_EMU_HBM_SIZE", "96G");
    node.run_with_device([](uct_gaudi_dev_t *dev, log_capture &) {
        std::vector<uct_gaudi_mem_t> mems(count);
        uct_gaudi_mem_t big;

        ASSERT_EQ(768 * MB, dev->info->alloc_page_size);
        ASSERT_NO_FATAL_FAILURE(alloc_small(dev, mems));
        EXPECT_EQ(1u, dev->mem->num_chunks);

        /* 700 MiB fits one 768 MiB page (it took two 640 MiB ones) */
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 700 * MB, &big));
        EXPECT_EQ(768 * MB, big.chunk_length);
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &big));
        ASSERT_NO_FATAL_FAILURE(free_all(dev, mems));
        EXPECT_EQ(0u, dev->mem->num_chunks);

        /* the whole 96 GiB in one allocation */
        ASSERT_EQ(96ull << 30, dev->info->dram_size);
        alloc_whole(dev);
    });
}

/* Gaudi2 allocates HBM in pages of 16 x functional HBMs x 8 MiB (640 MiB
 * here): thousands of small buffers must share a few of them */
TEST(drv_mem, thousands_of_small_allocations) {
    static const unsigned count = 5000;

    emu_node(2).run_with_device([](uct_gaudi_dev_t *dev, log_capture &) {
        std::vector<uct_gaudi_mem_t> mems(count);
        std::vector<std::pair<uint64_t, size_t>> ranges;
        uct_gaudi_mem_t big;
        unsigned i;

        ASSERT_EQ(640 * MB, dev->info->alloc_page_size);
        ASSERT_NO_FATAL_FAILURE(alloc_small(dev, mems));
        for (const uct_gaudi_mem_t &mem : mems) {
            ranges.push_back({mem.dva, mem.length});
        }
        EXPECT_EQ(1u, dev->mem->num_chunks);

        /* aligned and disjoint */
        std::sort(ranges.begin(), ranges.end());
        for (i = 0; i < count; ++i) {
            EXPECT_EQ(0u, ranges[i].first % PAGE);
            if (i > 0) {
                EXPECT_LE(ranges[i - 1].first + ranges[i - 1].second,
                          ranges[i].first);
            }
        }

        /* holes are reused: freeing every other buffer makes room for as
         * many again without a new chunk */
        for (i = 0; i < count; i += 2) {
            ASSERT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mems[i]));
        }
        for (i = 0; i < count; i += 2) {
            ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, small_size(i),
                                                  &mems[i]));
        }
        EXPECT_EQ(1u, dev->mem->num_chunks);

        /* larger than a page: a chunk of whole pages, its tail shared */
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 700 * MB, &big));
        EXPECT_EQ(2u, dev->mem->num_chunks);
        EXPECT_EQ(1280 * MB, big.chunk_length);

        /* empty chunks go back to the driver: the whole HBM is free again */
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &big));
        ASSERT_NO_FATAL_FAILURE(free_all(dev, mems));
        EXPECT_EQ(0u, dev->mem->num_chunks);
        EXPECT_EQ(0u, dev->mem->count);
        alloc_whole(dev);
    }, 120);
}

TEST(drv_mem, map_host_keeps_offset) {
    emu_node(2).run_with_device([](uct_gaudi_dev_t *dev, log_capture &) {
        uint64_t dva;
        char *buf;

        buf = (char*)calloc(3, 4096);
        ASSERT_TRUE(buf != NULL);

        ASSERT_EQ(UCS_OK, uct_gaudi_mem_map_host(dev, buf + 123, 5000, &dva));
        EXPECT_EQ(((uintptr_t)buf + 123) & 4095, dva & 4095);
        EXPECT_FALSE(uct_gaudi_mem_is_device_address(dev, dva, 5000));
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_unmap(dev, dva));
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_gaudi_mem_unmap(dev, dva));
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_gaudi_mem_map_host(dev, buf, 0, &dva));
        free(buf);
    });
}

/* A host buffer the kernel will not pin for long (a shared mapping of a
 * file on disk, refused from Linux 6.5 on and by the emulator by default):
 * the mapping fails with an error that says why */
TEST(drv_mem, map_host_shared_file_refused) {
    std::string path = "./base-mem-pin-XXXXXX";
    const size_t size = 2 * 4096;
    emu_node node(2);
    struct statfs fs;
    void *buf;
    int fd;

    ASSERT_EQ(0, statfs(".", &fs));
    if ((fs.f_type == 0x01021994) || (fs.f_type == 0x858458f6)) {
        GTEST_SKIP() << "the working directory is on tmpfs/ramfs";
    }
    fd = mkstemp(&path[0]);
    ASSERT_GE(fd, 0) << strerror(errno);
    unlink(path.c_str());
    ASSERT_EQ(0, ftruncate(fd, size));
    buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    ASSERT_NE(MAP_FAILED, buf);

    node.run_with_device([&](uct_gaudi_dev_t *dev, log_capture &log) {
        uint64_t dva;

        log.clear();
        EXPECT_EQ(UCS_ERR_INVALID_ADDR,
                  uct_gaudi_mem_map_host(dev, buf, size, &dva));
        EXPECT_EQ(1u, log.count("a writable shared mapping of a file"))
                << "the error does not say why";
    });
    munmap(buf, size);
}

TEST(drv_mem, leaked_allocations_released) {
    emu_node(2).run([]() {
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;

        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 200 * MB, &mem));
        uct_gaudi_own_release(dev);

        /* released at the last release: the whole HBM is free again */
        dev = acquire_device();
        ASSERT_TRUE(dev != NULL);
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, 256 * MB, &mem));
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        uct_gaudi_own_release(dev);
    });
}
