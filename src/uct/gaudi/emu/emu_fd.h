/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_FD_H_
#define GAUDI_EMU_FD_H_

#include "emu_ctx.h"

/* Process-global table: real fd -> emulated context */

int emu_fd_insert(emu_ctx_t *ctx);

/* Look up and reference the context of @fd; NULL with *err_p = EBADF (not
 * an open fd, or a context inherited over fork) or ENOTTY (not ours) */
emu_ctx_t *emu_fd_get(int fd, int *err_p);

/* emu_fd_get() for the ioctl path: an fd found in the table is trusted
 * without an fstat() of its identity (2 us a call in a VM, a third of an
 * emulated CS round trip); see "Known differences" in docs/emulator.md.
 * Any other fd gets emu_fd_get()'s checks and errors. */
emu_ctx_t *emu_fd_get_trusted(int fd, int *err_p);

void emu_fd_put(emu_ctx_t *ctx);

/* Unlink the context of @fd once no call uses it; NULL if none. Contexts
 * inherited over fork are forgotten and also return NULL. */
emu_ctx_t *emu_fd_remove(int fd);

/* Unlink any one context (for gaudi_emu_fini) */
emu_ctx_t *emu_fd_remove_any(void);

/* Number of live contexts of this process */
unsigned emu_fd_count(void);

/* Call @cb on every context of device @dev (-1: of all devices) of this
 * process (fd-table lock held: @cb must not call back into the table) */
void emu_fd_foreach(int dev, void (*cb)(emu_ctx_t *ctx, void *arg),
                    void *arg);

/* Send HL_NOTIFIER_EVENT_* @events to every context of device @dev of this
 * process (hl_notifier_event_send_all walks hdev->fpriv_list) */
void emu_fd_notify(int dev, uint64_t events);

void emu_fd_atfork_install(void);

#endif
