/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_TEST_GT_IPC_MSG_H_
#define GAUDI_TEST_GT_IPC_MSG_H_

/*
 * gaudi_ipc's fd-server protocol (gaudi_ipc_proto.h) spoken raw over the
 * sockets of gt_sock.h, as a client of our uid or an attacker would.
 */

#include "gt_sock.h"

#include <uct/gaudi/ipc/gaudi_ipc_proto.h>


namespace gaudi_test {

/* The name of fd server @a id's entry in a rendezvous directory: its
 * requests' socket, or with @a rev its revocations' */
std::string ipc_entry_name(const uct_gaudi_ipc_srv_id_t &id, bool rev = false);

/* A request @a op of export @a rk, from the process whose fd server is
 * @a sender, with our pid */
uct_gaudi_ipc_msg_t ipc_request(uint32_t op, const uct_gaudi_ipc_rkey_t &rk,
                                const uct_gaudi_ipc_srv_id_t &sender);

/* Where ipc_call() stopped */
enum ipc_stage {
    IPC_REPLY,     /* an answer of the protocol's size came */
    IPC_CONNECT,   /* cannot connect (errno) */
    IPC_SEND,      /* cannot send (errno) */
    IPC_TIMEOUT,   /* nothing came in time */
    IPC_CLOSED,    /* closed without an answer */
    IPC_SHORT,     /* an answer of another size (or a receive error) */
    IPC_STAGE_LAST
};

const char *ipc_stage_name(int stage);

/*
 * Send @a req to the fd server at @a path on a new connection and wait up
 * to @a timeout s for its answer: *reply, with the descriptors it carried
 * appended to *fds (the caller closes them). With @a wait_close, wait as
 * long again for the server to close the connection after its answer (it
 * closes its copy of a descriptor first). Returns an ipc_stage.
 */
int ipc_call(const std::string &path, const uct_gaudi_ipc_msg_t &req,
             double timeout, uct_gaudi_ipc_msg_t *reply, std::vector<int> *fds,
             bool wait_close = false);

} /* namespace gaudi_test */

#endif
