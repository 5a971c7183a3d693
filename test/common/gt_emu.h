/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_TEST_GT_EMU_H_
#define GAUDI_TEST_GT_EMU_H_

/*
 * A process on an emulated node: the environment that puts it there, and
 * what the leak checks compare (the emulator's accounting and our fds).
 */

/* gaudi_abi.h (under gaudi_emu.h) is C11; g++ spells the static assertion
 * differently */
#ifndef _Static_assert
#  define _Static_assert static_assert
#endif

extern "C" {
#include <uct/gaudi/seam/gaudi_emu.h>
}

#include <string>
#include <vector>


namespace gaudi_test {

/* ---- environment --------------------------------------------------------- */

/*
 * Changes of the environment, one a string: "NAME=value" sets NAME,
 * "NAME" alone removes it.
 */
typedef std::vector<std::string> env_changes;

/* Those of a UCX process on an emulated node of @a num_devices devices in
 * @a state_dir, owning device @a device (-1: whichever is free) */
env_changes emu_node_env(const std::string &state_dir, unsigned num_devices,
                         int device);

/* Make @a changes in our own environment */
void apply_env(const env_changes &changes);

/* Our environment with @a changes made, for execve() */
std::vector<std::string> environ_with(const env_changes &changes);


/* ---- accounting ---------------------------------------------------------- */

/* The emulator's accounting function, in the copy of the emulator the
 * driver library loaded (RTLD_LOCAL, next to libuct_gaudi), or NULL with
 * the reason in *err (may be NULL) */
gaudi_emu_get_stats_func_t find_emu_stats(std::string *err = NULL);

std::string stats_string(const gaudi_emu_stats_t &stats);

/* The counters the leak checks compare (not the running totals) */
bool stats_equal(const gaudi_emu_stats_t &a, const gaudi_emu_stats_t &b);

/*
 * "n -> target" of this process's fds, sorted. With @a state_dir, the
 * emulator's mappings of HBM backing files there ("<state dir>/hbm<N>")
 * are left out: it opens one per device at the first import of its memory
 * and keeps it for the process (it models the PCIe BAR; real hardware has
 * no such fd).
 */
std::vector<std::string> list_fds(const char *state_dir);

/* Entries of @a a that are not in @a b (" [n -> target] ..."; " none") */
std::string fd_diff(const std::vector<std::string> &a,
                    const std::vector<std::string> &b);

/* What a leak check compares with its baseline */
struct emu_snapshot {
    gaudi_emu_stats_t        emu = {};
    std::vector<std::string> fds;   /* list_fds() */
};

/* @a stats_fn's counters and our fds (list_fds(@a state_dir)) now; false
 * if @a stats_fn is NULL or failed (then emu is all zeros) */
bool take_snapshot(gaudi_emu_get_stats_func_t stats_fn, const char *state_dir,
                   emu_snapshot *snap);

} /* namespace gaudi_test */

#endif
