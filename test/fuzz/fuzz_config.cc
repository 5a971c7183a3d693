/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * Target "config": every UCX_GAUDI_* knob, found at run time in UCS's list
 * of configuration tables (the driver library's "GAUDI_" table, the gaudi_cpy
 * and gaudi_ipc MD tables and the gaudi_copy and gaudi_ipc iface tables,
 * with what they embed from UCX's own tables), so a knob added later is
 * fuzzed without a change here.
 *
 * Two depths, by iteration:
 *  - the parser, in the worker: the value set through
 *    ucs_config_parser_set_value() on options filled with the defaults, or
 *    (one in 8) through the environment and ucs_config_parser_fill_opts(),
 *    as UCX reads it. Accepted or rejected with an error status.
 *  - the consumers, one in 64 iterations, in a forked process with the
 *    knob in its environment: the driver library's initialization (device
 *    discovery, the emulator with its faults, the device assignment), both
 *    MDs, both ifaces, a DMA through the driver library and a put_short through
 *    gaudi_copy. Any error status is fine; a crash or a process that does
 *    not finish within 20 s is a failure with the knob and the value.
 *
 * Values: the knob's default, the corpus (test/fuzz/corpus/config/
 * values.txt: "KNOB=value" lines and bare values), the names of an enum
 * knob, mutated with a dictionary of units, keywords, numbers at the limits
 * of their types and format directives. UCX_GAUDI_EMU_STATE_DIR and
 * UCX_GAUDI_IPC_DIR are kept inside the worker's sandbox: the emulator and
 * gaudi_ipc create what they name.
 */

#include "fuzz_common.h"

extern "C" {
#include <uct/api/uct.h>
#include <uct/gaudi/drv/gaudi_buf.h>
#include <uct/gaudi/gaudi_ucx_compat.h>
#include <ucs/async/async.h>
#include <ucs/config/parser.h>
#include <ucs/datastruct/list.h>
}

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>


using namespace gaudi_fuzz;

namespace {

const char *const TARGET = "config";

/* one consumer run in this many iterations */
const uint64_t CONSUMER_EVERY = 64;

/* a consumer that has not finished by then is hung */
const double CONSUMER_TIMEOUT = 20.0;


struct knob {
    std::string                    env;    /* UCX_GAUDI_COPY_BW */
    std::string                    name;   /* BW: set_value's name */
    ucs_config_global_list_entry_t *entry; /* the table it is read with */
    const ucs_config_field_t       *field;
    bool                           own;    /* ours, not embedded from UCX */
};


void collect(ucs_config_global_list_entry_t *entry, ucs_config_field_t *table,
             const std::string &prefix, bool own, std::vector<knob> &knobs)
{
    ucs_config_field_t *field;

    for (field = table; field->name != NULL; ++field) {
        if (field->parser.read == ucs_config_sscanf_table) {
            collect(entry, (ucs_config_field_t*)field->parser.arg,
                    prefix + field->name, false, knobs);
        } else if ((field->dfl_value != NULL) &&
                   (field->offset != UCS_CONFIG_DEPRECATED_FIELD_OFFSET)) {
            knob k;
            k.name  = prefix + field->name;
            k.env   = std::string("UCX_") + entry->prefix + k.name;
            k.entry = entry;
            k.field = field;
            k.own   = own;
            knobs.push_back(k);
        }
    }
}

/* Every UCX_GAUDI_* knob, in a stable order */
std::vector<knob> gaudi_knobs()
{
    ucs_config_global_list_entry_t *entry;
    std::vector<knob> knobs;

    ucs_list_for_each(entry, &ucs_config_global_list, list) {
        if ((entry->table != NULL) && (entry->prefix != NULL) &&
            !strncmp(entry->prefix, "GAUDI", 5)) {
            collect(entry, entry->table, "", true, knobs);
        }
    }
    std::sort(knobs.begin(), knobs.end(), [](const knob &a, const knob &b) {
        return (a.env != b.env) ? (a.env < b.env) :
               (strcmp(a.entry->name, b.entry->name) < 0);
    });
    return knobs;
}

const std::vector<std::string> &dictionary()
{
    static const std::vector<std::string> dict = {
        "auto", "inf", "y", "n", "yes", "no", "try", "on", "off", "0", "1",
        "-1", "-0", "64", "4294967295", "4294967296", "18446744073709551615",
        "18446744073709551616", "99999999999999999999999", "1e308", "1e-308",
        "nan", "-inf", "0x10", "0x", "010", "+5", "1.5", ".5", "5.", "k", "m",
        "g", "t", "K", "M", "G", "T", "b", "B", "kb", "MB", "s", "ms", "us",
        "ns", "m", "h", "Bps", "MBs", "Gbps", "GB/s", "b/s", "ps", "%s", "%n",
        "%x%x%x%x", "%999999999d", ",", ":", ";", "=", " ", "\t", "\\",
        "module:", "module:3", "module:-1", "0000:33:00.0", "33:00.0",
        "ffff:ff:1f.7", "gaudi0", "gaudi1", "gaudi2", "gaudi3", "misc",
        "trans", "drm", "thread", "inline", "fail:", "fail:open:1:EAGAIN",
        "fail:any:1+:EIO", "cs_timeout:1", "reset:1+", "cs_abort:1",
        "ioctl:memory:3:ENOMEM", "fail:cs:5+:4096", "any", "+", "ENOMEM",
        "bt", "none", "\xc3\xa9", "\xff", "^", "!", "*", "mm", "md", "heap"
    };
    return dict;
}

/* A value for @a k: from its default, the corpus or its enum names,
 * mutated most of the time */
std::string make_value(rng &r, const knob &k,
                       const std::vector<std::string> &corpus)
{
    std::vector<std::string> seeds = {k.field->dfl_value};
    const char *const *names;
    std::string value;

    for (const std::string &line : corpus) {
        size_t eq = line.find('=');
        if ((eq == std::string::npos) || (line.find(' ') < eq)) {
            seeds.push_back(line);
        } else if (("UCX_" + line.substr(0, eq)) == k.env) {
            seeds.push_back(line.substr(eq + 1));
            seeds.push_back(line.substr(eq + 1));   /* its own count twice */
        }
    }
    if (k.field->parser.read == ucs_config_sscanf_enum) {
        for (names = (const char* const*)k.field->parser.arg; *names != NULL;
             ++names) {
            seeds.push_back(*names);
        }
    }

    value = r.pick(seeds);
    switch (r.below(8)) {
    case 0:
        return value;
    case 1:
        return std::string(1 + r.below(5000), "9aZ,:%"[r.below(6)]);
    default:
        return mutate_text(r, value, 512, dictionary(), seeds);
    }
}

/* The emulator creates the directory a value of EMU_STATE_DIR names:
 * keep it inside @a sandbox */
std::string confine(const std::string &value, const std::string &sandbox)
{
    std::string v = value;
    size_t pos;

    while ((pos = v.find("..")) != std::string::npos) {
        v.replace(pos, 2, "_");
    }
    return sandbox + "/" + v;
}


/* ---- the parser ---------------------------------------------------------- */

void check_status(worker &w, const char *how, const knob &k,
                  const std::string &value, ucs_status_t status)
{
    if ((status != UCS_OK) && (status != UCS_ERR_INVALID_PARAM) &&
        (status != UCS_ERR_NO_ELEM)) {
        w.fail("%s %s='%s': unexpected status %s", how, k.env.c_str(),
               value.c_str(), ucs_status_string(status));
    }
    w.count((status == UCS_OK) ? "parse_ok" : "parse_rejected");
}

/* The value set on options freshly filled with the defaults: every
 * iteration stands alone (a replay of one iteration is exact), and UCS's
 * set_value, which prints the old value to restore it when the new one is
 * rejected, restores a default, which always parses again (a value it
 * accepted itself may not: docs/fuzzing.md, "Findings") */
void parse_set_value(worker &w, const knob &k, const std::string &value)
{
    std::vector<uint8_t> buf(k.entry->size, 0);
    ucs_status_t status;

    /* a prefix no variable of the environment has */
    status = uct_gaudi_config_fill(buf.data(), k.entry,
                                   "UCX_GAUDI_FUZZ_NONE_", 0);
    if (status != UCS_OK) {
        w.fail("defaults of table %s: %s", k.entry->name,
               ucs_status_string(status));
        return;
    }

    status = uct_gaudi_config_set_value(buf.data(), k.entry->table,
                                        k.name.c_str(), value.c_str());
    check_status(w, "set_value", k, value, status);
    ucs_config_parser_release_opts(buf.data(), k.entry->table);
}

void parse_env(worker &w, const knob &k, const std::string &value)
{
    std::vector<uint8_t> buf(k.entry->size, 0);
    ucs_status_t status;

    setenv(k.env.c_str(), value.c_str(), 1);
    status = uct_gaudi_config_fill(buf.data(), k.entry, "UCX_", 0);
    unsetenv(k.env.c_str());
    if (status == UCS_OK) {
        ucs_config_parser_release_opts(buf.data(), k.entry->table);
    }
    check_status(w, "environment", k, value, status);
}


/* ---- the consumers (in a forked process) --------------------------------- */

uct_component_h find_component(uct_component_h *comps, unsigned num,
                               const char *name, std::string *md_name)
{
    uct_md_resource_desc_t mds[4];
    uct_component_attr_t attr;
    unsigned i;

    for (i = 0; i < num; ++i) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                          UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if ((uct_component_query(comps[i], &attr) != UCS_OK) ||
            strcmp(attr.name, name) || (attr.md_resource_count == 0) ||
            (attr.md_resource_count > 4)) {
            continue;
        }
        attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        attr.md_resources = mds;
        if (uct_component_query(comps[i], &attr) == UCS_OK) {
            *md_name = mds[0].md_name;
            return comps[i];
        }
    }
    return NULL;
}

/* How far a consumer process got: its exit code (with REACHED_END) */
enum {
    REACHED_DMA   = 1,      /* the driver library moved data */
    REACHED_MD    = 2,      /* an MD opened */
    REACHED_IFACE = 4,      /* an iface opened */
    REACHED_PUT   = 8,      /* gaudi_copy took a put_short */
    REACHED_END   = 64
};

/* Open @a tl on @a md and move a few bytes with it if it is gaudi_copy */
unsigned exercise_iface(uct_md_h md, const char *tl, void *dev_buf)
{
    unsigned reached = 0;
    uct_tl_resource_desc_t *resources;
    ucs_async_context_t *async = NULL;
    uct_worker_h uworker       = NULL;
    uct_iface_config_t *config;
    uct_iface_params_t params;
    uct_iface_attr_t attr;
    uct_ep_params_t ep_params;
    uint8_t addr[64], dev_addr[64], host[64];
    unsigned i, num;
    uct_iface_h iface;
    uct_ep_h ep;

    if (uct_md_query_tl_resources(md, &resources, &num) != UCS_OK) {
        return 0;
    }
    for (i = 0; (i < num) && strcmp(resources[i].tl_name, tl); ++i) {
    }
    if ((i == num) ||
        (ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &async) !=
         UCS_OK) ||
        (uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &uworker) !=
         UCS_OK) ||
        (uct_md_iface_config_read(md, tl, NULL, NULL, &config) != UCS_OK)) {
        goto out;
    }

    memset(&params, 0, sizeof(params));
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = resources[i].tl_name;
    params.mode.device.dev_name = resources[i].dev_name;
    if (uct_iface_open(md, uworker, &params, config, &iface) != UCS_OK) {
        uct_config_release(config);
        goto out;
    }
    uct_config_release(config);
    reached |= REACHED_IFACE;

    if ((uct_iface_query(iface, &attr) == UCS_OK) && (dev_buf != NULL) &&
        !strcmp(tl, UCT_GAUDI_COPY_TL_NAME) &&
        (attr.iface_addr_len <= sizeof(addr)) &&
        (uct_iface_get_address(iface, (uct_iface_addr_t*)addr) == UCS_OK)) {
        memset(&ep_params, 0, sizeof(ep_params));
        ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                               UCT_EP_PARAM_FIELD_DEV_ADDR |
                               UCT_EP_PARAM_FIELD_IFACE_ADDR;
        ep_params.iface      = iface;
        ep_params.dev_addr   = (const uct_device_addr_t*)dev_addr;
        ep_params.iface_addr = (const uct_iface_addr_t*)addr;
        if (uct_ep_create(&ep_params, &ep) == UCS_OK) {
            memset(host, 0x5a, sizeof(host));
            if (uct_ep_put_short(ep, host, sizeof(host), (uintptr_t)dev_buf,
                                 0) == UCS_OK) {
                reached |= REACHED_PUT;
            }
            uct_ep_get_short(ep, host, sizeof(host), (uintptr_t)dev_buf, 0);
            uct_ep_flush(ep, 0, NULL);
            uct_ep_destroy(ep);
        }
    }
    uct_iface_close(iface);

out:
    if (uworker != NULL) {
        uct_worker_destroy(uworker);
    }
    if (async != NULL) {
        ucs_async_context_destroy(async);
    }
    uct_release_tl_resource_list(resources);
    return reached;
}

/* Everything the knobs reach; statuses do not matter, only that it ends.
 * Returns how far it got (REACHED_*). */
unsigned exercise_consumers()
{
    unsigned reached = 0;
    static const struct {
        const char *component;
        const char *tl;
    } mds[] = {{"gaudi_cpy", UCT_GAUDI_COPY_TL_NAME},
               {"gaudi_ipc", "gaudi_ipc"}};
    uct_component_h *comps;
    uct_md_config_t *config;
    uct_component_h comp;
    std::string md_name;
    uint8_t host[4096];
    void *dev = NULL;
    unsigned num, i;
    uct_md_h md;

    if (uct_query_components(&comps, &num) != UCS_OK) {
        return 0;
    }

    if (uct_gaudi_buf_is_supported() &&
        (uct_gaudi_buf_alloc(sizeof(host), &dev) == UCS_OK)) {
        memset(host, 0xa5, sizeof(host));
        uct_gaudi_buf_copy(dev, 1, host, 0, sizeof(host));
        uct_gaudi_buf_memset(dev, 0, 64);
        if (uct_gaudi_buf_copy(host, 0, dev, 1, sizeof(host)) == UCS_OK) {
            reached |= REACHED_DMA;
        }
    }

    for (i = 0; i < 2; ++i) {
        comp = find_component(comps, num, mds[i].component, &md_name);
        if ((comp == NULL) ||
            (uct_md_config_read(comp, NULL, NULL, &config) != UCS_OK)) {
            continue;
        }
        if (uct_md_open(comp, md_name.c_str(), config, &md) == UCS_OK) {
            reached |= REACHED_MD | exercise_iface(md, mds[i].tl, dev);
            uct_md_close(md);
        }
        uct_config_release(config);
    }

    if (dev != NULL) {
        uct_gaudi_buf_free(dev);
    }
    uct_release_component_list(comps);
    return reached;
}

void run_consumer(worker &w, uint64_t iteration, const knob &k,
                  const std::string &value, const std::string &sandbox)
{
    double deadline = now() + CONSUMER_TIMEOUT;
    int status;
    pid_t pid;

    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        w.fail("fork: %s", strerror(errno));
        return;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (chdir(sandbox.c_str()) != 0) {
            _exit(125);
        }
        set_emu_env(sandbox + "/emu", 1, -1);
        setenv("UCX_GAUDI_IPC_DIR", (sandbox + "/ipc").c_str(), 1);
        /* an emulated latency or bandwidth of the knob may make a DMA as
         * slow as it says: bounded by the DMA timeout, unless that is the
         * knob */
        setenv("UCX_GAUDI_DMA_TIMEOUT", "0.5s", 1);
        /* and an emulated reset after release (up to 1 min) makes each
         * reopen wait for it, up to the reset wait (30 s by default: seed
         * 0xbd83008, RELEASE_RESET='1.m', waited past the 20 s deadline) */
        setenv("UCX_GAUDI_RESET_WAIT", "1s", 1);
        setenv(k.env.c_str(), value.c_str(), 1);
        _exit(REACHED_END | exercise_consumers());
    }

    while (waitpid(pid, &status, WNOHANG) != pid) {
        if (now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            w.fail("%s='%s': UCX with it did not finish in %.0f s (hang); "
                   "replay: %s", k.env.c_str(), value.c_str(),
                   CONSUMER_TIMEOUT, replay_command(iteration, 1).c_str());
            return;
        }
        w.alive();
        usleep(1000);
    }

    if (WIFSIGNALED(status)) {
        w.fail("%s='%s': UCX with it was killed by signal %d (%s); replay: "
               "%s", k.env.c_str(), value.c_str(), WTERMSIG(status),
               strsignal(WTERMSIG(status)),
               replay_command(iteration, 1).c_str());
    } else if (!(WEXITSTATUS(status) & REACHED_END)) {
        w.fail("%s='%s': UCX with it exited with %d; replay: %s",
               k.env.c_str(), value.c_str(), WEXITSTATUS(status),
               replay_command(iteration, 1).c_str());
    } else {
        w.count("consumer_runs");
        w.count("consumer_dma", !!(WEXITSTATUS(status) & REACHED_DMA));
        w.count("consumer_md", !!(WEXITSTATUS(status) & REACHED_MD));
        w.count("consumer_iface", !!(WEXITSTATUS(status) & REACHED_IFACE));
        w.count("consumer_put", !!(WEXITSTATUS(status) & REACHED_PUT));
    }
}

void config_loop(worker &w)
{
    std::vector<knob> knobs = gaudi_knobs(), own;
    std::vector<std::string> corpus = load_lines(TARGET, "values.txt");
    std::string sandbox = make_temp_dir("config");
    std::string value;
    uint64_t i;

    for (const knob &k : knobs) {
        if (k.own) {
            own.push_back(k);
        }
    }
    if (knobs.empty() || own.empty() || sandbox.empty()) {
        w.fail("no UCX_GAUDI_* knob found (%zu) or no sandbox", knobs.size());
        return;
    }

    quiet_ucx_log();
    w.summary("%zu knobs (%zu of gaudi's own tables), %zu corpus lines",
              knobs.size(), own.size(), corpus.size());
    for (i = w.first(); w.more(i); ++i) {
        rng r = iteration_rng(TARGET, i);
        bool consumer   = (i % CONSUMER_EVERY) == 0;
        /* the consumers spend their time on the knobs gaudi reads itself */
        const knob &k   = consumer ? own[(i / CONSUMER_EVERY) % own.size()] :
                                     knobs[i % knobs.size()];

        value = make_value(r, k, corpus);
        if ((k.env == "UCX_GAUDI_EMU_STATE_DIR") ||
            (k.env == "UCX_GAUDI_IPC_DIR")) {
            value = confine(value, sandbox);
        }
        w.begin(i, k.env + "=" + value);

        if (consumer) {
            run_consumer(w, i, k, value, sandbox);
        } else if (r.chance(1, 8)) {
            parse_env(w, k, value);
        } else {
            parse_set_value(w, k, value);
        }
    }

    remove_tree(sandbox);
}

} /* namespace */


TEST(gaudi_fuzz, config)
{
    run_target(TARGET, 0, CONSUMER_TIMEOUT + 10.0, config_loop);
}

/* The knobs the loop finds: a table that stops being registered (or is
 * renamed out of the GAUDI prefix) would silently leave them unfuzzed */
TEST(gaudi_fuzz_config, finds_the_knobs)
{
    std::vector<knob> knobs = gaudi_knobs();
    std::set<std::string> names;

    for (const knob &k : knobs) {
        names.insert(k.env);
    }
    for (const char *name : {"UCX_GAUDI_DEVICE", "UCX_GAUDI_DMA_TIMEOUT",
                             "UCX_GAUDI_EMU_FAULTS", "UCX_GAUDI_EMU_STATE_DIR",
                             "UCX_GAUDI_COPY_RCACHE", "UCX_GAUDI_COPY_BW",
                             "UCX_GAUDI_COPY_MAX_INFLIGHT",
                             "UCX_GAUDI_IPC_TIMEOUT", "UCX_GAUDI_IPC_CACHE",
                             "UCX_GAUDI_IPC_DIR",
                             "UCX_GAUDI_IPC_BOUNCE_SIZE"}) {
        EXPECT_TRUE(names.count(name)) << name << " not found";
    }
}
