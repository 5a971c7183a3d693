/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * Target "ioctl": the argument structs of the emulator's ioctls (INFO,
 * MEMORY, CB, CS, WAIT_CS), its mmap of CBs, and the packets of the command
 * buffers, as a program on the driver seam sends them (test/unit/emu/emu_test.h
 * opens a node the same way). This is the input the real kernel driver
 * takes from any process; the emulator must answer it as the driver does:
 * an errno, never a crash, a hang or a write where it should not.
 *
 * Each batch of iterations runs in a forked worker on a fresh emulated node
 * (ASIC, ABI, execution mode and sometimes injected faults drawn from the
 * batch's seed), with live state that the inputs draw from: allocations,
 * mappings, CBs, sequence numbers, exported DMA-BUFs. Every iteration is
 * one call with a struct built from that state, interesting values and
 * random bits, sometimes mutated byte by byte afterwards.
 *
 * Pointers: the emulator must answer EFAULT for pointers inside the structs
 * that do not point to memory of the right kind (the struct itself is read
 * directly, a known difference in docs/emulator.md). Such pointers come
 * from a pool: a scratch area (valid; the only memory a DMA may write,
 * since only it is ever userptr-mapped), its end straddling a guard
 * region, the guard, a read-only page, NULL, low, kernel and non-canonical
 * addresses. A mutated pointer outside the pool is replaced by one from it:
 * an arbitrary valid address of this process would let the emulator
 * legitimately scribble over the worker.
 *
 * Checks beyond "no crash, no hang": the return value is 0 or -1 with an
 * errno the driver can return; a call that succeeded on a pointer it could
 * not have used is a failure; a successful DMA-BUF export lies inside the
 * device's memory; REGISTER_EVENTFD takes eventfds only (the driver's
 * eventfd_ctx_fdget); and after the batch closes its nodes, the emulator's
 * accounting is all zero and the fds are those before the batch.
 */

#include "fuzz_common.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>


using namespace gaudi_fuzz;

namespace {

const char *const TARGET = "ioctl";

/* Iterations per worker: enough to build up state (mappings, CBs, a CS
 * window of sequence numbers), few enough that a crash replays quickly */
const uint64_t BATCH = 2000;

const size_t MiB           = 1ul << 20;
const size_t SCRATCH_SIZE  = 4 * MiB;     /* 2 MiB-aligned: huge mappings */
const size_t GUARD_SIZE    = 1 * MiB;
const size_t RO_SIZE       = 64 * 1024;
const size_t UCB_OFFSET    = 3 * MiB;     /* the user CB in scratch */
const size_t UCB_SIZE      = 64 * 1024;
const size_t KCB_SIZE      = 64 * 1024;


/* What a pointer field points at, for the checks */
enum ptr_kind {
    PTR_SCRATCH,    /* read-write, ours */
    PTR_READONLY,   /* readable, not writable */
    PTR_BAD         /* unusable: the call must fail with EFAULT */
};


class ioctl_fuzzer {
public:
    ioctl_fuzzer(worker &w) :
        m_w(w), m_r(iteration_rng("ioctl-batch", w.first())), m_ops(NULL),
        m_scratch(NULL), m_ro(NULL), m_kcb(0), m_kcb_ptr(NULL), m_ucb_va(0),
        m_max_seq(0), m_efd(-1), m_devnull(-1), m_regular(-1)
    {
        m_fd[0] = m_fd[1] = m_ctl = -1;
        m_pipe[0] = m_pipe[1] = -1;
    }

    void run();

private:
    /* ---- setup and teardown ---- */
    bool setup();
    void open_nodes();
    void close_nodes();
    void teardown();

    /* ---- pointers ---- */
    uint64_t scratch_ptr(size_t need);
    uint64_t any_ptr(size_t need);
    uint64_t sanitize(uint64_t p, size_t need);
    ptr_kind kind(uint64_t p, size_t len) const;

    /* ---- values from the live state ---- */
    uint64_t any_u64();
    uint64_t device_va();
    int any_fd();
    uint64_t any_seq();

    /* ---- one call of each kind ---- */
    int call(int fd, uct_gaudi_ioc_t ioc, void *args);
    void check_errno(const char *what, int ret, int err);
    void mutate_args(void *args, size_t size);
    void do_info();
    void do_memory();
    void do_cb();
    void do_mmap();
    void do_cs();
    void do_wait();
    void do_misc();
    void do_seed();
    size_t gen_packets(uint8_t *buf, size_t max);

    bool gaudi1() const { return m_cfg.asic == UCT_GAUDI_ASIC_GAUDI1; }
    bool in_large_mapping(uint64_t va) const;

    worker                     &m_w;
    rng                        m_r;
    gaudi_emu_config_t         m_cfg;
    std::string                m_dir;
    const uct_gaudi_drv_ops_t  *m_ops;
    int                        m_fd[2];     /* compute nodes of dev 0, 1 */
    int                        m_ctl;       /* control node of dev 0 */
    uint8_t                    *m_scratch;
    uint8_t                    *m_ro;
    uint64_t                   m_kcb;       /* Gaudi1: kernel CB handle */
    uint8_t                    *m_kcb_ptr;  /* its mmap */
    uint64_t                   m_ucb_va;    /* Gaudi2: the user CB's VA */
    uint64_t                   m_max_seq;
    std::vector<uint64_t>      m_handles;
    std::map<uint64_t, uint64_t> m_vas;     /* device VA -> size */
    std::vector<uint64_t>      m_cbs;
    std::map<uint64_t, size_t> m_cb_lengths; /* what their mmap must ask */
    std::map<void*, size_t>    m_cb_maps;
    std::vector<int>           m_dmabufs;
    int                        m_efd, m_devnull, m_regular;
    int                        m_pipe[2];   /* nobody reads it */
    std::vector<std::string>   m_fds_before;
    std::vector<hex_seed>      m_corpus;
    bytes                      m_input;     /* for the report */
};


/* ---- setup and teardown -------------------------------------------------- */

bool ioctl_fuzzer::setup()
{
    static const uct_gaudi_asic_t asics[] = {
        UCT_GAUDI_ASIC_GAUDI2, UCT_GAUDI_ASIC_GAUDI2, UCT_GAUDI_ASIC_GAUDI2,
        UCT_GAUDI_ASIC_GAUDI1, UCT_GAUDI_ASIC_GAUDI1, UCT_GAUDI_ASIC_GAUDI3
    };
    static const char *const faults[] = {
        "cs_abort:5+", "cs_timeout:40", "reset:300", "fail:any:97+:EIO",
        "fail:memory:3:ENOMEM,cs_abort:2", "fail:mmap:1:EAGAIN"
    };
    uint8_t *area;
    int ret;

    m_fds_before = list_fds(NULL);
    m_corpus     = load_hex_corpus(TARGET);
    m_dir        = make_temp_dir("ioctl");
    if (m_dir.empty()) {
        m_w.fail("mkdtemp: %s", strerror(errno));
        return false;
    }

    memset(&m_cfg, 0, sizeof(m_cfg));
    m_cfg.num_devices = 2;
    m_cfg.asic        = asics[m_r.below(sizeof(asics) / sizeof(asics[0]))];
    m_cfg.hbm_size    = (m_cfg.asic == UCT_GAUDI_ASIC_GAUDI2) ? 1280 * MiB :
                                                                64 * MiB;
    m_cfg.abi         = (uct_gaudi_abi_t)m_r.below(UCT_GAUDI_ABI_LAST);
    m_cfg.oot_import  = m_r.chance(3, 4);
    m_cfg.exec        = m_r.chance(1, 2) ? GAUDI_EMU_EXEC_THREAD :
                                           GAUDI_EMU_EXEC_INLINE;
    m_cfg.state_dir   = m_dir.c_str();
    m_cfg.faults      = m_r.chance(1, 4) ?
                        faults[m_r.below(sizeof(faults) / sizeof(faults[0]))] :
                        NULL;
    m_cfg.edma_disabled = ((m_cfg.asic == UCT_GAUDI_ASIC_GAUDI2) &&
                           m_r.chance(1, 4)) ? (uint32_t)m_r.below(255) : 0;
    m_w.summary("last batch: asic %d abi %d exec %d faults %s", m_cfg.asic,
                m_cfg.abi, m_cfg.exec, m_cfg.faults ? m_cfg.faults : "none");

    ret = gaudi_emu_init(&m_cfg, &m_ops);
    if (ret != 0) {
        m_w.fail("gaudi_emu_init: %s (%s)", strerror(-ret),
                 gaudi_emu_last_error());
        return false;
    }

    /* scratch | guard | read-only, in one reservation so that the guard
     * is really next to the scratch area */
    area = (uint8_t*)mmap(NULL, 2 * MiB + SCRATCH_SIZE + GUARD_SIZE + RO_SIZE,
                          PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED) {
        m_w.fail("mmap: %s", strerror(errno));
        return false;
    }
    m_scratch = (uint8_t*)(((uintptr_t)area + 2 * MiB - 1) & ~(2 * MiB - 1));
    m_ro      = m_scratch + SCRATCH_SIZE + GUARD_SIZE;
    mprotect(m_scratch, SCRATCH_SIZE, PROT_READ | PROT_WRITE);
    mprotect(m_ro, RO_SIZE, PROT_READ);

    m_efd     = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    m_devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    m_regular = open((m_dir + "/regular").c_str(),
                     O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if ((pipe2(m_pipe, O_CLOEXEC) != 0) || (m_efd < 0) || (m_devnull < 0) ||
        (m_regular < 0)) {
        m_w.fail("fds: %s", strerror(errno));
        return false;
    }

    open_nodes();
    return true;
}

/* Open the nodes and set up the CB the CSs use; a reset without an owner
 * makes the first open fail with EAGAIN (docs/emulator.md 8) */
void ioctl_fuzzer::open_nodes()
{
    union hl_mem_args mem;
    union hl_cb_args cb;
    char path[64];
    unsigned i, tries;
    void *ptr;

    for (i = 0; i < 2; ++i) {
        snprintf(path, sizeof(path), (m_cfg.abi == UCT_GAUDI_ABI_MISC) ?
                 UCT_GAUDI_DEV_MISC_COMPUTE : UCT_GAUDI_DEV_ACCEL_COMPUTE, i);
        for (tries = 0; (m_fd[i] < 0) && (tries < 3); ++tries) {
            m_fd[i] = m_ops->open(path, O_RDWR | O_CLOEXEC);
        }
    }
    snprintf(path, sizeof(path), (m_cfg.abi == UCT_GAUDI_ABI_MISC) ?
             UCT_GAUDI_DEV_MISC_CONTROL : UCT_GAUDI_DEV_ACCEL_CONTROL, 0);
    m_ctl = m_ops->open(path, O_RDWR | O_CLOEXEC);

    if (m_fd[0] < 0) {
        return;     /* an injected open failure: calls get EBADF */
    }

    if (gaudi1()) {
        memset(&cb, 0, sizeof(cb));
        cb.in.op      = HL_CB_OP_CREATE;
        cb.in.cb_size = KCB_SIZE;
        if (call(m_fd[0], UCT_GAUDI_IOC_CB, &cb) == 0) {
            m_kcb = cb.out.cb_handle;
            ptr   = m_ops->mmap(NULL, KCB_SIZE, PROT_READ | PROT_WRITE,
                                MAP_SHARED, m_fd[0], m_kcb);
            if (ptr != MAP_FAILED) {
                m_kcb_ptr = (uint8_t*)ptr;
                m_cb_maps[ptr] = KCB_SIZE;
            }
        }
    } else {
        memset(&mem, 0, sizeof(mem));
        mem.in.op                      = HL_MEM_OP_MAP;
        mem.in.flags                   = HL_MEM_USERPTR;
        mem.in.map_host.host_virt_addr = (uintptr_t)m_scratch + UCB_OFFSET;
        mem.in.map_host.mem_size       = UCB_SIZE;
        if (call(m_fd[0], UCT_GAUDI_IOC_MEMORY, &mem) == 0) {
            m_ucb_va = mem.out.device_virt_addr;
            m_vas[m_ucb_va] = UCB_SIZE;
        }
    }
}

void ioctl_fuzzer::close_nodes()
{
    for (const auto &map : m_cb_maps) {
        m_ops->munmap(map.first, map.second);
    }
    for (int fd : m_dmabufs) {
        close(fd);
    }
    for (int *fd : {&m_fd[0], &m_fd[1], &m_ctl}) {
        if (*fd >= 0) {
            m_ops->close(*fd);
            *fd = -1;
        }
    }
    m_cb_maps.clear();
    m_dmabufs.clear();
    m_handles.clear();
    m_vas.clear();
    m_cbs.clear();
    m_cb_lengths.clear();
    m_kcb     = 0;
    m_kcb_ptr = NULL;
    m_ucb_va  = 0;
    m_max_seq = 0;
}

void ioctl_fuzzer::teardown()
{
    gaudi_emu_stats_t stats, zero;
    std::vector<std::string> fds;

    close_nodes();
    memset(&zero, 0, sizeof(zero));
    memset(&stats, 0, sizeof(stats));
    if (m_ops != NULL) {
        gaudi_emu_get_stats(&stats);
        stats.kernel_log_errors = 0;
        if (!stats_equal(stats, zero) || (stats.contexts != 0)) {
            m_w.fail("after closing every node the emulator still accounts "
                     "%s", stats_string(stats).c_str());
        }
        gaudi_emu_fini();
    }

    for (int fd : {m_efd, m_devnull, m_regular, m_pipe[0], m_pipe[1]}) {
        if (fd >= 0) {
            close(fd);
        }
    }

    fds = list_fds(NULL);
    if (fds != m_fds_before) {
        m_w.fail("fds leaked by the emulator:%s",
                 fd_diff(fds, m_fds_before).c_str());
    }
    remove_tree(m_dir);
}


/* ---- pointers ------------------------------------------------------------ */

/* [p, p + need) inside the scratch area, at a random (often unaligned)
 * place */
uint64_t ioctl_fuzzer::scratch_ptr(size_t need)
{
    size_t off;

    need = std::min(need, SCRATCH_SIZE);
    off  = m_r.below(SCRATCH_SIZE - need + 1);
    if (m_r.chance(3, 4)) {
        off &= ~(uint64_t)7;
    }
    return (uintptr_t)m_scratch + off;
}

uint64_t ioctl_fuzzer::any_ptr(size_t need)
{
    uintptr_t guard = (uintptr_t)m_scratch + SCRATCH_SIZE;

    switch (m_r.below(16)) {
    case 0: /* the end of scratch, running into the guard */
        return guard - 1 - m_r.below(std::min(std::max<size_t>(need, 2) - 1,
                                              SCRATCH_SIZE));
    case 1:
        return guard + m_r.below(GUARD_SIZE);
    case 2:
        return (uintptr_t)m_ro + m_r.below(RO_SIZE);
    case 3:
        return m_r.chance(1, 2) ? 0 : m_r.below(65536);
    case 4: /* the kernel half */
        return 0xffff800000000000ull + (m_r.next() & 0x7fffffffffffull);
    case 5: /* non-canonical */
        return 0x0000800000000000ull + (m_r.next() & 0x7fff7fffffffffffull);
    case 6:
        return sanitize(m_r.next(), need);
    default:
        return scratch_ptr(need);
    }
}

/* Keep @a p if it is one of the pool's kinds of address, else draw one */
uint64_t ioctl_fuzzer::sanitize(uint64_t p, size_t need)
{
    uintptr_t lo = (uintptr_t)m_scratch, hi = (uintptr_t)m_ro + RO_SIZE;

    if ((p < 65536) || (p >= 0x0000800000000000ull) ||
        ((p >= lo) && (p < hi))) {
        return p;
    }
    return any_ptr(need);
}

ptr_kind ioctl_fuzzer::kind(uint64_t p, size_t len) const
{
    uintptr_t s = (uintptr_t)m_scratch, r = (uintptr_t)m_ro;

    if ((p >= s) && (p <= s + SCRATCH_SIZE) && (len <= s + SCRATCH_SIZE - p)) {
        return PTR_SCRATCH;
    } else if ((p >= r) && (p <= r + RO_SIZE) && (len <= r + RO_SIZE - p)) {
        return PTR_READONLY;
    }
    return PTR_BAD;
}


/* ---- values from the live state ------------------------------------------ */

uint64_t ioctl_fuzzer::any_u64()
{
    return m_r.chance(1, 2) ? interesting(m_r, 8) :
           m_r.chance(1, 2) ? m_r.below(4096) : m_r.next();
}

/* A device address: inside or at the edge of a mapping, in a VA range, or
 * anything */
uint64_t ioctl_fuzzer::device_va()
{
    uint64_t base, size;

    if (!m_vas.empty() && m_r.chance(3, 4)) {
        auto it = m_vas.begin();
        std::advance(it, m_r.below(m_vas.size()));
        base = it->first;
        size = it->second;
        switch (m_r.below(4)) {
        case 0:
            return base;
        case 1: /* near the end: a transfer that crosses it */
            return base + size - 1 - m_r.below(std::min<uint64_t>(size, 64));
        case 2:
            return base + size + m_r.below(4096);
        default:
            return base + m_r.below(std::min<uint64_t>(size, 1 * MiB));
        }
    }

    switch (m_r.below(5)) {
    case 0:
        return gaudi1() ? 0x20000000ull + m_r.below(m_cfg.hbm_size + 4096) :
                          0x1001000000000000ull + m_r.below(64 * MiB);
    case 1:
        return 0xFFF0000000000000ull + m_r.below(64 * MiB);
    case 2:
        return 0x1000000000ull + m_r.below(64 * MiB);  /* Gaudi2 SRAM */
    default:
        return any_u64();
    }
}

bool ioctl_fuzzer::in_large_mapping(uint64_t va) const
{
    for (const auto &map : m_vas) {
        if ((map.second > 16 * MiB) && (va >= map.first) &&
            (va - map.first < map.second)) {
            return true;
        }
    }
    return false;
}

int ioctl_fuzzer::any_fd()
{
    switch (m_r.below(10)) {
    case 0:
        return m_efd;
    case 1:
        return m_pipe[1];
    case 2:
        return m_devnull;
    case 3:
        return m_regular;
    case 4:
        return m_dmabufs.empty() ? -1 : m_r.pick(m_dmabufs);
    case 5:
        return m_fd[m_r.below(2)];
    case 6:
        return 900 + (int)m_r.below(100);      /* closed */
    case 7:
        return -1 - (int)m_r.below(3);
    default:
        return (int)interesting(m_r, 4);
    }
}

uint64_t ioctl_fuzzer::any_seq()
{
    switch (m_r.below(6)) {
    case 0:
        return 0;
    case 1:
        return m_max_seq + 1 + m_r.below(2);
    case 2:
        return any_u64();
    default:
        return (m_max_seq == 0) ? 1 : m_max_seq - m_r.below(
                std::min<uint64_t>(m_max_seq, 80));
    }
}


/* ---- calls --------------------------------------------------------------- */

int ioctl_fuzzer::call(int fd, uct_gaudi_ioc_t ioc, void *args)
{
    unsigned long request = uct_gaudi_abi_ioctl_code(m_cfg.abi, ioc);
    int ret;

    m_w.record(m_input.data(), m_input.size());
    errno = 0;
    ret   = m_ops->ioctl(fd, request, args);
    check_errno("ioctl", ret, errno);
    return (ret == 0) ? 0 : errno;
}

void ioctl_fuzzer::check_errno(const char *what, int ret, int err)
{
    static const std::set<int> allowed = {
        EINVAL, EFAULT, ENOMEM, EBUSY, EPERM, ENOTTY, EBADF, EAGAIN,
        EOPNOTSUPP, ETIMEDOUT, EIO, ENODEV, EMFILE, ENOENT, ENXIO, EACCES,
        EINTR, ENOSPC, ENOSYS, EOVERFLOW, ECANCELED
    };

    if ((ret != 0) && (ret != -1)) {
        m_w.fail("%s returned %d (not 0 or -1)", what, ret);
    } else if ((ret == -1) && (allowed.find(err) == allowed.end())) {
        m_w.fail("%s failed with errno %d (%s), which the driver never "
                 "returns", what, err, strerror(err));
    }
}

/* Bytes of a struct mutated in place (its size stays: it is what the
 * ioctl code says) */
void ioctl_fuzzer::mutate_args(void *args, size_t size)
{
    bytes b((uint8_t*)args, (uint8_t*)args + size);

    mutate_bytes(m_r, b, size, std::vector<bytes>());
    b.resize(size, m_r.chance(1, 2) ? 0 : 0xff);
    memcpy(args, b.data(), size);
}

void ioctl_fuzzer::do_info()
{
    static const uint32_t copying_ops[] = {
        HL_INFO_HW_IP_INFO, HL_INFO_DEVICE_STATUS, HL_INFO_RESET_COUNT,
        HL_INFO_HW_EVENTS, HL_INFO_HW_EVENTS_AGGREGATE, HL_INFO_CS_COUNTERS,
        HL_INFO_CLK_THROTTLE_REASON, HL_INFO_SYNC_MANAGER, HL_INFO_OPEN_STATS,
        HL_INFO_DEV_MEM_ALLOC_PAGE_SIZES, HL_INFO_DRAM_USAGE,
        HL_INFO_GET_EVENTS, HL_INFO_HW_IDLE, HL_INFO_CLK_RATE,
        HL_INFO_TIME_SYNC, HL_INFO_PCI_COUNTERS, HL_INFO_DEVICE_UTILIZATION,
        HL_INFO_POWER, HL_INFO_TOTAL_ENERGY
    };
    struct hl_info_args args;
    int fd, err, is_eventfd;
    struct stat st;
    char link[64], target[64];
    ssize_t n;

    memset(&args, 0, sizeof(args));
    args.op             = m_r.chance(7, 8) ? (uint32_t)m_r.below(34) :
                                             (uint32_t)interesting(m_r, 4);
    args.return_size    = m_r.chance(3, 4) ? (uint32_t)m_r.below(512) :
                                             (uint32_t)interesting(m_r, 4);
    args.return_pointer = any_ptr(args.return_size);
    if ((args.op == HL_INFO_REGISTER_EVENTFD) || m_r.chance(1, 8)) {
        args.eventfd = (uint32_t)any_fd();
    }
    if (m_r.chance(1, 4)) {
        mutate_args(&args, sizeof(args));
        args.return_pointer = sanitize(args.return_pointer, args.return_size);
    }

    fd = m_r.chance(7, 8) ? m_fd[0] : m_r.chance(1, 2) ? m_ctl : any_fd();
    m_input.assign((uint8_t*)&args, (uint8_t*)&args + sizeof(args));
    err = call(fd, UCT_GAUDI_IOC_INFO, &args);

    if ((err == 0) && (args.return_size != 0) &&
        (kind(args.return_pointer, 1) != PTR_SCRATCH) &&
        (std::find(std::begin(copying_ops), std::end(copying_ops), args.op) !=
         std::end(copying_ops))) {
        m_w.fail("INFO op %u succeeded writing to 0x%llx (%s), which is "
                 "not writable", args.op,
                 (unsigned long long)args.return_pointer,
                 (kind(args.return_pointer, 1) == PTR_READONLY) ?
                 "read-only" : "unmapped");
    }

    if ((err == 0) && (args.op == HL_INFO_REGISTER_EVENTFD)) {
        /* the driver's eventfd_ctx_fdget: EBADF or EINVAL for anything but
         * an eventfd */
        snprintf(link, sizeof(link), "/proc/self/fd/%d", (int)args.eventfd);
        n = readlink(link, target, sizeof(target) - 1);
        target[std::max<ssize_t>(n, 0)] = '\0';
        is_eventfd = (fstat((int)args.eventfd, &st) == 0) &&
                     !strcmp(target, "anon_inode:[eventfd]");
        if (!is_eventfd) {
            m_w.fail("REGISTER_EVENTFD accepted fd %d (%s), which is not an "
                     "eventfd (the driver answers EINVAL or EBADF)",
                     (int)args.eventfd, target);
        }
        m_w.count("eventfd_registered");
    }
    m_w.count((err == 0) ? "info_ok" : "info_err");
}

void ioctl_fuzzer::do_memory()
{
    union hl_mem_args args;
    struct uct_gaudi_mem_export_in *exp;
    struct uct_gaudi_mem_reg_dmabuf_in *imp;
    uint64_t host, size, end;
    uint32_t op;
    int err, fd;

    memset(&args, 0, sizeof(args));
    exp = (struct uct_gaudi_mem_export_in*)&args.in;
    imp = (struct uct_gaudi_mem_reg_dmabuf_in*)&args.in;
    switch (m_r.below(12)) {
    case 0:
    case 1:
        op = HL_MEM_OP_ALLOC;
        args.in.alloc.mem_size  = m_r.chance(1, 2) ? 1 + m_r.below(4 * MiB) :
                                  any_u64();
        args.in.alloc.page_size = m_r.chance(3, 4) ? 0 :
                                  m_r.chance(1, 2) ? 1ull << m_r.below(40) :
                                  any_u64();
        break;
    case 2:
        op = HL_MEM_OP_FREE;
        args.in.free.handle = (!m_handles.empty() && m_r.chance(3, 4)) ?
                              m_r.pick(m_handles) : any_u64();
        break;
    case 3:
        op = HL_MEM_OP_MAP;
        args.in.map_device.handle    = (!m_handles.empty() &&
                                        m_r.chance(3, 4)) ?
                                       m_r.pick(m_handles) : any_u64();
        args.in.map_device.hint_addr = m_r.chance(1, 2) ? 0 : device_va();
        break;
    case 4:
    case 5:
        op = HL_MEM_OP_MAP;
        args.in.flags                  = HL_MEM_USERPTR;
        size                           = m_r.chance(3, 4) ?
                                         1 + m_r.below(256 * 1024) :
                                         any_u64();
        if (m_r.chance(1, 8)) {     /* whole 2 MiB pages: the huge range */
            size = 2 * MiB * (1 + m_r.below(2));
            args.in.map_host.host_virt_addr = (uintptr_t)m_scratch;
        } else {
            args.in.map_host.host_virt_addr = any_ptr(size);
        }
        args.in.map_host.mem_size      = size;
        args.in.map_host.hint_addr     = m_r.chance(1, 2) ? 0 : device_va();
        break;
    case 6:
        op = HL_MEM_OP_UNMAP;
        args.in.unmap.device_virt_addr = device_va();
        break;
    case 7:
    case 8:
        op = HL_MEM_OP_EXPORT_DMABUF_FD;
        exp->addr     = (m_cfg.abi == UCT_GAUDI_ABI_MISC) ?
                        ((!m_handles.empty() && m_r.chance(3, 4)) ?
                         m_r.pick(m_handles) : any_u64()) : device_va();
        exp->mem_size = m_r.chance(1, 2) ? 4096 * (1 + m_r.below(64)) :
                        any_u64();
        exp->offset   = m_r.chance(1, 2) ? 0 :
                        m_r.chance(1, 2) ? 4096 * m_r.below(64) :
                        (0 - 4096 * (1 + m_r.below(4)));
        args.in.flags = m_r.chance(3, 4) ? O_CLOEXEC : (uint32_t)m_r.next();
        break;
    case 9:
        op = UCT_GAUDI_MEM_OP_REG_DMABUF_FD;
        imp->fd     = (uint64_t)(int64_t)any_fd();
        imp->length = m_r.chance(1, 2) ? 4096 * (1 + m_r.below(64)) :
                      any_u64();
        break;
    case 10:
        op = m_r.chance(1, 2) ? HL_MEM_OP_MAP_BLOCK : HL_MEM_OP_TS_ALLOC;
        args.in.map_block.block_addr = any_u64();
        break;
    default:
        op = (uint32_t)interesting(m_r, 4);
        args.in.map_host.host_virt_addr = any_u64();
        break;
    }
    args.in.op = op;
    if (m_r.chance(1, 8)) {
        args.in.flags ^= 1u << m_r.below(8);
    }
    if (m_r.chance(1, 5)) {
        mutate_args(&args, sizeof(args));
    }
    if ((args.in.op == HL_MEM_OP_MAP) && (args.in.flags & HL_MEM_USERPTR)) {
        args.in.map_host.host_virt_addr = sanitize(
                args.in.map_host.host_virt_addr, args.in.map_host.mem_size);
    }

    union hl_mem_args in = args;
    fd  = m_r.chance(15, 16) ? m_fd[m_r.chance(7, 8) ? 0 : 1] : m_ctl;
    m_input.assign((uint8_t*)&args, (uint8_t*)&args + sizeof(args));
    err = call(fd, UCT_GAUDI_IOC_MEMORY, &args);
    m_w.count((err == 0) ? "memory_ok" : "memory_err");
    if (err != 0) {
        return;
    }

    switch (in.in.op) {
    case HL_MEM_OP_ALLOC:
        if (args.out.handle != 0) {
            m_handles.push_back(args.out.handle);
        }
        break;
    case HL_MEM_OP_MAP:
        host = in.in.map_host.host_virt_addr;
        size = in.in.map_host.mem_size;
        if ((in.in.flags & HL_MEM_USERPTR) &&
            (kind(host, size) != PTR_SCRATCH)) {
            m_w.fail("MAP of host memory 0x%llx+%llu succeeded, but it is "
                     "not writable memory of the process",
                     (unsigned long long)host, (unsigned long long)size);
        }
        m_vas[args.out.device_virt_addr] =
                (in.in.flags & HL_MEM_USERPTR) ? size : 640 * MiB;
        break;
    case HL_MEM_OP_UNMAP:
        m_vas.erase(in.in.unmap.device_virt_addr);
        break;
    case HL_MEM_OP_EXPORT_DMABUF_FD:
        /* the 6.1 layout has no offset (the emulator ignores it, as the
         * driver does not see it), and Gaudi1 takes none */
        exp  = (struct uct_gaudi_mem_export_in*)&in.in;
        host = ((m_cfg.abi == UCT_GAUDI_ABI_MISC) || gaudi1()) ? 0 :
               exp->offset;
        end  = host + exp->mem_size;
        size = m_cfg.hbm_size;
        if ((end < host) || (end > size) ||
            (gaudi1() && ((exp->addr + exp->mem_size < exp->addr) ||
                          (exp->addr + exp->mem_size >
                           0x20000000ull + m_cfg.hbm_size)))) {
            m_w.fail("EXPORT_DMABUF_FD of addr 0x%llx offset 0x%llx size "
                     "0x%llx succeeded: the range wraps or lies outside the "
                     "device's %llu bytes",
                     (unsigned long long)exp->addr,
                     (unsigned long long)exp->offset,
                     (unsigned long long)exp->mem_size,
                     (unsigned long long)size);
        }
        if (args.out.fd >= 0) {
            m_dmabufs.push_back(args.out.fd);
        }
        m_w.count("exported");
        break;
    case UCT_GAUDI_MEM_OP_REG_DMABUF_FD:
        m_vas[args.out.device_virt_addr] = in.in.export_dmabuf_fd.mem_size;
        m_w.count("imported");
        break;
    }
}

void ioctl_fuzzer::do_cb()
{
    union hl_cb_args args;
    int err;

    memset(&args, 0, sizeof(args));
    args.in.op = m_r.chance(7, 8) ? (uint32_t)m_r.below(3) :
                 (uint32_t)interesting(m_r, 4);
    switch (args.in.op) {
    case HL_CB_OP_CREATE:
        args.in.cb_size = m_r.chance(3, 4) ? (uint32_t)m_r.below(128 * 1024) :
                          (uint32_t)interesting(m_r, 4);
        args.in.flags   = (uint32_t)m_r.below(4);
        break;
    default:
        args.in.cb_handle = (!m_cbs.empty() && m_r.chance(3, 4)) ?
                            m_r.pick(m_cbs) : any_u64();
        args.in.flags     = (uint32_t)m_r.below(4);
        break;
    }
    if (m_r.chance(1, 5)) {
        mutate_args(&args, sizeof(args));
    }

    union hl_cb_args in = args;
    m_input.assign((uint8_t*)&args, (uint8_t*)&args + sizeof(args));
    err = call(m_fd[0], UCT_GAUDI_IOC_CB, &args);
    m_w.count((err == 0) ? "cb_ok" : "cb_err");
    if (err != 0) {
        return;
    }

    if (in.in.op == HL_CB_OP_CREATE) {
        m_cbs.push_back(args.out.cb_handle);
        m_cb_lengths[args.out.cb_handle] =
                (std::max<size_t>(in.in.cb_size, 4096) + 4095) & ~4095ul;
    } else if ((in.in.op == HL_CB_OP_INFO) &&
               (in.in.flags & HL_CB_FLAGS_GET_DEVICE_VA)) {
        m_vas[args.out.device_va] = 4096;
    } else if (in.in.op == HL_CB_OP_DESTROY) {
        m_cbs.erase(std::remove(m_cbs.begin(), m_cbs.end(), in.in.cb_handle),
                    m_cbs.end());
        if (in.in.cb_handle == m_kcb) {
            m_kcb = 0;      /* its mapping stays until munmap */
        }
    }
}

void ioctl_fuzzer::do_mmap()
{
    uint64_t offset;
    size_t length;
    void *ptr;
    int fd;

    if (!m_cb_maps.empty() && m_r.chance(1, 3)) {
        auto it = m_cb_maps.begin();
        std::advance(it, m_r.below(m_cb_maps.size()));
        if (it->first == m_kcb_ptr) {
            m_kcb_ptr = NULL;
        }
        m_input.assign(16, 0);
        m_w.record(m_input.data(), m_input.size());
        m_ops->munmap(it->first, it->second);
        m_cb_maps.erase(it);
        return;
    }

    offset = (!m_cbs.empty() && m_r.chance(3, 4)) ? m_r.pick(m_cbs) :
             any_u64() & ~4095ull;
    length = (m_cb_lengths.count(offset) && m_r.chance(3, 4)) ?
             m_cb_lengths[offset] :
             m_r.chance(3, 4) ? 4096 * (1 + m_r.below(32)) :
             (size_t)interesting(m_r, 4);
    fd     = m_r.chance(7, 8) ? m_fd[0] : m_ctl;
    m_input.assign((uint8_t*)&offset, (uint8_t*)&offset + sizeof(offset));
    m_w.record(m_input.data(), m_input.size());
    errno  = 0;
    ptr    = m_ops->mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                         (off_t)offset);
    if (ptr == MAP_FAILED) {
        check_errno("mmap", -1, errno);
        m_w.count("mmap_err");
        return;
    }
    m_cb_maps[ptr] = length;
    m_w.count("mmap_ok");
}

/* Random packets into @a buf; returns their size */
size_t ioctl_fuzzer::gen_packets(uint8_t *buf, size_t max)
{
    struct uct_gaudi_pkt_lin_dma pkt;
    size_t len = 0, n = 1 + m_r.below(6), i;
    uint32_t ctl, count;
    uint64_t words[2];

    for (i = 0; (i < n) && (len + 32 <= max); ++i) {
        switch (m_r.below(8)) {
        case 0:
        case 1:
        case 2: /* LIN_DMA, copy or memset */
            pkt.ctl      = (UCT_GAUDI_PKT_LIN_DMA << UCT_GAUDI_PKT_OPCODE_SHIFT) |
                           (gaudi1() ? UCT_GAUDI1_LIN_DMA_LIN : 0) |
                           (m_r.chance(1, 4) ? UCT_GAUDI2_LIN_DMA_MEMSET : 0) |
                           (m_r.chance(1, 8) ? (uint32_t)m_r.next() &
                                               ~UCT_GAUDI_PKT_OPCODE_MASK : 0);
            pkt.src_addr = device_va();
            pkt.dst_addr = device_va();
            pkt.tsize    = m_r.chance(9, 10) ? (uint32_t)m_r.below(8192) :
                           (uint32_t)m_r.below(1 * MiB);
            if (m_r.chance(1, 50) && !in_large_mapping(pkt.src_addr) &&
                !in_large_mapping(pkt.dst_addr)) {
                /* a huge size, but never over a whole DRAM page: 640 MiB
                 * written to the backing file would take seconds */
                pkt.tsize = (uint32_t)interesting(m_r, 4);
            }
            memcpy(buf + len, &pkt, sizeof(pkt));
            len += sizeof(pkt);
            break;
        case 3: /* MSG_LONG */
            ctl      = (UCT_GAUDI_PKT_MSG_LONG << UCT_GAUDI_PKT_OPCODE_SHIFT) |
                       (m_r.chance(1, 4) ? (uint32_t)m_r.below(4) << 20 : 0);
            words[0] = ((uint64_t)ctl << 32) | (uint32_t)m_r.next();
            words[1] = device_va();
            memcpy(buf + len, words, 16);
            len += 16;
            break;
        case 4: /* WREG_BULK: its length from its first dword */
            count    = m_r.chance(3, 4) ? (uint32_t)m_r.below(4) :
                       (uint32_t)m_r.next() & 0xffff;
            ctl      = UCT_GAUDI_PKT_WREG_BULK << UCT_GAUDI_PKT_OPCODE_SHIFT;
            words[0] = ((uint64_t)ctl << 32) | count;
            memcpy(buf + len, words, 8);
            len += 8;
            break;
        case 5: /* an 8-byte packet of any opcode */
            ctl      = (uint32_t)m_r.below(32) << UCT_GAUDI_PKT_OPCODE_SHIFT;
            words[0] = ((uint64_t)ctl << 32) | (uint32_t)m_r.next();
            memcpy(buf + len, words, 8);
            len += 8;
            break;
        case 6: /* random bytes */
            words[0] = m_r.next();
            words[1] = m_r.next();
            memcpy(buf + len, words, 16);
            len += 8 * (1 + m_r.below(2));
            break;
        default: /* NOP or STOP */
            ctl      = (m_r.chance(1, 2) ? UCT_GAUDI_PKT_NOP :
                        UCT_GAUDI_PKT_STOP) << UCT_GAUDI_PKT_OPCODE_SHIFT;
            words[0] = (uint64_t)ctl << 32;
            memcpy(buf + len, words, 8);
            len += 8;
            break;
        }
    }

    if (m_r.chance(1, 16) && (len > 0)) {
        len -= 1 + m_r.below(std::min<size_t>(len, 8));    /* a torn packet */
    }
    return len;
}

void ioctl_fuzzer::do_cs()
{
    static const uint32_t queues[] = {
        0, 1, 4, 5, 8, 9, 15, 48, 127, 128, 260, 261, 7, 32, 113
    };
    struct hl_cs_chunk *chunks;
    uint64_t chunks_ptr, cb_handle;
    union hl_cs_args args;
    unsigned i, n;
    uint8_t *cb;
    size_t len;
    int err;

    /* the packets, in the CB the chunks name */
    cb = gaudi1() ? m_kcb_ptr : m_scratch + UCB_OFFSET;
    len = (cb != NULL) ? gen_packets(cb, gaudi1() ? KCB_SIZE : UCB_SIZE) : 0;

    n = m_r.chance(15, 16) ? 1 + (unsigned)m_r.below(3) :
        (unsigned)interesting(m_r, 2) % 600;
    chunks_ptr = scratch_ptr(std::max<size_t>(n, 1) * sizeof(*chunks));
    if ((chunks_ptr >= (uintptr_t)m_scratch + UCB_OFFSET) &&
        (chunks_ptr < (uintptr_t)m_scratch + UCB_OFFSET + UCB_SIZE)) {
        chunks_ptr = (uintptr_t)m_scratch;  /* not over the packets */
    }
    chunks = (struct hl_cs_chunk*)chunks_ptr;
    for (i = 0; i < std::min(n, 600u); ++i) {
        struct hl_cs_chunk chunk; /* built here: chunks is often unaligned */

        cb_handle = gaudi1() ? m_kcb : m_ucb_va;
        if (m_r.chance(1, 8)) {
            cb_handle = m_cbs.empty() || m_r.chance(1, 2) ? device_va() :
                        m_r.pick(m_cbs);
        }
        memset(&chunk, 0, sizeof(chunk));
        chunk.cb_handle      = cb_handle;
        chunk.queue_index    = m_r.chance(7, 8) ?
                               queues[m_r.below(gaudi1() ? 2 : 3)] :
                               queues[m_r.below(sizeof(queues) /
                                                sizeof(queues[0]))];
        chunk.cb_size        = m_r.chance(7, 8) ? (uint32_t)len :
                               (uint32_t)interesting(m_r, 4);
        chunk.cs_chunk_flags = gaudi1() ? 0 :
                               HL_CS_CHUNK_FLAGS_USER_ALLOC_CB;
        if (m_r.chance(1, 16)) {
            chunk.cs_chunk_flags = (uint32_t)m_r.next();
        }
        memcpy((uint8_t*)(uintptr_t)chunks_ptr + i * sizeof(chunk), &chunk,
               sizeof(chunk));
    }

    memset(&args, 0, sizeof(args));
    args.in.chunks_execute     = m_r.chance(15, 16) ? chunks_ptr :
                                 any_ptr(n * sizeof(*chunks));
    args.in.num_chunks_execute = n;
    args.in.chunks_restore     = m_r.chance(1, 2) ? 0 : any_ptr(64);
    args.in.num_chunks_restore = m_r.chance(3, 4) ? 0 :
                                 (uint32_t)m_r.below(4);
    args.in.cs_flags           = m_r.chance(3, 4) ? 0 :
                                 m_r.chance(1, 2) ? HL_CS_FLAGS_TIMESTAMP :
                                 (uint32_t)(1u << m_r.below(16));
    if (m_r.chance(1, 6)) {
        mutate_args(&args, sizeof(args));
        args.in.chunks_execute = sanitize(args.in.chunks_execute, 24);
        args.in.chunks_restore = sanitize(args.in.chunks_restore, 24);
    }

    union hl_cs_args in = args;
    m_input.assign((uint8_t*)&args, (uint8_t*)&args + sizeof(args));
    m_input.insert(m_input.end(), cb, cb + ((cb != NULL) ? len : 0));
    err = call(m_fd[m_r.chance(15, 16) ? 0 : 1], UCT_GAUDI_IOC_CS, &args);
    m_w.count((err == 0) ? "cs_ok" : "cs_err");
    if (err != 0) {
        return;
    }

    m_max_seq = std::max<uint64_t>(m_max_seq, args.out.seq);
    if (in.in.num_chunks_execute > 0) {
        len = (size_t)in.in.num_chunks_execute * sizeof(*chunks);
        if (kind(in.in.chunks_execute, len) == PTR_BAD) {
            m_w.fail("CS succeeded with %u chunks at 0x%llx, which is not "
                     "readable", in.in.num_chunks_execute,
                     (unsigned long long)in.in.chunks_execute);
        }
    }
}

void ioctl_fuzzer::do_wait()
{
    union hl_wait_cs_args args;
    uint64_t *seqs;
    unsigned i, n;
    int err;

    memset(&args, 0, sizeof(args));
    args.in.timeout_us = m_r.chance(1, 2) ? 0 :
                         m_r.chance(7, 8) ? m_r.below(2000) :
                         interesting(m_r, 8);
    if (m_r.chance(1, 5)) {
        args.in.flags       = HL_WAIT_CS_FLAGS_MULTI_CS;
        n                   = m_r.chance(7, 8) ? 1 + (unsigned)m_r.below(8) :
                              (unsigned)m_r.below(256);
        args.in.seq_arr_len = (uint8_t)n;
        seqs                = (uint64_t*)scratch_ptr(8 * 32);
        for (i = 0; i < std::min(n, 32u); ++i) {
            uint64_t seq = any_seq();

            memcpy(&seqs[i], &seq, sizeof(seq)); /* seqs: often unaligned */
        }
        args.in.seq = m_r.chance(7, 8) ? (uintptr_t)seqs : any_ptr(8 * n);
    } else {
        args.in.seq   = any_seq();
        args.in.flags = m_r.chance(7, 8) ? 0 : (uint32_t)(1u << m_r.below(8));
    }
    if (m_r.chance(1, 6)) {
        mutate_args(&args, sizeof(args));
    }
    if (args.in.flags & HL_WAIT_CS_FLAGS_MULTI_CS) {
        args.in.seq = sanitize(args.in.seq, 8 * 32);
        /* a wait may take its whole timeout: never longer than a second */
        args.in.timeout_us %= 1000000;
    } else if (args.in.timeout_us > 1000000) {
        args.in.timeout_us = m_r.chance(1, 2) ? UINT64_MAX : 1000000;
    }

    union hl_wait_cs_args in = args;
    m_input.assign((uint8_t*)&args, (uint8_t*)&args + sizeof(args));
    err = call(m_fd[0], UCT_GAUDI_IOC_WAIT_CS, &args);
    m_w.count((err == 0) ? "wait_ok" : "wait_err");
    if ((err == 0) && (in.in.flags & HL_WAIT_CS_FLAGS_MULTI_CS) &&
        (in.in.seq_arr_len > 0) &&
        (kind(in.in.seq, 8 * in.in.seq_arr_len) == PTR_BAD)) {
        m_w.fail("multi-CS WAIT_CS succeeded reading %u sequence numbers "
                 "at 0x%llx, which is not readable", in.in.seq_arr_len,
                 (unsigned long long)in.in.seq);
    }
}

/* Calls the driver refuses whatever their arguments: other generations'
 * and unknown codes, DEBUG, nodes that are not ours */
void ioctl_fuzzer::do_misc()
{
    uint8_t args[256];
    unsigned long request;
    int ret, fd;

    for (size_t i = 0; i < sizeof(args); i += 8) {
        uint64_t v = any_u64();
        memcpy(args + i, &v, 8);
    }

    switch (m_r.below(4)) {
    case 0:
        request = uct_gaudi_abi_ioctl_code(
                (m_cfg.abi == UCT_GAUDI_ABI_DRM) ? UCT_GAUDI_ABI_MISC :
                                                   UCT_GAUDI_ABI_DRM,
                (uct_gaudi_ioc_t)m_r.below(UCT_GAUDI_IOC_LAST));
        break;
    case 1:
        request = uct_gaudi_abi_ioctl_code(m_cfg.abi, UCT_GAUDI_IOC_DEBUG);
        break;
    default:
        request = (unsigned long)(m_r.next() & 0xffffffffu);
        if (_IOC_SIZE(request) > sizeof(args)) {
            request = _IOC(_IOC_DIR(request), _IOC_TYPE(request),
                           _IOC_NR(request), sizeof(args));
        }
        break;
    }

    fd = m_r.chance(1, 2) ? m_fd[0] : any_fd();
    m_input.assign((uint8_t*)&request, (uint8_t*)&request + sizeof(request));
    m_w.record(m_input.data(), m_input.size());
    errno = 0;
    ret   = m_ops->ioctl(fd, request, args);
    check_errno("ioctl (unknown code)", ret, errno);
    if ((ret == 0) && (fd == m_fd[0]) &&
        (request == uct_gaudi_abi_ioctl_code(m_cfg.abi, UCT_GAUDI_IOC_DEBUG))) {
        m_w.fail("DEBUG succeeded (not emulated: EOPNOTSUPP)");
    }
    m_w.count("misc");
}

/*
 * A call from the corpus (test/fuzz/corpus/ioctl/): "ioctl" names the
 * command (0 INFO, 1 CB, 2 CS, 3 WAIT_CS, 4 MEMORY), "args" is its struct,
 * "payload" what its pointer points to (a chunk array, sequence numbers,
 * an INFO buffer). The pointers of the seed are rebound to the scratch
 * area with the payload, a zero cb_handle of a chunk to this node's CB.
 */
void ioctl_fuzzer::do_seed()
{
    const hex_seed &seed = m_r.pick(m_corpus);
    const bytes &payload = seed.field("payload");
    uint8_t args[64] = {0};
    uint64_t ptr;
    size_t size;
    int ioc;

    ioc  = seed.field("ioctl").empty() ? 0 : seed.field("ioctl")[0] % 5;
    size = std::min(seed.field("args").size(), sizeof(args));
    memcpy(args, seed.field("args").data(), size);
    ptr = scratch_ptr(std::max<size_t>(payload.size(), 16384));
    if ((ptr >= (uintptr_t)m_scratch + UCB_OFFSET - 4096) &&
        (ptr < (uintptr_t)m_scratch + UCB_OFFSET + UCB_SIZE)) {
        ptr = (uintptr_t)m_scratch;     /* not over the packets */
    }
    if (!payload.empty()) {     /* data() may be NULL then */
        memcpy((void*)ptr, payload.data(), payload.size());
    }

    switch (ioc) {
    case UCT_GAUDI_IOC_INFO:
        ((struct hl_info_args*)args)->return_pointer = ptr;
        break;
    case UCT_GAUDI_IOC_CS:
        ((union hl_cs_args*)args)->in.chunks_execute = ptr;
        for (size_t i = 0; i + sizeof(struct hl_cs_chunk) <= payload.size();
             i += sizeof(struct hl_cs_chunk)) {
            struct hl_cs_chunk chunk;   /* ptr is often unaligned */

            memcpy(&chunk, (void*)(ptr + i), sizeof(chunk));
            if (chunk.cb_handle == 0) {
                chunk.cb_handle = gaudi1() ? m_kcb : m_ucb_va;
                memcpy((void*)(ptr + i), &chunk, sizeof(chunk));
            }
        }
        if (gaudi1() ? (m_kcb_ptr != NULL) : true) {
            gen_packets(gaudi1() ? m_kcb_ptr : m_scratch + UCB_OFFSET, 256);
        }
        break;
    case UCT_GAUDI_IOC_WAIT_CS:
        if (((union hl_wait_cs_args*)args)->in.flags &
            HL_WAIT_CS_FLAGS_MULTI_CS) {
            ((union hl_wait_cs_args*)args)->in.seq = ptr;
        }
        break;
    case UCT_GAUDI_IOC_MEMORY:
        if ((((union hl_mem_args*)args)->in.op == HL_MEM_OP_MAP) &&
            (((union hl_mem_args*)args)->in.flags & HL_MEM_USERPTR)) {
            ((union hl_mem_args*)args)->in.map_host.host_virt_addr = ptr;
        }
        break;
    }

    /* the struct's real size for its code; sanitized like the others */
    size = _IOC_SIZE(uct_gaudi_abi_ioctl_code(m_cfg.abi,
                                              (uct_gaudi_ioc_t)ioc));
    if (m_r.chance(1, 2)) {
        mutate_args(args, size);
        union {
            struct hl_info_args   info;
            union hl_cs_args      cs;
            union hl_wait_cs_args wait;
            union hl_mem_args     mem;
        } *a = (decltype(a))args;
        switch (ioc) {
        case UCT_GAUDI_IOC_INFO:
            a->info.return_pointer = sanitize(a->info.return_pointer,
                                              a->info.return_size);
            break;
        case UCT_GAUDI_IOC_CS:
            a->cs.in.chunks_execute = sanitize(a->cs.in.chunks_execute, 24);
            a->cs.in.chunks_restore = sanitize(a->cs.in.chunks_restore, 24);
            break;
        case UCT_GAUDI_IOC_WAIT_CS:
            if (a->wait.in.flags & HL_WAIT_CS_FLAGS_MULTI_CS) {
                a->wait.in.seq = sanitize(a->wait.in.seq, 8 * 32);
            }
            a->wait.in.timeout_us %= 1000000;
            break;
        case UCT_GAUDI_IOC_MEMORY:
            if ((a->mem.in.op == HL_MEM_OP_MAP) &&
                (a->mem.in.flags & HL_MEM_USERPTR)) {
                a->mem.in.map_host.host_virt_addr = sanitize(
                        a->mem.in.map_host.host_virt_addr,
                        a->mem.in.map_host.mem_size);
            }
            break;
        }
    }

    m_input.assign(args, args + size);
    union hl_mem_args in;
    static_assert(sizeof(in) <= sizeof(args), "a MEMORY struct fits args");
    memcpy(&in, args, sizeof(in));
    if (call(m_fd[0], (uct_gaudi_ioc_t)ioc, args) != 0) {
        m_w.count("seed_err");
        return;
    }

    /* a DMA-BUF exported from the corpus is the fuzzer's to close, as in
     * do_memory() (seed 0x67f66837: a Gaudi1 export of a mutated seed
     * succeeded, and its fd was blamed on the emulator as a leak) */
    if ((ioc == UCT_GAUDI_IOC_MEMORY) &&
        (in.in.op == HL_MEM_OP_EXPORT_DMABUF_FD)) {
        int fd;

        memcpy(&fd, args, sizeof(fd));     /* out.fd */
        if (fd >= 0) {
            m_dmabufs.push_back(fd);
        }
    }
    m_w.count("seed_ok");
}

void ioctl_fuzzer::run()
{
    /* The share of the iterations of each kind of call: an iteration draws
     * 0..99 and makes the first one whose bound is above the draw; above
     * them all, a seed of the corpus or a reopen */
    static const struct {
        unsigned below;
        void (ioctl_fuzzer::*call)();
    } calls[] = {
        {16, &ioctl_fuzzer::do_info}, {44, &ioctl_fuzzer::do_memory},
        {52, &ioctl_fuzzer::do_cb},   {56, &ioctl_fuzzer::do_mmap},
        {80, &ioctl_fuzzer::do_cs},   {92, &ioctl_fuzzer::do_wait},
        {95, &ioctl_fuzzer::do_misc}
    };
    const size_t num_calls = sizeof(calls) / sizeof(calls[0]);
    uint64_t i;
    unsigned op;
    size_t k;

    if (setup()) {
        for (i = m_w.first(); m_w.more(i); ++i) {
            op = (unsigned)m_r.below(100);
            m_input.clear();
            m_w.begin(i, NULL, 0);

            for (k = 0; k < num_calls; ++k) {
                if (op < calls[k].below) {
                    break;
                }
            }

            if (k < num_calls) {
                (this->*calls[k].call)();
            } else if ((op < 99) && !m_corpus.empty()) {
                do_seed();
            } else {
                /* the release of everything, and a new owner */
                close_nodes();
                open_nodes();
                m_w.count("reopen");
            }
        }
    }
    teardown();
}

} /* namespace */


TEST(gaudi_fuzz, ioctl)
{
    run_target(TARGET, BATCH, 10.0, [](worker &w) {
        ioctl_fuzzer(w).run();
    });
}
