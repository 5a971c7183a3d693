/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_COMMON_H_
#define GAUDI_EMU_COMMON_H_

/*
 * First include of every emulator source file: feature macros, the public
 * header, and hidden visibility for everything declared after it. Only the
 * symbols marked EMU_EXPORT leave the shared library.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <uct/gaudi/seam/gaudi_emu.h>

/* Every system header the emulator uses comes before the visibility pragma,
 * so that libc/libpthread declarations keep default visibility. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#pragma GCC visibility push(hidden)

#define EMU_EXPORT          __attribute__((visibility("default")))
#define EMU_PRINTF(_f, _a)  __attribute__((format(printf, _f, _a)))

#define EMU_MAX_DEVICES     64
#define EMU_HOST_PAGE       4096ull
#define EMU_HUGE_PAGE       (2ull << 20)

#define EMU_KB              1024ull
#define EMU_MB              (1024ull * EMU_KB)
#define EMU_GB              (1024ull * EMU_MB)

#define emu_min(_a, _b)     (((_a) < (_b)) ? (_a) : (_b))
#define emu_max(_a, _b)     (((_a) > (_b)) ? (_a) : (_b))
#define emu_align_up(_x, _a)   ((((_x) + (_a) - 1) / (_a)) * (_a))
#define emu_align_down(_x, _a) (((_x) / (_a)) * (_a))
#define emu_is_pow2(_x)     (((_x) != 0) && ((((_x) - 1) & (_x)) == 0))
#define emu_array_size(_a)  (sizeof(_a) / sizeof((_a)[0]))

/* Set errno and return -1, the seam's convention */
static inline int emu_fail(int err)
{
    errno = err;
    return -1;
}

#endif
