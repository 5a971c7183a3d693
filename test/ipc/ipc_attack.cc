/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * gaudi_ipc under attack: scenarios where one child (the "victim") runs
 * UCX normally and the other one drives attacker processes against it -
 * forked children, as uid nobody (setuid, we run as root) where the uid
 * matters - over the raw fd-server protocol (gaudi_ipc_proto.h). Each
 * scenario is bounded in time and ends with the victim's fds, imports and
 * mappings back at their baseline (peer::teardown()).
 */

#include "ipc_child.h"
#include "ipc_harness.h"

extern "C" {
#include <uct/gaudi/drv/gaudi_buf.h>
#include <ucs/async/async.h>
#include <ucs/sys/sys.h>
#include <ucs/time/time.h>
}

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <dirent.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>


/* gaudi_ipc_srv.h: the names a server tries */
extern "C" uint64_t (*uct_gaudi_ipc_srv_nonce_hook)(unsigned attempt);

/* gaudi_ipc_cache.h (C, UCS internals): the race window of an import */
extern "C" void (*uct_gaudi_ipc_cache_import_hook)(
        const uct_gaudi_ipc_rkey_t *key);


namespace {

using namespace gipc;

const size_t MiB       = 1ul << 20;
const int    UID_NOBODY = 65534;


/* ---- raw fd-server clients and servers ----------------------------------- */

/* The fd-server socket name of process @a pid under @a nonce */
std::string server_name(pid_t pid, uint64_t nonce)
{
    char buf[64];

    snprintf(buf, sizeof(buf), "%s%d-%016lx", UCT_GAUDI_IPC_SOCK_PREFIX,
             (int)pid, (unsigned long)nonce);
    return buf;
}

/* ... of the exporter @a rk names */
std::string server_name(const uct_gaudi_ipc_rkey_t &rk)
{
    return server_name(rk.pid, rk.srv_nonce);
}

socklen_t abstract_addr(const std::string &name, struct sockaddr_un *addr)
{
    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    memcpy(addr->sun_path + 1, name.data(),
           std::min(name.size(), sizeof(addr->sun_path) - 1));
    return offsetof(struct sockaddr_un, sun_path) + 1 + name.size();
}

/* Connected SEQPACKET socket to abstract @a name, or -1 */
int connect_name(const std::string &name)
{
    struct sockaddr_un addr;
    socklen_t len = abstract_addr(name, &addr);
    int fd;

    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if ((fd >= 0) && (connect(fd, (struct sockaddr*)&addr, len) != 0)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Listening SEQPACKET socket on abstract @a name, or -1 */
int listen_name(const std::string &name)
{
    struct sockaddr_un addr;
    socklen_t len = abstract_addr(name, &addr);
    int fd;

    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if ((fd >= 0) && ((bind(fd, (struct sockaddr*)&addr, len) != 0) ||
                      (listen(fd, 64) != 0))) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Send @a msg with @a num_fds descriptors (of /dev/null) attached */
bool send_with_fds(int sock, const uct_gaudi_ipc_msg_t &msg, int num_fds)
{
    char control[CMSG_SPACE(8 * sizeof(int))] = {0};
    struct iovec iov = {(void*)&msg, sizeof(msg)};
    int fds[8], i;
    struct cmsghdr *cmsg;
    struct msghdr hdr;
    bool ok;

    memset(&hdr, 0, sizeof(hdr));
    hdr.msg_iov    = &iov;
    hdr.msg_iovlen = 1;
    for (i = 0; i < num_fds; ++i) {
        fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    if (num_fds > 0) {
        hdr.msg_control    = control;
        hdr.msg_controllen = CMSG_SPACE(num_fds * sizeof(int));
        cmsg               = CMSG_FIRSTHDR(&hdr);
        cmsg->cmsg_level   = SOL_SOCKET;
        cmsg->cmsg_type    = SCM_RIGHTS;
        cmsg->cmsg_len     = CMSG_LEN(num_fds * sizeof(int));
        memcpy(CMSG_DATA(cmsg), fds, num_fds * sizeof(int));
    }

    ok = sendmsg(sock, &hdr, MSG_NOSIGNAL) == (ssize_t)sizeof(msg);
    for (i = 0; i < num_fds; ++i) {
        close(fds[i]);
    }
    return ok;
}

uct_gaudi_ipc_msg_t make_msg(uint32_t op, const uct_gaudi_ipc_rkey_t &rk)
{
    uct_gaudi_ipc_msg_t msg;

    memset(&msg, 0, sizeof(msg));
    msg.magic     = UCT_GAUDI_IPC_MSG_MAGIC;
    msg.op        = op;
    msg.export_id = rk.export_id;
    msg.cookie    = rk.cookie;
    msg.pid       = getpid();
    return msg;
}

/* Wait up to @a timeout s for a reply or the close of @a sock */
bool wait_answer(int sock, double timeout)
{
    struct pollfd pfd = {sock, POLLIN, 0};

    return poll(&pfd, 1, (int)(timeout * 1000)) == 1;
}

bool become(int uid)
{
    return (uid < 0) || ((setgroups(0, NULL) == 0) && (setgid(uid) == 0) &&
                         (setuid(uid) == 0));
}

/*
 * Run @a fn in a forked child as @a uid (-1: ours); it must use raw system
 * calls only (UCX's threads are not in the child). Returns fn's result, or
 * -1 if the child failed to change uid, died or exceeded @a timeout (then
 * it is killed).
 */
int run_attacker(int uid, double timeout, const std::function<int()> &fn)
{
    double deadline = now() + timeout;
    int status;
    pid_t pid;

    fflush(NULL);
    pid = fork();
    GIPC_ASSERT(pid >= 0) << strerror(errno);
    if (pid == 0) {
        _exit(become(uid) ? fn() : 255);
    }

    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            info("attacker pid %d (uid %d) killed after %.1f s", pid, uid,
                 timeout);
            return -1;
        }
        usleep(1000);
    }

    GIPC_EXPECT(!WIFEXITED(status) || (WEXITSTATUS(status) != 255))
            << "attacker could not become uid " << uid;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A forked process (as @a uid, -1: ours) that runs until it returns or is
 * killed; raw system calls only */
struct background {
    pid_t pid;

    background() : pid(-1) {}

    /* @a fn calls its argument once it is ready (start() waits for it) */
    void start(int uid, const std::function<int(std::function<void()>)> &fn)
    {
        int ready[2];
        char c = 'n';

        GIPC_ASSERT(pipe(ready) == 0);
        fflush(NULL);
        pid = fork();
        GIPC_ASSERT(pid >= 0);
        if (pid == 0) {
            close(ready[0]);
            close(CHANNEL_FD);  /* the other child must see us die */
            if (!become(uid)) {
                _exit(255);
            }
            _exit(fn([&]() {
                c = 'y';
                if (write(ready[1], &c, 1) != 1) {
                    _exit(1);
                }
            }));
        }
        close(ready[1]);
        if (read(ready[0], &c, 1) != 1) {
            int status = 0;

            waitpid(pid, &status, 0);
            pid = -1;
            GIPC_ASSERT(false) << "background process (uid " << uid
                               << ") did not start: exit status "
                               << (WIFEXITED(status) ?
                                   WEXITSTATUS(status) : -1)
                               << " (100 + errno: setup failed)";
        }
        close(ready[0]);
    }

    void stop()
    {
        if (pid > 0) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            pid = -1;
        }
    }

    ~background() { stop(); }
};

/* A process of @a uid that answers every connection to its fd-server name
 * under @a nonce with @a answer (or to @a name if not empty) */
void start_fake_server(background &bg, int uid, uint64_t nonce,
                       const std::function<void(int)> &answer,
                       const std::string &name = "")
{
    bg.start(uid, [=](std::function<void()> ready) {
        int lfd = listen_name(name.empty() ? server_name(getpid(), nonce) :
                                             name), sock;

        if (lfd < 0) {
            return 100 + errno;
        }
        ready();
        while ((sock = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
            answer(sock);
            close(sock);
        }
        return 0;
    });
}

/* The packed key of @a rr, unpacked into @a rk */
uct_gaudi_ipc_rkey_t key_of(const remote_region &rr)
{
    uct_gaudi_ipc_rkey_t rk;

    GIPC_ASSERT(rr.packed.size() == sizeof(rk));
    memcpy(&rk, rr.packed.data(), sizeof(rk));
    return rk;
}

/* Make @a rk name the fd server of process @a pid under @a nonce */
void retarget_key(uct_gaudi_ipc_rkey_t *rk, pid_t pid, uint64_t nonce)
{
    rk->pid        = pid;
    rk->srv_nonce  = nonce;
    rk->start_time = ucs_sys_get_proc_create_time(pid);
}

const uint64_t FAKE_NONCE = 0x5eedf00dcafe1234ul;

/* The victim's fd count returns to @a before (within 3 s) */
void expect_fds(peer &p, size_t before, const std::string &when)
{
    size_t after = 0;

    p.wait_for([&]() { return (after = p.fd_count()) == before; }, 3.0);
    info("fds %s: %zu (before %zu)", when.c_str(), after, before);
    result("fds_" + when, after);
    GIPC_EXPECT(after == before) << "victim's fds " << when << ": " << after
                                 << ", before the attack " << before;
}


/* ---- 1. descriptors attached to requests and replies --------------------- */

/*
 * Requests from uid nobody and from our uid, each carrying two (then three)
 * descriptors, to the exporter's fd server: it must close every descriptor
 * it did not ask for, and still serve a real import afterwards.
 */
GIPC_SCENARIO(fd_flood)
{
    const int rounds = (int)p.param_int("rounds", 300);
    std::vector<remote_region> rr;
    uct_rkey_bundle_t bundle;
    uct_gaudi_ipc_rkey_t rk;
    size_t before;
    region *buf;
    int uid;

    p.setup();
    if (p.index() == 1) {               /* victim: exporter */
        buf    = p.alloc(MiB);
        p.reg(buf);
        before = p.fd_count();
        p.send_regions({buf});
        GIPC_ASSERT(p.wait_sync(1, 60.0));
        expect_fds(p, before, "after_flood");
        p.send_sync(2);
        p.teardown();
        return;
    }

    GIPC_ASSERT(p.recv_regions(rr));
    rk = key_of(rr[0]);
    for (uid = UID_NOBODY; uid != -2; uid = (uid == UID_NOBODY) ? -1 : -2) {
        double start = now();
        int sent = run_attacker(uid, 40.0, [&]() {
            uct_gaudi_ipc_msg_t msg = make_msg(UCT_GAUDI_IPC_MSG_GET_FD, rk);
            int i, sock, count = 0;

            for (i = 0; i < rounds; ++i) {
                sock = connect_name(server_name(rk));
                if (sock < 0) {
                    continue;
                }
                count += send_with_fds(sock, msg, 2 + (i & 1));
                wait_answer(sock, 2.0);
                close(sock);
            }
            return (count == rounds) ? 0 : 1;
        });
        /* the server may close a foreign uid's connection before it sends */
        info("uid %d: %d requests with descriptors in %.2f s: %s", uid,
             rounds, now() - start, (sent == 0) ? "all sent" : "not all sent");
        GIPC_EXPECT((sent == 0) || (uid == UID_NOBODY))
                << "the requests of our uid did not reach the fd server";
    }

    p.send_sync(1);
    GIPC_ASSERT(p.wait_sync(2, 60.0));
    /* the fd server still works */
    GIPC_EXPECT_OK(p.unpack(rr[0].packed.data(), &bundle))
            << "a real import after the flood";
    p.teardown();
}

/*
 * A fake fd server (a process of ours, which a key names) answers GET_FD
 * with OK and two or three descriptors: the importer must refuse the answer
 * and close them all.
 */
GIPC_SCENARIO(fake_server_fds)
{
    std::vector<remote_region> rr;
    uct_rkey_bundle_t bundle;
    uct_gaudi_ipc_rkey_t rk;
    background fake;
    ucs_status_t status;
    size_t before;
    region *buf;
    int i;

    p.setup();
    if (p.index() == 1) {               /* the fake exporter */
        buf = p.alloc(MiB);
        p.reg(buf);
        start_fake_server(fake, -1, FAKE_NONCE, [](int sock) {
                       uct_gaudi_ipc_msg_t msg;
                       static int n = 0;

                       if (recv(sock, &msg, sizeof(msg), 0) > 0) {
                           msg.status = UCS_OK;
                           msg.pid    = getpid();
                           send_with_fds(sock, msg, 2 + (n++ & 1));
                       }
                   });
        p.send_regions({buf});
        p.send_value(fake.pid);
        GIPC_ASSERT(p.wait_sync(1, 60.0));
        fake.stop();
        p.teardown();
        return;
    }

    uint64_t fake_pid;
    GIPC_ASSERT(p.recv_regions(rr));
    GIPC_ASSERT(p.recv_value(fake_pid));
    rk = key_of(rr[0]);
    retarget_key(&rk, (pid_t)fake_pid, FAKE_NONCE);
    before = p.fd_count();
    for (i = 0; i < 20; ++i) {
        status = p.unpack(&rk, &bundle);
        GIPC_EXPECT(status != UCS_OK) << "an answer with " << (2 + (i & 1))
                                      << " descriptors was accepted";
        if (status == UCS_OK) {
            p.release(&bundle);
        }
    }
    expect_fds(p, before, "after_fake_answers");
    p.send_sync(1);
    p.teardown();
}


/* ---- 2. idle connections against the async thread ------------------------ */

/* A UCS timer on the async thread: the longest gap between its ticks */
struct ticker {
    volatile double last;
    volatile double max_gap;
    int             id;

    static void tick(int id, ucs_event_set_types_t events, void *arg)
    {
        ticker *t  = (ticker*)arg;
        double cur = now();

        t->max_gap = std::max((double)t->max_gap, cur - t->last);
        t->last    = cur;
    }

    void start()
    {
        last    = now();
        max_gap = 0;
        GIPC_ASSERT_OK(ucs_async_add_timer(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                           ucs_time_from_msec(10), tick, this,
                                           NULL, &id));
    }

    /* the longest gap since start(), including the one until now */
    double stop()
    {
        ucs_async_remove_handler(id, 1);
        return std::max((double)max_gap, now() - last);
    }
};

/* Open @a count connections to @a name and hold them, silent, for
 * @a hold seconds */
int hold_idle(const std::string &name, int count, double hold,
              std::function<void()> ready)
{
    std::vector<int> socks;
    int i;

    for (i = 0; i < count; ++i) {
        socks.push_back(connect_name(name));
    }
    ready();
    usleep((useconds_t)(hold * 1e6));
    return 0;
}

/*
 * While processes of uid nobody and of ours hold idle connections to the
 * exporter's fd server: a UCS timer of the exporter keeps ticking, the
 * importer gets its fd within its timeout, and the exporter's md close is
 * fast.
 */
GIPC_SCENARIO(idle_stall)
{
    const int conns = (int)p.param_int("conns", 16);
    std::vector<remote_region> rr;
    background foreign, ours;
    uct_rkey_bundle_t bundle;
    uct_gaudi_ipc_rkey_t rk;
    ucs_status_t status;
    double start, gap, elapsed;
    ticker tick;
    region *buf;
    op o;

    p.setup();
    p.connect();
    buf = p.alloc(MiB);
    if (p.index() == 1) {               /* victim: exporter */
        p.reg(buf);
        p.send_regions({buf});
        GIPC_ASSERT(p.wait_sync(1, 60.0));
        tick.start();
        GIPC_ASSERT(p.wait_sync(2, 60.0));
        gap = tick.stop();
        info("longest gap of a 10 ms UCS timer under attack: %.3f s", gap);
        result("timer_max_gap_ms", (uint64_t)(gap * 1000));
        GIPC_EXPECT(gap < 0.5) << "the async thread was held for " << gap
                               << " s";
        p.send_sync(3);
        start = now();
        p.teardown();
        elapsed = now() - start;
        info("teardown (md close included) under attack: %.3f s", elapsed);
        result("teardown_ms", (uint64_t)(elapsed * 1000));
        GIPC_EXPECT(elapsed < 5.0) << "teardown took " << elapsed << " s";
        return;
    }

    GIPC_ASSERT(p.recv_regions(rr));
    rk = key_of(rr[0]);
    foreign.start(UID_NOBODY, [&](std::function<void()> ready) {
        return hold_idle(server_name(rk), conns, 30.0, ready);
    });
    ours.start(-1, [&](std::function<void()> ready) {
        return hold_idle(server_name(rk), conns, 30.0, ready);
    });
    p.send_sync(1);

    start   = now();
    status  = p.unpack(rr[0].packed.data(), &bundle);
    elapsed = now() - start;
    info("import under attack: %s in %.3f s", ucs_status_string(status),
         elapsed);
    result("import_ms", (uint64_t)(elapsed * 1000));
    GIPC_EXPECT_OK(status) << "import while idle connections are held";
    GIPC_EXPECT(elapsed < 1.0) << "the import took " << elapsed << " s";
    if (status == UCS_OK) {
        p.dev_pattern(buf->address, 4096, 9);
        p.op_init(&o, true, buf->address, 4096, NULL, rr[0].address,
                  bundle.rkey);
        GIPC_EXPECT_OK(p.op_run(&o)) << "put under attack";
    }
    p.send_sync(2);
    GIPC_ASSERT(p.wait_sync(3, 60.0));
    p.teardown();
}

/* CPU seconds this process (all its threads) used so far */
static double cpu_seconds()
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/*
 * The exporter runs out of descriptors (its own doing, or a peer's) while a
 * process of uid nobody keeps connecting: the connection in the backlog
 * keeps the listening socket readable, and UCS's async thread must not spin
 * on it. Once descriptors are back, an importer gets its fd.
 */
GIPC_SCENARIO(emfile)
{
    std::vector<remote_region> rr;
    std::vector<int> filler;
    uct_rkey_bundle_t bundle;
    background foreign;
    struct rlimit rl, tight;
    ucs_status_t status;
    double cpu;
    region *buf;
    int fd;

    p.setup();
    p.connect();
    buf = p.alloc(MiB);
    if (p.index() == 1) {               /* victim: exporter */
        p.reg(buf);
        p.send_regions({buf});
        GIPC_ASSERT(getrlimit(RLIMIT_NOFILE, &rl) == 0);
        tight          = rl;
        tight.rlim_cur = p.fd_count() + 16;
        GIPC_ASSERT(setrlimit(RLIMIT_NOFILE, &tight) == 0);
        while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) {
            filler.push_back(fd);
        }
        GIPC_EXPECT(errno == EMFILE) << strerror(errno);
        p.send_sync(1);
        GIPC_ASSERT(p.wait_sync(2, 60.0));  /* connections are coming */
        cpu = cpu_seconds();
        usleep(1000000);
        cpu = cpu_seconds() - cpu;
        result("cpu_ms_at_emfile", (uint64_t)(cpu * 1000));
        GIPC_EXPECT(cpu < 0.3) << "the process used " << cpu << " s of CPU "
                               << "in 1 s of sleep while out of descriptors";
        for (int f : filler) {
            close(f);
        }
        GIPC_ASSERT(setrlimit(RLIMIT_NOFILE, &rl) == 0);
        p.send_sync(3);
        GIPC_ASSERT(p.wait_sync(4, 60.0));
        p.teardown();
        return;
    }

    GIPC_ASSERT(p.recv_regions(rr));
    GIPC_ASSERT(p.wait_sync(1, 60.0));
    foreign.start(UID_NOBODY, [&](std::function<void()> ready) {
        return hold_idle(server_name(key_of(rr[0])), 8, 5.0, ready);
    });
    p.send_sync(2);
    GIPC_ASSERT(p.wait_sync(3, 60.0));
    status = p.unpack(rr[0].packed.data(), &bundle);
    GIPC_EXPECT_OK(status) << "import once the exporter has descriptors";
    if (status == UCS_OK) {
        p.release(&bundle);
    }
    p.send_sync(4);
    p.teardown();
}

/* ---- 3, 4. squatters and fake servers ------------------------------------ */

/* The name of the fd server of @a pid before names had a random part: what
 * a squatter would take in advance */
std::string legacy_server_name(pid_t pid)
{
    return UCT_GAUDI_IPC_SOCK_PREFIX + std::to_string(pid);
}

/* A squatter of @a uid on @a name: reports each request it gets on
 * @a report_fd and answers it with OK and a descriptor of its choice */
void start_squatter(background &bg, int uid, const std::string &name,
                    int report_fd)
{
    start_fake_server(bg, uid, 0, [report_fd](int sock) {
        uct_gaudi_ipc_msg_t msg;

        if (recv(sock, &msg, sizeof(msg), 0) == (ssize_t)sizeof(msg)) {
            if (write(report_fd, "r", 1) != 1) {
                _exit(1);
            }
            msg.status = UCS_OK;
            send_with_fds(sock, msg, 1);
        }
    }, name);
}

/* Requests a squatter reported so far */
size_t squatter_requests(int report_fd)
{
    char buf[256];
    ssize_t n;
    size_t count = 0;

    while ((n = read(report_fd, buf, sizeof(buf))) > 0) {
        count += n;
    }
    return count;
}

/* Import through @a rk must fail and reach no squatter */
void expect_import_refused(peer &p, const uct_gaudi_ipc_rkey_t &rk,
                           int report_fd, const std::string &what)
{
    uct_rkey_bundle_t bundle;
    ucs_status_t status;
    size_t before = p.fd_count(), requests;

    status   = p.unpack(&rk, &bundle);
    requests = squatter_requests(report_fd);
    info("%s: import %s, %zu request(s) reached the squatter", what.c_str(),
         ucs_status_string(status), requests);
    GIPC_EXPECT(status != UCS_OK) << what << ": the import succeeded";
    GIPC_EXPECT(requests == 0) << what << ": the squatter got " << requests
                               << " request(s) (export id and cookie)";
    if (status == UCS_OK) {
        p.release(&bundle);
    }
    expect_fds(p, before, "after_squatter");
}

/* Exporter (index 1) and importer (index 0) do a put and check it */
void put_and_check(peer &p)
{
    std::vector<remote_region> rr;
    uct_rkey_bundle_t bundle;
    region *buf;
    op o;

    buf = p.alloc(MiB);
    if (p.index() == 1) {
        p.reg(buf);
        p.dev_memset(buf->address, 0, MiB);
        p.send_regions({buf});
        GIPC_ASSERT(p.wait_sync(10, 60.0));
        p.dev_verify_pattern(buf->address, 4096, 31, "put");
        return;
    }

    GIPC_ASSERT(p.recv_regions(rr));
    GIPC_ASSERT_OK(p.unpack(rr[0].packed.data(), &bundle));
    p.dev_pattern(buf->address, 4096, 31);
    p.op_init(&o, true, buf->address, 4096, NULL, rr[0].address, bundle.rkey);
    GIPC_EXPECT_OK(p.op_run(&o)) << "put";
    GIPC_EXPECT_OK(p.flush_ep());
    /* the peer keeps a pointer to the bundle until it is released: not
     * past this frame */
    p.release(&bundle);
    p.send_sync(10);
}

/*
 * Before the victim (index 1) opens its MD, uid nobody binds the names
 * its fd server could take (by pid, for the next 900 pids): the victim's
 * gaudi_ipc must still work.
 */
GIPC_SCENARIO(squat_before_start)
{
    const pid_t me = getpid();
    background squatter;

    if (p.index() == 0) {
        squatter.start(UID_NOBODY, [me](std::function<void()> ready) {
            pid_t pid;

            for (pid = me + 1; pid <= me + 900; ++pid) {
                listen_name(legacy_server_name(pid));
            }
            ready();
            pause();
            return 0;
        });
        p.send_sync(1);
    } else {
        GIPC_ASSERT(p.wait_sync(1, 60.0));
    }

    p.setup();      /* index 1: opens its MD among the squatted names */
    if (p.index() == 0) {
        info("victim pid %d, squatted pids %d..%d", p.peer_pid(), me + 1,
             me + 900);
        GIPC_EXPECT((p.peer_pid() > me) && (p.peer_pid() <= me + 900))
                << "the victim's pid " << p.peer_pid() << " was not squatted";
    }
    p.connect();
    put_and_check(p);
    p.teardown();
}

/* The names the victim's server will try, in order (squat_next_names) */
static uint64_t squatted_nonce(unsigned attempt)
{
    return 0x5157000000000000ull + attempt;
}

/*
 * Even an unguessable name may be taken (by chance, or by one who learned
 * it): uid nobody holds the first 3 names the victim's server will try
 * (a test hook fixes them). The server takes the 4th, says so, and the
 * peer reaches it through the key, which carries the name.
 */
GIPC_SCENARIO(squat_next_names)
{
    background squatter;

    if (p.index() == 1) {
        const pid_t me = getpid();

        uct_gaudi_ipc_srv_nonce_hook = squatted_nonce;
        squatter.start(UID_NOBODY, [me](std::function<void()> ready) {
            for (unsigned k = 0; k < 3; ++k) {
                if (listen_name(server_name(me, squatted_nonce(k))) < 0) {
                    return 1;
                }
            }
            ready();
            pause();
            return 0;
        });
    }

    p.setup();      /* index 1: its server binds the 4th name */
    p.connect();
    put_and_check(p);
    p.teardown();
}

/*
 * A key names a process that has exited; uid nobody, then our uid, binds
 * the name the key names: the importer must not send them the export id
 * and cookie, nor take a descriptor from them.
 */
GIPC_SCENARIO(squat_after_exit)
{
    std::vector<remote_region> rr;
    uct_gaudi_ipc_rkey_t rk;
    int report[2], uid;
    pid_t dead;
    region *buf;

    p.setup();
    if (p.index() == 1) {
        buf = p.alloc(MiB);
        p.reg(buf);
        p.send_regions({buf});
        GIPC_ASSERT(p.wait_sync(1, 60.0));
        p.teardown();
        return;
    }

    GIPC_ASSERT(p.recv_regions(rr));
    GIPC_ASSERT(pipe2(report, O_NONBLOCK | O_CLOEXEC) == 0);
    for (uid = UID_NOBODY; uid != -2; uid = (uid == UID_NOBODY) ? -1 : -2) {
        background gone, squatter, legacy;

        /* a process that had a key of its memory out, and exited */
        gone.start(-1, [](std::function<void()> ready) {
            ready();
            pause();
            return 0;
        });
        dead = gone.pid;
        rk   = key_of(rr[0]);
        retarget_key(&rk, dead, rk.srv_nonce);
        gone.stop();

        start_squatter(squatter, uid, server_name(rk), report[1]);
        start_squatter(legacy, uid, legacy_server_name(dead), report[1]);
        expect_import_refused(p, rk, report[0],
                              "key of an exited pid, name squatted by uid " +
                              std::to_string(uid));
    }
    close(report[0]);
    close(report[1]);
    p.send_sync(1);
    p.teardown();
}

/*
 * uid nobody listens on a name a key names for the live victim (as if it
 * had learnt it): the importer sees that the server is not the victim and
 * sends nothing.
 */
GIPC_SCENARIO(fake_server_foreign)
{
    std::vector<remote_region> rr;
    background squatter;
    uct_gaudi_ipc_rkey_t rk;
    int report[2];
    region *buf;

    p.setup();
    if (p.index() == 1) {
        buf = p.alloc(MiB);
        p.reg(buf);
        p.send_regions({buf});
        GIPC_ASSERT(p.wait_sync(1, 60.0));
        p.teardown();
        return;
    }

    GIPC_ASSERT(p.recv_regions(rr));
    GIPC_ASSERT(pipe2(report, O_NONBLOCK | O_CLOEXEC) == 0);
    rk = key_of(rr[0]);
    rk.srv_nonce = FAKE_NONCE;
    start_squatter(squatter, UID_NOBODY, server_name(rk), report[1]);
    expect_import_refused(p, rk, report[0],
                          "name of the live victim served by uid nobody");
    close(report[0]);
    close(report[1]);
    p.send_sync(1);
    p.teardown();
}


/* ---- 5. a free racing an import ------------------------------------------ */

peer *g_race_peer = NULL;

/* Between the importer's GET_FD and its cache insert: the exporter frees
 * the memory (and revokes it) now */
void race_hook(const uct_gaudi_ipc_rkey_t *key)
{
    g_race_peer->send_sync(1);
    GIPC_ASSERT(g_race_peer->wait_sync(2, 60.0));
    usleep(500000);     /* the REVOKE reaches our async thread meanwhile */
}

/*
 * The exporter frees its memory while the importer holds the descriptor
 * but has not yet kept the import: the importer must not keep a mapping of
 * the freed memory.
 */
GIPC_SCENARIO(free_import_race)
{
    std::vector<remote_region> rr;
    uct_rkey_bundle_t bundle;
    ucs_status_t status;
    region *buf;

    p.setup();
    if (p.index() == 1) {
        buf = p.alloc(MiB);
        p.reg(buf);
        p.send_regions({buf});
        GIPC_ASSERT(p.wait_sync(1, 60.0));
        p.free(buf);
        p.send_sync(2);
        p.teardown();
        return;
    }

    GIPC_ASSERT(p.recv_regions(rr));
    g_race_peer                     = &p;
    uct_gaudi_ipc_cache_import_hook = race_hook;
    status = p.unpack(rr[0].packed.data(), &bundle);
    uct_gaudi_ipc_cache_import_hook = NULL;
    info("import racing the free: %s, %u import(s)", ucs_status_string(status),
         p.emu_stats().import_maps);
    result("race_unpack", ucs_status_string(status));
    GIPC_EXPECT(status != UCS_OK)
            << "the import of memory freed (and revoked) meanwhile was kept";
    GIPC_EXPECT(p.emu_stats().import_maps == p.baseline().emu.import_maps)
            << "a mapping of the freed memory remains";
    if (status == UCS_OK) {
        p.release(&bundle);
    }
    p.teardown();
}


/* ---- 7. a key of a sub-range --------------------------------------------- */

/*
 * The exporter registers 4 KiB in the middle of a 4 MiB allocation: the
 * importer may put there, and nowhere else of the allocation.
 */
GIPC_SCENARIO(subrange)
{
    const size_t len = 4 * MiB, off = MiB, size = 4096;
    const uint8_t bg = 0xa5;
    struct {
        const char *name;
        int64_t    offset;
        size_t     size;
        bool       is_put;
    } cases[] = {{"put at the allocation start", -(int64_t)off, 16, true},
                 {"get at the allocation start", -(int64_t)off, 16, false},
                 {"put across the range end", (int64_t)size - 8, 16, true},
                 {"put after the range", (int64_t)size, 4096, true},
                 {"get before the range", -4096, 4096, false},
                 {"put of the whole allocation", -(int64_t)off, len, true}};
    std::vector<remote_region> rr;
    uct_rkey_bundle_t bundle;
    ucs_status_t status;
    region *buf, sub;
    size_t i;
    op o;

    p.setup();
    p.connect();
    buf = p.alloc(len);
    if (p.index() == 1) {
        p.dev_memset(buf->address, bg, len);
        sub         = *buf;
        sub.address = (uint8_t*)buf->address + off;
        sub.length  = size;
        sub.memh    = NULL;
        p.reg(&sub);
        p.send_regions({&sub});
        GIPC_ASSERT(p.wait_sync(1, 60.0));
        p.dev_verify_fill(buf->address, off, bg, "before the range");
        p.dev_verify_pattern(sub.address, size, 5, "the range");
        p.dev_verify_fill((uint8_t*)sub.address + size, len - off - size, bg,
                          "after the range");
        p.dereg(&sub);
        p.send_sync(2);
        p.teardown();
        return;
    }

    GIPC_ASSERT(p.recv_regions(rr));
    GIPC_ASSERT_OK(p.unpack(rr[0].packed.data(), &bundle));
    p.dev_pattern(buf->address, len, 5);
    p.op_init(&o, true, buf->address, size, NULL, rr[0].address, bundle.rkey);
    GIPC_EXPECT_OK(p.op_run(&o)) << "put inside the registered range";
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        p.op_init(&o, cases[i].is_put, buf->address, cases[i].size, NULL,
                  rr[0].address + cases[i].offset, bundle.rkey);
        status = p.op_run(&o, 10.0);
        info("%s: %s", cases[i].name, ucs_status_string(status));
        GIPC_EXPECT(status != UCS_OK) << cases[i].name << " succeeded";
    }
    GIPC_EXPECT_OK(p.flush_ep());
    p.send_sync(1);
    GIPC_ASSERT(p.wait_sync(2, 60.0));
    p.teardown();
}


/* ---- 6. revocation of many importers, some unresponsive ------------------ */

/* Fetch the fd of @a rk as an importer serving under FAKE_NONCE (raw
 * protocol), and close it; true if it came */
bool fake_import(const uct_gaudi_ipc_rkey_t &rk)
{
    uct_gaudi_ipc_msg_t msg = make_msg(UCT_GAUDI_IPC_MSG_GET_FD, rk);
    char control[CMSG_SPACE(4 * sizeof(int))];
    struct iovec iov = {&msg, sizeof(msg)};
    struct cmsghdr *cmsg;
    struct msghdr hdr;
    bool got = false;
    int sock, fd;

    msg.nonce = FAKE_NONCE;
    sock      = connect_name(server_name(rk));
    if ((sock < 0) || !send_with_fds(sock, msg, 0) || !wait_answer(sock, 5)) {
        return false;
    }

    memset(&hdr, 0, sizeof(hdr));
    hdr.msg_iov        = &iov;
    hdr.msg_iovlen     = 1;
    hdr.msg_control    = control;
    hdr.msg_controllen = sizeof(control);
    if ((recvmsg(sock, &hdr, MSG_CMSG_CLOEXEC) == (ssize_t)sizeof(msg)) &&
        (msg.status == UCS_OK)) {
        for (cmsg = CMSG_FIRSTHDR(&hdr); cmsg != NULL;
             cmsg = CMSG_NXTHDR(&hdr, cmsg)) {
            memcpy(&fd, CMSG_DATA(cmsg), sizeof(fd));
            close(fd);
            got = true;
        }
    }
    close(sock);
    return got;
}

/*
 * 3 importers that never read their fd server's socket, then 12 that do,
 * all fetch the fd of one export (raw protocol, processes of ours); the
 * exporter frees it: the free waits for them at most one timeout (1 s) in
 * all, and every responsive importer gets the REVOKE.
 */
GIPC_SCENARIO(revoke_many)
{
    const int num_deaf = 3, num_live = 12;
    std::vector<remote_region> rr;
    background deaf[num_deaf], live[num_live];
    uct_gaudi_ipc_rkey_t rk;
    double start, elapsed;
    uint64_t free_us;
    int report[2], i;
    size_t revoked;
    region *buf;

    p.setup();
    if (p.index() == 1) {               /* victim: exporter */
        buf = p.alloc(MiB);
        p.reg(buf);
        p.send_regions({buf});
        GIPC_ASSERT(p.wait_sync(1, 60.0));
        start   = now();
        p.free(buf);
        elapsed = now() - start;
        info("free with %d importers (%d deaf): %.3f s", num_deaf + num_live,
             num_deaf, elapsed);
        p.send_value((uint64_t)(elapsed * 1e6));
        /* off the free path: the deaf importers cost a short grace, not
         * the 2 s timeout (the server's timer waits for them instead,
         * and closes their sockets by 2.5 s: the leak check sees them go) */
        GIPC_EXPECT(elapsed < 0.5) << "the free waited " << elapsed
                                   << " s for its importers (timeout 2 s)";
        p.teardown();
        return;
    }

    GIPC_ASSERT(p.recv_regions(rr));
    GIPC_ASSERT(pipe2(report, O_NONBLOCK | O_CLOEXEC) == 0);
    rk = key_of(rr[0]);
    for (i = 0; i < num_deaf + num_live; ++i) {
        bool is_deaf = i < num_deaf;
        int wfd      = report[1];

        (is_deaf ? deaf[i] : live[i - num_deaf]).start(-1,
                [=](std::function<void()> ready) {
            int lfd = listen_name(server_name(getpid(), FAKE_NONCE)), sock;
            uct_gaudi_ipc_msg_t msg;

            if ((lfd < 0) || !fake_import(rk)) {
                return 1;
            }
            ready();
            while (!is_deaf &&
                   ((sock = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0)) {
                if ((recv(sock, &msg, sizeof(msg), 0) == sizeof(msg)) &&
                    (msg.op == UCT_GAUDI_IPC_MSG_REVOKE) &&
                    (msg.export_id == rk.export_id)) {
                    if (write(wfd, "v", 1) != 1) {
                        return 1;
                    }
                    msg.status = UCS_OK;
                    send_with_fds(sock, msg, 0);
                }
                close(sock);
            }
            pause();
            return 0;
        });
    }
    p.send_sync(1);
    GIPC_ASSERT(p.recv_value(free_us));
    result("free_us", free_us);

    revoked = 0;
    p.wait_for([&]() {
        revoked += squatter_requests(report[0]);
        return revoked >= (size_t)num_live;
    }, 5.0);
    info("%zu of %d responsive importers got the REVOKE", revoked, num_live);
    GIPC_EXPECT(revoked == (size_t)num_live)
            << revoked << " of " << num_live << " importers were revoked";
    close(report[0]);
    close(report[1]);
    p.teardown();
}

/*
 * An importer of our uid that accepts every revocation and never answers;
 * the exporter frees 8 exports it imported. The frees do not wait for it,
 * and the unanswered revocations the exporter keeps are capped (2 per
 * process): not one open socket per free, which such an importer could
 * otherwise grow until the exporter has no descriptors left.
 */
/* Open sockets of this process */
static size_t socket_count()
{
    char path[300], target[64];
    struct dirent *entry;
    size_t count = 0;
    ssize_t len;
    DIR *dir;

    dir = opendir("/proc/self/fd");
    while ((dir != NULL) && ((entry = readdir(dir)) != NULL)) {
        snprintf(path, sizeof(path), "/proc/self/fd/%s", entry->d_name);
        len = readlink(path, target, sizeof(target) - 1);
        count += (len > 0) && !strncmp(target, "socket:", 7);
    }
    if (dir != NULL) {
        closedir(dir);
    }
    return count;
}

GIPC_SCENARIO(revoke_cap)
{
    const int num = 8;
    std::vector<const region*> bufs;
    std::vector<remote_region> rr;
    background hostile;
    size_t socks_before, socks_after;
    double start, elapsed;
    int i;

    p.setup();
    if (p.index() == 1) {               /* victim: exporter */
        for (i = 0; i < num; ++i) {
            region *buf = p.alloc(MiB);
            p.reg(buf);
            bufs.push_back(buf);
        }
        p.send_regions(bufs);
        GIPC_ASSERT(p.wait_sync(1, 60.0));
        socks_before = socket_count();
        start      = now();
        for (i = 0; i < num; ++i) {
            p.free(const_cast<region*>(bufs[i]));
        }
        elapsed   = now() - start;
        socks_after = socket_count();
        result("socks_before", socks_before);
        result("socks_after", socks_after);
        result("frees_us", (uint64_t)(elapsed * 1e6));
        GIPC_EXPECT(elapsed < 0.1 * num + 0.5) << "the frees waited "
                                                << elapsed << " s";
        GIPC_EXPECT(socks_after <= socks_before + 2)
                << "sockets " << socks_before << " -> " << socks_after << ": "
                << "more than 2 unanswered revocations kept for one importer";
        p.send_sync(2);
        p.teardown();
        return;
    }

    GIPC_ASSERT(p.recv_regions(rr));
    hostile.start(-1, [=](std::function<void()> ready) {
        int lfd = listen_name(server_name(getpid(), FAKE_NONCE));

        if (lfd < 0) {
            return 1;
        }
        for (const remote_region &r : rr) {
            if (!fake_import(key_of(r))) {
                return 1;
            }
        }
        ready();
        /* keeps every connection open and never answers */
        while (accept4(lfd, NULL, NULL, SOCK_CLOEXEC) >= 0) {
        }
        pause();
        return 0;
    });
    p.send_sync(1);
    GIPC_ASSERT(p.wait_sync(2, 60.0));
    p.teardown();
}


/* ---- 8. forged keys, deregistration, cache limit, configuration ---------- */

/* Imports of this process now, over its baseline */
unsigned extra_imports(peer &p)
{
    return p.emu_stats().import_maps - p.baseline().emu.import_maps;
}

/* A put of pattern @a seed through @a packed that the exporter checks */
void put_through(peer &p, const remote_region &rr, region *local,
                 uint64_t seed)
{
    uct_rkey_bundle_t bundle;
    op o;

    GIPC_ASSERT_OK(p.unpack(rr.packed.data(), &bundle)) << "unpack";
    p.dev_pattern(local->address, 4096, seed);
    p.op_init(&o, true, local->address, 4096, NULL, rr.address, bundle.rkey);
    GIPC_EXPECT_OK(p.op_run(&o)) << "put";
    GIPC_EXPECT_OK(p.flush_ep());
    p.release(&bundle);
}

/*
 * Forged keys naming a range the importer has cached (wrong cookie, export
 * id, base, length, pid, range): all refused, and the cached import of the
 * real key stays. (A wrong nonce or start time with the right identity is
 * the cached import itself; the squatter scenarios cover them on a miss.)
 */
GIPC_SCENARIO(forged_keys)
{
    std::vector<remote_region> rr;
    std::vector<std::pair<std::string, uct_gaudi_ipc_rkey_t>> forged;
    uct_rkey_bundle_t bundle;
    uct_gaudi_ipc_rkey_t rk, f;
    ucs_status_t status;
    region *buf;

    p.setup();
    p.connect();
    buf = p.alloc(MiB);
    if (p.index() == 1) {
        p.reg(buf);
        p.send_regions({buf});
        GIPC_ASSERT(p.wait_sync(1, 60.0));
        p.dev_verify_pattern(buf->address, 4096, 8, "put after the forgeries");
        p.send_sync(2);
        p.teardown();
        return;
    }

    GIPC_ASSERT(p.recv_regions(rr));
    put_through(p, rr[0], buf, 7);
    GIPC_EXPECT(extra_imports(p) == 1) << extra_imports(p);

    rk = key_of(rr[0]);
    f = rk; f.cookie ^= 1;                  forged.push_back({"cookie", f});
    f = rk; f.export_id += 1000;            forged.push_back({"export id", f});
    f = rk; f.length += 2 * MiB;            forged.push_back({"length", f});
    f = rk; f.base -= 2 * MiB; f.length += 2 * MiB;
                                            forged.push_back({"base", f});
    f = rk; f.pid = getpid();               forged.push_back({"own pid", f});
    f = rk; f.range_length = rk.length + 1; forged.push_back({"range", f});
    for (auto &fk : forged) {
        status = p.unpack(&fk.second, &bundle);
        info("key with a forged %s: %s", fk.first.c_str(),
             ucs_status_string(status));
        GIPC_EXPECT(status != UCS_OK) << "a key with a forged " << fk.first
                                      << " was accepted";
        if (status == UCS_OK) {
            p.release(&bundle);
        }
        GIPC_EXPECT(extra_imports(p) == 1)
                << "after the forged " << fk.first << ": " << extra_imports(p)
                << " imports (the real one was dropped?)";
    }

    put_through(p, rr[0], buf, 8);
    GIPC_EXPECT(extra_imports(p) == 1) << extra_imports(p);
    p.send_sync(1);
    GIPC_ASSERT(p.wait_sync(2, 60.0));
    p.teardown();
}

/*
 * The exporter deregisters memory the importer has imported (and cached):
 * the importer's mapping goes, the old key stops working, and a new
 * registration has a new identity.
 */
GIPC_SCENARIO(dereg_revokes)
{
    std::vector<remote_region> rr, rr2;
    uct_rkey_bundle_t bundle;
    uct_gaudi_ipc_rkey_t k1, k2;
    ucs_status_t status;
    region *buf;
    bool gone;

    p.setup();
    p.connect();
    buf = p.alloc(MiB);
    if (p.index() == 1) {
        p.reg(buf);
        p.send_regions({buf});
        GIPC_ASSERT(p.wait_sync(1, 60.0));
        p.dereg(buf);
        p.send_sync(2);
        GIPC_ASSERT(p.wait_sync(3, 60.0));
        p.reg(buf);
        p.send_regions({buf});
        GIPC_ASSERT(p.wait_sync(4, 60.0));
        p.dev_verify_pattern(buf->address, 4096, 12, "put with the new key");
        p.send_sync(5);
        p.teardown();
        return;
    }

    GIPC_ASSERT(p.recv_regions(rr));
    put_through(p, rr[0], buf, 11);
    GIPC_EXPECT(extra_imports(p) == 1) << extra_imports(p);
    p.send_sync(1);
    GIPC_ASSERT(p.wait_sync(2, 60.0));
    gone = p.wait_for([&]() { return extra_imports(p) == 0; }, 3.0);
    info("after the deregistration: %u import(s) left", extra_imports(p));
    GIPC_EXPECT(gone) << "the importer still maps deregistered memory";
    status = p.unpack(rr[0].packed.data(), &bundle);
    GIPC_EXPECT(status != UCS_OK) << "the key of a deregistration works";
    if (status == UCS_OK) {
        p.release(&bundle);
    }
    p.send_sync(3);

    GIPC_ASSERT(p.recv_regions(rr2));
    k1 = key_of(rr[0]);
    k2 = key_of(rr2[0]);
    GIPC_EXPECT((k1.cookie != k2.cookie) && (k1.export_id != k2.export_id))
            << "the new registration kept the old identity";
    put_through(p, rr2[0], buf, 12);
    p.send_sync(4);
    GIPC_ASSERT(p.wait_sync(5, 60.0));
    p.teardown();
}

/* With UCX_GAUDI_IPC_CACHE_MAX_ENTRIES=4: 12 exported buffers used in turn
 * keep at most 4 imports */
GIPC_SCENARIO(cache_limit)
{
    const unsigned count = 12, limit = 4;
    std::vector<const region*> regs;
    std::vector<remote_region> rr;
    unsigned i, most = 0;
    region *buf;

    p.setup();
    p.connect();
    if (p.index() == 1) {
        for (i = 0; i < count; ++i) {
            regs.push_back(p.alloc(MiB, i));
            p.reg((region*)regs.back());
        }
        p.send_regions(regs);
        GIPC_ASSERT(p.wait_sync(1, 60.0));
        for (i = 0; i < count; ++i) {
            p.dev_verify_pattern(regs[i]->address, 4096, 100 + i,
                                 "buffer " + std::to_string(i));
        }
        p.send_sync(2);
        p.teardown();
        return;
    }

    buf = p.alloc(MiB);
    GIPC_ASSERT(p.recv_regions(rr));
    for (i = 0; i < count; ++i) {
        put_through(p, rr[i], buf, 100 + i);
        most = std::max(most, extra_imports(p));
    }
    info("%u buffers, cache limit %u: at most %u imports", count, limit, most);
    result("most_imports", most);
    GIPC_EXPECT(most <= limit) << most << " imports kept, limit " << limit;
    p.send_sync(1);
    GIPC_ASSERT(p.wait_sync(2, 60.0));
    p.teardown();
}

/* Memory freed while registered, then deregistered: warned, revoked, and
 * nothing dangles */
GIPC_SCENARIO(free_registered)
{
    std::vector<remote_region> rr;
    region *buf, tmp;
    void *address;
    uct_mem_h memh;

    p.setup();
    p.connect();
    if (p.index() == 1) {
        GIPC_ASSERT_OK(uct_gaudi_buf_alloc(MiB, &address));
        GIPC_ASSERT_OK(uct_md_mem_reg(p.md(), address, MiB,
                                      UCT_MD_MEM_ACCESS_ALL, &memh));
        tmp.address = address;
        tmp.length  = MiB;
        tmp.memh    = memh;
        tmp.id      = 0;
        p.send_regions({&tmp});
        GIPC_ASSERT(p.wait_sync(1, 60.0));
        GIPC_EXPECT_OK(uct_gaudi_buf_free(address));
        GIPC_EXPECT_OK(uct_md_mem_dereg(p.md(), memh));
        p.send_sync(2);
        p.teardown();
        return;
    }

    buf = p.alloc(MiB);
    GIPC_ASSERT(p.recv_regions(rr));
    put_through(p, rr[0], buf, 3);
    p.send_sync(1);
    GIPC_ASSERT(p.wait_sync(2, 60.0));
    GIPC_EXPECT(p.wait_for([&]() { return extra_imports(p) == 0; }, 3.0))
            << "the importer still maps freed memory";
    p.teardown();
}

/* UCX_GAUDI_IPC_TIMEOUT=0 (SO_RCVTIMEO's "forever") is refused */
GIPC_SCENARIO(zero_timeout)
{
    uct_component_h *comps;
    uct_component_attr_t attr;
    uct_md_config_t *config;
    unsigned i, num;
    ucs_status_t status = UCS_ERR_NO_ELEM;
    uct_md_h md;

    GIPC_ASSERT_OK(uct_query_components(&comps, &num));
    for (i = 0; i < num; ++i) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        GIPC_ASSERT_OK(uct_component_query(comps[i], &attr));
        if (strcmp(attr.name, "gaudi_ipc")) {
            continue;
        }
        GIPC_ASSERT_OK(uct_md_config_read(comps[i], NULL, NULL, &config));
        status = uct_md_open(comps[i], "gaudi_ipc", config, &md);
        uct_config_release(config);
        if (status == UCS_OK) {
            uct_md_close(md);
        }
    }
    uct_release_component_list(comps);
    info("md open with UCX_GAUDI_IPC_TIMEOUT=0: %s",
         ucs_status_string(status));
    GIPC_EXPECT(status == UCS_ERR_INVALID_PARAM) << ucs_status_string(status);
}


} /* namespace */


namespace gipc {

class gaudi_ipc_attack : public mp_test {
protected:
    void SetUp()
    {
        mp_test::SetUp();
        if (geteuid() != 0) {
            GTEST_SKIP() << "needs root to run attackers of another uid";
        }
    }
};

/* 1. 300 requests with 2-3 descriptors each (uid nobody, then ours) */
TEST_F(gaudi_ipc_attack, descriptor_flood)
{
    run_spec spec("fd_flood");

    spec.allow_errors = true;
    spec.timeout_sec  = 120;
    run(spec);
}

/* 1. a fake server answers with extra descriptors */
TEST_F(gaudi_ipc_attack, fake_server_descriptors)
{
    run_spec spec("fake_server_fds");

    spec.allow_errors = true;
    run(spec);
}

/* 2. idle connections of uid nobody and of ours hold the fd server */
TEST_F(gaudi_ipc_attack, idle_connection_stall)
{
    run_spec spec("idle_stall");

    spec.env          = {"UCX_GAUDI_IPC_TIMEOUT=1s"};
    spec.allow_errors = true;
    spec.timeout_sec  = 120;
    run(spec);
}

/* 3. names squatted before the victim starts */
TEST_F(gaudi_ipc_attack, squat_before_start)
{
    run_spec spec("squat_before_start");

    spec.allow_errors = true;
    run(spec);
}

/* 3. the names a server tries next squatted: it takes another */
TEST_F(gaudi_ipc_attack, squat_next_names)
{
    run_spec spec("squat_next_names");

    spec.allow_errors = true;
    run(spec);
}

/* 3, 4. the name of an exited exporter squatted (uid nobody, ours) */
TEST_F(gaudi_ipc_attack, squat_after_exit)
{
    run_spec spec("squat_after_exit");

    spec.allow_errors = true;
    run(spec);
}

/* 4. a server of another uid on a name a key names */
TEST_F(gaudi_ipc_attack, fake_server_foreign_uid)
{
    run_spec spec("fake_server_foreign");

    spec.allow_errors = true;
    run(spec);
}

/* 5. the exporter frees while the importer imports */
TEST_F(gaudi_ipc_attack, free_import_race)
{
    run_spec spec("free_import_race");

    spec.allow_errors = true;
    run(spec);
}

/* 2. an exporter out of descriptors does not spin on its fd server */
TEST_F(gaudi_ipc_attack, emfile_no_spin)
{
    run_spec spec("emfile");

    spec.allow_errors = true;
    run(spec);
}

/* 6. an importer that never answers cannot make the exporter keep a socket
 * per free */
TEST_F(gaudi_ipc_attack, revoke_cap)
{
    run_spec spec("revoke_cap");

    spec.env          = {"UCX_GAUDI_IPC_TIMEOUT=1s"};
    spec.allow_errors = true;
    run(spec);
}

/* 6. a free revokes 15 importers (3 deaf) under one deadline, off the
 * free path */
TEST_F(gaudi_ipc_attack, revoke_many_importers)
{
    run_spec spec("revoke_many");

    spec.env          = {"UCX_GAUDI_IPC_TIMEOUT=2s"};
    spec.allow_errors = true;
    run(spec);
}

/* 7. a key of 4 KiB of a 4 MiB allocation grants those 4 KiB only */
TEST_F(gaudi_ipc_attack, subrange_out_of_range)
{
    run_spec spec("subrange");

    spec.allow_errors = true;
    run(spec);
}

/* 8. forged keys change nothing in the importer's cache */
TEST_F(gaudi_ipc_attack, forged_keys)
{
    run_spec spec("forged_keys");

    spec.allow_errors = true;
    run(spec);
}

/* 8. a deregistration revokes and renews the identity */
TEST_F(gaudi_ipc_attack, dereg_revokes)
{
    run_spec spec("dereg_revokes");

    spec.allow_errors = true;
    run(spec);
}

/* 8. the cache keeps at most UCX_GAUDI_IPC_CACHE_MAX_ENTRIES imports */
TEST_F(gaudi_ipc_attack, cache_limit)
{
    run_spec spec("cache_limit");

    spec.env = {"UCX_GAUDI_IPC_CACHE_MAX_ENTRIES=4"};
    run(spec);
}

/* 8. memory freed while registered, deregistered afterwards */
TEST_F(gaudi_ipc_attack, free_registered)
{
    run_spec spec("free_registered");

    spec.allow_errors = true;
    run(spec);
}

/* 8. a zero timeout is refused */
TEST_F(gaudi_ipc_attack, zero_timeout)
{
    run_spec spec("zero_timeout");

    spec.env          = {"UCX_GAUDI_IPC_TIMEOUT=0"};
    spec.allow_errors = true;
    run(spec);
}

} /* namespace gipc */
