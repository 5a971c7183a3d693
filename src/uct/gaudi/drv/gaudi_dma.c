/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_dma.h"
#include "gaudi_lib.h"
#include "gaudi_health.h"
#include "gaudi_ioctl.h"
#include "gaudi_mem.h"
#include "gaudi_seam.h"

#include <uct/base/uct_iface.h>
#include <ucs/datastruct/queue.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/math.h>
#include <ucs/sys/sys.h>
#include <ucs/time/time.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>


/* The blocking helpers' channel: a few submissions, large batches */
#define UCT_GAUDI_DMA_SYNC_INFLIGHT  4
#define UCT_GAUDI_DMA_SYNC_BATCH     256

/* ctl dwords (driver-abi.md 8.1, 8.2) */
#define UCT_GAUDI1_DMA_CTL \
    ((UCT_GAUDI_PKT_LIN_DMA << UCT_GAUDI_PKT_OPCODE_SHIFT) | \
     UCT_GAUDI1_LIN_DMA_LIN | UCT_GAUDI1_LIN_DMA_REG_BARRIER | \
     UCT_GAUDI1_LIN_DMA_MSG_BARRIER)
#define UCT_GAUDI2_DMA_CTL \
    ((UCT_GAUDI_PKT_LIN_DMA << UCT_GAUDI_PKT_OPCODE_SHIFT) | \
     UCT_GAUDI2_LIN_DMA_MSG_BARRIER)


/* What a submission carries, for the packet writer */
typedef struct {
    const uct_gaudi_dma_xfer_t *xfers;
    unsigned                   count;
    int                        memset_op;  /* src of each xfer is a pattern */
} uct_gaudi_dma_batch_t;


static int uct_gaudi_dma_is_gaudi1(const uct_gaudi_dev_t *dev)
{
    return dev->info->asic == UCT_GAUDI_ASIC_GAUDI1;
}

/* mmap a kernel CB by its handle; 0 or -1/errno (UCT_GAUDI_FUNC) */
static int uct_gaudi_dma_kcb_mmap(uct_gaudi_dma_chan_t *chan,
                                  uct_gaudi_dma_desc_t *desc)
{
    void *ptr;

    ptr = uct_gaudi_seam_ops->mmap(NULL, chan->map_size,
                                   PROT_READ | PROT_WRITE, MAP_SHARED,
                                   chan->dev->fd, desc->cb_handle);
    if (ptr == MAP_FAILED) {
        return -1;
    }

    desc->cb = ptr;
    return 0;
}

static ucs_status_t uct_gaudi_dma_kcb_create(uct_gaudi_dma_chan_t *chan,
                                             uct_gaudi_dma_desc_t *desc)
{
    uct_gaudi_dev_t *dev = chan->dev;
    union hl_cb_args args;
    ucs_status_t status;

    /* Gaudi1 external queues take kernel CBs only, mmapped by handle */
    memset(&args, 0, sizeof(args));
    args.in.op      = HL_CB_OP_CREATE;
    args.in.cb_size = chan->cb_size;
    status = UCT_GAUDI_FUNC_LOG_ERR(dev, uct_gaudi_ioctl(dev->fd,
                                                         UCT_GAUDI_IOC_CB,
                                                         &args));
    if (status != UCS_OK) {
        return status;
    }

    desc->cb_handle = args.out.cb_handle;
    status = UCT_GAUDI_FUNC_LOG_ERR(dev, uct_gaudi_dma_kcb_mmap(chan, desc));
    if (status == UCS_OK) {
        return UCS_OK;
    }

    memset(&args, 0, sizeof(args));
    args.in.op        = HL_CB_OP_DESTROY;
    args.in.cb_handle = desc->cb_handle;
    UCT_GAUDI_FUNC(dev, uct_gaudi_ioctl(dev->fd, UCT_GAUDI_IOC_CB, &args),
                   UCS_LOG_LEVEL_DIAG);
    return status;
}

static void uct_gaudi_dma_kcb_destroy(uct_gaudi_dma_chan_t *chan,
                                      uct_gaudi_dma_desc_t *desc)
{
    uct_gaudi_dev_t *dev = chan->dev;
    union hl_cb_args args;

    uct_gaudi_seam_ops->munmap(desc->cb, chan->map_size);
    if (dev->failed) {
        /* the driver refuses every CB op while the device is not
         * operational; the CBs go with the fd */
        return;
    }

    memset(&args, 0, sizeof(args));
    args.in.op        = HL_CB_OP_DESTROY;
    args.in.cb_handle = desc->cb_handle;
    UCT_GAUDI_FUNC(dev, uct_gaudi_ioctl(dev->fd, UCT_GAUDI_IOC_CB, &args),
                   UCS_LOG_LEVEL_DIAG);
}

/* Gaudi2: user CBs in host memory the device reads through its MMU, all of
 * the channel's in one mapping */
static ucs_status_t uct_gaudi_dma_ucb_create(uct_gaudi_dma_chan_t *chan)
{
    size_t total = chan->cb_size * chan->num_descs;
    ucs_status_t status;
    unsigned i;

    status = ucs_posix_memalign(&chan->cb_mem, ucs_get_page_size(), total,
                                "gaudi_dma_cb");
    if (status != UCS_OK) {
        ucs_error("%s: failed to allocate %zu bytes of command buffers",
                  chan->dev->name, total);
        return status;
    }

    memset(chan->cb_mem, 0, total);
    status = uct_gaudi_mem_map_host(chan->dev, chan->cb_mem, total,
                                    &chan->cb_dva);
    if (status != UCS_OK) {
        ucs_free(chan->cb_mem);
        return status;
    }

    for (i = 0; i < chan->num_descs; ++i) {
        chan->descs[i].cb        = UCS_PTR_BYTE_OFFSET(chan->cb_mem,
                                                       i * chan->cb_size);
        chan->descs[i].cb_handle = chan->cb_dva + (i * chan->cb_size);
    }

    return UCS_OK;
}

static void uct_gaudi_dma_cbs_destroy(uct_gaudi_dma_chan_t *chan,
                                      unsigned num_kcbs)
{
    unsigned i;

    if (!uct_gaudi_dma_is_gaudi1(chan->dev)) {
        if (!chan->dev->failed) {
            uct_gaudi_mem_unmap(chan->dev, chan->cb_dva);
        }
        ucs_free(chan->cb_mem);
        return;
    }

    for (i = 0; i < num_kcbs; ++i) {
        uct_gaudi_dma_kcb_destroy(chan, &chan->descs[i]);
    }
}

static ucs_status_t uct_gaudi_dma_cbs_create(uct_gaudi_dma_chan_t *chan)
{
    ucs_status_t status;
    unsigned i;

    if (!uct_gaudi_dma_is_gaudi1(chan->dev)) {
        return uct_gaudi_dma_ucb_create(chan);
    }

    chan->map_size = ucs_align_up(chan->cb_size, ucs_get_page_size());
    for (i = 0; i < chan->num_descs; ++i) {
        status = uct_gaudi_dma_kcb_create(chan, &chan->descs[i]);
        if (status != UCS_OK) {
            uct_gaudi_dma_cbs_destroy(chan, i);
            return status;
        }
    }

    return UCS_OK;
}

static ucs_status_t uct_gaudi_dma_check(uct_gaudi_dev_t *dev)
{
    if (!dev->dma->ready) {
        ucs_error("%s: DMA on %s is not supported (its queues are not part of "
                  "any public driver uAPI)", dev->name,
                  uct_gaudi_discover_asic_name(dev->info->asic));
        return UCS_ERR_UNSUPPORTED;
    }

    return uct_gaudi_health_check(dev);
}

ucs_status_t uct_gaudi_dma_chan_check(const uct_gaudi_dma_chan_t *chan)
{
    return uct_gaudi_dma_check(chan->dev);
}

ucs_status_t uct_gaudi_dma_chan_init(uct_gaudi_dev_t *dev,
                                     unsigned max_inflight, unsigned max_batch,
                                     uct_gaudi_dma_chan_t *chan)
{
    ucs_status_t status;
    unsigned i;

    memset(chan, 0, sizeof(*chan));
    chan->dev = dev;
    status    = uct_gaudi_dma_check(dev);
    if (status != UCS_OK) {
        return status;
    }

    chan->num_descs = ucs_max(max_inflight, 1);
    chan->max_pkts  = ucs_max(max_batch, 1);
    chan->cb_size   = chan->max_pkts * sizeof(struct uct_gaudi_pkt_lin_dma);
    chan->max_tsize = UCT_GAUDI_LIN_DMA_MAX_TSIZE;
    chan->timeout   = uct_gaudi_lib_config()->dma_timeout;
    chan->descs     = ucs_calloc(chan->num_descs, sizeof(*chan->descs),
                                 "gaudi_dma_descs");
    if (chan->descs == NULL) {
        ucs_error("%s: failed to allocate %u DMA descriptors", dev->name,
                  chan->num_descs);
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_gaudi_dma_cbs_create(chan);
    if (status != UCS_OK) {
        ucs_free(chan->descs);
        return status;
    }

    for (i = 0; i < chan->num_descs; ++i) {
        chan->descs[i].next_free = i + 1;
    }

    for (i = 0; i < UCT_GAUDI_DMA_DIR_LAST; ++i) {
        ucs_queue_head_init(&chan->queue[i]);
    }

    pthread_mutex_init(&chan->lock, NULL);
    pthread_mutex_lock(&dev->dma->chans_lock);
    ucs_list_add_tail(&dev->dma->chans, &chan->list);
    pthread_mutex_unlock(&dev->dma->chans_lock);
    return UCS_OK;
}

void uct_gaudi_dma_chan_cleanup(uct_gaudi_dma_chan_t *chan)
{
    if (chan->descs == NULL) {
        return;
    }

    pthread_mutex_lock(&chan->dev->dma->chans_lock);
    ucs_list_del(&chan->list);
    pthread_mutex_unlock(&chan->dev->dma->chans_lock);

    /* a CB still owned by the device must not be freed under it */
    if (uct_gaudi_dma_chan_wait(chan) != UCS_OK) {
        ucs_debug("%s: DMA channel closed after a failure", chan->dev->name);
    }

    uct_gaudi_dma_cbs_destroy(chan, chan->num_descs);
    pthread_mutex_destroy(&chan->lock);
    ucs_free(chan->descs);
    chan->descs = NULL;
}

/*
 * Gaudi2 device-to-device queue: stream 0 of the first EDMA engine the
 * device has. Binning leaves engines out of edma_enabled_mask (bit
 * 2 * dcore + n: DCORE<dcore>_EDMA_<n>, 4 streams each), and the driver
 * refuses the queues of a missing one; with none, PDMA_0_1 (PDMA reaches
 * device memory too, only slower).
 */
static uint32_t uct_gaudi_dma_gaudi2_d2d_queue(uct_gaudi_dev_t *dev)
{
    static const uint32_t dcore_edma[] = {
        GAUDI2_QUEUE_ID_DCORE0_EDMA_0_0, GAUDI2_QUEUE_ID_DCORE1_EDMA_0_0,
        GAUDI2_QUEUE_ID_DCORE2_EDMA_0_0, GAUDI2_QUEUE_ID_DCORE3_EDMA_0_0
    };
    uint32_t mask = dev->info->edma_mask;
    unsigned engine;

    for (engine = 0; engine < 2 * ucs_static_array_size(dcore_edma);
         ++engine) {
        if (mask & UCS_BIT(engine)) {
            return dcore_edma[engine / 2] + 4 * (engine % 2);
        }
    }

    ucs_debug("%s: no EDMA engine (edma_enabled_mask 0x%x): device to "
              "device copies go through PDMA", dev->name, mask);
    return GAUDI2_QUEUE_ID_PDMA_0_1;
}

static void uct_gaudi_dma_set_queues(uct_gaudi_dev_t *dev)
{
    uint32_t *queue = dev->dma->queue;

    if (uct_gaudi_dma_is_gaudi1(dev)) {
        /* external queues (kernel CBs, completion tracked); device to
         * device on another stream of DMA 0, so it runs beside H2D */
        queue[UCT_GAUDI_DMA_H2D] = GAUDI_QUEUE_ID_DMA_0_0;
        queue[UCT_GAUDI_DMA_D2H] = GAUDI_QUEUE_ID_DMA_1_0;
        queue[UCT_GAUDI_DMA_D2D] = GAUDI_QUEUE_ID_DMA_0_1;
    } else {
        queue[UCT_GAUDI_DMA_H2D] = GAUDI2_QUEUE_ID_PDMA_0_0;
        queue[UCT_GAUDI_DMA_D2H] = GAUDI2_QUEUE_ID_PDMA_1_0;
        queue[UCT_GAUDI_DMA_D2D] = uct_gaudi_dma_gaudi2_d2d_queue(dev);
    }
}

ucs_status_t uct_gaudi_dma_init(uct_gaudi_dev_t *dev)
{
    uct_gaudi_dma_ctx_t *ctx = dev->dma;
    ucs_status_t status;

    memset(ctx, 0, sizeof(*ctx));
    pthread_mutex_init(&ctx->chans_lock, NULL);
    ucs_list_head_init(&ctx->chans);
    if ((dev->info->asic != UCT_GAUDI_ASIC_GAUDI1) &&
        (dev->info->asic != UCT_GAUDI_ASIC_GAUDI2)) {
        return UCS_OK;  /* copy/memset report UNSUPPORTED */
    }

    uct_gaudi_dma_set_queues(dev);
    ctx->ready = 1;
    status     = uct_gaudi_dma_chan_init(dev, UCT_GAUDI_DMA_SYNC_INFLIGHT,
                                         UCT_GAUDI_DMA_SYNC_BATCH, &ctx->sync);
    if (status != UCS_OK) {
        ctx->ready = 0;
    }

    return status;
}

void uct_gaudi_dma_cleanup(uct_gaudi_dev_t *dev)
{
    if (dev->dma->ready) {
        uct_gaudi_dma_chan_cleanup(&dev->dma->sync);
        dev->dma->ready = 0;
    }

    if (!ucs_list_is_empty(&dev->dma->chans)) {
        ucs_warn("%s: %zu DMA channels still open at its release", dev->name,
                 ucs_list_length(&dev->dma->chans));
    }
    pthread_mutex_destroy(&dev->dma->chans_lock);
}

void uct_gaudi_dma_revoke(uct_gaudi_dev_t *dev)
{
    uct_gaudi_dma_chan_t *chan;
    unsigned i;
    void *ptr;

    if (!uct_gaudi_dma_is_gaudi1(dev)) {
        return;     /* Gaudi2 command buffers are our host memory */
    }

    /* a mapping of the compute node holds its file: each kernel CB mmap is
     * replaced, in place and at once, by anonymous memory, so that a post
     * that writes packets meanwhile writes there (and fails its submission,
     * the device being failed); the cleanup unmaps it */
    pthread_mutex_lock(&dev->dma->chans_lock);
    ucs_list_for_each(chan, &dev->dma->chans, list) {
        for (i = 0; i < chan->num_descs; ++i) {
            ptr = uct_gaudi_seam_ops->mmap(chan->descs[i].cb, chan->map_size,
                                           PROT_READ | PROT_WRITE,
                                           MAP_PRIVATE | MAP_ANONYMOUS |
                                           MAP_FIXED, -1, 0);
            if (ptr == MAP_FAILED) {
                ucs_error("%s: failed to replace the mapping of command "
                          "buffer %u at %p: %m", dev->name, i,
                          chan->descs[i].cb);
            }
        }
    }
    pthread_mutex_unlock(&dev->dma->chans_lock);
}

uct_gaudi_dma_dir_t uct_gaudi_dma_direction(uct_gaudi_dev_t *dev, uint64_t dst,
                                            uint64_t src, size_t length)
{
    int dst_dev = uct_gaudi_mem_is_device_address(dev, dst, length);
    int src_dev = uct_gaudi_mem_is_device_address(dev, src, length);

    if (dst_dev && src_dev) {
        return UCT_GAUDI_DMA_D2D;
    }

    return dst_dev ? UCT_GAUDI_DMA_H2D : UCT_GAUDI_DMA_D2H;
}

uct_gaudi_dma_dir_t
uct_gaudi_dma_batch_direction(uct_gaudi_dev_t *dev,
                              const uct_gaudi_dma_xfer_t *xfers,
                              unsigned count)
{
    uct_gaudi_dma_dir_t dir;
    unsigned i;

    for (i = 0; i < count; ++i) {
        dir = uct_gaudi_dma_direction(dev, xfers[i].dst, xfers[i].src,
                                      xfers[i].length);
        if (dir != UCT_GAUDI_DMA_D2D) {
            return dir;
        }
    }

    return UCT_GAUDI_DMA_D2D;
}

static unsigned uct_gaudi_dma_batch_pkts(const uct_gaudi_dma_chan_t *chan,
                                         const uct_gaudi_dma_batch_t *batch)
{
    unsigned i, num_pkts = 0;

    for (i = 0; i < batch->count; ++i) {
        num_pkts += ucs_div_round_up(batch->xfers[i].length, chan->max_tsize);
    }

    return num_pkts;
}

static size_t uct_gaudi_dma_batch_bytes(const uct_gaudi_dma_batch_t *batch)
{
    size_t length = 0;
    unsigned i;

    for (i = 0; i < batch->count; ++i) {
        length += batch->xfers[i].length;
    }

    return length;
}

static void uct_gaudi_dma_write_pkt(uct_gaudi_dev_t *dev,
                                    struct uct_gaudi_pkt_lin_dma *pkt,
                                    uint64_t dst, uint64_t src, uint32_t size,
                                    int memset_op)
{
    if (uct_gaudi_dma_is_gaudi1(dev)) {
        pkt->ctl      = UCT_GAUDI1_DMA_CTL |
                        (memset_op ? UCT_GAUDI1_LIN_DMA_MEMSET : 0);
        pkt->dst_addr = dst & UCT_GAUDI1_LIN_DMA_DST_MASK;
    } else {
        pkt->ctl      = UCT_GAUDI2_DMA_CTL |
                        (memset_op ? UCT_GAUDI2_LIN_DMA_MEMSET : 0);
        pkt->dst_addr = dst;
    }

    pkt->tsize    = size;
    pkt->src_addr = src;
}

/* Write the packets of @a batch, splitting at the per-packet limit */
static unsigned uct_gaudi_dma_write_batch(const uct_gaudi_dma_chan_t *chan,
                                          void *cb,
                                          const uct_gaudi_dma_batch_t *batch)
{
    struct uct_gaudi_pkt_lin_dma *pkts = cb;
    unsigned i, num_pkts               = 0;
    uint64_t dst, src;
    size_t length, size;

    for (i = 0; i < batch->count; ++i) {
        dst    = batch->xfers[i].dst;
        src    = batch->xfers[i].src;
        length = batch->xfers[i].length;
        while (length > 0) {
            size = ucs_min(length, chan->max_tsize);
            uct_gaudi_dma_write_pkt(chan->dev, &pkts[num_pkts++], dst, src,
                                    size, batch->memset_op);
            dst    += size;
            src    += batch->memset_op ? 0 : size;
            length -= size;
        }
    }

    return num_pkts;
}

static ucs_status_t uct_gaudi_dma_submit(uct_gaudi_dma_chan_t *chan,
                                         uct_gaudi_dma_desc_t *desc,
                                         uint32_t queue, size_t cb_bytes)
{
    uct_gaudi_dev_t *dev = chan->dev;
    struct hl_cs_chunk chunk;
    union hl_cs_args args;
    ucs_status_t status;

    memset(&chunk, 0, sizeof(chunk));
    chunk.cb_handle   = desc->cb_handle;
    chunk.queue_index = queue;
    chunk.cb_size     = cb_bytes;
    if (!uct_gaudi_dma_is_gaudi1(dev)) {
        chunk.cs_chunk_flags = HL_CS_CHUNK_FLAGS_USER_ALLOC_CB;
    }

    memset(&args, 0, sizeof(args));
    args.in.chunks_execute     = (uintptr_t)&chunk;
    args.in.num_chunks_execute = 1;
    status = UCT_GAUDI_FUNC(dev, uct_gaudi_ioctl(dev->fd, UCT_GAUDI_IOC_CS,
                                                 &args),
                            UCS_LOG_LEVEL_DEBUG);
    if (status == UCS_ERR_NO_RESOURCE) {
        /* queue full: back-pressure, which drains as submissions complete;
         * full for longer than one submission may take, the device runs
         * none of them, and retrying from the pending queue would spin
         * forever */
        if (chan->full_since == 0) {
            chan->full_since = ucs_get_time();
        } else if (ucs_time_to_sec(ucs_get_time() - chan->full_since) >
                   chan->timeout) {
            uct_gaudi_health_set_failed(dev, "its command submission queue "
                                        "stayed full for %.1f s "
                                        "(UCX_GAUDI_DMA_TIMEOUT)",
                                        chan->timeout);
            return UCS_ERR_IO_ERROR;
        }
        return status;
    }

    chan->full_since = 0;
    if (status != UCS_OK) {
        ucs_error("%s: DMA submission to queue %u failed: %s", dev->name,
                  queue, ucs_status_string(status));
        return status;
    } else if (args.out.status != HL_CS_STATUS_SUCCESS) {
        ucs_error("%s: DMA submission to queue %u returned status %u",
                  dev->name, queue, args.out.status);
        return UCS_ERR_IO_ERROR;
    }

    desc->seq = args.out.seq;
    return UCS_OK;
}

static ucs_status_t uct_gaudi_dma_post_batch(uct_gaudi_dma_chan_t *chan,
                                             const uct_gaudi_dma_batch_t *batch,
                                             uct_gaudi_dma_dir_t dir,
                                             uct_completion_t *comp)
{
    uct_gaudi_dev_t *dev = chan->dev;
    uct_gaudi_dma_desc_t *desc;
    unsigned num_pkts, index;
    ucs_status_t status;

    status = uct_gaudi_dma_check(dev);
    if (status != UCS_OK) {
        pthread_mutex_lock(&chan->lock);
        ++chan->counters.refused;
        pthread_mutex_unlock(&chan->lock);
        return status;
    }

    num_pkts = uct_gaudi_dma_batch_pkts(chan, batch);
    if (num_pkts == 0) {
        return UCS_OK;
    } else if (num_pkts > chan->max_pkts) {
        ucs_error("%s: a batch of %u copies needs %u DMA packets, more than "
                  "the %u of a command buffer", dev->name, batch->count,
                  num_pkts, chan->max_pkts);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    pthread_mutex_lock(&chan->lock);
    if (!uct_gaudi_dma_chan_has_room(chan)) {
        status = UCS_ERR_NO_RESOURCE;
        goto out_no_resource;
    }

    index  = chan->free_head;
    desc   = &chan->descs[index];
    uct_gaudi_dma_write_batch(chan, desc->cb, batch);
    status = uct_gaudi_dma_submit(chan, desc, dev->dma->queue[dir],
                                  num_pkts * sizeof(struct uct_gaudi_pkt_lin_dma));
    if (status == UCS_ERR_NO_RESOURCE) {
        goto out_no_resource;
    } else if (status != UCS_OK) {
        ++chan->counters.errors;
        goto out;
    }

    chan->free_head   = desc->next_free;
    desc->comp        = comp;
    desc->dir         = dir;
    desc->length      = uct_gaudi_dma_batch_bytes(batch);
    desc->deadline    = ucs_get_time() + ucs_time_from_sec(chan->timeout);
    desc->wait_failed = 0;
    ucs_queue_push(&chan->queue[dir], &desc->queue);
    ++chan->in_flight;
    ++chan->counters.num_cs;
    ++chan->counters.posted[dir];
    ++dev->dma->num_cs;
    ucs_trace_data("%s: CS %" PRIu64 " of %u packets on queue %u", dev->name,
                   desc->seq, num_pkts, dev->dma->queue[dir]);
    status = UCS_INPROGRESS;
    goto out;

out_no_resource:
    ++chan->counters.no_resource;
out:
    pthread_mutex_unlock(&chan->lock);
    return status;
}

ucs_status_t uct_gaudi_dma_chan_post(uct_gaudi_dma_chan_t *chan,
                                     const uct_gaudi_dma_xfer_t *xfers,
                                     unsigned count, uct_completion_t *comp)
{
    uct_gaudi_dma_batch_t batch = {xfers, count, 0};
    uct_gaudi_dma_dir_t dir;

    if (count == 0) {
        return UCS_OK;
    }

    dir = uct_gaudi_dma_batch_direction(chan->dev, xfers, count);
    return uct_gaudi_dma_post_batch(chan, &batch, dir, comp);
}

ucs_status_t uct_gaudi_dma_chan_flush(uct_gaudi_dma_chan_t *chan,
                                      ucs_queue_head_t *flushq, int idle,
                                      uct_completion_t *comp)
{
    uct_gaudi_dma_flush_t *flush;

    if (uct_gaudi_dma_chan_is_idle(chan) && idle) {
        return UCS_OK;
    }

    if (comp == NULL) {
        return UCS_INPROGRESS;
    }

    flush = ucs_malloc(sizeof(*flush), "gaudi_dma_flush");
    if (flush == NULL) {
        ucs_error("%s: failed to allocate a flush request", chan->dev->name);
        return UCS_ERR_NO_MEMORY;
    }

    flush->comp = comp;
    memcpy(flush->target, chan->counters.posted, sizeof(flush->target));
    ucs_queue_push(flushq, &flush->queue);
    return UCS_INPROGRESS;
}

void uct_gaudi_dma_chan_flush_progress(uct_gaudi_dma_chan_t *chan,
                                       ucs_queue_head_t *flushq)
{
    const uint64_t *done = chan->counters.done;
    uct_gaudi_dma_flush_t *flush;
    unsigned dir;

    while (!ucs_queue_is_empty(flushq)) {
        flush = ucs_queue_head_elem_non_empty(flushq, uct_gaudi_dma_flush_t,
                                              queue);
        for (dir = 0; dir < UCT_GAUDI_DMA_DIR_LAST; ++dir) {
            if (done[dir] < flush->target[dir]) {
                return;
            }
        }

        ucs_queue_pull_non_empty(flushq);
        uct_invoke_completion(flush->comp, chan->dev->failed ?
                                           UCS_ERR_IO_ERROR : UCS_OK);
        ucs_free(flush);
    }
}

ucs_status_t uct_gaudi_dma_chan_post_dir(uct_gaudi_dma_chan_t *chan,
                                         const uct_gaudi_dma_xfer_t *xfers,
                                         unsigned count,
                                         uct_gaudi_dma_dir_t dir,
                                         uct_completion_t *comp)
{
    uct_gaudi_dma_batch_t batch = {xfers, count, 0};

    if (count == 0) {
        return UCS_OK;
    }

    return uct_gaudi_dma_post_batch(chan, &batch, dir, comp);
}

/* State of one submission: UCS_OK ended, UCS_INPROGRESS still running, or
 * the error it ended with (the device is then failed) */
/*
 * When a submission in flight times out: the timeout counts from its
 * submission or from the completion of a submission made before it,
 * whichever is later, as the driver's TDR timer starts for a CS when the
 * ones before it end (cs_do_release arms the next CS's work_tdr). A
 * submission queued behind others, or a device that a loaded machine
 * executes slowly, is not failed while the work ahead of it still
 * completes; later submissions completing do not extend it (a stuck one
 * still fails while other queues go on).
 */
static ucs_time_t uct_gaudi_dma_deadline(const uct_gaudi_dma_chan_t *chan,
                                         const uct_gaudi_dma_desc_t *desc)
{
    const uct_gaudi_dma_ctx_t *dma = chan->dev->dma;
    uint64_t done_seq  = __atomic_load_n(&dma->last_done_seq,
                                         __ATOMIC_ACQUIRE);
    uint64_t last_done = __atomic_load_n(&dma->last_done, __ATOMIC_RELAXED);

    if (done_seq >= desc->seq) {
        return desc->deadline;
    }

    return ucs_max(desc->deadline,
                   last_done + ucs_time_from_sec(chan->timeout));
}

/* Submission @a seq completed: progress for those made after it */
static void uct_gaudi_dma_note_done(uct_gaudi_dma_ctx_t *dma, uint64_t seq)
{
    uint64_t cur = __atomic_load_n(&dma->last_done_seq, __ATOMIC_RELAXED);

    while (seq > cur) {
        if (__atomic_compare_exchange_n(&dma->last_done_seq, &cur, seq, 0,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
            __atomic_store_n(&dma->last_done, ucs_get_time(),
                             __ATOMIC_RELAXED);
            return;
        }
    }
}

/* A submission still running: UCS_INPROGRESS until its deadline */
static ucs_status_t uct_gaudi_dma_poll_running(uct_gaudi_dma_chan_t *chan,
                                               uct_gaudi_dma_desc_t *desc)
{
    if (ucs_get_time() <= uct_gaudi_dma_deadline(chan, desc)) {
        return UCS_INPROGRESS;
    }

    /* the command buffer is still the device's: never reuse it */
    uct_gaudi_health_set_failed(chan->dev, "DMA submission %" PRIu64
                                " did not complete within %.1f s of the ones "
                                "before it (UCX_GAUDI_DMA_TIMEOUT)", desc->seq,
                                chan->timeout);
    return UCS_ERR_TIMED_OUT;
}

static ucs_status_t uct_gaudi_dma_poll(uct_gaudi_dma_chan_t *chan,
                                       uct_gaudi_dma_desc_t *desc)
{
    uct_gaudi_dev_t *dev = chan->dev;
    union hl_wait_cs_args args;
    ucs_status_t status;

    if (dev->failed) {
        return UCS_ERR_IO_ERROR;
    }

    memset(&args, 0, sizeof(args));
    args.in.seq        = desc->seq;
    args.in.timeout_us = 0;  /* poll */
    /* a fatal error fails the device, which says so; another is said once
     * per submission below, not at every poll */
    status = UCT_GAUDI_FUNC(dev, uct_gaudi_ioctl(dev->fd, UCT_GAUDI_IOC_WAIT_CS,
                                                 &args),
                            UCS_LOG_LEVEL_DEBUG);
    if ((status != UCS_OK) && dev->failed) {
        return status;
    } else if (status != UCS_OK) {
        /* the wait failed, not the submission: its command buffer may still
         * be the device's, so it counts as running until its deadline */
        if (!desc->wait_failed) {
            desc->wait_failed = 1;
            ucs_warn("%s: waiting for DMA submission %" PRIu64 " failed: %s;"
                     " asked again until its deadline", dev->name, desc->seq,
                     ucs_status_string(status));
        }
        return uct_gaudi_dma_poll_running(chan, desc);
    } else if ((args.out.status == HL_WAIT_CS_STATUS_COMPLETED) &&
               (args.out.flags & HL_WAIT_CS_STATUS_FLAG_GONE)) {
        /*
         * Its fence left the driver's window (max_pending_cs: 64 on Gaudi2)
         * before we polled it: more submissions went through this context
         * meanwhile (other channels, or the application's own runtime on
         * an adopted fd). The driver no longer knows its outcome, and
         * answers so only while the device is operational (WAIT_CS is
         * refused otherwise): a failed submission takes the device out of
         * operation (timeout, reset). Checked again for a reset since.
         */
        if (!uct_gaudi_health_is_operational(dev)) {
            uct_gaudi_health_set_failed(dev, "DMA submission %" PRIu64 " left "
                                        "the driver's window on a device that "
                                        "is not operational", desc->seq);
            return UCS_ERR_IO_ERROR;
        }

        ++chan->counters.gone;
        ucs_debug("%s: DMA submission %" PRIu64 " completed long ago (its "
                  "fence is gone)", dev->name, desc->seq);
        return UCS_OK;
    } else if (args.out.status == HL_WAIT_CS_STATUS_COMPLETED) {
        return UCS_OK;
    } else if (args.out.status != HL_WAIT_CS_STATUS_BUSY) {
        uct_gaudi_health_set_failed(dev, "DMA submission %" PRIu64
                                    " ended with status %u", desc->seq,
                                    args.out.status);
        return UCS_ERR_IO_ERROR;
    }

    return uct_gaudi_dma_poll_running(chan, desc);
}

/* Take the ended submissions at the head of @a dir's queue, up to @a max,
 * into @a done; their completions run after the channel's lock is
 * released (a completion callback may post on the channel again) */
static unsigned uct_gaudi_dma_reap_dir(uct_gaudi_dma_chan_t *chan,
                                       uct_gaudi_dma_dir_t dir,
                                       uct_gaudi_dma_done_t *done,
                                       unsigned max)
{
    ucs_queue_head_t *queue = &chan->queue[dir];
    unsigned count          = 0;
    uct_gaudi_dma_desc_t *desc;
    ucs_status_t status;

    while ((count < max) && !ucs_queue_is_empty(queue)) {
        desc   = ucs_queue_head_elem_non_empty(queue, uct_gaudi_dma_desc_t,
                                               queue);
        status = uct_gaudi_dma_poll(chan, desc);
        if (status == UCS_INPROGRESS) {
            break;
        }

        ucs_queue_pull_non_empty(queue);
        done[count].comp   = desc->comp;
        done[count].status = status;
        desc->next_free    = chan->free_head;
        chan->free_head    = desc - chan->descs;
        --chan->in_flight;
        ++chan->counters.done[dir];
        ++count;
        if (status == UCS_OK) {
            chan->counters.bytes[dir] += desc->length;
            uct_gaudi_dma_note_done(chan->dev->dma, desc->seq);
        } else {
            ++chan->counters.errors;
        }

        ucs_trace_data("%s: CS %" PRIu64 " done: %s", chan->dev->name,
                       desc->seq, ucs_status_string(status));
    }

    return count;
}

unsigned uct_gaudi_dma_chan_progress(uct_gaudi_dma_chan_t *chan, unsigned max)
{
    uct_gaudi_dma_done_t done[UCT_GAUDI_DMA_REAP_BATCH];
    unsigned dir, n, i, num_done, turn, count = 0;

    while ((count < max) && (chan->in_flight > 0)) {
        num_done = 0;
        turn     = ucs_min(max - count, UCT_GAUDI_DMA_REAP_BATCH);
        pthread_mutex_lock(&chan->lock);
        /* each call starts with the next direction: a direction that keeps
         * finishing cannot take the whole budget every time */
        dir            = chan->next_dir;
        chan->next_dir = (dir + 1) % UCT_GAUDI_DMA_DIR_LAST;
        for (n = 0; n < UCT_GAUDI_DMA_DIR_LAST; ++n) {
            num_done += uct_gaudi_dma_reap_dir(
                    chan, (uct_gaudi_dma_dir_t)dir, done + num_done,
                    turn - num_done);
            dir       = (dir + 1) % UCT_GAUDI_DMA_DIR_LAST;
        }
        /* a flush from a completion must wait for the completions after it */
        __atomic_add_fetch(&chan->completing, num_done, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&chan->lock);

        for (i = 0; i < num_done; ++i) {
            if (done[i].comp != NULL) {
                uct_invoke_completion(done[i].comp, done[i].status);
            }
            __atomic_sub_fetch(&chan->completing, 1, __ATOMIC_RELEASE);
        }

        count += num_done;
        if (num_done < turn) {
            break;  /* what is left is still running */
        }
    }

    return count;
}

unsigned uct_gaudi_dma_chan_heads(uct_gaudi_dma_chan_t *chan,
                                  uct_gaudi_dma_head_t *heads)
{
    uct_gaudi_dma_desc_t *desc;
    unsigned dir, count = 0;

    pthread_mutex_lock(&chan->lock);
    for (dir = 0; dir < UCT_GAUDI_DMA_DIR_LAST; ++dir) {
        if (!ucs_queue_is_empty(&chan->queue[dir])) {
            desc = ucs_queue_head_elem_non_empty(&chan->queue[dir],
                                                 uct_gaudi_dma_desc_t, queue);
            heads[count].seq      = desc->seq;
            heads[count].deadline = uct_gaudi_dma_deadline(chan, desc);
            ++count;
        }
    }
    pthread_mutex_unlock(&chan->lock);

    return count;
}

ucs_status_t uct_gaudi_dma_wait_seq(uct_gaudi_dev_t *dev, uint64_t seq,
                                    uint64_t timeout_us)
{
    union hl_wait_cs_args args;
    ucs_status_t status;

    if (dev->failed) {
        return UCS_ERR_IO_ERROR;
    }

    /* errors are the submission's poller's to report: debug level here */
    memset(&args, 0, sizeof(args));
    args.in.seq        = seq;
    args.in.timeout_us = timeout_us;
    status = UCT_GAUDI_FUNC(dev, uct_gaudi_ioctl(dev->fd,
                                                 UCT_GAUDI_IOC_WAIT_CS,
                                                 &args),
                            UCS_LOG_LEVEL_DEBUG);
    if (status != UCS_OK) {
        return status;
    }

    return (args.out.status == HL_WAIT_CS_STATUS_BUSY) ? UCS_INPROGRESS :
                                                         UCS_OK;
}

/* A blocking helper's completion. The device's blocking channel is shared
 * by every thread, so another thread's progress may complete it: the
 * waiter watches @a done, which the completion sets as its last access,
 * never the count (uct_invoke_completion still reads the completion after
 * the count drops to zero, when the waiter may be gone) */
typedef struct {
    uct_completion_t super;
    int              done;
} uct_gaudi_dma_sync_comp_t;


static void uct_gaudi_dma_sync_done(uct_completion_t *self)
{
    uct_gaudi_dma_sync_comp_t *comp = ucs_derived_of(self,
                                                     uct_gaudi_dma_sync_comp_t);

    __atomic_store_n(&comp->done, 1, __ATOMIC_RELEASE);
}

ucs_status_t uct_gaudi_dma_chan_wait(uct_gaudi_dma_chan_t *chan)
{
    uint64_t errors = chan->counters.errors;

    /* every submission ends by its deadline at the latest */
    while (!uct_gaudi_dma_chan_is_idle(chan)) {
        if (uct_gaudi_dma_chan_progress(chan, UINT_MAX) == 0) {
            sched_yield();
        }
    }

    return (chan->counters.errors == errors) ? UCS_OK : UCS_ERR_IO_ERROR;
}

/* Post on the blocking channel (waiting for room, bounded by the DMA
 * timeout) and wait for the completion */
static ucs_status_t uct_gaudi_dma_sync(uct_gaudi_dev_t *dev,
                                       const uct_gaudi_dma_batch_t *batch,
                                       uct_gaudi_dma_dir_t dir)
{
    uct_gaudi_dma_chan_t *chan = &dev->dma->sync;
    uct_gaudi_dma_sync_comp_t comp = {{uct_gaudi_dma_sync_done, 1, UCS_OK},
                                      0};
    ucs_time_t deadline        = ucs_get_time() +
                                 ucs_time_from_sec(chan->timeout);
    ucs_status_t status;

    for (;;) {
        status = uct_gaudi_dma_post_batch(chan, batch, dir, &comp.super);
        if (status != UCS_ERR_NO_RESOURCE) {
            break;
        } else if (ucs_get_time() > deadline) {
            ucs_error("%s: no room for a DMA submission within %.1f s "
                      "(UCX_GAUDI_DMA_TIMEOUT)", dev->name, chan->timeout);
            return UCS_ERR_NO_RESOURCE;
        } else if (uct_gaudi_dma_chan_progress(chan, UINT_MAX) == 0) {
            sched_yield();
        }
    }

    if (status != UCS_INPROGRESS) {
        return status;
    }

    while (!__atomic_load_n(&comp.done, __ATOMIC_ACQUIRE)) {
        if (uct_gaudi_dma_chan_progress(chan, UINT_MAX) == 0) {
            sched_yield();
        }
    }

    return comp.super.status;
}

ucs_status_t uct_gaudi_dma_copy(uct_gaudi_dev_t *dev, uint64_t dst,
                                uint64_t src, size_t length)
{
    uct_gaudi_dma_xfer_t xfer   = {dst, src, length};
    uct_gaudi_dma_batch_t batch = {&xfer, 1, 0};
    ucs_status_t status;

    status = uct_gaudi_dma_check(dev);
    if ((status != UCS_OK) || (length == 0)) {
        return status;
    }

    return uct_gaudi_dma_sync(dev, &batch,
                              uct_gaudi_dma_direction(dev, dst, src, length));
}

ucs_status_t uct_gaudi_dma_memset(uct_gaudi_dev_t *dev, uint64_t dst,
                                  int value, size_t length)
{
    uct_gaudi_dma_xfer_t xfer   = {dst, 0x0101010101010101ull * (uint8_t)value,
                                   length};
    uct_gaudi_dma_batch_t batch = {&xfer, 1, 1};
    ucs_status_t status;

    status = uct_gaudi_dma_check(dev);
    if ((status != UCS_OK) || (length == 0)) {
        return status;
    }

    ucs_trace_data("%s: memset 0x%" PRIx64 " %zu bytes with 0x%x", dev->name,
                   dst, length, (uint8_t)value);
    return uct_gaudi_dma_sync(dev, &batch,
                              uct_gaudi_mem_is_device_address(dev, dst,
                                                              length) ?
                              UCT_GAUDI_DMA_H2D : UCT_GAUDI_DMA_D2H);
}

ucs_status_t uct_gaudi_dma_copy_host(uct_gaudi_dev_t *dev, void *dst,
                                     const void *src, size_t length,
                                     uct_gaudi_dma_dir_t dir)
{
    const void *host = (dir == UCT_GAUDI_DMA_H2D) ? src : dst;
    ucs_status_t status, unmap_status;
    uint64_t hva;

    if (dir == UCT_GAUDI_DMA_D2D) {
        return uct_gaudi_dma_copy(dev, (uintptr_t)dst, (uintptr_t)src, length);
    }

    if (length == 0) {
        return uct_gaudi_dma_check(dev);
    }

    status = uct_gaudi_mem_map_host(dev, host, length, &hva);
    if (status != UCS_OK) {
        return status;
    }

    if (dir == UCT_GAUDI_DMA_H2D) {
        status = uct_gaudi_dma_copy(dev, (uintptr_t)dst, hva, length);
    } else {
        status = uct_gaudi_dma_copy(dev, hva, (uintptr_t)src, length);
    }

    unmap_status = uct_gaudi_mem_unmap(dev, hva);
    return (status != UCS_OK) ? status : unmap_status;
}
