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

#include <uct/api/uct.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(_cond, _what) \
    do { \
        if (!(_cond)) { \
            fprintf(stderr, "reg_cost: %s failed\n", _what); \
            exit(1); \
        } \
    } while (0)

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

static uct_md_h open_md(void)
{
    uct_component_h *components;
    uct_component_attr_t attr;
    uct_md_config_t *config;
    unsigned i, num;
    uct_md_h md;

    CHECK(uct_query_components(&components, &num) == UCS_OK,
          "uct_query_components");
    for (i = 0; i < num; ++i) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        CHECK(uct_component_query(components[i], &attr) == UCS_OK,
              "uct_component_query");
        if (strcmp(attr.name, "gaudi_cpy") == 0) {
            CHECK(uct_md_config_read(components[i], NULL, NULL, &config) ==
                  UCS_OK, "uct_md_config_read");
            CHECK(uct_md_open(components[i], "gaudi_cpy", config, &md) ==
                  UCS_OK, "uct_md_open(gaudi_cpy)");
            uct_config_release(config);
            uct_release_component_list(components);
            return md;
        }
    }

    CHECK(0, "finding the gaudi_cpy component");
    return NULL;
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

    md   = open_md();
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
