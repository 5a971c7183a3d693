/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_ABI_H_
#define UCT_GAUDI_ABI_H_

/*
 * The habanalabs kernel uAPI as this library speaks it. The system header
 * <misc/habanalabs.h> (Linux 6.1, "misc" generation) provides the structs;
 * what later generations added (DRM-accel ioctl codes, the export "offset"
 * field, the out-of-tree import op 99) is defined here and checked against
 * the layouts documented in habanalabs-uapi.md.
 *
 * This header is plain C (no UCS), so the emulator shares it.
 */

#include <misc/habanalabs.h>
#include <linux/ioctl.h>
#include <stddef.h>
#include <stdint.h>


/* ABI generations (habanalabs-uapi.md 0.1) */
typedef enum {
    UCT_GAUDI_ABI_MISC  = 0, /* /dev/hlN, _IOWR('H', n) codes            */
    UCT_GAUDI_ABI_TRANS = 1, /* /dev/accel/accelN, still 'H' codes       */
    UCT_GAUDI_ABI_DRM   = 2, /* /dev/accel/accelN, DRM_IOWR(0x40 + n)    */
    UCT_GAUDI_ABI_LAST
} uct_gaudi_abi_t;


/* ioctl command indices, common to all generations */
typedef enum {
    UCT_GAUDI_IOC_INFO    = 0,
    UCT_GAUDI_IOC_CB      = 1,
    UCT_GAUDI_IOC_CS      = 2,
    UCT_GAUDI_IOC_WAIT_CS = 3,
    UCT_GAUDI_IOC_MEMORY  = 4,
    UCT_GAUDI_IOC_DEBUG   = 5,
    UCT_GAUDI_IOC_LAST
} uct_gaudi_ioc_t;


/* DRM-era codes: linux-libc-dev 6.1 ships no <drm/drm.h> */
#define UCT_GAUDI_DRM_IOCTL_BASE    'd'
#define UCT_GAUDI_DRM_COMMAND_BASE  0x40
#define UCT_GAUDI_DRM_IOWR(_nr, _type) \
    _IOWR(UCT_GAUDI_DRM_IOCTL_BASE, UCT_GAUDI_DRM_COMMAND_BASE + (_nr), _type)

#define UCT_GAUDI_DRM_IOCTL_INFO    UCT_GAUDI_DRM_IOWR(0, struct hl_info_args)
#define UCT_GAUDI_DRM_IOCTL_CB      UCT_GAUDI_DRM_IOWR(1, union hl_cb_args)
#define UCT_GAUDI_DRM_IOCTL_CS      UCT_GAUDI_DRM_IOWR(2, union hl_cs_args)
#define UCT_GAUDI_DRM_IOCTL_WAIT_CS UCT_GAUDI_DRM_IOWR(3, union hl_wait_cs_args)
#define UCT_GAUDI_DRM_IOCTL_MEMORY  UCT_GAUDI_DRM_IOWR(4, union hl_mem_args)
#define UCT_GAUDI_DRM_IOCTL_DEBUG   UCT_GAUDI_DRM_IOWR(5, struct hl_debug_args)


/* Out-of-tree driver only ("EXPERIMENTAL"): import a DMA-BUF fd into this
 * device's MMU. Upstream kernels reject it with EINVAL. */
#define UCT_GAUDI_MEM_OP_REG_DMABUF_FD  99


/* Later-generation view of hl_mem_in.export_dmabuf_fd: "addr" replaces the
 * 6.1 "handle" at the same offset and an "offset" field follows. */
struct uct_gaudi_mem_export_in {
    __u64 addr;      /* Gaudi2+: MAP VA; 6.1: ALLOC handle; Gaudi1: phys */
    __u64 mem_size;
    __u64 offset;    /* not in 6.1; must be 0 there and on Gaudi1 */
};

/* hl_mem_in.reg_dmabuf_fd of the out-of-tree driver (op 99) */
struct uct_gaudi_mem_reg_dmabuf_in {
    __u64 fd;
    __u64 length;
};


/* Device node names per generation */
#define UCT_GAUDI_DEV_ACCEL_DIR        "/dev/accel"
#define UCT_GAUDI_DEV_ACCEL_COMPUTE    "/dev/accel/accel%d"
#define UCT_GAUDI_DEV_ACCEL_CONTROL    "/dev/accel/accel_controlD%d"
#define UCT_GAUDI_DEV_MISC_COMPUTE     "/dev/hl%d"
#define UCT_GAUDI_DEV_MISC_CONTROL     "/dev/hl_controlD%d"
#define UCT_GAUDI_MAX_MINOR            256

/* sysfs attribute directories per generation (habanalabs-uapi.md 1.4) */
#define UCT_GAUDI_SYSFS_DRM_DIR        "/sys/class/accel/accel%d/device"
#define UCT_GAUDI_SYSFS_TRANS_DIR      "/sys/class/accel/accel%d"
#define UCT_GAUDI_SYSFS_MISC_DIR       "/sys/class/habanalabs/hl%d"


/* PCI device ids (vendor 0x1da3) */
#define UCT_GAUDI_PCI_VENDOR_ID        0x1da3
#define UCT_GAUDI_PCI_ID_GAUDI1        0x1000
#define UCT_GAUDI_PCI_ID_GAUDI1_SEC    0x1010
#define UCT_GAUDI_PCI_ID_GAUDI2        0x1020
#define UCT_GAUDI_PCI_ID_GAUDI3        0x1060
#define UCT_GAUDI_PCI_ID_GAUDI3_HL338  0x1063

typedef enum {
    UCT_GAUDI_ASIC_UNKNOWN = 0,
    UCT_GAUDI_ASIC_GAUDI1,
    UCT_GAUDI_ASIC_GAUDI2,
    UCT_GAUDI_ASIC_GAUDI3
} uct_gaudi_asic_t;


/* DMA packets (habanalabs-uapi.md 8) */
#define UCT_GAUDI_PKT_OPCODE_SHIFT     24      /* within the ctl dword */
#define UCT_GAUDI_PKT_OPCODE_MASK      0x1F000000u
#define UCT_GAUDI_PKT_LIN_DMA          0x9
#define UCT_GAUDI_PKT_NOP              0xA
#define UCT_GAUDI_PKT_MSG_LONG         0x3
#define UCT_GAUDI_PKT_MSG_SHORT        0x4
#define UCT_GAUDI_PKT_FENCE            0x8
#define UCT_GAUDI_PKT_WREG_BULK        0x2
#define UCT_GAUDI_PKT_MSG_PROT         0x7
#define UCT_GAUDI_PKT_CP_DMA           0x5
#define UCT_GAUDI_PKT_STOP             0xB
#define UCT_GAUDI_PKT_LOAD_AND_EXE     0xF

/* Gaudi1 LIN_DMA ctl bits */
#define UCT_GAUDI1_LIN_DMA_WR_COMP_EN  (1u << 0)
#define UCT_GAUDI1_LIN_DMA_LIN         (1u << 3)
#define UCT_GAUDI1_LIN_DMA_MEMSET      (1u << 4)
#define UCT_GAUDI1_LIN_DMA_ENG_BARRIER (1u << 29)
#define UCT_GAUDI1_LIN_DMA_REG_BARRIER (1u << 30)
#define UCT_GAUDI1_LIN_DMA_MSG_BARRIER (1u << 31)
#define UCT_GAUDI1_LIN_DMA_DST_MASK    0x00FFFFFFFFFFFFFFull

/* Gaudi2 LIN_DMA ctl bits */
#define UCT_GAUDI2_LIN_DMA_WRCOMP      (1u << 0)
#define UCT_GAUDI2_LIN_DMA_MEMSET      (1u << 4)
#define UCT_GAUDI2_LIN_DMA_ENG_BARRIER (1u << 29)
#define UCT_GAUDI2_LIN_DMA_SWTC        (1u << 30)
#define UCT_GAUDI2_LIN_DMA_MSG_BARRIER (1u << 31)

/* LIN_DMA packet, both ASICs: 24 bytes */
struct uct_gaudi_pkt_lin_dma {
    __u32 tsize;
    __u32 ctl;
    __u64 src_addr;  /* fill value with MEMSET */
    __u64 dst_addr;  /* Gaudi1: bits 0-55 address, 56-63 context id high */
};

#define UCT_GAUDI_LIN_DMA_MAX_TSIZE    0xFFFFFFFFull


/* Layout checks against habanalabs-uapi.md 2, 3.3, 4.1, 5, 6.1, 7 */
#define UCT_GAUDI_ABI_ASSERT(_cond) _Static_assert(_cond, #_cond)
UCT_GAUDI_ABI_ASSERT(sizeof(struct hl_info_args) == 24);
UCT_GAUDI_ABI_ASSERT(sizeof(union hl_cb_args) == 24);
UCT_GAUDI_ABI_ASSERT(sizeof(union hl_cs_args) == 48);
UCT_GAUDI_ABI_ASSERT(sizeof(union hl_wait_cs_args) == 56);
UCT_GAUDI_ABI_ASSERT(sizeof(union hl_mem_args) == 40);
UCT_GAUDI_ABI_ASSERT(sizeof(struct hl_cs_chunk) == 64);
UCT_GAUDI_ABI_ASSERT(sizeof(struct hl_info_hw_ip_info) == 256);
UCT_GAUDI_ABI_ASSERT(offsetof(struct hl_info_hw_ip_info, dram_page_size) == 224);
UCT_GAUDI_ABI_ASSERT(offsetof(struct hl_info_hw_ip_info,
                              device_mem_alloc_default_page_size) == 248);
UCT_GAUDI_ABI_ASSERT(offsetof(struct hl_mem_in, op) == 24);
UCT_GAUDI_ABI_ASSERT(sizeof(struct uct_gaudi_mem_export_in) == 24);
UCT_GAUDI_ABI_ASSERT(sizeof(struct uct_gaudi_mem_reg_dmabuf_in) <= 24);
UCT_GAUDI_ABI_ASSERT(sizeof(struct uct_gaudi_pkt_lin_dma) == 24);
UCT_GAUDI_ABI_ASSERT(HL_IOCTL_INFO == 0xC0184801u);
UCT_GAUDI_ABI_ASSERT(HL_IOCTL_CS == 0xC0304803u);
UCT_GAUDI_ABI_ASSERT(HL_IOCTL_WAIT_CS == 0xC0384804u);
UCT_GAUDI_ABI_ASSERT(HL_IOCTL_MEMORY == 0xC0284805u);
UCT_GAUDI_ABI_ASSERT(UCT_GAUDI_DRM_IOCTL_INFO == 0xC0186440u);
UCT_GAUDI_ABI_ASSERT(UCT_GAUDI_DRM_IOCTL_CB == 0xC0186441u);
UCT_GAUDI_ABI_ASSERT(UCT_GAUDI_DRM_IOCTL_CS == 0xC0306442u);
UCT_GAUDI_ABI_ASSERT(UCT_GAUDI_DRM_IOCTL_WAIT_CS == 0xC0386443u);
UCT_GAUDI_ABI_ASSERT(UCT_GAUDI_DRM_IOCTL_MEMORY == 0xC0286444u);
UCT_GAUDI_ABI_ASSERT(UCT_GAUDI_DRM_IOCTL_DEBUG == 0xC0286445u);


/* The ioctl request code of command @a ioc in generation @a abi */
static inline unsigned long uct_gaudi_abi_ioctl_code(uct_gaudi_abi_t abi,
                                                     uct_gaudi_ioc_t ioc)
{
    static const unsigned long codes[2][UCT_GAUDI_IOC_LAST] = {
        {HL_IOCTL_INFO, HL_IOCTL_CB, HL_IOCTL_CS, HL_IOCTL_WAIT_CS,
         HL_IOCTL_MEMORY, HL_IOCTL_DEBUG},
        {UCT_GAUDI_DRM_IOCTL_INFO, UCT_GAUDI_DRM_IOCTL_CB,
         UCT_GAUDI_DRM_IOCTL_CS, UCT_GAUDI_DRM_IOCTL_WAIT_CS,
         UCT_GAUDI_DRM_IOCTL_MEMORY, UCT_GAUDI_DRM_IOCTL_DEBUG}
    };

    return codes[abi == UCT_GAUDI_ABI_DRM][ioc];
}

#endif
