/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_log.h"

#include <stdarg.h>
#include <stdio.h>


static char emu_last_error[512];

/* error lines the real driver would have logged for this process's calls */
static unsigned emu_kernel_log_errors;


void emu_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(emu_last_error, sizeof(emu_last_error), fmt, ap);
    va_end(ap);
}

void emu_error_clear(void)
{
    emu_last_error[0] = '\0';
}

void emu_log_kernel_error(void)
{
    __atomic_add_fetch(&emu_kernel_log_errors, 1, __ATOMIC_RELAXED);
}

unsigned emu_log_kernel_errors(void)
{
    return __atomic_load_n(&emu_kernel_log_errors, __ATOMIC_RELAXED);
}

EMU_EXPORT const char *gaudi_emu_last_error(void)
{
    return emu_last_error;
}
