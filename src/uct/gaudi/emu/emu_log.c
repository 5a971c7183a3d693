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

EMU_EXPORT const char *gaudi_emu_last_error(void)
{
    return emu_last_error;
}
