/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * What every e2e UCP program (test/e2e/gaudi_*_ucp*.c) does the same way:
 * one UCP context and worker, endpoints to a worker address, Gaudi or host
 * memory mapped by UCP, waits for requests, the fds the process holds.
 * Public UCP API only: gaudi_ucp_demo, which the main job builds against
 * any installed UCX, uses it too.
 */

#ifndef UCP_APP_H_
#define UCP_APP_H_

#include <ucp/api/ucp.h>
#include <stddef.h>
#include <stdint.h>


/*
 * Each program defines how it fails: print the message in the program's
 * own format (its test script greps it) and exit non-zero. The helpers
 * here and in ucp_ctl.c fail through it.
 */
void ucp_app_die(const char *fmt, ...)
    __attribute__((noreturn, format(printf, 1, 2)));

#define UCP_APP_CHECK(_cond, ...) \
    do { \
        if (!(_cond)) { \
            ucp_app_die(__VA_ARGS__); \
        } \
    } while (0)


/*
 * A UCP context with one single-threaded worker, and how waiting for a
 * request progresses it: by default ucp_worker_progress(); a program that
 * samples something on every progress, or sleeps in ucp_worker_wait()
 * while a request is in flight (-W), sets the hooks.
 */
typedef struct ucp_app {
    ucp_context_h context;
    ucp_worker_h  worker;
    /* replaces ucp_worker_progress() in the waits; NULL: that */
    void          (*progress)(struct ucp_app *app);
    /* after a progress that left the request in flight (returns whether
     * it waited there); NULL: none */
    int           (*idle)(struct ucp_app *app);
} ucp_app_t;


/* A deadline of the waits that is never reached */
#define UCP_APP_FOREVER 1e300

/* Seconds of CLOCK_MONOTONIC */
double ucp_app_now(void);

/* ucp_init() with @a features and a worker (UCS_THREAD_MODE_SINGLE) */
void ucp_app_init(ucp_app_t *app, uint64_t features);

/* Destroy the worker and the context (each only if it exists) */
void ucp_app_cleanup(ucp_app_t *app);

/* Progress the worker once, as the waits do */
void ucp_app_progress(ucp_app_t *app);

/* Receive active message @a id with @a cb */
void ucp_app_set_am_handler(ucp_app_t *app, unsigned id,
                            ucp_am_recv_callback_t cb);

/* An endpoint to the worker at @a address; with @a err_cb (else NULL) in
 * UCP_ERR_HANDLING_MODE_PEER. @a what names it in an error. */
ucp_ep_h ucp_app_ep_create(ucp_app_t *app, const ucp_address_t *address,
                           ucp_err_handler_cb_t err_cb, const char *what);

/* An endpoint to the process's own worker */
ucp_ep_h ucp_app_self_ep(ucp_app_t *app);

/*
 * ucp_mem_map() @a length bytes: allocated by UCP if @a address is NULL,
 * else the range at @a address. @a mem_type UCS_MEMORY_TYPE_UNKNOWN leaves
 * the type out (UCP detects it). Returns ucp_mem_map's status.
 */
ucs_status_t ucp_app_mem_map(ucp_app_t *app, void *address, size_t length,
                             ucs_memory_type_t mem_type, ucp_mem_h *memh_p);

/* The memory type UCP gives @a memh; its range if the pointers are set */
ucs_memory_type_t ucp_app_mem_query(ucp_mem_h memh, void **address_p,
                                    size_t *length_p);

/*
 * Wait for *@a request_p (NULL: it completed in place) until @a deadline
 * (ucp_app_now()). Returns its status and clears *@a request_p; or
 * UCS_ERR_TIMED_OUT and leaves it set, still in flight.
 */
ucs_status_t ucp_app_wait(ucp_app_t *app, void **request_p, double deadline);

/* Wait for @a request however long it takes; fail the program unless it
 * succeeds (@a what names it) */
void ucp_app_wait_ok(ucp_app_t *app, void *request, const char *what);

/*
 * A tag message @a tag of @a size bytes from @a src over @a ep, and a
 * receive of one into @a dst on this worker (@a rparam: its parameters,
 * NULL none). With @a ep to the process's own worker (@a self), a copy
 * from @a src to @a dst (UCP's memory-type copy where one is Gaudi
 * memory); a send that fails before its data left then cancels the
 * receive, which nothing else would match. With @a ep to a peer that does
 * the same, an exchange. Returns UCS_ERR_TIMED_OUT if either is still in
 * flight at @a deadline (they stay so), else the send's status if it
 * failed, else the receive's.
 */
ucs_status_t ucp_app_tag_xfer(ucp_app_t *app, ucp_ep_h ep, int self,
                              const void *src, void *dst, size_t size,
                              ucp_tag_t tag,
                              const ucp_request_param_t *rparam,
                              double deadline);

/* The fds this process holds, but those whose target contains @a skip
 * (NULL: none is skipped) */
int ucp_app_fd_count(const char *skip);

#endif
