/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "drv_test.h"

#include <numa.h>

using namespace gaudi_drv_test;


/*
 * The rules are a pure function of the environment values: an 8-device node
 * of fake devices laid out like the emulator's (module ID = 7 - index,
 * devices 0-3 on NUMA node 0, 4-7 on node 1), no emulator.
 */
class drv_assign : public ::testing::Test {
protected:
    enum { NUM_DEVS = 8 };

    virtual void SetUp()
    {
        unsigned i;

        memset(m_devs, 0, sizeof(m_devs));
        for (i = 0; i < NUM_DEVS; ++i) {
            m_devs[i].index     = i;
            m_devs[i].minor     = i;
            m_devs[i].module_id = NUM_DEVS - 1 - i;
            m_devs[i].numa_node = i / 4;
            m_devs[i].usable    = 1;
            m_devs[i].asic      = UCT_GAUDI_ASIC_GAUDI2;
            snprintf(m_devs[i].name, sizeof(m_devs[i].name), "gaudi%u", i);
            snprintf(m_devs[i].bus_id, sizeof(m_devs[i].bus_id),
                     "0000:%02x:00.0", 0x33 + i);
            ASSERT_EQ(UCS_OK, uct_gaudi_discover_parse_bus_id(m_devs[i].bus_id,
                                                              &m_devs[i].pci));
        }

        memset(&m_env, 0, sizeof(m_env));
        m_env.device = "auto";
    }

    void set_rank(const char *var, const char *value)
    {
        m_env.rank_var   = var;
        m_env.rank_value = value;
    }

    ucs_status_t plan()
    {
        m_log.clear();
        return uct_gaudi_assign_plan(&m_env, m_devs, NUM_DEVS, &m_assign);
    }

    /* The rules force the device with @a module_id, for reason @a why */
    void expect_module(uct_gaudi_assign_rule_t rule, unsigned module_id,
                       const std::string &why)
    {
        ASSERT_EQ(UCS_OK, plan());
        EXPECT_TRUE(m_log.messages().empty());
        EXPECT_EQ(rule, m_assign.rule);
        ASSERT_TRUE(m_assign.device != NULL);
        EXPECT_EQ(module_id, m_assign.device->module_id);
        EXPECT_EQ(why, m_assign.why);
    }

    /* Rejected with an error containing every text of @a texts, and the
     * promise that UCX goes on without the Gaudi transports; logging it is
     * the caller's job */
    void expect_error(ucs_status_t status,
                      const std::vector<std::string> &texts)
    {
        EXPECT_EQ(status, plan());
        EXPECT_TRUE(m_log.messages().empty());
        const std::string msg = m_assign.error;
        for (const std::string &text : texts) {
            EXPECT_NE(std::string::npos, msg.find(text))
                    << "'" << text << "' not in: " << msg;
        }
        EXPECT_NE(std::string::npos,
                  msg.find("UCX continues without the Gaudi transports"))
                << msg;
    }

    /* A value of a variable the rules reject: what the plan returns, and
     * texts of its error */
    struct error_case {
        const char               *value;
        ucs_status_t             status;
        std::vector<std::string> texts;
    };

    /* expect_error() for each of @a cases as the value of @a var */
    void expect_errors(const char *&var, const std::vector<error_case> &cases)
    {
        for (const error_case &c : cases) {
            SCOPED_TRACE(c.value);
            var = c.value;
            expect_error(c.status, c.texts);
        }
    }

    uct_gaudi_dev_info_t   m_devs[NUM_DEVS];
    uct_gaudi_assign_env_t m_env;
    uct_gaudi_assign_t     m_assign;
    log_capture            m_log;
};


TEST_F(drv_assign, local_rank_is_module_id) {
    char rank[8];

    for (unsigned r = 0; r < NUM_DEVS; ++r) {
        snprintf(rank, sizeof(rank), "%u", r);
        set_rank("OMPI_COMM_WORLD_LOCAL_RANK", rank);
        expect_module(UCT_GAUDI_ASSIGN_LOCAL_RANK, r,
                      "module ID = local rank " + std::to_string(r) +
                      " (OMPI_COMM_WORLD_LOCAL_RANK=" + rank + ")");
        /* module r is the emulator-like index 7 - r, not index r */
        EXPECT_EQ(NUM_DEVS - 1 - r, m_assign.device->index);
    }
}

TEST_F(drv_assign, visible_modules_at_local_rank) {
    static const unsigned expect[] = {5, 4, 7, 6};
    char rank[8];

    m_env.visible_modules = "5,4,7,6";
    for (unsigned r = 0; r < 4; ++r) {
        snprintf(rank, sizeof(rank), "%u", r);
        set_rank("LOCAL_RANK", rank);
        expect_module(UCT_GAUDI_ASSIGN_VISIBLE, expect[r],
                      "HABANA_VISIBLE_MODULES=5,4,7,6 at local rank " +
                      std::to_string(r) + " (LOCAL_RANK=" + rank + ")");
    }

    /* spaces around the entries are accepted */
    m_env.visible_modules = " 5, 4 ,7,6 ";
    set_rank("LOCAL_RANK", "1");
    ASSERT_EQ(UCS_OK, plan());
    EXPECT_EQ(4u, m_assign.device->module_id);
}

TEST_F(drv_assign, visible_modules_without_rank) {
    /* no local rank: the scan rules choose among the listed modules */
    m_env.visible_modules = "6,1";
    ASSERT_EQ(UCS_OK, plan());
    EXPECT_TRUE(m_assign.device == NULL);
    EXPECT_EQ(UCS_BIT(1) | UCS_BIT(6), m_assign.candidates); /* modules 6,1 */
    EXPECT_EQ(0u, m_assign.preferred); /* numa unknown */

    /* the process runs on node 1: module 1 (index 6) is near it */
    m_env.numa_nodes = UCS_BIT(1);
    ASSERT_EQ(UCS_OK, plan());
    EXPECT_EQ(UCS_BIT(6), m_assign.preferred);
    uct_gaudi_assign_scan_taken(&m_assign, &m_devs[6]);
    EXPECT_EQ(UCT_GAUDI_ASSIGN_NUMA, m_assign.rule);
    EXPECT_EQ("the first free device on NUMA node 1, where this process's "
              "CPUs are among HABANA_VISIBLE_MODULES=6,1",
              std::string(m_assign.why));
}

TEST_F(drv_assign, rule_order) {
    /* HLS_MODULE_ID comes before the visible list and the local rank */
    m_env.hls_module_id   = "2";
    m_env.visible_modules = "5,4";
    set_rank("LOCAL_RANK", "1");
    expect_module(UCT_GAUDI_ASSIGN_HLS_MODULE, 2, "HLS_MODULE_ID=2");

    /* UCX_GAUDI_DEVICE overrides all of them */
    m_env.device = "module:3";
    expect_module(UCT_GAUDI_ASSIGN_CONFIG, 3, "UCX_GAUDI_DEVICE=module:3");
    m_env.device = "0";
    expect_module(UCT_GAUDI_ASSIGN_CONFIG, 7, "UCX_GAUDI_DEVICE=0");
    m_env.device = "0000:34:00.0";
    expect_module(UCT_GAUDI_ASSIGN_CONFIG, 6, "UCX_GAUDI_DEVICE=0000:34:00.0");
    /* the device name UCX prints (ucx_info -d) names the same device */
    m_env.device = "gaudi0";
    expect_module(UCT_GAUDI_ASSIGN_CONFIG, 7, "UCX_GAUDI_DEVICE=gaudi0");
    m_env.device = "AUTO";
    expect_module(UCT_GAUDI_ASSIGN_HLS_MODULE, 2, "HLS_MODULE_ID=2");

    /* the visible list comes before module ID = local rank */
    m_env.hls_module_id = NULL;
    expect_module(UCT_GAUDI_ASSIGN_VISIBLE, 4,
                  "HABANA_VISIBLE_MODULES=5,4 at local rank 1 (LOCAL_RANK=1)");
}

TEST_F(drv_assign, numa_rule) {
    /* the process's CPUs are on node 1: devices 4-7 are tried first */
    m_env.numa_nodes = UCS_BIT(1);
    ASSERT_EQ(UCS_OK, plan());
    EXPECT_TRUE(m_assign.device == NULL);
    EXPECT_EQ(0xffu, m_assign.candidates);
    EXPECT_EQ(0xf0u, m_assign.preferred);
    uct_gaudi_assign_scan_taken(&m_assign, &m_devs[5]);
    EXPECT_EQ(UCT_GAUDI_ASSIGN_NUMA, m_assign.rule);
    EXPECT_EQ("the first free device on NUMA node 1, where this process's "
              "CPUs are", std::string(m_assign.why));

    /* all of them busy: the first free one elsewhere, and said so */
    ASSERT_EQ(UCS_OK, plan());
    uct_gaudi_assign_scan_taken(&m_assign, &m_devs[0]);
    EXPECT_EQ(UCT_GAUDI_ASSIGN_FIRST_FREE, m_assign.rule);
    EXPECT_EQ("the first free device (none is free near this process's "
              "CPUs)", std::string(m_assign.why));

    /* CPUs on both nodes, or unknown, or an unusable near device only: no
     * preference, the first free device */
    m_env.numa_nodes = UCS_BIT(0) | UCS_BIT(1);
    ASSERT_EQ(UCS_OK, plan());
    EXPECT_EQ(0u, m_assign.preferred);
    m_env.numa_nodes = 0;
    ASSERT_EQ(UCS_OK, plan());
    EXPECT_EQ(0u, m_assign.preferred);
    uct_gaudi_assign_scan_taken(&m_assign, &m_devs[0]);
    EXPECT_EQ(UCT_GAUDI_ASSIGN_FIRST_FREE, m_assign.rule);
    EXPECT_EQ("the first free device", std::string(m_assign.why));

    m_env.numa_nodes = UCS_BIT(1);
    for (unsigned i = 4; i < NUM_DEVS; ++i) {
        m_devs[i].usable = 0;
    }
    ASSERT_EQ(UCS_OK, plan());
    EXPECT_EQ(0x0fu, m_assign.candidates);
    EXPECT_EQ(0u, m_assign.preferred);
}

TEST_F(drv_assign, hls_module_id_errors) {
    expect_errors(m_env.hls_module_id, {
        {"9", UCS_ERR_NO_DEVICE, {"HLS_MODULE_ID=9",
                                  "no Gaudi device has module ID 9",
                                  "module IDs of this node: "
                                  "0,1,2,3,4,5,6,7"}},
        {"abc", UCS_ERR_INVALID_PARAM, {"HLS_MODULE_ID=abc",
                                        "is not a module ID"}},
        {"-1", UCS_ERR_INVALID_PARAM, {"HLS_MODULE_ID=-1"}},
        {"3x", UCS_ERR_INVALID_PARAM, {"HLS_MODULE_ID=3x"}},
        {"99999999999", UCS_ERR_INVALID_PARAM, {"HLS_MODULE_ID=99999999999"}}
    });
}

TEST_F(drv_assign, visible_modules_errors) {
    set_rank("SLURM_LOCALID", "0");
    expect_errors(m_env.visible_modules, {
        {"5,4,5", UCS_ERR_INVALID_PARAM, {"HABANA_VISIBLE_MODULES=5,4,5",
                                          "module ID 5 is listed twice"}},
        {"5,12", UCS_ERR_NO_DEVICE, {"HABANA_VISIBLE_MODULES=5,12",
                                     "no Gaudi device has module ID 12"}},
        {"5,,4", UCS_ERR_INVALID_PARAM, {"HABANA_VISIBLE_MODULES=5,,4",
                                         "entry 2 is not a module ID"}},
        {"5;4", UCS_ERR_INVALID_PARAM, {"HABANA_VISIBLE_MODULES=5;4",
                                        "entry 1 is not a module ID"}},
        {"5,4,", UCS_ERR_INVALID_PARAM, {"entry 3 is not a module ID"}}
    });

    /* a local rank beyond the list */
    m_env.visible_modules = "5,4,7,6";
    set_rank("SLURM_LOCALID", "4");
    expect_error(UCS_ERR_INVALID_PARAM, {"local rank 4 (SLURM_LOCALID=4) is "
                                         "beyond HABANA_VISIBLE_MODULES="
                                         "5,4,7,6, which lists 4 module(s)"});
}

TEST_F(drv_assign, local_rank_errors) {
    set_rank("MPI_LOCALRANKID", "8");
    expect_error(UCS_ERR_NO_DEVICE, {"module ID = local rank 8 "
                                     "(MPI_LOCALRANKID=8)",
                                     "no Gaudi device has module ID 8"});
    set_rank("PMIX_LOCAL_RANK", "one");
    expect_error(UCS_ERR_INVALID_PARAM, {"PMIX_LOCAL_RANK=one is not a local "
                                         "rank"});
    /* a malformed rank is reported with the visible list too */
    m_env.visible_modules = "1,2";
    expect_error(UCS_ERR_INVALID_PARAM, {"PMIX_LOCAL_RANK=one"});
}

TEST_F(drv_assign, forced_device_unusable) {
    m_devs[2].usable = 0;
    m_devs[2].asic   = UCT_GAUDI_ASIC_GAUDI3;
    set_rank("LOCAL_RANK", "5"); /* module 5 = index 2 */
    expect_error(UCS_ERR_UNSUPPORTED, {"module ID = local rank 5 (LOCAL_RANK=5)"
                                       " selects gaudi2 (module 5",
                                       "Gaudi3 DMA is not supported"});
}

TEST_F(drv_assign, device_spec_errors) {
    static const char *specs[] = {"8", "module:8", "module:", "module:-1",
                                  "0000:77:00.0", "gaudi", "gaudi8",
                                  "gaudi1x", "gaudi-1", "gaudi 1"};

    for (const char *spec : specs) {
        m_env.device = spec;
        expect_error(UCS_ERR_NO_DEVICE, {std::string("UCX_GAUDI_DEVICE=") +
                                         spec, "does not name one of the 8 "
                                         "Gaudi devices"});
    }
}

/* Which variables are read, in which order (the real environment) */
TEST(drv_assign_env, read_env) {
    run_in_child([]() {
        uct_gaudi_assign_env_t env;
        const char **var;

        for (var = uct_gaudi_assign_rank_vars; *var != NULL; ++var) {
            unsetenv(*var);
        }
        unsetenv("HLS_MODULE_ID");
        unsetenv("HABANA_VISIBLE_MODULES");

        uct_gaudi_assign_read_env("auto", 1, &env);
        EXPECT_STREQ("auto", env.device);
        EXPECT_TRUE(env.hls_module_id == NULL);
        EXPECT_TRUE(env.visible_modules == NULL);
        EXPECT_TRUE(env.rank_var == NULL);
        EXPECT_EQ(UCS_BIT(1), env.numa_nodes); /* the faked node */

        /* the first variable of the list that is set and not empty wins */
        setenv("PMIX_LOCAL_RANK", "4", 1);
        setenv("SLURM_LOCALID", "3", 1);
        setenv("MPI_LOCALRANKID", "", 1);
        uct_gaudi_assign_read_env("auto", -1, &env);
        EXPECT_STREQ("SLURM_LOCALID", env.rank_var);
        EXPECT_STREQ("3", env.rank_value);
        setenv("LOCAL_RANK", "2", 1);
        setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
        setenv("HLS_MODULE_ID", "", 1);
        setenv("HABANA_VISIBLE_MODULES", "3,2", 1);
        uct_gaudi_assign_read_env("auto", -1, &env);
        EXPECT_STREQ("OMPI_COMM_WORLD_LOCAL_RANK", env.rank_var);
        EXPECT_STREQ("1", env.rank_value);
        EXPECT_TRUE(env.hls_module_id == NULL); /* empty is unset */
        EXPECT_STREQ("3,2", env.visible_modules);
        unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
        uct_gaudi_assign_read_env("auto", -1, &env);
        EXPECT_STREQ("LOCAL_RANK", env.rank_var);
        setenv("HLS_MODULE_ID", "6", 1);
        uct_gaudi_assign_read_env("auto", -1, &env);
        EXPECT_STREQ("6", env.hls_module_id);

        /* libnuma: the nodes of the CPUs this process may run on */
        if (numa_available() >= 0) {
            EXPECT_NE(0u, env.numa_nodes);
            EXPECT_EQ(0u, env.numa_nodes >> (numa_max_node() + 1));
        } else {
            EXPECT_EQ(0u, env.numa_nodes);
        }
    });
}
