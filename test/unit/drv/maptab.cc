/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "drv_test.h"

using namespace gaudi_drv_test;


/* The parser is a pure function: fake devices, no emulator */
class drv_maptab : public ::testing::Test {
protected:
    virtual void SetUp()
    {
        static const struct {
            uint32_t   module_id;
            const char *bus_id;
        } fake[] = {
            {2, "0000:33:00.0"}, {0, "0000:4d:00.0"}, {1, "0000:4e:00.0"}
        };
        unsigned i;

        memset(m_devs, 0, sizeof(m_devs));
        for (i = 0; i < 3; ++i) {
            m_devs[i].minor     = i;
            m_devs[i].module_id = fake[i].module_id;
            strcpy(m_devs[i].bus_id, fake[i].bus_id);
            ASSERT_EQ(UCS_OK, uct_gaudi_discover_parse_bus_id(fake[i].bus_id,
                                                              &m_devs[i].pci));
        }
    }

    ucs_status_t parse(const char *json, unsigned num_devs = 3)
    {
        m_log.clear();
        for (unsigned i = 0; i < 3; ++i) {
            m_order[i] = 1000;
        }
        return uct_gaudi_maptab_parse(json, m_devs, num_devs, m_order);
    }

    /* The table is rejected with exactly one error containing @a text */
    void expect_rejected(const char *json, const std::string &text)
    {
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, parse(json)) << json;
        ASSERT_EQ(1u, m_log.messages().size()) << json;
        EXPECT_NE(std::string::npos, m_log.messages()[0].find(text))
                << "message: " << m_log.messages()[0];
        EXPECT_NE(std::string::npos,
                  m_log.messages()[0].find("GAUDI_MAPPING_TABLE"));
        /* the order was not touched: the caller keeps identity order */
        EXPECT_EQ(1000u, m_order[0]);
    }

    uct_gaudi_dev_info_t m_devs[3];
    unsigned             m_order[3];
    log_capture          m_log;
};


TEST_F(drv_maptab, full_table) {
    ASSERT_EQ(UCS_OK, parse("[{\"index\":0,\"module_id\":0},"
                            " {\"index\":1,\"bus_id\":\"0000:33:00.0\"},"
                            " {\"index\":2,\"module_id\":1,"
                            "  \"bus_id\":\"0000:4e:00.0\"}]"));
    EXPECT_EQ(1u, m_order[0]);
    EXPECT_EQ(0u, m_order[1]);
    EXPECT_EQ(2u, m_order[2]);
    EXPECT_TRUE(m_log.messages().empty());
}

TEST_F(drv_maptab, partial_table_fills_in_physical_order) {
    ASSERT_EQ(UCS_OK, parse("[{\"index\":0,\"module_id\":1}]"));
    EXPECT_EQ(2u, m_order[0]);
    EXPECT_EQ(0u, m_order[1]);
    EXPECT_EQ(1u, m_order[2]);
}

TEST_F(drv_maptab, short_bus_id_and_whitespace) {
    ASSERT_EQ(UCS_OK, parse("  [ {\"index\": 2, \"bus_id\": \"33:00.0\"} ] "));
    EXPECT_EQ(1u, m_order[0]);
    EXPECT_EQ(2u, m_order[1]);
    EXPECT_EQ(0u, m_order[2]);
}

TEST_F(drv_maptab, not_json) {
    expect_rejected("[{\"index\":0,", "not valid JSON");
    expect_rejected("", "not valid JSON");
    expect_rejected("index=0", "not valid JSON");
}

TEST_F(drv_maptab, not_array) {
    expect_rejected("{\"index\":0,\"module_id\":1}", "not a JSON array");
    expect_rejected("42", "not a JSON array");
}

TEST_F(drv_maptab, empty_array) {
    expect_rejected("[]", "empty array");
}

TEST_F(drv_maptab, entry_not_object) {
    expect_rejected("[{\"index\":0,\"module_id\":1}, 5]",
                    "entry [1] is not an object");
    expect_rejected("[[0, 1]]", "entry [0] is not an object");
}

TEST_F(drv_maptab, bad_index) {
    expect_rejected("[{\"module_id\":1}]", "entry [0]: \"index\" is missing");
    expect_rejected("[{\"index\":\"0\",\"module_id\":1}]",
                    "\"index\" is missing or not an integer");
    expect_rejected("[{\"index\":1.5,\"module_id\":1}]",
                    "\"index\" is missing or not an integer");
    expect_rejected("[{\"index\":null,\"module_id\":1}]",
                    "\"index\" is missing or not an integer");
}

TEST_F(drv_maptab, index_out_of_range) {
    expect_rejected("[{\"index\":-1,\"module_id\":1}]",
                    "entry [0]: index -1 is out of range");
    expect_rejected("[{\"index\":0,\"module_id\":0},"
                    " {\"index\":3,\"module_id\":1}]",
                    "entry [1]: index 3 is out of range");
    expect_rejected("[{\"index\":1e12,\"module_id\":1}]",
                    "\"index\" is missing or not an integer");
}

TEST_F(drv_maptab, duplicate_index) {
    expect_rejected("[{\"index\":0,\"module_id\":1},"
                    " {\"index\":0,\"module_id\":2}]",
                    "entry [1]: duplicate index 0");
}

TEST_F(drv_maptab, duplicate_device) {
    expect_rejected("[{\"index\":0,\"module_id\":1},"
                    " {\"index\":1,\"module_id\":1}]",
                    "entry [1]: device 0000:4e:00.0 is already mapped by "
                    "entry [0]");
    expect_rejected("[{\"index\":0,\"bus_id\":\"0000:33:00.0\"},"
                    " {\"index\":2,\"bus_id\":\"33:00.0\"}]",
                    "already mapped by entry [0]");
    expect_rejected("[{\"index\":0,\"bus_id\":\"0000:33:00.0\"},"
                    " {\"index\":1,\"module_id\":2}]",
                    "already mapped");
}

TEST_F(drv_maptab, missing_device_fields) {
    expect_rejected("[{\"index\":0}]",
                    "entry [0]: needs \"module_id\" or \"bus_id\"");
}

TEST_F(drv_maptab, wrong_field_types) {
    expect_rejected("[{\"index\":0,\"module_id\":\"2\"}]",
                    "\"module_id\" is not a non-negative integer");
    expect_rejected("[{\"index\":0,\"module_id\":-2}]",
                    "\"module_id\" is not a non-negative integer");
    expect_rejected("[{\"index\":0,\"bus_id\":33}]",
                    "\"bus_id\" is not a PCI bus id");
    expect_rejected("[{\"index\":0,\"bus_id\":\"0000:33:00\"}]",
                    "\"bus_id\" is not a PCI bus id");
    expect_rejected("[{\"index\":0,\"bus_id\":\"0000:33:00.9\"}]",
                    "\"bus_id\" is not a PCI bus id");
}

TEST_F(drv_maptab, unknown_device) {
    expect_rejected("[{\"index\":0,\"module_id\":7}]",
                    "entry [0]: no Gaudi device has module_id 7");
    expect_rejected("[{\"index\":0,\"bus_id\":\"0000:99:00.0\"}]",
                    "entry [0]: no Gaudi device has bus_id 0000:99:00.0");
}

TEST_F(drv_maptab, inconsistent_entry) {
    expect_rejected("[{\"index\":0,\"module_id\":2,"
                    "  \"bus_id\":\"0000:4d:00.0\"}]",
                    "entry [0]: module_id and bus_id name different devices");
}

TEST_F(drv_maptab, ambiguous_module_id) {
    m_devs[1].module_id = 2;
    expect_rejected("[{\"index\":0,\"module_id\":2}]", "shared by several");
    EXPECT_EQ(UCS_OK, parse("[{\"index\":0,\"bus_id\":\"0000:4d:00.0\"}]"));
    EXPECT_EQ(1u, m_order[0]);
}

TEST_F(drv_maptab, no_devices) {
    m_log.clear();
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              parse("[{\"index\":0,\"module_id\":2}]", 0));
    EXPECT_EQ(1u, m_log.count("out of range (0 device(s) discovered)"));
}

TEST_F(drv_maptab, deep_garbage_does_not_crash) {
    std::string deep(5000, '[');

    EXPECT_EQ(UCS_ERR_INVALID_PARAM, parse(deep.c_str()));
    EXPECT_EQ(1u, m_log.messages().size());
}
