/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_dmabuf.h"
#include "emu_global.h"
#include "emu_hbm.h"
#include "emu_pci.h"
#include "emu_state.h"
#include "emu_va.h"

/*
 * An exported DMA-BUF is a FIFO in the state directory, named after what it
 * describes: "dmabuf-<dev>-<backing offset>-<length>-<pid>-<id>". The fd
 * handed out is the FIFO opened O_RDWR|O_NONBLOCK with a shared flock:
 *   - it is a real fd that survives SCM_RIGHTS / pidfd_getfd;
 *   - the CPU cannot mmap it (ENODEV), like the real dma-buf;
 *   - the flock lives as long as any copy of the fd (or an importer's dup),
 *     so "still referenced?" is a non-blocking exclusive flock attempt.
 * The importer (op 99) finds the FIFO through /proc/self/fd, parses the name
 * and maps the exporter's HBM backing into its own device VA space.
 */

#define EMU_DMABUF_PREFIX  "dmabuf-"

typedef struct emu_dmabuf {
    struct emu_dmabuf *next;
    uint64_t          va;       /* exported MAP VA (pins it), or 0 */
    char              name[96];
} emu_dmabuf_t;

typedef struct {
    int      dev;
    uint64_t offset;
    uint64_t length;
    pid_t    pid;       /* the exporter */
} emu_dmabuf_desc_t;


static int emu_dmabuf_parse(const char *name, emu_dmabuf_desc_t *desc)
{
    unsigned long long offset, length, id;
    unsigned pid;
    int dev, n = 0;

    if ((sscanf(name, EMU_DMABUF_PREFIX "%d-%llx-%llx-%u-%llx%n", &dev,
                &offset, &length, &pid, &id, &n) != 5) ||
        (name[n] != '\0') || (dev < 0) ||
        ((unsigned)dev >= emu_g.cfg.num_devices) || (length == 0) ||
        (offset + length > emu_g.hbm_size) || (offset + length < offset)) {
        return -EINVAL;
    }

    desc->dev    = dev;
    desc->offset = offset;
    desc->length = length;
    desc->pid    = (pid_t)pid;
    return 0;
}

/* What an export request designates: backing offset and length */
static int emu_dmabuf_source(emu_ctx_t *ctx, const union hl_mem_args *args,
                             emu_dmabuf_desc_t *desc, uint64_t *va_p)
{
    const emu_asic_t *asic = emu_g.asic;
    const struct uct_gaudi_mem_export_in *in = (const void*)&args->in;
    uint64_t offset = emu_abi()->export_handle ? 0 : in->offset;
    uint64_t addr   = in->addr, size = in->mem_size;
    uint64_t pack_off = 0, pack_len = 0;  /* HBM the export's pages are of */
    emu_shm_alloc_t *alloc;
    emu_map_t *map;
    int ret = -EINVAL;

    desc->dev    = ctx->dev;
    desc->length = size;
    *va_p        = 0;
    if ((size == 0) || (size % EMU_HOST_PAGE) || (offset % EMU_HOST_PAGE)) {
        return -EINVAL;
    }

    if (!asic->dram_vm) {
        /* Gaudi1: a physical HBM address, no offset */
        /* no "addr + size": a size near 2^64 would wrap past the check */
        if ((offset == 0) && !(addr % EMU_HOST_PAGE) &&
            (addr >= asic->dram_base) &&
            (addr - asic->dram_base <= emu_g.dram_size) &&
            (size <= emu_g.dram_size - (addr - asic->dram_base))) {
            desc->offset = addr - asic->dram_base;
            pack_off     = desc->offset;
            pack_len     = size;
            ret          = 0;
        }
    } else if (emu_abi()->export_handle) {
        /* 6.1: the ALLOC handle */
        emu_state_lock(ctx->sdev);
        alloc = emu_hbm_find(ctx->sdev, addr);
        if ((alloc != NULL) && (alloc->owner == ctx->id) &&
            (size <= alloc->size)) {
            desc->offset = emu_hbm_offset(alloc);
            pack_off     = desc->offset;
            pack_len     = alloc->size;
            ret          = 0;
        }
        emu_state_unlock(ctx->sdev);
    } else {
        /* exactly a VA MAP returned for device memory, plus an offset */
        pthread_mutex_lock(&ctx->lock);
        map = emu_va_find(&ctx->va, addr);
        /* no "offset + size": an offset near 2^64 would wrap past the
         * check and export memory before the mapping (another
         * allocation's, maybe another process's) */
        if ((map != NULL) && (map->type == EMU_MAP_DRAM) &&
            (map->user_va == addr) && (offset <= map->size) &&
            (size <= map->size - offset)) {
            /* drivers before the offset handling validate the offset but
             * export from the mapping's first page */
            desc->offset = (map->host - ctx->hbm) +
                           (emu_g.export_offset ? offset : 0);
            pack_off     = map->host - ctx->hbm;
            pack_len     = map->size;
            *va_p        = addr;
            ret          = 0;
        }
        pthread_mutex_unlock(&ctx->lock);
    }

    /* validate_export_params: the importer reaches the pages through the
     * PCIe DRAM BAR, the driver refuses any beyond it; it checks every page
     * of the allocation's page pack (Gaudi2+), or the range (Gaudi1) */
    if ((ret == 0) && (emu_g.cfg.dram_bar_size != 0) &&
        ((pack_off >= emu_g.cfg.dram_bar_size) ||
         (pack_len > emu_g.cfg.dram_bar_size - pack_off))) {
        ret = -EINVAL;
    }

    return ret;
}

int emu_dmabuf_export(emu_ctx_t *ctx, union hl_mem_args *args)
{
    static uint64_t next_id;
    int cloexec = args->in.flags & O_CLOEXEC;
    emu_dmabuf_desc_t desc;
    char path[PATH_MAX];
    emu_dmabuf_t *buf;
    uint64_t va;
    int ret, fd;

    ret = emu_dmabuf_source(ctx, args, &desc, &va);
    if (ret != 0) {
        return ret;
    }

    buf = calloc(1, sizeof(*buf));
    if (buf == NULL) {
        return -ENOMEM;
    }

    snprintf(buf->name, sizeof(buf->name),
             EMU_DMABUF_PREFIX "%d-%llx-%llx-%u-%llx", desc.dev,
             (unsigned long long)desc.offset,
             (unsigned long long)desc.length, (unsigned)getpid(),
             (unsigned long long)__atomic_add_fetch(&next_id, 1,
                                                    __ATOMIC_RELAXED));
    if ((emu_state_path(path, sizeof(path), buf->name, -1) != 0) ||
        (mkfifo(path, 0600) != 0)) {
        free(buf);
        return -ENOMEM;
    }

    fd = open(path, O_RDWR | O_NONBLOCK | O_NOFOLLOW | (cloexec ? O_CLOEXEC :
                                                                   0));
    if ((fd < 0) || (flock(fd, LOCK_SH) != 0)) {
        ret = -errno;
        if (fd >= 0) {
            close(fd);
        }
        unlink(path);
        free(buf);
        return ret;
    }

    buf->va = va;
    pthread_mutex_lock(&ctx->lock);
    buf->next    = ctx->dmabufs;
    ctx->dmabufs = buf;
    pthread_mutex_unlock(&ctx->lock);

    memset(args, 0, sizeof(*args));
    args->out.fd = fd;
    return 0;
}

/* Which DMA-BUF is @fd? */
static int emu_dmabuf_lookup_fd(int fd, emu_dmabuf_desc_t *desc)
{
    /* one path buffer, for the link's target and then the state file:
     * modules of newer UCX builds must keep their frames under 8 KiB */
    char link[64], path[PATH_MAX], name[NAME_MAX + 1];
    struct stat st_fd, st_path;
    const char *base;
    ssize_t n;

    if ((fd < 0) || (fstat(fd, &st_fd) != 0)) {
        return -EBADF;
    }

    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof(path) - 1);
    if ((n <= 0) || !S_ISFIFO(st_fd.st_mode)) {
        return -EINVAL;
    }

    path[n] = '\0';
    base    = strrchr(path, '/');
    base    = (base != NULL) ? base + 1 : path;
    if (strlen(base) >= sizeof(name)) {
        return -EINVAL;     /* no file name is that long */
    }

    strcpy(name, base);
    if ((emu_dmabuf_parse(name, desc) != 0) ||
        (emu_state_path(path, sizeof(path), name, -1) != 0) ||
        (stat(path, &st_path) != 0) || (st_path.st_dev != st_fd.st_dev) ||
        (st_path.st_ino != st_fd.st_ino)) {
        return -EINVAL;     /* not a DMA-BUF of this emulated node */
    }

    return 0;
}

int emu_dmabuf_import(emu_ctx_t *ctx, union hl_mem_args *args)
{
    const emu_asic_t *asic = emu_g.asic;
    const struct uct_gaudi_mem_reg_dmabuf_in *in = (const void*)&args->in;
    emu_dmabuf_desc_t desc;
    emu_map_t map;
    uint8_t *hbm;
    int ret;

    ret = emu_dmabuf_lookup_fd((int)in->fd, &desc);
    if (ret != 0) {
        return ret;
    }

    if ((in->length == 0) || (in->length > desc.length)) {
        return -EINVAL;
    }

    hbm = emu_state_hbm(desc.dev);
    if (hbm == NULL) {
        return -ENOMEM;
    }

    memset(&map, 0, sizeof(map));
    map.size      = emu_align_up(in->length, EMU_HOST_PAGE);
    map.host      = hbm + desc.offset;
    map.type      = EMU_MAP_HOST;
    /* the out-of-tree driver maps it whatever the route between the two
     * devices (no pci_p2pdma_distance); the transfers then find out */
    map.unrouted  = !emu_pci_route(ctx->dev, desc.dev);
    map.import_fd = fcntl((int)in->fd, F_DUPFD_CLOEXEC, 0);
    if (map.import_fd < 0) {
        return -EMFILE;
    }

    /* the peer's memory is reached through the PCIe BAR: a host VA */
    pthread_mutex_lock(&ctx->lock);
    ret = emu_va_reserve(&ctx->va, asic->host_va_start, asic->host_va_end,
                         map.size, EMU_HOST_PAGE, 0, 0, &map.va);
    if (ret == 0) {
        map.user_va = map.va;
        ret         = emu_va_insert(&ctx->va, &map);
    }
    pthread_mutex_unlock(&ctx->lock);

    if (ret != 0) {
        close(map.import_fd);
        return ret;
    }

    memset(args, 0, sizeof(*args));
    args->out.device_virt_addr = map.va;
    return 0;
}

int emu_dmabuf_exported(emu_ctx_t *ctx, uint64_t va)
{
    emu_dmabuf_t **p = &ctx->dmabufs;
    emu_dmabuf_t *buf;
    int exported = 0;

    while ((buf = *p) != NULL) {
        if ((buf->va != va) || (va == 0)) {
            p = &buf->next;
        } else if (emu_state_fifo_held(buf->name)) {
            exported = 1;
            p        = &buf->next;
        } else {
            *p = buf->next;
            free(buf);
        }
    }

    return exported;
}

int emu_dmabuf_range_exported(emu_ctx_t *ctx, uint64_t offset,
                               uint64_t length)
{
    emu_dmabuf_desc_t desc;
    emu_dmabuf_t *buf;

    for (buf = ctx->dmabufs; buf != NULL; buf = buf->next) {
        if ((emu_dmabuf_parse(buf->name, &desc) == 0) &&
            (desc.offset < offset + length) &&
            (offset < desc.offset + desc.length) &&
            emu_state_fifo_held(buf->name)) {
            return 1;
        }
    }

    return 0;
}

unsigned emu_dmabuf_count_alive(emu_ctx_t *ctx)
{
    emu_dmabuf_t *buf;
    unsigned count = 0;

    for (buf = ctx->dmabufs; buf != NULL; buf = buf->next) {
        count += emu_state_fifo_held(buf->name);
    }

    return count;
}

void emu_dmabuf_unmap_import(emu_ctx_t *ctx, emu_map_t *map)
{
    if (map->import_fd >= 0) {
        close(map->import_fd);
        map->import_fd = -1;
    }
}

void emu_dmabuf_cleanup(emu_ctx_t *ctx)
{
    emu_dmabuf_t *buf;

    pthread_mutex_lock(&ctx->lock);
    while ((buf = ctx->dmabufs) != NULL) {
        ctx->dmabufs = buf->next;
        emu_state_fifo_held(buf->name);    /* unlinks it if nobody holds it */
        free(buf);
    }
    pthread_mutex_unlock(&ctx->lock);
}

static void emu_dmabuf_keep(emu_shm_dev_t *sdev, uint64_t offset)
{
    uint64_t page = offset / emu_g.asic->dram_page_size;
    unsigned i;

    for (i = 0; i < EMU_MAX_ALLOCS; ++i) {
        if ((sdev->allocs[i].handle != 0) &&
            (page >= sdev->allocs[i].first_page) &&
            (page < sdev->allocs[i].first_page + sdev->allocs[i].num_pages)) {
            sdev->allocs[i].owner = EMU_ALLOC_OWNER_EXPORTED;
        }
    }
}

void emu_dmabuf_protect(int dev, emu_shm_dev_t *sdev)
{
    emu_dmabuf_desc_t desc;
    struct dirent *ent;
    unsigned i;
    DIR *dir;

    for (i = 0; i < EMU_MAX_ALLOCS; ++i) {
        if (sdev->allocs[i].owner == EMU_ALLOC_OWNER_EXPORTED) {
            sdev->allocs[i].owner = 0;  /* freed below unless still held */
        }
    }

    dir = opendir(emu_state_dir());
    if (dir == NULL) {
        return;
    }

    while ((ent = readdir(dir)) != NULL) {
        if ((emu_dmabuf_parse(ent->d_name, &desc) == 0) &&
            (desc.dev == dev) && emu_state_fifo_held(ent->d_name)) {
            emu_dmabuf_keep(sdev, desc.offset);
        }
    }

    closedir(dir);
}

EMU_EXPORT int gaudi_emu_dmabuf_read(int fd, uint64_t offset, void *buf,
                                     size_t length, uint64_t *size_p)
{
    emu_dmabuf_desc_t desc;
    const uint8_t *hbm;
    int ret;

    if (!emu_g.initialized) {
        return -ENODEV;
    }

    ret = emu_dmabuf_lookup_fd(fd, &desc);
    if (ret != 0) {
        return ret;
    }

    if (size_p != NULL) {
        *size_p = desc.length;
    }

    /* no "offset + length": a length near 2^64 would wrap past the check */
    if ((offset > desc.length) || (length > desc.length - offset)) {
        return -EINVAL;
    }

    hbm = emu_state_hbm(desc.dev);
    if (hbm == NULL) {
        return -ENOMEM;
    }

    /* what the DMA-BUF holds, as an importer reaches it through the BAR */
    if (length > 0) {
        memcpy(buf, hbm + desc.offset + offset, length);
    }
    return 0;
}

pid_t emu_dmabuf_holder(int dev)
{
    emu_dmabuf_desc_t desc;
    struct dirent *ent;
    pid_t pid = 0;
    DIR *dir;

    dir = opendir(emu_state_dir());
    if (dir == NULL) {
        return 0;
    }

    while ((pid == 0) && ((ent = readdir(dir)) != NULL)) {
        if ((emu_dmabuf_parse(ent->d_name, &desc) == 0) &&
            (desc.dev == dev) && emu_state_fifo_held(ent->d_name)) {
            pid = (desc.pid > 0) ? desc.pid : -1;
        }
    }

    closedir(dir);
    return pid;
}
