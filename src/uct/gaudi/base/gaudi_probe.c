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


/* Devices one process measures: it owns one (a compute node admits one
 * process), a few in tests */
#define UCT_GAUDI_PROBE_MAX_DEVICES 16


/* One measurement per device and process, by the device's name (a process
 * that releases its device may own another later); the lock also keeps two
 * interfaces opening at once from measuring together (each would see the
 * other's copies) */
static struct {
    char              name[UCT_GAUDI_DEV_NAME_MAX]; /* "": a free entry */
    uct_gaudi_probe_t probe;
} uct_gaudi_probe_cache[UCT_GAUDI_PROBE_MAX_DEVICES];
static pthread_mutex_t uct_gaudi_probe_lock = PTHREAD_MUTEX_INITIALIZER;


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
    }

    *time_p = ucs_time_to_sec(ucs_get_time() - start);
    return status;
}

/* The smallest of at most @a samples copies of @a length bytes, none
 * started past @a deadline; a negative time if one failed or none ran */
static double uct_gaudi_probe_min(uct_gaudi_dma_chan_t *chan,
                                  const uct_gaudi_bounce_t *bounce,
                                  uct_gaudi_dma_dir_t dir, size_t length,
                                  unsigned samples, ucs_time_t deadline)
{
    double best = -1, time;
    ucs_status_t status;
    unsigned i;

    for (i = 0; (i < samples) && (ucs_get_time() < deadline); ++i) {
        status = uct_gaudi_probe_copy(chan, bounce, dir, length, &time);
        if (status != UCS_OK) {
            ucs_diag("%s: measuring the DMA at interface open stopped: %s",
                     chan->dev->name, ucs_status_string(status));
            return -1;
        }
        best = (best < 0) ? time : ucs_min(best, time);
    }

    return best;
}

static void uct_gaudi_probe_measure(uct_gaudi_dma_chan_t *chan,
                                    const uct_gaudi_bounce_t *bounce,
                                    uct_gaudi_probe_t *probe)
{
    static const uct_gaudi_dma_dir_t dirs[] = {UCT_GAUDI_DMA_H2D,
                                               UCT_GAUDI_DMA_D2H};
    ucs_time_t start    = ucs_get_time();
    ucs_time_t deadline = start +
                          ucs_time_from_sec(UCT_GAUDI_PROBE_BUDGET);
    size_t size         = bounce->size / 2;
    double lat, big;
    unsigned i;

    memset(probe, 0, sizeof(*probe));
    for (i = 0; i < ucs_static_array_size(dirs); ++i) {
        lat = uct_gaudi_probe_min(chan, bounce, dirs[i],
                                  UCT_GAUDI_PROBE_LAT_SIZE,
                                  UCT_GAUDI_PROBE_LAT_SAMPLES, deadline);
        if (lat < 0) {
            break;
        }

        probe->latency = (probe->latency == 0) ? lat :
                         ucs_min(probe->latency, lat);
        if (size < UCT_GAUDI_PROBE_MIN_SIZE) {
            continue;
        }

        big = uct_gaudi_probe_min(chan, bounce, dirs[i], size,
                                  UCT_GAUDI_PROBE_BW_SAMPLES, deadline);
        if (big < 0) {
            break;
        }

        /* the large copy's time beyond the submission's latency; a copy
         * faster than the small one (noise) leaves the figure unmeasured */
        if (big > lat) {
            probe->bandwidth[dirs[i]] = (size - UCT_GAUDI_PROBE_LAT_SIZE) /
                                        (big - lat);
        }
    }

    probe->elapsed = ucs_time_to_sec(ucs_get_time() - start);
    ucs_debug("%s: DMA measured in %.3f ms: latency %.2f us, H2D %.0f MB/s, "
              "D2H %.0f MB/s", chan->dev->name, probe->elapsed * 1e3,
              probe->latency * 1e6,
              probe->bandwidth[UCT_GAUDI_DMA_H2D] / UCS_MBYTE,
              probe->bandwidth[UCT_GAUDI_DMA_D2H] / UCS_MBYTE);
}

void uct_gaudi_probe_get(uct_gaudi_dma_chan_t *chan,
                         const uct_gaudi_bounce_t *bounce,
                         uct_gaudi_probe_t *probe)
{
    unsigned i;

    pthread_mutex_lock(&uct_gaudi_probe_lock);
    for (i = 0; (i < UCT_GAUDI_PROBE_MAX_DEVICES) &&
                (uct_gaudi_probe_cache[i].name[0] != '\0') &&
                strcmp(uct_gaudi_probe_cache[i].name, chan->dev->name);
         ++i) {
    }

    if (i == UCT_GAUDI_PROBE_MAX_DEVICES) {
        uct_gaudi_probe_measure(chan, bounce, probe); /* not kept */
    } else {
        if (uct_gaudi_probe_cache[i].name[0] == '\0') {
            uct_gaudi_probe_measure(chan, bounce,
                                    &uct_gaudi_probe_cache[i].probe);
            ucs_strncpy_zero(uct_gaudi_probe_cache[i].name, chan->dev->name,
                             sizeof(uct_gaudi_probe_cache[i].name));
        }

        *probe = uct_gaudi_probe_cache[i].probe;
    }

    pthread_mutex_unlock(&uct_gaudi_probe_lock);
}
