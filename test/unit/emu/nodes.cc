/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_test.h"

#include <set>

/* Device nodes, sysfs tree, fd_path and compute-node exclusivity */

static int collect_cb(const char *name, void *arg)
{
    static_cast<std::set<std::string>*>(arg)->insert(name);
    return 0;
}

class emu_nodes : public emu_test,
                  public ::testing::WithParamInterface<uct_gaudi_abi_t> {
protected:
    virtual void SetUp()
    {
        emu_test::SetUp();
        m_cfg.abi = GetParam();
    }

    std::set<std::string> list(const char *path)
    {
        std::set<std::string> names;

        EXPECT_EQ(0, m_ops->list_dir(path, collect_cb, &names)) << path;
        return names;
    }

    std::string attr(const std::string &path)
    {
        char buf[128];
        ssize_t n = m_ops->read_attr(path.c_str(), buf, sizeof(buf));

        EXPECT_GE(n, 0) << path << ": " << strerror(errno);
        return (n >= 0) ? std::string(buf, n) : "";
    }

    std::string attr_dir(int dev) const
    {
        char buf[128];

        snprintf(buf, sizeof(buf),
                 (m_cfg.abi == UCT_GAUDI_ABI_DRM) ? UCT_GAUDI_SYSFS_DRM_DIR :
                 (m_cfg.abi == UCT_GAUDI_ABI_TRANS) ?
                 UCT_GAUDI_SYSFS_TRANS_DIR : UCT_GAUDI_SYSFS_MISC_DIR, dev);
        return buf;
    }

    std::string class_dir(int dev, bool control) const
    {
        std::string n = node(dev, control);

        return std::string((m_cfg.abi == UCT_GAUDI_ABI_MISC) ?
                           "/sys/class/habanalabs/" : "/sys/class/accel/") +
               n.substr(n.rfind('/') + 1);
    }

    uct_gaudi_abi_t other_abi() const
    {
        return (m_cfg.abi == UCT_GAUDI_ABI_DRM) ? UCT_GAUDI_ABI_MISC :
                                                  UCT_GAUDI_ABI_DRM;
    }
};

TEST_P(emu_nodes, dev_tree) {
    init_ok();

    bool misc = (m_cfg.abi == UCT_GAUDI_ABI_MISC);
    EXPECT_EQ(misc ? -1 : 0, m_ops->exists(UCT_GAUDI_DEV_ACCEL_DIR));
    for (int dev = 0; dev < 2; ++dev) {
        EXPECT_EQ(0, m_ops->exists(node(dev, false).c_str()));
        EXPECT_EQ(0, m_ops->exists(node(dev, true).c_str()));
    }
    EXPECT_EQ(-1, m_ops->exists(node(2, false).c_str()));
    EXPECT_EQ(ENOENT, errno);

    std::set<std::string> names = list(misc ? "/dev" : "/dev/accel");
    std::set<std::string> expect;
    for (int dev = 0; dev < 2; ++dev) {
        std::string c = node(dev, false), k = node(dev, true);
        expect.insert(c.substr(c.rfind('/') + 1));
        expect.insert(k.substr(k.rfind('/') + 1));
    }
    EXPECT_EQ(expect, names);

    /* the other generation's names do not exist */
    EXPECT_EQ(-1, m_ops->exists(misc ? "/dev/accel/accel0" : "/dev/hl0"));
    EXPECT_EQ(-1, m_ops->open(misc ? "/dev/accel/accel0" : "/dev/hl0",
                              O_RDWR));
    EXPECT_EQ(ENOENT, errno);
    EXPECT_EQ(-1, m_ops->exists("/etc/passwd"));
    EXPECT_EQ(ENOENT, errno);
}

/* Devices on NUMA nodes in consecutive blocks; module IDs stay != indices */
TEST_P(emu_nodes, numa_placement) {
    static const char *expect[] = {"0\n", "0\n", "0\n", "1\n", "1\n",
                                   "1\n", "2\n", "2\n"};
    char bdf[32];

    m_cfg.num_devices = 8;
    m_cfg.numa_nodes  = 3;
    init_ok();
    for (int dev = 0; dev < 8; ++dev) {
        snprintf(bdf, sizeof(bdf), "0000:%02x:00.0", 0x33 + dev);
        EXPECT_EQ(expect[dev], attr(class_dir(dev, false) +
                                    "/device/numa_node")) << dev;
        EXPECT_EQ(expect[dev], attr(std::string("/sys/bus/pci/devices/") +
                                    bdf + "/numa_node")) << dev;
        EXPECT_EQ(std::to_string(7 - dev) + "\n",
                  attr(attr_dir(dev) + "/module_id"));
    }
}

TEST_P(emu_nodes, sysfs_attrs) {
    init_ok();

    for (int dev = 0; dev < 2; ++dev) {
        std::string dir = attr_dir(dev);
        char bdf[32];

        snprintf(bdf, sizeof(bdf), "0000:%02x:00.0\n", 0x33 + dev);
        EXPECT_EQ(bdf, attr(dir + "/pci_addr"));
        EXPECT_EQ("GAUDI2\n", attr(dir + "/device_type"));
        EXPECT_EQ(std::to_string(1 - dev) + "\n", attr(dir + "/module_id"));
        EXPECT_EQ("Operational\n", attr(dir + "/status"));
        EXPECT_EQ("0\n", attr(class_dir(dev, false) + "/device/numa_node"));
        EXPECT_EQ("0\n", attr(std::string("/sys/bus/pci/devices/") +
                              std::string(bdf, 12) + "/numa_node"));
        EXPECT_EQ("0x1da3\n", attr(class_dir(dev, false) +
                                   "/device/vendor"));

        std::string devno  = attr(class_dir(dev, false) + "/dev");
        std::string cdevno = attr(class_dir(dev, true) + "/dev");
        EXPECT_NE(devno, cdevno);
        devno.resize(devno.size() - 1);
        EXPECT_EQ(bdf, attr("/sys/dev/char/" + devno +
                            ((m_cfg.abi == UCT_GAUDI_ABI_DRM) ?
                             "/device/pci_addr" : "/pci_addr")));
    }

    /* where the attributes are NOT in this generation */
    if (m_cfg.abi == UCT_GAUDI_ABI_DRM) {
        EXPECT_EQ(-1, m_ops->exists("/sys/class/accel/accel0/pci_addr"));
    } else if (m_cfg.abi == UCT_GAUDI_ABI_TRANS) {
        EXPECT_EQ(-1,
                  m_ops->exists("/sys/class/accel/accel0/device/pci_addr"));
    } else {
        EXPECT_EQ(-1, m_ops->exists("/sys/class/accel"));
    }

    /* short buffer: truncated and terminated */
    char buf[5];
    EXPECT_EQ(4, m_ops->read_attr((attr_dir(0) + "/pci_addr").c_str(), buf,
                                  sizeof(buf)));
    EXPECT_STREQ("0000", buf);

    EXPECT_EQ(-1, m_ops->read_attr(attr_dir(0).c_str(), buf, sizeof(buf)));
    EXPECT_EQ(EISDIR, errno);
    EXPECT_EQ(-1, m_ops->read_attr((attr_dir(0) + "/nope").c_str(), buf,
                                   sizeof(buf)));
    EXPECT_EQ(ENOENT, errno);
    EXPECT_EQ(-1, m_ops->read_attr("/proc/cpuinfo", buf, sizeof(buf)));
    EXPECT_EQ(ENOENT, errno);
    EXPECT_EQ(-1, m_ops->list_dir((attr_dir(0) + "/status").c_str(),
                                  collect_cb, NULL));
    EXPECT_EQ(ENOTDIR, errno);

    std::set<std::string> names = list(attr_dir(0).c_str());
    EXPECT_TRUE(names.count("pci_addr"));
    EXPECT_TRUE(names.count("module_id"));
}

TEST_P(emu_nodes, ioctl_codes) {
    init_ok();

    int fd = open_node(0, false);
    ASSERT_GE(fd, 0) << strerror(errno);

    struct hl_info_device_status st;
    struct hl_info_args args = info_args(HL_INFO_DEVICE_STATUS, &st,
                                         sizeof(st));

    EXPECT_EQ(0, m_ops->ioctl(fd, code(UCT_GAUDI_IOC_INFO), &args));
    /* the other generation's code is unknown to this one */
    EXPECT_EQ(-1, m_ops->ioctl(fd, uct_gaudi_abi_ioctl_code(
                                       other_abi(), UCT_GAUDI_IOC_INFO),
                               &args));
    EXPECT_EQ(ENOTTY, errno);
    EXPECT_EQ(-1, m_ops->ioctl(fd, 0x1234, &args));
    EXPECT_EQ(ENOTTY, errno);
    EXPECT_EQ(0, m_ops->close(fd));
}

/* A code the node does not serve: the 'H' drivers log "invalid ioctl" at
 * error level, the DRM generation only at debug level */
TEST_P(emu_nodes, invalid_ioctl_logged) {
    unsigned per_call = (m_cfg.abi == UCT_GAUDI_ABI_DRM) ? 0 : 1;
    struct hl_info_device_status st;
    struct hl_info_args args;
    union hl_cb_args cbargs;
    unsigned before;

    init_ok();
    int fd  = open_node(0, false);
    int cfd = open_node(0, true);
    ASSERT_GE(fd, 0) << strerror(errno);
    ASSERT_GE(cfd, 0) << strerror(errno);

    args   = info_args(HL_INFO_DEVICE_STATUS, &st, sizeof(st));
    before = kernel_log_errors();
    EXPECT_EQ(0, m_ops->ioctl(cfd, code(UCT_GAUDI_IOC_INFO), &args));
    EXPECT_EQ(before, kernel_log_errors());

    for (int f : {fd, cfd}) {
        EXPECT_EQ(-1, m_ops->ioctl(f, uct_gaudi_abi_ioctl_code(
                                          other_abi(), UCT_GAUDI_IOC_INFO),
                                   &args));
        EXPECT_EQ(ENOTTY, errno);
        EXPECT_EQ(before += per_call, kernel_log_errors());
    }

    /* the control node serves INFO only */
    cbargs = cb_args(HL_CB_OP_INFO);
    EXPECT_EQ(ENOTTY, ioctl_err(cfd, UCT_GAUDI_IOC_CB, &cbargs));
    EXPECT_EQ(before + per_call, kernel_log_errors());

    EXPECT_EQ(0, m_ops->close(cfd));
    EXPECT_EQ(0, m_ops->close(fd));
}

/* The module's directory in every generation; a version file only where
 * the out-of-tree driver is emulated (upstream sets no MODULE_VERSION) */
TEST_P(emu_nodes, module_version) {
    char buf[64];

    init_ok();
    EXPECT_TRUE(list("/sys").count("module"));
    EXPECT_EQ(std::set<std::string>{"habanalabs"}, list("/sys/module"));
    EXPECT_EQ(0, m_ops->exists(UCT_GAUDI_SYSFS_MODULE_DIR));
    EXPECT_EQ(-1, m_ops->read_attr(UCT_GAUDI_SYSFS_MODULE_VERSION, buf,
                                   sizeof(buf)));
    EXPECT_EQ(ENOENT, errno);
    EXPECT_TRUE(list(UCT_GAUDI_SYSFS_MODULE_DIR).empty());
    gaudi_emu_fini();

    m_cfg.oot_import = 1;
    init_ok();
    EXPECT_EQ("1.24.1-emulated\n", attr(UCT_GAUDI_SYSFS_MODULE_VERSION));
    EXPECT_EQ(std::set<std::string>{"version"},
              list(UCT_GAUDI_SYSFS_MODULE_DIR));
}

TEST_P(emu_nodes, fd_path) {
    init_ok();

    int fd  = open_node(1, false);
    int cfd = open_node(0, true);
    char buf[64];

    ASSERT_GE(fd, 0);
    ASSERT_GE(cfd, 0);
    EXPECT_EQ(0, m_ops->fd_path(fd, buf, sizeof(buf)));
    EXPECT_EQ(node(1, false), buf);
    EXPECT_EQ(0, m_ops->fd_path(cfd, buf, sizeof(buf)));
    EXPECT_EQ(node(0, true), buf);
    EXPECT_EQ(-1, m_ops->fd_path(fd, buf, 4));
    EXPECT_EQ(ERANGE, errno);

    /* a real fd that is not ours, and no fd at all */
    EXPECT_EQ(-1, m_ops->fd_path(0, buf, sizeof(buf)));
    EXPECT_EQ(ENOENT, errno);
    EXPECT_EQ(-1, m_ops->fd_path(1000, buf, sizeof(buf)));
    EXPECT_EQ(EBADF, errno);

    /* the fd is real: visible in /proc/self/fd, close-on-exec honoured */
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    EXPECT_EQ(0, access(link, F_OK));
    EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);

    int fd2 = open_node(0, false, O_RDWR);
    ASSERT_GE(fd2, 0);
    EXPECT_FALSE(fcntl(fd2, F_GETFD) & FD_CLOEXEC);

    EXPECT_EQ(0, m_ops->close(fd));
    EXPECT_EQ(0, m_ops->close(fd2));
    EXPECT_EQ(0, m_ops->close(cfd));
    EXPECT_EQ(-1, m_ops->fd_path(fd, buf, sizeof(buf)));
}

TEST_P(emu_nodes, control_node) {
    init_ok();

    int c1 = open_node(0, true);
    int c2 = open_node(0, true);
    int fd = open_node(0, false);
    int c3 = open_node(0, true);

    ASSERT_GE(c1, 0);
    ASSERT_GE(c2, 0);
    ASSERT_GE(fd, 0);
    ASSERT_GE(c3, 0);

    EXPECT_EQ(HL_DEVICE_STATUS_OPERATIONAL, dev_status(c3));

    union hl_mem_args margs = mem_args(HL_MEM_OP_ALLOC);
    margs.in.alloc.mem_size = 1 << 20;
    EXPECT_EQ(ENOTTY, mem(c1, &margs));

    union hl_cb_args cbargs = cb_args(HL_CB_OP_CREATE, 4096);
    EXPECT_EQ(ENOTTY, ioctl_err(c1, UCT_GAUDI_IOC_CB, &cbargs));

    union hl_wait_cs_args wargs = zeroed<union hl_wait_cs_args>();
    EXPECT_EQ(ENOTTY, ioctl_err(c1, UCT_GAUDI_IOC_WAIT_CS, &wargs));

    uint64_t events;
    EXPECT_EQ(EOPNOTSUPP, info(c1, HL_INFO_GET_EVENTS, &events,
                               sizeof(events)));

    for (int f : {c1, c2, c3, fd}) {
        EXPECT_EQ(0, m_ops->close(f));
    }
}

TEST_P(emu_nodes, exclusive_in_process) {
    init_ok();

    int fd = open_node(0, false);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(-1, open_node(0, false));
    EXPECT_EQ(EBUSY, errno);

    /* another device is free */
    int fd1 = open_node(1, false);
    EXPECT_GE(fd1, 0);

    EXPECT_EQ(0, m_ops->close(fd));
    fd = open_node(0, false);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(0, m_ops->close(fd));
    EXPECT_EQ(0, m_ops->close(fd1));
}

INSTANTIATE_TEST_SUITE_P(abi, emu_nodes,
                         ::testing::Values(UCT_GAUDI_ABI_MISC,
                                           UCT_GAUDI_ABI_TRANS,
                                           UCT_GAUDI_ABI_DRM));


/* Exclusivity between two real processes */
class emu_exclusive : public emu_test {
};

TEST_F(emu_exclusive, second_process_gets_ebusy) {
    init_ok();

    int fd = open_node(0, false);
    ASSERT_GE(fd, 0);

    const gaudi_emu_config_t cfg = m_cfg;
    int rc = in_child([&cfg]() {
        const uct_gaudi_drv_ops_t *ops;
        char path[64];

        gaudi_emu_fini();   /* a fresh process would not have our state */
        if (gaudi_emu_init(&cfg, &ops) != 0) {
            return 10;
        }
        snprintf(path, sizeof(path), UCT_GAUDI_DEV_ACCEL_COMPUTE, 0);
        if ((ops->open(path, O_RDWR) != -1) || (errno != EBUSY)) {
            return 11;
        }
        snprintf(path, sizeof(path), UCT_GAUDI_DEV_ACCEL_COMPUTE, 1);
        int fd1 = ops->open(path, O_RDWR);
        if (fd1 < 0) {
            return 12;
        }
        snprintf(path, sizeof(path), UCT_GAUDI_DEV_ACCEL_CONTROL, 0);
        if (ops->open(path, O_RDWR) < 0) {
            return 13;
        }
        return 0;
    });
    EXPECT_EQ(0, rc);

    /* the child died holding device 1: its lock went with it */
    int fd1 = open_node(1, false);
    EXPECT_GE(fd1, 0) << strerror(errno);
    EXPECT_EQ(0, m_ops->close(fd1));
    EXPECT_EQ(0, m_ops->close(fd));
}

TEST_F(emu_exclusive, owner_death_releases_device) {
    init_ok();

    int pipefd[2];
    ASSERT_EQ(0, pipe(pipefd));

    const gaudi_emu_config_t cfg = m_cfg;
    pid_t pid = fork();
    if (pid == 0) {
        const uct_gaudi_drv_ops_t *ops;
        char path[64], c = 'x';

        gaudi_emu_fini();
        gaudi_emu_init(&cfg, &ops);
        snprintf(path, sizeof(path), UCT_GAUDI_DEV_ACCEL_COMPUTE, 0);
        int fd = ops->open(path, O_RDWR);
        uint64_t handle = 0;
        union hl_mem_args args;
        memset(&args, 0, sizeof(args));
        args.in.op             = HL_MEM_OP_ALLOC;
        args.in.alloc.mem_size = 4 << 20;
        ops->ioctl(fd, uct_gaudi_abi_ioctl_code(cfg.abi,
                                                UCT_GAUDI_IOC_MEMORY), &args);
        handle = args.out.handle;
        c = ((fd >= 0) && (handle != 0)) ? 'o' : 'f';
        if (write(pipefd[1], &c, 1) != 1) {
            _exit(1);
        }
        pause();
        _exit(0);
    }
    ASSERT_GT(pid, 0);

    char c = 0;
    ASSERT_EQ(1, read(pipefd[0], &c, 1));
    EXPECT_EQ('o', c);

    /* owned by the child: EBUSY here; the control node sees it active */
    EXPECT_EQ(-1, open_node(0, false));
    EXPECT_EQ(EBUSY, errno);
    int cfd = open_node(0, true);
    ASSERT_GE(cfd, 0);
    struct hl_open_stats_info stats;
    EXPECT_EQ(0, info(cfd, HL_INFO_OPEN_STATS, &stats, sizeof(stats)));
    EXPECT_EQ(1, stats.is_compute_ctx_active);
    struct hl_info_dram_usage usage;
    EXPECT_EQ(0, info(cfd, HL_INFO_DRAM_USAGE, &usage, sizeof(usage)));
    /* a whole 640 MiB page of the 80 GiB */
    EXPECT_EQ((80ull << 30) - (640ull << 20), usage.dram_free_mem);

    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);

    int fd = open_node(0, false);
    ASSERT_GE(fd, 0) << strerror(errno);
    /* what the dead owner allocated was released */
    EXPECT_EQ(0, info(fd, HL_INFO_DRAM_USAGE, &usage, sizeof(usage)));
    EXPECT_EQ(80ull << 30, usage.dram_free_mem);
    EXPECT_EQ(0u, usage.ctx_dram_mem);
    EXPECT_EQ(0, m_ops->close(fd));
    EXPECT_EQ(0, m_ops->close(cfd));
    close(pipefd[0]);
    close(pipefd[1]);
}
