/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_probe.h"

#include <uct/gaudi/drv/gaudi_device.h>

#include <ucs/debug/log.h>
#include <ucs/sys/math.h>
#include <ucs/sys/string.h>
#include <ucs/time/time.h>
#include <pthread.h>
#include <string.h>


/* Samples per figure: the smallest is kept, as the one least disturbed by
 * the rest of the machine */
#define UCT_GAUDI_PROBE_LAT_SAMPLES 8
#define UCT_GAUDI_PROBE_BW_SAMPLES  3

/* The smallest copy: the latency of a submission with almost no data */
#define UCT_GAUDI_PROBE_LAT_SIZE    8


/* The largest figures kept: what the BW and LAT knobs accept; beyond them
 * the device's completion report cannot be the copy's */
#define UCT_GAUDI_PROBE_MAX_BW      1e13
#define UCT_GAUDI_PROBE_MAX_LAT     1.0

/* The large copy must take this much beyond the small one for its
 * bandwidth to be a measurement and not the clock's resolution */
#define UCT_GAUDI_PROBE_MIN_SPAN    1e-6


/* Devices one process measures: it owns one (a compute node admits one
 * process), a few in tests */
#define UCT_GAUDI_PROBE_MAX_DEVICES 16


typedef enum {
    UCT_GAUDI_PROBE_FREE,      /* no device */
    UCT_GAUDI_PROBE_MEASURING, /* one thread measures its device now */
    UCT_GAUDI_PROBE_DONE       /* measured: kept for the process's life */
} uct_gaudi_probe_state_t;


/* One measurement per device and process, by the device's name (a process
 * that releases its device may own another later). The lock is held only
 * to look up and claim an entry: a device that takes up to the DMA timeout
 * to answer holds up no other device's open. An interface opening the
 * device another thread measures waits for that measurement (measuring
 * together, each would see the other's copies). */
static struct {
    struct {
        char                    name[UCT_GAUDI_DEV_NAME_MAX];
        uct_gaudi_probe_state_t state;
        uct_gaudi_probe_t       probe;
    } entry[UCT_GAUDI_PROBE_MAX_DEVICES];
    pthread_mutex_t lock;
    pthread_cond_t  done;      /* a measurement ended */
} uct_gaudi_probe_cache = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER
};


/* One copy of @a length bytes within the bounce buffer on the queue of
 * @a dir, polled for as the transport's progress polls: its time in
 * seconds. It is waited for however long it takes (bounded by the DMA
 * timeout): the interface stages short operations through that buffer
 * once it is open */
static ucs_status_t uct_gaudi_probe_copy(uct_gaudi_dma_chan_t *chan,
                                         const uct_gaudi_bounce_t *bounce,
                                         uct_gaudi_dma_dir_t dir,
                                         size_t length, double *time_p)
{
    uct_gaudi_dma_xfer_t xfer = {bounce->dva + (bounce->size / 2),
                                 bounce->dva, length};
    ucs_time_t start          = ucs_get_time();
    ucs_status_t status;

    status = uct_gaudi_dma_chan_post_dir(chan, &xfer, 1, dir, NULL);
    if (status == UCS_INPROGRESS) {
        status = uct_gaudi_dma_chan_wait(chan);
    } else if (status == UCS_OK) {
        status = UCS_ERR_IO_ERROR; /* nothing was copied: cannot be */
    } else if (status == UCS_ERR_NO_RESOURCE) {
        /* the driver's queue refused it: the measurement stops and submits
         * nothing more, so the refusal must not count against the
         * interface's first post ("full since", which fails the device
         * after the DMA timeout) */
        chan->full_since = 0;
    }

    *time_p = ucs_time_to_sec(ucs_get_time() - start);
    return status;
}

/* The smallest time of at most @a samples copies of @a length bytes, none
 * started past @a deadline (0: none ran) */
static ucs_status_t uct_gaudi_probe_min(uct_gaudi_dma_chan_t *chan,
                                        const uct_gaudi_bounce_t *bounce,
                                        uct_gaudi_dma_dir_t dir,
                                        size_t length, unsigned samples,
                                        ucs_time_t deadline, double *best_p)
{
    ucs_status_t status;
    double time;
    unsigned i;

    *best_p = 0;
    for (i = 0; (i < samples) && (ucs_get_time() < deadline); ++i) {
        status = uct_gaudi_probe_copy(chan, bounce, dir, length, &time);
        if (status != UCS_OK) {
            ucs_diag("%s: measuring the DMA at interface open stopped: %s",
                     chan->dev->name, ucs_status_string(status));
            return status;
        }
        *best_p = (*best_p == 0) ? time : ucs_min(*best_p, time);
    }

    return UCS_OK;
}

/* Bytes/second of a @a size copy that took @a big against an 8-byte one
 * that took @a lat; 0 where that is no measurement */
static double uct_gaudi_probe_bw(size_t size, double lat, double big)
{
    double bw;

    if ((lat <= 0) || (big - lat < UCT_GAUDI_PROBE_MIN_SPAN)) {
        return 0;
    }

    bw = (size - UCT_GAUDI_PROBE_LAT_SIZE) / (big - lat);
    return (bw <= UCT_GAUDI_PROBE_MAX_BW) ? bw : 0;
}

static ucs_status_t uct_gaudi_probe_measure(uct_gaudi_dma_chan_t *chan,
                                            const uct_gaudi_bounce_t *bounce,
                                            uct_gaudi_probe_t *probe)
{
    static const uct_gaudi_dma_dir_t dirs[] = {UCT_GAUDI_DMA_H2D,
                                               UCT_GAUDI_DMA_D2H};
    ucs_time_t start    = ucs_get_time();
    ucs_time_t deadline = start +
                          ucs_time_from_sec(UCT_GAUDI_PROBE_BUDGET);
    size_t size         = ucs_min(bounce->size / 2, UCT_GAUDI_PROBE_MAX_SIZE);
    ucs_status_t status = UCS_OK;
    double lat, big, bw;
    unsigned i;

    memset(probe, 0, sizeof(*probe));
    for (i = 0; i < ucs_static_array_size(dirs); ++i) {
        status = uct_gaudi_probe_min(chan, bounce, dirs[i],
                                     UCT_GAUDI_PROBE_LAT_SIZE,
                                     UCT_GAUDI_PROBE_LAT_SAMPLES, deadline,
                                     &lat);
        if ((status != UCS_OK) || (lat == 0)) {
            break; /* a copy failed, or the budget ran out before one */
        }

        if (lat <= UCT_GAUDI_PROBE_MAX_LAT) {
            probe->latency = (probe->latency == 0) ? lat :
                             ucs_min(probe->latency, lat);
        }
        if (size < UCT_GAUDI_PROBE_MIN_SIZE) {
            continue;
        }

        status = uct_gaudi_probe_min(chan, bounce, dirs[i], size,
                                     UCT_GAUDI_PROBE_BW_SAMPLES, deadline,
                                     &big);
        if ((status != UCS_OK) || (big == 0)) {
            break;
        }

        /* a queue unmeasured makes the figure unmeasured: the slower one
         * is not known */
        bw               = uct_gaudi_probe_bw(size, lat, big);
        probe->bandwidth = (i == 0) ? bw : ucs_min(probe->bandwidth, bw);
    }

    if (i < ucs_static_array_size(dirs)) {
        /* cut short: a stalled machine must not pin the constants for the
         * process's life, so the caller keeps none of it */
        probe->bandwidth = 0;
        status           = (status == UCS_OK) ? UCS_ERR_TIMED_OUT : status;
    }

    ucs_debug("%s: DMA measured in %.3f ms (%zu-byte copies): latency "
              "%.2f us, PCI bandwidth %.0f MB/s%s", chan->dev->name,
              ucs_time_to_sec(ucs_get_time() - start) * 1e3, size,
              probe->latency * 1e6, probe->bandwidth / UCS_MBYTE,
              (status == UCS_OK) ? "" :
              (status == UCS_ERR_TIMED_OUT) ? " (cut short by its budget)" :
                                              " (a copy failed)");
    return status;
}

/* The entry of @a name, or else a free one to claim; -1 none is left */
static int uct_gaudi_probe_lookup(const char *name)
{
    int i, free_index = -1;

    for (i = 0; i < UCT_GAUDI_PROBE_MAX_DEVICES; ++i) {
        if (uct_gaudi_probe_cache.entry[i].state == UCT_GAUDI_PROBE_FREE) {
            free_index = (free_index < 0) ? i : free_index;
        } else if (!strcmp(uct_gaudi_probe_cache.entry[i].name, name)) {
            return i;
        }
    }

    return free_index;
}

static void uct_gaudi_probe_atfork_prepare(void)
{
    pthread_mutex_lock(&uct_gaudi_probe_cache.lock);
}

static void uct_gaudi_probe_atfork_parent(void)
{
    pthread_mutex_unlock(&uct_gaudi_probe_cache.lock);
}

/* The child has none of its parent's other threads: a measurement one of
 * them was making never ends there */
static void uct_gaudi_probe_atfork_child(void)
{
    int i;

    for (i = 0; i < UCT_GAUDI_PROBE_MAX_DEVICES; ++i) {
        if (uct_gaudi_probe_cache.entry[i].state ==
            UCT_GAUDI_PROBE_MEASURING) {
            uct_gaudi_probe_cache.entry[i].state = UCT_GAUDI_PROBE_FREE;
        }
    }

    /* the prepare handler's lock, held by this (the only) thread */
    pthread_cond_init(&uct_gaudi_probe_cache.done, NULL);
    pthread_mutex_unlock(&uct_gaudi_probe_cache.lock);
}

static void uct_gaudi_probe_atfork_register(void)
{
    pthread_atfork(uct_gaudi_probe_atfork_prepare,
                   uct_gaudi_probe_atfork_parent,
                   uct_gaudi_probe_atfork_child);
}

ucs_status_t uct_gaudi_probe_get(uct_gaudi_dma_chan_t *chan,
                                 const uct_gaudi_bounce_t *bounce,
                                 uct_gaudi_probe_t *probe)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    const char *name           = chan->dev->name;
    ucs_status_t status;
    int i;

    pthread_once(&once, uct_gaudi_probe_atfork_register);
    pthread_mutex_lock(&uct_gaudi_probe_cache.lock);
    while (((i = uct_gaudi_probe_lookup(name)) >= 0) &&
           (uct_gaudi_probe_cache.entry[i].state ==
            UCT_GAUDI_PROBE_MEASURING)) {
        pthread_cond_wait(&uct_gaudi_probe_cache.done,
                          &uct_gaudi_probe_cache.lock);
    }

    if (i < 0) {
        pthread_mutex_unlock(&uct_gaudi_probe_cache.lock);
        return uct_gaudi_probe_measure(chan, bounce, probe); /* not kept */
    } else if (uct_gaudi_probe_cache.entry[i].state == UCT_GAUDI_PROBE_DONE) {
        *probe = uct_gaudi_probe_cache.entry[i].probe;
        pthread_mutex_unlock(&uct_gaudi_probe_cache.lock);
        return UCS_OK;
    }

    ucs_strncpy_zero(uct_gaudi_probe_cache.entry[i].name, name,
                     sizeof(uct_gaudi_probe_cache.entry[i].name));
    uct_gaudi_probe_cache.entry[i].state = UCT_GAUDI_PROBE_MEASURING;
    pthread_mutex_unlock(&uct_gaudi_probe_cache.lock);

    status = uct_gaudi_probe_measure(chan, bounce, probe);

    /* only a whole measurement is kept: a failed copy says nothing of the
     * device after its reset, a stall nothing of the device at all */
    pthread_mutex_lock(&uct_gaudi_probe_cache.lock);
    uct_gaudi_probe_cache.entry[i].probe = *probe;
    uct_gaudi_probe_cache.entry[i].state = (status == UCS_OK) ?
                                           UCT_GAUDI_PROBE_DONE :
                                           UCT_GAUDI_PROBE_FREE;
    pthread_cond_broadcast(&uct_gaudi_probe_cache.done);
    pthread_mutex_unlock(&uct_gaudi_probe_cache.lock);
    return status;
}
