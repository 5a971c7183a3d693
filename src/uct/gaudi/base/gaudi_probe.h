/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_PROBE_H_
#define UCT_GAUDI_PROBE_H_

/*
 * What the owned device's DMA does on this machine, measured once per device
 * and process when the first interface opens: the transports report it to
 * UCP (iface_query, estimate_perf) instead of constants, since UCP's protocol
 * choice follows these estimates and a constant is wrong somewhere (a
 * different link, a slower host, the emulator). Never on the data path.
 *
 * The measurement copies within the interface's bounce buffer (host memory
 * the device maps) on the H2D and the D2H queue in turn: the PCI DMA engine
 * reads the host over the link and writes it back, so it crosses the link
 * in both directions at once, as a host<->device copy crosses it in one.
 * No device memory is allocated for it.
 */

#include "gaudi_bounce.h"

#include <uct/gaudi/drv/gaudi_dma.h>

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS


/* Time after which the measurement starts no more copies (one that runs
 * is waited for, bounded by the DMA timeout) */
#define UCT_GAUDI_PROBE_BUDGET      0.02

/* Sizes the bandwidth is measured with: below the smallest the latency
 * dominates and the figure says little; the largest bounds what a large
 * UCX_GAUDI_*_BOUNCE_SIZE makes the open copy */
#define UCT_GAUDI_PROBE_MIN_SIZE    (64 * 1024)
#define UCT_GAUDI_PROBE_MAX_SIZE    (1024 * 1024)


typedef struct uct_gaudi_probe {
    /* seconds from the submission of one 8-byte copy until the transport's
     * polling sees it done, the smallest of several, on either queue; 0 if
     * not measured */
    double latency;
    /* bytes/second beyond that latency (the fastest of 3 large copies
     * against the fastest of 8 small ones) of the PCI queues, one figure
     * for both, the slower queue's: the copy crosses the link both ways on
     * either queue, so the two differ by noise only, and UCP's choice
     * between a put and a get must not flip on noise (gaudi_ipc's
     * rendezvous, one-sided by the receiver's get, chose the sender's put
     * when D2H read 1% faster). 0 if not measured. The D2D engine is never
     * measured: it reaches only device memory, which is not allocated. */
    double bandwidth;
} uct_gaudi_probe_t;


/**
 * The measurement of @a chan's device: made now on @a chan through
 * @a bounce (both idle, owned by the interface being opened) if this process
 * has none for the device yet, else the one made before. A figure outside
 * what the LAT and BW knobs accept is left unmeasured (0).
 *
 * @return UCS_OK; UCS_ERR_TIMED_OUT if the budget cut it short; or the
 *         status of the copy that failed and ended it. If not UCS_OK, what
 *         was measured until then is in @a probe, nothing is kept, and the
 *         next interface measures again; whether the device failed is the
 *         caller's to check.
 */
ucs_status_t uct_gaudi_probe_get(uct_gaudi_dma_chan_t *chan,
                                 const uct_gaudi_bounce_t *bounce,
                                 uct_gaudi_probe_t *probe);

END_C_DECLS

#endif
