/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * Cost of registering host memory with the gaudi_cpy memory domain: the
 * first registration of each buffer misses the registration cache (userptr
 * map: pin + device MMU), registering it again hits. Run with
 * UCX_GAUDI_COPY_RCACHE=y. Prints "<miss usec> <hit usec>" (averages).
 * usage: reg_cost SIZE COUNT
 */

#define BENCH_NAME "reg_cost"
#include "bench_uct.h"

#include <time.h>

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

/* Register and deregister each buffer once; average seconds per pair */
static double reg_pass(uct_md_h md, char **bufs, unsigned count, size_t size)
{
    double start = now();
    uct_mem_h memh;
    unsigned i;

    for (i = 0; i < count; ++i) {
        CHECK(uct_md_mem_reg(md, bufs[i], size, UCT_MD_MEM_ACCESS_ALL, &memh) ==
              UCS_OK,
              "uct_md_mem_reg");
        CHECK(uct_md_mem_dereg(md, memh) == UCS_OK, "uct_md_mem_dereg");
    }

    return (now() - start) / count;
}

int main(int argc, char **argv)
{
    size_t size    = (argc > 1) ? strtoul(argv[1], NULL, 0) : (1ul << 20);
    unsigned count = (argc > 2) ? strtoul(argv[2], NULL, 0) : 64;
    double miss, hit;
    char **bufs;
    uct_md_h md;
    unsigned i;

    md   = bench_open_md(NULL);
    bufs = calloc(count, sizeof(*bufs));
    CHECK(bufs != NULL, "calloc");
    for (i = 0; i < count; ++i) {
        CHECK(posix_memalign((void**)&bufs[i], 4096, size) == 0,
              "posix_memalign");
        memset(bufs[i], i, size);
    }

    miss = reg_pass(md, bufs, count, size);  /* each buffer is new */
    hit  = reg_pass(md, bufs, count, size);  /* each is in the rcache */
    hit  = (hit + reg_pass(md, bufs, count, size)) / 2;
    printf("%.3f %.3f\n", miss * 1e6, hit * 1e6);

    uct_md_close(md);
    for (i = 0; i < count; ++i) {
        free(bufs[i]);
    }
    free(bufs);
    return 0;
}
