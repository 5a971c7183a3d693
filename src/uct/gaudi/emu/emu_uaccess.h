/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_UACCESS_H_
#define GAUDI_EMU_UACCESS_H_

#include "emu_common.h"

/*
 * copy_from_user/copy_to_user for pointers the caller hands to an ioctl
 * (INFO return_pointer, CS chunk arrays...): a bad pointer gives -EFAULT
 * instead of a crash, like the kernel.
 */

int emu_copy_from_user(void *dst, uint64_t src, size_t len);

int emu_copy_to_user(uint64_t dst, const void *src, size_t len);

/* 0 if [addr, addr + len) is mapped writable in this process, else
 * -EFAULT (pin_user_pages(FOLL_WRITE) would fail) */
int emu_check_user_writable(uint64_t addr, uint64_t len);

#endif
