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

#include <stdio.h>
#include <string.h>


namespace gipc {

namespace {

/* "exporter's VA repeated" of the realloc scenarios, for the report */
void print_va_repeated(const mp_test &t)
{
    printf("exporter's VA repeated: %s\n", t.result(1, "va_repeated").c_str());
}

/* Each row: a test gaudi_ipc_mp.<name>, its scenario and how it runs, and
 * what it checks beyond the children's own checks (none if not given) */
const mp_case mp_cases[] = {
    /* MD/iface attributes, addresses, reachability, rkey layout, ep_check
     * on a live peer, a put each way */
    {"attributes", run_spec("attrs")},

    /* Two processes of one host with a rendezvous directory each: not
     * reachable, said once in an info line, their keys do not unpack */
    {"directory_not_shared",
     run_spec("not_shared").with_env({"UCX_LOG_LEVEL=info"}).errors_ok(),
     [](const mp_test &t) {
         EXPECT_EQ("1", t.result(0, "not_shared_info"));
     }},

    /* 1. 1 B .. 64 MiB and odd sizes, aligned/unaligned, byte-exact with
     * the bytes around the destination untouched; device 0 initiates */
    {"put_get_sizes_dev0_to_dev1",
     run_spec("put_get").with_params({"initiator=0"})},

    /* ... and the roles swapped */
    {"put_get_sizes_dev1_to_dev0",
     run_spec("put_get").with_params({"initiator=1"})},

    /* Both processes import and export at the same time */
    {"bidirectional", run_spec("bidir")},

    /* 2. 32 exported allocations, interleaved puts and gets all in flight */
    {"many_buffers", run_spec("many")},

    /* Two generations of the out-of-tree driver: 1.24 applies the offset of
     * a DMA-BUF export, older releases export from the mapping's first page
     * (the emulator's UCX_GAUDI_EMU_OOT_VERSION, driver-abi.md 4.4). 32
     * allocations carved from one chunk, all but the first at an offset in
     * it: every byte must be right on both */
    {"many_buffers_driver_1_23",
     run_spec("many").with_env({"UCX_GAUDI_EMU_OOT_VERSION=1.23.0"})},
    {"many_buffers_driver_1_24",
     run_spec("many").with_env({"UCX_GAUDI_EMU_OOT_VERSION=1.24.1"})},
    {"put_get_sizes_driver_1_23",
     run_spec("put_get").with_params({"initiator=0"})
             .with_env({"UCX_GAUDI_EMU_OOT_VERSION=1.23.0"})},

    /* ... with a small in-flight limit: NO_RESOURCE and the pending queue */
    {"many_buffers_pending",
     run_spec("many").with_params({"pending=1"})
             .with_env({"UCX_GAUDI_IPC_MAX_INFLIGHT=4"})},

    /* 3. repeated operations on one remote buffer keep one import */
    {"cache_on",
     run_spec("cache").with_params({"cache=y"})
             .with_env({"UCX_GAUDI_IPC_CACHE=y"})},

    /* ... and without the cache every import goes once its operation is
     * done */
    {"cache_off",
     run_spec("cache").with_params({"cache=n"})
             .with_env({"UCX_GAUDI_IPC_CACHE=n"})},

    /* 4. the exporter frees and reallocates (same size); the new rkey must
     * reach the new allocation and imports must not accumulate */
    {"exporter_realloc", run_spec("realloc"), print_va_repeated},

    /* ... while the importer still holds the previous rkey */
    {"exporter_realloc_old_rkey_held",
     run_spec("realloc").with_params({"hold_old=1"}), print_va_repeated},

    /* 5. the exporter is SIGKILLed with operations in flight */
    {"peer_killed_exporter", run_spec("kill_exporter").kills(1).errors_ok()},

    /* ... the importer is SIGKILLed with operations in flight */
    {"peer_killed_importer", run_spec("kill_importer").kills(1).errors_ok()},

    /* 6. an rkey with a wrong cookie is refused */
    {"refuse_wrong_cookie",
     run_spec("bad_rkey").with_params({"field=cookie"}).errors_ok()},

    /* ... and one with a wrong export id */
    {"refuse_wrong_export_id",
     run_spec("bad_rkey").with_params({"field=export_id"}).errors_ok()},

    /* ... an operation outside the exported allocation */
    {"refuse_out_of_range", run_spec("out_of_range").errors_ok()},

    /* ... a GET_FD from a process of another uid (needs root to setuid) */
    {"refuse_foreign_uid",
     run_spec("foreign_uid").errors_ok()
             .needs_root("needs root to run a process of another uid")},

    /* An allocation is exported at a peer's first request, not at its
     * registration */
    {"export_at_first_import", run_spec("lazy_export"),
     [](const mp_test &t) {
         EXPECT_EQ("0", t.result(1, "exports_registered"));
         EXPECT_EQ("1", t.result(1, "exports_imported"));
     }},

    /* ... and a whole chunk's export, after an allocation of it went (a
     * driver before the offset handling: whole chunks are exported) */
    {"export_at_first_import_whole_chunk",
     run_spec("lazy_export_whole_chunk")
             .with_env({"UCX_GAUDI_EMU_OOT_VERSION=1.23.0"})},

    /* An allocation whose pages lie beyond the device's PCIe DRAM BAR: the
     * driver refuses its export (validate_export_params), the exporter says
     * so once, the peer stages; the allocation inside the BAR is
     * imported */
    {"export_outside_dram_bar",
     run_spec("outside_bar").with_env({"UCX_GAUDI_EMU_DRAM_BAR_SIZE=640m"})
             .errors_ok(),
     [](const mp_test &t) {
         EXPECT_EQ("1", t.result(1, "exports"));
         EXPECT_NE(std::string::npos,
                   t.output(1).find("beyond the device's PCIe DRAM BAR"))
                 << t.output(1);
         EXPECT_EQ(std::string::npos, t.output(1).find("UCX  ERROR"))
                 << t.output(1);
     }},

    /* Devices on two host bridges that forward peer DMA only below one
     * (Haswell-EP, as Linux's p2pdma whitelist says): no PCIe route, so the
     * key is unreachable, with a warning naming the two devices and why;
     * UCP would stage. Before, the import succeeded and the put's writes
     * were lost on the way, reported as success */
    {"no_pci_route",
     run_spec("pci_route").with_env({"UCX_GAUDI_EMU_PCI_TOPOLOGY=sockets"})
             .errors_ok(),
     [](const mp_test &t) {
         EXPECT_EQ(ucs_status_string(UCS_ERR_UNREACHABLE),
                   t.result(0, "unpack"));
         EXPECT_EQ("0", t.result(1, "exports"));
         EXPECT_NE(std::string::npos,
                   t.output(0).find("UCX  WARN  gaudi_ipc: gaudi"))
                 << t.output(0);
         EXPECT_NE(std::string::npos,
                   t.output(0).find("no PCIe peer-to-peer route from 0000:3"))
                 << t.output(0);
         EXPECT_NE(std::string::npos,
                   t.output(0).find("(8086:2f00) forward peer DMA only below "
                                    "one of them"))
                 << t.output(0);
         EXPECT_EQ(std::string::npos, t.output(0).find("UCX  ERROR"))
                 << t.output(0);
     }},

    /* A root port each, on a host bridge that forwards between them (Ice
     * Lake-SP): the route is found through the host bridge, the put
     * lands */
    {"pci_route_through_host_bridge",
     run_spec("pci_route").with_env({"UCX_GAUDI_EMU_PCI_TOPOLOGY=root_ports"}),
     [](const mp_test &t) {
         EXPECT_EQ(ucs_status_string(UCS_OK), t.result(0, "unpack"));
         EXPECT_EQ("1", t.result(1, "exports"));
         EXPECT_EQ("1", t.result(1, "landed"));
     }},

    /* The check turned off on a platform without the route: the import goes
     * ahead, the put reports success and the emulated platform loses its
     * writes, as such hardware would: what the check is for */
    {"no_pci_route_unchecked_loses_writes",
     run_spec("pci_route").with_env({"UCX_GAUDI_EMU_PCI_TOPOLOGY=sockets",
                                     "UCX_GAUDI_IPC_CHECK_PCI_ROUTE=n"})
             .errors_ok(),
     [](const mp_test &t) {
         EXPECT_EQ(ucs_status_string(UCS_OK), t.result(0, "unpack"));
         EXPECT_EQ("1", t.result(1, "exports"));
         EXPECT_EQ("0", t.result(1, "landed"));
     }},

    /* 7. without DMA-BUF import (upstream driver) peers are unreachable */
    {"import_unsupported",
     run_spec("no_import").with_env({"UCX_GAUDI_EMU_OOT_IMPORT=n"})
             .errors_ok()},

    /* Memory from gaudi_cpy's mem_alloc, exported and used as the local
     * side */
    {"gaudi_cpy_mem_alloc", run_spec("md_alloc").with_params({"cpy_md=1"})}
};

} /* namespace */

void register_mp_tests()
{
    register_cases("gaudi_ipc_mp", mp_cases, __FILE__);
}

} /* namespace gipc */


int main(int argc, char **argv)
{
    if ((argc > 1) && !strcmp(argv[1], gipc::ROLE_ARG)) {
        return gipc::child_main(argc, argv);
    }

    ::testing::InitGoogleTest(&argc, argv);
    gipc::register_mp_tests();
    gipc::register_attack_tests();
    return RUN_ALL_TESTS();
}
