/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_PID_H_
#define GAUDI_EMU_PID_H_

#include "emu_common.h"

/*
 * This process's pid without a system call: every emulated ioctl checks
 * that its context belongs to the calling process (a forked child must not
 * use its parent's device), and glibc's getpid() is a system call.
 * Refreshed in the child after fork().
 */
pid_t emu_getpid(void);

#endif
