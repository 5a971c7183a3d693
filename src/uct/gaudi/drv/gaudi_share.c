/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_share.h"
#include "gaudi_health.h"
#include "gaudi_ioctl.h"
#include "gaudi_lib.h"
#include "gaudi_mem.h"
#include "gaudi_device.h"

#include <uct/gaudi/gaudi_ucx_compat.h>
#include <ucs/debug/log.h>
#include <ucs/sys/sys.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>


/*
 * Whether the driver applies the offset of an export (driver-abi.md 4.4):
 * only since "accel/habanalabs: add missing offset handling for dma-buf"
 * (kernel 6.7, with the DRM ioctl codes; out of tree 1.24 has it). Before,
 * it validated the offset and exported from the mapping's first page, and
 * an importer read the chunk's first bytes instead of the allocation's.
 * Where we cannot tell (an older or unknown out-of-tree release, the 'H'
 * generations), the offset is not trusted.
 */
static int uct_gaudi_share_offset_applied(void)
{
    unsigned major, minor;

    if (!uct_gaudi_ioctl_abi_desc()->export_offset) {
        return 0;
    } else if (uct_gaudi_ioctl_driver() == UCT_GAUDI_DRIVER_UPSTREAM) {
        return 1;
    }

    return uct_gaudi_ioctl_oot_release(&major, &minor) &&
           ((major > 1) || ((major == 1) && (minor >= 24)));
}

/* Export a whole chunk, at offset 0, which reads the same on every driver:
 * the 6.1 ABI (an ALLOC handle, no offset), and every driver that might
 * ignore the offset; the importer adds the allocation's offset itself (the
 * key's base is the chunk's) */
static int uct_gaudi_share_export_whole(const uct_gaudi_dev_t *dev)
{
    return (dev->info->asic != UCT_GAUDI_ASIC_GAUDI1) &&
           !uct_gaudi_share_offset_applied();
}

static void uct_gaudi_share_export_range(const uct_gaudi_dev_t *dev,
                                         const uct_gaudi_mem_t *mem,
                                         uint64_t *base_p, size_t *length_p)
{
    if (uct_gaudi_share_export_whole(dev)) {
        *base_p   = mem->chunk_dva;
        *length_p = mem->chunk_length;
    } else {
        *base_p   = mem->dva;
        *length_p = mem->length;
    }
}

ucs_status_t uct_gaudi_share_prepare(uct_gaudi_dev_t *dev, uint64_t addr,
                                   size_t length, uct_gaudi_mem_t *mem,
                                   uint64_t *base_p, size_t *length_p)
{
    if (uct_gaudi_mem_find(dev, addr, length,
                           uct_gaudi_share_export_whole(dev) ?
                                   UCT_GAUDI_MEM_SHARE_CHUNK :
                                   UCT_GAUDI_MEM_SHARE_ALLOC,
                           mem) != UCS_OK) {
        return UCS_ERR_INVALID_ADDR;
    }

    uct_gaudi_share_export_range(dev, mem, base_p, length_p);
    return UCS_OK;
}

/* The export request of @a mem, in the form the driver wants (whole: the
 * chunk, else the allocation) */
static void uct_gaudi_share_export_args(const uct_gaudi_mem_t *mem, int whole,
                                        union hl_mem_args *args)
{
    struct uct_gaudi_mem_export_in in;

    if (whole && uct_gaudi_ioctl_abi_desc()->export_handle) {
        /* 6.1: the ALLOC handle, no offset: the whole chunk */
        in.addr     = mem->handle;
        in.offset   = 0;
        in.mem_size = mem->chunk_length;
    } else if (whole) {
        /* the chunk's MAP VA at offset 0: right whatever the driver does
         * with an offset */
        in.addr     = mem->chunk_dva;
        in.offset   = 0;
        in.mem_size = mem->chunk_length;
    } else {
        /* Gaudi2+: the chunk's MAP VA + offset; Gaudi1: physical */
        in.addr     = mem->chunk_dva;
        in.offset   = mem->dva - mem->chunk_dva;
        in.mem_size = mem->length;
    }

    memset(args, 0, sizeof(*args));
    memcpy(&args->in, &in, sizeof(in));
    args->in.op    = HL_MEM_OP_EXPORT_DMABUF_FD;
    args->in.flags = O_RDWR | O_CLOEXEC;
}

ucs_status_t uct_gaudi_share_export(uct_gaudi_dev_t *dev, uint64_t addr,
                                  size_t length, uct_gaudi_export_t *exp)
{
    union hl_mem_args args;
    uct_gaudi_mem_t mem;
    ucs_status_t status;
    int whole;

    status = uct_gaudi_health_check(dev);
    if (status != UCS_OK) {
        return status;
    }

    /* a whole chunk is found as such when asked for by its range: its
     * allocations come and go (gaudi_ipc exports when a peer asks) */
    whole = uct_gaudi_share_export_whole(dev);
    if ((!whole ||
         (uct_gaudi_mem_find_chunk(dev, addr, length, &mem) != UCS_OK)) &&
        (uct_gaudi_mem_find(dev, addr, length,
                            whole ? UCT_GAUDI_MEM_EXPORT_CHUNK :
                                    UCT_GAUDI_MEM_EXPORT_ALLOC,
                            &mem) != UCS_OK)) {
        ucs_error("%s: cannot export 0x%" PRIx64 "+%zu: not inside a device "
                  "allocation made by this process through UCX", dev->name,
                  addr, length);
        return UCS_ERR_INVALID_ADDR;
    }

    uct_gaudi_share_export_args(&mem, whole, &args);

    /* EINVAL for an allocation of ours, asked for in the form the driver
     * wants: what is left is validate_export_params's check that every page
     * lies in the PCIe DRAM BAR, which an importer reaches them through */
    status = UCT_GAUDI_FUNC(dev, uct_gaudi_ioctl(dev->fd,
                                                 UCT_GAUDI_IOC_MEMORY, &args),
                            UCS_LOG_LEVEL_DIAG);
    if (status == UCS_ERR_INVALID_PARAM) {
        uct_gaudi_log_once(UCS_LOG_LEVEL_WARN, "export-outside-bar",
                           "%s: the driver refused to export 0x%" PRIx64
                           "+%zu as a DMA-BUF (EINVAL): its pages may lie "
                           "beyond the device's PCIe DRAM BAR, through which "
                           "importers reach them; other processes reach such "
                           "memory staged through host memory", dev->name,
                           addr, length);
        return status;
    } else if (status != UCS_OK) {
        if (!dev->failed) {     /* a device failure was said already */
            ucs_error("%s: exporting 0x%" PRIx64 "+%zu as a DMA-BUF failed: "
                      "%s", dev->name, addr, length,
                      ucs_status_string(status));
        }
        return status;
    }

    exp->fd = args.out.fd;
    uct_gaudi_share_export_range(dev, &mem, &exp->base, &exp->length);
    ucs_trace("%s: exported 0x%" PRIx64 "+%zu as DMA-BUF fd %d", dev->name,
              exp->base, exp->length, exp->fd);
    return UCS_OK;
}

/* Op 99 per device of this process: 0 not probed yet, else 1 + answer.
 * The probe writes an error line to the kernel log whatever the answer
 * (upstream: "Unknown opcode for memory IOCTL"; out-of-tree: "Failed to get
 * dmabuf"): at most once per process and device, and only where sysfs does
 * not already tell */
static uint8_t uct_gaudi_share_import_probed[UCT_GAUDI_MAX_MINOR];

static int uct_gaudi_share_probe_import(uct_gaudi_dev_t *dev)
{
    struct uct_gaudi_mem_reg_dmabuf_in in = {.fd = (uint64_t)-1};
    union hl_mem_args args;
    int ret, can_import;

    /* An invalid fd tells the two drivers apart: the out-of-tree driver
     * looks the fd up (EBADF), a driver without the op refuses it (EINVAL;
     * EPERM from an out-of-tree build without peer-to-peer DMA-BUF) */
    memset(&args, 0, sizeof(args));
    memcpy(&args.in, &in, sizeof(in));
    args.in.op = UCT_GAUDI_MEM_OP_REG_DMABUF_FD;
    ret        = uct_gaudi_ioctl(dev->fd, UCT_GAUDI_IOC_MEMORY, &args);
    can_import = (ret < 0) && (errno == EBADF);
    ucs_debug("%s: DMA-BUF import (op %d) %s (probe: %s)", dev->name,
              UCT_GAUDI_MEM_OP_REG_DMABUF_FD,
              can_import ? "supported" : "not supported",
              (ret < 0) ? strerror(errno) : "accepted an invalid fd");
    return can_import;
}

int uct_gaudi_share_can_import(uct_gaudi_dev_t *dev)
{
    uint8_t *probed;

    if (dev->can_import >= 0) {
        return dev->can_import;
    }

    if (!uct_gaudi_ioctl_abi_desc()->import_op) {
        /* op 99 exists only in Habana's out-of-tree driver, which speaks
         * the DRM ioctl generation: what the node layout and codes state
         * is enough, no probe */
        ucs_debug("%s: DMA-BUF import (op %d) not supported: the driver "
                  "speaks the %s ioctl generation", dev->name,
                  UCT_GAUDI_MEM_OP_REG_DMABUF_FD,
                  uct_gaudi_ioctl_abi_desc()->name);
        dev->can_import = 0;
        return 0;
    }

    if (uct_gaudi_ioctl_driver() == UCT_GAUDI_DRIVER_UPSTREAM) {
        /* the kernel's own driver has no op 99, and sysfs says this is it */
        ucs_debug("%s: DMA-BUF import (op %d) not supported: the upstream "
                  "habanalabs driver", dev->name,
                  UCT_GAUDI_MEM_OP_REG_DMABUF_FD);
        dev->can_import = 0;
        return 0;
    }

    probed = &uct_gaudi_share_import_probed[dev->info->index %
                                            UCT_GAUDI_MAX_MINOR];
    if (*probed == 0) {
        *probed = 1 + uct_gaudi_share_probe_import(dev);
    }

    dev->can_import = *probed - 1;
    return dev->can_import;
}

ucs_status_t uct_gaudi_share_import(uct_gaudi_dev_t *dev, int fd, size_t length,
                                  uint64_t *dva_p)
{
    struct uct_gaudi_mem_reg_dmabuf_in in = {.fd = fd, .length = length};
    union hl_mem_args args;
    ucs_status_t status;

    status = uct_gaudi_health_check(dev);
    if (status != UCS_OK) {
        return status;
    }

    if (!uct_gaudi_share_can_import(dev)) {
        return UCS_ERR_UNSUPPORTED;
    }

    memset(&args, 0, sizeof(args));
    memcpy(&args.in, &in, sizeof(in));
    args.in.op = UCT_GAUDI_MEM_OP_REG_DMABUF_FD;
    status     = UCT_GAUDI_FUNC(dev, uct_gaudi_ioctl(dev->fd,
                                                     UCT_GAUDI_IOC_MEMORY,
                                                     &args),
                                UCS_LOG_LEVEL_DEBUG);
    if (status != UCS_OK) {
        /* the caller stages what it moves instead (and says so once,
         * counted): the driver's reason is a warning the first time, not
         * an error every time (memory that cannot be imported is no
         * failure of the device) */
        uct_gaudi_log_once(UCS_LOG_LEVEL_WARN, "import-refused",
                           "%s: the driver refused to import a peer's "
                           "DMA-BUF (MEMORY/REG_DMABUF_FD): %s", dev->name,
                           ucs_status_string(status));
        return status;
    }

    *dva_p = args.out.device_virt_addr;
    ucs_trace("%s: imported DMA-BUF fd %d (%zu bytes) at 0x%" PRIx64,
              dev->name, fd, length, *dva_p);
    return UCS_OK;
}

ucs_status_t uct_gaudi_share_export_addr(uct_gaudi_dev_t *dev, uint64_t addr,
                                         size_t length,
                                         uct_gaudi_export_t *exp)
{
    size_t page = ucs_get_page_size();
    struct uct_gaudi_mem_export_in in;
    union hl_mem_args args;
    ucs_status_t status;

    status = uct_gaudi_health_check(dev);
    if (status != UCS_OK) {
        return status;
    }

    if (uct_gaudi_share_export_whole(dev)) {
        ucs_diag("%s: cannot export 0x%" PRIx64 "+%zu by address: the %s "
                 "driver ABI exports by allocation handle only", dev->name,
                 addr, length, uct_gaudi_ioctl_abi_desc()->name);
        return UCS_ERR_UNSUPPORTED;
    }

    if (dev->info->asic == UCT_GAUDI_ASIC_GAUDI1) {
        /* physical HBM: any whole pages */
        in.addr = ucs_align_down(addr, page);
    } else if ((addr % page) == 0) {
        /* the driver looks the mapping up by its exact start */
        in.addr = addr;
    } else {
        ucs_diag("%s: cannot export 0x%" PRIx64 "+%zu by address: not the "
                 "start of a mapping (not page aligned)", dev->name, addr,
                 length);
        return UCS_ERR_UNSUPPORTED;
    }

    in.offset   = 0;
    in.mem_size = ucs_align_up(addr + length, page) - in.addr;

    memset(&args, 0, sizeof(args));
    memcpy(&args.in, &in, sizeof(in));
    args.in.op    = HL_MEM_OP_EXPORT_DMABUF_FD;
    args.in.flags = O_RDWR | O_CLOEXEC;

    /* EINVAL is the driver's answer for a range that does not start a
     * mapping, is not all device memory, or leaves the BAR window: the
     * caller says what it means for its user */
    status = UCT_GAUDI_FUNC(dev, uct_gaudi_ioctl(dev->fd,
                                                 UCT_GAUDI_IOC_MEMORY, &args),
                            UCS_LOG_LEVEL_DIAG);
    if (status != UCS_OK) {
        return status;
    }

    exp->fd     = args.out.fd;
    exp->base   = in.addr;
    exp->length = in.mem_size;
    ucs_trace("%s: exported 0x%" PRIx64 "+%zu by address as DMA-BUF fd %d",
              dev->name, exp->base, exp->length, exp->fd);
    return UCS_OK;
}
