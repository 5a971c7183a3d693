/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_event.h"

#include <ucs/debug/log.h>
#include <ucs/sys/math.h>
#include <ucs/time/time.h>
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>


/* One turn of the thread over the heads it waits for: how late it sees a
 * stop, a newer arm or another direction's end */
#define UCT_GAUDI_EVENT_WAIT_US 10000


static void uct_gaudi_event_signal(uct_gaudi_event_t *event)
{
    uint64_t one = 1;

    /* an eventfd's counter only overflows after 2^64 - 2 writes */
    if (write(event->fd, &one, sizeof(one)) != sizeof(one)) {
        ucs_error("%s: write to the wake-up eventfd %d failed: %m",
                  event->chan->dev->name, event->fd);
    }
}

/* Whether @a head ended (or its wait failed: the device did) or outlived
 * its deadline, waiting up to @a timeout_us for it */
static int uct_gaudi_event_head_ended(uct_gaudi_event_t *event,
                                      const uct_gaudi_dma_head_t *head,
                                      uint64_t timeout_us)
{
    ucs_time_t now = ucs_get_time();

    if (now >= head->deadline) {
        return 1;
    }

    timeout_us = ucs_min(timeout_us,
                         ucs_time_to_usec(head->deadline - now) + 1);
    return uct_gaudi_dma_wait_seq(event->chan->dev, head->seq, timeout_us) !=
           UCS_INPROGRESS;
}

static void *uct_gaudi_event_thread(void *arg)
{
    uct_gaudi_event_t *event = arg;
    uct_gaudi_dma_head_t heads[UCT_GAUDI_DMA_DIR_LAST];
    unsigned i, num_heads;
    uint64_t sn;
    int ended;

    pthread_mutex_lock(&event->lock);
    for (;;) {
        while (!event->armed && !event->stop) {
            pthread_cond_wait(&event->cond, &event->lock);
        }

        if (event->stop) {
            break;
        }

        sn        = event->arm_sn;
        num_heads = event->num_heads;
        memcpy(heads, event->heads, num_heads * sizeof(*heads));
        pthread_mutex_unlock(&event->lock);

        /* a turn of short waits over every direction's oldest submission */
        for (i = 0, ended = 0; (i < num_heads) && !ended; ++i) {
            ended = uct_gaudi_event_head_ended(event, &heads[i],
                                               UCT_GAUDI_EVENT_WAIT_US /
                                               num_heads);
        }

        pthread_mutex_lock(&event->lock);
        /* progress has something to say; a newer arm is waited for next */
        if (ended && event->armed && (event->arm_sn == sn)) {
            event->armed = 0;
            ++event->wakeups;
            uct_gaudi_event_signal(event);
        }
    }
    pthread_mutex_unlock(&event->lock);

    return NULL;
}

void uct_gaudi_event_init(uct_gaudi_event_t *event, uct_gaudi_dma_chan_t *chan)
{
    memset(event, 0, sizeof(*event));
    event->fd   = -1;
    event->chan = chan;
    pthread_mutex_init(&event->lock, NULL);
    pthread_cond_init(&event->cond, NULL);
}

void uct_gaudi_event_cleanup(uct_gaudi_event_t *event)
{
    if (event->started) {
        pthread_mutex_lock(&event->lock);
        event->stop = 1;
        pthread_cond_signal(&event->cond);
        pthread_mutex_unlock(&event->lock);
        pthread_join(event->thread, NULL);
    }

    if (event->fd >= 0) {
        close(event->fd);
        event->fd = -1;
    }

    pthread_cond_destroy(&event->cond);
    pthread_mutex_destroy(&event->lock);
}

ucs_status_t uct_gaudi_event_fd(uct_gaudi_event_t *event, int *fd_p)
{
    /* UCP asks every iface that has one, wake-up wanted or not: the thread
     * waits for the first arm that has something to wait for */
    if (event->fd < 0) {
        event->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (event->fd < 0) {
            ucs_error("%s: failed to create the wake-up eventfd: %m",
                      event->chan->dev->name);
            return UCS_ERR_IO_ERROR;
        }
    }

    *fd_p = event->fd;
    return UCS_OK;
}

static ucs_status_t uct_gaudi_event_start(uct_gaudi_event_t *event)
{
    int ret;

    if (event->started) {
        return UCS_OK;
    }

    ret = pthread_create(&event->thread, NULL, uct_gaudi_event_thread, event);
    if (ret != 0) {
        ucs_error("%s: failed to start the wake-up thread: %s",
                  event->chan->dev->name, strerror(ret));
        return UCS_ERR_IO_ERROR;
    }

    event->started = 1;
    return UCS_OK;
}

/* Consume what the fd holds: whether it was signalled since the last time */
static ucs_status_t uct_gaudi_event_drain(uct_gaudi_event_t *event)
{
    uint64_t count;
    ssize_t ret;

    ret = read(event->fd, &count, sizeof(count));
    if (ret == sizeof(count)) {
        return UCS_ERR_BUSY;
    } else if ((ret < 0) && (errno == EAGAIN)) {
        return UCS_OK;
    } else if ((ret < 0) && (errno == EINTR)) {
        return UCS_ERR_BUSY;  /* look again after progress */
    }

    ucs_error("%s: read from the wake-up eventfd %d failed: %m",
              event->chan->dev->name, event->fd);
    return UCS_ERR_IO_ERROR;
}

ucs_status_t uct_gaudi_event_arm(uct_gaudi_event_t *event)
{
    uct_gaudi_dma_head_t heads[UCT_GAUDI_DMA_DIR_LAST];
    ucs_status_t status;
    unsigned i, num_heads;

    if (event->fd < 0) {
        return UCS_OK; /* nobody asked for the fd: nobody waits on it */
    }

    status = uct_gaudi_event_drain(event);
    if (status != UCS_OK) {
        return status;
    }

    num_heads = uct_gaudi_dma_chan_heads(event->chan, heads);
    if (num_heads == 0) {
        return UCS_OK; /* nothing in flight, nothing to wake up for */
    }

    /* one ended or timed out already: a WAIT_CS with timeout 0 says so */
    for (i = 0; i < num_heads; ++i) {
        if (uct_gaudi_event_head_ended(event, &heads[i], 0)) {
            return UCS_ERR_BUSY;
        }
    }

    status = uct_gaudi_event_start(event);
    if (status != UCS_OK) {
        return status;
    }

    pthread_mutex_lock(&event->lock);
    memcpy(event->heads, heads, num_heads * sizeof(*heads));
    event->num_heads = num_heads;
    event->armed     = 1;
    ++event->arm_sn;
    pthread_cond_signal(&event->cond);
    pthread_mutex_unlock(&event->lock);
    return UCS_OK;
}
