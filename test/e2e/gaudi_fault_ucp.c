/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * One cell of the fault matrix (test/e2e/fault_matrix.sh, docs/faults.md):
 * two processes (fork; a socketpair carries addresses, rkeys and the
 * lockstep), UCP on Gaudi memory at both ends, one operation of one size
 * from the parent (the initiator) to the child (the target), while the
 * Gaudi emulator injects a fault in one of them.
 *
 *   gaudi_fault_ucp -o OP -s SIZE -f FAULT -w initiator|target [-e MODE]
 *                   [-t TIMEOUT] [-k]
 *
 * OP is tag, put, get or am (rendezvous AM); MODE is none (default) or peer
 * (UCP_ERR_HANDLING_MODE_PEER on both endpoints); FAULT is an emulator fault
 * spec (docs/emulator.md §9), armed with gaudi_emu_set_faults() in the
 * faulted process just before the operation and disarmed after it, so
 * counts start in the middle of the traffic ("none": no fault).
 *
 * Phases:
 *  A. the operation under the fault; every wait bounded (a request still
 *     outstanding after TIMEOUT/2 s is a hang); if it completed OK, the data
 *     is verified byte by byte where it landed;
 *  B. going on: after an error (or an endpoint error callback) both sides
 *     close their endpoints (force) and connect new ones; then the same
 *     operation again without fault (it may fail cleanly if a device is
 *     gone), and a host-memory tag message each way that must succeed;
 *     then, still holding UCP, both wait until no device of the node is
 *     being reset: the driver kills a process that keeps a device it
 *     resets (docs/emulator.md §8a), so one that kept its failed device
 *     dies here;
 *  C. cleanup; the emulator's accounting and the fd count must return to
 *     what they were before the first transfer of phase A.
 *
 * The parent prints one line:
 *   CELL op=.. size=.. side=.. mode=.. fault=.. fired=N a=<status>
 *        b=<status> outcome=<ok|error|FAIL> [why]
 * and exits non-zero for FAIL. Device memory is never dereferenced by the
 * CPU: patterns go in and out by tag messages to an endpoint to the
 * process's own worker (gaudi_copy), so that nothing but UCP holds the
 * device and everything must be released by ucp_cleanup().
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ucp/ucp_ctl.h"
#include "ucp/ucp_gaudi.h"

#include <ucs/debug/log_def.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define AM_ID        9
#define TAG_OP       0x1000
#define TAG_HOST     0x2000
#define TAG_SELF     0x3000
#define HOST_SIZE    (256 * 1024) /* rendezvous on posix: both progress */
#define GRACE        2.0          /* target: wait after the initiator ended */
#define WHY_SIZE     1024         /* a process's verdict, in words */

typedef enum { OP_TAG, OP_PUT, OP_GET, OP_AM, OP_LAST } op_t;
static const char *op_names[] = {"tag", "put", "get", "am"};

static struct {
    op_t       op;
    size_t     size;
    const char *fault;
    int        fault_target; /* the target process is faulted */
    int        peer_mode;
    unsigned   timeout;
    uint64_t   seed;         /* -r: soak with this seed */
    unsigned   duration;     /* -d: soak seconds */
    int        allow_known;  /* -k: UCP without the staged eager pack */
} opts = {.op = OP_LAST, .timeout = 60, .duration = 60};

/* what a side reports to the other after a phase */
typedef struct {
    int32_t status;      /* ucs_status_t of its part of the operation */
    int32_t bad;         /* 1: data verified wrong; 2: could not verify */
    int32_t ep_failed;   /* its endpoint error callback ran */
    int32_t pack_failed; /* UCP logged a failed memory-type pack */
    char    why[160];
} report_t;

static const char     *role;
static int            is_parent, is_initiator, is_faulted;
static ucp_app_t      app;
static ucp_ctl_t      ctl = {.fd = -1, .peer = "target"};
static ucp_ep_h       ep, self_ep;
static ucp_mem_h      memh, hmemh;     /* Gaudi and host buffer */
static ucp_rkey_h     rkey, hrkey;     /* the peer's */
static char           *dev_buf, *hst_buf, *host_buf, *host_chk;
static uint64_t       peer_buf, peer_hbuf;
static size_t         buf_size;        /* of each buffer */

/* The transfer being run: the operation, its size, and whether the
 * initiator's and the target's buffer is Gaudi memory (else host) */
static struct {
    op_t   op;
    size_t size;
    int    ini_dev, tgt_dev;
} cur;
static ucp_address_t  *peer_addr;
static int            ep_failed;
static gaudi_emu_get_stats_func_t emu_get_stats;
static gaudi_emu_set_faults_func_t emu_set_faults;
static gaudi_emu_resets_pending_func_t emu_resets_pending;
static int            pack_failed; /* see log_handler */
static struct {
    int    arrived;
    void   *desc;
    size_t length;
} am;

void ucp_app_die(const char *fmt, ...)
{
    va_list ap;

    printf("DIE [%s] ", role);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    _exit(1);
}

#define CHECK UCP_APP_CHECK

static void alarm_handler(int sig)
{
    static const char msg[] = "DIE timeout: the process was stuck\n";

    if (write(1, msg, sizeof(msg) - 1) < 0) {
        /* exiting anyway */
    }
    _exit(3);
}

/*
 * An unpatched UCP (1.13.1, 1.22) packs an eager message from device memory
 * with the memory-type transport (ucp_mem_type_pack) inside the transport's
 * send callback, which has no way to fail: when that read fails, UCP logs
 * "uct_ep_get_short() failed" and sends what the buffer held. Our core
 * patch stages the buffer before sending, so the send fails instead; a
 * run against an unpatched UCP (-k) tells this known limitation of its
 * core from a corruption of ours by this count. Without -k any corruption
 * fails the cell.
 */
static ucs_log_func_rc_t log_handler(const char *file, unsigned line,
                                     const char *function,
                                     ucs_log_level_t level,
                                     const ucs_log_component_config_t *comp,
                                     const char *message, va_list ap)
{
    if ((level == UCS_LOG_LEVEL_ERROR) &&
        !strcmp(message, "uct_ep_get_short() failed %s")) {
        ++pack_failed;
    }
    return UCS_LOG_FUNC_RC_CONTINUE;
}

/* This process's part in the operation: named in its errors, and the
 * other's in those of the control channel */
static void set_role(int initiator)
{
    is_initiator = initiator;
    role         = initiator ? "initiator" : "target";
    ctl.peer     = initiator ? "target" : "initiator";
}

/* Open fds, not counting the emulator's own state files (the emulated
 * kernel's side: a real driver keeps those in the kernel) */
static int fd_count(void)
{
    const char *state = getenv("UCX_GAUDI_EMU_STATE_DIR");

    return ucp_app_fd_count((state != NULL) ? state : "/ucx-gaudi-emu-");
}

/* Reading from the other process progresses the worker: the other side
 * may need us to progress (a rendezvous, a flush) to get there */
static int ctl_progress(void *arg)
{
    if (app.worker == NULL) {
        return 0;
    }
    ucp_worker_progress(app.worker);
    return 1;
}

/* ---- UCP ---------------------------------------------------------------- */

static double op_deadline(void)
{
    return ucp_app_now() + (opts.timeout / 4.0);
}

static void err_handler(void *arg, ucp_ep_h failed_ep, ucs_status_t status)
{
    ep_failed = 1;
}

static ucs_status_t am_cb(void *arg, const void *header, size_t header_length,
                          void *data, size_t length,
                          const ucp_am_recv_param_t *param)
{
    am.arrived = 1;
    am.length  = length;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
        am.desc = data;
        return UCS_INPROGRESS;
    }
    am.desc = NULL; /* eager: not what the matrix sends */
    return UCS_OK;
}

static void ep_connect(void)
{
    ep_failed = 0;
    ep        = ucp_app_ep_create(&app, peer_addr,
                                  opts.peer_mode ? err_handler : NULL,
                                  "peer");
}

/* Close @a e: with error handling by force (the peer may be gone from
 * it); without, UCP allows only a flushing close */
static void ep_close(ucp_ep_h e, int force)
{
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
        .flags        = force ? UCP_EP_CLOSE_FLAG_FORCE : 0
    };
    void *req;
    ucs_status_t status;

    req    = ucp_ep_close_nbx(e, &param);
    status = ucp_app_wait(&app, &req, op_deadline());
    CHECK(status != UCS_ERR_TIMED_OUT, "ep close hangs");
}

/* Close the endpoint to the peer and the peer's rkey */
static void ep_disconnect(void)
{
    if (rkey != NULL) {
        ucp_rkey_destroy(rkey);
        ucp_rkey_destroy(hrkey);
        rkey = hrkey = NULL;
    }
    ep_close(ep, opts.peer_mode);
    ep = NULL;
}

/* The peer's remote keys of its Gaudi and its host buffer */
static void rkey_exchange(void)
{
    rkey  = ucp_ctl_swap_rkey(&ctl, app.context, memh, ep);
    hrkey = ucp_ctl_swap_rkey(&ctl, app.context, hmemh, ep);
}

/* A host-memory tag message each way over the current endpoint: the
 * process can go on. Returns its status. */
static ucs_status_t host_pingpong(uint32_t seq)
{
    char *out = malloc(HOST_SIZE), *in = malloc(HOST_SIZE);
    ucs_status_t status;

    CHECK((out != NULL) && (in != NULL), "out of memory");
    memset(out, (int)seq, HOST_SIZE);
    memset(in, 0, HOST_SIZE);
    status = ucp_app_tag_xfer(&app, ep, 0, out, in, HOST_SIZE,
                              TAG_HOST + seq, NULL, op_deadline());
    CHECK(status != UCS_ERR_TIMED_OUT, "host tag message hangs");
    if ((status == UCS_OK) && (in[HOST_SIZE - 1] != (char)seq)) {
        status = UCS_ERR_IO_ERROR;
    }
    free(out);
    free(in);
    return status;
}

/* ---- data --------------------------------------------------------------- */

static uint8_t pattern(size_t i, uint32_t seed)
{
    uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u;

    return (uint8_t)((x >> 13) ^ (x >> 5) ^ seed);
}

/* Copy between host and Gaudi memory of this process through UCP */
static ucs_status_t self_copy(void *dst, const void *src)
{
    static uint32_t sn;
    ucs_status_t status;

    /* a send that fails before its data left (UCP with the core patch
     * fails one whose pack from Gaudi memory fails) cancels the receive */
    status = ucp_app_tag_xfer(&app, self_ep, 1, src, dst, cur.size,
                              TAG_SELF + sn++, NULL, op_deadline());
    CHECK(status != UCS_ERR_TIMED_OUT,
          "a copy to or from Gaudi memory in this process hangs");
    return status;
}

static int local_is_dev(void)
{
    return is_initiator ? cur.ini_dev : cur.tgt_dev;
}

static char *local_buf(void)
{
    return local_is_dev() ? dev_buf : hst_buf;
}

static ucs_status_t dev_fill(uint32_t seed)
{
    char *dst = local_is_dev() ? host_buf : hst_buf;
    size_t i;

    for (i = 0; i < cur.size; ++i) {
        dst[i] = pattern(i, seed);
    }
    return local_is_dev() ? self_copy(dev_buf, host_buf) : UCS_OK;
}

/* 0 right, 1 wrong, 2 could not read it back */
static int dev_check(uint32_t seed, char *why, size_t max)
{
    size_t i;

    const char *data = local_is_dev() ? host_chk : hst_buf;

    if (local_is_dev() && (self_copy(host_chk, dev_buf) != UCS_OK)) {
        snprintf(why, max, "cannot read the data back (device failed)");
        return 2;
    }
    for (i = 0; i < cur.size; ++i) {
        if ((uint8_t)data[i] != pattern(i, seed)) {
            snprintf(why, max, "byte %zu of %zu (%s memory) is 0x%02x, not "
                     "0x%02x", i, cur.size, local_is_dev() ? "Gaudi" : "host",
                     (uint8_t)data[i], pattern(i, seed));
            return 1;
        }
    }
    return 0;
}

/* The initiator's part: returns the operation's status */
static ucs_status_t op_initiate(double deadline)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    uint64_t hdr              = cur.size;
    uint64_t remote           = cur.tgt_dev ? peer_buf : peer_hbuf;
    ucp_rkey_h rk             = cur.tgt_dev ? rkey : hrkey;
    char *buf                 = local_buf();
    ucs_status_t status;
    void *req;

    switch (cur.op) {
    case OP_TAG:
        req = ucp_tag_send_nbx(ep, buf, cur.size, TAG_OP, &param);
        break;
    case OP_PUT:
        req = ucp_put_nbx(ep, buf, cur.size, remote, rk, &param);
        break;
    case OP_GET:
        req = ucp_get_nbx(ep, buf, cur.size, remote, rk, &param);
        break;
    default:
        param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        param.flags        = UCP_AM_SEND_FLAG_RNDV;
        req = ucp_am_send_nbx(ep, AM_ID, &hdr, sizeof(hdr), buf, cur.size,
                              &param);
        break;
    }
    status = ucp_app_wait(&app, &req, deadline);
    if ((status == UCS_OK) && (cur.op != OP_TAG) && (cur.op != OP_AM)) {
        param.op_attr_mask = 0;
        req    = ucp_ep_flush_nbx(ep, &param);
        status = ucp_app_wait(&app, &req, deadline);
    }
    return status;
}

/* The target's part: the receive of a tag message or AM, bounded by the
 * initiator's end (+ GRACE: an eager tail may trail the control channel) */
static ucs_status_t op_target(void *rreq, double deadline)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    double ended              = 0;
    ucs_status_t status;

    if ((cur.op == OP_PUT) || (cur.op == OP_GET)) {
        return UCS_OK; /* one-sided: nothing to wait for */
    }
    for (;;) {
        if ((cur.op == OP_AM) && am.arrived && (am.desc != NULL) &&
            (rreq == NULL)) {
            rreq    = ucp_am_recv_data_nbx(app.worker, am.desc, local_buf(),
                                           cur.size, &param);
            am.desc = NULL;
            if ((rreq == NULL) || UCS_PTR_IS_ERR(rreq)) {
                return (rreq == NULL) ? UCS_OK : UCS_PTR_STATUS(rreq);
            }
        }
        ucp_app_progress(&app);
        if (rreq != NULL) {
            status = ucp_request_check_status(rreq);
            if (status != UCS_INPROGRESS) {
                ucp_request_free(rreq);
                return status;
            }
        }
        if ((ended == 0) && ucp_ctl_pending(&ctl)) {
            ended = ucp_app_now();
        }
        if (((ended != 0) && (ucp_app_now() > ended + GRACE)) ||
            (ucp_app_now() > deadline)) {
            break;
        }
    }

    /* never arrived: cancel the receive (the application goes on) */
    if (rreq != NULL) {
        ucp_request_cancel(app.worker, rreq);
        status = ucp_app_wait(&app, &rreq, op_deadline());
        CHECK(status != UCS_ERR_TIMED_OUT, "a cancelled receive hangs");
    }
    return (ended != 0) ? UCS_ERR_CANCELED : UCS_ERR_TIMED_OUT;
}

/* One run of the operation; @a fault arms the fault in the faulted process
 * around it. Fills *@a mine and *@a peer. */
static uint64_t fired; /* faults injected in this process in phase A */

static void phase(uint32_t seed, int fault, report_t *mine, report_t *peer)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    gaudi_emu_stats_t stats;
    int receives_data = (is_initiator == (cur.op == OP_GET));
    ucs_status_t status, fill;
    double deadline;
    void *rreq = NULL;
    int32_t done;

    memset(mine, 0, sizeof(*mine));
    memset(&am, 0, sizeof(am));
    pack_failed = 0;
    /* the source gets the pattern, the destination a poison; when that
     * fails (this process's device is gone), the operation still runs, as
     * an application's would, and this side reports the fill's error */
    fill = dev_fill(receives_data ? ~seed : seed);
    CHECK((fill == UCS_OK) || !fault, "filling the buffer: %s",
          ucs_status_string(fill));
    if (!is_initiator && (cur.op == OP_TAG)) {
        rreq = ucp_tag_recv_nbx(app.worker, local_buf(), cur.size, TAG_OP,
                                (ucp_tag_t)-1, &param);
    }
    if (fault && is_faulted && (emu_set_faults(opts.fault) != 0)) {
        ucp_app_die("bad fault spec '%s'", opts.fault);
    }
    ucp_ctl_sync(&ctl, 10);

    /* the initiator says when it is done (the target stops waiting for
     * data then) */
    deadline = op_deadline();
    if (is_initiator) {
        status = op_initiate(deadline);
        done   = 1;
        ucp_ctl_write(&ctl, &done, sizeof(done), "the end of the operation");
    } else {
        status = op_target(rreq, deadline);
        ucp_ctl_read(&ctl, &done, sizeof(done), "the end of the operation");
    }
    if ((status == UCS_OK) || (status == UCS_ERR_CANCELED)) {
        status = (fill != UCS_OK) ? fill : status;
    }
    if (fault && is_faulted) {
        emu_get_stats(&stats); /* the count restarts with the next spec */
        fired = stats.faults_fired;
        emu_set_faults(NULL);
    }
    mine->status = (status == UCS_ERR_CANCELED) ? UCS_OK : status;
    if (status == UCS_ERR_TIMED_OUT) {
        snprintf(mine->why, sizeof(mine->why), "%s: %s did not complete in "
                 "%.0f s (hang)", role, op_names[cur.op],
                 opts.timeout / 4.0);
    }
    if (status == UCS_ERR_CANCELED) {
        mine->status = UCS_ERR_CANCELED; /* the data never came */
    }

    ucp_ctl_swap(&ctl, mine, peer, sizeof(*mine), "the report");
    if (receives_data && (mine->status == UCS_OK) && (peer->status == UCS_OK)) {
        mine->bad = dev_check(seed, mine->why, sizeof(mine->why));
    }
    mine->ep_failed   = ep_failed;
    mine->pack_failed = pack_failed;
    ucp_ctl_swap(&ctl, mine, peer, sizeof(*mine), "the report");
}

/* A buffer of buf_size bytes of @a mem_type, allocated by UCP */
static char *buffer_map(ucs_memory_type_t mem_type, ucp_mem_h *memh_p)
{
    ucs_status_t status;
    void *address;

    status = ucp_app_mem_map(&app, NULL, buf_size, mem_type, memh_p);
    CHECK(status == UCS_OK, "ucp_mem_map(%s): %s",
          ucs_memory_type_names[mem_type], ucs_status_string(status));
    ucp_app_mem_query(*memh_p, &address, NULL);
    return address;
}

static void setup(void)
{
    uint64_t va;

    ucp_app_init(&app, UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_AM);
    ucp_app_set_am_handler(&app, AM_ID, am_cb);
    dev_buf = buffer_map(UCS_MEMORY_TYPE_GAUDI, &memh);
    hst_buf = buffer_map(UCS_MEMORY_TYPE_HOST, &hmemh);

    emu_get_stats      = (gaudi_emu_get_stats_func_t)ucp_gaudi_emu_symbol(
            GAUDI_EMU_STATS_SYMBOL);
    emu_set_faults     = (gaudi_emu_set_faults_func_t)ucp_gaudi_emu_symbol(
            GAUDI_EMU_SET_FAULTS_SYMBOL);
    emu_resets_pending = (gaudi_emu_resets_pending_func_t)
            ucp_gaudi_emu_symbol(GAUDI_EMU_RESETS_PENDING_SYMBOL);
    CHECK((emu_get_stats != NULL) && (emu_set_faults != NULL) &&
          (emu_resets_pending != NULL),
          "the Gaudi emulator is not loaded (UCX_GAUDI_EMU_DEVICES?)");

    self_ep   = ucp_app_self_ep(&app);
    free(peer_addr);
    peer_addr = ucp_ctl_swap_address(&ctl, app.worker);
    va        = (uintptr_t)dev_buf;
    ucp_ctl_swap(&ctl, &va, &peer_buf, sizeof(va), "the Gaudi buffer");
    va        = (uintptr_t)hst_buf;
    ucp_ctl_swap(&ctl, &va, &peer_hbuf, sizeof(va), "the host buffer");
    ep_connect();
    rkey_exchange();
    /* wireup both ways before the measured phase */
    CHECK(host_pingpong(1) == UCS_OK, "warm-up message failed");
    ucp_ctl_sync(&ctl, 2);
}

/* Close everything of UCP; returns ucp_mem_unmap's status */
static ucs_status_t teardown(void)
{
    ucs_status_t unmap, hunmap;

    ep_disconnect();
    ep_close(self_ep, 0);
    ucp_ctl_sync(&ctl, 40);
    unmap  = ucp_mem_unmap(app.context, memh);
    hunmap = ucp_mem_unmap(app.context, hmemh);
    ucp_app_cleanup(&app);
    ucp_ctl_sync(&ctl, 41);
    return (unmap != UCS_OK) ? unmap : hunmap;
}

/*
 * Keep UCP (and whatever it holds of the device) until every reset of the
 * node is over. The driver kills a process that still holds a device being
 * reset, one second after the reset (without an eventfd) or after its
 * release watchdog (docs/emulator.md §8a): a process that kept its failed
 * device would die here, and the cell fails. With UCX_GAUDI_EMU_RESET_ON_
 * LOCKUP=n a device that timed out only needs a reset, done at the close.
 * 0, or 1 with @a why set if the resets did not end while this process
 * waited (the cell's bound).
 */
static int resets_over(char *why, size_t max)
{
    const char *lockup = getenv("UCX_GAUDI_EMU_RESET_ON_LOCKUP");
    double deadline    = ucp_app_now() + 30;

    if ((lockup != NULL) && (lockup[0] == 'n')) {
        return 0;
    }

    while (emu_resets_pending() > 0) {
        if (ucp_app_now() > deadline) {
            snprintf(why, max, "a device of the node was still being reset "
                     "30 s after the fault while this process kept UCP");
            return 1;
        }
        ucp_app_progress(&app);
        usleep(1000);
    }

    return 0;
}

/* After ucp_cleanup nothing of the device may remain (a device the fault
 * left in reset completes its reset then), nor an fd; 1 and @a why if
 * something did */
static int leak_check(int fds_before, ucs_status_t unmap, char *why,
                      size_t max)
{
    char after[200];
    gaudi_emu_stats_t s;
    int fds_after = fd_count();

    emu_get_stats(&s);
    if (!s.contexts && !s.dram_maps && !s.host_maps && !s.import_maps &&
        !s.cb_maps && !s.exports && !s.pinned_bytes &&
        (fds_after == fds_before)) {
        return 0;
    }
    ucp_gaudi_emu_stats_str(emu_get_stats, "pinned", after, sizeof(after));
    snprintf(why, max, "%s: leak after ucp_cleanup (ucp_mem_unmap: %s): %s, "
             "fds %d -> %d", role, ucs_status_string(unmap), after,
             fds_before, fds_after);
    return 1;
}

/* Both verdicts to the parent, which prints them: the child's failure is
 * the run's if the parent saw none */
static void verdicts(int *failed, char *why)
{
    char peer_why[WHY_SIZE];
    int peer_failed;

    ucp_ctl_swap(&ctl, failed, &peer_failed, sizeof(*failed), "the verdict");
    ucp_ctl_swap(&ctl, why, peer_why, WHY_SIZE, "the verdict");
    if (is_parent && !*failed && peer_failed) {
        *failed = 1;
        memcpy(why, peer_why, WHY_SIZE);
    }
}

static int run(void)
{
    report_t a_mine, a_peer, b_mine, b_peer;
    ucs_status_t a_status, b_status = UCS_OK, host, unmap = UCS_OK;
    char why[WHY_SIZE] = "";
    uint64_t peer_fired;
    int32_t fds_delta, peer_fds_delta;
    int fds_before, fds_after = 0, failed = 0, known;
    report_t *ini, *tgt, *bad_rep;

    fds_before = fd_count();
    setup();

    /* A: the operation under the fault */
    phase(0x1234, 1, &a_mine, &a_peer);
    /* both processes judge the same pair of reports the same way (the
     * initiator's first): they must take the same path from here */
    ini      = is_initiator ? &a_mine : &a_peer;
    tgt      = is_initiator ? &a_peer : &a_mine;
    a_status = (ini->status != UCS_OK) ? ini->status : tgt->status;
    bad_rep  = (ini->bad == 1) ? ini : (tgt->bad == 1) ? tgt : NULL;
    known    = (bad_rep != NULL) && ini->pack_failed && opts.allow_known;
    if (known) {
        snprintf(why, sizeof(why), "UCP's memory-type pack of the eager "
                 "message failed in the initiator and UCP 1.13.1 sent it "
                 "anyway: %s", bad_rep->why);
    } else if (bad_rep != NULL) {
        snprintf(why, sizeof(why), "silent corruption: %s", bad_rep->why);
        failed = 1;
    } else if ((ini->status == UCS_ERR_TIMED_OUT) ||
               (tgt->status == UCS_ERR_TIMED_OUT)) {
        snprintf(why, sizeof(why), "%s", (ini->status == UCS_ERR_TIMED_OUT) ?
                 ini->why : tgt->why);
        failed = 1;
    }
    if (failed) {
        /* a request may still be outstanding: no orderly way on */
        goto out;
    }

    /* B: go on; after an error, on new endpoints */
    if ((a_status != UCS_OK) || a_mine.ep_failed || a_peer.ep_failed) {
        ep_disconnect();
        ucp_ctl_sync(&ctl, 20);
        ep_connect();
        rkey_exchange();
        ucp_ctl_sync(&ctl, 21);
    }
    phase(0x5678, 0, &b_mine, &b_peer);
    ini      = is_initiator ? &b_mine : &b_peer;
    tgt      = is_initiator ? &b_peer : &b_mine;
    b_status = (ini->status != UCS_OK) ? ini->status : tgt->status;
    bad_rep  = (ini->bad == 1) ? ini : (tgt->bad == 1) ? tgt : NULL;
    if (bad_rep != NULL) {
        known |= ini->pack_failed && opts.allow_known;
        snprintf(why, sizeof(why), "phase B: %s%s", known ?
                 "(an unpatched UCP's eager pack) " : "silent corruption: ",
                 bad_rep->why);
        failed = !known;
    } else if ((ini->status == UCS_ERR_TIMED_OUT) ||
               (tgt->status == UCS_ERR_TIMED_OUT)) {
        snprintf(why, sizeof(why), "phase B: %s", (ini->status ==
                 UCS_ERR_TIMED_OUT) ? ini->why : tgt->why);
        failed = 1;
    }
    if (failed) {
        goto out;
    }
    if ((b_status != UCS_OK) || b_mine.ep_failed || b_peer.ep_failed) {
        ep_disconnect();
        ucp_ctl_sync(&ctl, 30);
        ep_connect();
        ucp_ctl_sync(&ctl, 31);
    }
    host = host_pingpong(2);
    ucp_ctl_sync(&ctl, 32);
    if (host != UCS_OK) {
        snprintf(why, sizeof(why), "host memory after the fault: %s",
                 ucs_status_string(host));
        failed = 1;
    }

    /* nobody is killed for the device it keeps */
    if (resets_over(why, sizeof(why))) {
        failed = 1;
        goto out;
    }
    ucp_ctl_sync(&ctl, 33);

    /* C: cleanup and accounting */
    unmap     = teardown();
    fds_after = fd_count();
    failed    = leak_check(fds_before, unmap, why, sizeof(why));

out:
    ucp_ctl_swap(&ctl, &fired, &peer_fired, sizeof(fired), "the faults fired");
    fds_delta = failed ? 0 : (fds_after - fds_before);
    ucp_ctl_swap(&ctl, &fds_delta, &peer_fds_delta, sizeof(fds_delta),
                 "the fd count");
    verdicts(&failed, why);
    if (is_parent) {
        printf("CELL op=%s size=%zu side=%s mode=%s fault=%s fired=%llu "
               "fds=%+d/%+d a=%s b=%s outcome=%s%s%s\n", op_names[opts.op],
               opts.size, opts.fault_target ? "target" : "initiator",
               opts.peer_mode ? "peer" : "none", opts.fault,
               (unsigned long long)(is_faulted ? fired : peer_fired),
               fds_delta, peer_fds_delta,
               failed ? "-" : ucs_status_string(a_status),
               failed ? "-" : ucs_status_string(b_status),
               failed ? "FAIL" : known ? "known" :
               (a_status == UCS_OK) ? "ok" : "error",
               (failed || known) ? " " : "", (failed || known) ? why : "");
    }
    fflush(stdout);
    return failed;
}

/* ---- soak: seeded random traffic with random faults -------------------- */

/* Faults the soak draws from (with "none" three times as likely as each) */
static const char *soak_faults[] = {
    "fail:cs:1:EAGAIN", "fail:cs:1+:EIO", "fail:wait_cs:1:EINTR",
    "fail:wait_cs:1+:EIO", "fail:memory:1+:ENOMEM", "cs_timeout:1",
    "cs_abort:1", "reset:1", "cs_timeout:3", "reset:5",
    /* a transient bad-address answer to any driver call: the eager pack
     * of device memory must fail its send, never send what it failed to
     * read (issue 20's mismatch) */
    "fail:any:1:EFAULT", "fail:any:4:EFAULT"
};

static uint64_t soak_rand(uint64_t *state)
{
    /* xorshift64*: both processes draw the same sequence from the seed */
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 2685821657736338717ull;
}

#define SOAK_MAX_SIZE (16ul << 20)

static int soak(void)
{
    uint64_t rng = opts.seed ? opts.seed : 1;
    unsigned iters = 0, n_ok = 0, n_err = 0, n_known = 0, n_recover = 0;
    unsigned n_faulted = 0, n_dev = 0;
    report_t mine, peer, *ini, *tgt;
    char why[WHY_SIZE] = "";
    double end = ucp_app_now() + opts.duration;
    int fds_before, failed = 0, nf, pick, bits;
    ucs_status_t unmap;
    int32_t go;

    fds_before = fd_count();
    setup();
    for (;;) {
        /* the parent keeps the time; the child follows */
        go = is_parent ? (ucp_app_now() < end) : 0;
        if (is_parent) {
            ucp_ctl_write(&ctl, &go, sizeof(go), "whether to go on");
        } else {
            ucp_ctl_read(&ctl, &go, sizeof(go), "whether to go on");
        }
        if (!go) {
            break;
        }

        /* 1 B .. 16 MiB, log-uniform; host or Gaudi memory at each end */
        bits         = soak_rand(&rng) % 25;
        cur.op       = (op_t)(soak_rand(&rng) % OP_LAST);
        cur.size     = ((size_t)1 << bits) +
                       (soak_rand(&rng) % ((size_t)1 << bits));
        cur.size     = (cur.size > SOAK_MAX_SIZE) ? SOAK_MAX_SIZE : cur.size;
        cur.ini_dev  = soak_rand(&rng) & 1;
        cur.tgt_dev  = soak_rand(&rng) & 1;
        set_role(is_parent == (int)(soak_rand(&rng) & 1));
        nf           = sizeof(soak_faults) / sizeof(soak_faults[0]);
        pick         = soak_rand(&rng) % (nf * 4);
        opts.fault   = (pick < nf) ? soak_faults[pick] : "none";
        is_faulted   = (pick < nf) &&
                       ((int)(soak_rand(&rng) & 1) == is_initiator);
        n_faulted   += (pick < nf);
        n_dev       += cur.ini_dev || cur.tgt_dev;

        if (is_parent && getenv("FAULT_UCP_TRACE")) {
            printf("iteration %u: %s %zu B %s %s -> %s, fault %s in the %s\n",
                   iters + 1, op_names[cur.op], cur.size,
                   is_initiator ? "parent" : "child",
                   cur.ini_dev ? "gaudi" : "host",
                   cur.tgt_dev ? "gaudi" : "host", opts.fault,
                   (is_faulted == is_initiator) ? "initiator" : "target");
        }
        phase(0x9e3779b9u * (++iters), pick < nf, &mine, &peer);
        ini = is_initiator ? &mine : &peer;
        tgt = is_initiator ? &peer : &mine;
        if ((ini->bad == 1) || (tgt->bad == 1)) {
            if (!(ini->pack_failed && opts.allow_known)) {
                snprintf(why, sizeof(why), "iteration %u (%s %zu B, %s -> "
                         "%s, fault %s): silent corruption: %s", iters,
                         op_names[cur.op], cur.size,
                         cur.ini_dev ? "gaudi" : "host",
                         cur.tgt_dev ? "gaudi" : "host", opts.fault,
                         (ini->bad == 1) ? ini->why : tgt->why);
                failed = 1;
                break;
            }
            ++n_known;
        } else if ((ini->status == UCS_ERR_TIMED_OUT) ||
                   (tgt->status == UCS_ERR_TIMED_OUT)) {
            snprintf(why, sizeof(why), "iteration %u (%s %zu B, fault %s): "
                     "%s", iters, op_names[cur.op], cur.size, opts.fault,
                     (ini->status == UCS_ERR_TIMED_OUT) ? ini->why :
                     tgt->why);
            failed = 1;
            break;
        } else if ((ini->status == UCS_OK) && (tgt->status == UCS_OK) &&
                   !ini->ep_failed && !tgt->ep_failed &&
                   (ini->bad == 0) && (tgt->bad == 0)) {
            /* (bad 2: the data could not be read back, the device failed
             * after the operation: an error, the application starts over) */
            ++n_ok;
            continue;
        } else {
            ++n_err;
        }

        /* an error: the application starts over (the device of a process
         * whose context closes completes its reset) and must have leaked
         * nothing */
        ++n_recover;
        if (resets_over(why, sizeof(why))) {
            failed = 1;
            break;
        }
        ucp_ctl_sync(&ctl, 40);
        unmap = teardown();
        if (leak_check(fds_before, unmap, why, sizeof(why))) {
            failed = 1;
            break;
        }
        setup();
    }
    if (!failed) {
        unmap  = teardown();
        failed = leak_check(fds_before, unmap, why, sizeof(why));
    }

    verdicts(&failed, why);
    if (is_parent) {
        printf("SOAK seed=%llu seconds=%u iterations=%u ok=%u error=%u "
               "known=%u faulted=%u with_gaudi=%u restarts=%u outcome=%s%s%s\n",
               (unsigned long long)opts.seed - 1, opts.duration, iters, n_ok,
               n_err, n_known, n_faulted, n_dev, n_recover,
               failed ? "FAIL" : "ok", failed ? " " : "", failed ? why : "");
    }
    fflush(stdout);
    return failed;
}

static void usage(void)
{
    fprintf(stderr, "usage: gaudi_fault_ucp -o tag|put|get|am -s SIZE "
            "-f FAULT|none -w initiator|target [-e none|peer] [-t TIMEOUT] [-k]\n"
            "       gaudi_fault_ucp -r SEED [-d SECONDS] [-e none|peer] "
            "[-t TIMEOUT] [-k]    (soak)\n"
            "  -k: against an unpatched UCP, report its eager-pack corruption"
            " as known\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int c, status, rc, i;
    pid_t child;

    setvbuf(stdout, NULL, _IOLBF, 0);
    while ((c = getopt(argc, argv, "o:s:f:w:e:t:r:d:k")) != -1) {
        switch (c) {
        case 'k': opts.allow_known = 1; break;
        case 'r': opts.seed     = strtoull(optarg, NULL, 0) + 1; break;
        case 'd': opts.duration = atoi(optarg); break;
        case 'o':
            for (i = 0; (i < OP_LAST) && strcmp(optarg, op_names[i]); ++i) {
            }
            opts.op = (op_t)i;
            break;
        case 's': opts.size    = strtoull(optarg, NULL, 0); break;
        case 'f': opts.fault   = optarg; break;
        case 't': opts.timeout = atoi(optarg); break;
        case 'w':
            opts.fault_target = !strcmp(optarg, "target");
            if (!opts.fault_target && strcmp(optarg, "initiator")) {
                usage();
            }
            break;
        case 'e':
            opts.peer_mode = !strcmp(optarg, "peer");
            if (!opts.peer_mode && strcmp(optarg, "none")) {
                usage();
            }
            break;
        default:
            usage();
        }
    }
    if (((opts.seed == 0) && ((opts.op == OP_LAST) || (opts.size == 0) ||
                              (opts.fault == NULL))) ||
        (opts.timeout < 4) || (optind != argc)) {
        usage();
    }

    /* a cell moves one operation of one size between Gaudi buffers; the
     * soak any size up to 16 MiB between any buffers */
    buf_size     = opts.seed ? SOAK_MAX_SIZE : opts.size;
    cur.op       = opts.op;
    cur.size     = opts.size;
    cur.ini_dev  = cur.tgt_dev = 1;
    host_buf     = malloc(buf_size);
    host_chk     = malloc(buf_size);
    CHECK((host_buf != NULL) && (host_chk != NULL), "out of memory");
    ucs_log_push_handler(log_handler);
    if (opts.seed) {
        opts.fault = "none";
    }

    signal(SIGALRM, alarm_handler);
    ctl.progress = ctl_progress;
    child        = ucp_ctl_fork(&ctl);
    is_parent    = (child != 0);
    set_role(is_parent);
    is_faulted   = strcmp(opts.fault, "none") &&
                   (is_initiator != opts.fault_target);
    if (!strcmp(opts.fault, "none")) {
        opts.fault = "none";
    }
    alarm(opts.seed ? (opts.duration + opts.timeout) : opts.timeout);
    if (!is_parent) {
        /* never outlive the initiator: a stuck target would hold its
         * device for the next cell */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1) {
            _exit(1);
        }
        _exit(opts.seed ? soak() : run());
    }

    rc = opts.seed ? soak() : run();
    if (waitpid(child, &status, 0) != child) {
        printf("CELL FAIL: waitpid: %s\n", strerror(errno));
        return 1;
    }
    if (!WIFEXITED(status) || (WEXITSTATUS(status) > 1)) {
        printf("CELL FAIL: the target process %s %d\n",
               WIFEXITED(status) ? "exited with" : "was killed by signal",
               WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return 1;
    }
    return rc;
}
