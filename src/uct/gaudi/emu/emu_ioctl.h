/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_IOCTL_H_
#define GAUDI_EMU_IOCTL_H_

#include "emu_common.h"

#include <sys/types.h>

/* The seam's ioctl/mmap/munmap */

int emu_ioctl(int fd, unsigned long request, void *arg);

void *emu_mmap(void *addr, size_t length, int prot, int flags, int fd,
               off_t offset);

int emu_munmap(void *addr, size_t length);

#endif
