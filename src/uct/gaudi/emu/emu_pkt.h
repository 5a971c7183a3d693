/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_PKT_H_
#define GAUDI_EMU_PKT_H_

#include "emu_ctx.h"

/* Bytes moved by a CB, for the bandwidth model and PCI counters */
typedef struct {
    uint64_t bytes;
    uint64_t to_dev;
    uint64_t to_host;
    uint64_t through;   /* neither end in this device's HBM (host to host,
                           host to a peer): in and out over the link */
} emu_pkt_stats_t;

/* Gaudi1 external-queue parser checks, done at submission: -EPERM for a
 * forbidden packet, -EINVAL for an unknown one or one running past the end */
int emu_pkt_validate_gaudi1(const uint8_t *buf, size_t len);

/* emu_pkt_run() ran a STOP packet: the CB ends there */
#define EMU_PKT_STOPPED  1

/* Execute the whole packets at the start of @buf on queue @queue, as the
 * engine fetches them: 0 with *done the bytes of the packets run (a packet
 * cut by the end of @buf is not run: the caller fetches on from there),
 * EMU_PKT_STOPPED after a STOP, -EFAULT if a DMA touches an unmapped device
 * address or one the queue's engine cannot reach, -EINVAL on a packet the
 * emulator cannot execute */
int emu_pkt_run(emu_ctx_t *ctx, uint32_t queue, const uint8_t *buf,
                size_t len, emu_pkt_stats_t *stats, size_t *done);

#endif
