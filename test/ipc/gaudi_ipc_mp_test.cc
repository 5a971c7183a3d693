/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * Multi-process tests of the gaudi_ipc UCT transport on the emulator: every
 * test runs a scenario (ipc_scenarios.cc) in two processes - this binary
 * exec'ed with "--role <scenario>" - each owning one of two emulated Gaudi
 * devices of a fresh shared node, connected by a socketpair for addresses,
 * rkeys and synchronization (ipc_harness.cc; the gtest parent itself never
 * initializes UCX or the emulator). Each child checks at its end that its
 * emulator accounting (imports, device and host mappings, pinned bytes,
 * exports, CB mappings, contexts) and its fd count are back to their values
 * before the scenario started; a pair that makes no progress (no message
 * between them, no output) for 60 s is hung and killed (with the threads'
 * backtraces printed if gdb is installed): a loaded machine only slows it.
 *
 *   gaudi_ipc_mp_test [gtest options]
 *   GAUDI_IPC_MP_VERBOSE=1  print the children's output of passing tests too
 *   GAUDI_IPC_MP_KEEP=1     keep /tmp/gaudi-ipc-mp.* (state dir and logs)
 *   GAUDI_IPC_MP_NO_GDB=1   no backtraces of hung children
 *
 * Facts the children report ("RESULT key=value": timings, import counts,
 * statuses, whether a VA repeated) are printed as "[child N] key=value" and
 * recorded as test properties.
 */

#include "ipc_child.h"
#include "ipc_harness.h"

#include <string.h>
#include <unistd.h>


namespace gipc {

class gaudi_ipc_mp : public mp_test {
};


/* MD/iface attributes, addresses, reachability, rkey layout, ep_check on a
 * live peer, a put each way */
TEST_F(gaudi_ipc_mp, attributes)
{
    run(run_spec("attrs"));
}

/* Two processes of one host with a rendezvous directory each: not
 * reachable, said once in an info line, their keys do not unpack */
TEST_F(gaudi_ipc_mp, directory_not_shared)
{
    run_spec spec("not_shared");

    spec.env          = {"UCX_LOG_LEVEL=info"};
    spec.allow_errors = true;
    run(spec);
    EXPECT_EQ("1", result(0, "not_shared_info"));
}

/* 1. 1 B .. 64 MiB and odd sizes, aligned/unaligned, byte-exact with the
 * bytes around the destination untouched; device 0 initiates */
TEST_F(gaudi_ipc_mp, put_get_sizes_dev0_to_dev1)
{
    run_spec spec("put_get");

    spec.params = {"initiator=0"};
    run(spec);
}

/* ... and the roles swapped */
TEST_F(gaudi_ipc_mp, put_get_sizes_dev1_to_dev0)
{
    run_spec spec("put_get");

    spec.params = {"initiator=1"};
    run(spec);
}

/* Both processes import and export at the same time */
TEST_F(gaudi_ipc_mp, bidirectional)
{
    run(run_spec("bidir"));
}

/* 2. 32 exported allocations, interleaved puts and gets all in flight */
TEST_F(gaudi_ipc_mp, many_buffers)
{
    run(run_spec("many"));
}

/* Two generations of the out-of-tree driver: 1.24 applies the offset of a
 * DMA-BUF export, older releases export from the mapping's first page (the
 * emulator's UCX_GAUDI_EMU_OOT_VERSION, driver-abi.md 4.4). 32 allocations
 * carved from one chunk, all but the first at an offset in it: every byte
 * must be right on both */
TEST_F(gaudi_ipc_mp, many_buffers_driver_1_23)
{
    run_spec spec("many");

    spec.env = {"UCX_GAUDI_EMU_OOT_VERSION=1.23.0"};
    run(spec);
}

TEST_F(gaudi_ipc_mp, many_buffers_driver_1_24)
{
    run_spec spec("many");

    spec.env = {"UCX_GAUDI_EMU_OOT_VERSION=1.24.1"};
    run(spec);
}

TEST_F(gaudi_ipc_mp, put_get_sizes_driver_1_23)
{
    run_spec spec("put_get");

    spec.params = {"initiator=0"};
    spec.env    = {"UCX_GAUDI_EMU_OOT_VERSION=1.23.0"};
    run(spec);
}

/* ... with a small in-flight limit: NO_RESOURCE and the pending queue */
TEST_F(gaudi_ipc_mp, many_buffers_pending)
{
    run_spec spec("many");

    spec.params = {"pending=1"};
    spec.env    = {"UCX_GAUDI_IPC_MAX_INFLIGHT=4"};
    run(spec);
}

/* 3. repeated operations on one remote buffer keep one import */
TEST_F(gaudi_ipc_mp, cache_on)
{
    run_spec spec("cache");

    spec.params = {"cache=y"};
    spec.env    = {"UCX_GAUDI_IPC_CACHE=y"};
    run(spec);
}

/* ... and without the cache every import goes once its operation is done */
TEST_F(gaudi_ipc_mp, cache_off)
{
    run_spec spec("cache");

    spec.params = {"cache=n"};
    spec.env    = {"UCX_GAUDI_IPC_CACHE=n"};
    run(spec);
}

/* 4. the exporter frees and reallocates (same size); the new rkey must reach
 * the new allocation and imports must not accumulate */
TEST_F(gaudi_ipc_mp, exporter_realloc)
{
    run(run_spec("realloc"));
    printf("exporter's VA repeated: %s\n", result(1, "va_repeated").c_str());
}

/* ... while the importer still holds the previous rkey */
TEST_F(gaudi_ipc_mp, exporter_realloc_old_rkey_held)
{
    run_spec spec("realloc");

    spec.params = {"hold_old=1"};
    run(spec);
    printf("exporter's VA repeated: %s\n", result(1, "va_repeated").c_str());
}

/* 5. the exporter is SIGKILLed with operations in flight */
TEST_F(gaudi_ipc_mp, peer_killed_exporter)
{
    run_spec spec("kill_exporter");

    spec.victim       = 1;
    spec.allow_errors = true;
    run(spec);
}

/* ... the importer is SIGKILLed with operations in flight */
TEST_F(gaudi_ipc_mp, peer_killed_importer)
{
    run_spec spec("kill_importer");

    spec.victim       = 1;
    spec.allow_errors = true;
    run(spec);
}

/* 6. an rkey with a wrong cookie is refused */
TEST_F(gaudi_ipc_mp, refuse_wrong_cookie)
{
    run_spec spec("bad_rkey");

    spec.params       = {"field=cookie"};
    spec.allow_errors = true;
    run(spec);
}

/* ... and one with a wrong export id */
TEST_F(gaudi_ipc_mp, refuse_wrong_export_id)
{
    run_spec spec("bad_rkey");

    spec.params       = {"field=export_id"};
    spec.allow_errors = true;
    run(spec);
}

/* ... an operation outside the exported allocation */
TEST_F(gaudi_ipc_mp, refuse_out_of_range)
{
    run_spec spec("out_of_range");

    spec.allow_errors = true;
    run(spec);
}

/* ... a GET_FD from a process of another uid (needs root to setuid) */
TEST_F(gaudi_ipc_mp, refuse_foreign_uid)
{
    run_spec spec("foreign_uid");

    if (geteuid() != 0) {
        GTEST_SKIP() << "needs root to run a process of another uid";
    }

    spec.allow_errors = true;
    run(spec);
}

/* An allocation is exported at a peer's first request, not at its
 * registration */
TEST_F(gaudi_ipc_mp, export_at_first_import)
{
    run_spec spec("lazy_export");

    run(spec);
    EXPECT_EQ("0", result(1, "exports_registered"));
    EXPECT_EQ("1", result(1, "exports_imported"));
}

/* ... and a whole chunk's export, after an allocation of it went (a driver
 * before the offset handling: whole chunks are exported) */
TEST_F(gaudi_ipc_mp, export_at_first_import_whole_chunk)
{
    run_spec spec("lazy_export_whole_chunk");

    spec.env = {"UCX_GAUDI_EMU_OOT_VERSION=1.23.0"};
    run(spec);
}

/* An allocation whose pages lie beyond the device's PCIe DRAM BAR: the
 * driver refuses its export (validate_export_params), the exporter says so
 * once, the peer stages; the allocation inside the BAR is imported */
TEST_F(gaudi_ipc_mp, export_outside_dram_bar)
{
    run_spec spec("outside_bar");

    spec.env          = {"UCX_GAUDI_EMU_DRAM_BAR_SIZE=640m"};
    spec.allow_errors = true;
    run(spec);
    EXPECT_EQ("1", result(1, "exports"));
    EXPECT_NE(std::string::npos,
              output(1).find("beyond the device's PCIe DRAM BAR"))
            << output(1);
    EXPECT_EQ(std::string::npos, output(1).find("UCX  ERROR")) << output(1);
}

/* Devices on two host bridges that forward peer DMA only below one
 * (Haswell-EP, as Linux's p2pdma whitelist says): no PCIe route, so the
 * key is unreachable, with a warning naming the two devices and why; UCP
 * would stage. Before, the import succeeded and the put's writes were lost
 * on the way, reported as success */
TEST_F(gaudi_ipc_mp, no_pci_route)
{
    run_spec spec("pci_route");

    spec.env          = {"UCX_GAUDI_EMU_PCI_TOPOLOGY=sockets"};
    spec.allow_errors = true;
    run(spec);
    EXPECT_EQ(ucs_status_string(UCS_ERR_UNREACHABLE), result(0, "unpack"));
    EXPECT_EQ("0", result(1, "exports"));
    EXPECT_NE(std::string::npos,
              output(0).find("UCX  WARN  gaudi_ipc: gaudi"))
            << output(0);
    EXPECT_NE(std::string::npos,
              output(0).find("no PCIe peer-to-peer route from 0000:3"))
            << output(0);
    EXPECT_NE(std::string::npos,
              output(0).find("(8086:2f00) forward peer DMA only below one of "
                             "them"))
            << output(0);
    EXPECT_EQ(std::string::npos, output(0).find("UCX  ERROR")) << output(0);
}

/* A root port each, on a host bridge that forwards between them (Ice
 * Lake-SP): the route is found through the host bridge, the put lands */
TEST_F(gaudi_ipc_mp, pci_route_through_host_bridge)
{
    run_spec spec("pci_route");

    spec.env = {"UCX_GAUDI_EMU_PCI_TOPOLOGY=root_ports"};
    run(spec);
    EXPECT_EQ(ucs_status_string(UCS_OK), result(0, "unpack"));
    EXPECT_EQ("1", result(1, "exports"));
    EXPECT_EQ("1", result(1, "landed"));
}

/* The check turned off on a platform without the route: the import goes
 * ahead, the put reports success and the emulated platform loses its
 * writes, as such hardware would: what the check is for */
TEST_F(gaudi_ipc_mp, no_pci_route_unchecked_loses_writes)
{
    run_spec spec("pci_route");

    spec.env          = {"UCX_GAUDI_EMU_PCI_TOPOLOGY=sockets",
                         "UCX_GAUDI_IPC_CHECK_PCI_ROUTE=n"};
    spec.allow_errors = true;
    run(spec);
    EXPECT_EQ(ucs_status_string(UCS_OK), result(0, "unpack"));
    EXPECT_EQ("1", result(1, "exports"));
    EXPECT_EQ("0", result(1, "landed"));
}

/* 7. without DMA-BUF import (upstream driver) peers are unreachable */
TEST_F(gaudi_ipc_mp, import_unsupported)
{
    run_spec spec("no_import");

    spec.env          = {"UCX_GAUDI_EMU_OOT_IMPORT=n"};
    spec.allow_errors = true;
    run(spec);
}

/* Memory from gaudi_cpy's mem_alloc, exported and used as the local side */
TEST_F(gaudi_ipc_mp, gaudi_cpy_mem_alloc)
{
    run_spec spec("md_alloc");

    spec.params = {"cpy_md=1"};
    run(spec);
}

} /* namespace gipc */


int main(int argc, char **argv)
{
    if ((argc > 1) && !strcmp(argv[1], gipc::ROLE_ARG)) {
        return gipc::child_main(argc, argv);
    }

    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
