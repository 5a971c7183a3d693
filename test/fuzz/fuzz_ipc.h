/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_TEST_FUZZ_IPC_H_
#define UCT_GAUDI_TEST_FUZZ_IPC_H_

/*
 * The peer of the gaudi_ipc targets (rkey_unpack, fdsrv): an exporter, a
 * forked process that owns device 1 of a two-device emulated node, opens
 * the gaudi_ipc MD, registers Gaudi memory (two allocations, one of them
 * also as a sub-range) and hands out the packed keys. Its fd server is what
 * the fdsrv target attacks and what the importer of the rkey target talks
 * to. Commands go over a socketpair; the exporter checks its own fds and
 * emulator accounting against its baseline on request.
 */

#include "fuzz_common.h"

#include "gt_ipc_msg.h"

extern "C" {
#include <uct/gaudi/ipc/gaudi_ipc_proto.h>
}

#include <sys/types.h>

#include <string>
#include <vector>


namespace gaudi_fuzz {

class exporter {
public:
    exporter() : m_pid(-1), m_chan(-1) {}
    ~exporter() { stop(); }

    /* Fork it on the emulated node in @a state_dir, its fd server with a
     * request deadline of @a ipc_timeout seconds; false (and *err) if it
     * did not come up with its keys */
    bool start(const std::string &state_dir, const char *ipc_timeout,
               std::string *err);

    pid_t pid() const { return m_pid; }
    /* Packed keys: [0] allocation A whole, [1] a sub-range of A,
     * [2] allocation B whole */
    const std::vector<uct_gaudi_ipc_rkey_t> &keys() const { return m_keys; }
    /* The path of the exporter's fd server: its requests' socket, or its
     * revocations' */
    std::string server_path(bool rev = false) const;

    /* Is it still running? (*status: how it ended if not) */
    bool alive(int *status);

    /* Deregister everything (its importers are revoked) */
    bool deregister(std::string *report);
    /* Take its fds and emulator accounting now as the values check_leaks
     * wants back (gaudi_ipc makes an export's DMA-BUF when a peer first
     * asks for it: after a valid GET_FD of each export) */
    bool rebaseline(std::string *report);
    /* Wait up to @a timeout s for its fds and emulator accounting to be at
     * their values after registration (or rebaseline); false with the
     * difference */
    bool check_leaks(double timeout, std::string *report);
    /* Free, close and reap it */
    void stop();

private:
    bool command(char cmd, double timeout, std::string *reply);

    pid_t                             m_pid;
    int                               m_chan;
    std::vector<uct_gaudi_ipc_rkey_t> m_keys;
    std::string                       m_dir;   /* rendezvous directory */
};

/* The rendezvous directory (UCX_GAUDI_IPC_DIR) of the processes on the
 * emulated node in @a state_dir */
std::string ipc_dir_of(const std::string &state_dir);

/* The entry name of fd server @a id (its revocations' if @a rev), and
 * sockets by path (gaudi_test: test/common/gt_ipc_msg.h) */
using gaudi_test::connect_unix;
using gaudi_test::ipc_entry_name;
using gaudi_test::listen_unix;

} /* namespace gaudi_fuzz */

#endif
