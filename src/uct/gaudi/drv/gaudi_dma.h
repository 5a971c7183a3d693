/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_DMA_H_
#define UCT_GAUDI_DMA_H_

/*
 * The DMA engine: LIN_DMA packets in command buffers, HL_IOCTL_CS on a DMA
 * queue per direction (host->device, device->host, device->device run
 * concurrently), completion by polling WAIT_CS with timeout 0 in submission
 * order.
 *
 * A channel owns a pool of pre-mapped command buffers, one per submission in
 * flight, so the number in flight is bounded by the pool; a post that finds
 * no free buffer (or gets EAGAIN from the driver) returns
 * UCS_ERR_NO_RESOURCE at once and never retries. Each iface has its own
 * channel, progressed by its own thread; the device's synchronous helpers
 * share one channel between every thread of the process, so a completion
 * may run in another thread than its submitter's (uct_gaudi_dma_sync waits
 * for a flag its completion sets last, never on its count). After a reset,
 * abort or timeout the device is failed: every pending completion gets an
 * error status and every later call reports the failure.
 */

#include "gaudi_device.h"

#include <uct/api/uct_def.h>
#include <ucs/datastruct/list.h>
#include <ucs/datastruct/queue_types.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS


typedef enum {
    UCT_GAUDI_DMA_H2D,       /* host -> device ("down") */
    UCT_GAUDI_DMA_D2H,       /* device -> host ("up") */
    UCT_GAUDI_DMA_D2D,       /* device -> device */
    UCT_GAUDI_DMA_DIR_LAST
} uct_gaudi_dma_dir_t;


/* One copy of a batch: addresses the device can use (DRAM VAs, Gaudi1
 * physical HBM addresses, userptr-mapped host VAs) */
typedef struct uct_gaudi_dma_xfer {
    uint64_t dst;
    uint64_t src;
    size_t   length;
} uct_gaudi_dma_xfer_t;


/* A submission in flight (one per command buffer of the pool) */
typedef struct uct_gaudi_dma_desc {
    ucs_queue_elem_t  queue;      /* in its direction's in-flight queue */
    uint64_t          seq;        /* CS sequence number */
    uint64_t          deadline;   /* ucs_time_t after which it timed out,
                                     unless an earlier submission completed
                                     since (see last_done) */
    uct_completion_t  *comp;      /* user completion, may be NULL */
    size_t            length;     /* bytes it moves */
    unsigned          dir;        /* uct_gaudi_dma_dir_t */
    void              *cb;        /* CPU address of its command buffer */
    uint64_t          cb_handle;  /* Gaudi2: CB device VA; Gaudi1: handle */
    unsigned          next_free;  /* free list link (index) */
    int               wait_failed; /* a WAIT_CS for it failed (said once) */
} uct_gaudi_dma_desc_t;


/* An ended submission whose completion is still to be invoked */
typedef struct uct_gaudi_dma_done {
    uct_completion_t *comp;
    ucs_status_t     status;
} uct_gaudi_dma_done_t;


/* Ended submissions taken per turn of the channel's lock */
#define UCT_GAUDI_DMA_REAP_BATCH 32


typedef struct uct_gaudi_dma_counters {
    uint64_t bytes[UCT_GAUDI_DMA_DIR_LAST];  /* bytes completed */
    uint64_t posted[UCT_GAUDI_DMA_DIR_LAST]; /* submissions per direction */
    uint64_t done[UCT_GAUDI_DMA_DIR_LAST];   /* of which ended (in order) */
    uint64_t num_cs;                         /* submissions accepted */
    uint64_t errors;                         /* submissions that failed */
    uint64_t no_resource;                    /* posts refused: full */
    uint64_t refused;                        /* posts refused: the device
                                                failed, or cannot DMA */
    uint64_t gone;                           /* completed, reaped after their
                                                fence left the window */
} uct_gaudi_dma_counters_t;


/* A DMA channel on an owned device */
typedef struct uct_gaudi_dma_chan {
    uct_gaudi_dev_t          *dev;
    ucs_list_link_t          list;        /* in the device's channels */
    /* guards the descriptors, their free list and in-flight queues, and the
     * counters: a channel is used by its iface's thread and read by the
     * iface's wake-up thread (and the device's blocking channel by any
     * thread); taken alone or inside the ownership lock, never while a
     * completion callback runs */
    pthread_mutex_t          lock;
    unsigned                 num_descs;   /* pool size = max in flight */
    uct_gaudi_dma_desc_t     *descs;
    unsigned                 free_head;   /* first free desc, or num_descs */
    unsigned                 in_flight;
    unsigned                 completing;  /* reaped, completion not yet run:
                                             the channel is not idle */
    unsigned                 next_dir;    /* where the next progress starts
                                             reaping: no direction starves */
    size_t                   cb_size;     /* bytes per command buffer */
    unsigned                 max_pkts;    /* LIN_DMA packets per CS */
    uint64_t                 max_tsize;   /* bytes per packet (the ASIC's
                                             limit; tests lower it) */
    void                     *cb_mem;     /* Gaudi2: all CBs, one mapping */
    uint64_t                 cb_dva;      /* Gaudi2: its device VA */
    size_t                   map_size;    /* Gaudi1: mmap length per CB */
    ucs_queue_head_t         queue[UCT_GAUDI_DMA_DIR_LAST]; /* in flight */
    double                   timeout;     /* seconds one CS may take */
    uint64_t                 full_since;  /* ucs_time_t of the first CS
                                             refused "queue full"
                                             since the last accepted one,
                                             0 none */
    uct_gaudi_dma_counters_t counters;
} uct_gaudi_dma_chan_t;


/* Device-wide DMA state (part of uct_gaudi_dev_t) */
typedef struct uct_gaudi_dma_ctx {
    int                  ready;       /* DMA supported on this ASIC */
    uint32_t             queue[UCT_GAUDI_DMA_DIR_LAST]; /* queue id per dir */
    uct_gaudi_dma_chan_t sync;        /* channel of the blocking helpers */
    uint64_t             num_cs;      /* submissions on all channels */
    uint64_t             last_done_seq; /* newest submission seen
                                           completed (any channel) */
    uint64_t             last_done;   /* ucs_time_t it was reaped; both
                                         atomic, a torn pair only moves a
                                         deadline by one completion */
    /* guards chans; innermost but for the channel locks, never taken with
     * one */
    pthread_mutex_t      chans_lock;
    ucs_list_link_t      chans;       /* every channel of the device */
} uct_gaudi_dma_ctx_t;


/* Set up / tear down the DMA state of @a dev (ownership layer) */
ucs_status_t uct_gaudi_dma_init(uct_gaudi_dev_t *dev);
void uct_gaudi_dma_cleanup(uct_gaudi_dev_t *dev);


/* The failed device is being released (gaudi_reset.h): drop what of the
 * DMA state holds its file, the command buffers' mmaps (Gaudi1), while
 * other threads may still write into them; the channels stay usable (as
 * failed) until their cleanup */
void uct_gaudi_dma_revoke(uct_gaudi_dev_t *dev);


/**
 * Create a channel of @a max_inflight command buffers of @a max_batch
 * LIN_DMA packets each on @a dev.
 *
 * @return UCS_OK; UCS_ERR_UNSUPPORTED on an ASIC without a DMA path
 *         (Gaudi3); other errors, logged.
 */
ucs_status_t uct_gaudi_dma_chan_init(uct_gaudi_dev_t *dev,
                                     unsigned max_inflight, unsigned max_batch,
                                     uct_gaudi_dma_chan_t *chan);


/* Wait (bounded by the DMA timeout) for what is in flight, then free the
 * command buffers */
void uct_gaudi_dma_chan_cleanup(uct_gaudi_dma_chan_t *chan);


/**
 * Whether @a chan's device still runs DMA: UCS_OK, or what
 * uct_gaudi_dma_chan_init() would now refuse it with (the device failed:
 * "device gaudiN failed: <reason>" is logged).
 */
ucs_status_t uct_gaudi_dma_chan_check(const uct_gaudi_dma_chan_t *chan);


/**
 * Submit @a count copies as one command submission. Copies longer than one
 * packet's limit are split. @a comp (may be NULL) is invoked once with the
 * submission's status from uct_gaudi_dma_chan_progress().
 *
 * @return UCS_INPROGRESS if submitted; UCS_OK if there was nothing to copy
 *         (@a comp is not used); UCS_ERR_NO_RESOURCE if the channel or the
 *         driver's queue is full (nothing submitted, try again after
 *         progress); UCS_ERR_IO_ERROR if the device failed; other errors,
 *         logged.
 */
ucs_status_t uct_gaudi_dma_chan_post(uct_gaudi_dma_chan_t *chan,
                                     const uct_gaudi_dma_xfer_t *xfers,
                                     unsigned count, uct_completion_t *comp);


/* A flush waiting for the submissions made before it */
typedef struct uct_gaudi_dma_flush {
    ucs_queue_elem_t  queue;
    uct_completion_t  *comp;
    uint64_t          target[UCT_GAUDI_DMA_DIR_LAST]; /* posted at flush */
} uct_gaudi_dma_flush_t;


/**
 * Flush what was submitted on @a chan so far: UCS_OK if nothing is in flight
 * and @a idle (the caller has nothing pending either); else UCS_INPROGRESS,
 * and @a comp (if not NULL) is queued on @a flushq and invoked by
 * uct_gaudi_dma_chan_flush_progress() once every submission made before the
 * call has ended.
 */
ucs_status_t uct_gaudi_dma_chan_flush(uct_gaudi_dma_chan_t *chan,
                                      ucs_queue_head_t *flushq, int idle,
                                      uct_completion_t *comp);


/* Complete the flushes of @a flushq whose submissions have all ended (each
 * direction completes in order, so comparing counts is enough) */
void uct_gaudi_dma_chan_flush_progress(uct_gaudi_dma_chan_t *chan,
                                       ucs_queue_head_t *flushq);


/**
 * Like uct_gaudi_dma_chan_post(), on the queue of direction @a dir for all
 * transfers (gaudi_ipc: a batch reading or writing a peer's memory, which
 * the PCI DMA engines reach through its BAR). The D2D queue (Gaudi2: an EDMA
 * engine) reaches only this device's HBM.
 */
ucs_status_t uct_gaudi_dma_chan_post_dir(uct_gaudi_dma_chan_t *chan,
                                         const uct_gaudi_dma_xfer_t *xfers,
                                         unsigned count,
                                         uct_gaudi_dma_dir_t dir,
                                         uct_completion_t *comp);


/**
 * Poll the oldest submissions of each direction (WAIT_CS, timeout 0) and
 * invoke the completions of those that ended, at most @a max, each after
 * the channel's lock is released.
 *
 * @return the number of completed submissions.
 */
unsigned uct_gaudi_dma_chan_progress(uct_gaudi_dma_chan_t *chan, unsigned max);


/* The oldest submission in flight of one direction */
typedef struct uct_gaudi_dma_head {
    uint64_t seq;       /* its CS sequence number */
    uint64_t deadline;  /* ucs_time_t after which it timed out */
} uct_gaudi_dma_head_t;


/* The oldest submission in flight of each direction of @a chan (they end
 * in order within a direction, in any order between directions); returns
 * how many were written to @a heads */
unsigned uct_gaudi_dma_chan_heads(uct_gaudi_dma_chan_t *chan,
                                  uct_gaudi_dma_head_t *heads);


/**
 * Block up to @a timeout_us in WAIT_CS for submission @a seq of @a dev.
 *
 * @return UCS_INPROGRESS if it still runs; UCS_OK if it ended (completed or
 *         failed: its channel's progress tells which); an error of the wait
 *         itself (the device failed), logged at debug level only.
 */
ucs_status_t uct_gaudi_dma_wait_seq(uct_gaudi_dev_t *dev, uint64_t seq,
                                    uint64_t timeout_us);


/* The queue a copy from @a src to @a dst goes through: H2D, D2H or D2D by
 * which of them is this device's memory */
uct_gaudi_dma_dir_t uct_gaudi_dma_direction(uct_gaudi_dev_t *dev, uint64_t dst,
                                            uint64_t src, size_t length);


/* The queue of a batch: D2D only if every copy is device to device (the
 * D2D engine reaches this device's memory only); else the PCIe queue of the
 * first copy that involves host memory, which reaches both */
uct_gaudi_dma_dir_t
uct_gaudi_dma_batch_direction(uct_gaudi_dev_t *dev,
                              const uct_gaudi_dma_xfer_t *xfers,
                              unsigned count);


/* A submission can be posted now (a command buffer is free) */
static UCS_F_ALWAYS_INLINE int
uct_gaudi_dma_chan_has_room(const uct_gaudi_dma_chan_t *chan)
{
    return chan->free_head != chan->num_descs;
}


/* Nothing in flight on @a chan, and every completion has run */
static UCS_F_ALWAYS_INLINE int
uct_gaudi_dma_chan_is_idle(const uct_gaudi_dma_chan_t *chan)
{
    return (chan->in_flight == 0) && (chan->completing == 0);
}


/* A post may succeed now: a command buffer is free and the driver's queue
 * did not refuse the last submission (then a request waits in the pending
 * queue rather than retrying at once) */
static UCS_F_ALWAYS_INLINE int
uct_gaudi_dma_chan_can_post(const uct_gaudi_dma_chan_t *chan)
{
    return uct_gaudi_dma_chan_has_room(chan) && (chan->full_since == 0);
}


/**
 * Block until nothing is in flight on @a chan (each submission is bounded by
 * the DMA timeout).
 *
 * @return UCS_OK, or the error of a submission that failed meanwhile.
 */
ucs_status_t uct_gaudi_dma_chan_wait(uct_gaudi_dma_chan_t *chan);


/**
 * Copy @a length bytes between device addresses on the device's blocking
 * channel and wait for completion.
 *
 * @return UCS_OK; UCS_ERR_UNSUPPORTED on Gaudi3; UCS_ERR_IO_ERROR (device
 *         failed) or another error, logged.
 */
ucs_status_t uct_gaudi_dma_copy(uct_gaudi_dev_t *dev, uint64_t dst,
                                uint64_t src, size_t length);


/* Fill @a length bytes at device address @a dst with the byte @a value */
ucs_status_t uct_gaudi_dma_memset(uct_gaudi_dev_t *dev, uint64_t dst,
                                  int value, size_t length);


/**
 * Copy between pageable host memory and device memory: the host buffer is
 * mapped (userptr) for the copy and unmapped after it.
 *
 * @param dir  UCT_GAUDI_DMA_H2D: @a dst is a device address, @a src host
 *             memory; UCT_GAUDI_DMA_D2H: @a dst host memory, @a src a device
 *             address; UCT_GAUDI_DMA_D2D: both device addresses.
 */
ucs_status_t uct_gaudi_dma_copy_host(uct_gaudi_dev_t *dev, void *dst,
                                     const void *src, size_t length,
                                     uct_gaudi_dma_dir_t dir);

END_C_DECLS

#endif
