/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "ipc_harness.h"
#include "ipc_child.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

extern char **environ;


namespace gipc {

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    return remove(path);
}

void mp_test::SetUp()
{
    char tmpl[] = "/tmp/gaudi-ipc-mp.XXXXXX";

    ASSERT_TRUE(mkdtemp(tmpl) != NULL) << strerror(errno);
    m_dir = tmpl;
    /* others may pass through (not list): what keeps them out of the
     * children's rendezvous directory (m_dir/ipc) is its own mode */
    ASSERT_EQ(0, chmod(tmpl, 0711)) << strerror(errno);
    ASSERT_EQ(0, mkdir((m_dir + "/emu").c_str(), 0700)) << strerror(errno);
}

void mp_test::TearDown()
{
    if (!m_dir.empty() && (getenv("GAUDI_IPC_MP_KEEP") == NULL)) {
        nftw(m_dir.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
}

std::string mp_test::result(unsigned index, const std::string &key) const
{
    std::map<std::string, std::string>::const_iterator it;

    it = m_results[index].find(key);
    return (it == m_results[index].end()) ? "" : it->second;
}

/* Our environment, minus the names @a spec sets, plus those */
static std::vector<std::string> child_env(const std::vector<std::string> &set)
{
    std::vector<std::string> env;
    bool overridden;
    char **e;

    for (e = environ; *e != NULL; ++e) {
        std::string var = *e;
        overridden      = false;
        for (const std::string &s : set) {
            overridden |= (var.compare(0, s.find('=') + 1, s, 0,
                                       s.find('=') + 1) == 0);
        }
        if (!overridden) {
            env.push_back(var);
        }
    }

    env.insert(env.end(), set.begin(), set.end());
    return env;
}

static std::vector<char*> c_strings(std::vector<std::string> &strings)
{
    std::vector<char*> out;

    for (std::string &s : strings) {
        out.push_back(&s[0]);
    }
    out.push_back(NULL);
    return out;
}

/*
 * What the children exec: "/proc/self/exe", this very binary even if its file
 * was replaced meanwhile; but under a dynamic binary translator (valgrind)
 * that is the translator's own static executable, while readlink() of it is
 * faked to give our file: exec that file, by its path, then.
 */
static const char *exec_path(const char *exe)
{
    struct stat self, file;

    if ((stat("/proc/self/exe", &self) == 0) && (stat(exe, &file) == 0) &&
        ((self.st_dev != file.st_dev) || (self.st_ino != file.st_ino))) {
        return exe;
    }
    return "/proc/self/exe";
}

void mp_test::spawn(const run_spec &spec, unsigned index, int chan_fd,
                    child &c)
{
    std::vector<std::string> args, env_set, env;
    std::vector<char*> argv, envp;
    char exe[PATH_MAX];
    const char *path;
    ssize_t len;
    int log_fd;

    len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    ASSERT_GT(len, 0) << strerror(errno);
    exe[len] = '\0';
    path = exec_path(exe);

    args = {exe, ROLE_ARG, spec.scenario, "--index", std::to_string(index),
            "--fd", std::to_string(CHANNEL_FD)};
    args.insert(args.end(), spec.params.begin(), spec.params.end());

    /* each child owns its own emulated device of the shared node; both
     * meet in a rendezvous directory of this test (created by the first) */
    env_set = {"UCX_GAUDI_EMU_DEVICES=2",
               "UCX_GAUDI_EMU_STATE_DIR=" + m_dir + "/emu",
               "UCX_GAUDI_IPC_DIR=" + m_dir + "/ipc",
               "UCX_GAUDI_DEVICE=" + std::to_string(index),
               "UCX_HANDLE_ERRORS=none"};
    env_set.insert(env_set.end(), spec.env.begin(), spec.env.end());
    env = child_env(env_set);

    argv = c_strings(args);
    envp = c_strings(env);

    c.log_path = m_dir + "/child" + std::to_string(index) + ".log";
    log_fd     = open(c.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC |
                      O_CLOEXEC, 0600);
    ASSERT_GE(log_fd, 0) << strerror(errno);

    fflush(NULL);
    c.pid = fork();
    if (c.pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if ((dup2(chan_fd, CHANNEL_FD) < 0) || (dup2(log_fd, 1) < 0) ||
            (dup2(log_fd, 2) < 0)) {
            _exit(126);
        }
        execve(path, argv.data(), envp.data());
        dprintf(1, "execve(%s = %s): %s\n", path, exe, strerror(errno));
        _exit(127);
    }

    close(log_fd);
    ASSERT_GT(c.pid, 0) << "fork: " << strerror(errno);
    c.exited = false;
}

static double mono_now()
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

/* Thread backtraces of a hung child, if gdb is there (for the report) */
static std::string backtraces(pid_t pid)
{
    std::string cmd, out;
    char line[1024];
    FILE *pipe;

    if ((access("/usr/bin/gdb", X_OK) != 0) ||
        (getenv("GAUDI_IPC_MP_NO_GDB") != NULL)) {
        return "";
    }

    cmd  = "timeout 30 /usr/bin/gdb -p " + std::to_string(pid) +
           " -batch -ex 'thread apply all bt 12' 2>/dev/null";
    pipe = popen(cmd.c_str(), "r");
    if (pipe == NULL) {
        return "";
    }

    while (fgets(line, sizeof(line), pipe) != NULL) {
        if ((line[0] == '#') || !strncmp(line, "Thread ", 7)) {
            out += line;
        }
    }
    pclose(pipe);
    return out;
}

/* Whether a child's log file changed since @a last (its size, or its time,
 * which the child moves at every message to its peer: mark_progress) */
static bool log_changed(const std::string &path, struct stat *last)
{
    struct stat st;
    bool changed;

    if (stat(path.c_str(), &st) != 0) {
        return false;
    }

    changed = (st.st_size != last->st_size) ||
              (st.st_mtim.tv_sec != last->st_mtim.tv_sec) ||
              (st.st_mtim.tv_nsec != last->st_mtim.tv_nsec);
    *last   = st;
    return changed;
}

/* Reap both children; kill them when neither made progress for the
 * scenario's timeout (a step, an output line): a hang, while a scenario that
 * a loaded machine slows down keeps going */
void mp_test::wait_children(const run_spec &spec, child *children)
{
    double last_progress = mono_now();
    struct stat logs[2];
    unsigned i, left = 2;
    int status;

    memset(logs, 0, sizeof(logs));
    while (left > 0) {
        for (i = 0; i < 2; ++i) {
            if (!children[i].exited &&
                (waitpid(children[i].pid, &status, WNOHANG) ==
                 children[i].pid)) {
                children[i].exited = true;
                children[i].status = status;
                --left;
            }
            if (log_changed(children[i].log_path, &logs[i])) {
                last_progress = mono_now();
            }
        }

        if ((left > 0) && (mono_now() > last_progress + spec.timeout_sec)) {
            ADD_FAILURE() << spec.scenario << ": no progress for "
                          << spec.timeout_sec << " s (no message between the "
                          << "children, no output), killing the children";
            for (i = 0; i < 2; ++i) {
                if (!children[i].exited) {
                    printf("[child %u] hung; its threads:\n%s", i,
                           backtraces(children[i].pid).c_str());
                    kill(children[i].pid, SIGKILL);
                    waitpid(children[i].pid, &children[i].status, 0);
                    children[i].exited = true;
                    --left;
                    printf("[child %u] killed at the deadline\n", i);
                }
            }
        }
        usleep(10000);
    }
}

static std::string status_string(int status)
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

void mp_test::judge(const run_spec &spec, unsigned index, child &c)
{
    std::ifstream in(c.log_path.c_str());
    std::ostringstream os;
    std::string line;

    os << in.rdbuf();
    c.log = os.str();
    m_logs[index] = c.log;

    if ((int)index == spec.victim) {
        bool killed = WIFSIGNALED(c.status) && (WTERMSIG(c.status) == SIGKILL);
        EXPECT_TRUE(killed) << "child " << index << " (the victim): "
                            << status_string(c.status);
    } else {
        bool passed = WIFEXITED(c.status) && (WEXITSTATUS(c.status) == 0);
        EXPECT_TRUE(passed) << "child " << index << ": "
                            << status_string(c.status)
                            << (WIFEXITED(c.status) ?
                                " (its FAIL lines are below)" : "");
    }

    std::istringstream lines(c.log);
    while (std::getline(lines, line)) {
        if (line.compare(0, 7, "RESULT ") == 0) {
            size_t eq = line.find('=');
            m_results[index][line.substr(7, eq - 7)] = line.substr(eq + 1);
            printf("[child %u] %s\n", index, line.c_str() + 7);
            RecordProperty("child" + std::to_string(index) + "_" +
                                   line.substr(7, eq - 7),
                           line.substr(eq + 1));
        } else if (!spec.allow_errors &&
                   (line.find("UCX  ERROR") != std::string::npos)) {
            ADD_FAILURE() << "child " << index << " logged an error: " << line;
        }
    }
}

void mp_test::run(const run_spec &spec)
{
    child children[2];
    int sv[2];
    unsigned i;

    m_results[0].clear();
    m_results[1].clear();
    ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
            << strerror(errno);

    for (i = 0; i < 2; ++i) {
        spawn(spec, i, sv[i], children[i]);
        if (HasFatalFailure()) {
            break;
        }
    }
    close(sv[0]);
    close(sv[1]);
    if (i < 2) {
        if (i == 1) {
            kill(children[0].pid, SIGKILL);
            waitpid(children[0].pid, NULL, 0);
        }
        return;
    }

    wait_children(spec, children);
    for (i = 0; i < 2; ++i) {
        judge(spec, i, children[i]);
    }

    if (HasFailure() || (getenv("GAUDI_IPC_MP_VERBOSE") != NULL)) {
        for (i = 0; i < 2; ++i) {
            printf("---- child %u (pid %d, %s) ----\n%s", i,
                   (int)children[i].pid,
                   status_string(children[i].status).c_str(),
                   children[i].log.c_str());
        }
        printf("---- end of children's output ----\n");
    }
}

} /* namespace gipc */
