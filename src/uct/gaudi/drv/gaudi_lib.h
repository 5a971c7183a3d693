/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_LIB_H_
#define UCT_GAUDI_LIB_H_

/*
 * Entry point of the driver library: configuration (UCX_GAUDI_*), the
 * one-time global initialization (seam selection, ABI probe, discovery) and
 * the discovered device list in logical order.
 */

#include "gaudi_config.h"
#include "gaudi_discover.h"

#include <ucs/config/parser.h>
#include <ucs/debug/log.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS


/**
 * Initialize the driver library once per process: read the configuration,
 * select the driver seam (kernel or emulator), probe the ABI generation and
 * discover the devices. Thread safe; later calls return the first call's result.
 *
 * @return UCS_OK (possibly with zero devices), or an error that was logged
 *         (bad configuration, emulator failed to load); then there are no
 *         devices.
 */
ucs_status_t uct_gaudi_lib_init(void);


/**
 * Test only: undo uct_gaudi_lib_init() so the next call reads the
 * configuration again. No device may be acquired.
 */
void uct_gaudi_lib_cleanup(void);


/* Configuration the driver library was initialized with (NULL before init) */
const uct_gaudi_lib_config_t *uct_gaudi_lib_config(void);


/* Number of discovered devices (0 before a successful init) */
unsigned uct_gaudi_lib_num_devices(void);


/* Number of discovered devices that may be owned and used for DMA */
unsigned uct_gaudi_lib_num_usable(void);


/* Discovered device @a index in logical order, or NULL if out of range */
const uct_gaudi_dev_info_t *uct_gaudi_lib_device(unsigned index);


/* The discovered devices in logical order (uct_gaudi_lib_num_devices()) */
const uct_gaudi_dev_info_t *uct_gaudi_lib_devices(void);


/**
 * Whether this is the first time this process gives @a reason (a short key,
 * "ipc-import-failed", compared by content): for what a user must see once
 * per process and reason, such as a fallback and its cause, and not once per
 * operation or peer. Thread safe. Beyond a few dozen distinct reasons every
 * call answers 0.
 */
int uct_gaudi_lib_first_notice(const char *reason);

/* Log at @a _level the first time this process gives @a _reason, and at
 * debug level after (uct_gaudi_lib_first_notice) */
#define uct_gaudi_log_once(_level, _reason, _fmt, ...) \
    do { \
        if (uct_gaudi_lib_first_notice(_reason)) { \
            ucs_log(_level, _fmt, ## __VA_ARGS__); \
        } else { \
            ucs_debug(_fmt, ## __VA_ARGS__); \
        } \
    } while (0)

END_C_DECLS

#endif
