/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_pid.h"
#include "emu_fd.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t  cond;      /* a reference was dropped */
    emu_ctx_t       **table;
    size_t          size;
    unsigned        count;
} emu_fd_table_t;

static emu_fd_table_t emu_fds = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cond = PTHREAD_COND_INITIALIZER
};


static int emu_fd_is_foreign(const emu_ctx_t *ctx)
{
    return ctx->pid != emu_getpid();
}

static int emu_fd_grow(int fd)
{
    size_t size = emu_max((size_t)fd + 1, emu_fds.size * 2);
    emu_ctx_t **table;

    size  = emu_max(size, 64);
    table = realloc(emu_fds.table, size * sizeof(*table));
    if (table == NULL) {
        return -ENOMEM;
    }

    memset(table + emu_fds.size, 0,
           (size - emu_fds.size) * sizeof(*table));
    emu_fds.table = table;
    emu_fds.size  = size;
    return 0;
}

int emu_fd_insert(emu_ctx_t *ctx)
{
    emu_ctx_t *stale = NULL;
    struct stat st;
    int ret = 0;

    if (fstat(ctx->fd, &st) != 0) {
        return -errno;
    }

    ctx->st_dev = st.st_dev;
    ctx->st_ino = st.st_ino;

    pthread_mutex_lock(&emu_fds.lock);
    if (((size_t)ctx->fd >= emu_fds.size) && (emu_fd_grow(ctx->fd) != 0)) {
        ret = -ENOMEM;
    } else {
        /* an entry here means its fd was closed behind our back */
        stale = emu_fds.table[ctx->fd];
        if ((stale != NULL) && (stale->refs != 0)) {
            ret   = -EBUSY;
            stale = NULL;
        } else {
            emu_fds.table[ctx->fd] = ctx;
            emu_fds.count         += (stale == NULL);
        }
    }
    pthread_mutex_unlock(&emu_fds.lock);

    if (stale != NULL) {
        if (emu_fd_is_foreign(stale)) {
            emu_ctx_forget(stale);
        } else {
            emu_ctx_destroy(stale);
        }
    }

    return ret;
}

emu_ctx_t *emu_fd_get(int fd, int *err_p)
{
    emu_ctx_t *ctx = NULL;
    struct stat st;

    if ((fd < 0) || (fstat(fd, &st) != 0)) {
        *err_p = EBADF;
        return NULL;
    }

    pthread_mutex_lock(&emu_fds.lock);
    if ((size_t)fd < emu_fds.size) {
        ctx = emu_fds.table[fd];
    }

    if ((ctx == NULL) || (ctx->st_dev != st.st_dev) ||
        (ctx->st_ino != st.st_ino)) {
        *err_p = ENOTTY;
        ctx    = NULL;
    } else if (emu_fd_is_foreign(ctx)) {
        *err_p = EBADF;
        ctx    = NULL;
    } else {
        ++ctx->refs;
    }
    pthread_mutex_unlock(&emu_fds.lock);

    return ctx;
}

emu_ctx_t *emu_fd_get_trusted(int fd, int *err_p)
{
    emu_ctx_t *ctx = NULL;

    if (fd >= 0) {
        pthread_mutex_lock(&emu_fds.lock);
        if ((size_t)fd < emu_fds.size) {
            ctx = emu_fds.table[fd];
        }
        if ((ctx != NULL) && !emu_fd_is_foreign(ctx)) {
            ++ctx->refs;
            pthread_mutex_unlock(&emu_fds.lock);
            return ctx;
        }
        pthread_mutex_unlock(&emu_fds.lock);
    }

    return emu_fd_get(fd, err_p);
}

void emu_fd_put(emu_ctx_t *ctx)
{
    pthread_mutex_lock(&emu_fds.lock);
    if (--ctx->refs == 0) {
        pthread_cond_broadcast(&emu_fds.cond);
    }
    pthread_mutex_unlock(&emu_fds.lock);
}

/* Called with the lock held */
static emu_ctx_t *emu_fd_unlink(int fd)
{
    emu_ctx_t *ctx = emu_fds.table[fd];

    emu_fds.table[fd] = NULL;
    --emu_fds.count;
    if (emu_fd_is_foreign(ctx)) {
        emu_ctx_forget(ctx);
        return NULL;
    }

    while (ctx->refs != 0) {
        pthread_cond_wait(&emu_fds.cond, &emu_fds.lock);
    }

    return ctx;
}

emu_ctx_t *emu_fd_remove(int fd)
{
    emu_ctx_t *ctx = NULL;

    pthread_mutex_lock(&emu_fds.lock);
    if ((fd >= 0) && ((size_t)fd < emu_fds.size) &&
        (emu_fds.table[fd] != NULL)) {
        ctx = emu_fd_unlink(fd);
    }
    pthread_mutex_unlock(&emu_fds.lock);

    return ctx;
}

emu_ctx_t *emu_fd_remove_any(void)
{
    emu_ctx_t *ctx = NULL;
    size_t fd;

    pthread_mutex_lock(&emu_fds.lock);
    for (fd = 0; (fd < emu_fds.size) && (emu_fds.count != 0); ++fd) {
        if (emu_fds.table[fd] != NULL) {
            ctx = emu_fd_unlink(fd);
            if (ctx != NULL) {
                break;
            }
        }
    }
    pthread_mutex_unlock(&emu_fds.lock);

    return ctx;
}

unsigned emu_fd_count(void)
{
    unsigned count;

    pthread_mutex_lock(&emu_fds.lock);
    count = emu_fds.count;
    pthread_mutex_unlock(&emu_fds.lock);

    return count;
}

void emu_fd_foreach(int dev, void (*cb)(emu_ctx_t *ctx, void *arg),
                    void *arg)
{
    emu_ctx_t *ctx;
    size_t fd;

    pthread_mutex_lock(&emu_fds.lock);
    for (fd = 0; fd < emu_fds.size; ++fd) {
        ctx = emu_fds.table[fd];
        if ((ctx != NULL) && ((dev < 0) || (ctx->dev == dev)) &&
            !emu_fd_is_foreign(ctx)) {
            cb(ctx, arg);
        }
    }
    pthread_mutex_unlock(&emu_fds.lock);
}

static void emu_fd_notify_one(emu_ctx_t *ctx, void *arg)
{
    emu_ctx_event(ctx, *(uint64_t*)arg);
}

void emu_fd_notify(int dev, uint64_t events)
{
    emu_fd_foreach(dev, emu_fd_notify_one, &events);
}

static void emu_fd_atfork_prepare(void)
{
    pthread_mutex_lock(&emu_fds.lock);
}

static void emu_fd_atfork_parent(void)
{
    pthread_mutex_unlock(&emu_fds.lock);
}

static void emu_fd_atfork_child(void)
{
    pthread_mutex_init(&emu_fds.lock, NULL);
    pthread_cond_init(&emu_fds.cond, NULL);
}

static void emu_fd_atfork_register(void)
{
    pthread_atfork(emu_fd_atfork_prepare, emu_fd_atfork_parent,
                   emu_fd_atfork_child);
}

void emu_fd_atfork_install(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, emu_fd_atfork_register);
}
