/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * The application's own device memory (drv/gaudi_app.h): a "foreign
 * runtime" allocates, maps, unmaps and frees by raw ioctl() on the compute fd
 * the library adopted, as SynapseAI does; the library's hook of ioctl() must
 * learn it, share it and revoke it before the UNMAP.
 */

#include "drv_test.h"

extern "C" {
#include <uct/gaudi/drv/gaudi_share.h>
#include <ucs/memory/memtype_cache.h>
#include <ucs/time/time.h>
}

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <errno.h>
#include <unistd.h>

using namespace gaudi_drv_test;

namespace {

const size_t MB = 1024 * 1024;

/* What the foreign runtime does: its own raw request on its own fd */
int runtime_mem(int fd, uint32_t op, union hl_mem_args *args)
{
    args->in.op = op;
    return ioctl(fd, uct_gaudi_abi_ioctl_code(uct_gaudi_ioctl_abi(),
                                              UCT_GAUDI_IOC_MEMORY), args);
}

uint64_t runtime_alloc(int fd, size_t size)
{
    union hl_mem_args args;

    memset(&args, 0, sizeof(args));
    args.in.alloc.mem_size = size;
    EXPECT_EQ(0, runtime_mem(fd, HL_MEM_OP_ALLOC, &args)) << strerror(errno);
    return args.out.handle;
}

uint64_t runtime_map(int fd, uint64_t handle)
{
    union hl_mem_args args;

    memset(&args, 0, sizeof(args));
    args.in.map_device.handle = handle;
    EXPECT_EQ(0, runtime_mem(fd, HL_MEM_OP_MAP, &args)) << strerror(errno);
    return args.out.device_virt_addr;
}

int runtime_unmap(int fd, uint64_t dva)
{
    union hl_mem_args args;

    memset(&args, 0, sizeof(args));
    args.in.unmap.device_virt_addr = dva;
    return runtime_mem(fd, HL_MEM_OP_UNMAP, &args);
}

int runtime_free(int fd, uint64_t handle)
{
    union hl_mem_args args;

    memset(&args, 0, sizeof(args));
    args.in.free.handle = handle;
    return runtime_mem(fd, HL_MEM_OP_FREE, &args);
}

/* The device adopted from the runtime's fd (opened first, as SynapseAI
 * does before UCX starts) */
void with_runtime(const emu_node &node,
                  const std::function<void(uct_gaudi_dev_t*, int)> &fn)
{
    node.run([&fn]() {
        uct_gaudi_dev_t *dev;
        int fd;

        dev = acquire_adopted(0, &fd);
        ASSERT_TRUE(dev != NULL);
        ASSERT_TRUE(dev->adopted);
        fn(dev, fd);
        uct_gaudi_own_release(dev);
        uct_gaudi_seam_ops->close(fd);
    });
}

/* Which allocation of the library contains @a dva */
bool tracked(uct_gaudi_dev_t *dev, uint64_t dva, size_t length,
             uint64_t *base_p = NULL, size_t *alloc_length_p = NULL)
{
    uint64_t base;
    size_t alloc_length;

    if (uct_gaudi_mem_lookup(dev, dva, length, &base, &alloc_length) !=
        UCS_OK) {
        return false;
    }

    if (base_p != NULL) {
        *base_p = base;
    }
    if (alloc_length_p != NULL) {
        *alloc_length_p = alloc_length;
    }
    return true;
}

unsigned g_free_calls;
uint64_t g_free_dva;
int g_importer_fd = -1;  /* a DMA-BUF "an importer" holds */
bool g_importer_answers;

/* gaudi_ipc's part, played: a revocation an importer answers (it closes
 * its DMA-BUF) or ignores */
void revoke_cb(void *arg, uint64_t dva, size_t length)
{
    ++g_free_calls;
    g_free_dva = dva;
    if (g_importer_answers && (g_importer_fd >= 0)) {
        close(g_importer_fd);
        g_importer_fd = -1;
    }
}

} // namespace


/* ALLOC + MAP by the runtime: an allocation of the library, device memory
 * for UCS's memory-type cache and for the DMA; UNMAP forgets it */
TEST(drv_app, learns_runtime_memory) {
    with_runtime(emu_node(2), [](uct_gaudi_dev_t *dev, int fd) {
        ucs_memory_info_t info;
        uct_gaudi_mem_t mem;
        uint64_t handle, dva, base;
        size_t length;

        handle = runtime_alloc(fd, 3 * MB);
        dva    = runtime_map(fd, handle);
        ASSERT_TRUE(tracked(dev, dva + MB, MB, &base, &length))
                << "the runtime's mapping was not learned";
        EXPECT_EQ(dva, base);
        EXPECT_GE(length, 3 * MB);
        EXPECT_EQ(0u, length % dev->mem->granule);
        EXPECT_TRUE(uct_gaudi_mem_is_device_address(dev, dva, 3 * MB));
        ASSERT_EQ(UCS_OK, ucs_memtype_cache_lookup((void*)dva, 3 * MB,
                                                   &info));
        EXPECT_EQ(UCS_MEMORY_TYPE_GAUDI, info.type);
        EXPECT_EQ(UCS_OK, uct_gaudi_dma_memset(dev, dva, 0x5a, 3 * MB));

        /* the library never frees what the runtime allocated */
        mem.dva    = dva;
        mem.length = length;
        {
            log_capture log;
            EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_gaudi_mem_free(dev, &mem));
            EXPECT_EQ(1u, log.count("the application's own device memory"));
        }

        EXPECT_EQ(0, runtime_unmap(fd, dva)) << strerror(errno);
        EXPECT_FALSE(tracked(dev, dva, MB));
        EXPECT_EQ(0, runtime_free(fd, handle)) << strerror(errno);

        /* the next ALLOC + MAP may get the same VA: a new allocation */
        handle = runtime_alloc(fd, MB);
        dva    = runtime_map(fd, handle);
        EXPECT_TRUE(tracked(dev, dva, MB));
        EXPECT_EQ(0, runtime_unmap(fd, dva));
        EXPECT_EQ(0, runtime_free(fd, handle));
    });
}

/* What the runtime mapped is exported like UCX's allocations; its UNMAP
 * revokes the importers first and succeeds once they let go */
TEST(drv_app, unmap_revokes_importers) {
    with_runtime(emu_node(2), [](uct_gaudi_dev_t *dev, int fd) {
        uct_gaudi_export_t exp;
        uint64_t handle, dva;
        ucs_time_t start;

        handle = runtime_alloc(fd, MB);
        dva    = runtime_map(fd, handle);
        ASSERT_EQ(UCS_OK, uct_gaudi_share_export(dev, dva, MB, &exp));
        g_importer_fd      = exp.fd;
        g_importer_answers = true;
        g_free_calls       = 0;
        uct_gaudi_mem_set_free_cb(dev, revoke_cb, NULL, 5.0);

        start = ucs_get_time();
        EXPECT_EQ(0, runtime_unmap(fd, dva)) << strerror(errno);
        EXPECT_EQ(1u, g_free_calls);
        EXPECT_EQ(dva, g_free_dva);
        EXPECT_EQ(-1, g_importer_fd);
        EXPECT_LT(ucs_time_to_sec(ucs_get_time() - start), 2.5)
                << "the UNMAP waited longer than the importer took";
        EXPECT_FALSE(tracked(dev, dva, MB));
        EXPECT_EQ(0, runtime_free(fd, handle)) << strerror(errno);
        uct_gaudi_mem_set_free_cb(dev, NULL, NULL, 0);
    });
}

/* An importer that never lets go: the UNMAP waits the timeout, then the
 * runtime gets the driver's refusal, and the mapping stays the library's
 * (shared again later with a new export) */
TEST(drv_app, unmap_bounded_by_timeout) {
    with_runtime(emu_node(2), [](uct_gaudi_dev_t *dev, int fd) {
        uct_gaudi_export_t exp;
        uint64_t handle, dva;
        ucs_time_t start;
        double waited;
        int ret, err;

        handle = runtime_alloc(fd, MB);
        dva    = runtime_map(fd, handle);
        ASSERT_EQ(UCS_OK, uct_gaudi_share_export(dev, dva, MB, &exp));
        g_importer_fd      = exp.fd;
        g_importer_answers = false;
        g_free_calls       = 0;
        uct_gaudi_mem_set_free_cb(dev, revoke_cb, NULL, 0.3);

        {
            log_capture log;

            start  = ucs_get_time();
            ret    = runtime_unmap(fd, dva);
            err    = errno;
            waited = ucs_time_to_sec(ucs_get_time() - start);
            EXPECT_EQ(-1, ret);
            EXPECT_EQ(EINVAL, err);
            EXPECT_GE(waited, 0.3);
            EXPECT_EQ(1u, log.count("did not let go of the memory within "
                                    "UCX_GAUDI_IPC_TIMEOUT"));
        }
        EXPECT_EQ(1u, g_free_calls);
        EXPECT_TRUE(tracked(dev, dva, MB)) << "still mapped, yet forgotten";

        /* the importer lets go late: the next UNMAP goes through at once */
        close(g_importer_fd);
        g_importer_fd = -1;
        EXPECT_EQ(0, runtime_unmap(fd, dva)) << strerror(errno);
        EXPECT_FALSE(tracked(dev, dva, MB));
        EXPECT_EQ(0, runtime_free(fd, handle)) << strerror(errno);
        uct_gaudi_mem_set_free_cb(dev, NULL, NULL, 0);
    });
}

/* The 6.1 ABI exports the ALLOC handle: the UNMAP goes through, the FREE
 * is what waits for the importers */
TEST(drv_app, handle_form_free_waits) {
    with_runtime(emu_node(2, "gaudi2", "misc"),
                 [](uct_gaudi_dev_t *dev, int fd) {
        uct_gaudi_export_t exp;
        uint64_t handle, dva;
        int ret, err;

        handle = runtime_alloc(fd, MB);
        dva    = runtime_map(fd, handle);
        ASSERT_EQ(UCS_OK, uct_gaudi_share_export(dev, dva, MB, &exp));
        g_importer_fd      = exp.fd;
        g_importer_answers = false;
        g_free_calls       = 0;
        uct_gaudi_mem_set_free_cb(dev, revoke_cb, NULL, 0.2);

        EXPECT_EQ(0, runtime_unmap(fd, dva)) << strerror(errno);
        EXPECT_EQ(1u, g_free_calls);
        {
            log_capture log;

            ret = runtime_free(fd, handle);
            err = errno;
            EXPECT_EQ(-1, ret);
            EXPECT_EQ(EINVAL, err);
            EXPECT_EQ(1u, log.count("FREE of handle"));
        }
        close(g_importer_fd);
        g_importer_fd = -1;
        EXPECT_EQ(0, runtime_free(fd, handle)) << strerror(errno);
        uct_gaudi_mem_set_free_cb(dev, NULL, NULL, 0);
    });
}

/* UCX_GAUDI_APP_MEMORY=n: no hook at all (a raw request on the emulator's
 * fd reaches the plain file behind it: ENOTTY, where with the hook it is
 * served), and nothing is learned of requests made through the seam */
TEST(drv_app, knob_off) {
    with_runtime(emu_node(2).env("UCX_GAUDI_APP_MEMORY", "n"),
                 [](uct_gaudi_dev_t *dev, int fd) {
        union hl_mem_args args;
        uint64_t handle, dva;
        unsigned long request;

        request = uct_gaudi_abi_ioctl_code(uct_gaudi_ioctl_abi(),
                                           UCT_GAUDI_IOC_MEMORY);
        memset(&args, 0, sizeof(args));
        args.in.op             = HL_MEM_OP_ALLOC;
        args.in.alloc.mem_size = MB;
        errno                  = 0;
        EXPECT_EQ(-1, ioctl(fd, request, &args)) << "a hook served it";
        EXPECT_EQ(ENOTTY, errno);

        memset(&args, 0, sizeof(args));
        args.in.op             = HL_MEM_OP_ALLOC;
        args.in.alloc.mem_size = MB;
        ASSERT_EQ(0, uct_gaudi_seam_ops->ioctl(fd, request, &args));
        handle = args.out.handle;
        memset(&args, 0, sizeof(args));
        args.in.op                = HL_MEM_OP_MAP;
        args.in.map_device.handle = handle;
        ASSERT_EQ(0, uct_gaudi_seam_ops->ioctl(fd, request, &args));
        dva = args.out.device_virt_addr;
        EXPECT_FALSE(tracked(dev, dva, MB));

        memset(&args, 0, sizeof(args));
        args.in.op                     = HL_MEM_OP_UNMAP;
        args.in.unmap.device_virt_addr = dva;
        EXPECT_EQ(0, uct_gaudi_seam_ops->ioctl(fd, request, &args));
        memset(&args, 0, sizeof(args));
        args.in.op          = HL_MEM_OP_FREE;
        args.in.free.handle = handle;
        EXPECT_EQ(0, uct_gaudi_seam_ops->ioctl(fd, request, &args));
    });
}

/* A bad argument pointer gets the driver's EFAULT, as without the hook:
 * the hook must not read it first and crash */
TEST(drv_app, bad_argument_pointer) {
    with_runtime(emu_node(2), [](uct_gaudi_dev_t *dev, int fd) {
        unsigned long request;

        request = uct_gaudi_abi_ioctl_code(uct_gaudi_ioctl_abi(),
                                           UCT_GAUDI_IOC_MEMORY);
        errno = 0;
        EXPECT_EQ(-1, ioctl(fd, request, (void*)8));
        EXPECT_EQ(EFAULT, errno);
        errno = 0;
        EXPECT_EQ(-1, ioctl(fd, request, NULL));
        EXPECT_EQ(EFAULT, errno);
    });
}

/* An argument that starts in readable memory and ends in unmapped memory:
 * EFAULT, as from the driver, and nothing read past the readable part */
TEST(drv_app, argument_across_unmapped_page) {
    with_runtime(emu_node(2), [](uct_gaudi_dev_t *dev, int fd) {
        unsigned long request;
        uint8_t *pages;
        void *arg;

        request = uct_gaudi_abi_ioctl_code(uct_gaudi_ioctl_abi(),
                                           UCT_GAUDI_IOC_MEMORY);
        pages   = (uint8_t*)mmap(NULL, 8192, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(MAP_FAILED, (void*)pages);
        ASSERT_EQ(0, munmap(pages + 4096, 4096));
        memset(pages, 0, 4096);
        arg = pages + 4096 - 16;    /* op and flags on the unmapped page */
        errno = 0;
        EXPECT_EQ(-1, ioctl(fd, request, arg));
        EXPECT_EQ(EFAULT, errno);
        munmap(pages, 4096);
    });
}

/* The driver did the UNMAP but the argument could not be written back:
 * EFAULT, as from the driver, and the mapping is forgotten all the same */
TEST(drv_app, unmap_with_read_only_argument) {
    with_runtime(emu_node(2), [](uct_gaudi_dev_t *dev, int fd) {
        union hl_mem_args *ro;
        uint64_t handle, dva;

        handle = runtime_alloc(fd, MB);
        dva    = runtime_map(fd, handle);
        ASSERT_TRUE(tracked(dev, dva, MB));
        ro = (union hl_mem_args*)mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(MAP_FAILED, (void*)ro);
        memset(ro, 0, sizeof(*ro));
        ro->in.op                     = HL_MEM_OP_UNMAP;
        ro->in.unmap.device_virt_addr = dva;
        ASSERT_EQ(0, mprotect(ro, 4096, PROT_READ));
        errno = 0;
        EXPECT_EQ(-1, ioctl(fd, uct_gaudi_abi_ioctl_code(
                                    uct_gaudi_ioctl_abi(),
                                    UCT_GAUDI_IOC_MEMORY), ro));
        EXPECT_EQ(EFAULT, errno);
        munmap(ro, 4096);
        EXPECT_FALSE(tracked(dev, dva, MB)) << "unmapped, yet still tracked";
        EXPECT_EQ(0, runtime_free(fd, handle)) << strerror(errno);
    });
}

/* An UNMAP the hook never saw (a raw syscall, a dup of the fd): the next
 * mapping the driver gives out there replaces the stale one, whose
 * importers are told, and UCX's own allocations still work */
TEST(drv_app, unmap_behind_the_hook) {
    with_runtime(emu_node(2), [](uct_gaudi_dev_t *dev, int fd) {
        union hl_mem_args args;
        uct_gaudi_mem_t mem;
        uint64_t handle, dva, dva2, handle2;

        handle = runtime_alloc(fd, MB);
        dva    = runtime_map(fd, handle);
        ASSERT_TRUE(tracked(dev, dva, MB));
        g_free_calls       = 0;
        g_importer_answers = true;
        uct_gaudi_mem_set_free_cb(dev, revoke_cb, NULL, 1.0);
        {
            uct_gaudi_mem_t found;
            uint64_t base;
            size_t length;

            /* to be exported (a peer's key names it) */
            ASSERT_EQ(UCS_OK, uct_gaudi_share_prepare(dev, dva, MB, &found,
                                                      &base, &length));
        }

        /* behind the hook: straight to the driver */
        memset(&args, 0, sizeof(args));
        args.in.op                     = HL_MEM_OP_UNMAP;
        args.in.unmap.device_virt_addr = dva;
        ASSERT_EQ(0, uct_gaudi_seam_ops->ioctl(
                             fd, uct_gaudi_abi_ioctl_code(
                                     uct_gaudi_ioctl_abi(),
                                     UCT_GAUDI_IOC_MEMORY), &args));
        EXPECT_TRUE(tracked(dev, dva, MB)) << "the hook could not know";
        EXPECT_EQ(0, runtime_free(fd, handle));

        /* the range is given out again: to the runtime ... */
        handle2 = runtime_alloc(fd, MB);
        dva2    = runtime_map(fd, handle2);
        ASSERT_EQ(dva, dva2) << "the driver did not reuse the range";
        EXPECT_TRUE(tracked(dev, dva2, MB));
        EXPECT_EQ(1u, g_free_calls) << "the stale export's importers";
        EXPECT_EQ(0, runtime_unmap(fd, dva2));
        EXPECT_EQ(0, runtime_free(fd, handle2));

        /* ... and to UCX, after another UNMAP behind the hook */
        handle = runtime_alloc(fd, MB);
        dva    = runtime_map(fd, handle);
        memset(&args, 0, sizeof(args));
        args.in.op                     = HL_MEM_OP_UNMAP;
        args.in.unmap.device_virt_addr = dva;
        ASSERT_EQ(0, uct_gaudi_seam_ops->ioctl(
                             fd, uct_gaudi_abi_ioctl_code(
                                     uct_gaudi_ioctl_abi(),
                                     UCT_GAUDI_IOC_MEMORY), &args));
        EXPECT_EQ(0, runtime_free(fd, handle));
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, MB, &mem));
        EXPECT_EQ(UCS_OK, uct_gaudi_dma_memset(dev, mem.dva, 0x11, MB));
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        uct_gaudi_mem_set_free_cb(dev, NULL, NULL, 0);
    });
}

/* A page size the device does not offer is ignored by the driver (the
 * default is used): the mapping is tracked at its real length */
TEST(drv_app, page_size_not_offered) {
    with_runtime(emu_node(2), [](uct_gaudi_dev_t *dev, int fd) {
        union hl_mem_args args;
        uint64_t handle, dva, base;
        size_t length;

        memset(&args, 0, sizeof(args));
        args.in.alloc.mem_size  = MB;
        args.in.alloc.page_size = 8 * MB;
        ASSERT_EQ(0, runtime_mem(fd, HL_MEM_OP_ALLOC, &args));
        handle = args.out.handle;
        dva    = runtime_map(fd, handle);
        ASSERT_TRUE(tracked(dev, dva, MB, &base, &length));
        EXPECT_EQ(dev->mem->granule, length);
        EXPECT_EQ(0, runtime_unmap(fd, dva));
        EXPECT_EQ(0, runtime_free(fd, handle));
    });
}
