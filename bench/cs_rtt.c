/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * The bare emulated DMA round trip: one HL_IOCTL_CS of one 8-byte LIN_DMA
 * (host -> device) and HL_IOCTL_WAIT_CS polled with timeout 0 until it
 * completes, straight through the emulator's driver ops (the seam), without
 * UCX. A transport's 8-byte put_short costs this plus its own work, so
 * bench/run.sh prints put_short / this as the transport's overhead.
 *
 * usage: cs_rtt STATE_DIR [ITERATIONS] [thread|inline]
 * prints: average usec per round trip
 */

#include <uct/gaudi/seam/gaudi_emu.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define CB_SIZE  4096


static const uct_gaudi_drv_ops_t *ops;
static int fd;


static void die(const char *what)
{
    fprintf(stderr, "cs_rtt: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void ioc(uct_gaudi_ioc_t ioc, void *arg, const char *what)
{
    if (ops->ioctl(fd, uct_gaudi_abi_ioctl_code(UCT_GAUDI_ABI_DRM, ioc),
                   arg) != 0) {
        die(what);
    }
}

static uint64_t map_host(void *ptr, size_t size)
{
    union hl_mem_args args;

    memset(&args, 0, sizeof(args));
    args.in.op                      = HL_MEM_OP_MAP;
    args.in.flags                   = HL_MEM_USERPTR;
    args.in.map_host.host_virt_addr = (uintptr_t)ptr;
    args.in.map_host.mem_size       = size;
    ioc(UCT_GAUDI_IOC_MEMORY, &args, "MAP userptr");
    return args.out.device_virt_addr;
}

static uint64_t dev_buffer(size_t size)
{
    union hl_mem_args args;

    memset(&args, 0, sizeof(args));
    args.in.op             = HL_MEM_OP_ALLOC;
    args.in.alloc.mem_size = size;
    ioc(UCT_GAUDI_IOC_MEMORY, &args, "ALLOC");

    args.in.map_device.handle    = args.out.handle;
    args.in.op                   = HL_MEM_OP_MAP;
    args.in.flags                = 0;
    args.in.map_device.hint_addr = 0;
    ioc(UCT_GAUDI_IOC_MEMORY, &args, "MAP");
    return args.out.device_virt_addr;
}

/* One CS and WAIT_CS polls until it completed, as the transports do */
static void round_trip(uint64_t cb_va)
{
    struct hl_cs_chunk chunk;
    union hl_wait_cs_args wargs;
    union hl_cs_args args;

    memset(&chunk, 0, sizeof(chunk));
    chunk.cb_handle      = cb_va;
    chunk.queue_index    = 0;   /* PDMA */
    chunk.cb_size        = sizeof(struct uct_gaudi_pkt_lin_dma);
    chunk.cs_chunk_flags = HL_CS_CHUNK_FLAGS_USER_ALLOC_CB;

    memset(&args, 0, sizeof(args));
    args.in.chunks_execute     = (uintptr_t)&chunk;
    args.in.num_chunks_execute = 1;
    ioc(UCT_GAUDI_IOC_CS, &args, "CS");

    do {
        memset(&wargs, 0, sizeof(wargs));
        wargs.in.seq = args.out.seq;
        ioc(UCT_GAUDI_IOC_WAIT_CS, &wargs, "WAIT_CS");
    } while (wargs.out.status == HL_WAIT_CS_STATUS_BUSY);

    if (wargs.out.status != HL_WAIT_CS_STATUS_COMPLETED) {
        fprintf(stderr, "cs_rtt: CS ended with status %u\n",
                wargs.out.status);
        exit(1);
    }
}

static double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    gaudi_emu_config_t cfg;
    struct uct_gaudi_pkt_lin_dma *pkt;
    long i, iters;
    uint64_t cb_va;
    double t0;
    void *cb;

    if (argc < 2) {
        fprintf(stderr, "usage: cs_rtt STATE_DIR [ITERATIONS] "
                "[thread|inline]\n");
        return 2;
    }

    iters = (argc > 2) ? atol(argv[2]) : 10000;
    memset(&cfg, 0, sizeof(cfg));
    cfg.num_devices = 1;
    cfg.asic        = UCT_GAUDI_ASIC_GAUDI2;
    cfg.hbm_size    = 0; /* the ASIC's default: Gaudi2 needs two 640 MiB pages */
    cfg.abi         = UCT_GAUDI_ABI_DRM;
    cfg.exec        = ((argc > 3) && !strcmp(argv[3], "inline")) ?
                      GAUDI_EMU_EXEC_INLINE : GAUDI_EMU_EXEC_THREAD;
    cfg.state_dir   = argv[1];
    if ((iters <= 0) || (gaudi_emu_init(&cfg, &ops) != 0)) {
        fprintf(stderr, "cs_rtt: bad iterations or emulator init failed: "
                "%s\n", gaudi_emu_last_error());
        return 1;
    }

    fd = ops->open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        die("open /dev/accel/accel0");
    }

    /* the CB and the 8-byte source share one userptr-mapped page */
    if (posix_memalign(&cb, CB_SIZE, CB_SIZE) != 0) {
        die("posix_memalign");
    }
    memset(cb, 0, CB_SIZE);
    cb_va = map_host(cb, CB_SIZE);

    pkt           = cb;
    pkt->tsize    = 8;
    pkt->ctl      = (UCT_GAUDI_PKT_LIN_DMA << UCT_GAUDI_PKT_OPCODE_SHIFT) |
                    UCT_GAUDI2_LIN_DMA_MSG_BARRIER;
    pkt->src_addr = cb_va + CB_SIZE - 8;
    pkt->dst_addr = dev_buffer(2 << 20);

    for (i = 0; i < iters / 10; ++i) {
        round_trip(cb_va);      /* warm-up (starts the worker thread) */
    }

    t0 = now_sec();
    for (i = 0; i < iters; ++i) {
        round_trip(cb_va);
    }
    printf("%.3f\n", (now_sec() - t0) * 1e6 / iters);

    ops->close(fd);
    gaudi_emu_fini();
    return 0;
}
