/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_TEST_IPC_HARNESS_H_
#define UCT_GAUDI_TEST_IPC_HARNESS_H_

/*
 * The gtest side of the multi-process tests: runs a scenario in two child
 * processes (fork + exec of this binary in role mode) on a fresh emulated
 * node of two devices, with a watchdog, and judges their exit status and
 * output. The parent never initializes UCX or the emulator itself.
 */

#include <gtest/gtest.h>

#include "gt_proc.h"

#include <map>
#include <memory>
#include <string>
#include <vector>


namespace gipc {

/* How a test runs its scenario; the setters chain, for the tables of
 * tests (gaudi_ipc_mp_test.cc, ipc_attack.cc) */
struct run_spec {
    std::string              scenario;
    std::vector<std::string> params;          /* key=value, to both */
    std::vector<std::string> env;             /* NAME=value, to both */
    int                      victim;          /* index killed by SIGKILL, -1 */
    bool                     allow_errors;    /* UCX ERROR lines are fine */
    unsigned                 timeout_sec;     /* without progress: a hang */
    const char               *root_only;      /* skipped unless root: why */

    run_spec(const std::string &name) :
        scenario(name), victim(-1), allow_errors(false), timeout_sec(60),
        root_only(NULL)
    {
    }

    run_spec &with_params(const std::vector<std::string> &p)
    {
        params = p;
        return *this;
    }

    run_spec &with_env(const std::vector<std::string> &e)
    {
        env = e;
        return *this;
    }

    /* child @a index is SIGKILLed on purpose (its peer must cope) */
    run_spec &kills(int index)
    {
        victim = index;
        return *this;
    }

    run_spec &errors_ok()
    {
        allow_errors = true;
        return *this;
    }

    run_spec &timeout(unsigned sec)
    {
        timeout_sec = sec;
        return *this;
    }

    run_spec &needs_root(const char *why)
    {
        root_only = why;
        return *this;
    }
};


class mp_test : public ::testing::Test {
public:
    /* "RESULT key=value" of child @a index in the last run ("" if none) */
    std::string result(unsigned index, const std::string &key) const;

    /* What child @a index printed in the last run */
    const std::string &output(unsigned index) const { return m_logs[index]; }

protected:
    virtual void SetUp();
    virtual void TearDown();

    /* Run @a spec; gtest failures on a bad outcome */
    void run(const run_spec &spec);

private:
    struct child {
        pid_t       pid      = -1;
        int         status   = 0;
        bool        exited   = false;
        std::string log_path;
        std::string log;
    };

    void spawn(const run_spec &spec, unsigned index, int chan_fd, child &c);
    void wait_children(const run_spec &spec, child *children);
    void judge(const run_spec &spec, unsigned index, child &c);

    std::unique_ptr<gaudi_test::temp_dir> m_tmp;
    std::string                           m_dir;
    std::map<std::string, std::string>    m_results[2];
    std::string                           m_logs[2];
};


/*
 * One test of a table: gtest name, the run, and what it checks beyond the
 * children's own checks and exit codes (NULL: nothing more)
 */
struct mp_case {
    const char *name;
    run_spec   spec;
    void       (*check)(const mp_test &t);
};

/* Register the tests @a suite.<row name> of @a cases (before
 * RUN_ALL_TESTS), of source @a file; @a root_only: every one needs root
 * (why), or NULL */
void register_cases(const char *suite, const mp_case *cases, size_t count,
                    const char *file, const char *root_only);

template <size_t N>
void register_cases(const char *suite, const mp_case (&cases)[N],
                    const char *file, const char *root_only = NULL)
{
    register_cases(suite, cases, N, file, root_only);
}

/* The tables (gaudi_ipc_mp_test.cc, ipc_attack.cc) */
void register_mp_tests();
void register_attack_tests();

} /* namespace gipc */

#endif
