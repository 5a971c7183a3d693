/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "fuzz_common.h"

#include "gt_log.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <sstream>

#ifndef GAUDI_FUZZ_CORPUS_DIR
#  define GAUDI_FUZZ_CORPUS_DIR "test/fuzz/corpus"
#endif


namespace gaudi_fuzz {

/* ---- settings ------------------------------------------------------------ */

/* "gaudifuz" in ASCII: any fixed value would do, this one is recognizable
 * in a report */
static const uint64_t DEFAULT_SEED = 0x67617564696675ull;

static uint64_t env_u64(const char *name, uint64_t def)
{
    const char *value = getenv(name);
    char *end;
    uint64_t v;

    if ((value == NULL) || (*value == '\0')) {
        return def;
    }

    errno = 0;
    v     = strtoull(value, &end, 0);
    if ((errno != 0) || (*end != '\0')) {
        fprintf(stderr, "gaudi_fuzz: %s=%s is not a number, using %llu\n",
                name, value, (unsigned long long)def);
        return def;
    }
    return v;
}

const settings &config()
{
    static settings s;
    static bool loaded = false;
    const char *value;

    if (!loaded) {
        value     = getenv("GAUDI_FUZZ_SECONDS");
        s.seconds = ((value != NULL) && (*value != '\0')) ?
                    strtod(value, NULL) : 10.0;
        if (!(s.seconds > 0)) {
            s.seconds = 10.0;
        }
        s.seed       = env_u64("GAUDI_FUZZ_SEED", DEFAULT_SEED);
        s.first      = env_u64("GAUDI_FUZZ_FIRST", 0);
        s.iterations = env_u64("GAUDI_FUZZ_ITERATIONS", 0);
        s.verbose    = env_u64("GAUDI_FUZZ_VERBOSE", 0) != 0;
        value        = getenv("GAUDI_FUZZ_CORPUS");
        s.corpus     = ((value != NULL) && (*value != '\0')) ?
                       value : GAUDI_FUZZ_CORPUS_DIR;
        loaded       = true;
    }
    return s;
}


/* ---- random numbers ------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

rng::rng(uint64_t seed)
{
    uint64_t x = seed;

    for (unsigned i = 0; i < 4; ++i) {
        m_s[i] = splitmix64(&x);
    }
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t rng::next()
{
    uint64_t result = rotl(m_s[1] * 5, 7) * 9;
    uint64_t t      = m_s[1] << 17;

    m_s[2] ^= m_s[0];
    m_s[3] ^= m_s[1];
    m_s[1] ^= m_s[2];
    m_s[0] ^= m_s[3];
    m_s[2] ^= t;
    m_s[3]  = rotl(m_s[3], 45);
    return result;
}

uint64_t rng::below(uint64_t n)
{
    return (n == 0) ? 0 : (uint64_t)(((unsigned __int128)next() * n) >> 64);
}

rng iteration_rng(const char *target, uint64_t iteration)
{
    uint64_t h = 0xcbf29ce484222325ull;     /* FNV-1a of the target name */
    const char *p;

    for (p = target; *p != '\0'; ++p) {
        h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
    }
    return rng(config().seed ^ h ^ (iteration * 0xd1342543de82ef95ull));
}

uint64_t interesting(rng &r, unsigned width)
{
    static const uint64_t values[] = {
        0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 100, 127, 128, 255, 256,
        511, 512, 1000, 1023, 1024, 4095, 4096, 4097, 8192, 65535, 65536,
        0x1fffff, 0x200000, 0x200001, 0x7fffffff, 0x80000000, 0xffffffff,
        0x100000000ull, 0x100000001ull, 0x28000000ull /* 640 MiB */,
        0x7fffffffffffffffull, 0x8000000000000000ull,
        0xfffffffffffff000ull, 0xffffffffffffff00ull
    };
    uint64_t mask = (width >= 8) ? ~0ull : ((1ull << (8 * width)) - 1);
    uint64_t v;

    switch (r.below(6)) {
    case 0:
        v = ~0ull - r.below(16);                /* -1, -2, ... */
        break;
    case 1:
        v = 1ull << r.below(8 * width);         /* a power of two */
        v += r.below(3) - 1;                    /* and its neighbours */
        break;
    case 2:
        v = mask >> 1;                          /* signed max, min */
        v += r.below(3);
        break;
    default:
        v = values[r.below(sizeof(values) / sizeof(values[0]))];
        break;
    }
    return v & mask;
}


/* ---- corpus -------------------------------------------------------------- */

const bytes &hex_seed::field(const std::string &key) const
{
    static const bytes empty;
    std::map<std::string, bytes>::const_iterator it = fields.find(key);

    return (it == fields.end()) ? empty : it->second;
}

static std::vector<std::string> list_dir(const std::string &dir,
                                         const std::string &ext)
{
    std::vector<std::string> files;
    struct dirent *entry;
    DIR *d;

    d = opendir(dir.c_str());
    if (d == NULL) {
        return files;
    }
    while ((entry = readdir(d)) != NULL) {
        std::string name = entry->d_name;
        if ((name.size() > ext.size()) &&
            (name.compare(name.size() - ext.size(), ext.size(), ext) == 0)) {
            files.push_back(name);
        }
    }
    closedir(d);
    std::sort(files.begin(), files.end());  /* same order on every run */
    return files;
}

static std::string read_file(const std::string &path)
{
    std::ifstream in(path.c_str());
    std::ostringstream os;

    os << in.rdbuf();
    return os.str();
}

static int hex_value(char c)
{
    return ((c >= '0') && (c <= '9')) ? c - '0' :
           ((c >= 'a') && (c <= 'f')) ? c - 'a' + 10 :
           ((c >= 'A') && (c <= 'F')) ? c - 'A' + 10 : -1;
}

static hex_seed parse_hex_seed(const std::string &name,
                               const std::string &text)
{
    std::istringstream lines(text);
    std::string line, field;
    hex_seed seed;
    int high;
    size_t i;

    seed.name = name;
    while (std::getline(lines, line)) {
        line = line.substr(0, line.find('#'));
        i    = line.find(':');
        if (i != std::string::npos) {
            field = line.substr(0, i);
            field.erase(std::remove(field.begin(), field.end(), ' '),
                        field.end());
            line = line.substr(i + 1);
        }

        high = -1;
        for (char c : line) {
            int v = hex_value(c);
            if (v < 0) {
                continue;   /* spaces, tabs */
            } else if (high < 0) {
                high = v;
            } else {
                seed.fields[field].push_back((uint8_t)((high << 4) | v));
                high = -1;
            }
        }
    }
    return seed;
}

std::vector<hex_seed> load_hex_corpus(const std::string &target)
{
    std::string dir = config().corpus + "/" + target;
    std::vector<hex_seed> seeds;

    for (const std::string &file : list_dir(dir, ".hex")) {
        seeds.push_back(parse_hex_seed(file, read_file(dir + "/" + file)));
    }
    return seeds;
}

std::vector<std::string> load_text_corpus(const std::string &target,
                                          const std::string &ext)
{
    std::string dir = config().corpus + "/" + target;
    std::vector<std::string> texts;

    for (const std::string &file : list_dir(dir, ext)) {
        texts.push_back(read_file(dir + "/" + file));
    }
    return texts;
}

std::vector<std::string> load_lines(const std::string &target,
                                    const std::string &file)
{
    std::istringstream lines(read_file(config().corpus + "/" + target + "/" +
                                       file));
    std::vector<std::string> out;
    std::string line;

    while (std::getline(lines, line)) {
        if (!line.empty() && (line[0] != '#')) {
            out.push_back(line);
        }
    }
    return out;
}

std::string hex(const void *data, size_t length)
{
    static const char digits[] = "0123456789abcdef";
    const uint8_t *p = (const uint8_t*)data;
    std::string out;
    size_t i;

    for (i = 0; i < length; ++i) {
        if ((i > 0) && ((i % 32) == 0)) {
            out += '\n';
        } else if ((i > 0) && ((i % 8) == 0)) {
            out += ' ';
        }
        out += digits[p[i] >> 4];
        out += digits[p[i] & 0xf];
    }
    return out;
}


/* ---- mutators ------------------------------------------------------------ */

static void mutate_once(rng &r, bytes &buf, size_t max_len,
                        const std::vector<bytes> &others)
{
    static const unsigned widths[] = {1, 2, 4, 8};
    size_t pos, len, n, i;
    unsigned width;
    uint64_t value;

    switch (r.below(11)) {
    case 0: /* flip 1..4 bits */
        for (n = 1 + r.below(4); (n > 0) && !buf.empty(); --n) {
            buf[r.below(buf.size())] ^= (uint8_t)(1u << r.below(8));
        }
        break;
    case 1: /* a random byte */
        if (!buf.empty()) {
            buf[r.below(buf.size())] = (uint8_t)r.next();
        }
        break;
    case 2: /* an interesting word, aligned to its width most of the time */
    case 3:
        width = widths[r.below(4)];
        if (buf.size() < width) {
            break;
        }
        pos = r.below(buf.size() - width + 1);
        if (r.chance(3, 4)) {
            pos -= pos % width;
        }
        value = interesting(r, width);
        memcpy(&buf[pos], &value, width);
        break;
    case 4: /* add or subtract a little */
        width = widths[r.below(4)];
        if (buf.size() < width) {
            break;
        }
        pos = r.below(buf.size() / width) * width;
        memcpy(&value, &buf[pos], width);
        value += (r.chance(1, 2) ? 1 : -1) * (int64_t)(1 + r.below(16));
        memcpy(&buf[pos], &value, width);
        break;
    case 5: /* truncate */
        buf.resize(r.below(buf.size() + 1));
        break;
    case 6: /* extend with random, zero or 0xff bytes */
        n = 1 + r.below(16);
        value = r.below(3);
        for (i = 0; i < n; ++i) {
            buf.push_back((value == 0) ? 0 : (value == 1) ? 0xff :
                          (uint8_t)r.next());
        }
        break;
    case 7: /* delete a block */
        if (!buf.empty()) {
            pos = r.below(buf.size());
            len = 1 + r.below(std::min<size_t>(16, buf.size() - pos));
            buf.erase(buf.begin() + pos, buf.begin() + pos + len);
        }
        break;
    case 8: /* insert random bytes */
        pos = r.below(buf.size() + 1);
        n   = 1 + r.below(8);
        for (i = 0; i < n; ++i) {
            buf.insert(buf.begin() + pos, (uint8_t)r.next());
        }
        break;
    case 9: /* copy a block over another place */
        if (buf.size() >= 2) {
            len = 1 + r.below(std::min<size_t>(16, buf.size() / 2));
            pos = r.below(buf.size() - len + 1);
            i   = r.below(buf.size() - len + 1);
            memmove(&buf[i], &buf[pos], len);
        }
        break;
    default: /* splice with another input */
        if (!others.empty()) {
            const bytes &other = others[r.below(others.size())];
            pos = r.below(std::min(buf.size(), other.size()) + 1);
            buf.resize(pos);
            buf.insert(buf.end(), other.begin() + pos, other.end());
        }
        break;
    }

    if (buf.size() > max_len) {
        buf.resize(max_len);
    }
}

void mutate_bytes(rng &r, bytes &buf, size_t max_len,
                  const std::vector<bytes> &others)
{
    unsigned n = 1 + (unsigned)r.below(4);

    while (n-- > 0) {
        mutate_once(r, buf, max_len, others);
    }
}

std::string mutate_text(rng &r, const std::string &text, size_t max_len,
                        const std::vector<std::string> &dict,
                        const std::vector<std::string> &others)
{
    std::string s = text;
    unsigned n    = 1 + (unsigned)r.below(4);
    size_t pos, len;

    while (n-- > 0) {
        pos = r.below(s.size() + 1);
        switch (r.below(8)) {
        case 0: /* a token inserted */
        case 1:
            if (!dict.empty()) {
                s.insert(pos, r.pick(dict));
            }
            break;
        case 2: /* a range replaced by a token */
            if (!dict.empty() && (pos < s.size())) {
                len = 1 + r.below(std::min<size_t>(8, s.size() - pos));
                s.replace(pos, len, r.pick(dict));
            }
            break;
        case 3: /* a range deleted */
            if (pos < s.size()) {
                s.erase(pos, 1 + r.below(std::min<size_t>(8, s.size() - pos)));
            }
            break;
        case 4: /* a range duplicated */
            if (pos < s.size()) {
                len = 1 + r.below(std::min<size_t>(32, s.size() - pos));
                s.insert(pos, s.substr(pos, len));
            }
            break;
        case 5: /* splice with another seed */
            if (!others.empty()) {
                const std::string &o = r.pick(others);
                s = s.substr(0, pos) +
                    o.substr(std::min(o.size(), (size_t)r.below(o.size() + 1)));
            }
            break;
        default: { /* byte-level */
            bytes b(s.begin(), s.end());
            mutate_once(r, b, max_len, std::vector<bytes>());
            s.assign(b.begin(), b.end());
            break;
        }
        }
    }

    /* a C string stops at the first NUL: keep what the parser would see */
    s = s.substr(0, std::min(max_len, strlen(s.c_str())));
    return s;
}


/* ---- guarded buffers ----------------------------------------------------- */

guarded_buffer::guarded_buffer(size_t max)
{
    size_t page = sysconf(_SC_PAGESIZE);

    m_size = (max + page - 1) / page * page;
    m_base = (uint8_t*)mmap(NULL, m_size + page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m_base == MAP_FAILED) {
        abort();
    }
    mprotect(m_base + m_size, page, PROT_NONE);
}

guarded_buffer::~guarded_buffer()
{
    munmap(m_base, m_size + sysconf(_SC_PAGESIZE));
}

void *guarded_buffer::place(const void *data, size_t length)
{
    uint8_t *p;

    length = std::min(length, m_size);
    p      = m_base + m_size - length;
    if (length > 0) {
        memcpy(p, data, length);
    }
    return p;
}

const char *guarded_buffer::place_string(const std::string &text)
{
    return (const char*)place(text.c_str(), text.size() + 1);
}


/* ---- workers and their supervisor ---------------------------------------- */

enum {
    SHARED_MAX_FAILURES = 8,
    SHARED_FAILURE_LEN  = 1536,
    SHARED_MAX_INPUT    = 65536,
    SHARED_MAX_COUNTERS = 24
};

/* Shared between a worker and the supervisor (MAP_SHARED, made before the
 * fork): what the worker is doing, so that its death can be explained */
struct shared_state {
    double            deadline;       /* CLOCK_MONOTONIC seconds */
    bool              timed;          /* stop at the deadline */
    uint64_t          first;          /* iterations of this worker */
    uint64_t          end;
    volatile uint64_t iteration;      /* the one running */
    volatile uint64_t completed;      /* begun in this worker */
    volatile double   progress;       /* time of the last sign of life */
    volatile uint32_t finished;       /* the loop returned */
    volatile uint32_t num_failures;
    char              failures[SHARED_MAX_FAILURES][SHARED_FAILURE_LEN];
    uint64_t          failure_iteration[SHARED_MAX_FAILURES];
    volatile uint32_t input_len;
    uint8_t           input[SHARED_MAX_INPUT];
    char              summary[2048];
    struct {
        char     name[32];
        uint64_t value;
    }                 counters[SHARED_MAX_COUNTERS];
};

uint64_t worker::first() const
{
    return m_shared->first;
}

uint64_t worker::end() const
{
    return m_shared->end;
}

bool worker::more(uint64_t iteration) const
{
    return (iteration < m_shared->end) &&
           (!m_shared->timed || (now() < m_shared->deadline));
}

void worker::begin(uint64_t iteration, const void *input, size_t length)
{
    m_shared->iteration = iteration;
    ++m_shared->completed;
    record(input, length);
}

void worker::record(const void *input, size_t length)
{
    length              = std::min(length, (size_t)SHARED_MAX_INPUT);
    m_shared->input_len = 0;        /* never a torn input in a report */
    __sync_synchronize();
    if (length > 0) {   /* input may be NULL then: memcpy() needs non-NULL */
        memcpy(m_shared->input, input, length);
    }
    m_shared->input_len = length;
    m_shared->progress  = now();
    __sync_synchronize();
}

void worker::alive()
{
    m_shared->progress = now();
}

void worker::fail(const char *fmt, ...)
{
    char msg[SHARED_FAILURE_LEN - 128];
    uint32_t n = m_shared->num_failures;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    if (n < SHARED_MAX_FAILURES) {
        snprintf(m_shared->failures[n], SHARED_FAILURE_LEN,
                 "iteration %llu: %s", (unsigned long long)m_shared->iteration,
                 msg);
        m_shared->failure_iteration[n] = m_shared->iteration;
    }
    if (config().verbose || (n < SHARED_MAX_FAILURES)) {
        printf("[gaudi_fuzz] FAIL at iteration %llu: %s\n",
               (unsigned long long)m_shared->iteration, msg);
        fflush(stdout);
    }
    m_shared->num_failures = n + 1;
}

unsigned worker::failures() const
{
    return m_shared->num_failures;
}

void worker::summary(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(m_shared->summary, sizeof(m_shared->summary), fmt, ap);
    va_end(ap);
}

void worker::count(const char *name, uint64_t n)
{
    unsigned i;

    for (i = 0; i < SHARED_MAX_COUNTERS; ++i) {
        if (m_shared->counters[i].name[0] == '\0') {
            snprintf(m_shared->counters[i].name,
                     sizeof(m_shared->counters[i].name), "%s", name);
        }
        if (!strncmp(m_shared->counters[i].name, name,
                     sizeof(m_shared->counters[i].name) - 1)) {
            m_shared->counters[i].value += n;
            return;
        }
    }
}

static std::string current_test_name()
{
    const ::testing::TestInfo *info =
            ::testing::UnitTest::GetInstance()->current_test_info();

    return (info == NULL) ? "*" :
           std::string(info->test_suite_name()) + "." + info->name();
}

std::string replay_command(uint64_t first, uint64_t count)
{
    std::ostringstream os;

    os << "GAUDI_FUZZ_SEED=0x" << std::hex << config().seed << std::dec
       << " GAUDI_FUZZ_FIRST=" << first << " GAUDI_FUZZ_ITERATIONS=" << count
       << " " << gaudi_test::self_exe() << " --gtest_filter="
       << current_test_name();
    return os.str();
}

/* Keep the input of a crash or hang for the corpus (as a hex seed) */
static std::string save_input(const char *target, uint64_t iteration,
                              const shared_state *s)
{
    char path[PATH_MAX];
    FILE *f;

    snprintf(path, sizeof(path), "/tmp/gaudi-fuzz-%s-%llx-%llu.hex", target,
             (unsigned long long)config().seed,
             (unsigned long long)iteration);
    f = fopen(path, "w");
    if (f == NULL) {
        return "(not saved: " + std::string(strerror(errno)) + ")";
    }
    fprintf(f, "# %s, seed 0x%llx, iteration %llu\n%s\n", target,
            (unsigned long long)config().seed, (unsigned long long)iteration,
            hex(s->input, s->input_len).c_str());
    fclose(f);
    return path;
}

void run_target(const char *target, uint64_t batch, double hang_sec,
                const worker_fn_t &fn)
{
    const settings &cfg = config();
    uint64_t total = 0, next = cfg.first, end_all;
    std::map<std::string, uint64_t> counters;
    double start = now(), elapsed;
    std::string summary;
    unsigned batches = 0;
    shared_state *s;
    bool stop = false;
    int status;
    pid_t pid;

    end_all = (cfg.iterations != 0) ? cfg.first + cfg.iterations : UINT64_MAX;
    s       = (shared_state*)mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
                                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, (void*)s) << strerror(errno);

    while (!stop && (next < end_all) &&
           ((cfg.iterations != 0) || (now() < start + cfg.seconds))) {
        memset(s, 0, sizeof(*s));
        s->deadline = start + cfg.seconds;
        s->timed    = (cfg.iterations == 0);
        s->first    = next;
        s->end      = (batch == 0) ? end_all : std::min(end_all, next + batch);
        s->iteration = next;
        s->progress = now();

        pid = gaudi_test::fork_child([&]() {
            worker w(s);

            fn(w);
            s->finished = 1;
            fflush(NULL);
            return (s->num_failures == 0) ? 0 : 1;
        }, true);
        ASSERT_GE(pid, 0) << "fork: " << strerror(errno);

        ++batches;
        for (;;) {
            if (waitpid(pid, &status, WNOHANG) == pid) {
                break;
            }
            if (now() - s->progress > hang_sec) {
                gaudi_test::kill_child(pid, &status);
                ADD_FAILURE()
                        << target << ": HANG: no progress for " << hang_sec
                        << " s at iteration " << s->iteration << " (seed 0x"
                        << std::hex << cfg.seed << std::dec << ")\n  input: "
                        << save_input(target, s->iteration, s)
                        << "\n  replay: "
                        << replay_command(batch ? s->first : s->iteration,
                                          batch ? s->iteration - s->first + 1 :
                                                  1);
                stop = true;
                break;
            }
            usleep(5000);
        }

        total += s->completed;
        for (unsigned i = 0; i < SHARED_MAX_COUNTERS; ++i) {
            if (s->counters[i].name[0] != '\0') {
                counters[s->counters[i].name] += s->counters[i].value;
            }
        }
        if (s->summary[0] != '\0') {
            summary = s->summary;
        }

        for (unsigned i = 0; i < std::min<uint32_t>((uint32_t)s->num_failures,
                                                    SHARED_MAX_FAILURES); ++i) {
            uint64_t it = s->failure_iteration[i];

            ADD_FAILURE() << target << " (seed 0x" << std::hex << cfg.seed
                          << std::dec << "): " << s->failures[i]
                          << "\n  replay: "
                          << replay_command(batch ? s->first : it,
                                            batch ? it - s->first + 1 : 1);
        }
        if (s->num_failures > SHARED_MAX_FAILURES) {
            ADD_FAILURE() << target << ": " << (s->num_failures - SHARED_MAX_FAILURES)
                          << " more failures (GAUDI_FUZZ_VERBOSE=1 prints "
                          << "them all)";
        }

        if (!stop && (WIFSIGNALED(status) || !s->finished)) {
            ADD_FAILURE()
                    << target << ": CRASH: the worker was "
                    << gaudi_test::status_string(status) << " at iteration "
                    << s->iteration << " (seed 0x" << std::hex << cfg.seed
                    << std::dec << ")\n  input (" << s->input_len
                    << " bytes): " << save_input(target, s->iteration, s)
                    << "\n" << hex(s->input, std::min<uint32_t>((uint32_t)s->input_len,
                                                                256))
                    << "\n  replay: "
                    << replay_command(batch ? s->first : s->iteration,
                                      batch ? s->iteration - s->first + 1 : 1);
            stop = true;
        } else if (!stop && (WEXITSTATUS(status) != 0) &&
                   (s->num_failures == 0)) {
            ADD_FAILURE() << target << ": the worker exited with "
                          << gaudi_test::status_string(status)
                          << " without a reason";
            stop = true;
        }

        stop |= (s->num_failures != 0);
        next  = s->first + s->completed;
        if (next < s->end) {
            break;      /* the worker stopped early: time is up */
        }
        next = s->end;
    }

    elapsed = now() - start;
    std::ostringstream os;
    os << "[gaudi_fuzz] " << target << ": seed 0x" << std::hex << cfg.seed
       << std::dec << ", iterations " << cfg.first << ".." << (cfg.first +
                                                               total)
       << " (" << total << " in " << batches << " worker"
       << ((batches == 1) ? "" : "s") << ", " << std::fixed
       << std::setprecision(1) << elapsed << " s, "
       << (uint64_t)(total / std::max(elapsed, 1e-3)) << "/s)";
    for (const auto &c : counters) {
        os << " " << c.first << "=" << c.second;
    }
    if (!summary.empty()) {
        os << "; " << summary;
    }
    printf("%s\n", os.str().c_str());
    fflush(stdout);
    ::testing::Test::RecordProperty("iterations", std::to_string(total));
    ::testing::Test::RecordProperty("seed", std::to_string(cfg.seed));
    munmap(s, sizeof(*s));
}


/* ---- helpers of the workers ---------------------------------------------- */

/* quiet_ucx_log()'s capture: it stays for the rest of the process (a
 * worker, or a process a worker forked) */
static gaudi_test::log_capture *g_quiet = NULL;

void quiet_ucx_log()
{
    if (!config().verbose && (g_quiet == NULL)) {
        g_quiet = new gaudi_test::log_capture(
                gaudi_test::log_capture::KEEP_NONE, true);
    }
}

unsigned long swallowed_errors()
{
    return (g_quiet != NULL) ? g_quiet->errors() : 0;
}

std::string make_temp_dir(const char *what)
{
    return gaudi_test::make_temp_dir(std::string("gaudi-fuzz-") + what);
}

void set_emu_env(const std::string &state_dir, unsigned num_devices,
                 int device)
{
    gaudi_test::apply_env(gaudi_test::emu_node_env(state_dir, num_devices,
                                                   device));
    /* the smallest Gaudi2 node (two DRAM pages): a sparse file all the
     * same, but fewer pages to look through; and no launcher's rank that
     * would pick a device */
    gaudi_test::apply_env({"UCX_GAUDI_EMU_HBM_SIZE=1280m",
                           "OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK",
                           "MPI_LOCALRANKID", "SLURM_LOCALID",
                           "PMIX_LOCAL_RANK", "HLS_MODULE_ID",
                           "HABANA_VISIBLE_MODULES", "GAUDI_MAPPING_TABLE"});
}

} /* namespace gaudi_fuzz */
