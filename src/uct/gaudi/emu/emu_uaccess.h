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

/* 0 if [addr, addr + len) can be pinned for long as the driver's
 * userptr mapping does (pin_user_pages_fast(FOLL_WRITE | FOLL_LONGTERM)):
 * mapped writable in this process and, unless @a shared_files_ok (kernels
 * before 6.5), no part of it a writable shared mapping of a file whose
 * filesystem tracks dirty pages; else -EFAULT, as the kernel answers */
int emu_check_user_pinnable(uint64_t addr, uint64_t len, int shared_files_ok);

#endif
