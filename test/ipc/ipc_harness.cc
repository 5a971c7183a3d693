/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "ipc_harness.h"
#include "ipc_child.h"

#include "gt_emu.h"
#include "gt_register.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <sstream>


namespace gipc {

using gaudi_test::now;
using gaudi_test::status_string;

void mp_test::SetUp()
{
    m_tmp.reset(new gaudi_test::temp_dir("gaudi-ipc-mp", "GAUDI_IPC_MP_KEEP"));
    m_dir = m_tmp->path();
    ASSERT_FALSE(m_dir.empty()) << strerror(errno);
    /* others may pass through (not list): what keeps them out of the
     * children's rendezvous directory (m_dir/ipc) is its own mode */
    ASSERT_EQ(0, chmod(m_dir.c_str(), 0711)) << strerror(errno);
    ASSERT_EQ(0, mkdir((m_dir + "/emu").c_str(), 0700)) << strerror(errno);
}

void mp_test::TearDown()
{
    m_tmp.reset();
}

std::string mp_test::result(unsigned index, const std::string &key) const
{
    std::map<std::string, std::string>::const_iterator it;

    it = m_results[index].find(key);
    return (it == m_results[index].end()) ? "" : it->second;
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
    std::string exe = gaudi_test::self_exe();
    std::vector<std::string> args, env_set, env;
    std::vector<char*> argv, envp;
    const char *path;
    int log_fd;

    ASSERT_FALSE(exe.empty()) << strerror(errno);
    path = exec_path(exe.c_str());

    args = {exe, ROLE_ARG, spec.scenario, "--index", std::to_string(index),
            "--fd", std::to_string(CHANNEL_FD)};
    args.insert(args.end(), spec.params.begin(), spec.params.end());

    /* each child owns its own emulated device of the shared node; both
     * meet in a rendezvous directory of this test (created by the first) */
    env_set = gaudi_test::emu_node_env(m_dir + "/emu", 2, index);
    env_set.insert(env_set.end(), {"UCX_GAUDI_IPC_DIR=" + m_dir + "/ipc",
                                   "UCX_HANDLE_ERRORS=none"});
    env_set.insert(env_set.end(), spec.env.begin(), spec.env.end());
    env = gaudi_test::environ_with(env_set);

    argv = c_strings(args);
    envp = c_strings(env);

    c.log_path = m_dir + "/child" + std::to_string(index) + ".log";
    log_fd     = open(c.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC |
                      O_CLOEXEC, 0600);
    ASSERT_GE(log_fd, 0) << strerror(errno);

    c.pid = gaudi_test::fork_child([&]() {
        if ((dup2(chan_fd, CHANNEL_FD) < 0) || (dup2(log_fd, 1) < 0) ||
            (dup2(log_fd, 2) < 0)) {
            return 126;
        }
        execve(path, argv.data(), envp.data());
        dprintf(1, "execve(%s = %s): %s\n", path, exe.c_str(),
                strerror(errno));
        return 127;
    }, true);

    close(log_fd);
    ASSERT_GT(c.pid, 0) << "fork: " << strerror(errno);
    c.exited = false;
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
    double last_progress = now();
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
                last_progress = now();
            }
        }

        if ((left > 0) && (now() > last_progress + spec.timeout_sec)) {
            ADD_FAILURE() << spec.scenario << ": no progress for "
                          << spec.timeout_sec << " s (no message between the "
                          << "children, no output), killing the children";
            for (i = 0; i < 2; ++i) {
                if (!children[i].exited) {
                    printf("[child %u] hung; its threads:\n%s", i,
                           backtraces(children[i].pid).c_str());
                    gaudi_test::kill_child(children[i].pid,
                                           &children[i].status);
                    children[i].exited = true;
                    --left;
                    printf("[child %u] killed at the deadline\n", i);
                }
            }
        }
        usleep(10000);
    }
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
            gaudi_test::kill_child(children[0].pid);
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


/* The test of one row of a table */
class case_test : public mp_test {
public:
    case_test(const mp_case &c, const char *root_only) :
        m_case(c), m_root_only((c.spec.root_only != NULL) ? c.spec.root_only :
                                                            root_only)
    {
    }

    virtual void TestBody()
    {
        if ((m_root_only != NULL) && (geteuid() != 0)) {
            GTEST_SKIP() << m_root_only;
        }

        run(m_case.spec);
        if (m_case.check != NULL) {
            m_case.check(*this);
        }
    }

private:
    const mp_case &m_case;
    const char    *m_root_only;
};

void register_cases(const char *suite, const mp_case *cases, size_t count,
                    const char *file, const char *root_only)
{
    size_t i;

    for (i = 0; i < count; ++i) {
        const mp_case *c = &cases[i];

        gaudi_test::register_test(suite, c->name, file, 0,
                                  [c, root_only]() -> mp_test* {
                                      return new case_test(*c, root_only);
                                  });
    }
}

} /* namespace gipc */
