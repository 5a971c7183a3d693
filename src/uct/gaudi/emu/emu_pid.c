/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_pid.h"

#include <pthread.h>


static pthread_once_t emu_pid_once = PTHREAD_ONCE_INIT;
static volatile pid_t emu_pid;


static void emu_pid_refresh(void)
{
    emu_pid = getpid();
}

static void emu_pid_setup(void)
{
    emu_pid_refresh();
    pthread_atfork(NULL, NULL, emu_pid_refresh);
}

pid_t emu_getpid(void)
{
    pthread_once(&emu_pid_once, emu_pid_setup);
    return emu_pid;
}
