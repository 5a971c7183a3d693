/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "fuzz_ipc.h"

extern "C" {
#include <uct/api/uct.h>
#include <uct/gaudi/drv/gaudi_buf.h>
}

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>


namespace gaudi_fuzz {

namespace {

const size_t ALLOC_SIZE = 1ul << 20;

/* One message on the command channel (SOCK_SEQPACKET) */
bool chan_send(int fd, const void *data, size_t length)
{
    return send(fd, data, length, MSG_NOSIGNAL) == (ssize_t)length;
}

/* ---- the exporter process ------------------------------------------------ */

struct export_state {
    uct_component_h          *comps     = NULL;
    unsigned                 num_comps  = 0;
    uct_md_h                 md         = NULL;
    void                     *bufs[2]   = {NULL, NULL};
    uct_mem_h                memhs[3]   = {NULL, NULL, NULL};
    emu_stats_fn_t           stats_fn   = NULL;
    std::string              state_dir;
    gaudi_test::emu_snapshot baseline;
};

bool open_ipc_md(export_state &s, std::string *err)
{
    uct_md_resource_desc_t mds[2];
    uct_component_attr_t attr;
    uct_md_config_t *config;
    unsigned i;

    if (uct_query_components(&s.comps, &s.num_comps) != UCS_OK) {
        *err = "uct_query_components failed";
        return false;
    }
    for (i = 0; i < s.num_comps; ++i) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                          UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if ((uct_component_query(s.comps[i], &attr) != UCS_OK) ||
            strcmp(attr.name, "gaudi_ipc") || (attr.md_resource_count != 1)) {
            continue;
        }
        attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        attr.md_resources = mds;
        if ((uct_component_query(s.comps[i], &attr) != UCS_OK) ||
            (uct_md_config_read(s.comps[i], NULL, NULL, &config) != UCS_OK)) {
            break;
        }
        if (uct_md_open(s.comps[i], mds[0].md_name, config, &s.md) != UCS_OK) {
            s.md = NULL;
        }
        uct_config_release(config);
        break;
    }
    if (s.md == NULL) {
        *err = "cannot open the gaudi_ipc MD (is device 1 free?)";
    }
    return s.md != NULL;
}

bool export_memory(export_state &s, std::vector<uct_gaudi_ipc_rkey_t> &keys,
                   std::string *err)
{
    static const struct {
        unsigned buf;
        size_t   offset, length;
    } regs[3] = {{0, 0, ALLOC_SIZE}, {0, 4096, 8192}, {1, 0, ALLOC_SIZE}};
    unsigned i;

    for (i = 0; i < 2; ++i) {
        if (uct_gaudi_buf_alloc(ALLOC_SIZE, &s.bufs[i]) != UCS_OK) {
            *err = "uct_gaudi_buf_alloc failed";
            return false;
        }
    }

    keys.resize(3);
    for (i = 0; i < 3; ++i) {
        if ((uct_md_mem_reg(s.md, (char*)s.bufs[regs[i].buf] + regs[i].offset,
                            regs[i].length, UCT_MD_MEM_ACCESS_ALL,
                            &s.memhs[i]) != UCS_OK) ||
            (uct_md_mkey_pack(s.md, s.memhs[i], &keys[i]) != UCS_OK)) {
            *err = "registration or mkey_pack failed";
            return false;
        }
    }
    return true;
}

bool at_baseline(const export_state &s, std::string *diff)
{
    gaudi_test::emu_snapshot cur;

    gaudi_test::take_snapshot(s.stats_fn, s.state_dir.c_str(), &cur);
    if ((cur.fds == s.baseline.fds) &&
        stats_equal(cur.emu, s.baseline.emu)) {
        return true;
    }

    *diff = "fds not at the baseline:" + fd_diff(cur.fds, s.baseline.fds) +
            "; gone:" + fd_diff(s.baseline.fds, cur.fds) + "; emulator: " +
            stats_string(cur.emu) + " (baseline " +
            stats_string(s.baseline.emu) + ")";
    return false;
}

void deregister_all(export_state &s)
{
    for (uct_mem_h &memh : s.memhs) {
        if (memh != NULL) {
            uct_md_mem_dereg(s.md, memh);
            memh = NULL;
        }
    }
}

void take_baseline(export_state &s)
{
    gaudi_test::take_snapshot(s.stats_fn, s.state_dir.c_str(), &s.baseline);
}

/* Commands: 'D' deregister, 'B' take the baseline again, 'C' <timeout>
 * leak check, 'Q' quit */
int exporter_main(int chan, const std::string &state_dir,
                  const char *ipc_timeout)
{
    std::vector<uct_gaudi_ipc_rkey_t> keys;
    export_state s;
    std::string err, diff;
    struct pollfd pfd;
    double deadline;
    char cmd[64];
    ssize_t n;

    set_emu_env(state_dir, 2, 1);
    setenv("UCX_GAUDI_IPC_TIMEOUT", ipc_timeout, 1);
    setenv("UCX_GAUDI_IPC_DIR", ipc_dir_of(state_dir).c_str(), 1);
    quiet_ucx_log();

    if (!open_ipc_md(s, &err) || !export_memory(s, keys, &err)) {
        chan_send(chan, ("E" + err).c_str(), err.size() + 1);
        return 1;
    }

    s.stats_fn  = find_emu_stats();
    s.state_dir = state_dir;
    take_baseline(s);
    chan_send(chan, keys.data(), keys.size() * sizeof(keys[0]));

    for (;;) {
        n = recv(chan, cmd, sizeof(cmd) - 1, 0);
        if (n <= 0) {
            break;      /* the worker is gone */
        }
        cmd[n] = '\0';
        if (cmd[0] == 'D') {
            deregister_all(s);
            chan_send(chan, "ok", 2);
        } else if (cmd[0] == 'B') {
            take_baseline(s);
            chan_send(chan, "ok", 2);
        } else if (cmd[0] == 'C') {
            deadline = now() + strtod(cmd + 1, NULL);
            while (!at_baseline(s, &diff) && (now() < deadline)) {
                pfd.fd     = chan;
                pfd.events = POLLIN;
                poll(&pfd, 0, 10);
            }
            if (at_baseline(s, &diff)) {
                chan_send(chan, "ok", 2);
            } else {
                chan_send(chan, diff.c_str(), diff.size());
            }
        } else {
            break;
        }
    }

    deregister_all(s);
    for (void *buf : s.bufs) {
        if (buf != NULL) {
            uct_gaudi_buf_free(buf);
        }
    }
    uct_md_close(s.md);
    uct_release_component_list(s.comps);
    return 0;
}

} /* namespace */


bool exporter::start(const std::string &state_dir, const char *ipc_timeout,
                     std::string *err)
{
    std::vector<uint8_t> buf(4096);
    struct pollfd pfd;
    int sv[2];
    ssize_t n;

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        *err = strerror(errno);
        return false;
    }

    m_dir = ipc_dir_of(state_dir);
    m_pid = gaudi_test::fork_child([&]() {
        close(sv[0]);
        return exporter_main(sv[1], state_dir, ipc_timeout);
    }, true);
    close(sv[1]);
    m_chan = sv[0];
    if (m_pid < 0) {
        *err = strerror(errno);
        return false;
    }

    pfd.fd     = m_chan;
    pfd.events = POLLIN;
    if (poll(&pfd, 1, 30000) != 1) {
        *err = "the exporter sent no keys in 30 s";
        return false;
    }
    n = recv(m_chan, buf.data(), buf.size(), 0);
    if ((n > 0) && (buf[0] == 'E')) {
        *err = "exporter: " + std::string((char*)buf.data() + 1, n - 1);
        return false;
    } else if ((n <= 0) || (n % sizeof(uct_gaudi_ipc_rkey_t))) {
        *err = "the exporter died before sending its keys";
        return false;
    }
    m_keys.resize(n / sizeof(uct_gaudi_ipc_rkey_t));
    memcpy(m_keys.data(), buf.data(), n);
    return true;
}

std::string exporter::server_path(bool rev) const
{
    return m_dir + "/" + ipc_entry_name(m_keys[0].srv.id, rev);
}

bool exporter::alive(int *status)
{
    if (m_pid <= 0) {
        return false;
    }
    if (waitpid(m_pid, status, WNOHANG) == m_pid) {
        m_pid = -1;
        return false;
    }
    return true;
}

bool exporter::command(char cmd, double timeout, std::string *reply)
{
    char buf[8192];
    struct pollfd pfd;
    std::ostringstream os;
    ssize_t n;

    os << cmd << timeout;
    if (!chan_send(m_chan, os.str().c_str(), os.str().size())) {
        *reply = "the exporter is gone";
        return false;
    }
    pfd.fd     = m_chan;
    pfd.events = POLLIN;
    if (poll(&pfd, 1, (int)((timeout + 10) * 1000)) != 1) {
        *reply = "the exporter did not answer";
        return false;
    }
    n = recv(m_chan, buf, sizeof(buf), 0);
    if (n <= 0) {
        *reply = "the exporter is gone";
        return false;
    }
    reply->assign(buf, n);
    return *reply == "ok";
}

bool exporter::deregister(std::string *report)
{
    return command('D', 0, report);
}

bool exporter::rebaseline(std::string *report)
{
    return command('B', 0, report);
}

bool exporter::check_leaks(double timeout, std::string *report)
{
    return command('C', timeout, report);
}

void exporter::stop()
{
    if (m_chan >= 0) {
        chan_send(m_chan, "Q", 1);
        close(m_chan);
        m_chan = -1;
    }
    if (m_pid > 0) {
        gaudi_test::wait_child(m_pid, 10, NULL);
        m_pid = -1;
    }
}

std::string ipc_dir_of(const std::string &state_dir)
{
    return state_dir + "/ipc";
}

} /* namespace gaudi_fuzz */
