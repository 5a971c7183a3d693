/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_EVENT_H_
#define UCT_GAUDI_EVENT_H_

/*
 * Wake-up of a sleeping worker when a DMA submission ends. The driver has
 * no file descriptor that becomes readable on a CS completion; it has a
 * blocking WAIT_CS. So an armed event hands the oldest submission of each
 * direction (the directions end in any order) to a thread that blocks in
 * WAIT_CS for them in turn and signals an eventfd, which is what UCP polls,
 * when one ends or outlives its deadline (UCX_GAUDI_DMA_TIMEOUT: progress
 * then fails the device, as it would for a worker that polls). The thread is started
 * by the first arm that has a submission to wait for (only a worker that
 * sleeps arms), and does nothing but wait: the completion itself is still
 * reaped by the iface's progress.
 */

#include <uct/gaudi/drv/gaudi_dma.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <pthread.h>
#include <stdint.h>

BEGIN_C_DECLS


typedef struct uct_gaudi_event {
    int                  fd;        /* eventfd, -1 until started */
    uct_gaudi_dma_chan_t *chan;     /* whose submissions it waits for */
    pthread_t            thread;
    int                  started;   /* thread runs: first arm that waits */
    /* guards armed, heads, arm_sn and stop; taken alone (the thread's
     * WAIT_CS runs outside it) */
    pthread_mutex_t      lock;
    pthread_cond_t       cond;
    int                  armed;     /* heads are to be waited for */
    int                  stop;
    unsigned             num_heads;
    uct_gaudi_dma_head_t heads[UCT_GAUDI_DMA_DIR_LAST];
    uint64_t             arm_sn;    /* which arm the heads are of */
    uint64_t             wakeups;   /* times the fd was signalled */
} uct_gaudi_event_t;


/* Prepare @a event for the submissions of @a chan; nothing is started */
void uct_gaudi_event_init(uct_gaudi_event_t *event, uct_gaudi_dma_chan_t *chan);


/* Stop the thread (within one wait slice) and close the fd */
void uct_gaudi_event_cleanup(uct_gaudi_event_t *event);


/* The eventfd, created on first use */
ucs_status_t uct_gaudi_event_fd(uct_gaudi_event_t *event, int *fd_p);


/**
 * Arm for the end of the next submission in flight, in any direction.
 *
 * @return UCS_OK: the fd becomes readable when one ends or times out (or,
 *         with nothing in flight, never: there is nothing to wait for);
 *         UCS_ERR_BUSY: a submission ended or timed out already, or the fd
 *         was signalled since the last arm: progress first.
 */
ucs_status_t uct_gaudi_event_arm(uct_gaudi_event_t *event);

END_C_DECLS

#endif
