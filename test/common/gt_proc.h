/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_TEST_GT_PROC_H_
#define GAUDI_TEST_GT_PROC_H_

/*
 * Time, child processes and temporary directories, for the test programs
 * that fork (test/ipc, test/fuzz): written once here so that every waiting
 * loop has a deadline and every status reads the same in a report.
 */

#include <sys/types.h>

#include <functional>
#include <string>


namespace gaudi_test {

/* Seconds of CLOCK_MONOTONIC */
double now();

/* How a child ended, from its wait status: "exit code 1", "killed by
 * signal 9 (Killed)" */
std::string status_string(int status);

/*
 * Fork a child that runs @a fn and _exit()s with what it returns (@a fn
 * may _exit() itself). stdio is flushed before the fork and not in the
 * child: a thread of ours that is not in the child (UCX's async thread) may
 * have held its lock at the fork. With @a die_with_parent the child gets
 * SIGKILL when we exit. Returns its pid, or -1 (errno) if fork failed.
 */
pid_t fork_child(const std::function<int()> &fn, bool die_with_parent = false);

/* Reap @a pid, waiting at most @a timeout seconds; after that it is killed
 * (SIGKILL) and reaped. True if it ended by itself; *status (may be NULL):
 * its wait status */
bool wait_child(pid_t pid, double timeout, int *status);

/* SIGKILL @a pid and reap it; *status (may be NULL): its wait status */
void kill_child(pid_t pid, int *status = NULL);

/* Our executable, as /proc/self/exe names it ("" if unknown) */
std::string self_exe();


/* mkdtemp() of /tmp/<prefix>.XXXXXX: its path, or "" (errno) */
std::string make_temp_dir(const std::string &prefix);

/* Remove @a path and everything below it, links not followed ("" is
 * nothing) */
void remove_tree(const std::string &path);

/* A fresh directory of make_temp_dir(), removed with its content when this
 * goes, unless the environment has @a keep_env (when given: a variable
 * that asks to keep it for a look afterwards) */
class temp_dir {
public:
    explicit temp_dir(const std::string &prefix, const char *keep_env = NULL);
    ~temp_dir();

    /* "" if it could not be made (errno) */
    const std::string &path() const { return m_path; }

private:
    temp_dir(const temp_dir &) = delete;
    temp_dir &operator=(const temp_dir &) = delete;

    std::string m_path;
    const char  *m_keep_env = NULL;
};

} /* namespace gaudi_test */

#endif
