/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_STATE_H_
#define GAUDI_EMU_STATE_H_

#include "emu_common.h"

#include <pthread.h>

/*
 * State shared by every process of the emulated node, in the per-user state
 * directory:
 *   node.state     header + one section per device (this layout), mapped
 *                  MAP_SHARED; each section has a robust process-shared
 *                  mutex
 *   devN.compute   compute node "file": flock()ed by the owner, its fd is the
 *                  one open() returns
 *   devN.control   control node "file"
 *   hbmN           sparse HBM backing (hbm_size bytes)
 *   init.lock      serialises creation/validation of node.state
 */

#define EMU_STATE_MAGIC     0x31554d4549445541ull  /* "AUDIEMU1" */
#define EMU_STATE_VERSION   3
#define EMU_MAX_ALLOCS      4096

/* Owner of an allocation kept alive by a DMA-BUF after its context left */
#define EMU_ALLOC_OWNER_EXPORTED  UINT64_MAX

/* One device-memory allocation (HL_MEM_OP_ALLOC handle) */
typedef struct emu_shm_alloc {
    uint64_t handle;        /* 0: free slot */
    uint64_t first_page;    /* in DRAM pages */
    uint64_t num_pages;
    uint64_t size;          /* bytes, rounded up to the ALLOC page size */
    uint64_t owner;         /* context id */
    uint32_t flags;         /* HL_MEM_* of the ALLOC */
    uint32_t map_count;     /* live MAPs of this handle */
} emu_shm_alloc_t;

/* Per-device shared section */
typedef struct emu_shm_dev {
    pthread_mutex_t lock;            /* robust, process-shared           */
    uint32_t        status;          /* enum hl_device_status            */
    uint32_t        hard_reset_cnt;
    uint32_t        soft_reset_cnt;
    uint32_t        owner_pid;       /* compute owner, 0 if none          */
    uint64_t        owner_ctx;       /* context id of the owner, 0 none   */
    uint64_t        open_counter;
    uint64_t        open_ns;         /* when the current owner opened     */
    uint64_t        last_open_period_ms;
    uint64_t        reset_epoch;     /* bumped by every reset             */
    uint64_t        reset_ns;        /* time of the last reset            */
    /* the reset model (emu_reset.c), after the driver's reset_info */
    uint32_t        watchdog_active; /* a reset waits for the owner to
                                        release the device (it registered
                                        an eventfd)                      */
    uint32_t        owner_eventfd;   /* the owner registered an eventfd   */
    uint64_t        watchdog_ns;     /* when the release watchdog fires   */
    uint64_t        kill_ns;         /* hard reset: when the processes that
                                        still hold the device are killed,
                                        0 none (done)                    */
    uint64_t        release_end_ns;  /* the reset after the last release
                                        runs until then (open: EAGAIN)   */
    uint32_t        killed_pid;      /* the last process killed           */
    uint32_t        pad2;
    uint64_t        dram_used;       /* bytes allocated (or reported)     */
    uint64_t        next_handle;
    uint64_t        cs_queued;       /* CS accepted, not yet executed     */
    uint64_t        last_done_ns;    /* modelled completion of last CS    */
    uint64_t        cs_drops[6];     /* totals, hl_info_cs_counters order */
    uint64_t        bytes_to_dev;
    uint64_t        bytes_to_host;
    uint64_t        num_pages;       /* DRAM pages (page map entries)     */
    uint32_t        num_allocs;
    uint32_t        pad;
    emu_shm_alloc_t allocs[EMU_MAX_ALLOCS];
    /* followed by num_pages bytes of page map (0 free, 1 used) */
} emu_shm_dev_t;

typedef struct emu_shm_hdr {
    uint64_t magic;
    uint64_t version;
    uint32_t asic;
    uint32_t num_devices;
    uint64_t hbm_size;
    uint64_t dev_stride;
    uint64_t next_ctx_id;
    uint32_t edma_mask;    /* the engines every process of the node sees */
    uint32_t pad;
} emu_shm_hdr_t;


/* Resolve, create and check the state directory, then create or validate
 * node.state and the per-device files. Records an error message. */
int emu_state_open(void);

/* Leave the node (emu_state_leave), then unmap everything */
void emu_state_close(void);

/* Give up this process's use of the node, its mappings kept (other threads
 * may still run): the last user removes what only users need (emu_state.c) */
void emu_state_leave(void);

const char *emu_state_dir(void);

/* Is the FIFO @a name of the state directory (a DMA-BUF) still held by
 * anybody (a shared flock on any copy of its fd)? Unlinks it if not. */
int emu_state_fifo_held(const char *name);

int emu_state_path(char *buf, size_t max, const char *name, int dev);

emu_shm_dev_t *emu_state_dev(int dev);

uint8_t *emu_state_page_map(emu_shm_dev_t *sdev);

/* Lock a device section, recovering from a dead owner (EOWNERDEAD) */
void emu_state_lock(emu_shm_dev_t *sdev);

void emu_state_unlock(emu_shm_dev_t *sdev);

uint64_t emu_state_new_ctx_id(void);

/* The process-local mapping of a device's HBM backing (lazily created) */
uint8_t *emu_state_hbm(int dev);

/* Give HBM pages back to the file system (they read back as zeros) */
void emu_state_hbm_discard(int dev, uint64_t offset, uint64_t length);

uint64_t emu_now_ns(void);

#endif
