/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_cs_test.h"
#include "gt_sock.h"

#include <algorithm>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

/* DMA-BUF export (op 5) and the out-of-tree import (op 99) */

class emu_dmabuf : public emu_cs_test {
protected:
    int export_fd(uint64_t addr, uint64_t size, uint64_t offset, int *fd,
                  int fd_dev = -1)
    {
        union hl_mem_args args = mem_args(HL_MEM_OP_EXPORT_DMABUF_FD,
                                          O_RDWR | O_CLOEXEC);
        struct uct_gaudi_mem_export_in *in =
                (struct uct_gaudi_mem_export_in*)&args.in;
        int err;

        in->addr     = addr;
        in->mem_size = size;
        in->offset   = offset;
        err          = mem((fd_dev >= 0) ? fd_dev : m_fd, &args);
        *fd          = args.out.fd;
        return err;
    }

    int import_fd(int fd_dev, int dmabuf, uint64_t length, uint64_t *va)
    {
        union hl_mem_args args = mem_args(UCT_GAUDI_MEM_OP_REG_DMABUF_FD);
        struct uct_gaudi_mem_reg_dmabuf_in *in =
                (struct uct_gaudi_mem_reg_dmabuf_in*)&args.in;

        in->fd     = dmabuf;
        in->length = length;
        return mem(fd_dev, &args, va);
    }

    /* Fill [dev, dev+size) with a pattern through the DMA engine */
    void fill(uint64_t dev, size_t size, uint8_t seed)
    {
        std::vector<uint8_t> buf(size);
        uint64_t va, seq;

        for (size_t i = 0; i < size; ++i) {
            buf[i] = (uint8_t)(i * 7 + seed);
        }
        ASSERT_EQ(0, map_host(m_fd, buf.data(), size, &va));
        ASSERT_EQ(0, dma(va, dev, size, &seq));
        ASSERT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
        ASSERT_EQ(0, unmap(m_fd, va));
    }

    static bool check(const uint8_t *buf, size_t size, uint8_t seed,
                      size_t first = 0)
    {
        for (size_t i = 0; i < size; ++i) {
            if (buf[i] != (uint8_t)((first + i) * 7 + seed)) {
                return false;
            }
        }
        return true;
    }
};

/* One byte and, with it, @a fd over the UNIX socket @a sock */
static bool send_fd(int sock, int fd)
{
    return gaudi_test::send_fds(sock, "x", 1, &fd, 1) == 1;
}

/* The fd of send_fd(); -1 if none came */
static int recv_fd(int sock)
{
    std::vector<int> fds;
    char c;

    if ((gaudi_test::recv_fds(sock, &c, 1, &fds) != 1) || fds.empty()) {
        gaudi_test::close_fds(&fds);
        return -1;
    }
    return fds[0];
}

TEST_F(emu_dmabuf, export_rules) {
    open_ok();

    uint64_t h, va, hva;
    int fd;
    ASSERT_NO_FATAL_FAILURE(alloc_map(m_fd, 4 << 20, &h, &va));

    EXPECT_EQ(EINVAL, export_fd(va + 4096, 4096, 0, &fd));   /* not exact */
    EXPECT_EQ(EINVAL, export_fd(va, 0, 0, &fd));
    EXPECT_EQ(EINVAL, export_fd(va, 100, 0, &fd));           /* not paged */
    EXPECT_EQ(EINVAL, export_fd(va, 4096, 100, &fd));
    EXPECT_EQ(EINVAL, export_fd(va, 640 << 20, 4096, &fd)); /* too long:
                                                                 one page */
    ASSERT_EQ(0, map_host(m_fd, m_cb, 4096, &hva));
    EXPECT_EQ(EINVAL, export_fd(hva, 4096, 0, &fd));         /* host map */

    ASSERT_EQ(0, export_fd(va, 2 << 20, 2 << 20, &fd));
    EXPECT_GE(fd, 0);
    EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);

    /* the CPU cannot map it */
    EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0));

    /* the exported mapping is pinned until the dma-buf is released */
    EXPECT_EQ(EINVAL, unmap(m_fd, va));
    EXPECT_EQ(0, close(fd));
    EXPECT_EQ(0, unmap(m_fd, va));
    EXPECT_EQ(0, free_handle(m_fd, h));
}

TEST_F(emu_dmabuf, export_misc_handle_form) {
    m_cfg.abi = UCT_GAUDI_ABI_MISC;
    open_ok();

    uint64_t h, va;
    int fd;
    ASSERT_NO_FATAL_FAILURE(alloc_map(m_fd, 4 << 20, &h, &va));
    EXPECT_EQ(EINVAL, export_fd(h + 1, 4096, 0, &fd));
    ASSERT_EQ(0, export_fd(h, 4 << 20, 0, &fd));   /* 6.1: the handle */

    /* the export pins the handle, not the VA: UNMAP succeeds, FREE is
     * refused while the DMA-BUF is referenced */
    EXPECT_EQ(0, unmap(m_fd, va));
    EXPECT_EQ(EINVAL, free_handle(m_fd, h));
    close(fd);
    EXPECT_EQ(0, free_handle(m_fd, h));
}

TEST_F(emu_dmabuf, export_gaudi1_physical) {
    m_cfg.asic = UCT_GAUDI_ASIC_GAUDI1;
    open_ok();

    uint64_t base = hw_ip(m_fd).dram_base_address;
    int fd;
    EXPECT_EQ(EINVAL, export_fd(base, 4096, 4096, &fd));     /* offset */
    EXPECT_EQ(EINVAL, export_fd(base - 4096, 4096, 0, &fd));
    EXPECT_EQ(EINVAL, export_fd(base + (4ull << 30), 4096, 0, &fd));
    ASSERT_EQ(0, export_fd(base + 4096, 8192, 0, &fd));
    close(fd);
}

/* validate_export_params: pages beyond the PCIe DRAM BAR are not exported
 * (EINVAL); every page of the mapping counts, not only the range asked for */
TEST_F(emu_dmabuf, export_outside_dram_bar) {
    m_cfg.dram_bar_size = 1ull << 30;  /* DRAM page 1 (640 MiB) straddles */
    open_ok();

    uint64_t h1, h2, va1, va2;
    int fd;
    ASSERT_EQ(0, alloc(m_fd, 4 << 20, &h1));       /* DRAM page 0 */
    ASSERT_EQ(0, alloc(m_fd, 4 << 20, &h2));       /* DRAM page 1 */
    ASSERT_EQ(0, map_device(m_fd, h1, &va1));
    ASSERT_EQ(0, map_device(m_fd, h2, &va2));

    ASSERT_EQ(0, export_fd(va1, 4 << 20, 0, &fd));
    close(fd);
    EXPECT_EQ(EINVAL, export_fd(va2, 4 << 20, 0, &fd));
    EXPECT_EQ(EINVAL, export_fd(va2, 4096, 0, &fd));  /* inside the BAR */
    EXPECT_EQ(EINVAL, export_fd(va2, 4096, 4096, &fd));
}

/* ... and on 6.1, by the ALLOC handle: the whole allocation counts */
TEST_F(emu_dmabuf, export_outside_dram_bar_misc) {
    m_cfg.abi           = UCT_GAUDI_ABI_MISC;
    m_cfg.dram_bar_size = 1ull << 30;
    open_ok();

    uint64_t h1, h2;
    int fd;
    ASSERT_EQ(0, alloc(m_fd, 4 << 20, &h1));       /* DRAM page 0 */
    ASSERT_EQ(0, alloc(m_fd, 4 << 20, &h2));       /* DRAM page 1 */
    ASSERT_EQ(0, export_fd(h1, 4 << 20, 0, &fd));
    close(fd);
    EXPECT_EQ(EINVAL, export_fd(h2, 4096, 0, &fd));
}

TEST_F(emu_dmabuf, export_outside_dram_bar_gaudi1) {
    m_cfg.asic          = UCT_GAUDI_ASIC_GAUDI1;
    m_cfg.dram_bar_size = 1ull << 30;
    open_ok();

    uint64_t base = hw_ip(m_fd).dram_base_address;
    int fd;
    ASSERT_EQ(0, export_fd(base + (1ull << 30) - 8192, 8192, 0, &fd));
    close(fd);
    EXPECT_EQ(EINVAL, export_fd(base + (1ull << 30) - 4096, 8192, 0, &fd));
    EXPECT_EQ(EINVAL, export_fd(base + (1ull << 30), 4096, 0, &fd));
}

TEST_F(emu_dmabuf, import_needs_oot) {
    open_ok();

    uint64_t h, va, iva;
    int fd;
    ASSERT_NO_FATAL_FAILURE(alloc_map(m_fd, 2 << 20, &h, &va));
    ASSERT_EQ(0, export_fd(va, 2 << 20, 0, &fd));
    EXPECT_EQ(EINVAL, import_fd(m_fd, fd, 4096, &iva));      /* upstream */
    close(fd);
    EXPECT_EQ(0, unmap(m_fd, va));
}

/* Every op 99 costs a kernel-log error line where it fails: upstream does
 * not know the op, the out-of-tree driver logs the fd it cannot use */
TEST_F(emu_dmabuf, import_failure_logged_upstream) {
    open_ok();

    uint64_t iva;
    unsigned before = kernel_log_errors();
    EXPECT_EQ(EINVAL, import_fd(m_fd, -1, 4096, &iva));
    EXPECT_EQ(before + 1, kernel_log_errors());
}

TEST_F(emu_dmabuf, import_failure_logged_oot) {
    m_cfg.oot_import = 1;
    open_ok();

    uint64_t h, va, iva;
    int fd;
    ASSERT_NO_FATAL_FAILURE(alloc_map(m_fd, 2 << 20, &h, &va));
    ASSERT_EQ(0, export_fd(va, 2 << 20, 0, &fd));

    unsigned before = kernel_log_errors();
    EXPECT_EQ(EBADF, import_fd(m_fd, -1, 4096, &iva));
    EXPECT_EQ(before + 1, kernel_log_errors());
    EXPECT_EQ(0, import_fd(m_fd, fd, 4096, &iva));          /* quiet */
    EXPECT_EQ(before + 1, kernel_log_errors());
    EXPECT_EQ(0, unmap(m_fd, iva));

    close(fd);
    EXPECT_EQ(0, unmap(m_fd, va));
}

TEST_F(emu_dmabuf, import_between_processes) {
    m_cfg.oot_import = 1;
    open_ok();

    const size_t size = 1 << 20;
    uint64_t h, va;
    int fd, sv[2];

    ASSERT_NO_FATAL_FAILURE(alloc_map(m_fd, 4 << 20, &h, &va));
    fill(va, 4 << 20, 3);
    ASSERT_EQ(0, export_fd(va, 2 << 20, 1 << 20, &fd));
    ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));

    const gaudi_emu_config_t cfg = m_cfg;
    pid_t pid = fork();
    if (pid == 0) {
        /* the peer: its own emulator state, device 1, fd by SCM_RIGHTS */
        close(fd);
        gaudi_emu_fini();
        m_fd = -1;
        int peer_fd = recv_fd(sv[1]);
        if (peer_fd < 0) {
            _exit(10);
        }

        m_cfg = cfg;
        if (init() != 0) {
            _exit(11);
        }
        m_fd = open_node(1, false);
        void *cb;
        if ((m_fd < 0) || posix_memalign(&cb, 4096, CB_SIZE)) {
            _exit(12);
        }
        free(m_cb);
        m_cb = cb;
        if (map_host(m_fd, m_cb, CB_SIZE, &m_cb_va) != 0) {
            _exit(13);
        }

        uint64_t iva, hva, seq;
        if ((import_fd(m_fd, peer_fd, 2 << 20, &iva) != 0) ||
            (import_fd(m_fd, peer_fd, 4 << 20, &hva) != EINVAL) ||
            (import_fd(m_fd, 0, 4096, &hva) != EINVAL)) {
            _exit(14);
        }
        /* the dma-buf stays referenced by the import once closed here */
        close(peer_fd);

        std::vector<uint8_t> buf(size);
        if ((map_host(m_fd, buf.data(), size, &hva) != 0) ||
            (dma(iva + 4096, hva, size, &seq) != 0) ||
            (wait_done(seq) != HL_WAIT_CS_STATUS_COMPLETED)) {
            _exit(15);
        }
        if (!check(buf.data(), size, 3, (1 << 20) + 4096)) {
            _exit(16);
        }

        /* write into the peer's memory */
        memset(buf.data(), 0x5A, size);
        if ((dma(hva, iva, 4096, &seq) != 0) ||
            (wait_done(seq) != HL_WAIT_CS_STATUS_COMPLETED)) {
            _exit(17);
        }
        char c2 = 'd';
        if (write(sv[1], &c2, 1) != 1) {
            _exit(18);
        }
        if (read(sv[1], &c2, 1) != 1) {
            _exit(19);
        }
        _exit(0);
    }
    ASSERT_GT(pid, 0);

    ASSERT_TRUE(send_fd(sv[0], fd));
    close(fd);

    char c;
    ASSERT_EQ(1, read(sv[0], &c, 1));
    EXPECT_EQ('d', c);

    /* the peer imported it: still pinned although we closed our fd */
    EXPECT_EQ(EINVAL, unmap(m_fd, va));

    std::vector<uint8_t> back(8192);
    uint64_t bva, seq;
    ASSERT_EQ(0, map_host(m_fd, back.data(), back.size(), &bva));
    ASSERT_EQ(0, dma(va + (1 << 20), bva, 8192, &seq));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
    EXPECT_EQ(0x5A, back[0]);
    EXPECT_EQ(0x5A, back[4095]);
    EXPECT_TRUE(check(&back[4096], 4096, 3, (1 << 20) + 4096));

    c = 'q';
    ASSERT_EQ(1, write(sv[0], &c, 1));
    int status;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(0, WEXITSTATUS(status));

    /* the importer is gone: the mapping can go */
    EXPECT_EQ(0, unmap(m_fd, va));
    close(sv[0]);
    close(sv[1]);
}

/* An exported DMA-BUF holds its exporter's device file (export_dmabuf:
 * get_file, hl_ctx_get; hl_release_dmabuf puts them): when the exporter
 * closes the device, its context stays while an importer holds the
 * DMA-BUF: the device is not free (open: EBUSY) and its memory stays, until
 * the import goes */
TEST_F(emu_dmabuf, exported_dmabuf_keeps_the_device) {
    m_cfg.oot_import = 1;
    open_ok();

    uint64_t h, va, iva;
    int fd;
    ASSERT_NO_FATAL_FAILURE(alloc_map(m_fd, 2 << 20, &h, &va));
    fill(va, 2 << 20, 9);
    ASSERT_EQ(0, export_fd(va, 2 << 20, 0, &fd));

    int fd1 = open_node(1, false);
    ASSERT_GE(fd1, 0);
    ASSERT_EQ(0, import_fd(fd1, fd, 2 << 20, &iva));
    close(fd);

    /* the exporter leaves; the importer still holds the memory, and with
     * it the exporter's device */
    EXPECT_EQ(0, m_ops->close(m_fd));
    m_fd = open_node(0, false);
    EXPECT_EQ(-1, m_fd);
    EXPECT_EQ(EBUSY, errno);
    int cfd = open_node(0, true);
    ASSERT_GE(cfd, 0);
    struct hl_info_dram_usage usage;
    EXPECT_EQ(0, info(cfd, HL_INFO_DRAM_USAGE, &usage, sizeof(usage)));
    /* one 640 MiB page of the 80 GiB is still held */
    EXPECT_EQ((80ull << 30) - (640ull << 20), usage.dram_free_mem);

    /* released with the import */
    EXPECT_EQ(0, unmap(fd1, iva));
    m_fd = open_node(0, false);
    ASSERT_GE(m_fd, 0) << strerror(errno);
    EXPECT_EQ(0, info(m_fd, HL_INFO_DRAM_USAGE, &usage, sizeof(usage)));
    EXPECT_EQ(80ull << 30, usage.dram_free_mem);
    EXPECT_EQ(0, m_ops->close(fd1));
    EXPECT_EQ(0, m_ops->close(cfd));
}

/* ... so a process that closed its device but keeps a DMA-BUF it exported
 * is still listed as the device's user, and killed when the device resets
 * (device_kill_open_processes) */
TEST_F(emu_dmabuf, exporter_killed_for_its_dmabuf) {
    m_cfg.oot_import = 1;
    init_ok();

    pid_t pid = fork();
    if (pid == 0) {
        uint64_t h, va;
        int fd, cfd;

        m_fd = open_node(0, false);
        if ((m_fd < 0) || (alloc(m_fd, 2 << 20, &h) != 0) ||
            (map_device(m_fd, h, &va) != 0) ||
            (export_fd(va, 2 << 20, 0, &fd) != 0)) {
            _exit(10);
        }
        m_ops->close(m_fd);     /* keeps the DMA-BUF fd */
        cfd = open_node(0, true);
        /* the device resets after this INFO (no owner: hard, at once) */
        if ((cfd < 0) || (gaudi_emu_set_faults("reset:1") != 0)) {
            _exit(11);
        }
        dev_status(cfd);
        sleep(30);      /* killed meanwhile */
        _exit(0);
    }

    int status;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    EXPECT_TRUE(WIFSIGNALED(status) && (WTERMSIG(status) == SIGKILL))
            << std::hex << status;
    /* the DMA-BUF went with the process: the device is free */
    m_fd = open_node(0, false);
    EXPECT_GE(m_fd, 0) << strerror(errno);
}

/* The offset of an export, per driver release: applied from the patch
 * "add missing offset handling for dma-buf" on (out-of-tree 1.24), while an
 * older driver validates it but exports from the mapping's first page: an
 * importer then reads the wrong memory. The release is stated in sysfs. */
TEST_F(emu_dmabuf, export_offset_per_driver_release) {
    static const struct {
        const char *version;
        bool       applied;
    } releases[] = {{"1.24.1", true}, {"1.23.0", false}, {NULL, true}};
    const uint64_t size = 64 << 10, offset = 1 << 20;

    for (const auto &r : releases) {
        m_cfg.oot_import  = 1;
        m_cfg.oot_version = r.version;
        open_ok();

        char buf[64];
        ASSERT_GT(m_ops->read_attr(UCT_GAUDI_SYSFS_MODULE_VERSION, buf,
                                   sizeof(buf)), 0);
        EXPECT_EQ(std::string(r.version ? r.version : "1.24.1") +
                  "-emulated\n", buf);

        uint64_t h, va, iva, hva, seq;
        int fd;
        ASSERT_NO_FATAL_FAILURE(alloc_map(m_fd, 2 << 20, &h, &va));
        fill(va, size, 1);                  /* the mapping's first page */
        fill(va + offset, size, 2);         /* what is exported */
        ASSERT_EQ(0, export_fd(va, size, offset, &fd));
        ASSERT_EQ(0, import_fd(m_fd, fd, size, &iva));
        close(fd);

        std::vector<uint8_t> host(size, 0);
        ASSERT_EQ(0, map_host(m_fd, host.data(), size, &hva));
        ASSERT_EQ(0, dma(iva, hva, size, &seq));
        ASSERT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
        EXPECT_TRUE(check(host.data(), size, r.applied ? 2 : 1))
                << (r.version ? r.version : "default");

        EXPECT_EQ(0, unmap(m_fd, hva));
        EXPECT_EQ(0, unmap(m_fd, iva));
        m_ops->close(m_fd);
        m_fd = -1;
        free(m_cb);     /* open_ok() allocates it again */
        m_cb = NULL;
        gaudi_emu_fini();
    }
}

/* The PCIe route between exporter and importer, per emulated platform
 * (pci_topology): the out-of-tree driver imports whatever the route (it
 * has no pci_p2pdma_distance check). Where the platform forwards peer DMA
 * the import works both ways; where it does not (sockets: the two devices
 * below two Haswell-EP host bridges) a write into the import is lost while
 * its CS completes, and a read from it never completes: the CS times out
 * and the device resets (docs/emulator.md §10) */
TEST_F(emu_dmabuf, peer_dma_per_pci_route) {
    static const struct {
        gaudi_emu_pci_topology_t topology;
        bool                     routed;
    } cases[] = {{GAUDI_EMU_PCI_SWITCH, true},
                 {GAUDI_EMU_PCI_ROOT_PORTS, true},
                 {GAUDI_EMU_PCI_SOCKETS, false}};
    const uint64_t size = 64 << 10;

    for (const auto &c : cases) {
        m_cfg.oot_import   = 1;
        m_cfg.pci_topology = c.topology;
        open_ok();

        uint64_t h, va, iva, hva, seq, got, events = 0;
        int fd, fd1, efd, err;
        fd1 = open_node(1, false);
        ASSERT_GE(fd1, 0);
        ASSERT_NO_FATAL_FAILURE(alloc_map(fd1, 2 << 20, &h, &va));
        ASSERT_EQ(0, export_fd(va, size, 0, &fd, fd1));
        ASSERT_EQ(0, import_fd(m_fd, fd, size, &iva)) << c.topology;
        efd = register_eventfd(m_fd);
        ASSERT_GE(efd, 0);

        std::vector<uint8_t> host(size, 0x5a), back(size, 0);
        ASSERT_EQ(0, map_host(m_fd, host.data(), size, &hva));
        ASSERT_EQ(0, dma(hva, iva, size, &seq));
        EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq))
                << c.topology;
        ASSERT_EQ(0, gaudi_emu_dmabuf_read(fd, 0, back.data(), size, &got));
        EXPECT_EQ(c.routed ? size : 0,
                  (uint64_t)std::count(back.begin(), back.end(), 0x5a))
                << c.topology << ": bytes that landed";

        ASSERT_EQ(0, dma(iva, hva, size, &seq));
        if (c.routed) {
            EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
        } else {
            /* timed out; or, once the reset runs, the wait is refused */
            wait_done(seq, &err);
            EXPECT_TRUE((err == ETIMEDOUT) || (err == EBUSY))
                    << strerror(err);
            EXPECT_EQ(0, info(m_fd, HL_INFO_GET_EVENTS, &events,
                              sizeof(events)));
            EXPECT_TRUE(events & HL_NOTIFIER_EVENT_CS_TIMEOUT) << events;
            EXPECT_TRUE(events & HL_NOTIFIER_EVENT_DEVICE_RESET) << events;
        }

        close(fd);
        close(efd);
        m_ops->close(m_fd);
        m_ops->close(fd1);
        m_fd = -1;
        free(m_cb);     /* open_ok() allocates it again */
        m_cb = NULL;
        gaudi_emu_fini();
    }
}
