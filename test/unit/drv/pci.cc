/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "drv_test.h"

#include <uct/gaudi/drv/gaudi_pci.h>

using namespace gaudi_drv_test;


/* A path as sysfs would give it: bridges from the root port down, and the
 * host bridge function 00.0 of the root bus (ids 0: none there) */
static uct_gaudi_pci_path_t
make_path(const char *bdf, std::vector<std::string> bridges,
          uint16_t host_vendor, uint16_t host_device)
{
    uct_gaudi_pci_path_t path;
    const char *top = bridges.empty() ? bdf : bridges[0].c_str();

    memset(&path, 0, sizeof(path));
    snprintf(path.bdf, sizeof(path.bdf), "%s", bdf);
    path.depth = bridges.size();
    for (size_t i = 0; i < bridges.size(); ++i) {
        snprintf(path.bridges[i], sizeof(path.bridges[i]), "%s",
                 bridges[i].c_str());
    }
    EXPECT_EQ(2, sscanf(top, "%x:%x", &path.root_domain, &path.root_bus));
    snprintf(path.host, sizeof(path.host), "%04x:%02x:00.0",
             path.root_domain, path.root_bus);
    path.host_vendor = host_vendor;
    path.host_device = host_device;
    return path;
}

static std::string route(const uct_gaudi_pci_path_t &a,
                         const uct_gaudi_pci_path_t &b, int cpu_forwards,
                         int expected, int isolated = 0)
{
    char why[256];

    EXPECT_EQ(expected, uct_gaudi_pci_route(&a, &b, cpu_forwards, isolated,
                                            why, sizeof(why)))
            << a.bdf << " -> " << b.bdf << ": " << why;
    /* the kernel's distance is symmetric, and so is the answer */
    EXPECT_EQ(expected, uct_gaudi_pci_route(&b, &a, cpu_forwards, isolated,
                                            why, sizeof(why)))
            << b.bdf << " -> " << a.bdf << ": " << why;
    return why;
}

/* The rules of Linux's calc_map_type_and_dist and host_bridge_whitelist
 * (drivers/pci/p2pdma.c), as far as sysfs shows them */
TEST(drv_pci, route_rules) {
    /* below one switch: forwarded there, whatever the host bridge */
    EXPECT_EQ("both below PCIe bridge 0000:01:00.0",
              route(make_path("0000:33:00.0", {"0000:00:01.0", "0000:01:00.0",
                                               "0000:02:00.0"}, 0x1234, 1),
                    make_path("0000:34:00.0", {"0000:00:01.0", "0000:01:00.0",
                                               "0000:02:01.0"}, 0x1234, 1),
                    0, 1));
    /* root ports of a whitelisted host bridge */
    EXPECT_EQ("through host bridge 0000:00:00.0",
              route(make_path("0000:33:00.0", {"0000:00:01.0"}, 0x8086,
                              0x09a2),
                    make_path("0000:34:00.0", {"0000:00:02.0"}, 0x8086,
                              0x09a2), 0, 1));
    /* Skylake-E: across host bridges too */
    route(make_path("0000:33:00.0", {"0000:00:01.0"}, 0x8086, 0x2020),
          make_path("0000:b3:00.0", {"0000:80:01.0"}, 0x8086, 0x2020), 0, 1);
    /* Haswell-EP: one host bridge yes, two no */
    route(make_path("0000:33:00.0", {"0000:00:01.0"}, 0x8086, 0x2f00),
          make_path("0000:34:00.0", {"0000:00:02.0"}, 0x8086, 0x2f00), 0, 1);
    EXPECT_NE(std::string::npos,
              route(make_path("0000:33:00.0", {"0000:00:01.0"}, 0x8086,
                              0x2f00),
                    make_path("0000:b3:00.0", {"0000:80:01.0"}, 0x8086,
                              0x2f00), 0, 0)
                      .find("forward peer DMA only below one of them"));
    /* a host bridge not on the list; the same under an AMD Zen CPU */
    EXPECT_NE(std::string::npos,
              route(make_path("0000:33:00.0", {"0000:00:01.0"}, 0x8086,
                              0x1234),
                    make_path("0000:34:00.0", {"0000:00:02.0"}, 0x8086,
                              0x1234), 0, 0)
                      .find("host bridge 0000:00:00.0 (8086:1234) is not "
                            "known to forward peer DMA"));
    route(make_path("0000:33:00.0", {"0000:00:01.0"}, 0x1022, 0x1480),
          make_path("0000:b3:00.0", {"0000:80:01.0"}, 0x1022, 0x1480), 1, 1);
    /* no function 00.0 on the root bus (some Skylake platforms) */
    EXPECT_NE(std::string::npos,
              route(make_path("0000:33:00.0", {"0000:00:01.0"}, 0, 0),
                    make_path("0000:34:00.0", {"0000:00:02.0"}, 0, 0), 0, 0)
                      .find("no host bridge function on root bus 0000:00"));
    /* one whitelisted host bridge and one not */
    route(make_path("0000:33:00.0", {"0000:00:01.0"}, 0x8086, 0x2020),
          make_path("0000:b3:00.0", {"0000:80:01.0"}, 0x8086, 0x1234), 0, 0);
    /* below one switch but in different IOMMU groups: ACS redirects to the
     * host bridge, whose list then decides */
    EXPECT_NE(std::string::npos,
              route(make_path("0000:33:00.0", {"0000:00:01.0", "0000:01:00.0",
                                               "0000:02:00.0"}, 0x8086,
                              0x1234),
                    make_path("0000:34:00.0", {"0000:00:01.0", "0000:01:00.0",
                                               "0000:02:01.0"}, 0x8086,
                              0x1234), 0, 0, 1)
                      .find("ACS sends it past their common bridge"));
    route(make_path("0000:33:00.0", {"0000:00:01.0", "0000:01:00.0",
                                     "0000:02:00.0"}, 0x8086, 0x09a2),
          make_path("0000:34:00.0", {"0000:00:01.0", "0000:01:00.0",
                                     "0000:02:01.0"}, 0x8086, 0x09a2),
          0, 1, 1);
    /* a VMD domain (five hex digits) */
    route(make_path("10000:e1:00.0", {"10000:e0:01.0"}, 0x8086, 0x09a2),
          make_path("10000:e2:00.0", {"10000:e0:02.0"}, 0x8086, 0x09a2),
          0, 1);
}

/* The key's bus hash covers the whole bus id: two functions of one bus, or
 * two buses of a VMD domain, differ */
TEST(drv_pci, bus_hash) {
    EXPECT_NE(uct_gaudi_pci_bus_hash("0000:33:00.0"),
              uct_gaudi_pci_bus_hash("0000:33:00.1"));
    EXPECT_NE(uct_gaudi_pci_bus_hash("10000:01:00.0"),
              uct_gaudi_pci_bus_hash("10000:02:00.0"));
    EXPECT_EQ(uct_gaudi_pci_bus_hash("0000:33:00.0"),
              uct_gaudi_pci_bus_hash("0000:33:00.0"));
}

/* What the emulated sysfs shows for each topology, read through the seam
 * as on a real machine */
TEST(drv_pci, emulated_sysfs) {
    static const struct {
        const char *topology;
        unsigned   depth;
        const char *host1;   /* device 1's host bridge */
        uint16_t   host_device;
        int        routed;
    } cases[] = {
        {"switch",     3, "0000:00:00.0", 0x09a2, 1},
        {"root_ports", 1, "0000:00:00.0", 0x09a2, 1},
        {"sockets",    1, "0000:80:00.0", 0x2f00, 0}
    };

    for (const auto &c : cases) {
        state_dir dir;

        run_in_child([&]() {
            uct_gaudi_pci_path_t path[2];
            char bdf[UCS_SYS_BDF_NAME_MAX], why[256];
            const uct_gaudi_dev_info_t *info;
            unsigned num_gaudis;

            set_emu_env(2, dir);
            setenv("UCX_GAUDI_EMU_PCI_TOPOLOGY", c.topology, 1);
            ASSERT_EQ(UCS_OK, uct_gaudi_lib_init());
            for (unsigned i = 0; i < 2; ++i) {
                info = uct_gaudi_lib_device(i);
                ASSERT_TRUE(info != NULL);
                ASSERT_EQ(UCS_OK, uct_gaudi_pci_find(
                        uct_gaudi_pci_bus_hash(info->bus_id), bdf,
                        sizeof(bdf), &num_gaudis));
                EXPECT_STREQ(info->bus_id, bdf);
                ASSERT_EQ(UCS_OK, uct_gaudi_pci_path_read(bdf, &path[i]));
                EXPECT_EQ(c.depth, path[i].depth) << c.topology;
                EXPECT_EQ(0x8086, path[i].host_vendor) << c.topology;
                EXPECT_EQ(c.host_device, path[i].host_device) << c.topology;
            }
            EXPECT_STREQ("0000:00:00.0", path[0].host) << c.topology;
            EXPECT_STREQ(c.host1, path[1].host) << c.topology;
            /* the emulator serves no /proc/cpuinfo: no CPU forwards */
            EXPECT_EQ(0, uct_gaudi_pci_cpu_forwards());
            /* no IOMMU groups in the emulated sysfs */
            EXPECT_EQ(0, uct_gaudi_pci_isolated(path[0].bdf, path[1].bdf));
            EXPECT_EQ(c.routed, uct_gaudi_pci_route(&path[0], &path[1], 0, 0,
                                                    why, sizeof(why)))
                    << c.topology << ": " << why;
            /* the host bridges are PCI functions too, but no Gaudis */
            EXPECT_EQ(UCS_ERR_NO_ELEM,
                      uct_gaudi_pci_find(uct_gaudi_pci_bus_hash(
                                                 "0000:00:00.0"),
                                         bdf, sizeof(bdf), &num_gaudis));
            EXPECT_EQ(2u, num_gaudis);
            EXPECT_EQ(UCS_ERR_NO_ELEM,
                      uct_gaudi_pci_find(uct_gaudi_pci_bus_hash(
                                                 "0000:99:00.0"),
                                         bdf, sizeof(bdf), &num_gaudis));
            EXPECT_EQ(UCS_ERR_NO_ELEM,
                      uct_gaudi_pci_path_read("0000:99:00.0", &path[0]));
            uct_gaudi_lib_cleanup();
        });
    }
}
