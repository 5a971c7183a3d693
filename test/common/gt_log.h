/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_TEST_GT_LOG_H_
#define GAUDI_TEST_GT_LOG_H_

/*
 * UCX's log lines of this process, captured while an object of log_capture
 * lives: a test reads what UCX said (an error naming a path, one info line)
 * or keeps the errors it provokes on purpose out of the output.
 */

extern "C" {
#include <ucs/debug/log_def.h>
}

#include <string>


namespace gaudi_test {

class log_capture {
public:
    /* keep_level: keep no text */
    static const int KEEP_NONE = -1;

    /*
     * Push a UCX log handler that keeps the text of the lines of level
     * @a keep_level or more severe (one line each) and counts those of
     * ERROR or FATAL. With @a swallow no line goes further (the default
     * handler does not print it), else every line goes on as before. One
     * capture at a time: a second one aborts.
     */
    log_capture(int keep_level, bool swallow);
    /* Pops the handler (the last one pushed: captures are nested with
     * whatever else pushes one) */
    ~log_capture();

    /* The lines kept so far */
    std::string text() const;
    /* The ERROR and FATAL lines so far */
    unsigned long errors() const;
    void clear();

private:
    log_capture(const log_capture &) = delete;
    log_capture &operator=(const log_capture &) = delete;

    static ucs_log_func_rc_t
    handler(const char *file, unsigned line, const char *function,
            ucs_log_level_t level, const ucs_log_component_config_t *comp_conf,
            const char *message, va_list ap);

    int           m_keep_level = KEEP_NONE;
    bool          m_swallow    = false;
    std::string   m_text;
    unsigned long m_errors     = 0;
};

} /* namespace gaudi_test */

#endif
