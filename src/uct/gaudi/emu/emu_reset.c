/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_reset.h"
#include "emu_dev.h"
#include "emu_dmabuf.h"
#include "emu_fd.h"
#include "emu_global.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


/*
 * The driver's reset thread and release watchdog are kernel work items; the
 * emulator runs them on a thread of the process that started the reset (the
 * owner itself, in every reset the emulator starts: a CS timeout, an
 * injected fault), which polls the device's shared section. When that
 * thread kills its own process, whoever opens the device next completes the
 * reset (emu_dev_acquire).
 */

#define EMU_RESET_POLL_NS  10000000ull  /* 10 ms */


/* Devices whose reset this process watches, and by which thread */
static int emu_reset_watching[EMU_MAX_DEVICES];
static pthread_t emu_reset_threads[EMU_MAX_DEVICES];
static int emu_reset_stop;
static pthread_mutex_t emu_reset_lock = PTHREAD_MUTEX_INITIALIZER;


int emu_reset_watchdog_active(emu_shm_dev_t *sdev)
{
    return __atomic_load_n(&sdev->watchdog_active, __ATOMIC_ACQUIRE);
}

void emu_reset_hard_locked(emu_shm_dev_t *sdev, uint64_t now)
{
    /* hl_device_reset(HARD): the engines halt, every CS is rolled back
     * (aborted), the device is disabled; device_kill_open_processes gives
     * the users a second to close it (ssleep(1)) before it kills them */
    sdev->watchdog_active = 0;
    emu_dev_fail_locked(sdev, HL_DEVICE_STATUS_IN_RESET);
    sdev->kill_ns = now + (uint64_t)(GAUDI_EMU_KILL_DELAY * 1e9);
}

/* A process still holds the device: not gone, and not a zombie whose
 * files are closed already */
static int emu_reset_pid_alive(pid_t pid)
{
    char path[64], buf[256], *p;
    FILE *file;
    int alive;

    if ((pid <= 0) || ((kill(pid, 0) != 0) && (errno == ESRCH))) {
        return 0;
    }

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    file = fopen(path, "re");
    if (file == NULL) {
        return 0;
    }

    alive = 1;
    if (fgets(buf, sizeof(buf), file) != NULL) {
        /* "pid (comm) S ...": the state follows the last ')' */
        p = strrchr(buf, ')');
        alive = (p == NULL) || ((p[1] != '\0') && (p[2] != 'Z') &&
                                (p[2] != 'X'));
    }
    fclose(file);
    return alive;
}

/* The process that keeps the device from being reset, 0 if none: its
 * owner (the compute file open), or the exporter of a DMA-BUF somebody
 * still holds (its file stays open); -1: held, but that process is gone
 * (an importer holds its DMA-BUF), so there is nobody to kill and the
 * reset waits (the driver retries it, device_hard_reset_pending) */
static pid_t emu_reset_holder(int dev, emu_shm_dev_t *sdev)
{
    pid_t pid;

    if ((sdev->owner_ctx != 0) && emu_reset_pid_alive(sdev->owner_pid)) {
        return sdev->owner_pid;
    }

    pid = emu_dmabuf_holder(dev);
    if (pid == 0) {
        return 0;
    }

    return emu_reset_pid_alive(pid) ? pid : -1;
}

static void emu_reset_say_kill(int dev, pid_t pid)
{
    char msg[256];
    ssize_t ret;
    int len;

    /* the driver's "Killing user process pid=%d" (dev_info), on stderr:
     * the process may be this one, which dies without a word otherwise */
    len = snprintf(msg, sizeof(msg), "gaudi_emu: device %d: reset: killing "
                   "process %d, which still holds the device "
                   "(device_kill_open_processes)\n", dev, (int)pid);
    ret = write(STDERR_FILENO, msg, emu_min((size_t)len, sizeof(msg) - 1));
    (void)ret;
}

/* One look at the device: 1 when there is nothing more to watch */
static int emu_reset_step(int dev, emu_shm_dev_t *sdev)
{
    uint64_t now = emu_now_ns();
    pid_t victim = 0;
    int done     = 0;
    pid_t holder;

    emu_state_lock(sdev);
    if (sdev->watchdog_active && (now >= sdev->watchdog_ns)) {
        /* device_release_watchdog_func: not released in time */
        emu_reset_hard_locked(sdev, now);
    }

    if (!sdev->watchdog_active &&
        (sdev->status == HL_DEVICE_STATUS_OPERATIONAL)) {
        done = 1;   /* released, and reset */
    } else if (!sdev->watchdog_active && (sdev->kill_ns != 0) &&
               (now >= sdev->kill_ns)) {
        holder = emu_reset_holder(dev, sdev);
        if (holder == 0) {
            /* nobody holds it: the hard reset completes; what a dead owner
             * left is freed by the next open (emu_dev_acquire) */
            emu_dev_reset_complete_locked(sdev, now, 1);
            done = 1;
        } else if ((holder > 0) && !emu_g.cfg.no_kill &&
                   (sdev->killed_pid != holder)) {
            sdev->killed_pid = holder;
            victim           = holder;
        }
    }
    emu_state_unlock(sdev);

    if (victim != 0) {
        emu_reset_say_kill(dev, victim);
        kill(victim, SIGKILL);
    }

    return done;
}

static void *emu_reset_thread(void *arg)
{
    int dev             = (int)(intptr_t)arg;
    emu_shm_dev_t *sdev = emu_state_dev(dev);
    struct timespec ts  = {0, EMU_RESET_POLL_NS};

    while (!__atomic_load_n(&emu_reset_stop, __ATOMIC_ACQUIRE) &&
           !emu_reset_step(dev, sdev)) {
        nanosleep(&ts, NULL);
    }

    return NULL;
}

/* Join the watcher of @dev if it ended; emu_reset_lock held */
static void emu_reset_reap(int dev, int wait)
{
    if (emu_reset_watching[dev] &&
        (wait || (pthread_tryjoin_np(emu_reset_threads[dev], NULL) == 0))) {
        if (wait) {
            pthread_join(emu_reset_threads[dev], NULL);
        }
        emu_reset_watching[dev] = 0;
    }
}

/* Watch the reset of @dev from this process (one thread per device) */
static void emu_reset_watch(int dev)
{
    pthread_mutex_lock(&emu_reset_lock);
    emu_reset_reap(dev, 0);
    if (!emu_reset_watching[dev]) {
        __atomic_store_n(&emu_reset_stop, 0, __ATOMIC_RELEASE);
        /* on failure the next open completes the reset */
        emu_reset_watching[dev] = pthread_create(&emu_reset_threads[dev],
                                                 NULL, emu_reset_thread,
                                                 (void*)(intptr_t)dev) == 0;
    }
    pthread_mutex_unlock(&emu_reset_lock);
}

void emu_reset_fini(void)
{
    int dev;

    /* the state the watchers read goes away: what they leave, the next
     * open completes */
    pthread_mutex_lock(&emu_reset_lock);
    __atomic_store_n(&emu_reset_stop, 1, __ATOMIC_RELEASE);
    for (dev = 0; dev < EMU_MAX_DEVICES; ++dev) {
        emu_reset_reap(dev, 1);
    }
    pthread_mutex_unlock(&emu_reset_lock);
}

static void emu_reset_atfork_child(void)
{
    /* the watchers stayed in the parent */
    memset(emu_reset_watching, 0, sizeof(emu_reset_watching));
    pthread_mutex_init(&emu_reset_lock, NULL);
}

static void emu_reset_atfork_register(void)
{
    pthread_atfork(NULL, NULL, emu_reset_atfork_child);
}

void emu_reset_atfork_install(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, emu_reset_atfork_register);
}

EMU_EXPORT int gaudi_emu_resets_pending(void)
{
    emu_shm_dev_t *sdev;
    unsigned dev;
    int count = 0;

    if (!emu_g.initialized) {
        return 0;
    }

    for (dev = 0; dev < emu_g.cfg.num_devices; ++dev) {
        /* the reset after a release kills nobody: not counted */
        sdev   = emu_state_dev(dev);
        count += emu_reset_watchdog_active(sdev) ||
                 (__atomic_load_n(&sdev->status, __ATOMIC_ACQUIRE) !=
                  HL_DEVICE_STATUS_OPERATIONAL);
    }

    return count;
}

void emu_reset_cond(int dev, emu_shm_dev_t *sdev, uint64_t events, int tdr)
{
    uint64_t now = emu_now_ns();
    int watch    = 0;

    if (tdr && (emu_g.cfg.lockup == GAUDI_EMU_LOCKUP_NEEDS_RESET)) {
        /* cs_timedout with reset_on_lockup=0: needs_reset, nothing else;
         * the reset happens when the owner closes the device */
        emu_dev_fail(sdev, HL_DEVICE_STATUS_NEEDS_RESET);
        emu_fd_notify(dev, events | HL_NOTIFIER_EVENT_DEVICE_UNAVAILABLE);
        return;
    }

    events |= HL_NOTIFIER_EVENT_DEVICE_RESET;
    emu_state_lock(sdev);
    if ((sdev->status != HL_DEVICE_STATUS_OPERATIONAL) ||
        sdev->watchdog_active) {
        /* a reset runs already: the user is told, nothing else changes */
    } else if ((sdev->owner_ctx != 0) && sdev->owner_eventfd) {
        /* hl_device_cond_reset, with a user registered for events: the
         * release watchdog; the waiters are aborted
         * (hl_abort_waiting_for_completions) and the engines stay hung,
         * the device looks operational meanwhile */
        sdev->watchdog_active = 1;
        sdev->watchdog_ns     = now + emu_g.watchdog_ns;
        sdev->reset_ns        = now;
        __atomic_add_fetch(&sdev->reset_epoch, 1, __ATOMIC_RELEASE);
        watch                 = 1;
    } else {
        /* nobody to tell: hl_device_reset(HARD) at once */
        emu_reset_hard_locked(sdev, now);
        watch = 1;
    }
    emu_state_unlock(sdev);

    emu_fd_notify(dev, events);
    if (watch) {
        emu_reset_watch(dev);
    }
}
