/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * A UCP application using Gaudi memory the ordinary UCX way.
 *
 *   gaudi_ucp_demo roundtrip [SIZE]  allocate Gaudi memory with ucp_mem_map,
 *       check UCP detects it (also for memory it did not allocate: the
 *       region is re-registered by address), move a pattern host -> Gaudi ->
 *       host with tag messages, compare, print a summary.
 *   gaudi_ucp_demo hold SECONDS      create a UCP context and worker, print
 *       the Gaudi device this process owns (or that it has none), keep it
 *       for SECONDS, exit 0.
 */

#include "ucp/ucp_app.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static ucp_app_t app;

void ucp_app_die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "gaudi_ucp_demo: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    exit(1);
}

#define CHECK UCP_APP_CHECK

/* Print the gaudi resources of the context (the device this process owns) */
static int demo_print_devices(void)
{
    char *buf = NULL, *line, *save;
    size_t size = 0;
    int found   = 0;
    FILE *stream;

    stream = open_memstream(&buf, &size);
    CHECK(stream != NULL, "open_memstream failed");
    ucp_context_print_info(app.context, stream);
    fclose(stream);

    for (line = strtok_r(buf, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        /* "<transport>/<device>"; the transport's name depends on the UCX
         * built against (the Makefile defines it) */
        if (strstr(line, UCT_GAUDI_COPY_TL_NAME "/") != NULL) {
            printf("pid %d owns %s\n", getpid(),
                   strstr(line, UCT_GAUDI_COPY_TL_NAME "/") +
                   strlen(UCT_GAUDI_COPY_TL_NAME "/"));
            found = 1;
        }
    }

    if (!found) {
        printf("pid %d owns no Gaudi device\n", getpid());
    }

    free(buf);
    fflush(stdout);
    return found;
}

/* Send @a src to @a dst through a tag message to ourselves */
static void demo_transfer(ucp_ep_h ep, void *dst, const void *src,
                          size_t size, ucp_tag_t tag)
{
    ucs_status_t status;

    status = ucp_app_tag_xfer(&app, ep, 1, src, dst, size, tag, NULL,
                              UCP_APP_FOREVER);
    CHECK(status == UCS_OK, "request completed with %s",
          ucs_status_string(status));
}

static int demo_roundtrip(size_t size)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    ucp_mem_map_params_t params;
    ucp_mem_h memh, memh2;
    char *src, *dst;
    void *dev;
    ucp_ep_h ep;
    size_t i;

    ucp_app_init(&app, UCP_FEATURE_TAG);
    CHECK(demo_print_devices(), "no Gaudi device in the UCP context");

    params.field_mask  = UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                         UCP_MEM_MAP_PARAM_FIELD_FLAGS |
                         UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
    params.length      = size;
    params.flags       = UCP_MEM_MAP_ALLOCATE;
    params.memory_type = UCS_MEMORY_TYPE_GAUDI;
    CHECK(ucp_mem_map(app.context, &params, &memh) == UCS_OK,
          "ucp_mem_map(ALLOCATE, gaudi) failed");
    CHECK(ucp_app_mem_query(memh, &dev, NULL) == UCS_MEMORY_TYPE_GAUDI,
          "allocated memory is not reported as gaudi");
    printf("allocated %zu bytes of Gaudi memory at %p\n", size, dev);

    /* Register the same range by address: UCP must detect its type */
    params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                        UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    params.address    = dev;
    CHECK(ucp_mem_map(app.context, &params, &memh2) == UCS_OK,
          "ucp_mem_map(register gaudi address) failed");
    CHECK(ucp_app_mem_query(memh2, NULL, NULL) == UCS_MEMORY_TYPE_GAUDI,
          "UCP did not detect Gaudi memory by address");
    printf("UCP detects %p as %s memory\n", dev,
           ucs_memory_type_names[UCS_MEMORY_TYPE_GAUDI]);

    src = malloc(size);
    dst = malloc(size);
    CHECK((src != NULL) && (dst != NULL), "out of host memory");
    for (i = 0; i < size; ++i) {
        src[i] = (char)(i * 7 + 3);
    }
    memset(dst, 0, size);

    ep = ucp_app_self_ep(&app);
    demo_transfer(ep, dev, src, size, 1);   /* host  -> gaudi */
    demo_transfer(ep, dst, dev, size, 2);   /* gaudi -> host  */
    CHECK(memcmp(src, dst, size) == 0, "data mismatch after the round trip");
    printf("round trip host -> gaudi -> host of %zu bytes: data intact\n",
           size);

    ucp_app_wait_ok(&app, ucp_ep_close_nbx(ep, &param), "ucp_ep_close_nbx");
    free(src);
    free(dst);
    ucp_mem_unmap(app.context, memh2);
    ucp_mem_unmap(app.context, memh);
    ucp_app_cleanup(&app);
    return 0;
}

static int demo_hold(int seconds)
{
    ucp_app_init(&app, UCP_FEATURE_TAG);
    demo_print_devices();
    sleep(seconds);
    ucp_app_cleanup(&app);
    return 0;
}

int main(int argc, char **argv)
{
    if ((argc >= 2) && !strcmp(argv[1], "roundtrip")) {
        return demo_roundtrip((argc > 2) ? strtoul(argv[2], NULL, 0) :
                                           (1024 * 1024 + 17));
    } else if ((argc == 3) && !strcmp(argv[1], "hold")) {
        return demo_hold(atoi(argv[2]));
    }

    fprintf(stderr, "usage: %s roundtrip [SIZE] | hold SECONDS\n", argv[0]);
    return 2;
}
