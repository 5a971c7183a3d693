/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * gaudi_copy host <-> Gaudi bandwidth in the emulator's model time
 * (UCX_GAUDI_EMU_PROFILE, docs/emulator.md §8b): put_zcopy (host -> device)
 * or get_zcopy (device -> host) of SIZE bytes, as many in flight as the
 * transport takes (it says NO_RESOURCE when its pool is full), COUNT times.
 *
 * The model clock is the wall clock less the time the emulator spent
 * copying (its statistics' copy_ns): a DMA engine's copy costs the host no
 * CPU, the emulator's does. What the transport and UCX spend stays in.
 *
 * usage: model_bw TL put|get SIZE COUNT
 * prints: "<model GB/s> <wall GB/s> <average CSs in flight> <most> <CSs>"
 */

#define BENCH_NAME "model_bw"
#include "bench_uct.h"

#include "bench_emu.h"

#include <ucs/async/async_fwd.h>
#include <time.h>


typedef struct {
    uct_component_h component;
    uct_md_h        md;
    uct_worker_h    worker;
    uct_iface_h     iface;
    uct_ep_h        ep;
} bench_t;

static unsigned outstanding;


static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (ts.tv_sec * 1000000000ull) + ts.tv_nsec;
}

static void comp_cb(uct_completion_t *self)
{
    CHECK(self->status == UCS_OK, "a transfer");
    --outstanding;
}

static void open_iface(bench_t *b, const char *tl)
{
    uct_iface_config_t *config;
    uct_iface_params_t params;
    uct_iface_attr_t attr;
    uct_ep_params_t ep_params;
    char dev_addr[256], iface_addr[256];
    ucs_async_context_t *async;

    CHECK(ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &async) ==
          UCS_OK, "ucs_async_context_create");
    CHECK(uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &b->worker) ==
          UCS_OK, "uct_worker_create");
    CHECK(uct_md_iface_config_read(b->md, tl, NULL, NULL, &config) == UCS_OK,
          "uct_md_iface_config_read");
    memset(&params, 0, sizeof(params));
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = tl;
    params.mode.device.dev_name = "gaudi0";
    CHECK(uct_iface_open(b->md, b->worker, &params, config, &b->iface) ==
          UCS_OK, "uct_iface_open");
    uct_config_release(config);
    uct_iface_progress_enable(b->iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);

    CHECK(uct_iface_query(b->iface, &attr) == UCS_OK, "uct_iface_query");
    CHECK((attr.device_addr_len <= sizeof(dev_addr)) &&
          (attr.iface_addr_len <= sizeof(iface_addr)), "address sizes");
    CHECK(uct_iface_get_device_address(b->iface,
                                       (uct_device_addr_t*)dev_addr) ==
          UCS_OK, "uct_iface_get_device_address");
    CHECK(uct_iface_get_address(b->iface, (uct_iface_addr_t*)iface_addr) ==
          UCS_OK, "uct_iface_get_address");

    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                           UCT_EP_PARAM_FIELD_DEV_ADDR |
                           UCT_EP_PARAM_FIELD_IFACE_ADDR;
    ep_params.iface      = b->iface;
    ep_params.dev_addr   = (uct_device_addr_t*)dev_addr;
    ep_params.iface_addr = (uct_iface_addr_t*)iface_addr;
    CHECK(uct_ep_create(&ep_params, &b->ep) == UCS_OK, "uct_ep_create");
}

/* Post @count transfers of @size, as many in flight as the transport
 * takes, and wait for them all */
static void run(bench_t *b, int put, uct_iov_t *iov, uint64_t remote,
                uct_rkey_t rkey, unsigned count)
{
    uct_completion_t *comps = calloc(count, sizeof(*comps));
    ucs_status_t status;
    unsigned posted = 0;

    CHECK(comps != NULL, "calloc");
    while ((posted < count) || (outstanding > 0)) {
        if (posted < count) {
            comps[posted].func   = comp_cb;
            comps[posted].count  = 1;
            comps[posted].status = UCS_OK;
            status = put ? uct_ep_put_zcopy(b->ep, iov, 1, remote, rkey,
                                            &comps[posted]) :
                           uct_ep_get_zcopy(b->ep, iov, 1, remote, rkey,
                                            &comps[posted]);
            if (status == UCS_INPROGRESS) {
                ++outstanding;
                ++posted;
                continue;
            } else if (status == UCS_OK) {
                ++posted;
                continue;
            }
            CHECK(status == UCS_ERR_NO_RESOURCE, "posting a transfer");
        }
        uct_worker_progress(b->worker);
    }
    free(comps);
}

int main(int argc, char **argv)
{
    bench_t b = {0};
    uct_mem_alloc_params_t params;
    uct_alloc_method_t method = UCT_ALLOC_METHOD_MD;
    gaudi_emu_stats_t s0, s1;
    uct_allocated_memory_t dev;
    uct_rkey_bundle_t rkey;
    uint64_t t0, t1;
    unsigned count;
    uct_mem_h memh;
    uct_iov_t iov;
    size_t size;
    void *rkey_buf, *host;
    int put;

    CHECK(argc == 5, "usage: model_bw TL put|get SIZE COUNT; parsing it");
    put   = !strcmp(argv[2], "put");
    size  = strtoul(argv[3], NULL, 0);
    count = strtoul(argv[4], NULL, 0);
    CHECK((size > 0) && (count > 0), "parsing SIZE and COUNT");

    b.md = bench_open_md(&b.component);
    open_iface(&b, argv[1]);

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_MEM_ALLOC_PARAM_FIELD_FLAGS |
                        UCT_MEM_ALLOC_PARAM_FIELD_MEM_TYPE |
                        UCT_MEM_ALLOC_PARAM_FIELD_MDS |
                        UCT_MEM_ALLOC_PARAM_FIELD_NAME;
    params.flags      = UCT_MD_MEM_ACCESS_ALL;
    params.mem_type   = UCS_MEMORY_TYPE_GAUDI;
    params.mds.mds    = &b.md;
    params.mds.count  = 1;
    params.name       = "model_bw";
    CHECK(uct_mem_alloc(size, &method, 1, &params, &dev) == UCS_OK,
          "uct_mem_alloc(gaudi_cpy, GAUDI)");

    rkey_buf = malloc(4096);
    CHECK(rkey_buf != NULL, "malloc");
    CHECK(uct_md_mkey_pack(b.md, dev.memh, rkey_buf) == UCS_OK,
          "uct_md_mkey_pack");
    CHECK(uct_rkey_unpack(b.component, rkey_buf, &rkey) == UCS_OK,
          "uct_rkey_unpack");

    CHECK(posix_memalign(&host, 4096, size) == 0, "posix_memalign");
    memset(host, 0x5a, size);
    CHECK(uct_md_mem_reg(b.md, host, size, UCT_MD_MEM_ACCESS_ALL, &memh) ==
          UCS_OK, "uct_md_mem_reg");
    iov.buffer = host;
    iov.length = size;
    iov.memh   = memh;
    iov.stride = 0;
    iov.count  = 1;

    /* warm up: the first transfers set up what later ones reuse */
    run(&b, put, &iov, (uintptr_t)dev.address, rkey.rkey, 4);

    CHECK(bench_emu_stats(&s0) == 0, "reading the emulator's statistics "
          "(UCX_GAUDI_EMU_DEVICES)");
    t0 = now_ns();
    run(&b, put, &iov, (uintptr_t)dev.address, rkey.rkey, count);
    t1 = now_ns();
    CHECK(bench_emu_stats(&s1) == 0, "reading the emulator's statistics");
    CHECK(bench_emu_report((uint64_t)size * count, t1 - t0, &s0, &s1) == 0,
          "the speed profile (no CS was timed: UCX_GAUDI_EMU_PROFILE)");

    uct_md_mem_dereg(b.md, memh);
    free(host);
    uct_rkey_release(b.component, &rkey);
    free(rkey_buf);
    uct_mem_free(&dev);
    uct_ep_destroy(b.ep);
    uct_iface_close(b.iface);
    uct_worker_destroy(b.worker);
    uct_md_close(b.md);
    return 0;
}
