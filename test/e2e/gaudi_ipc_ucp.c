/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * UCP between two processes with Gaudi memory at both ends: tag send/recv,
 * RMA put and get into the peer's ucp_mem_map'ed Gaudi buffer, and active
 * messages whose rendezvous data is received into Gaudi memory. Every
 * transfer is verified byte-exact against a pattern of its own.
 *
 *   gaudi_ipc_ucp [OPTIONS] server         wait for one client on PORT
 *   gaudi_ipc_ucp [OPTIONS] client HOST    connect to a server on HOST:PORT
 *   gaudi_ipc_ucp [OPTIONS] pair           fork: the child is the server
 *
 * The two processes exchange their worker addresses (and later rkeys and
 * per-operation handshakes) over the TCP connection (a socketpair in "pair"
 * mode; with -u PATH a UNIX socket at PATH, which reaches across network
 * namespaces when PATH is in a directory both see: the client's HOST is
 * then ignored), then both create an endpoint to the other. Each operation runs in
 * both directions (the client initiates, then the server). The client prints
 * one line per operation:
 *
 *   PASS <op> <size> <initiator>-><target> imports=<i>/<t> time=<ms>ms
 *   FAIL <op> <size> <initiator>-><target> <reason>; imports=... time=...
 *
 * where imports are the largest number of live imports of a peer's DMA-BUF
 * the Gaudi emulator accounted in the initiator / target process during the
 * operation (gaudi_emu_get_stats; "-" if the emulator does not provide it).
 * This is a live count: a mapping cached since the rkey was unpacked counts
 * in every later operation, so it shows that gaudi_ipc imported the peer's
 * memory, not that a given operation moved data through it; -P does that.
 * The client also prints the lanes of both endpoints ("lane client: ..."),
 * "gaudi_ipc lanes: client=<n> server=<n>", the largest import counts
 * ("gaudi_emu import_maps max: client=<n> server=<n>") and the emulator's
 * accounting of both processes once endpoints, rkeys and buffers are
 * released ("gaudi_emu after cleanup <side>: ...").
 * The exit status is non-zero if anything failed; SIGALRM after TIMEOUT
 * seconds ends a stuck run with a FAIL line.
 *
 * -P (one-sided check): the side that does not move the data stops
 * progressing UCP while the data moves: the target of a put/get (the op and
 * its flush must complete without it), the sender of a tag message or AM
 * (the receiver must get the data alone, by a rendezvous get). Only a
 * one-sided transport (gaudi_ipc; UCP's fallbacks need both sides to
 * progress) passes; each wait is bounded by PASSIVE_TIMEOUT. Eager messages
 * may need the sender to progress: use -P with rendezvous sizes.
 *
 * Device memory is never dereferenced by the CPU: patterns are written and
 * read back with uct_gaudi_buf_copy() (the owned device's DMA engine; looked
 * up in the module UCX loaded, GAUDI_UCT_MODULE_FILE), or with -S through
 * tag messages to an endpoint to the process's own worker (UCP's gaudi_copy
 * staging).
 *
 * -A (application memory): the Gaudi buffer is allocated the way an
 * application's own runtime does it, by HL_MEM_OP_ALLOC + MAP ioctls on the
 * compute fd the process holds (through the driver seam UCX loaded), not by
 * UCX, and then registered with ucp_mem_map; gaudi_ipc cannot export it,
 * so transfers to and from it must still complete (staged), byte-exact.
 *
 * -W (wake-up): the worker is created with UCP_FEATURE_WAKEUP, and both
 * sides wait for their requests and data by sleeping in ucp_worker_wait()
 * whenever progress finds nothing to do (ucp_worker_arm() said UCS_OK),
 * instead of polling. Only an interface that signals its events on an event
 * fd wakes them; the client prints "wakeup sleeps client=<n> server=<n>",
 * the times each slept and was woken. A transport that cannot wake a worker
 * leaves it asleep until the alarm.
 *
 * -B SIZE,ITERS (bandwidth): after the operations, the client puts SIZE
 * bytes of its Gaudi buffer into the server's ITERS times (after one put
 * to warm up), flushes, and prints "bandwidth put SIZE: <MB/s> MB/s" (the
 * data was verified by the operations before; the server progresses).
 *
 * OPTIONS: -p PORT (13337), -u PATH, -t TIMEOUT seconds (120), -s SIZES
 * (comma separated, default 8,65536,4194304,16777216), -o OPS (comma
 * separated subset of tag,put,get,am,am_auto; default tag,put,get,am), -1
 * (only the client initiates), -P, -S, -A, -W, -B SIZE,ITERS.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* UCX's config.h, included first, may have it */
#endif
#include <ucp/api/ucp.h>
#include <uct/gaudi/seam/gaudi_emu.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZES      16
#define AM_ID          7
#define TAG_PEER       0x4000000000000000ull
#define TAG_SELF       0x8000000000000000ull
#define SMALL_OFFSET   4092  /* small transfers straddle a 4 KiB boundary */
#define PASSIVE_TIMEOUT 5.0  /* -P: seconds the idle side waits */

typedef enum {
    OP_TAG,
    OP_PUT,
    OP_GET,
    OP_AM,       /* ucp_am_send_nbx with UCP_AM_SEND_FLAG_RNDV */
    OP_AM_AUTO,  /* ucp_am_send_nbx, UCP picks eager or rendezvous */
    OP_LAST
} op_t;

static const char *op_names[] = {"tag", "put", "get", "am", "am_auto"};

/* What each side reports to the other at the end of an operation */
typedef struct {
    int32_t  ok;            /* 1 if this side saw no error */
    int32_t  imports;       /* max import_maps during the op, -1 unknown */
    int64_t  bad_offset;    /* first mismatching byte, -1 none */
    uint32_t got, expected; /* bytes at bad_offset */
    char     reason[256];
} op_result_t;

static struct {
    int               is_server;
    int               port;
    unsigned          timeout;
    size_t            sizes[MAX_SIZES];
    int               num_sizes;
    int               ops[OP_LAST];
    int               one_way;
    int               passive;      /* -P: the peer not moving data idles */
    int               self_ep_copy; /* -S: fill/verify through UCP */
    int               app_alloc;    /* -A: buffer allocated by the "app" */
    int               wakeup;       /* -W: sleep in ucp_worker_wait */
    const char        *unix_path;   /* -u: control channel's socket */
    size_t            bw_size;      /* -B: bandwidth of puts this size */
    unsigned          bw_iters;
    const char        *host;
} opts = {
    .port    = 13337,
    .timeout = 120,
};

static const char   *role = "client";
static int          ctl_fd = -1;
static ucp_context_h context;
static ucp_worker_h worker;
static ucp_ep_h     peer_ep;
static ucp_ep_h     self_ep;
static ucp_mem_h    dev_memh;
static char         *dev_buf;     /* Gaudi memory, device VA */
static int          app_fd = -1;  /* -A: compute fd the buffer is on */
static uint64_t     app_handle;   /* -A: its ALLOC handle */
static size_t       dev_buf_size;
static ucp_rkey_h   peer_rkey;
static uint64_t     peer_buf;     /* the peer's dev_buf */
static char         *host_buf;    /* pattern source / read-back target */
static char         *host_chk;
static uint64_t     self_tag_sn;
static char         current_op[128] = "setup";

typedef ucs_status_t (*gaudi_buf_copy_func_t)(void *dst, int dst_is_dev,
                                              const void *src, int src_is_dev,
                                              size_t length);

static gaudi_emu_get_stats_func_t emu_get_stats;
static gaudi_buf_copy_func_t      gaudi_buf_copy; /* uct_gaudi_buf_copy */
static int          emu_imports_max; /* during the current operation */
static int          emu_imports_run; /* during the whole run */
static unsigned     wakeup_sleeps;   /* -W: ucp_worker_wait() returned */

/* Active message state of the target */
static struct {
    int        arrived;
    int        rndv;
    void       *desc;
    size_t     length;
    uint64_t   seq;
} am_state;


static void die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    printf("FAIL %s: [%s] ", current_op, role);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    _exit(1);
}

#define CHECK(_cond, ...) \
    do { \
        if (!(_cond)) { \
            die(__VA_ARGS__); \
        } \
    } while (0)

static void alarm_handler(int sig)
{
    char msg[256];
    int len;

    len = snprintf(msg, sizeof(msg), "FAIL %s: [%s] timeout after %u s\n",
                   current_op, role, opts.timeout);
    if (write(1, msg, len) < 0) {
        /* nothing more to do */
    }
    _exit(3);
}


/* ---- emulator accounting ------------------------------------------------ */

typedef struct {
    const char *name;
    char       path[PATH_MAX];
} lib_find_t;

static int lib_find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    lib_find_t *find = arg;

    if ((info->dlpi_name != NULL) &&
        (strstr(info->dlpi_name, find->name) != NULL)) {
        snprintf(find->path, sizeof(find->path), "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

/* A symbol of a library UCX loaded: UCX dlopen()s its modules, and the
 * Gaudi base library the emulator, with RTLD_LOCAL, so RTLD_DEFAULT may not
 * see them; look the library up among the loaded objects */
static void *lib_symbol(const char *lib, const char *symbol)
{
    lib_find_t find = {.name = lib};
    void *handle, *sym;

    sym = dlsym(RTLD_DEFAULT, symbol);
    if ((sym != NULL) || !dl_iterate_phdr(lib_find_cb, &find)) {
        return sym;
    }

    handle = dlopen(find.path, RTLD_NOW | RTLD_NOLOAD);
    if (handle == NULL) {
        return NULL;
    }
    sym = dlsym(handle, symbol);
    dlclose(handle); /* UCX keeps its own reference while the context lives */
    return sym;
}

static void emu_resolve(void)
{
    emu_get_stats = (gaudi_emu_get_stats_func_t)lib_symbol(
            "libgaudi_emu.so", GAUDI_EMU_STATS_SYMBOL);
}

static int emu_stats(gaudi_emu_stats_t *stats)
{
    return (emu_get_stats != NULL) && (emu_get_stats(stats) == 0);
}

static void emu_sample(void)
{
    gaudi_emu_stats_t stats;

    if (emu_stats(&stats)) {
        if ((int)stats.import_maps > emu_imports_max) {
            emu_imports_max = stats.import_maps;
        }
        if ((int)stats.import_maps > emu_imports_run) {
            emu_imports_run = stats.import_maps;
        }
    }
}

/* Wait up to @a timeout s until this process imports nothing */
static void emu_wait_imports_gone(double timeout)
{
    struct timespec ts;
    gaudi_emu_stats_t s;
    double deadline;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    deadline = ts.tv_sec + ts.tv_nsec * 1e-9 + timeout;
    while (emu_stats(&s) && (s.import_maps > 0)) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if (ts.tv_sec + ts.tv_nsec * 1e-9 > deadline) {
            break;
        }
        usleep(10000);
    }
}

static void emu_stats_str(char *buf, size_t max)
{
    gaudi_emu_stats_t s;

    if (!emu_stats(&s)) {
        snprintf(buf, max, "unavailable");
        return;
    }
    snprintf(buf, max, "contexts=%u dram_maps=%u host_maps=%u "
             "import_maps=%u cb_maps=%u exports=%u pinned_bytes=%llu",
             s.contexts, s.dram_maps, s.host_maps, s.import_maps, s.cb_maps,
             s.exports, (unsigned long long)s.pinned_bytes);
}


/* ---- control channel ---------------------------------------------------- */

static double now_sec(void);

/* Progress the worker; sample the emulator's accounting at most every 10 ms
 * (gaudi_emu_get_stats takes the emulator's context locks and opens files:
 * sampled on every call it would slow its DMA worker down) */
static void progress(void)
{
    static double next_sample;
    double now;

    ucp_worker_progress(worker);
    if (emu_get_stats != NULL) {
        now = now_sec();
        if (now >= next_sample) {
            next_sample = now + 0.01;
            emu_sample();
        }
    }
}

static void ctl_write(const void *buf, size_t len)
{
    const char *p = buf;
    ssize_t n;

    while (len > 0) {
        n = send(ctl_fd, p, len, MSG_NOSIGNAL);
        if ((n < 0) && (errno == EINTR)) {
            continue;
        }
        CHECK(n > 0, "control channel: send failed: %s",
              (n < 0) ? strerror(errno) : "closed");
        p   += n;
        len -= n;
    }
}

/* Read exactly @a len bytes, progressing the worker (if any) meanwhile:
 * the peer may need us to progress before it can answer */
static int ctl_passive; /* read without progressing the worker */

static void ctl_read(void *buf, size_t len)
{
    struct pollfd pfd = {.fd = ctl_fd, .events = POLLIN};
    char *p           = buf;
    ssize_t n;

    while (len > 0) {
        if ((worker != NULL) && !ctl_passive) {
            progress();
            if (poll(&pfd, 1, 0) == 0) {
                continue;
            }
        }
        n = recv(ctl_fd, p, len, 0);
        if ((n < 0) && (errno == EINTR)) {
            continue;
        }
        CHECK(n > 0, "control channel: %s",
              (n < 0) ? strerror(errno) : "the peer closed it (peer failed?)");
        p   += n;
        len -= n;
    }
}

static void ctl_send_blob(const void *buf, uint64_t len)
{
    ctl_write(&len, sizeof(len));
    ctl_write(buf, len);
}

static void *ctl_recv_blob(uint64_t *len_p)
{
    uint64_t len;
    void *buf;

    ctl_read(&len, sizeof(len));
    CHECK(len < (1 << 20), "control channel: bad blob length %llu",
          (unsigned long long)len);
    buf = malloc(len + 1);
    CHECK(buf != NULL, "out of memory");
    ctl_read(buf, len);
    *len_p = len;
    return buf;
}

static void ctl_sync(uint32_t what)
{
    uint32_t got;

    ctl_write(&what, sizeof(what));
    ctl_read(&got, sizeof(got));
    CHECK(got == what, "control channel out of step: %u != %u", got, what);
}

static void ctl_signal(uint32_t what)
{
    ctl_write(&what, sizeof(what));
}

static void ctl_expect(uint32_t what)
{
    uint32_t got;

    ctl_read(&got, sizeof(got));
    CHECK(got == what, "control channel out of step: %u != %u", got, what);
}

/* Wait for @a what without progressing the worker: a passive target */
static void ctl_expect_passive(uint32_t what)
{
    ctl_passive = 1;
    ctl_expect(what);
    ctl_passive = 0;
}

static int connect_to(const char *host, int port)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res, *ai;
    char service[16];
    int fd = -1, rc, attempt;

    snprintf(service, sizeof(service), "%d", port);
    rc = getaddrinfo(host, service, &hints, &res);
    CHECK(rc == 0, "getaddrinfo(%s): %s", host, gai_strerror(rc));

    /* the server may not listen yet: retry (the alarm bounds this) */
    for (attempt = 0;; ++attempt) {
        for (ai = res; ai != NULL; ai = ai->ai_next) {
            fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
            if (fd < 0) {
                continue;
            }
            if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                freeaddrinfo(res);
                return fd;
            }
            close(fd);
        }
        usleep(100000);
    }
}

/* -u: the control channel over a UNIX socket at @a path (the server binds
 * it, the client connects, retrying until the server listens) */
static int unix_control(const char *path, int is_server)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int lfd, fd;

    CHECK(strlen(path) < sizeof(addr.sun_path), "-u %s: too long", path);
    strcpy(addr.sun_path, path);
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(fd >= 0, "socket: %s", strerror(errno));
    if (!is_server) {
        while (connect(fd, (struct sockaddr*)&addr, sizeof(addr)) != 0) {
            usleep(100000);     /* the alarm bounds this */
        }
        return fd;
    }

    lfd = fd;
    unlink(path);
    CHECK(bind(lfd, (struct sockaddr*)&addr, sizeof(addr)) == 0,
          "bind %s: %s", path, strerror(errno));
    CHECK(listen(lfd, 1) == 0, "listen: %s", strerror(errno));
    do {
        fd = accept(lfd, NULL, NULL);
    } while ((fd < 0) && (errno == EINTR));
    CHECK(fd >= 0, "accept: %s", strerror(errno));
    close(lfd);
    unlink(path);
    return fd;
}

static int accept_one(int port)
{
    struct sockaddr_in addr = {
        .sin_family      = AF_INET,
        .sin_port        = htons(port),
        .sin_addr.s_addr = htonl(INADDR_ANY)
    };
    int one = 1, lfd, fd;

    lfd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(lfd >= 0, "socket: %s", strerror(errno));
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    CHECK(bind(lfd, (struct sockaddr*)&addr, sizeof(addr)) == 0,
          "bind to port %d: %s", port, strerror(errno));
    CHECK(listen(lfd, 1) == 0, "listen: %s", strerror(errno));
    do {
        fd = accept(lfd, NULL, NULL);
    } while ((fd < 0) && (errno == EINTR));
    CHECK(fd >= 0, "accept: %s", strerror(errno));
    close(lfd);
    return fd;
}


/* ---- UCP helpers -------------------------------------------------------- */

static double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

/* Whether the peer has written to the control channel (without reading) */
static int ctl_pending(void)
{
    struct pollfd pfd = {.fd = ctl_fd, .events = POLLIN};

    return poll(&pfd, 1, 0) > 0;
}


/* Wait for @a request (NULL: done in place), but give up after @a seconds (the request stays
 * outstanding: *@a request_p is left set, else cleared) */
/* -W: when progress finds nothing to do, sleep until an interface signals
 * an event (ucp_worker_arm said UCS_OK); returns whether it slept */
static int wakeup_sleep(void)
{
    ucs_status_t status;

    if (!opts.wakeup || (ucp_worker_progress(worker) != 0) ||
        (ucp_worker_arm(worker) != UCS_OK)) {
        return 0;
    }

    status = ucp_worker_wait(worker);
    CHECK(status == UCS_OK, "ucp_worker_wait: %s", ucs_status_string(status));
    ++wakeup_sleeps;
    return 1;
}

static ucs_status_t request_wait_deadline(void **request_p, double seconds)
{
    double deadline = now_sec() + seconds;
    void *request   = *request_p;
    ucs_status_t status;

    if (request == NULL) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(request)) {
        *request_p = NULL;
        return UCS_PTR_STATUS(request);
    }

    do {
        progress();
        status = ucp_request_check_status(request);
        if ((status == UCS_INPROGRESS) && wakeup_sleep()) {
            continue;
        }
        if (status != UCS_INPROGRESS) {
            ucp_request_free(request);
            *request_p = NULL;
            return status;
        }
    } while (now_sec() < deadline);
    return UCS_ERR_TIMED_OUT;
}

static ucs_status_t request_wait(void *request, const char *what)
{
    (void)what;
    return request_wait_deadline(&request, 1e30);
}

/* Progress until *@a flag is set or @a request completes (if not NULL). Once
 * the peer says it is done, give the data PEER_GRACE seconds to arrive (an
 * eager message may trail the control channel), then give up: a failed
 * initiator makes the target fail fast instead of waiting for the alarm. */
#define PEER_GRACE 10.0
static ucs_status_t target_wait(void *request, const int *flag)
{
    double deadline = 0;
    ucs_status_t status;

    if ((request == NULL) && (flag == NULL)) {
        return UCS_OK; /* completed in place */
    }
    if ((request != NULL) && UCS_PTR_IS_ERR(request)) {
        return UCS_PTR_STATUS(request);
    }

    for (;;) {
        progress();
        if (request != NULL) {
            status = ucp_request_check_status(request);
            if (status != UCS_INPROGRESS) {
                ucp_request_free(request);
                return status;
            }
        } else if (*flag) {
            return UCS_OK;
        }

        if (wakeup_sleep()) {
            continue; /* the data's arrival is what wakes it */
        }

        if (deadline == 0) {
            if (ctl_pending()) {
                deadline = now_sec() + PEER_GRACE;
            }
        } else if (now_sec() > deadline) {
            break;
        }
    }

    if (request != NULL) {
        ucp_request_cancel(worker, request);
        do {
            progress();
        } while (ucp_request_check_status(request) == UCS_INPROGRESS);
        ucp_request_free(request);
    }
    return UCS_ERR_TIMED_OUT;
}


static void request_wait_ok(void *request, const char *what)
{
    ucs_status_t status = request_wait(request, what);

    CHECK(status == UCS_OK, "%s: %s", what, ucs_status_string(status));
}

/* Move @a size bytes between host and Gaudi memory of this process (to the
 * device if @a to_dev): with uct_gaudi_buf_copy (the owned device's DMA
 * engine, whatever UCX_TLS says), or with -S through a tag message to our
 * own worker (UCP's gaudi_copy staging) */
static void self_copy(void *dst, const void *src, size_t size, int to_dev)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    ucp_tag_t tag             = TAG_SELF | self_tag_sn++;
    ucs_status_t status;
    void *rreq, *sreq;

    if (gaudi_buf_copy != NULL) {
        status = gaudi_buf_copy(dst, to_dev, src, !to_dev, size);
        CHECK(status == UCS_OK, "uct_gaudi_buf_copy(%zu bytes %s): %s", size,
              to_dev ? "to Gaudi" : "from Gaudi", ucs_status_string(status));
        return;
    }

    rreq = ucp_tag_recv_nbx(worker, dst, size, tag, (ucp_tag_t)-1, &param);
    sreq = ucp_tag_send_nbx(self_ep, src, size, tag, &param);
    request_wait_ok(sreq, "self tag send");
    request_wait_ok(rreq, "self tag recv");
}

static uint8_t pattern_byte(size_t i, uint32_t seed)
{
    uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u + (uint32_t)(i >> 16);

    return (uint8_t)((x >> 13) ^ (x >> 5) ^ seed);
}

/* Write pattern @a seed into @a size bytes of Gaudi memory at @a dev */
static void dev_fill(void *dev, size_t size, uint32_t seed)
{
    size_t i;

    for (i = 0; i < size; ++i) {
        host_buf[i] = pattern_byte(i, seed);
    }
    self_copy(dev, host_buf, size, 1);
}

/* Compare Gaudi memory with pattern @a seed; returns the first mismatch */
static int64_t dev_verify(const void *dev, size_t size, uint32_t seed,
                          op_result_t *res)
{
    size_t i;

    memset(host_chk, 0, size);
    self_copy(host_chk, dev, size, 0);
    for (i = 0; i < size; ++i) {
        if ((uint8_t)host_chk[i] != pattern_byte(i, seed)) {
            res->ok         = 0;
            res->bad_offset = i;
            res->got        = (uint8_t)host_chk[i];
            res->expected   = pattern_byte(i, seed);
            snprintf(res->reason, sizeof(res->reason),
                     "data mismatch at byte %zu of %zu: 0x%02x != 0x%02x",
                     i, size, res->got, res->expected);
            return i;
        }
    }
    return -1;
}

static ucs_status_t am_cb(void *arg, const void *header, size_t header_length,
                          void *data, size_t length,
                          const ucp_am_recv_param_t *param)
{
    CHECK(header_length == sizeof(uint64_t), "AM header of %zu bytes",
          header_length);
    memcpy(&am_state.seq, header, sizeof(uint64_t));
    am_state.arrived = 1;
    am_state.length  = length;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
        am_state.rndv = 1;
        am_state.desc = data;
        return UCS_INPROGRESS; /* received by ucp_am_recv_data_nbx */
    }

    /* eager: the data is in host memory, valid during the callback */
    am_state.rndv = 0;
    memcpy(host_chk, data, length);
    return UCS_OK;
}

static void ucp_setup(void)
{
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES,
        .features   = UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_AM
    };
    ucp_worker_params_t wparams = {
        .field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SINGLE
    };
    ucp_am_handler_param_t am_param = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                      UCP_AM_HANDLER_PARAM_FIELD_CB,
        .id         = AM_ID,
        .cb         = am_cb
    };
    ucs_status_t status;

    if (opts.wakeup) {
        params.features |= UCP_FEATURE_WAKEUP;
    }

    status = ucp_init(&params, NULL, &context);
    CHECK(status == UCS_OK, "ucp_init: %s", ucs_status_string(status));
    status = ucp_worker_create(context, &wparams, &worker);
    CHECK(status == UCS_OK, "ucp_worker_create: %s",
          ucs_status_string(status));
    status = ucp_worker_set_am_recv_handler(worker, &am_param);
    CHECK(status == UCS_OK, "ucp_worker_set_am_recv_handler: %s",
          ucs_status_string(status));
    emu_resolve();
    if (!opts.self_ep_copy) {
        gaudi_buf_copy = (gaudi_buf_copy_func_t)lib_symbol(
                GAUDI_UCT_MODULE_FILE, "uct_gaudi_buf_copy");
        CHECK(gaudi_buf_copy != NULL, "uct_gaudi_buf_copy not found in the "
              "loaded " GAUDI_UCT_MODULE_FILE " (use -S to fill through "
              "UCP)");
    }
}

/* Complete the wireup in both directions before any measured operation: a
 * rendezvous (RTS) needs the peer's endpoint id, which arrives with the
 * wireup reply; a message posted before that waits in the sender for the
 * reply, which needs the sender to progress (-P would misjudge). A 1 MiB
 * host message each way is a rendezvous and completes the wireup. */
#define WARMUP_SIZE (1024 * 1024)
static void ucp_warmup(void)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    char *out = malloc(WARMUP_SIZE), *in = malloc(WARMUP_SIZE);
    void *rreq, *sreq;

    CHECK((out != NULL) && (in != NULL), "out of host memory");
    memset(out, 0x77, WARMUP_SIZE);
    rreq = ucp_tag_recv_nbx(worker, in, WARMUP_SIZE, TAG_PEER, (ucp_tag_t)-1,
                            &param);
    sreq = ucp_tag_send_nbx(peer_ep, out, WARMUP_SIZE, TAG_PEER, &param);
    request_wait_ok(sreq, "warm-up send");
    request_wait_ok(rreq, "warm-up recv");
    CHECK(in[WARMUP_SIZE - 1] == 0x77, "warm-up message corrupted");
    request_wait_ok(ucp_ep_flush_nbx(peer_ep, &param), "warm-up flush");
    ctl_sync(7);
    free(out);
    free(in);
}

/* -A: allocate dev_buf as an application would, with the driver's own
 * ioctls on the compute fd of this process (the one UCX owns), found in
 * /proc/self/fd through the driver seam UCX loaded */
typedef int (*gaudi_ioctl_func_t)(int fd, uct_gaudi_ioc_t ioc, void *arg);

static int app_mem(uint32_t op, union hl_mem_args *args)
{
    static gaudi_ioctl_func_t ioctl_func;

    if (ioctl_func == NULL) {
        ioctl_func = (gaudi_ioctl_func_t)lib_symbol(GAUDI_UCT_MODULE_FILE,
                                                    "uct_gaudi_ioctl");
        CHECK(ioctl_func != NULL, "uct_gaudi_ioctl not found");
    }
    args->in.op = op;
    return ioctl_func(app_fd, UCT_GAUDI_IOC_MEMORY, args);
}

static void app_find_fd(void)
{
    const uct_gaudi_drv_ops_t **ops;
    char path[PATH_MAX];
    struct dirent *entry;
    int fd, n;
    DIR *dir;

    ops = (const uct_gaudi_drv_ops_t**)lib_symbol(GAUDI_UCT_MODULE_FILE,
                                                  "uct_gaudi_seam_ops");
    CHECK((ops != NULL) && (*ops != NULL), "uct_gaudi_seam_ops not found");
    dir = opendir("/proc/self/fd");
    CHECK(dir != NULL, "opendir(/proc/self/fd): %m");
    while ((app_fd < 0) && ((entry = readdir(dir)) != NULL)) {
        fd = atoi(entry->d_name);
        if (((*ops)->fd_path(fd, path, sizeof(path)) >= 0) &&
            ((sscanf(path, UCT_GAUDI_DEV_ACCEL_COMPUTE "%n", &n, &n) == 1) ||
             (sscanf(path, UCT_GAUDI_DEV_MISC_COMPUTE "%n", &n, &n) == 1)) &&
            (path[n] == '\0')) {
            app_fd = fd;
        }
    }
    closedir(dir);
    CHECK(app_fd >= 0, "no Gaudi compute fd open in this process");
}

static void app_alloc(void)
{
    union hl_mem_args args;

    app_find_fd();
    memset(&args, 0, sizeof(args));
    args.in.alloc.mem_size = dev_buf_size;
    CHECK(app_mem(HL_MEM_OP_ALLOC, &args) == 0, "ALLOC: %m");
    app_handle = args.out.handle;
    memset(&args, 0, sizeof(args));
    args.in.map_device.handle = app_handle;
    CHECK(app_mem(HL_MEM_OP_MAP, &args) == 0, "MAP: %m");
    dev_buf = (char*)(uintptr_t)args.out.device_virt_addr;
}

static void app_free(void)
{
    union hl_mem_args args;

    memset(&args, 0, sizeof(args));
    args.in.unmap.device_virt_addr = (uintptr_t)dev_buf;
    CHECK(app_mem(HL_MEM_OP_UNMAP, &args) == 0, "UNMAP: %m");
    memset(&args, 0, sizeof(args));
    args.in.free.handle = app_handle;
    CHECK(app_mem(HL_MEM_OP_FREE, &args) == 0, "FREE: %m");
}

static void ucp_connect(void)
{
    ucp_mem_map_params_t mparams;
    ucp_mem_attr_t mattr;
    ucp_ep_params_t ep_params;
    ucp_address_t *address;
    size_t address_len;
    void *rkey_buf, *peer_addr, *peer_rkey_buf;
    size_t rkey_len;
    uint64_t len, remote;
    ucs_status_t status;

    /* our Gaudi buffer, allocated on the owned device by UCX or (-A) by
     * the application itself */
    mparams.field_mask  = UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                          UCP_MEM_MAP_PARAM_FIELD_FLAGS |
                          UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
    mparams.length      = dev_buf_size;
    mparams.flags       = UCP_MEM_MAP_ALLOCATE;
    mparams.memory_type = UCS_MEMORY_TYPE_GAUDI;
    if (opts.app_alloc) {
        app_alloc();
        mparams.field_mask |= UCP_MEM_MAP_PARAM_FIELD_ADDRESS;
        mparams.address     = dev_buf;
        mparams.flags       = 0;
    }
    status = ucp_mem_map(context, &mparams, &dev_memh);
    CHECK(status == UCS_OK, "ucp_mem_map(%s %zu bytes, gaudi): %s",
          opts.app_alloc ? "the application's" : "ALLOCATE", dev_buf_size,
          ucs_status_string(status));
    mattr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS |
                       UCP_MEM_ATTR_FIELD_MEM_TYPE;
    status = ucp_mem_query(dev_memh, &mattr);
    CHECK(status == UCS_OK, "ucp_mem_query: %s", ucs_status_string(status));
    CHECK(mattr.mem_type == UCS_MEMORY_TYPE_GAUDI,
          "ucp_mem_map gave %s memory, not gaudi",
          ucs_memory_type_names[mattr.mem_type]);
    dev_buf = mattr.address;

    status = ucp_rkey_pack(context, dev_memh, &rkey_buf, &rkey_len);
    CHECK(status == UCS_OK, "ucp_rkey_pack: %s", ucs_status_string(status));

    status = ucp_worker_get_address(worker, &address, &address_len);
    CHECK(status == UCS_OK, "ucp_worker_get_address: %s",
          ucs_status_string(status));

    /* exchange addresses, buffers and rkeys */
    ctl_send_blob(address, address_len);
    remote = (uintptr_t)dev_buf;
    ctl_write(&remote, sizeof(remote));
    ctl_send_blob(rkey_buf, rkey_len);
    peer_addr = ctl_recv_blob(&len);
    ctl_read(&peer_buf, sizeof(peer_buf));
    peer_rkey_buf = ctl_recv_blob(&len);

    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_params.address    = peer_addr;
    status = ucp_ep_create(worker, &ep_params, &peer_ep);
    CHECK(status == UCS_OK, "ucp_ep_create(peer): %s",
          ucs_status_string(status));
    ep_params.address = address;
    status = ucp_ep_create(worker, &ep_params, &self_ep);
    CHECK(status == UCS_OK, "ucp_ep_create(self): %s",
          ucs_status_string(status));

    status = ucp_ep_rkey_unpack(peer_ep, peer_rkey_buf, &peer_rkey);
    CHECK(status == UCS_OK, "ucp_ep_rkey_unpack: %s",
          ucs_status_string(status));

    ucp_worker_release_address(worker, address);
    ucp_rkey_buffer_release(rkey_buf);
    free(peer_addr);
    free(peer_rkey_buf);

    ucp_warmup();
}

/* Print the lanes of the endpoint to the peer; returns how many are on
 * gaudi_ipc. The client prints both sides' lanes. */
static int ep_lanes(char **text_p)
{
    char *buf = NULL, *line, *save, *out = NULL;
    size_t size = 0, out_size = 0;
    FILE *stream, *ostream;
    int count = 0;

    stream = open_memstream(&buf, &size);
    CHECK(stream != NULL, "open_memstream failed");
    ucp_ep_print_info(peer_ep, stream);
    fclose(stream);

    ostream = open_memstream(&out, &out_size);
    CHECK(ostream != NULL, "open_memstream failed");
    for (line = strtok_r(buf, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        if (strstr(line, "lane[") == NULL) {
            continue;
        }
        while ((*line == '#') || (*line == ' ')) {
            ++line;
        }
        fprintf(ostream, "%s\n", line);
        if (strstr(line, "gaudi_ipc/") != NULL) {
            ++count;
        }
    }
    fclose(ostream);
    free(buf);
    *text_p = out;
    return count;
}


/* ---- operations --------------------------------------------------------- */

static void op_begin(void)
{
    emu_imports_max = 0;
    emu_sample();
}

/* -P, tag and AM: the sender stops progressing once the send is posted
 * until the receiver says whether the data arrived meanwhile (a rendezvous
 * the receiver completes alone, by a get over a one-sided transport) */
static void sender_passive_wait(op_result_t *res)
{
    int32_t received;

    ctl_passive = 1;
    ctl_expect(5);
    ctl_read(&received, sizeof(received));
    ctl_passive = 0;
    if (!received) {
        res->ok = 0;
        snprintf(res->reason, sizeof(res->reason),
                 "the receiver did not get the data in %.0f s while the "
                 "sender did not progress: not a one-sided rendezvous",
                 PASSIVE_TIMEOUT);
    }
}

/* The initiator's side of an operation */
static void op_initiate(op_t op, size_t size, size_t offset, uint32_t seed,
                        op_result_t *res)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    ucp_tag_t tag             = TAG_PEER | seed;
    char *local               = dev_buf + offset;
    uint64_t remote           = peer_buf + offset;
    uint64_t seq              = seed;
    ucs_status_t status;
    void *req;

    if (op == OP_GET) {
        dev_fill(local, size, seed ^ 0x5a5a5a5a); /* poison */
    } else {
        dev_fill(local, size, seed);
    }
    ctl_expect(1); /* target ready */

    switch (op) {
    case OP_TAG:
    case OP_AM:
    case OP_AM_AUTO:
        if (op == OP_TAG) {
            req = ucp_tag_send_nbx(peer_ep, local, size, tag, &param);
        } else {
            param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
            param.flags        = (op == OP_AM) ? UCP_AM_SEND_FLAG_RNDV : 0;
            req = ucp_am_send_nbx(peer_ep, AM_ID, &seq, sizeof(seq), local,
                                  size, &param);
        }
        if (opts.passive && !UCS_PTR_IS_ERR(req)) {
            sender_passive_wait(res);
        }
        status = request_wait(req, op_names[op]);
        break;
    case OP_PUT:
    case OP_GET:
        if (op == OP_PUT) {
            req = ucp_put_nbx(peer_ep, local, size, remote, peer_rkey, &param);
        } else {
            req = ucp_get_nbx(peer_ep, local, size, remote, peer_rkey, &param);
        }
        if (!opts.passive) {
            status = request_wait(req, op_names[op]);
            if ((status == UCS_OK) && (op == OP_PUT)) {
                req    = ucp_ep_flush_nbx(peer_ep, &param);
                status = request_wait(req, "flush");
            }
            break;
        }

        /* the target does not progress: a one-sided transport must complete
         * the operation (and the flush) by itself */
        status = request_wait_deadline(&req, PASSIVE_TIMEOUT);
        if ((status == UCS_OK) && (op == OP_PUT)) {
            req    = ucp_ep_flush_nbx(peer_ep, &param);
            status = request_wait_deadline(&req, PASSIVE_TIMEOUT);
        }
        if (status == UCS_ERR_TIMED_OUT) {
            res->ok = 0;
            snprintf(res->reason, sizeof(res->reason),
                     "%s did not complete in %.0f s while the target did not "
                     "progress: not one-sided (RMA emulated over AM?)",
                     op_names[op], PASSIVE_TIMEOUT);
            ctl_signal(2); /* let the target progress, then finish */
            status = request_wait(req, op_names[op]);
            if ((status == UCS_OK) && (op == OP_PUT)) {
                status = request_wait(ucp_ep_flush_nbx(peer_ep, &param),
                                      "flush");
            }
            if (status != UCS_OK) {
                snprintf(res->reason + strlen(res->reason),
                         sizeof(res->reason) - strlen(res->reason),
                         "; then failed: %s", ucs_status_string(status));
            }
            return;
        }
        break;
    default:
        status = UCS_ERR_INVALID_PARAM;
    }

    if (status != UCS_OK) {
        res->ok = 0;
        snprintf(res->reason, sizeof(res->reason), "%s failed: %s",
                 op_names[op], ucs_status_string(status));
    } else if (op == OP_GET) {
        dev_verify(local, size, seed, res);
    }
    ctl_signal(2); /* initiator done */
}

/* The receiver of a tag message or AM: returns the status of the receive;
 * with -P, first waits PASSIVE_TIMEOUT for the data while the sender does
 * not progress, and tells the sender whether it arrived */
static ucs_status_t target_receive(op_t op, size_t size, char *local,
                                   uint32_t seed, void *rreq,
                                   op_result_t *res)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    double deadline           = now_sec() + PASSIVE_TIMEOUT;
    int32_t received          = 1;
    ucs_status_t status;
    size_t i;

    if (opts.passive) {
        if (op == OP_TAG) {
            status = request_wait_deadline(&rreq, PASSIVE_TIMEOUT);
        } else {
            while (!am_state.arrived && (now_sec() < deadline)) {
                progress();
            }
            status = am_state.arrived ? UCS_OK : UCS_ERR_TIMED_OUT;
            if (am_state.arrived && am_state.rndv &&
                (am_state.length == size)) {
                rreq   = ucp_am_recv_data_nbx(worker, am_state.desc, local,
                                              size, &param);
                am_state.desc = NULL;
                status = request_wait_deadline(&rreq, deadline - now_sec());
            }
        }
        received = (status != UCS_ERR_TIMED_OUT);
        ctl_signal(5);
        ctl_write(&received, sizeof(received));
        if (status != UCS_ERR_TIMED_OUT) {
            if (op == OP_TAG) {
                return status;
            }
            goto am_check;
        }
    }

    /* the sender progresses: wait for the data as long as it takes */
    if (op == OP_TAG) {
        return target_wait(rreq, NULL);
    }
    if (rreq != NULL) {
        status = target_wait(rreq, NULL);
        goto am_check;
    }
    status = target_wait(NULL, &am_state.arrived);
    if (status != UCS_OK) {
        res->ok = 0;
        snprintf(res->reason, sizeof(res->reason),
                 "the AM did not arrive (the initiator is done)");
        return UCS_OK;
    }

am_check:
    if (am_state.seq != seed) {
        res->ok = 0;
        snprintf(res->reason, sizeof(res->reason),
                 "AM header %llu, expected %u",
                 (unsigned long long)am_state.seq, seed);
    } else if (am_state.length != size) {
        res->ok = 0;
        snprintf(res->reason, sizeof(res->reason),
                 "AM of %zu bytes, expected %zu", am_state.length, size);
    } else if (am_state.rndv) {
        if (am_state.desc != NULL) {
            rreq          = ucp_am_recv_data_nbx(worker, am_state.desc, local,
                                                 size, &param);
            am_state.desc = NULL;
            status        = target_wait(rreq, NULL);
        }
    } else if (op == OP_AM) {
        res->ok = 0;
        snprintf(res->reason, sizeof(res->reason),
                 "AM sent with UCP_AM_SEND_FLAG_RNDV arrived eager");
    } else {
        /* eager: the data was copied to host_chk by the callback */
        for (i = 0; i < size; ++i) {
            if ((uint8_t)host_chk[i] != pattern_byte(i, seed)) {
                res->ok = 0;
                snprintf(res->reason, sizeof(res->reason),
                         "eager AM data mismatch at byte %zu", i);
                break;
            }
        }
    }
    return status;
}

/* The target's side of an operation */
static void op_target(op_t op, size_t size, size_t offset, uint32_t seed,
                      op_result_t *res)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    ucp_tag_t tag             = TAG_PEER | seed;
    char *local               = dev_buf + offset;
    ucs_status_t status       = UCS_OK;
    void *rreq                = NULL;

    if (op == OP_GET) {
        dev_fill(local, size, seed);
    } else {
        dev_fill(local, size, seed ^ 0x5a5a5a5a); /* poison */
    }
    if (op == OP_TAG) {
        rreq = ucp_tag_recv_nbx(worker, local, size, tag, (ucp_tag_t)-1,
                                &param);
    }
    memset(&am_state, 0, sizeof(am_state));
    ctl_signal(1); /* ready */

    if ((op == OP_TAG) || (op == OP_AM) || (op == OP_AM_AUTO)) {
        status = target_receive(op, size, local, seed, rreq, res);
        if ((status != UCS_OK) && res->ok) {
            res->ok = 0;
            snprintf(res->reason, sizeof(res->reason), "%s target: %s",
                     op_names[op], ucs_status_string(status));
        }
    }

    /* the initiator is done: put data is in place */
    if (opts.passive && ((op == OP_PUT) || (op == OP_GET))) {
        ctl_expect_passive(2);
    } else {
        ctl_expect(2);
    }
    if (res->ok && (op != OP_GET) &&
        !((op == OP_AM_AUTO) && !am_state.rndv)) {
        dev_verify(local, size, seed, res);
    }
}

static int run_op(op_t op, size_t size, int client_initiates, int index)
{
    const char *dir = client_initiates ? "client->server" : "server->client";
    int initiator   = (opts.is_server != client_initiates);
    size_t offset   = (size < 4096) ? SMALL_OFFSET : 0;
    uint32_t seed   = (uint32_t)index * 0x10001u + 1;
    op_result_t mine, peer, *ini, *tgt;
    const char *reason;
    double start;
    int ok;

    snprintf(current_op, sizeof(current_op), "%s %zu %s", op_names[op], size,
             dir);
    memset(&mine, 0, sizeof(mine));
    mine.ok         = 1;
    mine.bad_offset = -1;

    op_begin();
    start = now_sec();
    if (initiator) {
        op_initiate(op, size, offset, seed, &mine);
    } else {
        op_target(op, size, offset, seed, &mine);
    }
    emu_sample();
    mine.imports = (emu_get_stats != NULL) ? emu_imports_max : -1;

    ctl_write(&mine, sizeof(mine));
    ctl_read(&peer, sizeof(peer));
    ctl_sync(3);

    ini    = initiator ? &mine : &peer;
    tgt    = initiator ? &peer : &mine;
    ok     = mine.ok && peer.ok;
    reason = !ini->ok ? ini->reason : tgt->reason;
    if (!opts.is_server) {
        if (ok) {
            printf("PASS %s %zu %s imports=", op_names[op], size, dir);
        } else {
            printf("FAIL %s %zu %s %s; imports=", op_names[op], size, dir,
                   reason);
        }
        if (ini->imports < 0) {
            printf("-/-");
        } else {
            printf("%d/%d", ini->imports, tgt->imports);
        }
        printf(" time=%.1fms\n", (now_sec() - start) * 1e3);
        fflush(stdout);
    }
    return ok;
}

static int parse_list(const char *arg, int is_ops)
{
    char *copy = strdup(arg), *tok, *save;
    int i;

    for (tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (is_ops) {
            for (i = 0; i < OP_LAST; ++i) {
                if (!strcmp(tok, op_names[i])) {
                    opts.ops[i] = 1;
                    break;
                }
            }
            if (i == OP_LAST) {
                return -1;
            }
        } else {
            if (opts.num_sizes == MAX_SIZES) {
                return -1;
            }
            opts.sizes[opts.num_sizes++] = strtoull(tok, NULL, 0);
        }
    }
    free(copy);
    return 0;
}

static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s [-p PORT | -u PATH] [-t TIMEOUT] [-s SIZES] "
            "[-o OPS] [-1] [-P] [-S] [-A] [-W] [-B SIZE,ITERS] server | "
            "client HOST | pair\n"
            "  OPS: comma-separated subset of tag,put,get,am,am_auto\n"
            "  -1: only the client initiates; -P: one-sided check (the "
            "target of put/get,\n  the sender of tag/am does not progress "
            "while the data moves);\n"
            "  -S: fill/verify Gaudi memory through UCP (tag to self), not "
            "uct_gaudi_buf_copy\n"
            "  -A: the Gaudi buffer is allocated by ALLOC+MAP ioctls, not "
            "by UCX\n"
            "  -W: both sides sleep in ucp_worker_wait while they wait "
            "for UCP\n", prog);
    exit(2);
}

/* -B: the client's put bandwidth into the server's buffer */
static void run_bandwidth(void)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    double start, elapsed;
    unsigned i;

    snprintf(current_op, sizeof(current_op), "bandwidth");
    CHECK(opts.bw_size <= dev_buf_size, "-B %zu: larger than the buffer "
          "(%zu bytes: give the size in -s too)", opts.bw_size, dev_buf_size);
    ctl_sync(7);
    if (!opts.is_server) {
        request_wait_ok(ucp_put_nbx(peer_ep, dev_buf, opts.bw_size, peer_buf,
                                    peer_rkey, &param), "warm-up put");
        request_wait_ok(ucp_ep_flush_nbx(peer_ep, &param), "flush");
        start = now_sec();
        for (i = 0; i < opts.bw_iters; ++i) {
            request_wait_ok(ucp_put_nbx(peer_ep, dev_buf, opts.bw_size,
                                        peer_buf, peer_rkey, &param), "put");
        }
        request_wait_ok(ucp_ep_flush_nbx(peer_ep, &param), "flush");
        elapsed = now_sec() - start;
        printf("bandwidth put %zu: %.1f MB/s (%u puts in %.3f s)\n",
               opts.bw_size, opts.bw_size * (double)opts.bw_iters /
               elapsed / 1e6, opts.bw_iters, elapsed);
    }
    ctl_sync(8);    /* the server progresses its worker meanwhile */
}

static int run(void)
{
    int failed = 0, index = 0, dir, op, i, lanes_mine, lanes_peer;
    op_result_t done;
    char *text, *peer_text, stats[256];
    ucp_request_param_t param = {.op_attr_mask = 0};
    uint64_t len;
    size_t max_size = 4096 + SMALL_OFFSET;
    int32_t imports_mine, imports_peer;
    unsigned sleeps_peer;

    for (i = 0; i < opts.num_sizes; ++i) {
        if (opts.sizes[i] > max_size) {
            max_size = opts.sizes[i];
        }
    }
    dev_buf_size = max_size;
    host_buf     = malloc(max_size);
    host_chk     = malloc(max_size);
    CHECK((host_buf != NULL) && (host_chk != NULL), "out of host memory");

    ucp_setup();
    ucp_connect();
    printf("[%s] pid %d, Gaudi buffer of %zu bytes at %p; filled and "
           "checked with %s; gaudi_emu stats %s\n", role, getpid(),
           dev_buf_size, dev_buf,
           (gaudi_buf_copy != NULL) ? "uct_gaudi_buf_copy" : "UCP (self ep)",
           (emu_get_stats != NULL) ? "available" : "unavailable");
    fflush(stdout);

    for (dir = 0; dir < (opts.one_way ? 1 : 2); ++dir) {
        for (op = 0; op < OP_LAST; ++op) {
            if (!opts.ops[op]) {
                continue;
            }
            for (i = 0; i < opts.num_sizes; ++i) {
                failed += !run_op(op, opts.sizes[i], dir == 0, ++index);
            }
        }
    }

    if (opts.bw_iters > 0) {
        run_bandwidth();
    }

    /* which transports the endpoints use (after the traffic: wireup done) */
    snprintf(current_op, sizeof(current_op), "report");
    lanes_mine = ep_lanes(&text);
    ctl_send_blob(text, strlen(text));
    ctl_write(&lanes_mine, sizeof(lanes_mine));
    peer_text = ctl_recv_blob(&len);
    peer_text[len] = '\0';
    ctl_read(&lanes_peer, sizeof(lanes_peer));
    ctl_write(&wakeup_sleeps, sizeof(wakeup_sleeps));
    ctl_read(&sleeps_peer, sizeof(sleeps_peer));
    imports_mine = (emu_get_stats != NULL) ? emu_imports_run : -1;
    ctl_write(&imports_mine, sizeof(imports_mine));
    ctl_read(&imports_peer, sizeof(imports_peer));
    if (!opts.is_server) {
        char *line, *save;

        for (line = strtok_r(text, "\n", &save); line != NULL;
             line = strtok_r(NULL, "\n", &save)) {
            printf("lane client: %s\n", line);
        }
        for (line = strtok_r(peer_text, "\n", &save); line != NULL;
             line = strtok_r(NULL, "\n", &save)) {
            printf("lane server: %s\n", line);
        }
        printf("gaudi_ipc lanes: client=%d server=%d\n", lanes_mine,
               lanes_peer);
        if (opts.wakeup) {
            printf("wakeup sleeps client=%u server=%u\n", wakeup_sleeps,
                   sleeps_peer);
        }
        if (imports_mine < 0) {
            printf("gaudi_emu import_maps max: unavailable\n");
        } else {
            printf("gaudi_emu import_maps max: client=%d server=%d\n",
                   imports_mine, imports_peer);
        }
    }
    free(text);
    free(peer_text);

    /* cleanup, then the emulator's accounting of what is left */
    snprintf(current_op, sizeof(current_op), "cleanup");
    ucp_rkey_destroy(peer_rkey);
    ctl_sync(4);
    request_wait_ok(ucp_ep_close_nbx(peer_ep, &param), "close peer ep");
    request_wait_ok(ucp_ep_close_nbx(self_ep, &param), "close self ep");
    ctl_sync(5);
    CHECK(ucp_mem_unmap(context, dev_memh) == UCS_OK, "ucp_mem_unmap failed");
    if (opts.app_alloc) {
        app_free();
    }
    ctl_sync(6);
    /* the peer's unmap revoked our imports of its memory; its revocation
     * reaches our fd server asynchronously (and the peer waits for the
     * answer only a short grace): give it a moment on a loaded machine */
    emu_wait_imports_gone(3.0);
    emu_stats_str(stats, sizeof(stats));
    ctl_send_blob(stats, strlen(stats) + 1);
    free(ctl_recv_blob(&len)); /* keep the peer's worker alive until here */
    ucp_worker_destroy(worker);
    worker = NULL;
    ucp_cleanup(context);

    /* final verdicts, and the peer's accounting */
    done.ok = (failed == 0);
    snprintf(done.reason, sizeof(done.reason), "%s", stats);
    ctl_write(&done, sizeof(done));
    ctl_read(&done, sizeof(done));
    if (!opts.is_server) {
        printf("gaudi_emu after cleanup client: %s\n", stats);
        printf("gaudi_emu after cleanup server: %s\n", done.reason);
        printf("%s: %d operation(s) failed\n", failed ? "FAIL" : "PASS",
               failed);
        if (!done.ok && !failed) {
            printf("FAIL: the server reports failures\n");
        }
    }
    fflush(stdout);
    close(ctl_fd);
    return (failed || !done.ok) ? 1 : 0;
}

int main(int argc, char **argv)
{
    int c, sv[2], status, rc;
    const char *mode;
    pid_t child;

    setvbuf(stdout, NULL, _IOLBF, 0);
    while ((c = getopt(argc, argv, "p:u:t:s:o:1PSAWB:h")) != -1) {
        switch (c) {
        case 'p': opts.port    = atoi(optarg); break;
        case 'u': opts.unix_path = optarg; break;
        case 'B':
            if (sscanf(optarg, "%zu,%u", &opts.bw_size, &opts.bw_iters) != 2) {
                usage(argv[0]);
            }
            break;
        case 't': opts.timeout = atoi(optarg); break;
        case 's':
            if (parse_list(optarg, 0) < 0) {
                usage(argv[0]);
            }
            break;
        case 'o':
            if (parse_list(optarg, 1) < 0) {
                usage(argv[0]);
            }
            break;
        case '1': opts.one_way      = 1; break;
        case 'P': opts.passive      = 1; break;
        case 'S': opts.self_ep_copy = 1; break;
        case 'A': opts.app_alloc    = 1; break;
        case 'W': opts.wakeup       = 1; break;
        default:  usage(argv[0]);
        }
    }
    if (optind >= argc) {
        usage(argv[0]);
    }
    if (opts.num_sizes == 0) {
        parse_list("8,65536,4194304,16777216", 0);
    }
    for (c = 0; (c < OP_LAST) && !opts.ops[c]; ++c) {
    }
    if (c == OP_LAST) {
        parse_list("tag,put,get,am", 1);
    }

    signal(SIGALRM, alarm_handler);
    alarm(opts.timeout);

    mode = argv[optind];
    if (!strcmp(mode, "server") && (optind + 1 == argc)) {
        opts.is_server = 1;
        role           = "server";
        ctl_fd         = (opts.unix_path != NULL) ?
                         unix_control(opts.unix_path, 1) :
                         accept_one(opts.port);
        return run();
    } else if (!strcmp(mode, "client") && (optind + 2 == argc)) {
        opts.host = argv[optind + 1];
        ctl_fd    = (opts.unix_path != NULL) ?
                    unix_control(opts.unix_path, 0) :
                    connect_to(opts.host, opts.port);
        return run();
    } else if (!strcmp(mode, "pair") && (optind + 1 == argc)) {
        /* two processes, forked before any UCP object exists */
        CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair: %s",
              strerror(errno));
        fflush(stdout);
        child = fork();
        CHECK(child >= 0, "fork: %s", strerror(errno));
        if (child == 0) {
            close(sv[0]);
            opts.is_server = 1;
            role           = "server";
            ctl_fd         = sv[1];
            alarm(opts.timeout);
            _exit(run());
        }
        close(sv[1]);
        ctl_fd = sv[0];
        rc     = run();
        if (waitpid(child, &status, 0) != child) {
            printf("FAIL: waitpid: %s\n", strerror(errno));
            return 1;
        }
        if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0)) {
            printf("FAIL: server process %s %d\n",
                   WIFEXITED(status) ? "exited with" : "killed by signal",
                   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            return 1;
        }
        return rc;
    }

    usage(argv[0]);
    return 2;
}
