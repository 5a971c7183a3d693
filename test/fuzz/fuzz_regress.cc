/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * The fixed inputs of what the fuzz loops found (docs/fuzzing.md,
 * "Findings"), as ordinary tests, and the supervisor's own test: a crash
 * and a hang of a worker must come out as failures with the seed, the
 * iteration and the replay command.
 */

#include "fuzz_ipc.h"

#include <gtest/gtest-spi.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>


using namespace gaudi_fuzz;

namespace {

/* An open compute node of a fresh emulated node (as test/unit/emu/emu_test.h) */
class gaudi_fuzz_emu : public ::testing::Test {
protected:
    virtual void TearDown()
    {
        if (m_fd >= 0) {
            m_ops->close(m_fd);
        }
        gaudi_emu_fini();
        remove_tree(m_dir);
    }

    void open_node(uct_gaudi_asic_t asic)
    {
        m_dir = make_temp_dir("regress");
        memset(&m_cfg, 0, sizeof(m_cfg));
        m_cfg.num_devices = 1;
        m_cfg.asic        = asic;
        m_cfg.hbm_size    = (asic == UCT_GAUDI_ASIC_GAUDI2) ? 1280ul << 20 :
                                                              64ul << 20;
        m_cfg.abi         = UCT_GAUDI_ABI_DRM;
        m_cfg.state_dir   = m_dir.c_str();
        ASSERT_EQ(0, gaudi_emu_init(&m_cfg, &m_ops)) << gaudi_emu_last_error();
        m_fd = m_ops->open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
        ASSERT_GE(m_fd, 0) << strerror(errno);
    }

    int ioctl_err(uct_gaudi_ioc_t ioc, void *args)
    {
        errno = 0;
        return (m_ops->ioctl(m_fd, uct_gaudi_abi_ioctl_code(m_cfg.abi, ioc),
                             args) == 0) ? 0 : errno;
    }

    int export_dmabuf(uint64_t addr, uint64_t offset, uint64_t size)
    {
        union hl_mem_args args;
        struct uct_gaudi_mem_export_in *in =
                (struct uct_gaudi_mem_export_in*)&args.in;
        int err;

        memset(&args, 0, sizeof(args));
        args.in.op    = HL_MEM_OP_EXPORT_DMABUF_FD;
        args.in.flags = O_CLOEXEC;
        in->addr      = addr;
        in->offset    = offset;
        in->mem_size  = size;
        err           = ioctl_err(UCT_GAUDI_IOC_MEMORY, &args);
        if (err == 0) {
            close(args.out.fd);
        }
        return err;
    }

    int register_eventfd(int fd)
    {
        struct hl_info_args args;

        memset(&args, 0, sizeof(args));
        args.op      = HL_INFO_REGISTER_EVENTFD;
        args.eventfd = (uint32_t)fd;
        return ioctl_err(UCT_GAUDI_IOC_INFO, &args);
    }

    std::string               m_dir;
    gaudi_emu_config_t        m_cfg;
    const uct_gaudi_drv_ops_t *m_ops = NULL;
    int                       m_fd   = -1;
};

} /* namespace */


/* Found by gaudi_fuzz.ioctl: an export offset near 2^64 wrapped past the
 * "offset + size <= mapping" check and exported the memory before the
 * mapping (another allocation's, possibly another process's). */
TEST_F(gaudi_fuzz_emu, export_offset_does_not_wrap)
{
    union hl_mem_args args;
    uint64_t va;

    open_node(UCT_GAUDI_ASIC_GAUDI2);
    memset(&args, 0, sizeof(args));
    args.in.op             = HL_MEM_OP_ALLOC;
    args.in.alloc.mem_size = 4096;
    ASSERT_EQ(0, ioctl_err(UCT_GAUDI_IOC_MEMORY, &args));
    uint64_t handle = args.out.handle;
    memset(&args, 0, sizeof(args));
    args.in.op                = HL_MEM_OP_MAP;
    args.in.map_device.handle = handle;
    ASSERT_EQ(0, ioctl_err(UCT_GAUDI_IOC_MEMORY, &args));
    va = args.out.device_virt_addr;

    EXPECT_EQ(0, export_dmabuf(va, 0, 8192));
    EXPECT_EQ(EINVAL, export_dmabuf(va, 0ull - 4096, 8192));
    EXPECT_EQ(EINVAL, export_dmabuf(va, 0ull - 4096, 4096));
    EXPECT_EQ(EINVAL, export_dmabuf(va, 4096, 0ull - 4096));
    EXPECT_EQ(EINVAL, export_dmabuf(va, 640ull << 20, 4096));
}

/* ... and on Gaudi1 (a physical address) "addr + size" wrapped the same
 * way */
TEST_F(gaudi_fuzz_emu, export_gaudi1_range_does_not_wrap)
{
    open_node(UCT_GAUDI_ASIC_GAUDI1);
    EXPECT_EQ(0, export_dmabuf(0x20000000ull, 0, 8192));
    EXPECT_EQ(EINVAL, export_dmabuf(0ull - 4096, 0, 8192));
    EXPECT_EQ(EINVAL, export_dmabuf(0x20000000ull, 0, 0ull - 4096));
    EXPECT_EQ(EINVAL, export_dmabuf(0x20000000ull + (64ul << 20), 0, 4096));
}

/* Found by gaudi_fuzz.ioctl: REGISTER_EVENTFD took any fd, and the
 * notifier then wrote 8 bytes per event to it under the context lock: to a
 * pipe nobody reads, the context hung once the pipe was full; a regular
 * file was scribbled on. The driver takes eventfds only. */
TEST_F(gaudi_fuzz_emu, register_eventfd_takes_eventfds_only)
{
    int pipefd[2], efd;

    open_node(UCT_GAUDI_ASIC_GAUDI2);
    ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
    EXPECT_EQ(EINVAL, register_eventfd(pipefd[1]));
    EXPECT_EQ(EINVAL, register_eventfd(m_fd));
    EXPECT_EQ(EBADF, register_eventfd(987));
    EXPECT_EQ(EBADF, register_eventfd(-1));
    close(pipefd[0]);
    close(pipefd[1]);

    efd = eventfd(0, EFD_CLOEXEC);
    ASSERT_GE(efd, 0);
    EXPECT_EQ(0, register_eventfd(efd));
    close(efd);
}

/* Found by gaudi_fuzz.fdsrv: a request longer than the protocol's (then 40)
 * bytes was served on its first ones (recvmsg() truncates a datagram silently
 * unless one looks at MSG_TRUNC), so a GET_FD with trailing bytes got the
 * DMA-BUF. It must be closed unanswered, like any malformed request. */
TEST(gaudi_fuzz_fdsrv, longer_request_is_refused)
{
    gaudi_test::temp_dir state("gaudi-fuzz-regress-fdsrv");
    uint8_t buf[sizeof(uct_gaudi_ipc_msg_t) + 8], reply[64];
    uct_gaudi_ipc_msg_t msg;
    struct pollfd pfd;
    std::string err;
    exporter exp;
    int sock;

    ASSERT_TRUE(exp.start(state.path(), "0.5s", &err)) << err;
    /* from no importer's fd server (a zero identity) */
    msg = gaudi_test::ipc_request(UCT_GAUDI_IPC_MSG_GET_FD, exp.keys()[0],
                                  uct_gaudi_ipc_srv_id_t());
    memcpy(buf, &msg, sizeof(msg));
    memset(buf + sizeof(msg), 0xa5, sizeof(buf) - sizeof(msg));

    /* the same request at its size is answered */
    for (size_t len : {sizeof(msg), sizeof(buf)}) {
        sock = connect_unix(exp.server_path(), SOCK_SEQPACKET, false);
        ASSERT_GE(sock, 0) << strerror(errno);
        ASSERT_EQ((ssize_t)len, send(sock, buf, len, MSG_NOSIGNAL));
        pfd.fd     = sock;
        pfd.events = POLLIN;
        ASSERT_EQ(1, poll(&pfd, 1, 5000));
        EXPECT_EQ((len == sizeof(msg)) ? (ssize_t)sizeof(msg) : 0,
                  recv(sock, reply, sizeof(reply), 0)) << len << " bytes";
        close(sock);
    }

    EXPECT_TRUE(exp.check_leaks(3.0, &err)) << err;
    exp.stop();
}


/* ---- the supervisor ------------------------------------------------------ */

static void crashing_loop(worker &w)
{
    for (uint64_t i = w.first(); w.more(i); ++i) {
        w.begin(i, "boom", 4);
        if (i == w.first() + 3) {
            signal(SIGSEGV, SIG_DFL);   /* not UCX's backtrace: a test */
            raise(SIGSEGV);
        }
    }
}

static void hanging_loop(worker &w)
{
    for (uint64_t i = w.first(); w.more(i); ++i) {
        w.begin(i, "stuck", 5);
        if (i == w.first() + 2) {
            pause();
        }
    }
}

static void failing_loop(worker &w)
{
    for (uint64_t i = w.first(); w.more(i); ++i) {
        w.begin(i, "x", 1);
        if (i == w.first() + 1) {
            w.fail("the check of iteration %llu", (unsigned long long)i);
        }
    }
}

static void remove_saved_inputs()
{
    char path[128];

    for (uint64_t i = config().first; i < config().first + 4; ++i) {
        for (const char *t : {"selftest-crash", "selftest-hang"}) {
            snprintf(path, sizeof(path), "/tmp/gaudi-fuzz-%s-%llx-%llu.hex",
                     t, (unsigned long long)config().seed,
                     (unsigned long long)i);
            unlink(path);
        }
    }
}

TEST(gaudi_fuzz_harness, reports_crash_hang_and_failure)
{
    if (config().iterations != 0) {
        GTEST_SKIP() << "a replay (GAUDI_FUZZ_ITERATIONS) is running";
    }

    EXPECT_NONFATAL_FAILURE(run_target("selftest-crash", 0, 10.0,
                                       crashing_loop),
                            "CRASH: the worker was killed by signal 11");
    EXPECT_NONFATAL_FAILURE(run_target("selftest-hang", 0, 0.5, hanging_loop),
                            "HANG: no progress");
    EXPECT_NONFATAL_FAILURE(run_target("selftest-fail", 16, 10.0,
                                       failing_loop),
                            "the check of iteration");
    remove_saved_inputs();
}
