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
 * -R: the same by raw ioctl() calls, which UCX's hook of ioctl() sees (a
 * runtime at work after UCX started): gaudi_ipc exports it.
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
 * With -b put,tag also (or only, -b tag) ITERS tag messages of SIZE from
 * its Gaudi buffer, each received by the server into its own ("bandwidth
 * tag SIZE: ..."; a rendezvous send completes once the receiver has the
 * data). Each operation is waited for before the next is posted; a line
 * "bandwidth <op> SIZE each: min/median/max <us>" follows each figure, the
 * time of single operations (the load of the machine shows there).
 *
 * OPTIONS: -p PORT (13337), -u PATH, -t TIMEOUT seconds (120), -s SIZES
 * (comma separated, default 8,65536,4194304,16777216), -o OPS (comma
 * separated subset of tag,put,get,am,am_auto; default tag,put,get,am), -1
 * (only the client initiates), -P, -S, -A, -W, -B SIZE,ITERS, -b BW_OPS
 * (comma separated subset of put,tag; default put).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* UCX's config.h, included first, may have it */
#endif
#include "ucp/ucp_ctl.h"
#include "ucp/ucp_gaudi.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_SIZES      16
#define AM_ID          7
#define TAG_PEER       0x4000000000000000ull
#define TAG_SELF       0x8000000000000000ull
#define TAG_BW         0x2000000000000000ull  /* -b tag's messages */
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
    int               app_raw;      /* -R: ... by raw ioctl() (hooked) */
    int               wakeup;       /* -W: sleep in ucp_worker_wait */
    const char        *unix_path;   /* -u: control channel's socket */
    size_t            bw_size;      /* -B: bandwidth of puts this size */
    unsigned          bw_iters;
    int               bw_ops[OP_LAST]; /* -b: what -B measures (put, tag) */
    const char        *host;
} opts = {
    .port    = 13337,
    .timeout = 120,
};

static const char   *role = "client";
static ucp_app_t    app;
static ucp_ctl_t    ctl = {.fd = -1, .peer = "server"};
static int          ctl_passive; /* read without progressing the worker */
static ucp_ep_h     peer_ep;
static ucp_ep_h     self_ep;
static ucp_mem_h    dev_memh;
static char         *dev_buf;     /* Gaudi memory, device VA */
static ucp_gaudi_app_mem_t app_mem; /* -A: what the buffer is */
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


void ucp_app_die(const char *fmt, ...)
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

#define CHECK UCP_APP_CHECK

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

static void emu_resolve(void)
{
    emu_get_stats = (gaudi_emu_get_stats_func_t)ucp_gaudi_emu_symbol(
            GAUDI_EMU_STATS_SYMBOL);
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
    double deadline = ucp_app_now() + timeout;
    gaudi_emu_stats_t s;

    while (emu_stats(&s) && (s.import_maps > 0) &&
           (ucp_app_now() <= deadline)) {
        usleep(10000);
    }
}

/* ---- UCP and the control channel -------------------------------------- */

/* Progress the worker; sample the emulator's accounting at most every 10 ms
 * (gaudi_emu_get_stats takes the emulator's context locks and opens files:
 * sampled on every call it would slow its DMA worker down) */
static void progress_sample(ucp_app_t *a)
{
    static double next_sample;
    double now;

    ucp_worker_progress(a->worker);
    if (emu_get_stats != NULL) {
        now = ucp_app_now();
        if (now >= next_sample) {
            next_sample = now + 0.01;
            emu_sample();
        }
    }
}

/* Waiting for the peer on the control channel progresses the worker (the
 * peer may need us to progress before it can answer), but not while this
 * side is a passive target (-P) */
static int ctl_progress(void *arg)
{
    if ((app.worker == NULL) || ctl_passive) {
        return 0;
    }
    ucp_app_progress(&app);
    return 1;
}

/* Wait for @a what without progressing the worker: a passive target */
static void ctl_expect_passive(uint32_t what)
{
    ctl_passive = 1;
    ucp_ctl_expect(&ctl, what);
    ctl_passive = 0;
}

/* -W: when progress finds nothing to do, sleep until an interface signals
 * an event (ucp_worker_arm said UCS_OK); returns whether it slept. The
 * waits for requests call it while one is in flight (ucp_app_t::idle). */
static int wakeup_sleep(ucp_app_t *a)
{
    ucs_status_t status;

    if (!opts.wakeup || (ucp_worker_progress(a->worker) != 0) ||
        (ucp_worker_arm(a->worker) != UCS_OK)) {
        return 0;
    }

    status = ucp_worker_wait(a->worker);
    CHECK(status == UCS_OK, "ucp_worker_wait: %s", ucs_status_string(status));
    ++wakeup_sleeps;
    return 1;
}

/* Wait for @a request (NULL: done in place) as long as it takes */
static ucs_status_t request_wait(void *request)
{
    return ucp_app_wait(&app, &request, UCP_APP_FOREVER);
}

/* Wait for *@a request_p, but give up after @a seconds (the request stays
 * outstanding: *@a request_p is left set, else cleared) */
static ucs_status_t request_wait_deadline(void **request_p, double seconds)
{
    return ucp_app_wait(&app, request_p, ucp_app_now() + seconds);
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
        ucp_app_progress(&app);
        if (request != NULL) {
            status = ucp_request_check_status(request);
            if (status != UCS_INPROGRESS) {
                ucp_request_free(request);
                return status;
            }
        } else if (*flag) {
            return UCS_OK;
        }

        if (wakeup_sleep(&app)) {
            continue; /* the data's arrival is what wakes it */
        }

        if (deadline == 0) {
            if (ucp_ctl_pending(&ctl)) {
                deadline = ucp_app_now() + PEER_GRACE;
            }
        } else if (ucp_app_now() > deadline) {
            break;
        }
    }

    if (request != NULL) {
        ucp_request_cancel(app.worker, request);
        do {
            ucp_app_progress(&app);
        } while (ucp_request_check_status(request) == UCS_INPROGRESS);
        ucp_request_free(request);
    }
    return UCS_ERR_TIMED_OUT;
}


/* Move @a size bytes between host and Gaudi memory of this process (to the
 * device if @a to_dev): with uct_gaudi_buf_copy (the owned device's DMA
 * engine, whatever UCX_TLS says), or with -S through a tag message to our
 * own worker (UCP's gaudi_copy staging) */
static void self_copy(void *dst, const void *src, size_t size, int to_dev)
{
    ucs_status_t status;

    if (gaudi_buf_copy != NULL) {
        status = gaudi_buf_copy(dst, to_dev, src, !to_dev, size);
        CHECK(status == UCS_OK, "uct_gaudi_buf_copy(%zu bytes %s): %s", size,
              to_dev ? "to Gaudi" : "from Gaudi", ucs_status_string(status));
        return;
    }

    status = ucp_app_tag_xfer(&app, self_ep, 1, src, dst, size,
                              TAG_SELF | self_tag_sn++, NULL,
                              UCP_APP_FOREVER);
    CHECK(status == UCS_OK, "self tag message: %s",
          ucs_status_string(status));
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
    ucp_app_init(&app, UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_AM |
                       (opts.wakeup ? UCP_FEATURE_WAKEUP : 0));
    ucp_app_set_am_handler(&app, AM_ID, am_cb);
    emu_resolve();
    if (!opts.self_ep_copy) {
        gaudi_buf_copy = (gaudi_buf_copy_func_t)ucp_gaudi_lib_symbol(
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
    void *rreq;

    CHECK((out != NULL) && (in != NULL), "out of host memory");
    memset(out, 0x77, WARMUP_SIZE);
    /* not ucp_app_tag_xfer(): a failed send must fail at once, with its
     * status, not wait for a receive the peer's failed send never fills */
    rreq = ucp_tag_recv_nbx(app.worker, in, WARMUP_SIZE, TAG_PEER,
                            (ucp_tag_t)-1, &param);
    ucp_app_wait_ok(&app, ucp_tag_send_nbx(peer_ep, out, WARMUP_SIZE,
                                           TAG_PEER, &param),
                    "warm-up send");
    ucp_app_wait_ok(&app, rreq, "warm-up recv");
    CHECK(in[WARMUP_SIZE - 1] == 0x77, "warm-up message corrupted");
    ucp_app_wait_ok(&app, ucp_ep_flush_nbx(peer_ep, &param), "warm-up flush");
    ucp_ctl_sync(&ctl, 7);
    free(out);
    free(in);
}

static void ucp_connect(void)
{
    ucp_address_t *peer_addr;
    ucs_memory_type_t mem_type;
    uint64_t remote;
    ucs_status_t status;
    void *address;

    /* our Gaudi buffer, allocated on the owned device by UCX or (-A) by
     * the application itself, with the driver's own ioctls */
    if (opts.app_alloc) {
        app_mem.raw = opts.app_raw;
        ucp_gaudi_app_alloc(&app_mem, dev_buf_size);
        dev_buf = app_mem.address;
    }
    status = ucp_app_mem_map(&app, opts.app_alloc ? dev_buf : NULL,
                             dev_buf_size, UCS_MEMORY_TYPE_GAUDI, &dev_memh);
    CHECK(status == UCS_OK, "ucp_mem_map(%s %zu bytes, gaudi): %s",
          opts.app_alloc ? "the application's" : "ALLOCATE", dev_buf_size,
          ucs_status_string(status));
    mem_type = ucp_app_mem_query(dev_memh, &address, NULL);
    CHECK(mem_type == UCS_MEMORY_TYPE_GAUDI,
          "ucp_mem_map gave %s memory, not gaudi",
          ucs_memory_type_names[mem_type]);
    dev_buf = address;

    /* exchange addresses, buffers and rkeys */
    peer_addr = ucp_ctl_swap_address(&ctl, app.worker);
    remote    = (uintptr_t)dev_buf;
    ucp_ctl_swap(&ctl, &remote, &peer_buf, sizeof(remote),
                 "the buffer's address");
    peer_ep   = ucp_app_ep_create(&app, peer_addr, NULL, "peer");
    self_ep   = ucp_app_self_ep(&app);
    peer_rkey = ucp_ctl_swap_rkey(&ctl, app.context, dev_memh, peer_ep);
    free(peer_addr);

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
    ucp_ctl_expect(&ctl, 5);
    ucp_ctl_read(&ctl, &received, sizeof(received), "whether it received");
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
    ucp_ctl_expect(&ctl, 1); /* target ready */

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
        status = request_wait(req);
        break;
    case OP_PUT:
    case OP_GET:
        if (op == OP_PUT) {
            req = ucp_put_nbx(peer_ep, local, size, remote, peer_rkey, &param);
        } else {
            req = ucp_get_nbx(peer_ep, local, size, remote, peer_rkey, &param);
        }
        if (!opts.passive) {
            status = request_wait(req);
            if ((status == UCS_OK) && (op == OP_PUT)) {
                req    = ucp_ep_flush_nbx(peer_ep, &param);
                status = request_wait(req);
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
            ucp_ctl_signal(&ctl, 2); /* let the target progress, then finish */
            status = request_wait(req);
            if ((status == UCS_OK) && (op == OP_PUT)) {
                status = request_wait(ucp_ep_flush_nbx(peer_ep, &param));
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
    ucp_ctl_signal(&ctl, 2); /* initiator done */
}

/* The receiver of a tag message or AM: returns the status of the receive;
 * with -P, first waits PASSIVE_TIMEOUT for the data while the sender does
 * not progress, and tells the sender whether it arrived */
static ucs_status_t target_receive(op_t op, size_t size, char *local,
                                   uint32_t seed, void *rreq,
                                   op_result_t *res)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    double deadline           = ucp_app_now() + PASSIVE_TIMEOUT;
    int32_t received          = 1;
    ucs_status_t status;
    size_t i;

    if (opts.passive) {
        if (op == OP_TAG) {
            status = request_wait_deadline(&rreq, PASSIVE_TIMEOUT);
        } else {
            while (!am_state.arrived && (ucp_app_now() < deadline)) {
                ucp_app_progress(&app);
            }
            status = am_state.arrived ? UCS_OK : UCS_ERR_TIMED_OUT;
            if (am_state.arrived && am_state.rndv &&
                (am_state.length == size)) {
                rreq   = ucp_am_recv_data_nbx(app.worker, am_state.desc,
                                              local, size, &param);
                am_state.desc = NULL;
                status = request_wait_deadline(&rreq,
                                               deadline - ucp_app_now());
            }
        }
        received = (status != UCS_ERR_TIMED_OUT);
        ucp_ctl_signal(&ctl, 5);
        ucp_ctl_write(&ctl, &received, sizeof(received),
                      "whether it received");
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
            rreq          = ucp_am_recv_data_nbx(app.worker, am_state.desc,
                                                 local, size, &param);
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
        rreq = ucp_tag_recv_nbx(app.worker, local, size, tag, (ucp_tag_t)-1,
                                &param);
    }
    memset(&am_state, 0, sizeof(am_state));
    ucp_ctl_signal(&ctl, 1); /* ready */

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
        ucp_ctl_expect(&ctl, 2);
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
    start = ucp_app_now();
    if (initiator) {
        op_initiate(op, size, offset, seed, &mine);
    } else {
        op_target(op, size, offset, seed, &mine);
    }
    emu_sample();
    mine.imports = (emu_get_stats != NULL) ? emu_imports_max : -1;

    ucp_ctl_swap(&ctl, &mine, &peer, sizeof(mine), "the result");
    ucp_ctl_sync(&ctl, 3);

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
        printf(" time=%.1fms\n", (ucp_app_now() - start) * 1e3);
        fflush(stdout);
    }
    return ok;
}

/* Comma separated op names into @a ops (each one set), or (NULL) sizes */
static int parse_list(const char *arg, int *ops)
{
    char *copy = strdup(arg), *tok, *save;
    int i;

    for (tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (ops != NULL) {
            for (i = 0; i < OP_LAST; ++i) {
                if (!strcmp(tok, op_names[i])) {
                    ops[i] = 1;
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
            "[-o OPS] [-1] [-P] [-S] [-A|-R] [-W] [-B SIZE,ITERS] "
            "[-b BW_OPS] server | client HOST | pair\n"
            "  OPS: comma-separated subset of tag,put,get,am,am_auto\n"
            "  -1: only the client initiates; -P: one-sided check (the "
            "target of put/get,\n  the sender of tag/am does not progress "
            "while the data moves);\n"
            "  -S: fill/verify Gaudi memory through UCP (tag to self), not "
            "uct_gaudi_buf_copy\n"
            "  -A: the Gaudi buffer is allocated by ALLOC+MAP ioctls, not "
            "by UCX\n"
            "  -R: the same by raw ioctl() calls (UCX's hook sees them)\n"
            "  -B SIZE,ITERS: bandwidth of ITERS operations of SIZE, after "
            "the checks;\n  -b BW_OPS: which (put,tag; default put)\n"
            "  -W: both sides sleep in ucp_worker_wait while they wait "
            "for UCP\n", prog);
    exit(2);
}

/* -B: one operation of the client: a put of its buffer into the server's,
 * or a tag message of it (which the server receives into its own) */
static void bandwidth_op(op_t op, const char *what)
{
    ucp_request_param_t param = {.op_attr_mask = 0};

    if (op == OP_PUT) {
        ucp_app_wait_ok(&app, ucp_put_nbx(peer_ep, dev_buf, opts.bw_size,
                                          peer_buf, peer_rkey, &param), what);
    } else {
        ucp_app_wait_ok(&app, ucp_tag_send_nbx(peer_ep, dev_buf, opts.bw_size,
                                               TAG_BW, &param), what);
    }
}

static int double_cmp(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

/* -B: the client's bandwidth of @a op (put or tag) into the server's
 * buffer: one operation to warm up, then ITERS, each waited for; the
 * server progresses, or receives each tag message */
static void run_bandwidth(op_t op)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    double start, elapsed, t, *each;
    unsigned i;

    snprintf(current_op, sizeof(current_op), "bandwidth %s", op_names[op]);
    CHECK(opts.bw_size <= dev_buf_size, "-B %zu: larger than the buffer "
          "(%zu bytes: give the size in -s too)", opts.bw_size, dev_buf_size);
    each = calloc(opts.bw_iters, sizeof(*each));
    CHECK(each != NULL, "out of host memory");
    ucp_ctl_sync(&ctl, 7);
    if (opts.is_server) {
        for (i = 0; (op == OP_TAG) && (i <= opts.bw_iters); ++i) {
            ucp_app_wait_ok(&app, ucp_tag_recv_nbx(app.worker, dev_buf,
                                                   opts.bw_size, TAG_BW,
                                                   (ucp_tag_t)-1, &param),
                            "receive");
        }
    } else {
        bandwidth_op(op, "warm-up");
        ucp_app_wait_ok(&app, ucp_ep_flush_nbx(peer_ep, &param), "flush");
        start = ucp_app_now();
        for (i = 0; i < opts.bw_iters; ++i) {
            t = ucp_app_now();
            bandwidth_op(op, op_names[op]);
            each[i] = ucp_app_now() - t;
        }
        ucp_app_wait_ok(&app, ucp_ep_flush_nbx(peer_ep, &param), "flush");
        elapsed = ucp_app_now() - start;
        printf("bandwidth %s %zu: %.1f MB/s (%u %ss in %.3f s)\n",
               op_names[op], opts.bw_size, opts.bw_size *
               (double)opts.bw_iters / elapsed / 1e6, opts.bw_iters,
               (op == OP_PUT) ? "put" : "message", elapsed);
        qsort(each, opts.bw_iters, sizeof(*each), double_cmp);
        printf("bandwidth %s %zu each: min/median/max %.1f/%.1f/%.1f us\n",
               op_names[op], opts.bw_size, each[0] * 1e6,
               each[opts.bw_iters / 2] * 1e6,
               each[opts.bw_iters - 1] * 1e6);
    }
    free(each);
    ucp_ctl_sync(&ctl, 8);    /* the server progresses its worker meanwhile */
}

static int run(void)
{
    int failed = 0, index = 0, dir, op, i, lanes_mine, lanes_peer;
    op_result_t done         = {.ok = 0};
    char *text, *peer_text, stats[256];
    ucp_request_param_t param = {.op_attr_mask = 0};
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

    for (op = 0; (opts.bw_iters > 0) && (op < OP_LAST); ++op) {
        if (opts.bw_ops[op]) {
            run_bandwidth(op);
        }
    }

    /* which transports the endpoints use (after the traffic: wireup done) */
    snprintf(current_op, sizeof(current_op), "report");
    lanes_mine = ep_lanes(&text);
    ucp_ctl_send_blob(&ctl, text, strlen(text), "the lanes");
    peer_text = ucp_ctl_recv_blob(&ctl, NULL, "the lanes");
    ucp_ctl_swap(&ctl, &lanes_mine, &lanes_peer, sizeof(lanes_mine),
                 "the gaudi_ipc lanes");
    ucp_ctl_swap(&ctl, &wakeup_sleeps, &sleeps_peer, sizeof(sleeps_peer),
                 "the wake-up sleeps");
    imports_mine = (emu_get_stats != NULL) ? emu_imports_run : -1;
    ucp_ctl_swap(&ctl, &imports_mine, &imports_peer, sizeof(imports_mine),
                 "the import count");
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
    ucp_ctl_sync(&ctl, 4);
    ucp_app_wait_ok(&app, ucp_ep_close_nbx(peer_ep, &param),
                    "close peer ep");
    ucp_app_wait_ok(&app, ucp_ep_close_nbx(self_ep, &param),
                    "close self ep");
    ucp_ctl_sync(&ctl, 5);
    CHECK(ucp_mem_unmap(app.context, dev_memh) == UCS_OK,
          "ucp_mem_unmap failed");
    if (opts.app_alloc) {
        ucp_gaudi_app_free(&app_mem);
    }
    ucp_ctl_sync(&ctl, 6);
    /* the peer's unmap revoked our imports of its memory; its revocation
     * reaches our fd server asynchronously (and the peer waits for the
     * answer only a short grace): give it a moment on a loaded machine */
    emu_wait_imports_gone(3.0);
    ucp_gaudi_emu_stats_str(emu_get_stats, "pinned_bytes", stats,
                            sizeof(stats));
    ucp_ctl_send_blob(&ctl, stats, strlen(stats) + 1, "the accounting");
    /* keep the peer's worker alive until here */
    free(ucp_ctl_recv_blob(&ctl, NULL, "the accounting"));
    ucp_app_cleanup(&app);

    /* final verdicts, and the peer's accounting (ours out, its in) */
    done.ok = (failed == 0);
    snprintf(done.reason, sizeof(done.reason), "%s", stats);
    ucp_ctl_swap(&ctl, &done, &done, sizeof(done), "the verdict");
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
    ucp_ctl_close(&ctl);
    return (failed || !done.ok) ? 1 : 0;
}

static void be_server(void)
{
    opts.is_server = 1;
    role           = "server";
    ctl.peer       = "client";
}

int main(int argc, char **argv)
{
    int c, status, rc;
    const char *mode;
    pid_t child;

    setvbuf(stdout, NULL, _IOLBF, 0);
    while ((c = getopt(argc, argv, "p:u:t:s:o:1PSARWB:b:h")) != -1) {
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
            if (parse_list(optarg, NULL) < 0) {
                usage(argv[0]);
            }
            break;
        case 'o':
            if (parse_list(optarg, opts.ops) < 0) {
                usage(argv[0]);
            }
            break;
        case '1': opts.one_way      = 1; break;
        case 'P': opts.passive      = 1; break;
        case 'S': opts.self_ep_copy = 1; break;
        case 'A': opts.app_alloc    = 1; break;
        case 'R': opts.app_alloc    = 1; opts.app_raw = 1; break;
        case 'b':
            if (parse_list(optarg, opts.bw_ops) < 0) {
                usage(argv[0]);
            }
            break;
        case 'W': opts.wakeup       = 1; break;
        default:  usage(argv[0]);
        }
    }
    if (optind >= argc) {
        usage(argv[0]);
    }
    if (opts.num_sizes == 0) {
        parse_list("8,65536,4194304,16777216", NULL);
    }
    for (c = 0; (c < OP_LAST) && !opts.ops[c]; ++c) {
    }
    if (c == OP_LAST) {
        parse_list("tag,put,get,am", opts.ops);
    }
    for (c = 0; (c < OP_LAST) && !opts.bw_ops[c]; ++c) {
    }
    if (c == OP_LAST) {
        opts.bw_ops[OP_PUT] = 1;
    }
    if (opts.bw_ops[OP_GET] || opts.bw_ops[OP_AM] || opts.bw_ops[OP_AM_AUTO]) {
        usage(argv[0]);  /* -b: put and tag only */
    }

    signal(SIGALRM, alarm_handler);
    alarm(opts.timeout);

    mode         = argv[optind];
    ctl.progress = ctl_progress;
    app.progress = progress_sample;
    app.idle     = wakeup_sleep;
    if (!strcmp(mode, "server") && (optind + 1 == argc)) {
        be_server();
        if (opts.unix_path != NULL) {
            ucp_ctl_accept_unix(&ctl, opts.unix_path);
        } else {
            ucp_ctl_accept_tcp(&ctl, opts.port);
        }
        return run();
    } else if (!strcmp(mode, "client") && (optind + 2 == argc)) {
        /* the server may start later: wait for it up to half the time the
         * run has (the alarm's), so that a missing one is named */
        opts.host = argv[optind + 1];
        if (opts.unix_path != NULL) {
            ucp_ctl_connect_unix(&ctl, opts.unix_path, opts.timeout / 2.0);
        } else {
            ucp_ctl_connect_tcp(&ctl, opts.host, opts.port,
                                opts.timeout / 2.0);
        }
        return run();
    } else if (!strcmp(mode, "pair") && (optind + 1 == argc)) {
        /* two processes, forked before any UCP object exists */
        child = ucp_ctl_fork(&ctl);
        if (child == 0) {
            be_server();
            alarm(opts.timeout);
            _exit(run());
        }
        rc = run();
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
