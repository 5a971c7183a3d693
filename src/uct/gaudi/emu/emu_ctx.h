/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_CTX_H_
#define GAUDI_EMU_CTX_H_

#include "emu_common.h"
#include "emu_state.h"

#include <pthread.h>
#include <sys/types.h>


/* hl_info_cs_counters drop reasons, in struct order */
typedef enum {
    EMU_DROP_OUT_OF_MEM = 0,
    EMU_DROP_PARSING,
    EMU_DROP_QUEUE_FULL,
    EMU_DROP_DEVICE_IN_RESET,
    EMU_DROP_MAX_CS_IN_FLIGHT,
    EMU_DROP_VALIDATION,
    EMU_DROP_LAST
} emu_drop_t;

typedef enum {
    EMU_MAP_HOST,   /* userptr */
    EMU_MAP_DRAM,   /* device memory handle */
    EMU_MAP_CB      /* kernel CB mapped with HL_CB_FLAGS_MAP */
} emu_map_type_t;

/* One device-VA mapping of a context */
typedef struct emu_map {
    uint64_t       va;        /* block start                         */
    uint64_t       size;      /* block size                          */
    uint64_t       user_va;   /* what MAP returned: the UNMAP key    */
    uint8_t        *host;     /* process address backing @va         */
    uint64_t       handle;    /* EMU_MAP_DRAM: the ALLOC handle      */
    emu_map_type_t type;
    int            import_fd; /* op 99 import: our dma-buf ref, or -1 */
    int            unrouted;  /* op 99 import of a device the platform
                                 forwards no peer DMA to (emu_pci_route) */
} emu_map_t;

/* A context's device VA space: mappings sorted by va */
typedef struct emu_va {
    emu_map_t *maps;
    size_t    count;
    size_t    cap;
} emu_va_t;

/* Kernel command buffer (HL_IOCTL_CB) */
typedef struct emu_cb {
    struct emu_cb *next;
    uint64_t      handle;     /* also the mmap offset                */
    uint32_t      size;       /* cb_size given at CREATE             */
    size_t        length;     /* page-aligned size: the mmap length  */
    int           memfd;
    uint8_t       *kva;       /* the emulator's own mapping          */
    void          *uva;       /* the user's mapping, NULL if none    */
    uint64_t      device_va;  /* HL_CB_FLAGS_MAP, else 0             */
} emu_cb_t;

/* One CS chunk, ready to execute */
typedef struct emu_job {
    uint32_t queue;
    uint32_t size;
    uint64_t cb_va;           /* user CB: device address of packets  */
    uint8_t  *copy;           /* kernel CB: copy made at submission  */
    uint64_t to_dev;          /* bytes it moved host -> device, ...  */
    uint64_t to_host;         /* ... device -> host (or to a peer)   */
    uint64_t through;         /* ... host -> host (or to a peer)     */
    uint64_t bytes;           /* ... in all (the rest: within HBM)   */
} emu_job_t;

typedef enum {
    EMU_CS_FREE = 0,
    EMU_CS_QUEUED,            /* accepted, not executed yet          */
    EMU_CS_DONE               /* executed; complete once the model
                                 says so (emu_model_complete)        */
} emu_cs_state_t;

typedef struct emu_cs {
    struct emu_cs  *next;     /* execution FIFO link                 */
    uint64_t       seq;
    emu_cs_state_t state;
    uint32_t       status;    /* HL_WAIT_CS_STATUS_* once DONE       */
    int            timestamp; /* HL_CS_FLAGS_TIMESTAMP               */
    int            fault;     /* emu_cs_fault_t                      */
    uint64_t       epoch;     /* device reset epoch at submission    */
    uint64_t       submit_ns; /* when it was accepted                */
    uint64_t       model_submit_ns; /* the same on the model clock   */
    uint64_t       model_done_ns;   /* completion on the model clock */
    uint64_t       done_ns;   /* modelled completion time            */
    unsigned       num_jobs;
    emu_job_t      *jobs;
} emu_cs_t;

/* The speed profile's state of a context (emu_model.c): times on the
 * model clock, which stands still while the emulator copies */
#define EMU_MODEL_ENGINES 80  /* Gaudi2: 4 queues (streams) per engine */

typedef struct emu_model {
    uint64_t copy_ns;        /* wall time of the copies that ended      */
    uint64_t copy_begin_ns;  /* wall start of the copy running, or 0    */
    uint64_t engine_free_ns[EMU_MODEL_ENGINES];
    uint64_t link_free_ns[2]; /* PCIe: to the device, to the host       */
    uint64_t hbm_free_ns;
    uint64_t cs_count;
    uint64_t depth_sum;
    unsigned depth_max;
} emu_model_t;

/* An open emulated node (compute or control) */
typedef struct emu_ctx {
    int             fd;          /* the real fd handed to the user      */
    int             dev;
    int             compute;
    pid_t           pid;
    dev_t           st_dev;      /* identity of @fd, to detect reuse    */
    ino_t           st_ino;
    unsigned        refs;        /* in-flight calls (fd-table lock)     */
    char            path[64];    /* logical node path                   */
    uint64_t        id;
    emu_shm_dev_t   *sdev;
    uint8_t         *hbm;

    pthread_mutex_t lock;
    pthread_cond_t  cond;        /* CS progress, CLOCK_MONOTONIC        */
    emu_va_t        va;
    emu_cb_t        *cbs;
    uint64_t        next_cb_id;
    uint64_t        dram_mem;
    uint64_t        drops[EMU_DROP_LAST];
    uint64_t        next_seq;
    uint64_t        last_done_ns;
    emu_model_t     model;       /* the speed profile's (emu_model.c)   */
    int             restored;
    emu_cs_t        *ring;       /* cs_window entries                   */
    uint64_t        cs_window;   /* the ASIC's max_pending_cs           */
    emu_cs_t        *fifo_head;  /* accepted, not executed: in order    */
    emu_cs_t        *fifo_tail;
    int             executing;   /* a thread runs a CS (one at a time)  */
    uint64_t        active_ns;   /* last CS or WAIT_CS on this context  */
    pthread_t       worker;      /* runs what nobody polls (emu_exec.c) */
    pthread_cond_t  worker_cond; /* wakes the worker (CLOCK_MONOTONIC)  */
    int             worker_running;
    int             worker_idle; /* waits for a CS, not for a deadline  */
    int             stop;
    /* stops the engines on this context and aborts what they did not run:
     * set by whoever starts them on it (emu_open.c, emu_exec_stop), so
     * that the context does not call up into the engines */
    void            (*exec_stop)(struct emu_ctx *ctx);
    struct emu_dmabuf *dmabufs;  /* DMA-BUFs exported by this context   */
    int             eventfd;     /* REGISTER_EVENTFD, -1 if none        */
    uint64_t        events;      /* HL_NOTIFIER_EVENT_* not yet read    */
} emu_ctx_t;


emu_ctx_t *emu_ctx_create(int dev, int compute);

/* Tear a context down like the driver's release: CS, mappings, CBs,
 * allocations, ownership. Does not close ctx->fd. */
void emu_ctx_destroy(emu_ctx_t *ctx);

/* Free the memory of a context inherited over fork (no teardown) */
void emu_ctx_forget(emu_ctx_t *ctx);

/* Count a CS drop in the context and the device totals */
void emu_ctx_drop(emu_ctx_t *ctx, emu_drop_t reason);

/* Record a notifier event and signal the registered eventfd */
void emu_ctx_event(emu_ctx_t *ctx, uint64_t events);

#endif
