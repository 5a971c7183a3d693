/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_OPEN_H_
#define GAUDI_EMU_OPEN_H_

#include "emu_common.h"

/* The seam's open/close/fd_path */

int emu_open(const char *path, int flags);

int emu_close(int fd);

int emu_fd_path(int fd, char *buf, size_t max);

/* The seam's revoke: the context of @fd is released as by close, the
 * number stays open on /dev/null */
int emu_revoke(int fd);

#endif
