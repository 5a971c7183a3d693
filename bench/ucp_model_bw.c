/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * Host <-> Gaudi bandwidth through UCP in the emulator's model time
 * (UCX_GAUDI_EMU_PROFILE, docs/emulator.md §8b), in one process over an
 * endpoint to its own worker, so that every copy the emulator makes is
 * this process's and the model clock is wall time less its copy_ns:
 *
 *   put  ucp_put_nbx from host memory into UCP-mapped Gaudi memory (H2D),
 *        COUNT in flight, then a flush
 *   get  ucp_get_nbx of Gaudi memory into host memory (D2H), the same
 *   tag  tag messages from host memory received into Gaudi memory (H2D:
 *        UCP's memory-type path), COUNT posted at once
 *
 * usage: ucp_model_bw put|get|tag SIZE COUNT
 * prints: "<model GB/s> <wall GB/s> <average CSs in flight> <most> <CSs>"
 */

#include "bench_emu.h"
#include "../test/e2e/ucp/ucp_app.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void ucp_app_die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "ucp_model_bw: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    exit(1);
}

/* @count RMA operations of @size in flight, then a flush */
static void rma(ucp_app_t *app, ucp_ep_h ep, int put, void *host,
                uint64_t remote, ucp_rkey_h rkey, size_t size, unsigned count)
{
    ucp_request_param_t param = {0};
    void *req;
    unsigned i;

    for (i = 0; i < count; ++i) {
        req = put ? ucp_put_nbx(ep, host, size, remote, rkey, &param) :
                    ucp_get_nbx(ep, host, size, remote, rkey, &param);
        UCP_APP_CHECK(!UCS_PTR_IS_ERR(req), "%s: %s", put ? "put" : "get",
                      ucs_status_string(UCS_PTR_STATUS(req)));
        if (req != NULL) {
            ucp_request_free(req);
        }
    }
    ucp_app_wait_ok(app, ucp_ep_flush_nbx(ep, &param), "flush");
}

/* @count tag messages from @host received into @dev, all posted at once
 * (as tag_bw keeps a window of them), then waited for */
static void tag(ucp_app_t *app, ucp_ep_h ep, void *host, void *dev,
                size_t size, unsigned count)
{
    ucp_request_param_t param = {0};
    void **reqs = calloc(2 * count, sizeof(*reqs));
    unsigned i;

    UCP_APP_CHECK(reqs != NULL, "calloc");
    for (i = 0; i < count; ++i) {
        reqs[2 * i] = ucp_tag_recv_nbx(app->worker, dev, size, 0x24 + i,
                                       (ucp_tag_t)-1, &param);
        reqs[2 * i + 1] = ucp_tag_send_nbx(ep, host, size, 0x24 + i, &param);
        UCP_APP_CHECK(!UCS_PTR_IS_ERR(reqs[2 * i]) &&
                      !UCS_PTR_IS_ERR(reqs[2 * i + 1]), "tag: posting failed");
    }
    for (i = 0; i < 2 * count; ++i) {
        ucp_app_wait_ok(app, reqs[i], "tag");
    }
    free(reqs);
}

int main(int argc, char **argv)
{
    ucp_app_t app = {0};
    gaudi_emu_stats_t s0, s1;
    ucp_mem_h dev_memh;
    ucp_rkey_h rkey;
    void *rkey_buf, *host, *dev;
    size_t size, rkey_size;
    unsigned count;
    double t0, t1;
    ucp_ep_h ep;
    int op;

    UCP_APP_CHECK(argc == 4, "usage: ucp_model_bw put|get|tag SIZE COUNT");
    op    = !strcmp(argv[1], "put") ? 0 : !strcmp(argv[1], "get") ? 1 :
            !strcmp(argv[1], "tag") ? 2 : -1;
    size  = strtoul(argv[2], NULL, 0);
    count = strtoul(argv[3], NULL, 0);
    UCP_APP_CHECK((op >= 0) && (size > 0) && (count > 0),
                  "usage: ucp_model_bw put|get|tag SIZE COUNT");

    ucp_app_init(&app, UCP_FEATURE_RMA | UCP_FEATURE_TAG);
    ep = ucp_app_self_ep(&app);
    UCP_APP_CHECK(ucp_app_mem_map(&app, NULL, size, UCS_MEMORY_TYPE_GAUDI,
                                  &dev_memh) == UCS_OK,
                  "ucp_mem_map of Gaudi memory");
    UCP_APP_CHECK(ucp_app_mem_query(dev_memh, &dev, NULL) ==
                  UCS_MEMORY_TYPE_GAUDI, "UCP did not map Gaudi memory");
    UCP_APP_CHECK(ucp_rkey_pack(app.context, dev_memh, &rkey_buf,
                                &rkey_size) == UCS_OK, "ucp_rkey_pack");
    UCP_APP_CHECK(ucp_ep_rkey_unpack(ep, rkey_buf, &rkey) == UCS_OK,
                  "ucp_ep_rkey_unpack");
    UCP_APP_CHECK(posix_memalign(&host, 4096, size) == 0, "posix_memalign");
    memset(host, 0x5a, size);

    /* warm up: registrations, the first submissions */
    if (op == 2) {
        tag(&app, ep, host, dev, size, 2);
    } else {
        rma(&app, ep, op == 0, host, (uintptr_t)dev, rkey, size, 2);
    }

    UCP_APP_CHECK(bench_emu_stats(&s0) == 0, "no emulator statistics "
                  "(UCX_GAUDI_EMU_DEVICES)");
    t0 = ucp_app_now();
    if (op == 2) {
        tag(&app, ep, host, dev, size, count);
    } else {
        rma(&app, ep, op == 0, host, (uintptr_t)dev, rkey, size, count);
    }
    t1 = ucp_app_now();
    UCP_APP_CHECK(bench_emu_stats(&s1) == 0, "no emulator statistics");
    UCP_APP_CHECK(bench_emu_report((uint64_t)size * count,
                                   (uint64_t)((t1 - t0) * 1e9), &s0, &s1) == 0,
                  "no CS was timed by a speed profile "
                  "(UCX_GAUDI_EMU_PROFILE), or no Gaudi copy ran");

    free(host);
    ucp_rkey_destroy(rkey);
    ucp_rkey_buffer_release(rkey_buf);
    ucp_mem_unmap(app.context, dev_memh);
    ucp_ep_destroy(ep);
    ucp_app_cleanup(&app);
    return 0;
}
