/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_FAULT_H_
#define GAUDI_EMU_FAULT_H_

#include "emu_common.h"

/*
 * Fault injection (syntax in docs/emulator.md). Counters are per process
 * and restart at every gaudi_emu_init() and gaudi_emu_set_faults().
 */

typedef enum {
    EMU_FAULT_OPEN = 0,
    EMU_FAULT_MMAP,
    EMU_FAULT_INFO,
    EMU_FAULT_CB,
    EMU_FAULT_CS,
    EMU_FAULT_WAIT_CS,
    EMU_FAULT_MEMORY,
    EMU_FAULT_DEBUG,
    EMU_FAULT_IMPORT,       /* the memory ioctl's DMA-BUF import (op 99)
                               alone; counted as a memory ioctl too */
    EMU_FAULT_IOCTL,        /* any ioctl */
    EMU_FAULT_KIND_LAST
} emu_fault_kind_t;

typedef enum {
    EMU_CS_FAULT_NONE = 0,
    EMU_CS_FAULT_TIMEOUT,
    EMU_CS_FAULT_ABORT
} emu_cs_fault_t;

/* Parse and install @a spec (NULL or "" = no faults) and restart the
 * counters. On error returns -EINVAL, records a message naming the
 * offending item and keeps the rules in force. */
int emu_fault_setup(const char *spec);

/* Faults injected since the last setup (failed calls, CS timeouts and
 * aborts, resets) */
uint64_t emu_fault_fired_count(void);

/* Count one call of @a kind; return the errno to inject, or 0 */
int emu_fault_call(emu_fault_kind_t kind);

/* Count one accepted CS; tell whether it must time out or abort */
emu_cs_fault_t emu_fault_cs(void);

/* True if the ioctl just counted is the one after which a reset is due */
int emu_fault_reset_due(void);

/* Map an ioctl command index to its fault kind */
emu_fault_kind_t emu_fault_ioc_kind(uct_gaudi_ioc_t ioc);

#endif
