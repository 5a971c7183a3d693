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

#include <map>
#include <string>
#include <vector>


namespace gipc {

struct run_spec {
    std::string              scenario;
    std::vector<std::string> params;          /* key=value, to both */
    std::vector<std::string> env;             /* NAME=value, to both */
    int                      victim;          /* index killed by SIGKILL, -1 */
    bool                     allow_errors;    /* UCX ERROR lines are fine */
    unsigned                 timeout_sec;     /* without progress: a hang */

    run_spec(const std::string &name) :
        scenario(name), victim(-1), allow_errors(false), timeout_sec(60)
    {
    }
};


class mp_test : public ::testing::Test {
protected:
    virtual void SetUp();
    virtual void TearDown();

    /* Run @a spec; gtest failures on a bad outcome */
    void run(const run_spec &spec);

    /* "RESULT key=value" of child @a index in the last run ("" if none) */
    std::string result(unsigned index, const std::string &key) const;

    /* What child @a index printed in the last run */
    const std::string &output(unsigned index) const { return m_logs[index]; }

private:
    struct child {
        pid_t       pid;
        int         status;
        bool        exited;
        std::string log_path;
        std::string log;
    };

    void spawn(const run_spec &spec, unsigned index, int chan_fd, child &c);
    void wait_children(const run_spec &spec, child *children);
    void judge(const run_spec &spec, unsigned index, child &c);

    std::string                        m_dir;
    std::map<std::string, std::string> m_results[2];
    std::string                        m_logs[2];
};

} /* namespace gipc */

#endif
