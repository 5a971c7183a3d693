/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* UCX's config.h, included first, may have it */
#endif
#include "ucp_app.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


double ucp_app_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

void ucp_app_init(ucp_app_t *app, uint64_t features)
{
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES,
        .features   = features
    };
    ucp_worker_params_t wparams = {
        .field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SINGLE
    };
    ucs_status_t status;

    status = ucp_init(&params, NULL, &app->context);
    UCP_APP_CHECK(status == UCS_OK, "ucp_init: %s",
                  ucs_status_string(status));
    status = ucp_worker_create(app->context, &wparams, &app->worker);
    UCP_APP_CHECK(status == UCS_OK, "ucp_worker_create: %s",
                  ucs_status_string(status));
}

void ucp_app_cleanup(ucp_app_t *app)
{
    if (app->worker != NULL) {
        ucp_worker_destroy(app->worker);
        app->worker = NULL;
    }
    if (app->context != NULL) {
        ucp_cleanup(app->context);
        app->context = NULL;
    }
}

void ucp_app_progress(ucp_app_t *app)
{
    if (app->progress != NULL) {
        app->progress(app);
    } else {
        ucp_worker_progress(app->worker);
    }
}

void ucp_app_set_am_handler(ucp_app_t *app, unsigned id,
                            ucp_am_recv_callback_t cb)
{
    ucp_am_handler_param_t param = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                      UCP_AM_HANDLER_PARAM_FIELD_CB,
        .id         = id,
        .cb         = cb
    };
    ucs_status_t status;

    status = ucp_worker_set_am_recv_handler(app->worker, &param);
    UCP_APP_CHECK(status == UCS_OK, "ucp_worker_set_am_recv_handler: %s",
                  ucs_status_string(status));
}

ucp_ep_h ucp_app_ep_create(ucp_app_t *app, const ucp_address_t *address,
                           ucp_err_handler_cb_t err_cb, const char *what)
{
    ucp_ep_params_t params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
        .address    = address
    };
    ucs_status_t status;
    ucp_ep_h ep;

    if (err_cb != NULL) {
        params.field_mask     |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                                 UCP_EP_PARAM_FIELD_ERR_HANDLER;
        params.err_mode        = UCP_ERR_HANDLING_MODE_PEER;
        params.err_handler.cb  = err_cb;
        params.err_handler.arg = NULL;
    }
    status = ucp_ep_create(app->worker, &params, &ep);
    UCP_APP_CHECK(status == UCS_OK, "ucp_ep_create(%s): %s", what,
                  ucs_status_string(status));
    return ep;
}

ucp_ep_h ucp_app_self_ep(ucp_app_t *app)
{
    ucp_address_t *address;
    size_t address_len;
    ucs_status_t status;
    ucp_ep_h ep;

    status = ucp_worker_get_address(app->worker, &address, &address_len);
    UCP_APP_CHECK(status == UCS_OK, "ucp_worker_get_address: %s",
                  ucs_status_string(status));
    ep = ucp_app_ep_create(app, address, NULL, "self");
    ucp_worker_release_address(app->worker, address);
    return ep;
}

ucs_status_t ucp_app_mem_map(ucp_app_t *app, void *address, size_t length,
                             ucs_memory_type_t mem_type, ucp_mem_h *memh_p)
{
    ucp_mem_map_params_t params = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                      UCP_MEM_MAP_PARAM_FIELD_FLAGS,
        .length     = length,
        .flags      = (address == NULL) ? UCP_MEM_MAP_ALLOCATE : 0
    };

    if (address != NULL) {
        params.field_mask |= UCP_MEM_MAP_PARAM_FIELD_ADDRESS;
        params.address     = address;
    }
    if (mem_type != UCS_MEMORY_TYPE_UNKNOWN) {
        params.field_mask |= UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
        params.memory_type = mem_type;
    }
    *memh_p = NULL;
    return ucp_mem_map(app->context, &params, memh_p);
}

ucs_memory_type_t ucp_app_mem_query(ucp_mem_h memh, void **address_p,
                                    size_t *length_p)
{
    ucp_mem_attr_t attr = {
        .field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH |
                      UCP_MEM_ATTR_FIELD_MEM_TYPE
    };
    ucs_status_t status;

    status = ucp_mem_query(memh, &attr);
    UCP_APP_CHECK(status == UCS_OK, "ucp_mem_query: %s",
                  ucs_status_string(status));
    if (address_p != NULL) {
        *address_p = attr.address;
    }
    if (length_p != NULL) {
        *length_p = attr.length;
    }
    return attr.mem_type;
}

ucs_status_t ucp_app_wait(ucp_app_t *app, void **request_p, double deadline)
{
    void *request = *request_p;
    ucs_status_t status;

    if (request == NULL) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(request)) {
        *request_p = NULL;
        return UCS_PTR_STATUS(request);
    }

    for (;;) {
        ucp_app_progress(app);
        status = ucp_request_check_status(request);
        if (status != UCS_INPROGRESS) {
            ucp_request_free(request);
            *request_p = NULL;
            return status;
        }
        if (ucp_app_now() >= deadline) {
            return UCS_ERR_TIMED_OUT;
        }
        if (app->idle != NULL) {
            app->idle(app);
        }
    }
}

void ucp_app_wait_ok(ucp_app_t *app, void *request, const char *what)
{
    ucs_status_t status = ucp_app_wait(app, &request, UCP_APP_FOREVER);

    UCP_APP_CHECK(status == UCS_OK, "%s: %s", what,
                  ucs_status_string(status));
}

ucs_status_t ucp_app_tag_xfer(ucp_app_t *app, ucp_ep_h ep, int self,
                              const void *src, void *dst, size_t size,
                              ucp_tag_t tag,
                              const ucp_request_param_t *rparam,
                              double deadline)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    ucs_status_t status, rstatus;
    void *rreq, *sreq;

    rreq   = ucp_tag_recv_nbx(app->worker, dst, size, tag, (ucp_tag_t)-1,
                              (rparam != NULL) ? rparam : &param);
    sreq   = ucp_tag_send_nbx(ep, src, size, tag, &param);
    status = ucp_app_wait(app, &sreq, deadline);
    if (self && (status != UCS_OK) && (status != UCS_ERR_TIMED_OUT) &&
        (rreq != NULL) && !UCS_PTR_IS_ERR(rreq)) {
        /* the send failed before its data left (UCP with the core patch
         * fails a send whose pack from Gaudi memory fails): nothing will
         * match the receive, which the application cancels */
        ucp_request_cancel(app->worker, rreq);
    }
    rstatus = ucp_app_wait(app, &rreq, deadline);
    if ((status == UCS_ERR_TIMED_OUT) || (rstatus == UCS_ERR_TIMED_OUT)) {
        return UCS_ERR_TIMED_OUT;
    }
    return (status != UCS_OK) ? status : rstatus;
}

int ucp_app_fd_count(const char *skip)
{
    char path[PATH_MAX], target[PATH_MAX];
    struct dirent *entry;
    int count = 0;
    ssize_t len;
    DIR *dir;

    dir = opendir("/proc/self/fd");
    UCP_APP_CHECK(dir != NULL, "opendir(/proc/self/fd): %m");
    while ((entry = readdir(dir)) != NULL) {
        if ((entry->d_name[0] == '.') || (atoi(entry->d_name) == dirfd(dir))) {
            continue;
        }
        if (skip != NULL) {
            snprintf(path, sizeof(path), "/proc/self/fd/%s", entry->d_name);
            len = readlink(path, target, sizeof(target) - 1);
            target[(len < 0) ? 0 : len] = '\0';
            if (strstr(target, skip) != NULL) {
                continue;
            }
        }
        ++count;
    }
    closedir(dir);
    return count;
}
