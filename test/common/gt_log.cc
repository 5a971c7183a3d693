/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "gt_log.h"

extern "C" {
#include <ucs/debug/log.h>
}

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <mutex>


namespace gaudi_test {

/* UCX calls log handlers from any of its threads (the async thread logs
 * too), without an argument: the capture that is active, and its text,
 * are reached under this lock */
static std::mutex g_lock;
static log_capture *g_active = NULL;

/* A fork while another thread holds the lock would leave it held for ever
 * in the child (the tests fork with UCX's async thread running): the
 * forking thread takes it across the fork */
static void fork_prepare()
{
    g_lock.lock();
}

static void fork_done()
{
    g_lock.unlock();
}

log_capture::log_capture(int keep_level, bool swallow) :
    m_keep_level(keep_level), m_swallow(swallow)
{
    static std::once_flag atfork_once;

    std::call_once(atfork_once, []() {
        pthread_atfork(fork_prepare, fork_done, fork_done);
    });

    std::lock_guard<std::mutex> guard(g_lock);
    if (g_active != NULL) {
        fprintf(stderr, "gaudi_test::log_capture: a capture is already "
                "active (one at a time)\n");
        abort();
    }
    g_active = this;
    ucs_log_push_handler(handler);
}

log_capture::~log_capture()
{
    std::lock_guard<std::mutex> guard(g_lock);

    ucs_log_pop_handler();
    g_active = NULL;
}

std::string log_capture::text() const
{
    std::lock_guard<std::mutex> guard(g_lock);

    return m_text;
}

unsigned long log_capture::errors() const
{
    std::lock_guard<std::mutex> guard(g_lock);

    return m_errors;
}

void log_capture::clear()
{
    std::lock_guard<std::mutex> guard(g_lock);

    m_text.clear();
    m_errors = 0;
}

ucs_log_func_rc_t
log_capture::handler(const char *file, unsigned line, const char *function,
                     ucs_log_level_t level,
                     const ucs_log_component_config_t *comp_conf,
                     const char *message, va_list ap)
{
    std::lock_guard<std::mutex> guard(g_lock);
    char buf[1024];

    if (g_active == NULL) {
        return UCS_LOG_FUNC_RC_CONTINUE;
    }

    if ((int)level <= g_active->m_keep_level) {
        vsnprintf(buf, sizeof(buf), message, ap);
        g_active->m_text += std::string(buf) + "\n";
    }
    g_active->m_errors += (level <= UCS_LOG_LEVEL_ERROR);
    return g_active->m_swallow ? UCS_LOG_FUNC_RC_STOP :
                                 UCS_LOG_FUNC_RC_CONTINUE;
}

} /* namespace gaudi_test */
