/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_test.h"

/* HL_IOCTL_INFO: structs, argument rules, per-ASIC constants */

class emu_info : public emu_test {
protected:
    /* HW_IP_INFO into the first @a size bytes of 400 bytes of 0xAB: what
     * it does not write stays 0xAB */
    std::vector<uint8_t> hw_ip_raw(int fd, uint32_t size)
    {
        std::vector<uint8_t> buf(400, 0xAB);

        EXPECT_EQ(0, info(fd, HL_INFO_HW_IP_INFO, buf.data(), size));
        return buf;
    }
};

/* The 96 GiB Gaudi2 (6 functional HBMs) allocates in pages of 768 MiB */
TEST_F(emu_info, hw_ip_gaudi2_96g) {
    m_cfg.hbm_size = 96ull << 30;
    init_ok();

    int fd = open_node(0, false);
    ASSERT_GE(fd, 0);
    struct hl_info_hw_ip_info hw = hw_ip(fd);
    EXPECT_EQ(96ull << 30, hw.dram_size);
    EXPECT_EQ(768ull << 20, hw.dram_page_size);
    EXPECT_EQ(768ull << 20, hw.device_mem_alloc_default_page_size);
    m_ops->close(fd);
}

TEST_F(emu_info, hw_ip_gaudi2) {
    init_ok();

    int fd = open_node(0, false);
    int cfd = open_node(1, true);
    ASSERT_GE(fd, 0);
    ASSERT_GE(cfd, 0);

    struct hl_info_hw_ip_info hw = hw_ip(fd);
    EXPECT_EQ(0x1020u, hw.device_id);
    EXPECT_EQ(0x1001000000000000ull, hw.dram_base_address);
    /* 5 functional HBMs: 16 GiB each, pages of 16 x 5 x 8 MiB */
    EXPECT_EQ(80ull << 30, hw.dram_size);
    EXPECT_EQ(640ull << 20, hw.dram_page_size);
    EXPECT_EQ(640ull << 20, hw.device_mem_alloc_default_page_size);
    EXPECT_EQ(1, hw.dram_enabled);
    EXPECT_EQ(1u, hw.module_id);
    EXPECT_EQ(48u << 20, hw.sram_size);
    EXPECT_NE(0u, hw.edma_enabled_mask);
    EXPECT_STREQ("HL-225", (const char*)hw.card_name);

    /* the DRAM VA is not a canonical x86-64 address: a CPU dereference
     * faults */
    uint64_t top = hw.dram_base_address >> 47;
    EXPECT_TRUE((top != 0) && (top != 0x1ffff));

    struct hl_info_hw_ip_info hw1 = hw_ip(cfd);
    EXPECT_EQ(0u, hw1.module_id);

    EXPECT_EQ(0, m_ops->close(fd));
    EXPECT_EQ(0, m_ops->close(cfd));
}

TEST_F(emu_info, hw_ip_sizes) {
    init_ok();

    int fd = open_node(0, true);
    ASSERT_GE(fd, 0);

    /* the newer (304-byte) struct: the tail is zero, nothing beyond it */
    std::vector<uint8_t> buf = hw_ip_raw(fd, 400);
    EXPECT_EQ(0, buf[303]);
    EXPECT_EQ(0xAB, buf[304]);

    /* a short buffer gets a prefix only */
    buf = hw_ip_raw(fd, 12);
    uint32_t dram_base_low;
    memcpy(&dram_base_low, &buf[8], 4);
    EXPECT_EQ(0u, dram_base_low);   /* low half of 0x1001000000000000 */
    EXPECT_EQ(0xAB, buf[12]);
    EXPECT_EQ(0, m_ops->close(fd));
}

TEST_F(emu_info, hw_ip_misc_size) {
    m_cfg.abi = UCT_GAUDI_ABI_MISC;
    init_ok();

    int fd = open_node(0, true);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(0xAB, hw_ip_raw(fd, 400)[256]);  /* the 6.1 struct: 256 B */
    EXPECT_EQ(0, m_ops->close(fd));
}

TEST_F(emu_info, hw_ip_gaudi1) {
    m_cfg.asic = UCT_GAUDI_ASIC_GAUDI1;
    init_ok();

    int fd = open_node(0, true);
    ASSERT_GE(fd, 0);
    struct hl_info_hw_ip_info hw = hw_ip(fd);
    EXPECT_EQ(0x1000u, hw.device_id);
    EXPECT_EQ(0x20000000ull, hw.dram_base_address);
    EXPECT_EQ(4ull << 30, hw.dram_size);

    uint64_t orders = 1;
    EXPECT_EQ(0, info(fd, HL_INFO_DEV_MEM_ALLOC_PAGE_SIZES, &orders,
                      sizeof(orders)));
    EXPECT_EQ(0u, orders);

    char type[32];
    ASSERT_GT(m_ops->read_attr("/sys/class/accel/accel0/device/device_type",
                               type, sizeof(type)), 0);
    EXPECT_STREQ("GAUDI\n", type);
    EXPECT_EQ(0, m_ops->close(fd));
}

TEST_F(emu_info, hw_ip_gaudi3) {
    m_cfg.asic = UCT_GAUDI_ASIC_GAUDI3;
    init_ok();

    int fd = open_node(0, true);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(0x1060u, hw_ip(fd).device_id);
    EXPECT_EQ(0, m_ops->close(fd));
}

TEST_F(emu_info, arg_rules) {
    init_ok();

    int fd = open_node(0, false);
    ASSERT_GE(fd, 0);

    struct hl_info_device_status st;
    struct hl_info_args args = info_args(HL_INFO_DEVICE_STATUS, &st,
                                         sizeof(st));
    EXPECT_EQ(0, ioctl_err(fd, UCT_GAUDI_IOC_INFO, &args));

    args.pad = 1;
    EXPECT_EQ(EINVAL, ioctl_err(fd, UCT_GAUDI_IOC_INFO, &args));
    args.pad = 0;

    args.op = 77;
    EXPECT_EQ(EINVAL, ioctl_err(fd, UCT_GAUDI_IOC_INFO, &args));
    args.op = HL_INFO_DEVICE_STATUS;

    args.return_size = 0;
    EXPECT_EQ(EINVAL, ioctl_err(fd, UCT_GAUDI_IOC_INFO, &args));
    args.return_size = sizeof(st);

    args.return_pointer = 0;
    EXPECT_EQ(EINVAL, ioctl_err(fd, UCT_GAUDI_IOC_INFO, &args));

    /* an unmapped user buffer is EFAULT, not a crash */
    args.return_pointer = 0x10;
    EXPECT_EQ(EFAULT, ioctl_err(fd, UCT_GAUDI_IOC_INFO, &args));

    EXPECT_EQ(EFAULT, ioctl_err(fd, UCT_GAUDI_IOC_INFO, NULL));
    EXPECT_EQ(0, m_ops->close(fd));
}

TEST_F(emu_info, ops) {
    init_ok();

    int fd = open_node(0, false);
    ASSERT_GE(fd, 0);

    EXPECT_EQ((uint32_t)HL_DEVICE_STATUS_OPERATIONAL, dev_status(fd));

    struct hl_info_reset_count rc;
    memset(&rc, 0xff, sizeof(rc));
    EXPECT_EQ(0, info(fd, HL_INFO_RESET_COUNT, &rc, sizeof(rc)));
    EXPECT_EQ(0u, rc.hard_reset_cnt);
    EXPECT_EQ(0u, rc.soft_reset_cnt);

    struct hl_info_clk_rate clk;
    EXPECT_EQ(0, info(fd, HL_INFO_CLK_RATE, &clk, sizeof(clk)));
    EXPECT_GT(clk.max_clk_rate_mhz, 0u);
    EXPECT_LE(clk.cur_clk_rate_mhz, clk.max_clk_rate_mhz);

    struct hl_info_hw_idle idle;
    EXPECT_EQ(0, info(fd, HL_INFO_HW_IDLE, &idle, sizeof(idle)));
    EXPECT_EQ(1u, idle.is_idle);

    uint64_t orders = 0;
    EXPECT_EQ(0, info(fd, HL_INFO_DEV_MEM_ALLOC_PAGE_SIZES, &orders,
                      sizeof(orders)));
    EXPECT_EQ(0u, orders);      /* only the default page is modelled */

    struct hl_open_stats_info stats;
    EXPECT_EQ(0, info(fd, HL_INFO_OPEN_STATS, &stats, sizeof(stats)));
    EXPECT_EQ(1u, stats.open_counter);
    EXPECT_EQ(1, stats.is_compute_ctx_active);

    struct hl_info_cs_counters cnt;
    EXPECT_EQ(0, info(fd, HL_INFO_CS_COUNTERS, &cnt, sizeof(cnt)));
    EXPECT_EQ(0u, cnt.total_validation_drop_cnt);

    struct hl_info_time_sync ts;
    EXPECT_EQ(0, info(fd, HL_INFO_TIME_SYNC, &ts, sizeof(ts)));
    EXPECT_NE(0u, ts.host_time);

    struct hl_info_pci_counters pci;
    EXPECT_EQ(0, info(fd, HL_INFO_PCI_COUNTERS, &pci, sizeof(pci)));

    uint32_t events[16];
    memset(events, 0xff, sizeof(events));
    EXPECT_EQ(0, info(fd, HL_INFO_HW_EVENTS, events, sizeof(events)));
    EXPECT_EQ(0u, events[15]);

    EXPECT_EQ(0, m_ops->close(fd));

    int cfd = open_node(0, true);
    ASSERT_GE(cfd, 0);
    EXPECT_EQ(0, info(cfd, HL_INFO_OPEN_STATS, &stats, sizeof(stats)));
    EXPECT_EQ(0, stats.is_compute_ctx_active);
    EXPECT_EQ(1u, stats.open_counter);
    EXPECT_EQ(0, m_ops->close(cfd));
}

TEST_F(emu_info, dram_usage) {
    init_ok();

    int fd  = open_node(0, false);
    int cfd = open_node(0, true);
    ASSERT_GE(fd, 0);
    ASSERT_GE(cfd, 0);

    struct hl_info_dram_usage usage;
    EXPECT_EQ(0, info(fd, HL_INFO_DRAM_USAGE, &usage, sizeof(usage)));
    EXPECT_EQ(80ull << 30, usage.dram_free_mem);
    EXPECT_EQ(0u, usage.ctx_dram_mem);

    uint64_t handle;
    ASSERT_EQ(0, alloc(fd, 3 << 20, &handle));
    EXPECT_EQ(0, info(fd, HL_INFO_DRAM_USAGE, &usage, sizeof(usage)));
    /* rounded up to a whole 640 MiB page */
    EXPECT_EQ((80ull << 30) - (640ull << 20), usage.dram_free_mem);
    EXPECT_EQ(640ull << 20, usage.ctx_dram_mem);

    /* the control node sees the device, not a context */
    EXPECT_EQ(0, info(cfd, HL_INFO_DRAM_USAGE, &usage, sizeof(usage)));
    EXPECT_EQ((80ull << 30) - (640ull << 20), usage.dram_free_mem);
    EXPECT_EQ(0u, usage.ctx_dram_mem);

    EXPECT_EQ(0, m_ops->close(fd));
    EXPECT_EQ(0, info(cfd, HL_INFO_DRAM_USAGE, &usage, sizeof(usage)));
    EXPECT_EQ(80ull << 30, usage.dram_free_mem);
    EXPECT_EQ(0, m_ops->close(cfd));
}

TEST_F(emu_info, init_rules) {
    const uct_gaudi_drv_ops_t *ops2;

    init_ok();
    /* same configuration: same ops */
    EXPECT_EQ(0, gaudi_emu_init(&m_cfg, &ops2));
    EXPECT_EQ(m_ops, ops2);

    /* another configuration while a node is open: refused */
    int fd = open_node(0, true);
    ASSERT_GE(fd, 0);
    gaudi_emu_config_t cfg = m_cfg;
    cfg.num_devices = 3;
    EXPECT_EQ(-EBUSY, gaudi_emu_init(&cfg, &ops2));
    EXPECT_STRNE("", gaudi_emu_last_error());
    EXPECT_EQ(0, m_ops->close(fd));

    /* ... accepted once closed; the node state is re-created */
    EXPECT_EQ(0, gaudi_emu_init(&cfg, &ops2)) << gaudi_emu_last_error();
    EXPECT_EQ(0, ops2->exists("/dev/accel/accel2"));

    cfg.num_devices = 0;
    EXPECT_EQ(-EINVAL, gaudi_emu_init(&cfg, &ops2));
    cfg.num_devices = 1;
    cfg.hbm_size    = 1024;
    EXPECT_EQ(-EINVAL, gaudi_emu_init(&cfg, &ops2));
    cfg.hbm_size    = 0;
    cfg.numa_nodes  = 2;    /* more NUMA nodes than devices */
    EXPECT_EQ(-EINVAL, gaudi_emu_init(&cfg, &ops2));
    EXPECT_NE(std::string::npos, std::string(gaudi_emu_last_error()).find(
            "invalid number of NUMA nodes 2"));
    cfg.numa_nodes  = 0;
    cfg.state_dir   = "relative/dir";
    EXPECT_EQ(-EINVAL, gaudi_emu_init(&cfg, &ops2));
    EXPECT_EQ(-EINVAL, gaudi_emu_init(NULL, &ops2));
}

TEST_F(emu_info, state_dir_of_other_user) {
    if (geteuid() != 0) {
        GTEST_SKIP() << "needs root to create a directory of another uid";
    }

    std::string other = m_dir + "/other";
    ASSERT_EQ(0, mkdir(other.c_str(), 0700));
    ASSERT_EQ(0, chown(other.c_str(), 12345, 12345));
    m_cfg.state_dir = other.c_str();
    EXPECT_EQ(-EPERM, init());
    EXPECT_NE(std::string::npos,
              std::string(gaudi_emu_last_error()).find("owned by uid"));
}

TEST_F(emu_info, other_config_while_in_use) {
    init_ok();

    /* another process wants the same state directory with another node
     * layout while this one uses it */
    gaudi_emu_config_t cfg = m_cfg;
    int rc = in_child([&cfg]() {
        const uct_gaudi_drv_ops_t *ops;

        gaudi_emu_fini();
        cfg.num_devices = 5;
        if (gaudi_emu_init(&cfg, &ops) != -EBUSY) {
            return 1;
        }
        cfg.num_devices = 2;    /* the same layout is fine */
        return (gaudi_emu_init(&cfg, &ops) == 0) ? 0 : 2;
    });
    EXPECT_EQ(0, rc);
}
