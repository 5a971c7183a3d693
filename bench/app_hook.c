/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * What UCX's hook of ioctl() (issue 27) costs per request, in one process
 * that owns an emulated Gaudi (UCX_GAUDI_EMU_DEVICES): OWNER "ucp" owns it
 * through ucp_init (UCX_TLS with the gaudi transports; UCP's memory-type
 * cache hears of each UNMAP too), "uct" through uct_md_open of gaudi_cpy.
 *
 *   memory requests  ALLOC, MAP, UNMAP and FREE of device memory on the
 *                    compute fd UCX holds, made BATCH at a time: (a) by raw
 *                    ioctl(), which the hook learns (under the emulator it
 *                    is also what routes them to the emulator), and (b) the
 *                    same requests through the driver seam UCX loaded
 *                    (uct_gaudi_seam_ops->ioctl), which the hook never sees;
 *                    (a) - (b) is the hook's cost
 *   pass-through     FIONREAD on a pipe by ioctl(), through the executable's
 *                    patched PLT, against syscall(SYS_ioctl): what every
 *                    other ioctl of the process pays; and a memory request
 *                    code flagged as the library's own (as UCX flags its
 *                    own driver calls) on the pipe, against the same by
 *                    syscall(); and, to show where the hook's time goes,
 *                    two of its parts alone: the copy it makes of each
 *                    memory request's argument, in and back out by the
 *                    kernel (process_vm_readv and process_vm_writev, each
 *                    with getpid()), and its look-up of an emulator's fd
 *                    (the seam's fd_path: the emulator's fds only, a
 *                    driver's go on at once)
 *
 * The two ways of each are interleaved in ROUNDS rounds (each round takes
 * them in the other order), so that the machine's load falls on both.
 *
 * usage: app_hook ucp|uct [ROUNDS [BATCH [PASSES]]]
 * prints one line, ns per request:
 *   <ALLOC a> <ALLOC b> <MAP a> <MAP b> <UNMAP a> <UNMAP b> <FREE a>
 *   <FREE b> <ioctl() FIONREAD> <syscall FIONREAD> <ioctl() own memory
 *   request> <syscall memory request> <the argument's copy> <fd_path>
 * The memory (a) columns are "-" when raw requests reach no emulator (no
 * hook: UCX_GAUDI_APP_MEMORY=n), and the own-request one when the library
 * has no uct_gaudi_hook_own_begin.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#define BENCH_NAME "app_hook"
#include "bench_uct.h"
#include "../test/e2e/ucp/ucp_app.h"

#include <uct/gaudi/seam/gaudi_emu.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_BATCH   256
#define ALLOC_SIZE  (2ul << 20) /* one page of the default size */

enum {
    MEM_ALLOC,
    MEM_MAP,
    MEM_UNMAP,
    MEM_FREE,
    MEM_LAST
};

enum {
    PASS_IOCTL,       /* ioctl(pipe, FIONREAD) through the PLT */
    PASS_SYSCALL,     /* syscall(SYS_ioctl, pipe, FIONREAD) */
    PASS_OWN_IOCTL,   /* ioctl(pipe, MEMORY) flagged as the library's own */
    PASS_OWN_SYSCALL, /* syscall(SYS_ioctl, pipe, MEMORY) */
    PASS_COPY,        /* the hook's copy of a memory request's argument */
    PASS_FD_PATH,     /* its look-up of the fd (the emulator's only) */
    PASS_LAST
};

typedef int (*mem_request_func_t)(int fd, unsigned long request, void *arg);

static const uct_gaudi_drv_ops_t *const *seam_ops;
static void (*own_begin)(void);
static void (*own_end)(void);
static unsigned long mem_request;  /* MEMORY of the probed ABI */
static int compute_fd = -1;


void ucp_app_die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, BENCH_NAME ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (ts.tv_sec * 1000000000ull) + ts.tv_nsec;
}

/* A symbol of the Gaudi module UCX loaded (RTLD_LOCAL: found by its soname,
 * which differs between the in-tree module and the 1.22 plugin) */
static void *module_symbol(const char *symbol)
{
    static const char *const names[] = {"libuct_gaudi.so.0",
                                        "libuct_hlgaudi.so.0"};
    void *handle, *sym;
    unsigned i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
        handle = dlopen(names[i], RTLD_NOLOAD | RTLD_NOW);
        if (handle != NULL) {
            sym = dlsym(handle, symbol);
            dlclose(handle); /* UCX holds its own reference */
            return sym;
        }
    }

    return NULL;
}

/* The compute fd UCX holds, found in /proc/self/fd by the seam's name of
 * each file */
static int find_compute_fd(void)
{
    char path[PATH_MAX];
    struct dirent *entry;
    int fd, n, found = -1;
    DIR *dir;

    dir = opendir("/proc/self/fd");
    CHECK(dir != NULL, "opendir(/proc/self/fd)");
    while ((found < 0) && ((entry = readdir(dir)) != NULL)) {
        fd = atoi(entry->d_name);
        if (((*seam_ops)->fd_path(fd, path, sizeof(path)) == 0) &&
            ((sscanf(path, UCT_GAUDI_DEV_ACCEL_COMPUTE "%n", &n, &n) == 1) ||
             (sscanf(path, UCT_GAUDI_DEV_MISC_COMPUTE "%n", &n, &n) == 1)) &&
            (path[n] == '\0')) {
            found = fd;
        }
    }
    closedir(dir);
    return found;
}

/* (a): the application's raw ioctl(), through the executable's PLT */
static int raw_request(int fd, unsigned long request, void *arg)
{
    return ioctl(fd, request, arg);
}

/* (b): the driver seam, a plain function call the hook does not see */
static int seam_request(int fd, unsigned long request, void *arg)
{
    return (*seam_ops)->ioctl(fd, request, arg);
}

static void mem_request_ok(mem_request_func_t func, union hl_mem_args *args,
                           const char *what)
{
    if (func(compute_fd, mem_request, args) != 0) {
        fprintf(stderr, BENCH_NAME ": %s by %s: %s\n", what,
                (func == raw_request) ? "raw ioctl()" : "the seam",
                strerror(errno));
        exit(1);
    }
}

/* @batch allocations of ALLOC_SIZE by @func: each op's ns added to @ns */
static void mem_batch(mem_request_func_t func, unsigned batch,
                      uint64_t ns[MEM_LAST])
{
    uint64_t handles[MAX_BATCH], vas[MAX_BATCH], t[MEM_LAST + 1];
    union hl_mem_args args;
    unsigned i;

    t[0] = now_ns();
    for (i = 0; i < batch; ++i) {
        memset(&args, 0, sizeof(args));
        args.in.op             = HL_MEM_OP_ALLOC;
        args.in.alloc.mem_size = ALLOC_SIZE;
        mem_request_ok(func, &args, "ALLOC");
        handles[i] = args.out.handle;
    }
    t[1] = now_ns();
    for (i = 0; i < batch; ++i) {
        memset(&args, 0, sizeof(args));
        args.in.op                = HL_MEM_OP_MAP;
        args.in.map_device.handle = handles[i];
        mem_request_ok(func, &args, "MAP");
        vas[i] = args.out.device_virt_addr;
    }
    t[2] = now_ns();
    for (i = 0; i < batch; ++i) {
        memset(&args, 0, sizeof(args));
        args.in.op                     = HL_MEM_OP_UNMAP;
        args.in.unmap.device_virt_addr = vas[i];
        mem_request_ok(func, &args, "UNMAP");
    }
    t[3] = now_ns();
    for (i = 0; i < batch; ++i) {
        memset(&args, 0, sizeof(args));
        args.in.op          = HL_MEM_OP_FREE;
        args.in.free.handle = handles[i];
        mem_request_ok(func, &args, "FREE");
    }
    t[4] = now_ns();

    for (i = 0; i < MEM_LAST; ++i) {
        ns[i] += t[i + 1] - t[i];
    }
}

/* Whether a raw memory request reaches the emulator: only through the hook
 * (the emulator's fd is a plain file, which answers ENOTTY) */
static int raw_requests_served(void)
{
    union hl_mem_args args;
    uint64_t handle;

    memset(&args, 0, sizeof(args));
    args.in.op             = HL_MEM_OP_ALLOC;
    args.in.alloc.mem_size = ALLOC_SIZE;
    if (ioctl(compute_fd, mem_request, &args) != 0) {
        fprintf(stderr, BENCH_NAME ": a raw ALLOC fails (%s): no hook serves "
                "raw requests (UCX_GAUDI_APP_MEMORY=n?)\n", strerror(errno));
        return 0;
    }

    handle = args.out.handle;
    memset(&args, 0, sizeof(args));
    args.in.op          = HL_MEM_OP_FREE;
    args.in.free.handle = handle;
    mem_request_ok(raw_request, &args, "FREE");
    return 1;
}

/* @count requests of pass-through @kind on the pipe @fd: ns in total */
static uint64_t pass_batch(int kind, int fd, unsigned count)
{
    union hl_mem_args args, copy;
    struct iovec local  = {&copy, sizeof(copy)};
    struct iovec remote = {&args, sizeof(args)};
    char path[PATH_MAX];
    uint64_t start;
    unsigned i;
    int avail;

    memset(&args, 0, sizeof(args));
    if (kind == PASS_OWN_IOCTL) {
        own_begin();
    }

    start = now_ns();
    switch (kind) {
    case PASS_IOCTL:
        for (i = 0; i < count; ++i) {
            CHECK(ioctl(fd, FIONREAD, &avail) == 0, "ioctl(FIONREAD)");
        }
        break;
    case PASS_SYSCALL:
        for (i = 0; i < count; ++i) {
            CHECK(syscall(SYS_ioctl, fd, FIONREAD, &avail) == 0,
                  "syscall(SYS_ioctl, FIONREAD)");
        }
        break;
    case PASS_OWN_IOCTL:
        /* the pipe refuses it: what counts is that it got there */
        for (i = 0; i < count; ++i) {
            CHECK(ioctl(fd, mem_request, &args) != 0,
                  "ioctl(MEMORY) on a pipe failing");
        }
        break;
    case PASS_OWN_SYSCALL:
        for (i = 0; i < count; ++i) {
            CHECK(syscall(SYS_ioctl, fd, mem_request, &args) != 0,
                  "syscall(SYS_ioctl, MEMORY) on a pipe failing");
        }
        break;
    case PASS_COPY:
        for (i = 0; i < count; ++i) {
            CHECK((process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
                   (ssize_t)sizeof(args)) &&
                  (process_vm_writev(getpid(), &local, 1, &remote, 1, 0) ==
                   (ssize_t)sizeof(args)), "process_vm_readv/writev");
        }
        break;
    case PASS_FD_PATH:
        for (i = 0; i < count; ++i) {
            CHECK((*seam_ops)->fd_path(compute_fd, path, sizeof(path)) == 0,
                  "the seam's fd_path of the compute fd");
        }
        break;
    }
    start = now_ns() - start;

    if (kind == PASS_OWN_IOCTL) {
        own_end();
    }
    return start;
}

static void print_ns(int known, uint64_t ns, uint64_t count)
{
    static const char *sep = "";

    if (known) {
        printf("%s%.1f", sep, (double)ns / count);
    } else {
        printf("%s-", sep);
    }
    sep = " ";
}

int main(int argc, char **argv)
{
    unsigned rounds  = (argc > 2) ? strtoul(argv[2], NULL, 0) : 40;
    unsigned batch   = (argc > 3) ? strtoul(argv[3], NULL, 0) : 16;
    unsigned passes  = (argc > 4) ? strtoul(argv[4], NULL, 0) : 20000;
    uint64_t raw_ns[MEM_LAST]  = {0};
    uint64_t seam_ns[MEM_LAST] = {0};
    uint64_t pass_ns[PASS_LAST] = {0};
    ucp_app_t app = {0};
    uct_md_h md   = NULL;
    uct_gaudi_abi_t (*abi_func)(void);
    unsigned r, k, kind;
    int pipe_fds[2], raw, i;

    CHECK((argc >= 2) && (!strcmp(argv[1], "ucp") ||
                          !strcmp(argv[1], "uct")) &&
          (rounds > 0) && (batch > 0) && (batch <= MAX_BATCH) &&
          (passes > 0),
          "usage: app_hook ucp|uct [ROUNDS [BATCH<=256 [PASSES]]]: parsing "
          "the arguments");

    /* UCX owns the device from here: its hook of ioctl() is in */
    if (!strcmp(argv[1], "ucp")) {
        ucp_app_init(&app, UCP_FEATURE_RMA | UCP_FEATURE_TAG);
    } else {
        md = bench_open_md(NULL);
    }

    seam_ops  = (const uct_gaudi_drv_ops_t *const*)module_symbol(
            "uct_gaudi_seam_ops");
    abi_func  = (uct_gaudi_abi_t (*)(void))module_symbol(
            "uct_gaudi_ioctl_abi");
    own_begin = (void (*)(void))module_symbol("uct_gaudi_hook_own_begin");
    own_end   = (void (*)(void))module_symbol("uct_gaudi_hook_own_end");
    if (own_end == NULL) {
        own_begin = NULL; /* a pair or nothing */
    }
    CHECK((seam_ops != NULL) && (*seam_ops != NULL) && (abi_func != NULL),
          "finding uct_gaudi_seam_ops and uct_gaudi_ioctl_abi in the Gaudi "
          "module UCX loaded");
    CHECK(!strcmp((*seam_ops)->name, "emulator"),
          "the emulator's seam (UCX_GAUDI_EMU_DEVICES)");
    mem_request = uct_gaudi_abi_ioctl_code(abi_func(), UCT_GAUDI_IOC_MEMORY);
    compute_fd  = find_compute_fd();
    CHECK(compute_fd >= 0, "finding the compute fd UCX holds (does UCX_TLS "
          "name a gaudi transport?)");
    CHECK(pipe(pipe_fds) == 0, "pipe");
    raw = raw_requests_served();

    /* warm up both ways: the emulator's first allocations, the caches */
    if (raw) {
        mem_batch(raw_request, batch, raw_ns);
    }
    mem_batch(seam_request, batch, seam_ns);
    memset(raw_ns, 0, sizeof(raw_ns));
    memset(seam_ns, 0, sizeof(seam_ns));

    for (r = 0; r < rounds; ++r) {
        if ((r & 1) && raw) {
            mem_batch(raw_request, batch, raw_ns);
        }
        mem_batch(seam_request, batch, seam_ns);
        if (!(r & 1) && raw) {
            mem_batch(raw_request, batch, raw_ns);
        }
        for (k = 0; k < PASS_LAST; ++k) {
            kind = (r & 1) ? (PASS_LAST - 1 - k) : k;
            if ((own_begin != NULL) || (kind != PASS_OWN_IOCTL)) {
                pass_ns[kind] += pass_batch(kind, pipe_fds[0], passes);
            }
        }
    }

    for (i = 0; i < MEM_LAST; ++i) {
        print_ns(raw, raw_ns[i], (uint64_t)rounds * batch);
        print_ns(1, seam_ns[i], (uint64_t)rounds * batch);
    }
    for (i = 0; i < PASS_LAST; ++i) {
        print_ns((own_begin != NULL) || (i != PASS_OWN_IOCTL), pass_ns[i],
                 (uint64_t)rounds * passes);
    }
    printf("\n");

    close(pipe_fds[0]);
    close(pipe_fds[1]);
    if (md != NULL) {
        uct_md_close(md);
    }
    ucp_app_cleanup(&app);
    return 0;
}
