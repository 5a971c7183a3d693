/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "gt_emu.h"

extern "C" {
#include <uct/gaudi/drv/gaudi_buf.h>
}

#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <sstream>

extern char **environ;


namespace gaudi_test {

/* ---- environment --------------------------------------------------------- */

env_changes emu_node_env(const std::string &state_dir, unsigned num_devices,
                         int device)
{
    return {"UCX_GAUDI_EMU_DEVICES=" + std::to_string(num_devices),
            "UCX_GAUDI_EMU_STATE_DIR=" + state_dir,
            (device >= 0) ? "UCX_GAUDI_DEVICE=" + std::to_string(device) :
                            "UCX_GAUDI_DEVICE"};
}

/* NAME of "NAME=value" or "NAME" */
static std::string env_name(const std::string &change)
{
    return change.substr(0, change.find('='));
}

void apply_env(const env_changes &changes)
{
    size_t eq;

    for (const std::string &c : changes) {
        eq = c.find('=');
        if (eq == std::string::npos) {
            unsetenv(c.c_str());
        } else {
            setenv(c.substr(0, eq).c_str(), c.c_str() + eq + 1, 1);
        }
    }
}

std::vector<std::string> environ_with(const env_changes &changes)
{
    std::set<std::string> changed;
    std::vector<std::string> env;
    char **e;

    for (const std::string &c : changes) {
        changed.insert(env_name(c));
    }
    for (e = environ; *e != NULL; ++e) {
        if (changed.find(env_name(*e)) == changed.end()) {
            env.push_back(*e);
        }
    }
    for (const std::string &c : changes) {
        if (c.find('=') != std::string::npos) {
            env.push_back(c);
        }
    }
    return env;
}


/* ---- accounting ---------------------------------------------------------- */

gaudi_emu_get_stats_func_t find_emu_stats(std::string *err)
{
    char path[PATH_MAX], dir[PATH_MAX];
    gaudi_emu_get_stats_func_t fn;
    std::string why;
    Dl_info dl_info;
    void *handle;

    fn = (gaudi_emu_get_stats_func_t)dlsym(RTLD_DEFAULT,
                                           GAUDI_EMU_STATS_SYMBOL);
    if (fn != NULL) {
        return fn;
    }

    /* the driver library loads the emulator RTLD_LOCAL, next to
     * libuct_gaudi */
    if (!dladdr((void*)uct_gaudi_buf_alloc, &dl_info) ||
        (dl_info.dli_fname == NULL)) {
        why = "libuct_gaudi not found (dladdr)";
    } else {
        snprintf(dir, sizeof(dir), "%s", dl_info.dli_fname);
        snprintf(path, sizeof(path), "%s/libgaudi_emu.so.0", dirname(dir));
        handle = dlopen(path, RTLD_NOLOAD | RTLD_NOW);
        if (handle == NULL) {
            handle = dlopen("libgaudi_emu.so.0", RTLD_NOLOAD | RTLD_NOW);
        }
        if (handle == NULL) {
            why = std::string("the emulator is not loaded: ") + path + ": " +
                  dlerror();
        } else {
            fn = (gaudi_emu_get_stats_func_t)dlsym(handle,
                                                   GAUDI_EMU_STATS_SYMBOL);
            dlclose(handle);  /* drops our NOLOAD reference only */
            why = std::string(GAUDI_EMU_STATS_SYMBOL) + " not found in " +
                  path + " (emulator without accounting?)";
        }
    }

    if ((fn == NULL) && (err != NULL)) {
        *err = why;
    }
    return fn;
}

std::string stats_string(const gaudi_emu_stats_t &s)
{
    std::ostringstream os;

    os << "contexts=" << s.contexts << " dram_maps=" << s.dram_maps
       << " host_maps=" << s.host_maps << " import_maps=" << s.import_maps
       << " cb_maps=" << s.cb_maps << " exports=" << s.exports
       << " pinned_bytes=" << s.pinned_bytes;
    return os.str();
}

bool stats_equal(const gaudi_emu_stats_t &a, const gaudi_emu_stats_t &b)
{
    return (a.contexts == b.contexts) && (a.dram_maps == b.dram_maps) &&
           (a.host_maps == b.host_maps) && (a.import_maps == b.import_maps) &&
           (a.cb_maps == b.cb_maps) && (a.exports == b.exports) &&
           (a.pinned_bytes == b.pinned_bytes);
}

std::vector<std::string> list_fds(const char *state_dir)
{
    std::string hbm = std::string(" -> ") +
                      ((state_dir != NULL) ? state_dir : "") + "/hbm";
    char path[PATH_MAX], target[PATH_MAX];
    std::vector<std::string> fds;
    struct dirent *entry;
    DIR *dir;
    ssize_t n;

    dir = opendir("/proc/self/fd");
    if (dir == NULL) {
        /* an empty list would make every leak check compare nothing with
         * nothing and pass */
        fprintf(stderr, "list_fds: /proc/self/fd: %s\n", strerror(errno));
        abort();
    }
    while ((entry = readdir(dir)) != NULL) {
        if ((entry->d_name[0] == '.') || (atoi(entry->d_name) == dirfd(dir))) {
            continue;
        }
        snprintf(path, sizeof(path), "/proc/self/fd/%s", entry->d_name);
        n = readlink(path, target, sizeof(target) - 1);
        target[std::max<ssize_t>(n, 0)] = '\0';
        std::string fd = std::string(entry->d_name) + " -> " + target;
        if ((state_dir == NULL) || (fd.find(hbm) == std::string::npos)) {
            fds.push_back(fd);
        }
    }
    closedir(dir);
    std::sort(fds.begin(), fds.end());
    return fds;
}

std::string fd_diff(const std::vector<std::string> &a,
                    const std::vector<std::string> &b)
{
    std::set<std::string> bs(b.begin(), b.end());
    std::string out;

    for (const std::string &fd : a) {
        if (bs.find(fd) == bs.end()) {
            out += " [" + fd + "]";
        }
    }
    return out.empty() ? " none" : out;
}

bool take_snapshot(gaudi_emu_get_stats_func_t stats_fn, const char *state_dir,
                   emu_snapshot *snap)
{
    bool ok;

    memset(&snap->emu, 0, sizeof(snap->emu));
    ok        = (stats_fn != NULL) && (stats_fn(&snap->emu) == 0);
    snap->fds = list_fds(state_dir);
    return ok;
}

} /* namespace gaudi_test */
