/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "drv_test.h"

#include <errno.h>

using namespace gaudi_drv_test;


TEST(drv_err, errno_table) {
    static const struct {
        int          err;
        ucs_status_t status;
    } table[] = {
        {0,          UCS_OK},
        {EBUSY,      UCS_ERR_BUSY},
        {EAGAIN,     UCS_ERR_NO_RESOURCE},
        {ENOMEM,     UCS_ERR_NO_MEMORY},
        {ENOSPC,     UCS_ERR_NO_MEMORY},
        {EINVAL,     UCS_ERR_INVALID_PARAM},
        {EFAULT,     UCS_ERR_INVALID_ADDR},
        {EPERM,      UCS_ERR_REJECTED},
        {EACCES,     UCS_ERR_REJECTED},
        {ENODEV,     UCS_ERR_NO_DEVICE},
        {ENXIO,      UCS_ERR_NO_DEVICE},
        {ENOENT,     UCS_ERR_NO_DEVICE},
        {EIO,        UCS_ERR_IO_ERROR},
        {ETIMEDOUT,  UCS_ERR_ENDPOINT_TIMEOUT},
        {ENOTTY,     UCS_ERR_UNSUPPORTED},
        {EOPNOTSUPP, UCS_ERR_UNSUPPORTED},
        {ENOSYS,     UCS_ERR_UNSUPPORTED},
        {EEXIST,     UCS_ERR_ALREADY_EXISTS},
        {EMFILE,     UCS_ERR_EXCEEDS_LIMIT},
        {EOVERFLOW,  UCS_ERR_OUT_OF_RANGE},
        {EINTR,      UCS_ERR_CANCELED},
        {EXDEV,      UCS_ERR_IO_ERROR}
    };

    for (const auto &entry : table) {
        EXPECT_EQ(entry.status, uct_gaudi_err_status(entry.err))
                << strerror(entry.err);
    }

    EXPECT_TRUE(uct_gaudi_err_is_fatal(EIO));
    EXPECT_TRUE(uct_gaudi_err_is_fatal(ENODEV));
    EXPECT_TRUE(uct_gaudi_err_is_fatal(ETIMEDOUT));
    EXPECT_FALSE(uct_gaudi_err_is_fatal(EBUSY));
    EXPECT_FALSE(uct_gaudi_err_is_fatal(EAGAIN));
}

static int failing_call(int err)
{
    errno = err;
    return -1;
}

TEST(drv_err, func_macro) {
    int no_mem = ENOMEM;
    log_capture log;
    ucs_status_t status;

    status = UCT_GAUDI_FUNC(NULL, failing_call(no_mem), UCS_LOG_LEVEL_ERROR);
    EXPECT_EQ(UCS_ERR_NO_MEMORY, status);
    ASSERT_EQ(1u, log.messages().size());
    EXPECT_EQ(1u, log.count("failing_call(no_mem) failed on gaudi: "
                            "Cannot allocate memory"));

    /* below the log level: no message, still the status */
    status = UCT_GAUDI_FUNC(NULL, failing_call(EAGAIN), UCS_LOG_LEVEL_DEBUG);
    EXPECT_EQ(UCS_ERR_NO_RESOURCE, status);
    EXPECT_EQ(1u, log.messages().size());

    EXPECT_EQ(UCS_OK, UCT_GAUDI_FUNC_LOG_ERR(NULL, 0));
}

TEST(drv_dev, parse_bus_id) {
    ucs_sys_bus_id_t id;

    ASSERT_EQ(UCS_OK, uct_gaudi_discover_parse_bus_id("0000:33:1f.7\n", &id));
    EXPECT_EQ(0, id.domain);
    EXPECT_EQ(0x33, id.bus);
    EXPECT_EQ(0x1f, id.slot);
    EXPECT_EQ(7, id.function);
    ASSERT_EQ(UCS_OK, uct_gaudi_discover_parse_bus_id("4d:02.1", &id));
    EXPECT_EQ(0, id.domain);
    EXPECT_EQ(0x4d, id.bus);
    ASSERT_EQ(UCS_OK, uct_gaudi_discover_parse_bus_id("abcd:ef:00.0", &id));
    EXPECT_EQ(0xabcd, id.domain);

    EXPECT_NE(UCS_OK, uct_gaudi_discover_parse_bus_id("", &id));
    EXPECT_NE(UCS_OK, uct_gaudi_discover_parse_bus_id("0000:33:00", &id));
    EXPECT_NE(UCS_OK, uct_gaudi_discover_parse_bus_id("0000:33:20.0", &id));
    EXPECT_NE(UCS_OK, uct_gaudi_discover_parse_bus_id("0000:133:00.0", &id));
    EXPECT_NE(UCS_OK, uct_gaudi_discover_parse_bus_id("33:00.0x", &id));
}

TEST(drv_dev, asic_from_id) {
    EXPECT_EQ(UCT_GAUDI_ASIC_GAUDI1, uct_gaudi_discover_asic_from_id(0x1000));
    EXPECT_EQ(UCT_GAUDI_ASIC_GAUDI1, uct_gaudi_discover_asic_from_id(0x1010));
    EXPECT_EQ(UCT_GAUDI_ASIC_GAUDI2, uct_gaudi_discover_asic_from_id(0x1020));
    EXPECT_EQ(UCT_GAUDI_ASIC_GAUDI3, uct_gaudi_discover_asic_from_id(0x1060));
    EXPECT_EQ(UCT_GAUDI_ASIC_GAUDI3, uct_gaudi_discover_asic_from_id(0x1063));
    EXPECT_EQ(UCT_GAUDI_ASIC_UNKNOWN, uct_gaudi_discover_asic_from_id(0x0001));
}

TEST(drv_ioctl, node_names) {
    /* the path of node @a index of @a type */
    static const struct {
        uct_gaudi_abi_t       abi;
        uct_gaudi_node_type_t type;
        int                   index;
        const char            *path;
    } paths[] = {
        {UCT_GAUDI_ABI_DRM,  UCT_GAUDI_NODE_COMPUTE, 3, "/dev/accel/accel3"},
        {UCT_GAUDI_ABI_DRM,  UCT_GAUDI_NODE_CONTROL, 3,
         "/dev/accel/accel_controlD3"},
        {UCT_GAUDI_ABI_MISC, UCT_GAUDI_NODE_COMPUTE, 0, "/dev/hl0"},
        {UCT_GAUDI_ABI_MISC, UCT_GAUDI_NODE_CONTROL, 0, "/dev/hl_controlD0"}
    };
    /* the index in @a path, -1: not a node of @a type */
    static const struct {
        uct_gaudi_abi_t       abi;
        uct_gaudi_node_type_t type;
        const char            *path;
        int                   index;
    } parses[] = {
        {UCT_GAUDI_ABI_DRM,  UCT_GAUDI_NODE_COMPUTE, "/dev/accel/accel12", 12},
        {UCT_GAUDI_ABI_DRM,  UCT_GAUDI_NODE_COMPUTE,
         "/dev/accel/accel_controlD1", -1},
        {UCT_GAUDI_ABI_DRM,  UCT_GAUDI_NODE_COMPUTE, "/dev/accel/accel01", -1},
        {UCT_GAUDI_ABI_DRM,  UCT_GAUDI_NODE_COMPUTE, "/dev/accel/accel1x", -1},
        {UCT_GAUDI_ABI_DRM,  UCT_GAUDI_NODE_COMPUTE, "/dev/hl1", -1},
        {UCT_GAUDI_ABI_MISC, UCT_GAUDI_NODE_CONTROL, "/dev/hl_controlD5", 5},
        {UCT_GAUDI_ABI_MISC, UCT_GAUDI_NODE_COMPUTE, "/dev/hl_controlD5", -1}
    };

    run_in_child([&]() {
        char path[64];
        int index;

        for (const auto &c : paths) {
            uct_gaudi_ioctl_set_abi(c.abi);
            uct_gaudi_ioctl_node_path(c.type, c.index, path, sizeof(path));
            EXPECT_STREQ(c.path, path);
        }
        for (const auto &c : parses) {
            uct_gaudi_ioctl_set_abi(c.abi);
            if (c.index < 0) {
                EXPECT_EQ(-1, uct_gaudi_ioctl_node_index(c.type, c.path,
                                                         &index)) << c.path;
            } else {
                EXPECT_EQ(0, uct_gaudi_ioctl_node_index(c.type, c.path,
                                                        &index)) << c.path;
                EXPECT_EQ(c.index, index) << c.path;
            }
        }
    });
}


class drv_pool : public ::testing::Test {
protected:
    static const uint64_t MB = 1ull << 20;

    virtual void SetUp()
    {
        ASSERT_EQ(UCS_OK, uct_gaudi_pool_init(&m_pool, 0x20000000ull,
                                              16 * MB, 2 * MB));
    }

    virtual void TearDown()
    {
        uct_gaudi_pool_cleanup(&m_pool);
    }

    uint64_t alloc(uint64_t size, ucs_status_t expected = UCS_OK)
    {
        uint64_t addr = 0;

        EXPECT_EQ(expected, uct_gaudi_pool_alloc(&m_pool, &size, &addr));
        return addr;
    }

    uct_gaudi_pool_t m_pool;
};

TEST_F(drv_pool, first_fit_and_rounding) {
    uint64_t size = 1;
    uint64_t a, b, c;

    a = 0;
    ASSERT_EQ(UCS_OK, uct_gaudi_pool_alloc(&m_pool, &size, &a));
    EXPECT_EQ(2 * MB, size);
    EXPECT_EQ(0x20000000ull, a);
    b = alloc(3 * MB);
    EXPECT_EQ(a + 2 * MB, b);
    c = alloc(2 * MB);
    EXPECT_EQ(b + 4 * MB, c);
    EXPECT_EQ(8 * MB, uct_gaudi_pool_free_size(&m_pool));

    /* a hole big enough is reused first */
    uct_gaudi_pool_free(&m_pool, b, 4 * MB);
    EXPECT_EQ(b, alloc(2 * MB));
    EXPECT_EQ(b + 2 * MB, alloc(2 * MB));
}

TEST_F(drv_pool, exhaust_and_coalesce) {
    uint64_t addrs[8];
    unsigned i;

    for (i = 0; i < 8; ++i) {
        addrs[i] = alloc(2 * MB);
    }
    alloc(2 * MB, UCS_ERR_NO_MEMORY);
    EXPECT_EQ(0u, uct_gaudi_pool_free_size(&m_pool));

    /* free out of order; neighbours merge back into one extent */
    for (i = 0; i < 8; i += 2) {
        uct_gaudi_pool_free(&m_pool, addrs[i], 2 * MB);
    }
    alloc(4 * MB, UCS_ERR_NO_MEMORY);
    for (i = 1; i < 8; i += 2) {
        uct_gaudi_pool_free(&m_pool, addrs[i], 2 * MB);
    }
    EXPECT_EQ(16 * MB, uct_gaudi_pool_free_size(&m_pool));
    EXPECT_EQ(0x20000000ull, alloc(16 * MB));
}

TEST_F(drv_pool, zero_and_huge) {
    alloc(0, UCS_ERR_INVALID_PARAM);
    alloc(~0ull, UCS_ERR_INVALID_PARAM);
    alloc(18 * MB, UCS_ERR_NO_MEMORY);
}
