/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_HOOK_H_
#define UCT_GAUDI_HOOK_H_

/*
 * The application's runtime (SynapseAI, a test's "foreign runtime")
 * allocates device memory with its own HL_IOCTL_MEMORY calls on the compute
 * fd UCX adopts. To learn those allocations the way UCM learns CUDA's, the
 * library replaces ioctl() in every loaded object (UCM's relocation
 * patching, gaudi_ucx_compat.h) and shows the memory requests to the
 * device's owner. Every other request goes on at once; the library's own
 * requests are never shown.
 */

#include <uct/gaudi/seam/gaudi_abi.h>

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS


/* The driver's side of a request the hook caught: 0 or -1/errno */
typedef int (*uct_gaudi_hook_next_t)(int fd, unsigned long request,
                                     void *arg);


/* Called for each memory request of the application; returns what the
 * application's ioctl() returns, having called @a next at most as the
 * driver's answer requires */
typedef int (*uct_gaudi_hook_mem_cb_t)(int fd, unsigned long request,
                                       union hl_mem_args *args,
                                       uct_gaudi_hook_next_t next);


/**
 * Replace ioctl() in every object of the process (once; later objects too)
 * and show the requests @a mem_request (HL_IOCTL_MEMORY of the probed ABI
 * generation) to @a cb from now on (NULL: to nobody). Under the emulator, a
 * memory request on one of its fds goes to the emulator (a raw ioctl()
 * there would reach a plain file).
 */
ucs_status_t uct_gaudi_hook_install(unsigned long mem_request,
                                    uct_gaudi_hook_mem_cb_t cb);


/* Mark the calling thread's driver calls as the library's own (the hook
 * passes them on unseen) until uct_gaudi_hook_own_end() */
void uct_gaudi_hook_own_begin(void);
void uct_gaudi_hook_own_end(void);

END_C_DECLS

#endif
