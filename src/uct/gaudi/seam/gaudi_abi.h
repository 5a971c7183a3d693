/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_ABI_H_
#define UCT_GAUDI_ABI_H_

/*
 * The habanalabs kernel uAPI as this library speaks it, self-contained:
 * every structure, constant and ioctl number used here, written from the
 * documented ABI (docs/driver-abi.md, restating Linux 6.1's
 * <misc/habanalabs.h> layouts, which later generations only extend), with a
 * static assertion on every size, offset and value relied on
 * (gaudi_abi_layout.h). No system header is needed: distributions ship
 * <misc/habanalabs.h> (<= 6.2) or <drm/habanalabs_accel.h> (>= 6.3) or
 * neither; where one is present, gaudi_abi_check.c compares it with the
 * same list at build time.
 *
 * This header is plain C (no UCS), so the emulator shares it.
 */

#include <linux/ioctl.h>
#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>


/* --- INFO (driver-abi.md 3) --- */
#define HL_INFO_HW_IP_INFO                0
#define HL_INFO_HW_EVENTS                 1
#define HL_INFO_DRAM_USAGE                2
#define HL_INFO_HW_IDLE                   3
#define HL_INFO_DEVICE_STATUS             4
#define HL_INFO_DEVICE_UTILIZATION        6
#define HL_INFO_HW_EVENTS_AGGREGATE       7
#define HL_INFO_CLK_RATE                  8
#define HL_INFO_RESET_COUNT               9
#define HL_INFO_TIME_SYNC                 10
#define HL_INFO_CS_COUNTERS               11
#define HL_INFO_PCI_COUNTERS              12
#define HL_INFO_CLK_THROTTLE_REASON       13
#define HL_INFO_SYNC_MANAGER              14
#define HL_INFO_TOTAL_ENERGY              15
#define HL_INFO_PLL_FREQUENCY             16
#define HL_INFO_POWER                     17
#define HL_INFO_OPEN_STATS                18
#define HL_INFO_DRAM_REPLACED_ROWS        21
#define HL_INFO_DRAM_PENDING_ROWS         22
#define HL_INFO_LAST_ERR_OPEN_DEV_TIME    23
#define HL_INFO_CS_TIMEOUT_EVENT          24
#define HL_INFO_RAZWI_EVENT               25
#define HL_INFO_DEV_MEM_ALLOC_PAGE_SIZES  26
#define HL_INFO_SECURED_ATTESTATION       27
#define HL_INFO_REGISTER_EVENTFD          28
#define HL_INFO_UNREGISTER_EVENTFD        29
#define HL_INFO_GET_EVENTS                30
#define HL_INFO_UNDEFINED_OPCODE_EVENT    31
#define HL_INFO_ENGINE_STATUS             32

#define HL_INFO_VERSION_MAX_LEN           128
#define HL_INFO_CARD_NAME_MAX_LEN         16
#define HL_BUSY_ENGINES_MASK_EXT_SIZE     2
#define HL_CLK_THROTTLE_TYPE_MAX          2

/* HL_INFO_GET_EVENTS bits */
#define HL_NOTIFIER_EVENT_TPC_ASSERT          (1ull << 0)
#define HL_NOTIFIER_EVENT_UNDEFINED_OPCODE    (1ull << 1)
#define HL_NOTIFIER_EVENT_DEVICE_RESET        (1ull << 2)
#define HL_NOTIFIER_EVENT_CS_TIMEOUT          (1ull << 3)
#define HL_NOTIFIER_EVENT_DEVICE_UNAVAILABLE  (1ull << 4)
#define HL_NOTIFIER_EVENT_USER_ENGINE_ERR     (1ull << 5)
#define HL_NOTIFIER_EVENT_GENERAL_HW_ERR      (1ull << 6)
#define HL_NOTIFIER_EVENT_PAGE_FAULT          (1ull << 8)

enum hl_device_status {
    HL_DEVICE_STATUS_OPERATIONAL,
    HL_DEVICE_STATUS_IN_RESET,
    HL_DEVICE_STATUS_MALFUNCTION,
    HL_DEVICE_STATUS_NEEDS_RESET,
    HL_DEVICE_STATUS_IN_DEVICE_CREATION,
    HL_DEVICE_STATUS_IN_RESET_AFTER_DEVICE_RELEASE,
    HL_DEVICE_STATUS_LAST = HL_DEVICE_STATUS_IN_RESET_AFTER_DEVICE_RELEASE
};

struct hl_info_args {
    __u64 return_pointer;
    __u32 return_size;
    __u32 op;
    union {
        __u32 dcore_id;
        __u32 ctx_id;
        __u32 period_ms;
        __u32 pll_index;
        __u32 eventfd;
        __u32 user_buffer_actual_size;
        __u32 sec_attest_nonce;
    };
    __u32 pad;                          /* must be 0 */
};

/* 256 bytes as in 6.1; later generations append (304 bytes) and copy
 * min(return_size, their size) */
struct hl_info_hw_ip_info {
    __u64 sram_base_address;
    __u64 dram_base_address;            /* Gaudi2+: DRAM VA; Gaudi1: phys */
    __u64 dram_size;
    __u32 sram_size;
    __u32 num_of_events;
    __u32 device_id;
    __u32 module_id;
    __u32 decoder_enabled_mask;
    __u16 first_available_interrupt_id;
    __u16 server_type;
    __u32 cpld_version;
    __u32 psoc_pci_pll_nr;
    __u32 psoc_pci_pll_nf;
    __u32 psoc_pci_pll_od;
    __u32 psoc_pci_pll_div_factor;
    __u8  tpc_enabled_mask;
    __u8  dram_enabled;
    __u8  security_enabled;
    __u8  mme_master_slave_mode;
    __u8  cpucp_version[HL_INFO_VERSION_MAX_LEN];
    __u8  card_name[HL_INFO_CARD_NAME_MAX_LEN];
    __u64 tpc_enabled_mask_ext;
    __u64 dram_page_size;
    __u32 edma_enabled_mask;
    __u16 number_of_user_interrupts;
    __u16 pad2;
    __u64 reserved4;
    __u64 device_mem_alloc_default_page_size;
};

struct hl_info_dram_usage {
    __u64 dram_free_mem;
    __u64 ctx_dram_mem;
};

/* DEV_MEM_ALLOC_PAGE_SIZES: the ALLOC page sizes a user may ask for (bit n
 * set: 2^n bytes); 0 where the ASIC lets the user choose none */
struct hl_info_dev_memalloc_page_sizes {
    __u64 page_order_bitmask;
};

struct hl_info_device_status {
    __u32 status;                       /* enum hl_device_status */
    __u32 pad;
};

struct hl_info_hw_idle {
    __u32 is_idle;
    __u32 busy_engines_mask;
    __u64 busy_engines_mask_ext[HL_BUSY_ENGINES_MASK_EXT_SIZE];
};

struct hl_info_clk_rate {
    __u32 cur_clk_rate_mhz;
    __u32 max_clk_rate_mhz;
};

struct hl_info_reset_count {
    __u32 hard_reset_cnt;
    __u32 soft_reset_cnt;
};

struct hl_info_time_sync {
    __u64 device_time;
    __u64 host_time;
};

struct hl_info_pci_counters {
    __u64 rx_throughput;                /* KBps */
    __u64 tx_throughput;
    __u64 replay_cnt;
};

struct hl_info_clk_throttle {
    __u32 clk_throttling_reason;
    __u32 pad;
    __u64 clk_throttling_timestamp_us[HL_CLK_THROTTLE_TYPE_MAX];
    __u64 clk_throttling_duration_ns[HL_CLK_THROTTLE_TYPE_MAX];
};

struct hl_info_sync_manager {
    __u32 first_available_sync_object;
    __u32 first_available_monitor;
    __u32 first_available_cq;
    __u32 reserved;
};

struct hl_info_cs_counters {
    __u64 total_out_of_mem_drop_cnt;
    __u64 ctx_out_of_mem_drop_cnt;
    __u64 total_parsing_drop_cnt;
    __u64 ctx_parsing_drop_cnt;
    __u64 total_queue_full_drop_cnt;
    __u64 ctx_queue_full_drop_cnt;
    __u64 total_device_in_reset_drop_cnt;
    __u64 ctx_device_in_reset_drop_cnt;
    __u64 total_max_cs_in_flight_drop_cnt;
    __u64 ctx_max_cs_in_flight_drop_cnt;
    __u64 total_validation_drop_cnt;
    __u64 ctx_validation_drop_cnt;
};

struct hl_open_stats_info {
    __u64 open_counter;
    __u64 last_open_period_ms;
    __u8  is_compute_ctx_active;
    __u8  compute_ctx_in_release;
    __u8  pad[6];
};


/* --- CB (driver-abi.md 5) --- */
#define HL_CB_OP_CREATE            0
#define HL_CB_OP_DESTROY           1
#define HL_CB_OP_INFO              2
#define HL_CB_FLAGS_MAP            0x1
#define HL_CB_FLAGS_GET_DEVICE_VA  0x2
#define HL_MAX_CB_SIZE             (0x200000 - 32)

struct hl_cb_in {
    __u64 cb_handle;
    __u32 op;
    __u32 cb_size;
    __u32 ctx_id;
    __u32 flags;
};

struct hl_cb_out {
    union {
        __u64 cb_handle;
        union {
            struct {
                __u32 usage_cnt;
                __u32 pad;
            };
            __u64 device_va;
        };
    };
};

union hl_cb_args {
    struct hl_cb_in  in;
    struct hl_cb_out out;
};


/* --- CS (driver-abi.md 6) --- */
#define HL_MAX_JOBS_PER_CS                 512
#define HL_CS_CHUNK_FLAGS_USER_ALLOC_CB    0x1
#define HL_CS_STATUS_SUCCESS               0

#define HL_CS_FLAGS_FORCE_RESTORE          0x1
#define HL_CS_FLAGS_SIGNAL                 0x2
#define HL_CS_FLAGS_WAIT                   0x4
#define HL_CS_FLAGS_COLLECTIVE_WAIT        0x8
#define HL_CS_FLAGS_TIMESTAMP              0x20
#define HL_CS_FLAGS_STAGED_SUBMISSION      0x40
#define HL_CS_FLAGS_ENCAP_SIGNALS          0x800
#define HL_CS_FLAGS_RESERVE_SIGNALS_ONLY   0x1000
#define HL_CS_FLAGS_UNRESERVE_SIGNALS_ONLY 0x2000
#define HL_CS_FLAGS_ENGINE_CORE_COMMAND    0x4000

/* Queue ids used here (the uAPI enums gaudi_queue_id, gaudi2_queue_id) */
#define GAUDI_QUEUE_ID_DMA_0_0             0
#define GAUDI_QUEUE_ID_DMA_0_1             1
#define GAUDI_QUEUE_ID_DMA_1_0             4
#define GAUDI_QUEUE_ID_DMA_1_3             7
#define GAUDI_QUEUE_ID_CPU_PQ              8
#define GAUDI_QUEUE_ID_DMA_2_0             9
#define GAUDI_QUEUE_ID_DMA_7_3             32
#define GAUDI_QUEUE_ID_SIZE                113
#define GAUDI2_QUEUE_ID_PDMA_0_0           0
#define GAUDI2_QUEUE_ID_PDMA_0_1           1
#define GAUDI2_QUEUE_ID_PDMA_1_0           4
#define GAUDI2_QUEUE_ID_PDMA_1_1           5
#define GAUDI2_QUEUE_ID_DCORE0_EDMA_0_0    8
#define GAUDI2_QUEUE_ID_DCORE0_EDMA_1_3    15
#define GAUDI2_QUEUE_ID_DCORE1_EDMA_0_0    48
#define GAUDI2_QUEUE_ID_DCORE1_EDMA_1_3    55
#define GAUDI2_QUEUE_ID_DCORE2_EDMA_0_0    84
#define GAUDI2_QUEUE_ID_DCORE2_EDMA_1_3    91
#define GAUDI2_QUEUE_ID_DCORE3_EDMA_0_0    120
#define GAUDI2_QUEUE_ID_DCORE3_EDMA_1_3    127
#define GAUDI2_QUEUE_ID_CPU_PQ             260
#define GAUDI2_QUEUE_ID_SIZE               261

struct hl_cs_chunk {
    union {
        __u64 cb_handle;                /* Gaudi2 user CB: its device VA */
        __u64 signal_seq_arr;
        __u64 encaps_signal_seq;
    };
    __u32 queue_index;
    union {
        __u32 cb_size;
        __u32 num_signal_seq_arr;
        __u32 encaps_signal_offset;
    };
    __u32 cs_chunk_flags;
    __u32 collective_engine_id;
    __u32 pad[10];
};

struct hl_cs_in {
    union {
        struct {
            __u64 chunks_restore;
            __u64 chunks_execute;
        };
        struct {
            __u64 engine_cores;
            __u32 num_engine_cores;
            __u32 core_command;
        };
    };
    union {
        __u64 seq;
        __u32 encaps_sig_handle_id;
        struct {
            __u32 encaps_signals_count;
            __u32 encaps_signals_q_idx;
        };
    };
    __u32 num_chunks_restore;
    __u32 num_chunks_execute;
    __u32 timeout;
    __u32 cs_flags;
    __u32 ctx_id;
    __u8  pad[4];                       /* must be 0 */
};

struct hl_cs_out {
    union {
        __u64 seq;
        struct {
            __u32 handle_id;
            __u32 count;
        };
    };
    __u32 status;
    __u32 sob_base_addr_offset;
    __u16 sob_count_before_submission;
    __u16 pad[3];
};

union hl_cs_args {
    struct hl_cs_in  in;
    struct hl_cs_out out;
};


/* --- WAIT_CS (driver-abi.md 7) --- */
#define HL_WAIT_CS_FLAGS_INTERRUPT              0x2
#define HL_WAIT_CS_FLAGS_MULTI_CS               0x4
#define HL_WAIT_CS_FLAGS_INTERRUPT_KERNEL_CQ    0x10
#define HL_WAIT_CS_FLAGS_REGISTER_INTERRUPT     0x20
#define HL_WAIT_MULTI_CS_LIST_MAX_LEN           32

#define HL_WAIT_CS_STATUS_COMPLETED             0
#define HL_WAIT_CS_STATUS_BUSY                  1
#define HL_WAIT_CS_STATUS_TIMEDOUT              2
#define HL_WAIT_CS_STATUS_ABORTED               3
#define HL_WAIT_CS_STATUS_FLAG_GONE             0x1
#define HL_WAIT_CS_STATUS_FLAG_TIMESTAMP_VLD    0x2

struct hl_wait_cs_in {
    union {
        struct {
            __u64 seq;
            __u64 timeout_us;           /* relative; 0 = poll */
        };
        struct {
            union {
                __u64 addr;
                __u64 cq_counters_handle;
            };
            __u64 target;
        };
    };
    __u32 ctx_id;
    __u32 flags;
    union {
        struct {
            __u8 seq_arr_len;
            __u8 pad[7];
        };
        __u64 interrupt_timeout_us;
    };
    __u64 cq_counters_offset;
    __u64 timestamp_handle;
    __u64 timestamp_offset;
};

struct hl_wait_cs_out {
    __u32 status;
    __u32 flags;
    __s64 timestamp_nsec;
    __u32 cs_completion_map;
    __u32 pad;
};

union hl_wait_cs_args {
    struct hl_wait_cs_in  in;
    struct hl_wait_cs_out out;
};


/* --- MEMORY (driver-abi.md 4) --- */
#define HL_MEM_OP_ALLOC             0
#define HL_MEM_OP_FREE              1
#define HL_MEM_OP_MAP               2
#define HL_MEM_OP_UNMAP             3
#define HL_MEM_OP_MAP_BLOCK         4
#define HL_MEM_OP_EXPORT_DMABUF_FD  5
#define HL_MEM_OP_TS_ALLOC          6

#define HL_MEM_CONTIGUOUS           0x1
#define HL_MEM_SHARED               0x2
#define HL_MEM_USERPTR              0x4
#define HL_MEM_FORCE_HINT           0x8
#define HL_MEM_PREFETCH             0x40

struct hl_mem_in {
    union {
        struct {
            __u64 mem_size;
            __u64 page_size;            /* 0 = the device's default */
        } alloc;
        struct {
            __u64 handle;               /* Gaudi1: the size */
        } free;
        struct {
            __u64 hint_addr;
            __u64 handle;
        } map_device;
        struct {
            __u64 host_virt_addr;
            __u64 hint_addr;
            __u64 mem_size;
        } map_host;
        struct {
            __u64 block_addr;
        } map_block;
        struct {
            __u64 device_virt_addr;
        } unmap;
        struct {
            __u64 handle;               /* later: addr (+ offset) */
            __u64 mem_size;
        } export_dmabuf_fd;
    };
    __u32 op;
    __u32 flags;
    __u32 ctx_id;
    __u32 num_of_elements;
};

struct hl_mem_out {
    union {
        __u64 device_virt_addr;
        __u64 handle;
        struct {
            __u64 block_handle;
            __u32 block_size;
            __u32 pad;
        };
        __s32 fd;
    };
};

union hl_mem_args {
    struct hl_mem_in  in;
    struct hl_mem_out out;
};


/* --- DEBUG (not used; its size makes the ioctl code) --- */
struct hl_debug_args {
    __u64 input_ptr;
    __u64 output_ptr;
    __u32 input_size;
    __u32 output_size;
    __u32 op;
    __u32 reg_idx;
    __u32 enable;
    __u32 ctx_id;
};


/* misc and transitional generations: _IOWR('H', n) */
#define HL_IOCTL_INFO     _IOWR('H', 0x01, struct hl_info_args)
#define HL_IOCTL_CB       _IOWR('H', 0x02, union hl_cb_args)
#define HL_IOCTL_CS       _IOWR('H', 0x03, union hl_cs_args)
#define HL_IOCTL_WAIT_CS  _IOWR('H', 0x04, union hl_wait_cs_args)
#define HL_IOCTL_MEMORY   _IOWR('H', 0x05, union hl_mem_args)
#define HL_IOCTL_DEBUG    _IOWR('H', 0x06, struct hl_debug_args)


/* ABI generations (driver-abi.md 0.1) */
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

/* sysfs attribute directories per generation (driver-abi.md 1.4) */
#define UCT_GAUDI_SYSFS_DRM_DIR        "/sys/class/accel/accel%d/device"
#define UCT_GAUDI_SYSFS_TRANS_DIR      "/sys/class/accel/accel%d"
#define UCT_GAUDI_SYSFS_MISC_DIR       "/sys/class/habanalabs/hl%d"

/* The loaded module; "version" exists only if the module sets
 * MODULE_VERSION, which Habana's out-of-tree package does and the kernel's
 * own habanalabs does not */
#define UCT_GAUDI_SYSFS_MODULE_DIR     "/sys/module/habanalabs"
#define UCT_GAUDI_SYSFS_MODULE_VERSION UCT_GAUDI_SYSFS_MODULE_DIR "/version"


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


/* DMA packets (driver-abi.md 8) */
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


/* Every size, offset and value above that the code relies on, against the
 * numbers of docs/driver-abi.md (gaudi_abi_layout.h) */
#define UCT_GAUDI_ABI_ASSERT(_cond) _Static_assert(_cond, #_cond)
#include "gaudi_abi_layout.h"
#define UCT_GAUDI_ABI_CHECK_SIZE(_type, _size) \
    _Static_assert(sizeof(_type) == (_size), "ABI: sizeof(" #_type ")");
#define UCT_GAUDI_ABI_CHECK_OFFSET(_type, _field, _offset) \
    _Static_assert(offsetof(_type, _field) == (_offset), \
                   "ABI: offset of " #_type "." #_field);
#define UCT_GAUDI_ABI_CHECK_VALUE(_name, _value) \
    _Static_assert((_name) == (_value), "ABI: value of " #_name);
UCT_GAUDI_ABI_LAYOUT(UCT_GAUDI_ABI_CHECK_SIZE, UCT_GAUDI_ABI_CHECK_OFFSET,
                     UCT_GAUDI_ABI_CHECK_VALUE)
UCT_GAUDI_ABI_LAYOUT_MISC(UCT_GAUDI_ABI_CHECK_SIZE, UCT_GAUDI_ABI_CHECK_VALUE)
UCT_GAUDI_ABI_ASSERT(sizeof(struct uct_gaudi_mem_export_in) == 24);
UCT_GAUDI_ABI_ASSERT(offsetof(struct uct_gaudi_mem_export_in, offset) == 16);
UCT_GAUDI_ABI_ASSERT(sizeof(struct uct_gaudi_mem_reg_dmabuf_in) <= 24);
UCT_GAUDI_ABI_ASSERT(sizeof(struct uct_gaudi_pkt_lin_dma) == 24);
UCT_GAUDI_ABI_ASSERT(offsetof(struct uct_gaudi_pkt_lin_dma, ctl) == 4);
UCT_GAUDI_ABI_ASSERT(offsetof(struct uct_gaudi_pkt_lin_dma, src_addr) == 8);
UCT_GAUDI_ABI_ASSERT(offsetof(struct uct_gaudi_pkt_lin_dma, dst_addr) == 16);
UCT_GAUDI_ABI_ASSERT(UCT_GAUDI_DRM_IOCTL_INFO == 0xC0186440u);
UCT_GAUDI_ABI_ASSERT(UCT_GAUDI_DRM_IOCTL_CB == 0xC0186441u);
UCT_GAUDI_ABI_ASSERT(UCT_GAUDI_DRM_IOCTL_CS == 0xC0306442u);
UCT_GAUDI_ABI_ASSERT(UCT_GAUDI_DRM_IOCTL_WAIT_CS == 0xC0386443u);
UCT_GAUDI_ABI_ASSERT(UCT_GAUDI_DRM_IOCTL_MEMORY == 0xC0286444u);
UCT_GAUDI_ABI_ASSERT(UCT_GAUDI_DRM_IOCTL_DEBUG == 0xC0286445u);


/**
 * What one ABI generation is (driver-abi.md 0.1): the one place that knows
 * how the generations differ. The driver library and the emulator read the
 * descriptor; nothing else compares generations.
 */
typedef struct uct_gaudi_abi_desc {
    uct_gaudi_abi_t abi;
    const char      *name;         /* as UCX_GAUDI_EMU_ABI spells it */
    const char      *compute_fmt;  /* device nodes, printf of the index */
    const char      *control_fmt;
    const char      *node_dir;     /* the directory of the nodes */
    const char      *sysfs_dir;    /* where the driver's attributes are
                                      (pci_addr first: driver-abi.md 1.4) */
    const char      *sysfs_class;  /* below /sys/class */
    int             accel;         /* nodes below /dev/accel */
    int             attrs_on_pci;  /* the attributes are on the PCI function
                                      behind the class device */
    int             drm_codes;     /* ioctl codes DRM_IOWR(0x40 + n), else
                                      _IOWR('H', n) */
    int             logs_invalid_ioctl; /* a request the node does not serve
                                      logs "invalid ioctl" at error level
                                      (the 'H' drivers) */
    int             hw_ip_short;   /* HW_IP_INFO returns the 6.1 structure
                                      only (struct hl_info_hw_ip_info) */
    int             export_handle; /* EXPORT_DMABUF_FD takes the ALLOC
                                      handle and no offset, and a FREE is
                                      refused while the DMA-BUF lives (6.1) */
    int             export_offset; /* EXPORT_DMABUF_FD has an offset that a
                                      driver may apply (which do: drv/
                                      gaudi_share.c and emu_config.c) */
    int             import_op;     /* MEMORY op 99 may exist: Habana's
                                      out-of-tree driver speaks this one */
} uct_gaudi_abi_desc_t;


/* The descriptor of generation @a abi (UCT_GAUDI_ABI_LAST and beyond: NULL) */
static inline const uct_gaudi_abi_desc_t *
uct_gaudi_abi_desc(uct_gaudi_abi_t abi)
{
    static const uct_gaudi_abi_desc_t descs[UCT_GAUDI_ABI_LAST] = {
        [UCT_GAUDI_ABI_MISC] = {
            .abi                = UCT_GAUDI_ABI_MISC,
            .name               = "misc",
            .compute_fmt        = UCT_GAUDI_DEV_MISC_COMPUTE,
            .control_fmt        = UCT_GAUDI_DEV_MISC_CONTROL,
            .node_dir           = "/dev",
            .sysfs_dir          = UCT_GAUDI_SYSFS_MISC_DIR,
            .sysfs_class        = "habanalabs",
            .logs_invalid_ioctl = 1,
            .hw_ip_short        = 1,
            .export_handle      = 1
        },
        [UCT_GAUDI_ABI_TRANS] = {
            .abi                = UCT_GAUDI_ABI_TRANS,
            .name               = "trans",
            .compute_fmt        = UCT_GAUDI_DEV_ACCEL_COMPUTE,
            .control_fmt        = UCT_GAUDI_DEV_ACCEL_CONTROL,
            .node_dir           = UCT_GAUDI_DEV_ACCEL_DIR,
            .sysfs_dir          = UCT_GAUDI_SYSFS_TRANS_DIR,
            .sysfs_class        = "accel",
            .accel              = 1,
            .logs_invalid_ioctl = 1
        },
        [UCT_GAUDI_ABI_DRM] = {
            .abi                = UCT_GAUDI_ABI_DRM,
            .name               = "drm",
            .compute_fmt        = UCT_GAUDI_DEV_ACCEL_COMPUTE,
            .control_fmt        = UCT_GAUDI_DEV_ACCEL_CONTROL,
            .node_dir           = UCT_GAUDI_DEV_ACCEL_DIR,
            .sysfs_dir          = UCT_GAUDI_SYSFS_DRM_DIR,
            .sysfs_class        = "accel",
            .accel              = 1,
            .attrs_on_pci       = 1,
            .drm_codes          = 1,
            .export_offset      = 1,
            .import_op          = 1
        }
    };

    return ((unsigned)abi < UCT_GAUDI_ABI_LAST) ? &descs[abi] : NULL;
}


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

    return codes[uct_gaudi_abi_desc(abi)->drm_codes][ioc];
}

#endif
