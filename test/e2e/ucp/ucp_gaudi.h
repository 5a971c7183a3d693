/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * What an e2e UCP program reaches of Gaudi besides UCP: symbols of the
 * libraries UCX loaded (our module, the emulator), the emulator's
 * accounting, and device memory allocated the way an application's own
 * runtime does it. Needs the tree's internal headers (UCS_INTERNAL_CPPFLAGS)
 * and -ldl.
 */

#ifndef UCP_GAUDI_H_
#define UCP_GAUDI_H_

#include "ucp_app.h"

#include <uct/gaudi/seam/gaudi_emu.h>


/*
 * A symbol of library @a lib UCX loaded: UCX dlopen()s its modules, and the
 * Gaudi base library the emulator, with RTLD_LOCAL, so RTLD_DEFAULT may not
 * see them; the library is looked up among the loaded objects. NULL if
 * neither has it.
 */
void *ucp_gaudi_lib_symbol(const char *lib, const char *symbol);

/* A symbol of the Gaudi emulator (libgaudi_emu.so), NULL without it */
void *ucp_gaudi_emu_symbol(const char *symbol);

/*
 * The emulator's accounting of this process in @a buf, as
 * "contexts=.. dram_maps=.. ... <pinned>=<pinned bytes>" (@a pinned: the
 * last field's name, each program's own), "unavailable" without
 * @a get_stats
 */
void ucp_gaudi_emu_stats_str(gaudi_emu_get_stats_func_t get_stats,
                             const char *pinned, char *buf, size_t max);

/* Gaudi memory the application allocated itself: HL_MEM_OP_ALLOC + MAP on
 * the compute fd of this process (the one UCX owns, the same file an
 * application's runtime shares). With @a raw set before the allocation, by
 * raw ioctl() calls, as a runtime makes them (UCX's hook of ioctl() sees
 * them, and routes them to the emulator); else through the driver seam UCX
 * loaded, which its hook does not see (as a runtime's requests made before
 * UCX started) */
typedef struct {
    int      raw;     /* raw ioctl(), seen by UCX's hook */
    int      fd;      /* the compute fd it is on */
    uint64_t handle;  /* HL_MEM_OP_ALLOC's */
    void     *address; /* the device VA HL_MEM_OP_MAP gave */
} ucp_gaudi_app_mem_t;

void ucp_gaudi_app_alloc(ucp_gaudi_app_mem_t *mem, size_t size);
void ucp_gaudi_app_free(ucp_gaudi_app_mem_t *mem);

#endif
