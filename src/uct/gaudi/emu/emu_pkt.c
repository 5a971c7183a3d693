/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_pkt.h"
#include "emu_global.h"
#include "emu_va.h"

#include <string.h>

#define EMU_PKT_WREG_32        0x1
#define EMU_PKT_REPEAT         0x6
#define EMU_PKT_ARB_POINT      0xC
#define EMU_PKT_WAIT           0xD
#define EMU_PKT_MSG_LONG_OP(_ctl)  (((_ctl) >> 20) & 0x3)
#define EMU_PKT_LOAD_EXE_DST   0x1   /* cfg bit 0 */

typedef struct {
    uint32_t value;
    uint32_t ctl;
    uint64_t addr;
} emu_pkt_msg_long_t;


static uint32_t emu_pkt_opcode(const uint8_t *p)
{
    uint32_t ctl;

    memcpy(&ctl, p + 4, sizeof(ctl));
    return (ctl & UCT_GAUDI_PKT_OPCODE_MASK) >> UCT_GAUDI_PKT_OPCODE_SHIFT;
}

/* Size of the packet at @p, 0 if the opcode is unknown */
static size_t emu_pkt_size(const uint8_t *p)
{
    uint32_t dw0;

    switch (emu_pkt_opcode(p)) {
    case EMU_PKT_WREG_32:
    case UCT_GAUDI_PKT_MSG_SHORT:
    case EMU_PKT_REPEAT:
    case UCT_GAUDI_PKT_FENCE:
    case UCT_GAUDI_PKT_NOP:
    case UCT_GAUDI_PKT_STOP:
    case EMU_PKT_ARB_POINT:
    case EMU_PKT_WAIT:
        return 8;
    case UCT_GAUDI_PKT_MSG_LONG:
    case UCT_GAUDI_PKT_CP_DMA:
    case UCT_GAUDI_PKT_MSG_PROT:
    case UCT_GAUDI_PKT_LOAD_AND_EXE:
        return 16;
    case UCT_GAUDI_PKT_LIN_DMA:
        return sizeof(struct uct_gaudi_pkt_lin_dma);
    case UCT_GAUDI_PKT_WREG_BULK:
        memcpy(&dw0, p, sizeof(dw0));
        return 8 + 8 * (size_t)(dw0 & 0xFFFF);
    default:
        return 0;
    }
}

int emu_pkt_validate_gaudi1(const uint8_t *buf, size_t len)
{
    size_t off = 0, size;
    uint32_t cfg;

    while (off < len) {
        if (len - off < 8) {
            return -EINVAL;
        }

        size = emu_pkt_size(buf + off);
        if ((size == 0) || (size > len - off)) {
            return -EINVAL;
        }

        switch (emu_pkt_opcode(buf + off)) {
        case UCT_GAUDI_PKT_WREG_BULK:
        case UCT_GAUDI_PKT_MSG_PROT:
        case UCT_GAUDI_PKT_CP_DMA:
        case UCT_GAUDI_PKT_STOP:
            return -EPERM;
        case UCT_GAUDI_PKT_LOAD_AND_EXE:
            memcpy(&cfg, buf + off, sizeof(cfg));
            if (cfg & EMU_PKT_LOAD_EXE_DST) {
                return -EPERM;
            }
            break;
        default:
            break;
        }

        off += size;
    }

    return 0;
}

static void emu_pkt_account(emu_pkt_stats_t *stats, uint64_t src,
                            uint64_t dst, uint64_t size)
{
    const emu_asic_t *asic = emu_g.asic;
    uint64_t end = asic->dram_base +
                   (asic->dram_vm ? asic->dram_va_size : emu_g.dram_size);
    int src_dev  = (src >= asic->dram_base) && (src < end);
    int dst_dev  = (dst >= asic->dram_base) && (dst < end);

    stats->bytes += size;
    if (dst_dev && !src_dev) {
        stats->to_dev += size;
    } else if (src_dev && !dst_dev) {
        stats->to_host += size;
    } else if (!src_dev && !dst_dev) {
        stats->through += size;
    }
}

static int emu_pkt_memset(emu_ctx_t *ctx, uint64_t dst, uint64_t pattern,
                          uint64_t size)
{
    uint64_t done = 0, avail, n, i;
    uint8_t bytes[8];
    uint8_t *ptr;
    int ret;

    memcpy(bytes, &pattern, sizeof(bytes));
    while (done < size) {
        ret = emu_va_translate(ctx, dst + done, &ptr, &avail);
        if (ret == -EHOSTUNREACH) {
            done += emu_min(avail, size - done);  /* writes lost */
            continue;
        } else if (ret != 0) {
            return ret;
        }

        n = emu_min(avail, size - done);
        if ((pattern == 0) ||
            ((pattern & 0xFF) * 0x0101010101010101ull == pattern)) {
            memset(ptr, bytes[0], n);
        } else {
            for (i = 0; i < n; ++i) {
                ptr[i] = bytes[(done + i) % 8];
            }
        }
        done += n;
    }

    return 0;
}

static int emu_pkt_copy(emu_ctx_t *ctx, uint64_t src, uint64_t dst,
                        uint64_t size)
{
    uint64_t done = 0, savail, davail, n;
    uint8_t *sptr, *dptr;
    int ret;

    while (done < size) {
        ret = emu_va_translate(ctx, src + done, &sptr, &savail);
        if (ret == -EHOSTUNREACH) {
            return -ETIMEDOUT;  /* a read nobody routes never completes */
        } else if (ret == 0) {
            ret = emu_va_translate(ctx, dst + done, &dptr, &davail);
        }
        if ((ret != 0) && (ret != -EHOSTUNREACH)) {
            return ret;
        }

        n = emu_min(emu_min(savail, davail), size - done);
        if (ret == 0) {
            memmove(dptr, sptr, n);
        } /* else a posted write nobody routes: lost, without an error */
        done += n;
    }

    return 0;
}

/* Whether [addr, addr + size) is on the device itself (HBM or SRAM) */
static int emu_pkt_on_device(uint64_t addr, uint64_t size)
{
    const emu_asic_t *asic = emu_g.asic;
    uint64_t dram_end      = asic->dram_base +
                             (asic->dram_vm ? asic->dram_va_size :
                                              emu_g.dram_size);
    uint64_t sram_end      = asic->sram_base + asic->sram_size;

    return ((addr >= asic->dram_base) && (addr < dram_end) &&
            (size <= dram_end - addr)) ||
           ((addr >= asic->sram_base) && (addr < sram_end) &&
            (size <= sram_end - addr));
}

static int emu_pkt_lin_dma(emu_ctx_t *ctx, uint32_t queue, const uint8_t *p,
                           emu_pkt_stats_t *stats)
{
    int memset_op;
    struct uct_gaudi_pkt_lin_dma pkt;
    uint64_t dst;
    int ret;

    memcpy(&pkt, p, sizeof(pkt));
    dst = pkt.dst_addr;
    if (emu_g.asic->asic == UCT_GAUDI_ASIC_GAUDI1) {
        dst &= UCT_GAUDI1_LIN_DMA_DST_MASK;
    }

    if (pkt.tsize == 0) {
        return 0;
    }

    /* the MEMSET bit is bit 4 on both Gaudi1 and Gaudi2 */
    memset_op = !!(pkt.ctl & UCT_GAUDI2_LIN_DMA_MEMSET);

    /* an engine inside the device (Gaudi2 EDMA) has no path to PCIe: host
     * memory and peers' BARs (PMMU VAs) fault, as the MMU would */
    if (!emu_asic_queue_reaches_pcie(emu_g.asic, queue) &&
        (!emu_pkt_on_device(dst, pkt.tsize) ||
         (!memset_op && !emu_pkt_on_device(pkt.src_addr, pkt.tsize)))) {
        return -EFAULT;
    }

    if (memset_op) {
        ret = emu_pkt_memset(ctx, dst, pkt.src_addr, pkt.tsize);
        emu_pkt_account(stats, 0, dst, pkt.tsize);
    } else {
        ret = emu_pkt_copy(ctx, pkt.src_addr, dst, pkt.tsize);
        emu_pkt_account(stats, pkt.src_addr, dst, pkt.tsize);
    }

    return ret;
}

static int emu_pkt_msg_long(emu_ctx_t *ctx, const uint8_t *p)
{
    emu_pkt_msg_long_t msg;
    uint64_t avail;
    uint8_t *ptr;
    int ret;

    memcpy(&msg, p, sizeof(msg));
    if (EMU_PKT_MSG_LONG_OP(msg.ctl) != 0) {
        return 0;           /* timestamp writes etc.: not modelled */
    }

    ret = emu_va_translate(ctx, msg.addr, &ptr, &avail);
    if ((ret == 0) && (avail >= sizeof(msg.value))) {
        memcpy(ptr, &msg.value, sizeof(msg.value));
        return 0;
    } else if (ret == -EHOSTUNREACH) {
        return 0;           /* a posted write nobody routes: lost */
    }

    /* unmapped user memory faults; anything else is configuration space
     * (sync manager...) which the emulator does not model */
    return emu_va_in_device_range(msg.addr) ? -EFAULT : 0;
}

int emu_pkt_run(emu_ctx_t *ctx, uint32_t queue, const uint8_t *buf,
                size_t len, emu_pkt_stats_t *stats, size_t *done)
{
    size_t off = 0, size;
    int ret    = 0;

    /* *done is set on every return: the caller advances by it */
    *done = 0;
    while ((off + 8 <= len) && (ret == 0)) {
        size = emu_pkt_size(buf + off);
        if (size == 0) {
            return -EINVAL;
        } else if (size > len - off) {
            break;                  /* the rest is in the next fetch */
        }

        switch (emu_pkt_opcode(buf + off)) {
        case UCT_GAUDI_PKT_LIN_DMA:
            ret = emu_pkt_lin_dma(ctx, queue, buf + off, stats);
            break;
        case UCT_GAUDI_PKT_MSG_LONG:
            ret = emu_pkt_msg_long(ctx, buf + off);
            break;
        case UCT_GAUDI_PKT_STOP:
            return EMU_PKT_STOPPED;
        case UCT_GAUDI_PKT_CP_DMA:
        case UCT_GAUDI_PKT_MSG_PROT:
        case UCT_GAUDI_PKT_LOAD_AND_EXE:
            return -EINVAL;         /* not modelled */
        default:
            break;                  /* NOP, FENCE, MSG_SHORT, WREG...  */
        }

        off += size;
    }

    *done = off;
    return ret;
}
