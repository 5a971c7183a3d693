/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "emu_common.h"
#include "emu_state.h"
#include "emu_global.h"
#include "emu_log.h"

/*
 * Under valgrind (UCX configured --with-valgrind; by default its config.h
 * defines NVALGRIND): the HBM backing is the device's memory, which the
 * process cannot address on real hardware and which holds no pointer to its
 * heap. Memcheck would still read every page of it in the leak search at
 * exit (GiBs of a sparse file: minutes, and as much page cache). Inaccessible
 * to memcheck, the range is skipped by that search; with address errors off
 * there, the emulator's loads from it count as defined and its stores leave
 * it as it is (what memcheck does for inaccessible memory).
 */
#ifndef NVALGRIND
#  include <valgrind/memcheck.h>
#  define EMU_HBM_OPAQUE(_ptr, _len) \
    do { \
        VALGRIND_MAKE_MEM_NOACCESS(_ptr, _len); \
        VALGRIND_DISABLE_ADDR_ERROR_REPORTING_IN_RANGE(_ptr, _len); \
    } while (0)
#  define EMU_HBM_UNMAPPED(_ptr, _len) \
    VALGRIND_ENABLE_ADDR_ERROR_REPORTING_IN_RANGE(_ptr, _len)
#else
#  define EMU_HBM_OPAQUE(_ptr, _len)
#  define EMU_HBM_UNMAPPED(_ptr, _len)
#endif

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


typedef struct {
    emu_shm_hdr_t   *hdr;
    int             hdr_fd;    /* holds a shared flock while in use */
    pid_t           hdr_pid;   /* the process that took it */
    size_t          size;
    pthread_mutex_t hbm_lock;
    uint8_t         *hbm[EMU_MAX_DEVICES];
    int             hbm_fd[EMU_MAX_DEVICES];
} emu_state_t;

static emu_state_t emu_state = {
    .hdr_fd   = -1,
    .hbm_lock = PTHREAD_MUTEX_INITIALIZER
};


uint64_t emu_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

const char *emu_state_dir(void)
{
    return emu_g.state_dir;
}

int emu_state_path(char *buf, size_t max, const char *name, int dev)
{
    int n;

    if (dev < 0) {
        n = snprintf(buf, max, "%s/%s", emu_g.state_dir, name);
    } else {
        n = snprintf(buf, max, "%s/%s%d", emu_g.state_dir, name, dev);
    }

    return ((n < 0) || ((size_t)n >= max)) ? -ENAMETOOLONG : 0;
}

static size_t emu_state_dev_stride(void)
{
    uint64_t pages = emu_g.dram_size / emu_g.asic->dram_page_size;

    return emu_align_up(sizeof(emu_shm_dev_t) + pages, 4096);
}

static size_t emu_state_size(void)
{
    return 4096 + emu_state_dev_stride() * emu_g.cfg.num_devices;
}

emu_shm_dev_t *emu_state_dev(int dev)
{
    return (emu_shm_dev_t*)((char*)emu_state.hdr + 4096 +
                            emu_state.hdr->dev_stride * dev);
}

uint8_t *emu_state_page_map(emu_shm_dev_t *sdev)
{
    return (uint8_t*)(sdev + 1);
}

void emu_state_lock(emu_shm_dev_t *sdev)
{
    int ret = pthread_mutex_lock(&sdev->lock);

    if (ret == EOWNERDEAD) {
        /* the previous holder died inside a short critical section; the
         * fields it guards are updated in an order that stays usable */
        pthread_mutex_consistent(&sdev->lock);
    }
}

void emu_state_unlock(emu_shm_dev_t *sdev)
{
    pthread_mutex_unlock(&sdev->lock);
}

uint64_t emu_state_new_ctx_id(void)
{
    return __atomic_add_fetch(&emu_state.hdr->next_ctx_id, 1,
                              __ATOMIC_RELAXED);
}

static int emu_state_mkdir(const char *path)
{
    struct stat st;

    if ((mkdir(path, 0700) != 0) && (errno != EEXIST)) {
        emu_error("cannot create state directory %s: %s", path,
                  strerror(errno));
        return -errno;
    }

    if (lstat(path, &st) != 0) {
        emu_error("cannot stat state directory %s: %s", path,
                  strerror(errno));
        return -errno;
    }

    if (!S_ISDIR(st.st_mode)) {
        emu_error("state path %s is not a directory", path);
        return -ENOTDIR;
    }

    if (st.st_uid != geteuid()) {
        emu_error("refusing state directory %s: owned by uid %u, not %u",
                  path, (unsigned)st.st_uid, (unsigned)geteuid());
        return -EPERM;
    }

    if (!emu_g.state_dir_set && ((st.st_mode & 077) != 0) &&
        (chmod(path, 0700) != 0)) {
        emu_error("cannot chmod state directory %s: %s", path,
                  strerror(errno));
        return -errno;
    }

    return 0;
}

static int emu_state_resolve_dir(void)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;

    if (emu_g.state_dir_set) {
        n = strlen(emu_g.state_dir);    /* copied by emu_config_load() */
    } else if ((xdg != NULL) && (xdg[0] == '/')) {
        n = snprintf(emu_g.state_dir, sizeof(emu_g.state_dir),
                     "%s/ucx-gaudi-emu", xdg);
    } else {
        n = snprintf(emu_g.state_dir, sizeof(emu_g.state_dir),
                     "/tmp/ucx-gaudi-emu-%u", (unsigned)geteuid());
    }

    if ((n <= 0) || ((size_t)n >= sizeof(emu_g.state_dir) - 32)) {
        emu_error("state directory path too long");
        return -ENAMETOOLONG;
    }

    return emu_state_mkdir(emu_g.state_dir);
}

static int emu_state_open_file(const char *name, int dev, int flags,
                               int *fd_p)
{
    char path[PATH_MAX];
    int ret;

    ret = emu_state_path(path, sizeof(path), name, dev);
    if (ret < 0) {
        emu_error("state file path too long");
        return ret;
    }

    *fd_p = open(path, flags | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (*fd_p < 0) {
        emu_error("cannot open %s: %s", path, strerror(errno));
        return -errno;
    }

    return 0;
}

static void emu_state_init_dev(emu_shm_dev_t *sdev)
{
    pthread_mutexattr_t attr;

    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&sdev->lock, &attr);
    pthread_mutexattr_destroy(&attr);

    sdev->status      = HL_DEVICE_STATUS_OPERATIONAL;
    sdev->next_handle = 1;
    sdev->num_pages   = emu_g.dram_size / emu_g.asic->dram_page_size;
}

static int emu_state_matches(const emu_shm_hdr_t *hdr)
{
    return (hdr->magic == EMU_STATE_MAGIC) &&
           (hdr->version == EMU_STATE_VERSION) &&
           (hdr->asic == emu_g.asic->asic) &&
           (hdr->num_devices == emu_g.cfg.num_devices) &&
           (hdr->hbm_size == emu_g.hbm_size) &&
           (hdr->edma_mask == emu_g.asic->edma_mask) &&
           (hdr->dev_stride == emu_state_dev_stride());
}

/* Called with init.lock held and the file sized to emu_state_size() */
static void emu_state_format(void)
{
    emu_shm_hdr_t *hdr = emu_state.hdr;
    unsigned dev;

    memset(hdr, 0, emu_state.size);
    hdr->version     = EMU_STATE_VERSION;
    hdr->asic        = emu_g.asic->asic;
    hdr->num_devices = emu_g.cfg.num_devices;
    hdr->hbm_size    = emu_g.hbm_size;
    hdr->edma_mask   = emu_g.asic->edma_mask;
    hdr->dev_stride  = emu_state_dev_stride();
    hdr->next_ctx_id = (uint64_t)getpid() << 20;
    for (dev = 0; dev < emu_g.cfg.num_devices; ++dev) {
        emu_state_init_dev(emu_state_dev(dev));
    }

    __atomic_store_n(&hdr->magic, EMU_STATE_MAGIC, __ATOMIC_RELEASE);
}

static int emu_state_map_header(int fd)
{
    emu_shm_hdr_t probe = {0};
    struct stat st;
    int reformat;

    if (fstat(fd, &st) != 0) {
        emu_error("cannot stat node.state: %s", strerror(errno));
        return -errno;
    }

    if ((size_t)st.st_size >= sizeof(probe)) {
        if (pread(fd, &probe, sizeof(probe), 0) != sizeof(probe)) {
            probe.magic = 0;
        }
    }

    reformat = ((size_t)st.st_size != emu_state.size) ||
               !emu_state_matches(&probe);

    /* every process using the node holds a shared lock on node.state: a
     * different configuration may only replace a node nobody uses */
    if (reformat && (flock(fd, LOCK_EX | LOCK_NB) != 0)) {
        emu_error("state directory %s holds an emulated node with another "
                  "configuration (ASIC, device count or HBM size) that is "
                  "in use; use another state directory", emu_g.state_dir);
        return -EBUSY;
    }

    if (reformat && ((ftruncate(fd, 0) != 0) ||
                     (ftruncate(fd, emu_state.size) != 0))) {
        emu_error("cannot size node.state: %s", strerror(errno));
        return -errno;
    }

    emu_state.hdr = mmap(NULL, emu_state.size, PROT_READ | PROT_WRITE,
                         MAP_SHARED, fd, 0);
    if (emu_state.hdr == MAP_FAILED) {
        emu_state.hdr = NULL;
        emu_error("cannot map node.state: %s", strerror(errno));
        return -ENOMEM;
    }

    if (reformat) {
        emu_state_format();
    }

    flock(fd, LOCK_SH);
    return reformat;
}

static int emu_state_create_dev_files(int reformat)
{
    unsigned dev;
    int ret, fd;

    for (dev = 0; dev < emu_g.cfg.num_devices; ++dev) {
        if ((ret = emu_state_open_file("dev", dev, O_RDWR, &fd)) != 0) {
            return ret;
        }
        close(fd);

        if ((ret = emu_state_open_file("ctl", dev, O_RDONLY, &fd)) != 0) {
            return ret;
        }
        close(fd);

        if ((ret = emu_state_open_file("hbm", dev, O_RDWR, &fd)) != 0) {
            return ret;
        }
        if ((reformat && (ftruncate(fd, 0) != 0)) ||
            (ftruncate(fd, emu_g.hbm_size) != 0)) {
            emu_error("cannot size HBM backing of device %u: %s", dev,
                      strerror(errno));
            close(fd);
            return -errno;
        }
        close(fd);
    }

    return 0;
}

/*
 * What only the users of a node need goes with the last of them. A user holds
 * a shared flock on node.state from emu_state_open() to emu_state_close(), and
 * a newcomer takes init.lock before its own: with init.lock held, an exclusive
 * flock on node.state proves that nobody uses the node, and nobody can start
 * to until init.lock is released.
 *  - A FIFO nobody holds is the DMA-BUF of an exporter that is gone without
 *    closing it (a crash, SIGKILL): removed when the last user leaves and
 *    when the first one comes (the last one may have crashed).
 *  - The HBM backing files are sparse, but every page written stays on disk
 *    or in tmpfs: removed when the last user leaves (what the device memory
 *    held belonged to contexts that are all gone, as on the device).
 * node.state, init.lock and the device files stay (a few KiB): the device's
 * status, a reset in progress and the reset counters outlive a process, as
 * the driver's do.
 */
int emu_state_fifo_held(const char *name)
{
    char path[PATH_MAX];
    int fd, held;

    if (emu_state_path(path, sizeof(path), name, -1) != 0) {
        return 0;
    }

    fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        return 0;
    }

    held = (flock(fd, LOCK_EX | LOCK_NB) != 0);
    if (!held) {
        unlink(path);
    }
    close(fd);
    return held;
}

/* (not inlined: its callers' path buffers and emu_state_fifo_held's would
 * share one frame, over the 8 KiB newer UCX builds allow) */
static void __attribute__((noinline)) emu_state_sweep_fifos(void)
{
    struct dirent *ent;
    struct stat st;
    DIR *dir;

    dir = opendir(emu_g.state_dir);
    if (dir == NULL) {
        return;
    }

    while ((ent = readdir(dir)) != NULL) {
        if ((fstatat(dirfd(dir), ent->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) &&
            S_ISFIFO(st.st_mode)) {
            emu_state_fifo_held(ent->d_name);
        }
    }

    closedir(dir);
}

static int emu_state_unused(int node_fd)
{
    return flock(node_fd, LOCK_EX | LOCK_NB) == 0;
}

/* Called with init.lock held, after this process dropped its own flock */
static void emu_state_leave_locked(void)
{
    char path[PATH_MAX];
    unsigned dev;
    int fd;

    if (emu_state_open_file("node.state", -1, O_RDWR, &fd) != 0) {
        return;
    }

    if (emu_state_unused(fd)) {
        for (dev = 0; dev < emu_g.cfg.num_devices; ++dev) {
            if (emu_state_path(path, sizeof(path), "hbm", dev) == 0) {
                unlink(path);
            }
        }
        emu_state_sweep_fifos();
    }

    close(fd);
}

static int emu_state_lock_init(int *lock_fd_p)
{
    int ret = emu_state_open_file("init.lock", -1, O_RDWR, lock_fd_p);

    if (ret != 0) {
        return ret;
    }

    while ((flock(*lock_fd_p, LOCK_EX) != 0) && (errno == EINTR)) {
    }
    return 0;
}

static void emu_state_unlock_init(int lock_fd)
{
    flock(lock_fd, LOCK_UN);
    close(lock_fd);
}

int emu_state_open(void)
{
    int ret, lock_fd, fd;

    ret = emu_state_resolve_dir();
    if (ret != 0) {
        return ret;
    }

    emu_state.size = emu_state_size();

    ret = emu_state_lock_init(&lock_fd);
    if (ret != 0) {
        return ret;
    }

    ret = emu_state_open_file("node.state", -1, O_RDWR, &fd);
    if ((ret == 0) && emu_state_unused(fd)) {
        /* the first user: the last one may have crashed (its exclusive
         * flock is dropped again by emu_state_map_header's shared one) */
        emu_state_sweep_fifos();
    }
    if (ret == 0) {
        ret = emu_state_map_header(fd);
        if (ret < 0) {
            close(fd);
        } else {
            emu_state.hdr_fd  = fd;
            emu_state.hdr_pid = getpid();
        }
    }

    if (ret >= 0) {
        ret = emu_state_create_dev_files(ret);
    }

    if ((ret < 0) && (emu_state.hdr != NULL)) {
        munmap(emu_state.hdr, emu_state.size);
        emu_state.hdr = NULL;
        close(emu_state.hdr_fd);
        emu_state.hdr_fd = -1;
    }

    emu_state_unlock_init(lock_fd);
    return (ret < 0) ? ret : 0;
}

void emu_state_close(void)
{
    unsigned dev;

    pthread_mutex_lock(&emu_state.hbm_lock);
    for (dev = 0; dev < EMU_MAX_DEVICES; ++dev) {
        if (emu_state.hbm[dev] != NULL) {
            munmap(emu_state.hbm[dev], emu_g.hbm_size);
            EMU_HBM_UNMAPPED(emu_state.hbm[dev], emu_g.hbm_size);
            close(emu_state.hbm_fd[dev]);
            emu_state.hbm[dev] = NULL;
        }
    }
    pthread_mutex_unlock(&emu_state.hbm_lock);

    if (emu_state.hdr == NULL) {
        return;
    }

    emu_state_leave();
    munmap(emu_state.hdr, emu_state.size);
    emu_state.hdr = NULL;
}

void emu_state_leave(void)
{
    int lock_fd;

    if (emu_state.hdr_fd < 0) {
        return;
    }

    /* a forked child shares its parent's open node.state, and with it the
     * parent's lock: the child leaves nothing, the parent still uses it */
    if ((getpid() != emu_state.hdr_pid) ||
        (emu_state_lock_init(&lock_fd) != 0)) {
        close(emu_state.hdr_fd);
        emu_state.hdr_fd = -1;
        return;
    }

    /* explicitly: the header's mapping (kept while other threads run)
     * holds the open file, and with it the lock, after close() */
    flock(emu_state.hdr_fd, LOCK_UN);
    close(emu_state.hdr_fd);
    emu_state.hdr_fd = -1;
    emu_state_leave_locked();
    emu_state_unlock_init(lock_fd);
}

uint8_t *emu_state_hbm(int dev)
{
    uint8_t *hbm;
    void *ptr;
    int fd;

    pthread_mutex_lock(&emu_state.hbm_lock);
    hbm = emu_state.hbm[dev];
    if ((hbm == NULL) &&
        (emu_state_open_file("hbm", dev, O_RDWR, &fd) == 0)) {
        ptr = mmap(NULL, emu_g.hbm_size, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_NORESERVE, fd, 0);
        if (ptr == MAP_FAILED) {
            emu_error("cannot map HBM backing of device %d: %s", dev,
                      strerror(errno));
            close(fd);
        } else {
            EMU_HBM_OPAQUE(ptr, emu_g.hbm_size);
            hbm                    = ptr;
            emu_state.hbm[dev]     = hbm;
            emu_state.hbm_fd[dev]  = fd;
        }
    }
    pthread_mutex_unlock(&emu_state.hbm_lock);

    return hbm;
}

void emu_state_hbm_discard(int dev, uint64_t offset, uint64_t length)
{
    int fd;

    if (emu_state_hbm(dev) == NULL) {
        return;
    }

    pthread_mutex_lock(&emu_state.hbm_lock);
    fd = (emu_state.hbm[dev] != NULL) ? emu_state.hbm_fd[dev] : -1;
    if ((fd < 0) || (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                               offset, length) != 0)) {
        /* no hole punching: the pages keep their content, which the real
         * device does too (no scrubbing by default) */
    }
    pthread_mutex_unlock(&emu_state.hbm_lock);
}
