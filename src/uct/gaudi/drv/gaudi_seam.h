/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_SEAM_H_
#define UCT_GAUDI_SEAM_H_

/*
 * Selection of the driver seam: the real syscalls, or the emulator library
 * (libgaudi_emu.so.0) when UCX_GAUDI_EMU_DEVICES > 0.
 */

#include <uct/gaudi/seam/gaudi_drv.h>

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS


struct uct_gaudi_lib_config;


#define UCT_GAUDI_EMU_LIB_NAME "libgaudi_emu.so.0"


/* The selected seam; the kernel until uct_gaudi_seam_select() says else */
extern const uct_gaudi_drv_ops_t *uct_gaudi_seam_ops;


/**
 * Select the seam from @a config. With emulated devices requested, load the
 * emulator from the directory of this module, else by name, and initialize
 * it; failure is logged and returned, and the kernel seam stays in place.
 */
ucs_status_t uct_gaudi_seam_select(const struct uct_gaudi_lib_config *config);


/* Whether the emulator is the selected seam */
int uct_gaudi_seam_is_emulated(void);


/* Return to the kernel seam; the emulator closes its nodes and forgets its
 * configuration (tests only) */
void uct_gaudi_seam_cleanup(void);

END_C_DECLS

#endif
