/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_APP_H_
#define UCT_GAUDI_APP_H_

/*
 * The device memory the application's runtime allocates itself on the
 * compute fd UCX adopted, learned from its HL_IOCTL_MEMORY requests
 * (gaudi_hook.h): the size of each ALLOC handle, and each MAP of one as an
 * allocation of its own (gaudi_mem.h), so that it is detected, registered
 * and exported like UCX's. Its UNMAP revokes the importers first and waits
 * for them (the driver refuses the UNMAP while a DMA-BUF of it lives; the
 * 6.1 handle form refuses the FREE instead), at most the free callback's
 * timeout (UCX_GAUDI_IPC_TIMEOUT).
 */

#include "gaudi_device.h"
#include "gaudi_hook.h"

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS


/* The application's memory request @a args on the owned device's fd
 * @a fd: the driver's answer (@a next), with what it teaches kept */
int uct_gaudi_app_mem_ioctl(uct_gaudi_dev_t *dev, int fd,
                            unsigned long request, union hl_mem_args *args,
                            uct_gaudi_hook_next_t next);


/* The device is released: forget the application's handles */
void uct_gaudi_app_forget(void);

END_C_DECLS

#endif
