/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "gt_proc.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sstream>
#include <vector>


namespace gaudi_test {

double now()
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

std::string status_string(int status)
{
    std::ostringstream os;

    if (WIFSIGNALED(status)) {
        os << "killed by signal " << WTERMSIG(status) << " ("
           << strsignal(WTERMSIG(status)) << ")";
    } else {
        os << "exit code " << WEXITSTATUS(status);
    }
    return os.str();
}

pid_t fork_child(const std::function<int()> &fn, bool die_with_parent)
{
    pid_t pid;

    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        if (die_with_parent) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
        }
        _exit(fn());
    }
    return pid;
}

bool wait_child(pid_t pid, double timeout, int *status)
{
    double deadline = now() + timeout;
    int st          = 0;
    pid_t ret;

    while (((ret = waitpid(pid, &st, WNOHANG)) == 0) ||
           ((ret < 0) && (errno == EINTR))) {
        if (now() > deadline) {
            kill_child(pid, status);
            return false;
        }
        usleep(1000);
    }

    if (status != NULL) {
        *status = st;
    }
    return ret == pid;
}

void kill_child(pid_t pid, int *status)
{
    int st = 0;

    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    if (status != NULL) {
        *status = st;
    }
}

std::string self_exe()
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    exe[(len > 0) ? len : 0] = '\0';
    return exe;
}


std::string make_temp_dir(const std::string &prefix)
{
    std::string tmpl = "/tmp/" + prefix + ".XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());

    buf.push_back('\0');
    return (mkdtemp(buf.data()) != NULL) ? buf.data() : "";
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    return remove(path);
}

void remove_tree(const std::string &path)
{
    if (!path.empty()) {
        nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
}

temp_dir::temp_dir(const std::string &prefix, const char *keep_env) :
    m_path(make_temp_dir(prefix)), m_keep_env(keep_env)
{
}

temp_dir::~temp_dir()
{
    if ((m_keep_env == NULL) || (getenv(m_keep_env) == NULL)) {
        remove_tree(m_path);
    }
}

} /* namespace gaudi_test */
