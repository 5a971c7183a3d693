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
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>


/* One blocking WAIT_CS of the thread: how late it sees a stop */
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

static void *uct_gaudi_event_thread(void *arg)
{
    uct_gaudi_event_t *event = arg;
    ucs_status_t status;
    uint64_t seq;

    pthread_mutex_lock(&event->lock);
    for (;;) {
        while (!event->armed && !event->stop) {
            pthread_cond_wait(&event->cond, &event->lock);
        }

        if (event->stop) {
            break;
        }

        seq = event->seq;
        pthread_mutex_unlock(&event->lock);
        status = uct_gaudi_dma_wait_seq(event->chan->dev, seq,
                                        UCT_GAUDI_EVENT_WAIT_US);
        pthread_mutex_lock(&event->lock);
        /* ended, or the wait failed (the device did): either way progress
         * has something to say; a newer arm meanwhile is waited for next */
        if ((status != UCS_INPROGRESS) && event->armed &&
            (event->seq == seq)) {
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
    ucs_status_t status;
    uint64_t seq;

    if (event->fd < 0) {
        return UCS_OK; /* nobody asked for the fd: nobody waits on it */
    }

    status = uct_gaudi_event_drain(event);
    if (status != UCS_OK) {
        return status;
    }

    if (!uct_gaudi_dma_chan_oldest(event->chan, &seq)) {
        return UCS_OK; /* nothing in flight, nothing to wake up for */
    }

    /* ended already: the WAIT_CS with timeout 0 would say so at once */
    status = uct_gaudi_dma_wait_seq(event->chan->dev, seq, 0);
    if (status != UCS_INPROGRESS) {
        return UCS_ERR_BUSY;
    }

    status = uct_gaudi_event_start(event);
    if (status != UCS_OK) {
        return status;
    }

    pthread_mutex_lock(&event->lock);
    event->seq   = seq;
    event->armed = 1;
    pthread_cond_signal(&event->cond);
    pthread_mutex_unlock(&event->lock);
    return UCS_OK;
}
