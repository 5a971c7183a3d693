/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "gt_ipc_msg.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


namespace gaudi_test {

std::string ipc_entry_name(const uct_gaudi_ipc_srv_id_t &id, bool rev)
{
    char name[64];

    snprintf(name, sizeof(name), "%016llx%016llx%s",
             (unsigned long long)id.hi, (unsigned long long)id.lo,
             rev ? UCT_GAUDI_IPC_REV_SUFFIX : "");
    return name;
}

uct_gaudi_ipc_msg_t ipc_request(uint32_t op, const uct_gaudi_ipc_rkey_t &rk,
                                const uct_gaudi_ipc_srv_id_t &sender)
{
    uct_gaudi_ipc_msg_t msg;

    memset(&msg, 0, sizeof(msg));
    msg.magic     = UCT_GAUDI_IPC_MSG_MAGIC;
    msg.op        = op;
    msg.export_id = rk.export_id;
    msg.cookie    = rk.cookie;
    msg.sender    = sender;
    msg.pid       = getpid();
    return msg;
}

const char *ipc_stage_name(int stage)
{
    static const char *names[] = {"reply", "connect", "send", "timeout",
                                  "closed without reply",
                                  "reply of another size"};

    return ((stage >= 0) && (stage < IPC_STAGE_LAST)) ? names[stage] : "?";
}

/* Wait up to @a timeout s for @a sock to be readable (or closed) */
static bool wait_readable(int sock, double timeout)
{
    struct pollfd pfd = {sock, POLLIN, 0};

    return poll(&pfd, 1, (int)(timeout * 1000)) == 1;
}

int ipc_call(const std::string &path, const uct_gaudi_ipc_msg_t &req,
             double timeout, uct_gaudi_ipc_msg_t *reply, std::vector<int> *fds,
             bool wait_close)
{
    /* more than an answer: a longer one shows */
    uint8_t buf[sizeof(*reply) + 64];
    ssize_t len;
    int sock, stage, saved_errno;
    char c;

    sock = connect_unix(path, SOCK_SEQPACKET, false);
    if (sock < 0) {
        return IPC_CONNECT;
    }

    if (send(sock, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req)) {
        stage = IPC_SEND;
    } else if (!wait_readable(sock, timeout)) {
        stage = IPC_TIMEOUT;
    } else {
        len   = recv_fds(sock, buf, sizeof(buf), fds);
        stage = (len == 0) ? IPC_CLOSED :
                (len != (ssize_t)sizeof(*reply)) ? IPC_SHORT : IPC_REPLY;
        if (stage == IPC_REPLY) {
            memcpy(reply, buf, sizeof(*reply));
            if (wait_close && wait_readable(sock, timeout)) {
                (void)recv(sock, &c, sizeof(c), MSG_DONTWAIT);
            }
        }
    }

    saved_errno = errno;
    close(sock);
    errno = saved_errno;
    return stage;
}

} /* namespace gaudi_test */
