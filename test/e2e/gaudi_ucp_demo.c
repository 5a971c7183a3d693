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

#include <ucp/api/ucp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(_cond, ...) \
    do { \
        if (!(_cond)) { \
            fprintf(stderr, "gaudi_ucp_demo: " __VA_ARGS__); \
            fprintf(stderr, "\n"); \
            exit(1); \
        } \
    } while (0)


static ucp_context_h context;
static ucp_worker_h  worker;

static void demo_init(void)
{
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES,
        .features   = UCP_FEATURE_TAG
    };
    ucp_worker_params_t wparams = {
        .field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SINGLE
    };
    ucs_status_t status;

    status = ucp_init(&params, NULL, &context);
    CHECK(status == UCS_OK, "ucp_init: %s", ucs_status_string(status));
    status = ucp_worker_create(context, &wparams, &worker);
    CHECK(status == UCS_OK, "ucp_worker_create: %s",
          ucs_status_string(status));
}

static void demo_cleanup(void)
{
    ucp_worker_destroy(worker);
    ucp_cleanup(context);
}

/* Print the gaudi resources of the context (the device this process owns) */
static int demo_print_devices(void)
{
    char *buf = NULL, *line, *save;
    size_t size = 0;
    int found   = 0;
    FILE *stream;

    stream = open_memstream(&buf, &size);
    CHECK(stream != NULL, "open_memstream failed");
    ucp_context_print_info(context, stream);
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

static ucs_memory_type_t demo_mem_type(ucp_mem_h memh, void **address_p)
{
    ucp_mem_attr_t attr = {
        .field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_MEM_TYPE
    };
    ucs_status_t status;

    status = ucp_mem_query(memh, &attr);
    CHECK(status == UCS_OK, "ucp_mem_query: %s", ucs_status_string(status));
    if (address_p != NULL) {
        *address_p = attr.address;
    }
    return attr.mem_type;
}

static void demo_wait(void *request)
{
    ucs_status_t status;

    if (request == NULL) {
        return;
    }

    CHECK(!UCS_PTR_IS_ERR(request), "request failed: %s",
          ucs_status_string(UCS_PTR_STATUS(request)));
    do {
        ucp_worker_progress(worker);
        status = ucp_request_check_status(request);
    } while (status == UCS_INPROGRESS);
    CHECK(status == UCS_OK, "request completed with %s",
          ucs_status_string(status));
    ucp_request_free(request);
}

/* Send @a src to @a dst through a tag message to ourselves */
static void demo_transfer(ucp_ep_h ep, void *dst, const void *src,
                          size_t size, ucp_tag_t tag)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    void *rreq, *sreq;

    rreq = ucp_tag_recv_nbx(worker, dst, size, tag, (ucp_tag_t)-1, &param);
    sreq = ucp_tag_send_nbx(ep, src, size, tag, &param);
    demo_wait(sreq);
    demo_wait(rreq);
}

static ucp_ep_h demo_self_ep(void)
{
    ucp_ep_params_t ep_params;
    ucp_address_t *address;
    size_t address_len;
    ucs_status_t status;
    ucp_ep_h ep;

    status = ucp_worker_get_address(worker, &address, &address_len);
    CHECK(status == UCS_OK, "ucp_worker_get_address: %s",
          ucs_status_string(status));
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_params.address    = address;
    status = ucp_ep_create(worker, &ep_params, &ep);
    CHECK(status == UCS_OK, "ucp_ep_create: %s", ucs_status_string(status));
    ucp_worker_release_address(worker, address);
    return ep;
}

static int demo_roundtrip(size_t size)
{
    ucp_mem_map_params_t params;
    ucp_mem_h memh, memh2;
    char *src, *dst;
    void *dev, *request;
    ucp_ep_h ep;
    size_t i;

    demo_init();
    CHECK(demo_print_devices(), "no Gaudi device in the UCP context");

    params.field_mask  = UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                         UCP_MEM_MAP_PARAM_FIELD_FLAGS |
                         UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
    params.length      = size;
    params.flags       = UCP_MEM_MAP_ALLOCATE;
    params.memory_type = UCS_MEMORY_TYPE_GAUDI;
    CHECK(ucp_mem_map(context, &params, &memh) == UCS_OK,
          "ucp_mem_map(ALLOCATE, gaudi) failed");
    CHECK(demo_mem_type(memh, &dev) == UCS_MEMORY_TYPE_GAUDI,
          "allocated memory is not reported as gaudi");
    printf("allocated %zu bytes of Gaudi memory at %p\n", size, dev);

    /* Register the same range by address: UCP must detect its type */
    params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                        UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    params.address    = dev;
    CHECK(ucp_mem_map(context, &params, &memh2) == UCS_OK,
          "ucp_mem_map(register gaudi address) failed");
    CHECK(demo_mem_type(memh2, NULL) == UCS_MEMORY_TYPE_GAUDI,
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

    ep = demo_self_ep();
    demo_transfer(ep, dev, src, size, 1);   /* host  -> gaudi */
    demo_transfer(ep, dst, dev, size, 2);   /* gaudi -> host  */
    CHECK(memcmp(src, dst, size) == 0, "data mismatch after the round trip");
    printf("round trip host -> gaudi -> host of %zu bytes: data intact\n",
           size);

    request = ucp_ep_close_nb(ep, UCP_EP_CLOSE_MODE_FLUSH);
    demo_wait(request);
    free(src);
    free(dst);
    ucp_mem_unmap(context, memh2);
    ucp_mem_unmap(context, memh);
    demo_cleanup();
    return 0;
}

static int demo_hold(int seconds)
{
    demo_init();
    demo_print_devices();
    sleep(seconds);
    demo_cleanup();
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
