/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef BENCH_UCT_H_
#define BENCH_UCT_H_

/* What the UCT benchmark programs of bench/ share: failing loudly, and
 * opening the gaudi_cpy memory domain. Each program defines BENCH_NAME. */

#include <uct/api/uct.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(_cond, _what) \
    do { \
        if (!(_cond)) { \
            fprintf(stderr, BENCH_NAME ": %s failed\n", _what); \
            exit(1); \
        } \
    } while (0)

/* Open the gaudi_cpy MD; its component in *@component_p if not NULL */
static inline uct_md_h bench_open_md(uct_component_h *component_p)
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
            if (component_p != NULL) {
                *component_p = components[i];
            }
            uct_release_component_list(components);
            return md;
        }
    }

    CHECK(0, "finding the gaudi_cpy component");
    return NULL;
}

#endif
