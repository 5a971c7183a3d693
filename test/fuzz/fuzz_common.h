/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_TEST_FUZZ_COMMON_H_
#define UCT_GAUDI_TEST_FUZZ_COMMON_H_

/*
 * The machinery of gaudi_fuzz (docs/fuzzing.md): settings from the
 * environment, a seeded random generator whose stream for iteration N of a
 * target depends only on (seed, target, N), the corpus under
 * test/fuzz/corpus/<target>/, byte and text mutators, and the supervisor
 * that runs a target's loop in forked worker processes with a watchdog, so
 * that a crash or a hang becomes a gtest failure naming the seed, the
 * iteration and the input (and the command that replays it) instead of
 * taking the test program down.
 *
 * No libFuzzer: it needs clang, which a fresh Debian root does not have;
 * coverage feedback is replaced by inputs derived from valid ones (live
 * keys, messages, handles) and by dictionaries of the formats' tokens.
 */

#include "gt_emu.h"
#include "gt_proc.h"

#include <gtest/gtest.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include <functional>
#include <map>
#include <string>
#include <vector>


namespace gaudi_fuzz {

typedef std::vector<uint8_t> bytes;


/* ---- settings ------------------------------------------------------------ */

struct settings {
    double      seconds;     /* GAUDI_FUZZ_SECONDS: per target (10) */
    uint64_t    seed;        /* GAUDI_FUZZ_SEED (fixed default) */
    uint64_t    first;       /* GAUDI_FUZZ_FIRST: first iteration (0) */
    uint64_t    iterations;  /* GAUDI_FUZZ_ITERATIONS: 0 = until time is up */
    bool        verbose;     /* GAUDI_FUZZ_VERBOSE: keep UCX's log */
    std::string corpus;      /* GAUDI_FUZZ_CORPUS, else the source tree's */
};

const settings &config();


/* ---- random numbers ------------------------------------------------------ */

/* xoshiro256**: fast, and the same stream on every machine */
class rng {
public:
    explicit rng(uint64_t seed);

    uint64_t next();
    /* uniform in [0, n); 0 if n is 0 */
    uint64_t below(uint64_t n);
    /* true with probability num/den */
    bool chance(unsigned num, unsigned den) { return below(den) < num; }
    template <typename T> const T &pick(const std::vector<T> &v)
    {
        return v[below(v.size())];
    }

private:
    uint64_t m_s[4];
};

/* The generator of iteration @a iteration of @a target under the seed */
rng iteration_rng(const char *target, uint64_t iteration);

/* A value a parser or a bounds check is likely to get wrong, for a field of
 * @a width bytes (1, 2, 4, 8): 0, 1, -1, the signed limits, powers of two
 * and their neighbours, page sizes */
uint64_t interesting(rng &r, unsigned width);


/* ---- corpus -------------------------------------------------------------- */

/*
 * A binary seed is a text file of hex bytes (test/fuzz/corpus/<target>/
 * *.hex): '#' starts a comment, whitespace is ignored, and a line
 * "name: <hex>" starts a named field (the ioctl seeds have "args" and
 * "payload"); bytes before any name go to the field "".
 */
struct hex_seed {
    std::string                 name;
    std::map<std::string, bytes> fields;

    const bytes &field(const std::string &key) const;
};

std::vector<hex_seed> load_hex_corpus(const std::string &target);

/* Text seeds: every file of <target>/ ending in @a ext, whole */
std::vector<std::string> load_text_corpus(const std::string &target,
                                          const std::string &ext);

/* Lines of <target>/@a file ('#' comments and blank lines skipped) */
std::vector<std::string> load_lines(const std::string &target,
                                    const std::string &file);

std::string hex(const void *data, size_t length);


/* ---- mutators ------------------------------------------------------------ */

/*
 * 1..4 stacked byte-level mutations of @a buf: bit flips, interesting
 * 8/16/32/64-bit words, small additions, byte insertion/deletion,
 * truncation, extension, block copies and a splice with one of @a others.
 * The result is at most @a max_len bytes.
 */
void mutate_bytes(rng &r, bytes &buf, size_t max_len,
                  const std::vector<bytes> &others);

/* Text mutations with a dictionary of the format's tokens */
std::string mutate_text(rng &r, const std::string &text, size_t max_len,
                        const std::vector<std::string> &dict,
                        const std::vector<std::string> &others);


/* ---- guarded buffers ----------------------------------------------------- */

/* Memory followed by a PROT_NONE page: an input placed at its end makes
 * any read past it fault, so a parser that over-reads crashes here */
class guarded_buffer {
public:
    explicit guarded_buffer(size_t max);
    ~guarded_buffer();

    /* @a data copied so that it ends right before the guard page */
    void *place(const void *data, size_t length);
    /* a NUL-terminated copy of @a text ending at the guard page */
    const char *place_string(const std::string &text);

private:
    uint8_t *m_base;
    size_t  m_size;   /* usable bytes before the guard */
};


/* ---- accounting ---------------------------------------------------------- */

/* (gaudi_test: test/common/gt_emu.h) */
using gaudi_test::fd_diff;
using gaudi_test::list_fds;
using gaudi_test::stats_equal;
using gaudi_test::stats_string;

/* The emulator's accounting function, or NULL */
typedef gaudi_emu_get_stats_func_t emu_stats_fn_t;
using gaudi_test::find_emu_stats;


/* ---- workers and their supervisor ---------------------------------------- */

struct shared_state;

/*
 * The worker side: a forked process that runs the loop of one batch of
 * iterations. It marks each iteration before running it (so that a crash
 * or a hang is reported with the iteration and its input) and records
 * failures of the target's own checks.
 */
class worker {
public:
    explicit worker(shared_state *shared) : m_shared(shared) {}

    /* iterations of this worker: [first(), end()) while time_left() */
    uint64_t first() const;
    uint64_t end() const;
    bool more(uint64_t iteration) const;

    /* Iteration @a iteration starts, on @a input (recorded for a report) */
    void begin(uint64_t iteration, const void *input, size_t length);
    void begin(uint64_t iteration, const std::string &input)
    {
        begin(iteration, input.data(), input.size());
    }
    /* The input of the current iteration, once it is known (a stateful
     * target builds it from its state after begin()) */
    void record(const void *input, size_t length);
    /* Still alive in a long step of the current iteration */
    void alive();

    /* A failed check of the current iteration; the worker goes on */
    void fail(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    unsigned failures() const;

    /* Facts for the summary line ("key=value ..."), and outcome counters
     * added up over the workers of a run (which outcomes the inputs reach
     * is the only coverage measure a loop without instrumentation has) */
    void summary(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    void count(const char *name, uint64_t n = 1);

private:
    shared_state *m_shared;
};

typedef std::function<void(worker &w)> worker_fn_t;

/*
 * Run @a target's loop: fork a worker for each batch of @a batch iterations
 * (0: one worker for the whole run), until GAUDI_FUZZ_SECONDS have passed
 * or GAUDI_FUZZ_ITERATIONS are done. A worker that crashes, exits with an
 * error, or makes no progress for @a hang_sec is a gtest failure with the
 * seed, the iteration, the input (also saved to a file) and the command
 * that replays it. Prints "seed, iterations, rate" and the summary.
 */
void run_target(const char *target, uint64_t batch, double hang_sec,
                const worker_fn_t &fn);


/* The command that replays iterations [first, first + count) of the
 * running test under the current seed */
std::string replay_command(uint64_t first, uint64_t count);


/* ---- helpers of the workers ---------------------------------------------- */

/* Seconds of CLOCK_MONOTONIC */
using gaudi_test::now;

/* UCX's log at FATAL only (the loops make errors on purpose), unless
 * GAUDI_FUZZ_VERBOSE; returns how many ERROR lines were swallowed */
void quiet_ucx_log();
unsigned long swallowed_errors();

/* A fresh directory /tmp/gaudi-fuzz-<what>.*, removed with its content by
 * remove_tree */
std::string make_temp_dir(const char *what);
using gaudi_test::remove_tree;

/* Environment of a UCX process on an emulated node of @a num_devices
 * devices in @a state_dir, owning device @a device (-1: any) */
void set_emu_env(const std::string &state_dir, unsigned num_devices,
                 int device);

} /* namespace gaudi_fuzz */

#endif
