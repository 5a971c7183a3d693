/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_LOG_H_
#define GAUDI_EMU_LOG_H_

#include "emu_common.h"

/* Record the text returned by gaudi_emu_last_error() */
void emu_error(const char *fmt, ...) EMU_PRINTF(1, 2);

void emu_error_clear(void);

/* The real driver would have written an error line (dev_err) to the kernel
 * log for this call of this process: counted for gaudi_emu_get_stats() */
void emu_log_kernel_error(void);

/* Lines counted by emu_log_kernel_error() in this process */
unsigned emu_log_kernel_errors(void);

#endif
