/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_IOCTL_H_
#define UCT_GAUDI_IOCTL_H_

/*
 * The ABI generation of the running driver (driver-abi.md 0.1): how it
 * is probed, its node names and its ioctl request codes. All calls go through
 * the driver seam.
 */

#include <uct/gaudi/seam/gaudi_abi.h>

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS


typedef enum {
    UCT_GAUDI_NODE_COMPUTE, /* exclusive node: accelN / hlN */
    UCT_GAUDI_NODE_CONTROL  /* INFO only: accel_controlDN / hl_controlDN */
} uct_gaudi_node_type_t;


/* Which habanalabs driver is loaded, as sysfs states it */
typedef enum {
    UCT_GAUDI_DRIVER_UNKNOWN,   /* sysfs does not tell */
    UCT_GAUDI_DRIVER_UPSTREAM,  /* the kernel's own: no module version */
    UCT_GAUDI_DRIVER_OOT        /* Habana's out-of-tree package */
} uct_gaudi_driver_t;


/**
 * Find the ABI generation and the driver, from what the driver states where
 * it can: no /dev/accel -> misc; otherwise the sysfs layout of the first
 * device names the codes (attributes on the PCI function -> DRM, on the
 * class device -> transitional), and one INFO with those codes on its
 * control node confirms them. The other generation's INFO code, which the
 * 'H' drivers log as an error, is tried only when the layout states nothing
 * or the confirmation fails. Sets the generation used by uct_gaudi_ioctl()
 * and the node names. Called once per process (uct_gaudi_lib_init).
 */
ucs_status_t uct_gaudi_ioctl_probe_abi(void);


/* The driver found by uct_gaudi_ioctl_probe_abi() (UNKNOWN before) */
uct_gaudi_driver_t uct_gaudi_ioctl_driver(void);


/* The out-of-tree driver's release (its MODULE_VERSION "major.minor..."):
 * 1 with the numbers, 0 for another or an unknown driver */
int uct_gaudi_ioctl_oot_release(unsigned *major_p, unsigned *minor_p);


/* Name of a driver ("unknown", "upstream", "out-of-tree") */
const char *uct_gaudi_ioctl_driver_name(uct_gaudi_driver_t driver);


/* The probed generation (UCT_GAUDI_ABI_DRM before probing) */
uct_gaudi_abi_t uct_gaudi_ioctl_abi(void);


/* Name of an ABI generation ("misc", "trans", "drm") */
const char *uct_gaudi_ioctl_abi_name(uct_gaudi_abi_t abi);


/* What the probed generation is (gaudi_abi.h) */
const uct_gaudi_abi_desc_t *uct_gaudi_ioctl_abi_desc(void);


/* Force the generation (probe result, or tests) */
void uct_gaudi_ioctl_set_abi(uct_gaudi_abi_t abi);


/**
 * Issue command @a ioc of the probed generation on @a fd through the seam.
 * Retries EINTR only (EAGAIN is back-pressure the caller must see).
 *
 * @return 0, or -1 with errno set.
 */
int uct_gaudi_ioctl(int fd, uct_gaudi_ioc_t ioc, void *arg);


/**
 * Operation of the last uct_gaudi_ioctl() of this thread that failed since
 * uct_gaudi_ioctl_op_reset(), e.g. "MEMORY/ALLOC"; "" if none. Lets error
 * messages say which operation failed.
 */
const char *uct_gaudi_ioctl_failed_op(void);


void uct_gaudi_ioctl_op_reset(void);


/* HL_IOCTL_INFO @a op into @a buf of @a size bytes; 0 or -1/errno */
int uct_gaudi_ioctl_info(int fd, uint32_t op, void *buf, size_t size);


/* Path of node @a index of @a type in the probed generation */
void uct_gaudi_ioctl_node_path(uct_gaudi_node_type_t type, int index,
                               char *buf, size_t max);


/**
 * Parse a node path of the probed generation.
 *
 * @return 0 and the node number in @a index_p if @a path names a node of
 *         @a type, -1 otherwise.
 */
int uct_gaudi_ioctl_node_index(uct_gaudi_node_type_t type, const char *path,
                               int *index_p);


/**
 * Node numbers of the control nodes present, sorted ascending.
 *
 * @return number of entries written to @a indices (at most @a max).
 */
unsigned uct_gaudi_ioctl_scan_nodes(int *indices, unsigned max);

END_C_DECLS

#endif
