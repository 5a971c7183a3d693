/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * A foreign runtime's own Gaudi memory under UCP (issue 27): the
 * application's runtime (SynapseAI, here this program) opens the compute
 * node before UCP's init, UCX adopts that fd, and the runtime goes on
 * allocating, mapping, unmapping and freeing device memory by raw ioctl()
 * calls, which UCX's hook of ioctl() learns. UCP must see every live
 * mapping as Gaudi memory (the memtype cache), move it byte-exact, export
 * it to peers, and revoke the peers before the runtime's UNMAP.
 *
 *   gaudi_app_ucp [OPTIONS] cycles N        one process, N random steps
 *   gaudi_app_ucp [OPTIONS] pair-cycles M   two processes (fork), M cycles
 *
 * The runtime: the module UCX will load (GAUDI_UCT_MODULE_FILE, from
 * UCX_PLUGIN_PATH, UCX_MODULE_DIR or the "ucx" directory beside libucs) is
 * dlopen()ed RTLD_GLOBAL before UCP's init, its driver library initialized
 * (uct_gaudi_lib_init: the emulator too when UCX_GAUDI_EMU_DEVICES > 0),
 * and the first compute node that opens is opened through its driver seam
 * (under the emulator the node is no file the kernel knows: a plain open()
 * cannot reach it). After UCP's init the process must hold exactly that one
 * compute fd: UCX adopted it rather than opening a device of its own
 * ("adopted fd N" line; UCX's info line says "chosen by the compute node
 * this process already had open"). Memory requests are then raw
 * ioctl(fd, HL_IOCTL_MEMORY, &args) calls. Under the emulator only UCX's
 * hook serves them (the fd is a plain file): a raw request that fails with
 * ENOTTY ends the program with "FAIL ...: raw ioctl not served: the hook is
 * off" and exit status 4 (UCX_GAUDI_APP_MEMORY=n). A device that resets
 * after another process released it (EAGAIN) is waited for up to 5 s. The
 * fd stays open to the end.
 *
 * cycles N: N random steps over a truth table of at most -n handles:
 * ALLOC (4 KiB..64 MiB, about log-uniform), MAP of an unmapped handle,
 * UNMAP of a mapped one, FREE of an unmapped one, and re-alloc (UNMAP +
 * FREE of a mapped handle, then ALLOC + MAP of the same size with its old
 * VA as the hint: the VA repeats, counted). After every MAP and UNMAP the
 * memtype cache (ucs_memtype_cache_lookup, what UCP asks first) must say
 * Gaudi for every live mapping, and not Gaudi for a malloc()ed host buffer
 * of the touched mapping's size. Every -k steps, a real UCP transfer on a live
 * mapping (a window of at most -x bytes): the device's DMA engine
 * (uct_gaudi_buf_copy) writes a pattern that UCP reads into host memory,
 * then UCP writes another that the DMA engine reads back; alternately by
 * tag messages to the process's own worker (UCP detects the memory type of
 * the device VA) and by ucp_get_nbx/ucp_put_nbx on an rkey of the mapping
 * ucp_mem_map()ed with no memory type given (it must come out Gaudi; it is
 * ucp_mem_unmap()ed before the raw UNMAP). A device VA taken for host
 * memory would crash (not mapped in host memory) or corrupt: every wrong
 * type or byte counts as a misdetection. At the end everything is unmapped
 * and freed, and the emulator's accounting and the fd count must be back
 * to the baseline taken before the steps (after one warm-up transfer of
 * each kind, which sets up what UCP keeps for the run).
 *
 * pair-cycles M: the parent exports, the child imports (a socketpair
 * carries addresses, rkeys and the lockstep). Per cycle the exporter
 * ALLOCs and MAPs a buffer by raw ioctl (every other cycle with the last
 * VA as the hint), writes a per-cycle pattern into a window of it with the
 * DMA engine, ucp_mem_map()s it (no memory type given), and sends the
 * packed rkey; the importer unpacks it, ucp_get_nbx()es the window into
 * host memory and checks the pattern (a stale import of an earlier cycle's
 * buffer at the same VA shows an older pattern: counted as stale), notes
 * whether the emulator counts a live import of the peer's memory in it
 * (gaudi_ipc carried the get) before and after it destroys the rkey (the
 * import is cached: the UNMAP must revoke it), and acks; the exporter
 * ucp_mem_unmap()s, then UNMAPs by raw ioctl (must return 0; its time is
 * the revocation of the importer) and FREEs. At the end both processes'
 * accounting and fd counts must be back to their baselines (taken after a
 * first cycle: the emulator keeps its view of the peer's HBM open from the
 * first import on), with no import or export left.
 *
 * Output (what test/e2e/app_memory.sh reads; ROLE is app, exporter or
 * importer, SIDE the same but the importer's lines come from the exporter):
 *   [ROLE] runtime: fd F (PATH) opened before UCP's init, module MODULE
 *   [ROLE] adopted fd F: the only compute fd after UCP's init
 *   cycles N steps=.. alloc=.. map=.. unmap=.. free=.. realloc=..
 *          va_reuse=R/T lookups=L misdetections=M transfers=X tag=.. rma=..
 *          bytes=.. max_live=.. time=S
 *   pair M cycles=.. stale=S errors=E va_reuse=R/T imported=I cached=C
 *          left=L unmap_median_us=.. unmap_max_us=.. time=S rate=..
 *   gaudi_ipc lanes: exporter=.. importer=..
 *   counters SIDE baseline: ...   counters SIDE end: ...
 *   fds SIDE baseline=.. end=..
 *   MISDETECTION/STALE/ERROR lines (the first 10 of each kind)
 *   PASS, or FAIL [ROLE] STEP: REASON lines
 *
 * OPTIONS: -k K (a transfer every K steps, 500), -n LIVE (at most LIVE
 * handles, 12), -x BYTES (transfer window, 1 MiB), -S SEED (random seed;
 * default from the time, printed), -t TIMEOUT (s, 300).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* UCX's config.h, included first, may have it */
#endif
#include "ucp/ucp_ctl.h"
#include "ucp/ucp_gaudi.h"

#include <uct/gaudi/drv/gaudi_discover.h>
#include <ucs/memory/memtype_cache.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SIZE_MAX_ALLOC  (64ul << 20)
#define PAGE            4096ul
#define TAG_SELF        0x8000000000000000ull
#define TAG_WARMUP      0x4000000000000000ull
#define EXIT_HOOK_OFF   4
#define MAX_REPORTED    10   /* failures of a kind described one by one */
#define MAX_LIVE        64
#define RESET_WAIT      5.0  /* seconds a device that resets is waited for */

typedef ucs_status_t (*gaudi_buf_copy_func_t)(void *dst, int dst_is_dev,
                                              const void *src, int src_is_dev,
                                              size_t length);

/* One ALLOC handle of the runtime: the truth table */
typedef struct {
    uint64_t handle;
    size_t   size;    /* asked of ALLOC */
    int      mapped;
    uint64_t va;      /* while mapped */
} app_buf_t;

/* What the exporter tells the importer of a cycle */
typedef struct {
    int64_t  cycle;   /* -1: no more */
    uint64_t va;
    uint64_t size;
    uint64_t off;     /* the window the pattern is in */
    uint64_t len;
    uint32_t seed;
    uint32_t pad;
} cycle_msg_t;

/* The importer's answer */
typedef struct {
    int32_t ok;        /* the get completed */
    int32_t stale;     /* the window did not hold this cycle's pattern */
    int32_t imported;  /* the emulator counted a live import after the get */
    int32_t left;      /* imports still live before the get */
    int32_t cached;    /* ... and after the rkey was destroyed: the
                          exporter's UNMAP must revoke it */
    int32_t pad;
    int64_t bad_off;
    char    reason[160];
} cycle_ack_t;

/* A side's final report, sent to the parent */
typedef struct {
    int32_t ok;
    int32_t fds_base, fds_end;
    int32_t lanes;     /* gaudi_ipc lanes of the endpoint to the peer */
    char    base[200], end[200];
    char    reason[200];
} side_report_t;

static struct {
    unsigned k;
    unsigned max_live;
    size_t   xfer_max;
    uint64_t seed;
    unsigned timeout;
} opts = {
    .k        = 500,
    .max_live = 12,
    .xfer_max = 1ul << 20,
    .seed     = 0,
    .timeout  = 300
};

static const char *role = "app";
static char       current_step[128] = "setup";
static ucp_app_t  app;
static ucp_ctl_t  ctl = {.fd = -1, .peer = "peer"};
static ucp_ep_h   self_ep;
static ucp_ep_h   peer_ep;
static uint8_t    *host_src, *host_dst;
static uint64_t   rng_state;
static uint64_t   tag_sn;

/* The foreign runtime: the module it loaded, its device fd */
static struct {
    void                      *module;
    char                      module_path[PATH_MAX];
    const uct_gaudi_drv_ops_t *ops;
    int                       fd;
    char                      path[UCT_GAUDI_PATH_MAX];
    unsigned long             mem_request;
} rt = {.fd = -1};

static gaudi_emu_get_stats_func_t emu_get_stats;
static gaudi_buf_copy_func_t      gaudi_buf_copy;
static char                       fds_at_baseline[4096];


void ucp_app_die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    printf("FAIL [%s] %s: ", role, current_step);
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

    len = snprintf(msg, sizeof(msg), "FAIL [%s] %s: timeout after %u s\n",
                   role, current_step, opts.timeout);
    if (write(1, msg, len) < 0) {
        /* nothing more to do */
    }
    _exit(3);
}

static void step_name(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(current_step, sizeof(current_step), fmt, ap);
    va_end(ap);
}


/* ---- random numbers (xorshift64*: reproducible from the printed seed) -- */

static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static uint64_t rnd_below(uint64_t n)
{
    return (n == 0) ? 0 : rnd() % n;
}

/* 4 KiB..64 MiB, about log-uniform: small and large sizes alike, most of
 * them no whole number of pages */
static size_t rnd_size(void)
{
    unsigned shift = 12 + rnd_below(25 - 12 + 1); /* [2^shift, 2^(shift+1)) */

    return (1ul << shift) + rnd_below(1ul << shift);
}

static uint8_t pattern_byte(size_t i, uint32_t seed)
{
    uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u +
                 (uint32_t)(i >> 16);

    return (uint8_t)((x >> 13) ^ (x >> 5) ^ seed);
}

static void pattern_fill(uint8_t *buf, size_t len, uint32_t seed)
{
    size_t i;

    for (i = 0; i < len; ++i) {
        buf[i] = pattern_byte(i, seed);
    }
}

/* The first byte of @a buf that is not pattern @a seed, -1 none */
static int64_t pattern_check(const uint8_t *buf, size_t len, uint32_t seed)
{
    size_t i;

    for (i = 0; i < len; ++i) {
        if (buf[i] != pattern_byte(i, seed)) {
            return i;
        }
    }
    return -1;
}


/* ---- the foreign runtime ------------------------------------------------ */

/* Load the module from @a dir, if it is there, as a runtime loads its
 * driver library: for good (no dlclose), its symbols global */
static int runtime_dlopen(const char *dir)
{
    const char *exts[] = {".0", ""};
    unsigned i;

    for (i = 0; i < sizeof(exts) / sizeof(exts[0]); ++i) {
        snprintf(rt.module_path, sizeof(rt.module_path), "%s/%s%s", dir,
                 GAUDI_UCT_MODULE_FILE, exts[i]);
        if (access(rt.module_path, R_OK) != 0) {
            continue;
        }
        rt.module = dlopen(rt.module_path, RTLD_NOW | RTLD_GLOBAL);
        CHECK(rt.module != NULL, "dlopen(%s): %s", rt.module_path,
              dlerror());
        return 1;
    }
    return 0;
}

/* The module UCX will load, from where UCX looks for it: the plugin path,
 * UCX_MODULE_DIR, the "ucx" directory beside libucs */
static void runtime_load_module(void)
{
    char *list, *dir, *save, libucs[PATH_MAX];
    const char *env;
    Dl_info info;

    env = getenv("UCX_PLUGIN_PATH");
    if (env != NULL) {
        list = strdup(env);
        CHECK(list != NULL, "out of memory");
        for (dir = strtok_r(list, ":", &save); dir != NULL;
             dir = strtok_r(NULL, ":", &save)) {
            if (runtime_dlopen(dir)) {
                free(list);
                return;
            }
        }
        free(list);
    }

    env = getenv("UCX_MODULE_DIR");
    if ((env != NULL) && runtime_dlopen(env)) {
        return;
    }

    CHECK(dladdr((void*)ucs_status_string, &info) != 0, "dladdr(libucs)");
    snprintf(libucs, sizeof(libucs), "%s", info.dli_fname);
    snprintf(rt.module_path, sizeof(rt.module_path), "%s/ucx",
             dirname(libucs));
    dir = strdup(rt.module_path);
    CHECK(dir != NULL, "out of memory");
    CHECK(runtime_dlopen(dir), "no %s in UCX_PLUGIN_PATH, UCX_MODULE_DIR or "
          "%s", GAUDI_UCT_MODULE_FILE, dir);
    free(dir);
}

static void *runtime_symbol(const char *name)
{
    void *sym = dlsym(rt.module, name);

    CHECK(sym != NULL, "%s not in %s", name, rt.module_path);
    return sym;
}

/* Whether @a fd is a compute node (as the driver seam names its file) */
static int runtime_is_compute(int fd)
{
    char path[PATH_MAX];
    int n = -1;

    if (rt.ops->fd_path(fd, path, sizeof(path)) < 0) {
        return 0;
    }
    if ((sscanf(path, UCT_GAUDI_DEV_ACCEL_COMPUTE "%n", &n, &n) != 1) &&
        (sscanf(path, UCT_GAUDI_DEV_MISC_COMPUTE "%n", &n, &n) != 1)) {
        return 0;
    }
    return (n > 0) && (path[n] == '\0');
}

/* The compute fds of this process: how many, and the first in *@a fd_p */
static int runtime_compute_fds(int *fd_p)
{
    struct dirent *entry;
    int fd, count = 0;
    DIR *dir;

    dir = opendir("/proc/self/fd");
    CHECK(dir != NULL, "opendir(/proc/self/fd): %m");
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.') {
            continue;
        }
        fd = atoi(entry->d_name);
        if ((fd != dirfd(dir)) && runtime_is_compute(fd)) {
            if (count++ == 0) {
                *fd_p = fd;
            }
        }
    }
    closedir(dir);
    return count;
}

/* Before UCP's init: load the driver library, open the first compute node
 * that opens (another process may own a device: EBUSY) */
static void runtime_open(void)
{
    ucs_status_t (*lib_init)(void);
    unsigned (*num_devices)(void);
    const uct_gaudi_dev_info_t *(*lib_device)(unsigned);
    const uct_gaudi_drv_ops_t **ops_p;
    uct_gaudi_abi_t (*ioctl_abi)(void);
    const uct_gaudi_dev_info_t *info;
    ucs_status_t status;
    int last_err = ENODEV;
    double deadline;
    unsigned i, n;

    step_name("runtime open");
    runtime_load_module();
    lib_init    = (ucs_status_t (*)(void))runtime_symbol(
            "uct_gaudi_lib_init");
    num_devices = (unsigned (*)(void))runtime_symbol(
            "uct_gaudi_lib_num_devices");
    lib_device  = (const uct_gaudi_dev_info_t *(*)(unsigned))runtime_symbol(
            "uct_gaudi_lib_device");
    ioctl_abi   = (uct_gaudi_abi_t (*)(void))runtime_symbol(
            "uct_gaudi_ioctl_abi");
    ops_p       = (const uct_gaudi_drv_ops_t**)runtime_symbol(
            "uct_gaudi_seam_ops");

    status = lib_init();
    CHECK(status == UCS_OK, "uct_gaudi_lib_init: %s",
          ucs_status_string(status));
    rt.ops = *ops_p;
    n      = num_devices();
    CHECK(n > 0, "no Gaudi device (UCX_GAUDI_EMU_DEVICES?)");

    /* a device another process released a moment ago resets first
     * (EAGAIN): wait for it, as UCX does (UCX_GAUDI_RESET_WAIT) */
    deadline = ucp_app_now() + RESET_WAIT;
    for (i = 0; (i < n) && (rt.fd < 0); ++i) {
        info = lib_device(i);
        if (!info->usable) {
            continue;
        }
        while (((rt.fd = rt.ops->open(info->compute_path,
                                      O_RDWR | O_CLOEXEC)) < 0) &&
               (errno == EAGAIN) && (ucp_app_now() < deadline)) {
            usleep(10000);
        }
        if (rt.fd < 0) {
            last_err = errno;
        } else {
            snprintf(rt.path, sizeof(rt.path), "%s", info->compute_path);
        }
    }
    CHECK(rt.fd >= 0, "no compute node opens: %s", strerror(last_err));
    rt.mem_request = uct_gaudi_abi_ioctl_code(ioctl_abi(),
                                              UCT_GAUDI_IOC_MEMORY);
    printf("[%s] runtime: fd %d (%s) opened before UCP's init, module %s\n",
           role, rt.fd, rt.path, rt.module_path);
}

/* After UCP's init: UCX must have taken the runtime's fd, not a device of
 * its own */
static void runtime_check_adopted(void)
{
    int fd = -1, count;

    step_name("adoption");
    count = runtime_compute_fds(&fd);
    CHECK((count == 1) && (fd == rt.fd), "after UCP's init the process holds "
          "%d compute fd(s) (first %d), expected only the runtime's fd %d: "
          "UCX did not adopt it", count, fd, rt.fd);
    printf("[%s] adopted fd %d: the only compute fd after UCP's init\n", role,
           rt.fd);
}

/* A raw memory request on the runtime's fd, seen by UCX's hook only. Under
 * the emulator nothing else serves it: ENOTTY means no hook. */
static int runtime_mem(uint32_t op, union hl_mem_args *args)
{
    int ret;

    args->in.op = op;
    ret         = ioctl(rt.fd, rt.mem_request, args);
    if ((ret < 0) && (errno == ENOTTY)) {
        printf("FAIL [%s] %s: raw ioctl not served: the hook is off "
               "(op %u: %s)\n", role, current_step, op, strerror(errno));
        fflush(stdout);
        _exit(EXIT_HOOK_OFF);
    }
    return ret;
}

static void runtime_alloc(app_buf_t *buf, size_t size)
{
    union hl_mem_args args;

    memset(&args, 0, sizeof(args));
    args.in.alloc.mem_size = size;
    CHECK(runtime_mem(HL_MEM_OP_ALLOC, &args) == 0, "ALLOC %zu: %m", size);
    buf->handle = args.out.handle;
    buf->size   = size;
    buf->mapped = 0;
    buf->va     = 0;
}

static void runtime_map(app_buf_t *buf, uint64_t hint)
{
    union hl_mem_args args;

    memset(&args, 0, sizeof(args));
    args.in.map_device.handle    = buf->handle;
    args.in.map_device.hint_addr = hint;
    CHECK(runtime_mem(HL_MEM_OP_MAP, &args) == 0, "MAP handle %" PRIu64
          ": %m", buf->handle);
    buf->va     = args.out.device_virt_addr;
    buf->mapped = 1;
}

/* Returns the time the UNMAP took, seconds */
static double runtime_unmap(app_buf_t *buf)
{
    union hl_mem_args args;
    double start;
    int ret;

    memset(&args, 0, sizeof(args));
    args.in.unmap.device_virt_addr = buf->va;
    start = ucp_app_now();
    ret   = runtime_mem(HL_MEM_OP_UNMAP, &args);
    CHECK(ret == 0, "UNMAP 0x%" PRIx64 " after %.3f s: %m", buf->va,
          ucp_app_now() - start);
    buf->mapped = 0;
    return ucp_app_now() - start;
}

static void runtime_free(app_buf_t *buf)
{
    union hl_mem_args args;

    memset(&args, 0, sizeof(args));
    args.in.free.handle = buf->handle;
    CHECK(runtime_mem(HL_MEM_OP_FREE, &args) == 0, "FREE handle %" PRIu64
          ": %m", buf->handle);
}


/* The targets of this process's fds, one "fd=target" each, in @a buf: what
 * a failed fd count shows */
static void fd_list(char *buf, size_t max)
{
    char path[PATH_MAX], target[PATH_MAX];
    struct dirent *entry;
    size_t len = 0;
    ssize_t n;
    DIR *dir;

    buf[0] = '\0';
    dir    = opendir("/proc/self/fd");
    CHECK(dir != NULL, "opendir(/proc/self/fd): %m");
    while (((entry = readdir(dir)) != NULL) && (len + 1 < max)) {
        if ((entry->d_name[0] == '.') || (atoi(entry->d_name) == dirfd(dir))) {
            continue;
        }
        snprintf(path, sizeof(path), "/proc/self/fd/%s", entry->d_name);
        n = readlink(path, target, sizeof(target) - 1);
        target[(n < 0) ? 0 : n] = '\0';
        len += snprintf(buf + len, max - len, "%s=%s ", entry->d_name,
                        target);
    }
    closedir(dir);
}


/* The fd count at the baseline; the fds are kept to be shown if the count
 * differs at the end */
static int fd_baseline(void)
{
    fd_list(fds_at_baseline, sizeof(fds_at_baseline));
    return ucp_app_fd_count(NULL);
}

/* The fd count at the end; the fds then and at the baseline if it differs
 * from @a base */
static int fd_end(int base)
{
    char now[4096];
    int count = ucp_app_fd_count(NULL);

    if (count != base) {
        fd_list(now, sizeof(now));
        printf("fds [%s] at the baseline: %s\n", role, fds_at_baseline);
        printf("fds [%s] at the end: %s\n", role, now);
    }
    return count;
}

/* ---- UCP, the emulator's accounting ------------------------------------ */

static void setup_ucp(void)
{
    step_name("ucp setup");
    ucp_app_init(&app, UCP_FEATURE_TAG | UCP_FEATURE_RMA);
    runtime_check_adopted();
    emu_get_stats  = (gaudi_emu_get_stats_func_t)ucp_gaudi_emu_symbol(
            GAUDI_EMU_STATS_SYMBOL);
    gaudi_buf_copy = (gaudi_buf_copy_func_t)runtime_symbol(
            "uct_gaudi_buf_copy");
    self_ep        = ucp_app_self_ep(&app);
    host_src       = malloc(opts.xfer_max);
    host_dst       = malloc(opts.xfer_max);
    CHECK((host_src != NULL) && (host_dst != NULL), "out of host memory");
}

static void stats_get(gaudi_emu_stats_t *s)
{
    CHECK((emu_get_stats != NULL) && (emu_get_stats(s) == 0),
          "the emulator's accounting (gaudi_emu_get_stats) is unavailable");
}

static void stats_str(char *buf, size_t max)
{
    ucp_gaudi_emu_stats_str(emu_get_stats, "pinned_bytes", buf, max);
}

/* Whether the accounting @a b is back to the baseline @a a, with no
 * import or export left; if not, why in @a why */
static int stats_same(const gaudi_emu_stats_t *a, const gaudi_emu_stats_t *b,
                      char *why, size_t max)
{
    if ((a->contexts == b->contexts) && (a->dram_maps == b->dram_maps) &&
        (a->host_maps == b->host_maps) && (a->import_maps == b->import_maps) &&
        (a->exports == b->exports) && (a->pinned_bytes == b->pinned_bytes) &&
        (b->import_maps == 0) && (b->exports == 0)) {
        return 1;
    }
    snprintf(why, max, "counters differ: contexts %u/%u dram_maps %u/%u "
             "host_maps %u/%u import_maps %u/%u exports %u/%u pinned "
             "%llu/%llu (baseline/end)", a->contexts, b->contexts,
             a->dram_maps, b->dram_maps, a->host_maps, b->host_maps,
             a->import_maps, b->import_maps, a->exports, b->exports,
             (unsigned long long)a->pinned_bytes,
             (unsigned long long)b->pinned_bytes);
    return 0;
}

static void wait_ok(void *request, const char *what)
{
    ucp_app_wait_ok(&app, request, what);
}

/* The memory type UCP gives @a length bytes at @a address registered with
 * no type given (UCP detects it) */
static ucs_memory_type_t ucp_detected_type(void *address, size_t length,
                                           ucp_mem_h *memh_p)
{
    ucs_status_t status;

    status = ucp_app_mem_map(&app, address, length, UCS_MEMORY_TYPE_UNKNOWN,
                             memh_p);
    CHECK(status == UCS_OK, "ucp_mem_map(%p, %zu): %s", address, length,
          ucs_status_string(status));
    return ucp_app_mem_query(*memh_p, NULL, NULL);
}


/* ---- cycles: one process ------------------------------------------------ */

enum {STEP_ALLOC, STEP_MAP, STEP_UNMAP, STEP_FREE, STEP_REALLOC, STEP_LAST};

static struct {
    app_buf_t     bufs[MAX_LIVE];
    unsigned      count;
    unsigned long ops[STEP_LAST]; /* steps done of each kind */
    unsigned long reuse, reallocs;
    unsigned long lookups, misdetections;
    unsigned long xfers, xfer_tag, xfer_rma, xfer_bytes;
    unsigned      max_live;
} cyc;

static void misdetected(const char *fmt, ...)
{
    va_list ap;

    if (++cyc.misdetections > MAX_REPORTED) {
        return;
    }
    va_start(ap, fmt);
    printf("MISDETECTION [%s] %s: ", role, current_step);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

/* What the memtype cache says of every live mapping (Gaudi) and of a host
 * buffer of @a size bytes (not Gaudi) */
static void check_types(size_t size)
{
    ucs_memory_info_t info;
    ucs_status_t status;
    app_buf_t *buf;
    unsigned i;
    void *host;

    for (i = 0; i < cyc.count; ++i) {
        buf = &cyc.bufs[i];
        if (!buf->mapped) {
            continue;
        }
        ++cyc.lookups;
        status = ucs_memtype_cache_lookup((void*)(uintptr_t)buf->va,
                                          buf->size, &info);
        if ((status != UCS_OK) || (info.type != UCS_MEMORY_TYPE_GAUDI)) {
            misdetected("device mapping 0x%" PRIx64 "+%zu: %s, type %s",
                        buf->va, buf->size, ucs_status_string(status),
                        (status == UCS_OK) ?
                        ucs_memory_type_names[info.type] : "-");
        }
    }

    host = malloc(size);
    CHECK(host != NULL, "out of host memory");
    ++cyc.lookups;
    status = ucs_memtype_cache_lookup(host, size, &info);
    if ((status == UCS_OK) && (info.type == UCS_MEMORY_TYPE_GAUDI)) {
        misdetected("host buffer %p+%zu taken for Gaudi memory", host, size);
    }
    free(host);
}

static app_buf_t *pick(int mapped)
{
    unsigned i, n = 0, which;

    for (i = 0; i < cyc.count; ++i) {
        n += (cyc.bufs[i].mapped == mapped);
    }
    if (n == 0) {
        return NULL;
    }
    which = rnd_below(n);
    for (i = 0; i < cyc.count; ++i) {
        if ((cyc.bufs[i].mapped == mapped) && (which-- == 0)) {
            return &cyc.bufs[i];
        }
    }
    return NULL;
}

static void drop(app_buf_t *buf)
{
    *buf = cyc.bufs[--cyc.count];
}

/* UCP reads @a len bytes at @a dev into host memory (@a read), or writes
 * them there from host memory: by tag messages to our own worker, or
 * (@a rkey set) by RMA on an rkey of the mapping */
static void ucp_move(void *dev, size_t len, int read, ucp_rkey_h rkey)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    ucs_status_t status;
    void *req;

    if (rkey == NULL) {
        status = ucp_app_tag_xfer(&app, self_ep, 1, read ? dev : host_src,
                                  read ? (void*)host_dst : dev, len,
                                  TAG_SELF | tag_sn++, NULL,
                                  UCP_APP_FOREVER);
        CHECK(status == UCS_OK, "tag message %s Gaudi (%zu bytes): %s",
              read ? "from" : "to", len, ucs_status_string(status));
        return;
    }

    if (read) {
        req = ucp_get_nbx(self_ep, host_dst, len, (uintptr_t)dev, rkey,
                          &param);
    } else {
        req = ucp_put_nbx(self_ep, host_src, len, (uintptr_t)dev, rkey,
                          &param);
    }
    wait_ok(req, read ? "ucp_get_nbx" : "ucp_put_nbx");
    wait_ok(ucp_ep_flush_nbx(self_ep, &param), "flush");
}

/* A real transfer on @a buf (a window of it), both ways, checked against
 * the device's DMA engine */
static void xfer(app_buf_t *buf, int rma)
{
    size_t len      = (buf->size < opts.xfer_max) ? buf->size :
                                                        opts.xfer_max;
    size_t off      = rnd_below((buf->size - len) / PAGE + 1) * PAGE;
    void *dev       = (void*)(uintptr_t)(buf->va + off);
    uint32_t seed   = (uint32_t)rnd() | 1;
    ucp_rkey_h rkey = NULL;
    ucs_memory_type_t type;
    ucs_status_t status;
    void *rkey_buf;
    size_t rkey_size;
    ucp_mem_h memh;
    int64_t bad;

    step_name("%s transfer %zu at 0x%" PRIx64 "+%zu", rma ? "rma" : "tag",
              len, buf->va, off);
    if (rma) {
        type = ucp_detected_type((void*)(uintptr_t)buf->va, buf->size,
                                 &memh);
        if (type != UCS_MEMORY_TYPE_GAUDI) {
            misdetected("ucp_mem_map of 0x%" PRIx64 "+%zu detected %s",
                        buf->va, buf->size, ucs_memory_type_names[type]);
            CHECK(ucp_mem_unmap(app.context, memh) == UCS_OK,
                  "ucp_mem_unmap failed");
            return;
        }
        status = ucp_rkey_pack(app.context, memh, &rkey_buf, &rkey_size);
        CHECK(status == UCS_OK, "ucp_rkey_pack: %s",
              ucs_status_string(status));
        status = ucp_ep_rkey_unpack(self_ep, rkey_buf, &rkey);
        CHECK(status == UCS_OK, "ucp_ep_rkey_unpack: %s",
              ucs_status_string(status));
        ucp_rkey_buffer_release(rkey_buf);
    }

    /* the DMA engine writes, UCP reads */
    pattern_fill(host_src, len, seed);
    status = gaudi_buf_copy(dev, 1, host_src, 0, len);
    CHECK(status == UCS_OK, "uct_gaudi_buf_copy to Gaudi: %s",
          ucs_status_string(status));
    memset(host_dst, 0, len);
    ucp_move(dev, len, 1, rkey);
    bad = pattern_check(host_dst, len, seed);
    if (bad >= 0) {
        misdetected("UCP read byte %" PRId64 " of %zu at 0x%" PRIx64
                    " wrong", bad, len, buf->va + off);
    }

    /* UCP writes, the DMA engine reads */
    seed ^= 0x5a5a5a5a;
    pattern_fill(host_src, len, seed);
    ucp_move(dev, len, 0, rkey);
    memset(host_dst, 0, len);
    status = gaudi_buf_copy(host_dst, 0, dev, 1, len);
    CHECK(status == UCS_OK, "uct_gaudi_buf_copy from Gaudi: %s",
          ucs_status_string(status));
    bad = pattern_check(host_dst, len, seed);
    if (bad >= 0) {
        misdetected("UCP wrote byte %" PRId64 " of %zu at 0x%" PRIx64
                    " wrong", bad, len, buf->va + off);
    }

    if (rma) {
        ucp_rkey_destroy(rkey);
        /* before the runtime's UNMAP, as an application must */
        CHECK(ucp_mem_unmap(app.context, memh) == UCS_OK,
              "ucp_mem_unmap failed");
    }
    ++cyc.xfers;
    ++*(rma ? &cyc.xfer_rma : &cyc.xfer_tag);
    cyc.xfer_bytes += 2 * len;
}

/* One random step; returns whether it did something */
static int cycle_step(unsigned long n)
{
    unsigned which = rnd_below(STEP_LAST);
    app_buf_t *buf;
    uint64_t old_va;
    size_t size;

    switch (which) {
    case STEP_ALLOC:
        if (cyc.count >= opts.max_live) {
            return 0;
        }
        step_name("step %lu ALLOC", n);
        runtime_alloc(&cyc.bufs[cyc.count++], rnd_size());
        break;
    case STEP_MAP:
        if ((buf = pick(0)) == NULL) {
            return 0;
        }
        step_name("step %lu MAP", n);
        runtime_map(buf, 0);
        check_types(buf->size);
        break;
    case STEP_UNMAP:
        if ((buf = pick(1)) == NULL) {
            return 0;
        }
        step_name("step %lu UNMAP", n);
        runtime_unmap(buf);
        check_types(buf->size);
        break;
    case STEP_FREE:
        if ((buf = pick(0)) == NULL) {
            return 0;
        }
        step_name("step %lu FREE", n);
        runtime_free(buf);
        drop(buf);
        break;
    default:
        if ((buf = pick(1)) == NULL) {
            return 0;
        }
        step_name("step %lu re-alloc", n);
        old_va = buf->va;
        size   = buf->size;
        runtime_unmap(buf);
        runtime_free(buf);
        runtime_alloc(buf, size); /* in the same slot */
        runtime_map(buf, old_va);
        cyc.reuse += (buf->va == old_va);
        ++cyc.reallocs;
        check_types(size);
        break;
    }

    ++cyc.ops[which];
    if (cyc.count > cyc.max_live) {
        cyc.max_live = cyc.count;
    }
    return 1;
}

/* One transfer of each kind on a buffer of the run's largest size, so
 * that what UCP sets up once (and keeps) is in the baseline */
static void cycles_warmup(void)
{
    app_buf_t buf;

    step_name("warm-up");
    runtime_alloc(&buf, SIZE_MAX_ALLOC);
    runtime_map(&buf, 0);
    xfer(&buf, 0);
    xfer(&buf, 1);
    runtime_unmap(&buf);
    runtime_free(&buf);
    cyc.xfers = cyc.xfer_tag = cyc.xfer_rma = cyc.xfer_bytes = 0;
}

static int run_cycles(unsigned long steps)
{
    gaudi_emu_stats_t base, end;
    char sbase[256], send[256], why[320];
    int fds_base, fds_end, ok = 1;
    unsigned long n, since = 0;
    double start, elapsed;
    app_buf_t *buf;

    runtime_open();
    setup_ucp();
    cycles_warmup();

    step_name("baseline");
    stats_get(&base);
    stats_str(sbase, sizeof(sbase));
    fds_base = fd_baseline();

    start = ucp_app_now();
    for (n = 0; n < steps; ++n) {
        while (!cycle_step(n)) {
        }
        /* a transfer every k steps, on a live mapping (the next step's if
         * none is live now) */
        if ((++since >= opts.k) && ((buf = pick(1)) != NULL)) {
            xfer(buf, cyc.xfers & 1);
            since = 0;
        }
    }

    step_name("teardown");
    while (cyc.count > 0) {
        buf = &cyc.bufs[cyc.count - 1];
        if (buf->mapped) {
            runtime_unmap(buf);
        }
        runtime_free(buf);
        --cyc.count;
    }
    elapsed = ucp_app_now() - start;

    stats_get(&end);
    stats_str(send, sizeof(send));
    fds_end = fd_end(fds_base);
    printf("cycles %lu steps=%lu alloc=%lu map=%lu unmap=%lu free=%lu "
           "realloc=%lu va_reuse=%lu/%lu lookups=%lu misdetections=%lu "
           "transfers=%lu tag=%lu rma=%lu bytes=%lu max_live=%u "
           "time=%.2f\n", steps, steps, cyc.ops[STEP_ALLOC],
           cyc.ops[STEP_MAP], cyc.ops[STEP_UNMAP], cyc.ops[STEP_FREE],
           cyc.ops[STEP_REALLOC], cyc.reuse, cyc.reallocs, cyc.lookups,
           cyc.misdetections, cyc.xfers, cyc.xfer_tag, cyc.xfer_rma,
           cyc.xfer_bytes, cyc.max_live, elapsed);
    printf("counters app baseline: %s\n", sbase);
    printf("counters app end: %s\n", send);
    printf("fds app baseline=%d end=%d\n", fds_base, fds_end);

    if (cyc.misdetections > 0) {
        printf("FAIL [%s] cycles: %lu misdetection(s)\n", role,
               cyc.misdetections);
        ok = 0;
    }
    if (!stats_same(&base, &end, why, sizeof(why))) {
        printf("FAIL [%s] cycles: %s\n", role, why);
        ok = 0;
    }
    if (fds_base != fds_end) {
        printf("FAIL [%s] cycles: %d fds at the end, %d before\n", role,
               fds_end, fds_base);
        ok = 0;
    }

    step_name("cleanup");
    wait_ok(ucp_ep_close_nbx(self_ep,
                             &(ucp_request_param_t){.op_attr_mask = 0}),
            "close self ep");
    /* the runtime's fd stays open to the end: UCX adopted it and never
     * closes it, and uct_gaudi_buf_copy (a test helper of the module, not
     * UCP) keeps the device until the module unloads, unmapping through
     * that fd then */
    ucp_app_cleanup(&app);
    printf("%s\n", ok ? "PASS" : "FAIL: see above");
    return ok ? 0 : 1;
}


/* ---- pair-cycles: two processes ----------------------------------------- */

/* Waiting for the peer on the control channel progresses UCP: what the
 * peer does meanwhile (wireup, a get, the revocation of an import) may
 * need this side */
static int ctl_progress(void *arg)
{
    if (app.worker == NULL) {
        return 0;
    }
    ucp_app_progress(&app);
    return 1;
}

/* The gaudi_ipc lanes of the endpoint to the peer */
static int ep_ipc_lanes(void)
{
    char *buf = NULL, *line, *save;
    size_t size = 0;
    FILE *stream;
    int count = 0;

    stream = open_memstream(&buf, &size);
    CHECK(stream != NULL, "open_memstream failed");
    ucp_ep_print_info(peer_ep, stream);
    fclose(stream);
    for (line = strtok_r(buf, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        count += (strstr(line, "lane[") != NULL) &&
                 (strstr(line, "gaudi_ipc/") != NULL);
    }
    free(buf);
    return count;
}

/* A host message each way: the wireup of both endpoints is complete */
static void pair_warmup(void)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    size_t len = opts.xfer_max;
    void *rreq;

    step_name("warm-up");
    memset(host_src, 0x77, len);
    rreq = ucp_tag_recv_nbx(app.worker, host_dst, len, TAG_WARMUP,
                            (ucp_tag_t)-1, &param);
    wait_ok(ucp_tag_send_nbx(peer_ep, host_src, len, TAG_WARMUP, &param),
            "warm-up send");
    wait_ok(rreq, "warm-up recv");
    CHECK(host_dst[len - 1] == 0x77, "warm-up message corrupted");
    wait_ok(ucp_ep_flush_nbx(peer_ep, &param), "warm-up flush");
    ucp_ctl_sync(&ctl, 1);
}

/* Wait up to @a timeout s until this process imports nothing (the peer's
 * revocation may still be on its way) */
static void wait_imports_gone(double timeout)
{
    double deadline = ucp_app_now() + timeout;
    gaudi_emu_stats_t s;

    for (;;) {
        stats_get(&s);
        if ((s.import_maps == 0) || (ucp_app_now() > deadline)) {
            return;
        }
        ucp_app_progress(&app);
        usleep(1000);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

/* What the exporter counts of the cycles */
typedef struct {
    unsigned long stale, errors;   /* the importer's failures */
    unsigned long imported;        /* a live import after the get */
    unsigned long cached;          /* ... after the rkey was destroyed */
    unsigned long left;            /* ... before the next cycle's get */
    unsigned long reuse, hinted;   /* VAs the hint gave again, of hints */
    double        *unmap_times;    /* seconds, per cycle */
} pair_stats_t;

static void exporter_cycles(unsigned long cycles, pair_stats_t *ps)
{
    cycle_msg_t msg = {.pad = 0};
    uint64_t last_va = 0, hint;
    ucs_memory_type_t type;
    ucs_status_t status;
    cycle_ack_t ack;
    size_t rkey_size;
    void *rkey_buf;
    ucp_mem_h memh;
    app_buf_t buf;
    unsigned long c;

    for (c = 0; c < cycles; ++c) {
        step_name("cycle %lu (exporter)", c);
        hint = (c & 1) ? last_va : 0;
        runtime_alloc(&buf, rnd_size());
        runtime_map(&buf, hint);
        ps->hinted += (hint != 0);
        ps->reuse  += (hint != 0) && (buf.va == hint);
        last_va  = buf.va;

        msg.cycle = c;
        msg.va    = buf.va;
        msg.size  = buf.size;
        msg.len   = (buf.size < opts.xfer_max) ? buf.size : opts.xfer_max;
        msg.off   = rnd_below((buf.size - msg.len) / PAGE + 1) * PAGE;
        msg.seed  = (uint32_t)c * 0x10001u + 7;
        pattern_fill(host_src, msg.len, msg.seed);
        status = gaudi_buf_copy((void*)(uintptr_t)(buf.va + msg.off), 1,
                                host_src, 0, msg.len);
        CHECK(status == UCS_OK, "uct_gaudi_buf_copy to Gaudi: %s",
              ucs_status_string(status));

        type = ucp_detected_type((void*)(uintptr_t)buf.va, buf.size, &memh);
        CHECK(type == UCS_MEMORY_TYPE_GAUDI, "ucp_mem_map of the runtime's "
              "0x%" PRIx64 "+%zu detected %s", buf.va, buf.size,
              ucs_memory_type_names[type]);
        status = ucp_rkey_pack(app.context, memh, &rkey_buf, &rkey_size);
        CHECK(status == UCS_OK, "ucp_rkey_pack: %s",
              ucs_status_string(status));
        ucp_ctl_write(&ctl, &msg, sizeof(msg), "the cycle");
        ucp_ctl_send_blob(&ctl, rkey_buf, rkey_size, "the rkey");
        ucp_rkey_buffer_release(rkey_buf);

        ucp_ctl_read(&ctl, &ack, sizeof(ack), "the ack");
        if (!ack.ok) {
            if (++ps->errors <= MAX_REPORTED) {
                printf("ERROR [importer] cycle %lu: %s\n", c, ack.reason);
            }
        }
        if (ack.stale) {
            if (++ps->stale <= MAX_REPORTED) {
                printf("STALE [importer] cycle %lu at 0x%" PRIx64 "+%" PRIu64
                       " (%" PRIu64 " bytes): %s\n", c, msg.va, msg.off,
                       msg.len, ack.reason);
            }
        }
        ps->imported += ack.imported;
        ps->left     += ack.left;
        ps->cached   += ack.cached;

        /* the application lets go of its registration, then of the memory:
         * the UNMAP waits for the importer to be revoked */
        CHECK(ucp_mem_unmap(app.context, memh) == UCS_OK,
              "ucp_mem_unmap failed");
        ps->unmap_times[c] = runtime_unmap(&buf);
        runtime_free(&buf);
    }

    msg.cycle = -1;
    ucp_ctl_write(&ctl, &msg, sizeof(msg), "the end");
}

static void importer_cycles(void)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    gaudi_emu_stats_t s;
    ucs_status_t status;
    cycle_msg_t msg;
    cycle_ack_t ack;
    ucp_rkey_h rkey;
    void *rkey_buf, *req;
    int64_t bad;

    for (;;) {
        step_name("waiting for a cycle (importer)");
        ucp_ctl_read(&ctl, &msg, sizeof(msg), "the cycle");
        if (msg.cycle < 0) {
            return;
        }
        step_name("cycle %" PRId64 " (importer)", msg.cycle);
        rkey_buf = ucp_ctl_recv_blob(&ctl, NULL, "the rkey");
        memset(&ack, 0, sizeof(ack));
        ack.bad_off = -1;
        stats_get(&s);
        ack.left = (s.import_maps > 0);

        status = ucp_ep_rkey_unpack(peer_ep, rkey_buf, &rkey);
        free(rkey_buf);
        CHECK(status == UCS_OK, "ucp_ep_rkey_unpack: %s",
              ucs_status_string(status));
        memset(host_dst, 0, msg.len);
        req    = ucp_get_nbx(peer_ep, host_dst, msg.len, msg.va + msg.off,
                             rkey, &param);
        status = ucp_app_wait(&app, &req, UCP_APP_FOREVER);
        ack.ok = (status == UCS_OK);
        if (!ack.ok) {
            snprintf(ack.reason, sizeof(ack.reason), "ucp_get_nbx: %s",
                     ucs_status_string(status));
        } else {
            bad = pattern_check(host_dst, msg.len, msg.seed);
            if (bad >= 0) {
                ack.stale   = 1;
                ack.bad_off = bad;
                snprintf(ack.reason, sizeof(ack.reason), "byte %" PRId64
                         " is 0x%02x, this cycle's pattern has 0x%02x", bad,
                         host_dst[bad], pattern_byte(bad, msg.seed));
            }
        }
        stats_get(&s);
        ack.imported = (s.import_maps > 0);
        ucp_rkey_destroy(rkey);
        stats_get(&s);
        ack.cached = (s.import_maps > 0);
        ucp_ctl_write(&ctl, &ack, sizeof(ack), "the ack");
    }
}

/* Both sides: endpoints closed, imports gone; the counters against the
 * baseline */
static void pair_report(side_report_t *rep, const gaudi_emu_stats_t *base,
                        int fds_base)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    gaudi_emu_stats_t end;

    step_name("report");
    rep->lanes = ep_ipc_lanes();
    wait_imports_gone(5.0);
    stats_get(&end);
    stats_str(rep->end, sizeof(rep->end));
    rep->fds_base = fds_base;
    rep->fds_end  = fd_end(fds_base);
    rep->ok       = stats_same(base, &end, rep->reason, sizeof(rep->reason));
    /* more fds is a leak; fewer is a connection of the warm-up that the
     * peer's or our fd server had not closed yet when the baseline was
     * read (seen once in 4 runs: a socket open at the baseline only) */
    if (rep->ok && (rep->fds_end > rep->fds_base)) {
        rep->ok = 0;
        snprintf(rep->reason, sizeof(rep->reason), "%d fds at the end, %d "
                 "before", rep->fds_end, rep->fds_base);
    }
    ucp_ctl_sync(&ctl, 2);
    wait_ok(ucp_ep_close_nbx(peer_ep, &param), "close peer ep");
    wait_ok(ucp_ep_close_nbx(self_ep, &param), "close self ep");
    ucp_ctl_sync(&ctl, 3);
}

static int run_pair(unsigned long cycles)
{
    pair_stats_t ps = {.stale = 0};
    side_report_t mine, peer;
    ucp_address_t *peer_addr;
    gaudi_emu_stats_t base;
    double start, elapsed, *times = NULL;
    int fds_base, exporter, ok;
    pid_t child;
    int status;

    child    = ucp_ctl_fork(&ctl);
    exporter = (child != 0);
    role     = exporter ? "exporter" : "importer";
    ctl.peer = exporter ? "importer" : "exporter";
    if (!exporter) {
        alarm(opts.timeout);
        rng_state ^= 0x9e3779b97f4a7c15ull;
    }

    runtime_open();
    setup_ucp();
    ctl.progress = ctl_progress;
    peer_addr    = ucp_ctl_swap_address(&ctl, app.worker);
    peer_ep      = ucp_app_ep_create(&app, peer_addr, NULL, "peer");
    free(peer_addr);
    pair_warmup();

    /* one cycle first: what the emulator sets up at the first import of
     * the peer's memory (its view of the peer's HBM) stays for the run */
    if (exporter) {
        ps.unmap_times = calloc(cycles + 1, sizeof(double));
        CHECK(ps.unmap_times != NULL, "out of memory");
        exporter_cycles(1, &ps);
        CHECK((ps.stale == 0) && (ps.errors == 0) && (ps.imported == 1),
              "the warm-up cycle: %lu stale, %lu failed, %lu imported",
              ps.stale, ps.errors, ps.imported);
        memset(&ps, 0, offsetof(pair_stats_t, unmap_times));
    } else {
        importer_cycles();
    }

    step_name("baseline");
    stats_get(&base);
    memset(&mine, 0, sizeof(mine));
    stats_str(mine.base, sizeof(mine.base));
    fds_base = fd_baseline();
    ucp_ctl_sync(&ctl, 4);

    start = ucp_app_now();
    if (exporter) {
        exporter_cycles(cycles, &ps);
    } else {
        importer_cycles();
    }
    elapsed = ucp_app_now() - start;

    pair_report(&mine, &base, fds_base);
    if (!exporter) {
        ucp_ctl_write(&ctl, &mine, sizeof(mine), "the report");
        ucp_app_cleanup(&app); /* the runtime's fd stays: see run_cycles */
        ucp_ctl_close(&ctl);
        _exit(0);
    }

    ucp_ctl_read(&ctl, &peer, sizeof(peer), "the report");
    ucp_app_cleanup(&app);
    ucp_ctl_close(&ctl);
    if ((waitpid(child, &status, 0) != child) || !WIFEXITED(status) ||
        (WEXITSTATUS(status) != 0)) {
        printf("FAIL [exporter] the importer ended badly (status 0x%x)\n",
               status);
        return 1;
    }

    times = ps.unmap_times;
    qsort(times, cycles, sizeof(*times), cmp_double);
    printf("pair %lu cycles=%lu stale=%lu errors=%lu va_reuse=%lu/%lu "
           "imported=%lu cached=%lu left=%lu unmap_median_us=%.0f "
           "unmap_max_us=%.0f time=%.2f rate=%.0f\n", cycles, cycles,
           ps.stale, ps.errors, ps.reuse, ps.hinted, ps.imported, ps.cached,
           ps.left, (cycles > 0) ? times[cycles / 2] * 1e6 : 0.0,
           (cycles > 0) ? times[cycles - 1] * 1e6 : 0.0, elapsed,
           cycles / elapsed);
    printf("gaudi_ipc lanes: exporter=%d importer=%d\n", mine.lanes,
           peer.lanes);
    printf("counters exporter baseline: %s\n", mine.base);
    printf("counters exporter end: %s\n", mine.end);
    printf("counters importer baseline: %s\n", peer.base);
    printf("counters importer end: %s\n", peer.end);
    printf("fds exporter baseline=%d end=%d\n", mine.fds_base, mine.fds_end);
    printf("fds importer baseline=%d end=%d\n", peer.fds_base, peer.fds_end);
    free(times);

    ok = (ps.stale == 0) && (ps.errors == 0) && mine.ok && peer.ok;
    if (ps.stale || ps.errors) {
        printf("FAIL [exporter] pair: %lu stale, %lu failed get(s)\n",
               ps.stale, ps.errors);
    }
    if (!mine.ok) {
        printf("FAIL [exporter] pair: %s\n", mine.reason);
    }
    if (!peer.ok) {
        printf("FAIL [importer] pair: %s\n", peer.reason);
    }
    printf("%s\n", ok ? "PASS" : "FAIL: see above");
    return ok ? 0 : 1;
}


static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s [-k K] [-n LIVE] [-x BYTES] [-S SEED] "
            "[-t TIMEOUT] cycles N | pair-cycles M\n", prog);
    exit(2);
}

int main(int argc, char **argv)
{
    unsigned long count;
    int c;

    setvbuf(stdout, NULL, _IOLBF, 0);
    while ((c = getopt(argc, argv, "k:n:x:S:t:h")) != -1) {
        switch (c) {
        case 'k': opts.k        = strtoul(optarg, NULL, 0); break;
        case 'n': opts.max_live = strtoul(optarg, NULL, 0); break;
        case 'x': opts.xfer_max = strtoul(optarg, NULL, 0); break;
        case 'S': opts.seed     = strtoull(optarg, NULL, 0); break;
        case 't': opts.timeout  = strtoul(optarg, NULL, 0); break;
        default:  usage(argv[0]);
        }
    }
    if ((optind + 2 != argc) || (opts.k == 0) || (opts.max_live == 0) ||
        (opts.max_live > MAX_LIVE) || (opts.xfer_max < PAGE)) {
        usage(argv[0]);
    }
    count = strtoul(argv[optind + 1], NULL, 0);
    if (opts.seed == 0) {
        opts.seed = ((uint64_t)time(NULL) << 20) ^ getpid();
    }
    rng_state = opts.seed;
    printf("seed %" PRIu64 "\n", opts.seed);

    signal(SIGALRM, alarm_handler);
    alarm(opts.timeout);
    if (!strcmp(argv[optind], "cycles")) {
        return run_cycles(count);
    } else if (!strcmp(argv[optind], "pair-cycles")) {
        return run_pair(count);
    }
    usage(argv[0]);
    return 2;
}
