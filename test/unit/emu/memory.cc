/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_test.h"

#include <limits.h>
#include <sys/statfs.h>

/* HL_IOCTL_MEMORY: ALLOC/FREE/MAP/UNMAP rules and errnos */

class emu_memory : public emu_test {
protected:
    virtual void SetUp()
    {
        emu_test::SetUp();
        m_fd = -1;
    }

    virtual void TearDown()
    {
        if ((m_fd >= 0) && (m_ops != NULL)) {
            m_ops->close(m_fd);
        }
        emu_test::TearDown();
    }

    void open_ok()
    {
        init_ok();
        m_fd = open_node(0, false);
        ASSERT_GE(m_fd, 0) << strerror(errno);
    }

    int m_fd;
};

TEST_F(emu_memory, alloc_free) {
    open_ok();

    /* Gaudi2: 80 GiB in pages of 640 MiB, every ALLOC whole pages */
    const uint64_t page = 640ull << 20, dram = 80ull << 30;
    uint64_t h1, h2, h3;
    ASSERT_EQ(0, alloc(m_fd, 1, &h1));
    EXPECT_GE(h1, 1u);
    ASSERT_EQ(0, alloc(m_fd, page + 1, &h2));
    EXPECT_NE(h1, h2);

    EXPECT_EQ(EINVAL, alloc(m_fd, 0, &h3));
    EXPECT_EQ(ENOMEM, alloc(m_fd, dram - 2 * page, &h3)); /* 3 pages used */
    EXPECT_EQ(0, alloc(m_fd, dram - 3 * page, &h3));      /* exactly fits */
    uint64_t h4;
    EXPECT_EQ(ENOMEM, alloc(m_fd, 1, &h4));

    EXPECT_EQ(0, free_handle(m_fd, h1));
    EXPECT_EQ(EINVAL, free_handle(m_fd, h1));            /* twice */
    EXPECT_EQ(EINVAL, free_handle(m_fd, 12345));
    EXPECT_EQ(EINVAL, free_handle(m_fd, 0));
    EXPECT_EQ(0, free_handle(m_fd, h2));
    EXPECT_EQ(0, free_handle(m_fd, h3));
}

TEST_F(emu_memory, page_sizes) {
    open_ok();

    uint64_t h, va;

    /* Gaudi2: only its default page is modelled, and the driver of an ASIC
     * that offers no choice takes its default whatever is asked */
    struct hl_info_dram_usage before, after;
    ASSERT_EQ(0, info(m_fd, HL_INFO_DRAM_USAGE, &before, sizeof(before)));
    ASSERT_EQ(0, alloc(m_fd, 4 << 20, &h, 8 << 20));
    ASSERT_EQ(0, info(m_fd, HL_INFO_DRAM_USAGE, &after, sizeof(after)));
    EXPECT_EQ(hw_ip(m_fd).device_mem_alloc_default_page_size,
              after.ctx_dram_mem - before.ctx_dram_mem);
    EXPECT_EQ(0, free_handle(m_fd, h));
    EXPECT_EQ(0, m_ops->close(m_fd));
    gaudi_emu_fini();

    /* Gaudi3 offers power-of-2 pages */
    m_cfg.asic = UCT_GAUDI_ASIC_GAUDI3;
    open_ok();
    EXPECT_EQ(EINVAL, alloc(m_fd, 4 << 20, &h, 3 << 20));   /* not 2^n */
    EXPECT_EQ(EINVAL, alloc(m_fd, 4 << 20, &h, 4096));      /* not offered */
    ASSERT_EQ(0, alloc(m_fd, 1, &h, 8 << 20));

    struct hl_info_dram_usage usage;
    EXPECT_EQ(0, info(m_fd, HL_INFO_DRAM_USAGE, &usage, sizeof(usage)));
    EXPECT_EQ(8ull << 20, usage.ctx_dram_mem);  /* the asked page */

    ASSERT_EQ(0, map_device(m_fd, h, &va));
    EXPECT_EQ(0u, va % (2 << 20));
    EXPECT_EQ(0, unmap(m_fd, va));
    EXPECT_EQ(0, free_handle(m_fd, h));
}

TEST_F(emu_memory, map_device) {
    open_ok();

    struct hl_info_hw_ip_info hw = hw_ip(m_fd);
    uint64_t h, va, va2, va3;

    ASSERT_NO_FATAL_FAILURE(alloc_map(m_fd, 4 << 20, &h, &va));
    EXPECT_GE(va, hw.dram_base_address);
    EXPECT_EQ(0u, va % hw.dram_page_size);

    /* mapped: cannot free */
    EXPECT_EQ(EINVAL, free_handle(m_fd, h));

    /* a second mapping of the same handle gets another VA */
    ASSERT_EQ(0, map_device(m_fd, h, &va2));
    EXPECT_NE(va, va2);
    EXPECT_EQ(0, unmap(m_fd, va2));

    /* UNMAP wants the exact VA */
    EXPECT_EQ(EINVAL, unmap(m_fd, va + 4096));
    EXPECT_EQ(EINVAL, unmap(m_fd, 0));
    EXPECT_EQ(0, unmap(m_fd, va));
    EXPECT_EQ(EINVAL, unmap(m_fd, va));

    /* hints: honoured when aligned and free, else ignored or, with
     * FORCE_HINT, failing */
    uint64_t hint = (hw.dram_base_address / hw.dram_page_size + 100) *
                    hw.dram_page_size;
    ASSERT_EQ(0, map_device(m_fd, h, &va, hint));
    EXPECT_EQ(hint, va);
    ASSERT_EQ(0, map_device(m_fd, h, &va2, hint));
    EXPECT_NE(hint, va2);
    EXPECT_EQ(ENOMEM, map_device(m_fd, h, &va3, hint, HL_MEM_FORCE_HINT));
    EXPECT_EQ(ENOMEM, map_device(m_fd, h, &va3, hint + 4096,
                                 HL_MEM_FORCE_HINT));
    EXPECT_EQ(0, unmap(m_fd, va));
    EXPECT_EQ(0, unmap(m_fd, va2));

    EXPECT_EQ(EINVAL, map_device(m_fd, 9999, &va));
    EXPECT_EQ(0, free_handle(m_fd, h));
    EXPECT_EQ(EINVAL, map_device(m_fd, h, &va));
}

TEST_F(emu_memory, map_host_offset) {
    open_ok();

    struct hl_info_hw_ip_info hw = hw_ip(m_fd);
    std::vector<char> buf(3 * 4096 + 100);
    char *ptr = buf.data() + 123;
    uint64_t va, va2;

    ASSERT_EQ(0, map_host(m_fd, ptr, 5000, &va));
    EXPECT_EQ((uintptr_t)ptr % 4096, va % 4096);      /* sub-page offset */
    EXPECT_GE(va, 0xFFF0000000000000ull);
    EXPECT_LT(va, 0xFFF1000000000000ull);
    EXPECT_NE(va, hw.dram_base_address);

    ASSERT_EQ(0, map_host(m_fd, ptr, 5000, &va2));    /* mapped twice */
    EXPECT_NE(va, va2);

    /* UNMAP wants the value MAP returned, offset included */
    EXPECT_EQ(EINVAL, unmap(m_fd, va - (va % 4096)));
    EXPECT_EQ(0, unmap(m_fd, va));
    EXPECT_EQ(0, unmap(m_fd, va2));
}

TEST_F(emu_memory, map_host_errors) {
    open_ok();

    uint64_t va;
    char buf[64];

    EXPECT_EQ(EINVAL, map_host(m_fd, buf, 0, &va));
    EXPECT_EQ(EINVAL, map_host(m_fd, (void*)~0ull, 100, &va));
    EXPECT_EQ(EFAULT, map_host(m_fd, NULL, 100, &va));

    /* not mapped at all */
    void *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, p);
    ASSERT_EQ(0, munmap((char*)p + 4096, 4096));
    EXPECT_EQ(EFAULT, map_host(m_fd, p, 3 * 4096, &va));
    EXPECT_EQ(0, map_host(m_fd, p, 4096, &va));
    EXPECT_EQ(0, unmap(m_fd, va));

    /* read-only: pinning for write fails */
    ASSERT_EQ(0, mprotect(p, 4096, PROT_READ));
    EXPECT_EQ(EFAULT, map_host(m_fd, p, 100, &va));
    munmap(p, 3 * 4096);
}

/* A directory on a filesystem that writes dirty pages back (not tmpfs,
 * ramfs or hugetlbfs), for a shared file mapping; "" if none is found */
static std::string disk_dir()
{
    char cwd[PATH_MAX];
    struct statfs fs;

    for (const char *dir : {".", "/var/tmp", "/tmp"}) {
        if ((statfs(dir, &fs) == 0) && (fs.f_type != 0x01021994) &&
            (fs.f_type != 0x858458f6) && (fs.f_type != 0x958458f6) &&
            (access(dir, W_OK) == 0)) {
            return (strcmp(dir, ".") || !getcwd(cwd, sizeof(cwd))) ?
                   std::string(dir) : std::string(cwd);
        }
    }
    return "";
}

/* A writable shared mapping of @a size bytes of a new file in @a dir */
static void *map_file(const std::string &dir, size_t size, int flags)
{
    std::string path = dir + "/emu-pin-XXXXXX";
    void *p;
    int fd;

    fd = mkstemp(&path[0]);
    if (fd < 0) {
        return MAP_FAILED;
    }
    unlink(path.c_str());
    p = (ftruncate(fd, size) == 0) ?
        mmap(NULL, size, PROT_READ | PROT_WRITE, flags, fd, 0) : MAP_FAILED;
    close(fd);
    return p;
}

/* The userptr mapping pins for long (FOLL_LONGTERM): kernels from 6.5 refuse
 * a writable shared mapping of a file on a disk filesystem with EFAULT
 * (mm/gup.c check_vma_flags, writable_file_mapping_allowed); shmem, private
 * mappings and, with the knob, older kernels pin it */
TEST_F(emu_memory, map_host_shared_file) {
    std::string dir = disk_dir();
    const size_t size = 4 * 4096;
    uint64_t va;

    if (dir.empty()) {
        GTEST_SKIP() << "no writable directory on a disk filesystem";
    }
    open_ok();

    void *shared = map_file(dir, size, MAP_SHARED);
    ASSERT_NE(MAP_FAILED, shared) << dir << ": " << strerror(errno);
    memset(shared, 1, size);
    EXPECT_EQ(EFAULT, map_host(m_fd, shared, size, &va))
            << "a shared mapping of a file in " << dir << " was pinned";
    EXPECT_EQ(EFAULT, map_host(m_fd, (char*)shared + 4096, 100, &va));

    void *priv = map_file(dir, size, MAP_PRIVATE);
    ASSERT_NE(MAP_FAILED, priv);
    EXPECT_EQ(0, map_host(m_fd, priv, size, &va));
    EXPECT_EQ(0, unmap(m_fd, va));

    if (access("/dev/shm", W_OK) == 0) {
        void *shm = map_file("/dev/shm", size, MAP_SHARED);
        ASSERT_NE(MAP_FAILED, shm);
        EXPECT_EQ(0, map_host(m_fd, shm, size, &va)) << "tmpfs is shmem";
        EXPECT_EQ(0, unmap(m_fd, va));
        munmap(shm, size);
    }

    int mfd = memfd_create("emu-pin", MFD_CLOEXEC);
    ASSERT_GE(mfd, 0);
    ASSERT_EQ(0, ftruncate(mfd, size));
    void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    close(mfd);
    ASSERT_NE(MAP_FAILED, mem);
    EXPECT_EQ(0, map_host(m_fd, mem, size, &va)) << "memfd is shmem";
    EXPECT_EQ(0, unmap(m_fd, va));
    munmap(mem, size);

    /* an older kernel: the knob */
    m_ops->close(m_fd);
    m_fd = -1;
    gaudi_emu_fini();
    m_cfg.pin_shared_files = 1;
    open_ok();
    EXPECT_EQ(0, map_host(m_fd, shared, size, &va));
    EXPECT_EQ(0, unmap(m_fd, va));

    munmap(priv, size);
    munmap(shared, size);
}

TEST_F(emu_memory, map_host_huge) {
    open_ok();

    size_t size = 4 << 20;
    void *p     = mmap(NULL, 2 * size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, p);

    char *aligned = (char*)(((uintptr_t)p + size - 1) & ~(uintptr_t)(size - 1));
    uint64_t va;
    ASSERT_EQ(0, map_host(m_fd, aligned, 2 << 20, &va));
    EXPECT_GE(va, 0xFFF0800000000000ull);   /* the huge-page range */
    EXPECT_EQ(0u, va % (2 << 20));
    EXPECT_EQ(0, unmap(m_fd, va));
    munmap(p, 2 * size);
}

TEST_F(emu_memory, ops_and_busy) {
    open_ok();

    union hl_mem_args args;
    memset(&args, 0, sizeof(args));
    args.in.op = 42;
    EXPECT_EQ(EINVAL, mem(m_fd, &args));
    args.in.op = HL_MEM_OP_MAP_BLOCK;
    EXPECT_EQ(EINVAL, mem(m_fd, &args));
    args.in.op = UCT_GAUDI_MEM_OP_REG_DMABUF_FD;
    EXPECT_EQ(EINVAL, mem(m_fd, &args));    /* upstream driver */
}

TEST_F(emu_memory, close_releases) {
    open_ok();

    uint64_t h, va;
    ASSERT_NO_FATAL_FAILURE(alloc_map(m_fd, 32 << 20, &h, &va));
    char buf[100];
    ASSERT_EQ(0, map_host(m_fd, buf, sizeof(buf), &va));
    EXPECT_EQ(0, m_ops->close(m_fd));

    m_fd = open_node(0, false);
    ASSERT_GE(m_fd, 0);
    struct hl_info_dram_usage usage;
    EXPECT_EQ(0, info(m_fd, HL_INFO_DRAM_USAGE, &usage, sizeof(usage)));
    EXPECT_EQ(80ull << 30, usage.dram_free_mem);
    /* the old handle is gone */
    EXPECT_EQ(EINVAL, map_device(m_fd, h, &va));
    EXPECT_EQ(EINVAL, free_handle(m_fd, h));
}

TEST_F(emu_memory, gaudi1_accounting) {
    m_cfg.asic = UCT_GAUDI_ASIC_GAUDI1;
    open_ok();

    uint64_t h = 77, va;
    EXPECT_EQ(0, alloc(m_fd, 10 << 20, &h));
    EXPECT_EQ(0u, h);                       /* accounting only */

    struct hl_info_dram_usage usage;
    EXPECT_EQ(0, info(m_fd, HL_INFO_DRAM_USAGE, &usage, sizeof(usage)));
    EXPECT_EQ((4ull << 30) - (10ull << 20), usage.dram_free_mem);
    EXPECT_EQ(10ull << 20, usage.ctx_dram_mem);

    /* no handles to map */
    EXPECT_EQ(EINVAL, map_device(m_fd, 0, &va));

    /* FREE carries the size in the handle slot */
    EXPECT_EQ(0, free_handle(m_fd, 10 << 20));
    EXPECT_EQ(0, info(m_fd, HL_INFO_DRAM_USAGE, &usage, sizeof(usage)));
    EXPECT_EQ(4ull << 30, usage.dram_free_mem);

    /* userptr works, in the Gaudi1 host range */
    char buf[100];
    ASSERT_EQ(0, map_host(m_fd, buf, sizeof(buf), &va));
    EXPECT_GE(va, 0x1000000000000ull);
    EXPECT_LT(va, 0x3FF8000000000ull);
    EXPECT_EQ(0, unmap(m_fd, va));
}
