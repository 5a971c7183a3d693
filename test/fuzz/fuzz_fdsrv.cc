/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * Target "fdsrv": the messages of gaudi_ipc's fd server
 * (gaudi_ipc_proto.h), which any process of our uid can send. The worker is
 * a raw client of a live exporter's server (fuzz_ipc.h), in the exporter's
 * rendezvous directory, where it has a revocation socket of its own (which
 * it never serves) so that it may fetch fds: for each iteration one
 * connection to the requests' socket (or, one time in eight, to the
 * revocations' one), and on it a request built from a valid GET_FD or
 * REVOKE (the exporter's real export ids and cookies, our identity), the
 * corpus (test/fuzz/corpus/fdsrv/, hex), field values at their limits and
 * byte mutations that change its length; sent plainly, with 1..6
 * descriptors (SCM_RIGHTS), with credentials (SCM_CREDENTIALS), twice, or
 * not at all (connect and close, shut down, or left idle: up to 80 at once,
 * beyond the server's share of 4 silent connections per process).
 *
 * Checks: the exporter never dies; each connection is answered or closed
 * in time; a malformed request (not exactly one 48-byte message with the
 * magic, or carrying ancillary data) is never answered; an answer repeats
 * the request's op and export id; at the requests' socket it says UCS_OK
 * only for a GET_FD of a live export with its cookie from our identity,
 * and then carries exactly one descriptor (none otherwise), and refuses
 * every REVOKE; at the revocations' socket it refuses every GET_FD. After
 * the loop a valid GET_FD still gets its DMA-BUF, and the exporter's fds
 * and emulator accounting return to their values before the loop, taken
 * after a valid GET_FD of each export (gaudi_ipc makes an export's DMA-BUF
 * at its first request; idle connections expire after its
 * UCX_GAUDI_IPC_TIMEOUT of 0.5 s).
 */

#include "fuzz_ipc.h"

extern "C" {
#include <ucs/type/status.h>
}

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <deque>


using namespace gaudi_fuzz;

namespace {

const char *const TARGET = "fdsrv";

/* The exporter's request deadline: idle connections go after 1.25 times
 * it (its timer runs every quarter) */
const char *const IPC_TIMEOUT = "0.5s";

const unsigned MAX_IDLE = 80;

/* How long one answer may take: the server answers from its async thread
 * at once; a connection it has not accepted waits in the backlog */
const double ANSWER_TIMEOUT = 5.0;


enum delivery {
    SEND_PLAIN,
    SEND_FDS,
    SEND_CREDS,
    SEND_TWICE,
    CONNECT_CLOSE,
    CONNECT_SHUTDOWN,
    CONNECT_IDLE,
    CLOSE_IDLE,
    DELIVERY_LAST
};

struct msg_field {
    size_t   offset;
    unsigned width;
};

const msg_field msg_fields[] = {
    {offsetof(uct_gaudi_ipc_msg_t, magic), 4},
    {offsetof(uct_gaudi_ipc_msg_t, op), 4},
    {offsetof(uct_gaudi_ipc_msg_t, export_id), 8},
    {offsetof(uct_gaudi_ipc_msg_t, cookie), 8},
    {offsetof(uct_gaudi_ipc_msg_t, sender.hi), 8},
    {offsetof(uct_gaudi_ipc_msg_t, sender.lo), 8},
    {offsetof(uct_gaudi_ipc_msg_t, pid), 4},
    {offsetof(uct_gaudi_ipc_msg_t, status), 4}
};


class fdsrv_fuzzer {
public:
    explicit fdsrv_fuzzer(worker &w) : m_w(w), m_id(), m_rev_fd(-1) {}
    void run();

private:
    bytes make_request(rng &r);
    void deliver(rng &r, uint64_t iteration, const bytes &msg);
    bool send_msg(int sock, const bytes &msg, int num_fds, bool creds);
    void check_answer(uint64_t iteration, int sock, const bytes &msg,
                      bool well_formed, bool rev, const char *how);
    bool is_live(uint64_t export_id, uint64_t cookie) const;
    bool valid_get_fd(std::string *why, unsigned key_index = 0);

    worker                 &m_w;
    exporter               m_exp;
    std::vector<bytes>     m_corpus;
    uct_gaudi_ipc_srv_id_t m_id;        /* ours, with a revocation socket */
    int                    m_rev_fd;    /* that socket */
    std::deque<int>        m_idle;
    int                    m_extra[3];  /* descriptors to attach */
};


bool fdsrv_fuzzer::is_live(uint64_t export_id, uint64_t cookie) const
{
    for (const uct_gaudi_ipc_rkey_t &key : m_exp.keys()) {
        if ((key.export_id == export_id) && (key.cookie == cookie)) {
            return true;
        }
    }
    return false;
}

bytes fdsrv_fuzzer::make_request(rng &r)
{
    const uct_gaudi_ipc_rkey_t &key = r.pick(m_exp.keys());
    uct_gaudi_ipc_msg_t msg;
    unsigned i, n;
    uint64_t value;
    bytes b;

    msg = gaudi_test::ipc_request(r.chance(3, 4) ? UCT_GAUDI_IPC_MSG_GET_FD :
                                                   UCT_GAUDI_IPC_MSG_REVOKE,
                                  key, m_id);

    if (!m_corpus.empty() && r.chance(1, 4)) {
        b = r.pick(m_corpus);
        if (r.chance(1, 2) && (b.size() >= sizeof(msg))) {
            /* the seed's shape with the live identity */
            memcpy(&b[offsetof(uct_gaudi_ipc_msg_t, export_id)],
                   &msg.export_id, 16);
        }
    } else {
        b.assign((uint8_t*)&msg, (uint8_t*)&msg + sizeof(msg));
    }
    if (r.chance(1, 8)) {   /* an importer without a revocation socket */
        msg.sender.lo ^= 1 + r.below(1000);
        if (b.size() >= sizeof(msg)) {
            memcpy(&b[offsetof(uct_gaudi_ipc_msg_t, sender)], &msg.sender,
                   sizeof(msg.sender));
        }
    }

    switch (r.below(4)) {
    case 0:
        return b;   /* as it is: valid requests must keep working */
    case 1:
    case 2: /* fields at their limits, or from another key */
        for (n = 1 + (unsigned)r.below(3); n > 0; --n) {
            const msg_field &f = msg_fields[r.below(sizeof(msg_fields) /
                                                    sizeof(msg_fields[0]))];
            if (b.size() < f.offset + f.width) {
                break;
            }
            value = r.chance(1, 3) ? interesting(r, f.width) :
                    r.chance(1, 2) ? r.next() :
                    (f.offset == offsetof(uct_gaudi_ipc_msg_t, op)) ?
                    r.below(4) : r.pick(m_exp.keys()).export_id + r.below(3);
            memcpy(&b[f.offset], &value, f.width);
        }
        return b;
    default:
        mutate_bytes(r, b, 128, m_corpus);
        for (i = 0; (i < 2) && r.chance(1, 8); ++i) {
            b.resize(r.below(2) ? 0 : 49 + r.below(80), (uint8_t)r.next());
        }
        return b;
    }
}

bool fdsrv_fuzzer::send_msg(int sock, const bytes &msg, int num_fds,
                            bool creds)
{
    int fds[8] = {}, i;

    for (i = 0; i < num_fds; ++i) {
        fds[i] = (i < 3) ? m_extra[i] : sock;
    }
    return gaudi_test::send_fds(sock, msg.data(), msg.size(), fds, num_fds,
                                creds) >= 0;
}

/* The answer to @a msg on @a sock, or its close, and what it may be */
void fdsrv_fuzzer::check_answer(uint64_t iteration, int sock,
                                const bytes &msg, bool well_formed, bool rev,
                                const char *how)
{
    uct_gaudi_ipc_msg_t req, reply;
    uint8_t buf[256];   /* more than an answer: a longer one shows */
    std::vector<int> fds;
    struct pollfd pfd = {sock, POLLIN, 0};
    ssize_t len;

    if (poll(&pfd, 1, (int)(ANSWER_TIMEOUT * 1000)) != 1) {
        m_w.fail("no answer and no close within %.0f s (the server is "
                 "stuck?)", ANSWER_TIMEOUT);
        return;
    }

    len = gaudi_test::recv_fds(sock, buf, sizeof(buf), &fds, MSG_DONTWAIT);

    if (len <= 0) {
        /* closed unanswered: what a malformed request gets (a valid one
         * too, when the server had too many pending connections) */
        if (well_formed && (m_idle.size() < 60) &&
            !((len < 0) && (errno == ECONNRESET) && !strcmp(how, "twice"))) {
            /* (twice: the server closes with the second request unread,
             * and the kernel reports that as ECONNRESET before the
             * answer) */
            m_w.fail("a well-formed request (%s, sent %s) was closed "
                     "unanswered", hex(msg.data(), msg.size()).c_str(), how);
        }
        m_w.count("closed");
    } else if (!well_formed) {
        m_w.fail("a malformed request of %zu bytes (sent %s) was answered "
                 "(%zd bytes, %zu fds): %s", msg.size(), how, len,
                 fds.size(), hex(msg.data(), msg.size()).c_str());
    } else if (len != sizeof(reply)) {
        m_w.fail("an answer of %zd bytes", len);
    } else {
        memcpy(&req, msg.data(), sizeof(req));
        memcpy(&reply, buf, sizeof(reply));
        if ((reply.magic != UCT_GAUDI_IPC_MSG_MAGIC) || (reply.op != req.op) ||
            (reply.export_id != req.export_id)) {
            m_w.fail("the answer does not match the request");
        } else if (!rev && (reply.status == UCS_OK) &&
                   ((req.op != UCT_GAUDI_IPC_MSG_GET_FD) ||
                    !is_live(req.export_id, req.cookie) ||
                    (req.sender.hi != m_id.hi) || (req.sender.lo != m_id.lo))) {
            m_w.fail("UCS_OK at the requests' socket for op %u export %llu: "
                     "no such export or cookie, or an importer that could "
                     "not be revoked", req.op,
                     (unsigned long long)req.export_id);
        } else if (rev && (reply.status == UCS_OK) &&
                   (req.op != UCT_GAUDI_IPC_MSG_REVOKE)) {
            m_w.fail("UCS_OK at the revocations' socket for op %u", req.op);
        } else if ((reply.status == UCS_OK) &&
                   (req.op == UCT_GAUDI_IPC_MSG_GET_FD) && (fds.size() != 1)) {
            m_w.fail("GET_FD answered UCS_OK with %zu descriptors",
                     fds.size());
        } else if ((reply.status != UCS_OK) && !fds.empty()) {
            m_w.fail("a refusal (%d) came with %zu descriptors",
                     reply.status, fds.size());
        }
        m_w.count((reply.status == UCS_OK) ? "answered_ok" : "refused");
    }

    gaudi_test::close_fds(&fds);
}

void fdsrv_fuzzer::deliver(rng &r, uint64_t iteration, const bytes &msg)
{
    delivery how = (delivery)r.below(DELIVERY_LAST);
    bool rev     = r.chance(1, 8);
    double deadline;
    bool well_formed;
    uint32_t magic;
    int sock, num_fds = 0;

    if (how == CLOSE_IDLE) {
        for (unsigned n = (unsigned)r.below(20); (n > 0) && !m_idle.empty();
             --n) {
            close(m_idle.front());
            m_idle.pop_front();
        }
        return;
    }

    /* non-blocking: with the backlog full a blocking connect would wait
     * for the server, and a stuck server would hang us, not fail */
    deadline = now() + ANSWER_TIMEOUT;
    while ((sock = connect_unix(m_exp.server_path(rev), SOCK_SEQPACKET,
                                true)) < 0) {
        if ((errno != EAGAIN) || (now() > deadline)) {
            m_w.fail("cannot connect to the fd server: %s", strerror(errno));
            return;
        }
        usleep(1000);
        m_w.alive();
    }
    fcntl(sock, F_SETFL, 0);

    switch (how) {
    case CONNECT_CLOSE:
        close(sock);
        return;
    case CONNECT_SHUTDOWN:
        shutdown(sock, SHUT_WR);
        check_answer(iteration, sock, msg, false, rev, "after a shutdown");
        close(sock);
        return;
    case CONNECT_IDLE:
        m_idle.push_back(sock);
        if (m_idle.size() > MAX_IDLE) {
            close(m_idle.front());
            m_idle.pop_front();
        }
        return;
    default:
        break;
    }

    memcpy(&magic, msg.data(), std::min<size_t>(msg.size(), 4));
    num_fds     = (how == SEND_FDS) ? 1 + (int)r.below(6) : 0;
    /* credentials are not descriptors: a socket without SO_PASSCRED gets
     * none, and the kernel vouches for them anyway */
    well_formed = (msg.size() == sizeof(uct_gaudi_ipc_msg_t)) &&
                  (magic == UCT_GAUDI_IPC_MSG_MAGIC) && (num_fds == 0);
    if (!send_msg(sock, msg, num_fds, how == SEND_CREDS)) {
        close(sock);
        return;
    }
    if (how == SEND_TWICE) {
        send_msg(sock, msg, 0, false);
    }
    check_answer(iteration, sock, msg, well_formed, rev,
                 (how == SEND_FDS) ? "with descriptors" :
                 (how == SEND_CREDS) ? "with credentials" :
                 (how == SEND_TWICE) ? "twice" : "plainly");
    close(sock);
}

/* A plain GET_FD of a live export gets its DMA-BUF */
bool fdsrv_fuzzer::valid_get_fd(std::string *why, unsigned key_index)
{
    const uct_gaudi_ipc_rkey_t &key = m_exp.keys()[key_index];
    uct_gaudi_ipc_msg_t reply;
    std::vector<int> fds;
    struct stat st;
    bool ok;
    int stage;

    /* the server closes its copy of the fd and then the connection after
     * answering: wait for that end-of-file, or a baseline taken right after
     * this call holds both (a loaded machine's fresh root did: "gone:
     * socket, dmabuf") */
    stage = gaudi_test::ipc_call(
            m_exp.server_path(),
            gaudi_test::ipc_request(UCT_GAUDI_IPC_MSG_GET_FD, key, m_id), 5.0,
            &reply, &fds, true);
    ok    = (stage == gaudi_test::IPC_REPLY) && (reply.status == UCS_OK) &&
            !fds.empty() && (fstat(fds[0], &st) == 0) && S_ISFIFO(st.st_mode);
    if (!ok) {
        *why = std::string(gaudi_test::ipc_stage_name(stage)) + " (" +
               strerror(errno) + "), status " +
               std::to_string((stage == gaudi_test::IPC_REPLY) ?
                              reply.status : 0) +
               ", " + std::to_string(fds.size()) + " fds";
    }
    gaudi_test::close_fds(&fds);
    return ok;
}

void fdsrv_fuzzer::run()
{
    gaudi_test::temp_dir dir("gaudi-fuzz-fdsrv");
    const std::string &state = dir.path();
    uint64_t i, last_alive = 0;
    std::string err;
    int status;

    for (const hex_seed &seed : load_hex_corpus(TARGET)) {
        m_corpus.push_back(seed.field(""));
    }
    m_extra[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    m_extra[1] = eventfd(0, EFD_CLOEXEC);
    m_extra[2] = open(state.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (!m_exp.start(state, IPC_TIMEOUT, &err)) {
        m_w.fail("%s", err.c_str());
        return;
    }
    /* our revocation socket: GET_FD is granted only to an importer that a
     * revocation can reach */
    m_id     = {0xf022f022f022f022ull, (uint64_t)getpid()};
    m_rev_fd = listen_unix(ipc_dir_of(state) + "/" +
                           ipc_entry_name(m_id, true));
    if (m_rev_fd < 0) {
        m_w.fail("cannot listen in %s: %s", ipc_dir_of(state).c_str(),
                 strerror(errno));
    }
    m_w.summary("%zu corpus seeds, exporter pid %d", m_corpus.size(),
                m_exp.pid());

    /* the exporter makes an export's DMA-BUF at the first GET_FD and holds
     * it from then on: the loop's leak check starts from there (keys 0 and
     * 1 share allocation A's export, key 2 is B's) */
    if (!valid_get_fd(&err, 0) || !valid_get_fd(&err, 2) ||
        !m_exp.rebaseline(&err)) {
        m_w.fail("a valid GET_FD before the loop failed: %s", err.c_str());
    }

    for (i = m_w.first(); m_w.more(i); ++i) {
        rng r     = iteration_rng(TARGET, i);
        bytes msg = make_request(r);

        m_w.begin(i, msg.data(), msg.size());
        deliver(r, i, msg);
        if (!m_exp.alive(&status)) {
            m_w.fail("the exporter (fd server) died: %s %d, between "
                     "iterations %llu and %llu",
                     WIFSIGNALED(status) ? "signal" : "exit code",
                     WIFSIGNALED(status) ? WTERMSIG(status) :
                     WEXITSTATUS(status), (unsigned long long)last_alive,
                     (unsigned long long)i);
            break;
        }
        last_alive = i;
    }

    while (!m_idle.empty()) {
        close(m_idle.front());
        m_idle.pop_front();
    }

    if (m_exp.alive(&status)) {
        if (!valid_get_fd(&err)) {
            m_w.fail("after the loop a valid GET_FD failed: %s", err.c_str());
        }
        /* idle connections expire within 1.25 x 0.5 s */
        if (!m_exp.check_leaks(3.0, &err)) {
            m_w.fail("the exporter leaked: %s", err.c_str());
        }
    }
    m_exp.stop();
    if (m_rev_fd >= 0) {
        close(m_rev_fd);
    }
    for (int fd : m_extra) {
        close(fd);
    }
}

} /* namespace */


TEST(gaudi_fuzz, fdsrv)
{
    run_target(TARGET, 0, 15.0, [](worker &w) {
        fdsrv_fuzzer(w).run();
    });
}
