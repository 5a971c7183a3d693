/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * Target "maptab": GAUDI_MAPPING_TABLE, the JSON the user (or SynapseAI's
 * launcher) puts in the environment, through uct_gaudi_maptab_parse() with
 * fake devices, as test/unit/drv/maptab.cc calls it. Inputs: the corpus
 * (test/fuzz/corpus/maptab/, .json files) mutated with JSON tokens, and tables
 * generated from the schema with values of every JSON type. The string,
 * the device array and the order array each end at a guard page, so a read
 * or a write past them crashes the worker.
 *
 * Checks: the answer is UCS_OK or UCS_ERR_INVALID_PARAM; UCS_OK comes
 * without an error message and with an order that is a permutation of the
 * devices; a rejection comes with exactly one error message (the contract
 * of gaudi_maptab.h) and leaves the order untouched.
 */

#include "fuzz_common.h"

#ifndef _Static_assert
#  define _Static_assert static_assert
#endif

extern "C" {
#include <uct/gaudi/drv/gaudi_discover.h>
#include <uct/gaudi/drv/gaudi_maptab.h>
}

#include <string.h>

#include <set>


using namespace gaudi_fuzz;

namespace {

const char *const TARGET = "maptab";

const std::vector<std::string> &json_dict()
{
    static const std::vector<std::string> dict = {
        "[", "]", "{", "}", ",", ":", "\"", "\\", "\\u0000", "\\ud800",
        "\"index\"", "\"module_id\"", "\"bus_id\"", "\"index\":",
        "\"module_id\":", "\"bus_id\":", "null", "true", "false", "0", "1",
        "2", "-1", "-0", "1.5", "1e3", "1e999", "-1e999", "2147483647",
        "2147483648", "-2147483648", "-2147483649", "4294967296",
        "9007199254740993", "0x10", "NaN", "Infinity", "\"0000:33:00.0\"",
        "\"33:00.0\"", "\"0000:4d:00.0\"", "\"ffff:ff:1f.7\"",
        "\"10000:00:00.0\"", "\"0000:33:00.8\"", "\"0x33:00.0\"",
        "\" 0000:33:00.0 \"", "\"%s%n%x\"", "{\"index\":0,\"module_id\":0}",
        "[[[[[[[[", "]]]]]]]]", " ", "\n", "\t", "\xc3\xa9", "\xff"
    };
    return dict;
}

/* The node of drv/maptab.cc (module IDs not in index order), or a random
 * one: up to 64 devices, module IDs that may repeat, bus IDs that may */
void make_devices(rng &r, std::vector<uct_gaudi_dev_info_t> &devs)
{
    static const struct {
        uint32_t   module_id;
        const char *bus_id;
    } fixed[] = {
        {2, "0000:33:00.0"}, {0, "0000:4d:00.0"}, {1, "0000:4e:00.0"}
    };
    unsigned i, num;

    num = r.chance(3, 4) ? 3 : (unsigned)r.below(UCT_GAUDI_MAX_DEVICES + 1);
    devs.assign(num, uct_gaudi_dev_info_t());
    for (i = 0; i < num; ++i) {
        uct_gaudi_dev_info_t &d = devs[i];

        memset(&d, 0, sizeof(d));
        d.minor = i;
        if (num == 3) {
            d.module_id = fixed[i].module_id;
            snprintf(d.bus_id, sizeof(d.bus_id), "%s", fixed[i].bus_id);
        } else {
            d.module_id = r.chance(1, 8) ? (uint32_t)r.below(4) : (num - 1 - i);
            snprintf(d.bus_id, sizeof(d.bus_id), "0000:%02x:00.0",
                     r.chance(1, 8) ? 0x33 : 0x33 + i);
        }
        uct_gaudi_discover_parse_bus_id(d.bus_id, &d.pci);
    }
}

std::string gen_value(rng &r, unsigned num_devs, unsigned depth);

std::string gen_number(rng &r, unsigned num_devs)
{
    static const char *const odd[] = {
        "-0", "1.0", "0.5", "1e2", "1E+1", "-1", "2147483648", "-2147483649",
        "1e400", "4294967295", "18446744073709551616", "0.0000001"
    };

    if (r.chance(3, 4)) {
        return std::to_string(r.below(num_devs + 2));
    }
    return odd[r.below(sizeof(odd) / sizeof(odd[0]))];
}

std::string gen_bus_id(rng &r, unsigned num_devs)
{
    char buf[64];

    switch (r.below(5)) {
    case 0:
        snprintf(buf, sizeof(buf), "%02x:00.0", 0x33 + (unsigned)r.below(4));
        break;
    case 1:
        snprintf(buf, sizeof(buf), "%x:%x:%x.%x", (unsigned)r.next() & 0x1ffff,
                 (unsigned)r.below(0x200), (unsigned)r.below(0x40),
                 (unsigned)r.below(10));
        break;
    case 2:
        return r.pick(json_dict());
    default:
        snprintf(buf, sizeof(buf), "0000:%02x:00.0",
                 0x33 + (unsigned)r.below(num_devs + 1));
        break;
    }
    return "\"" + std::string(buf) + "\"";
}

std::string gen_entry(rng &r, unsigned num_devs, unsigned depth)
{
    static const char *const keys[] = {"index", "module_id", "bus_id"};
    std::string out = "{";
    unsigned i, n = (unsigned)r.below(5);

    for (i = 0; i < n; ++i) {
        const char *key = r.chance(7, 8) ? keys[r.below(3)] : "other";
        out += (i > 0) ? "," : "";
        out += std::string("\"") + key + "\":";
        if (r.chance(1, 6)) {
            out += gen_value(r, num_devs, depth + 1);
        } else if (!strcmp(key, "bus_id")) {
            out += gen_bus_id(r, num_devs);
        } else {
            out += gen_number(r, num_devs);
        }
    }
    return out + "}";
}

std::string gen_value(rng &r, unsigned num_devs, unsigned depth)
{
    std::string out;
    unsigned i, n;

    switch ((depth > 4) ? 3 + r.below(3) : r.below(6)) {
    case 0:
    case 1:
        return gen_entry(r, num_devs, depth);
    case 2:
        n   = (unsigned)r.below(4);
        out = "[";
        for (i = 0; i < n; ++i) {
            out += ((i > 0) ? "," : "") + gen_value(r, num_devs, depth + 1);
        }
        return out + "]";
    case 3:
        return gen_number(r, num_devs);
    case 4:
        return gen_bus_id(r, num_devs);
    default:
        return r.chance(1, 2) ? "null" : "true";
    }
}

/* A table from the schema: an array of entries, mostly well-formed */
std::string gen_table(rng &r, unsigned num_devs)
{
    std::string out = "[";
    unsigned i, n = (unsigned)r.below(num_devs + 3);

    for (i = 0; i < n; ++i) {
        out += (i > 0) ? "," : "";
        out += r.chance(7, 8) ? gen_entry(r, num_devs, 1) :
                                gen_value(r, num_devs, 1);
    }
    return out + "]";
}

std::string make_input(rng &r, unsigned num_devs,
                       const std::vector<std::string> &corpus)
{
    std::string json;

    switch (r.below(8)) {
    case 0:
    case 1:
        return gen_table(r, num_devs);
    case 2:
        return mutate_text(r, gen_table(r, num_devs), 4096, json_dict(),
                           corpus);
    case 3: { /* deep or long: the nesting limit and the error excerpt */
        std::string s(1 + r.below(3000), r.chance(1, 2) ? '[' : '{');
        return r.chance(1, 2) ? s : gen_table(r, num_devs) + s;
    }
    default:
        json = corpus.empty() ? gen_table(r, num_devs) : r.pick(corpus);
        return mutate_text(r, json, 4096, json_dict(), corpus);
    }
}

void check_result(worker &w, ucs_status_t status, unsigned num_devs,
                  const unsigned *order, unsigned long errors)
{
    std::set<unsigned> seen;
    unsigned i;

    if (status == UCS_OK) {
        for (i = 0; i < num_devs; ++i) {
            if ((order[i] >= num_devs) || !seen.insert(order[i]).second) {
                w.fail("accepted, but order[%u] = %u is not a permutation of "
                       "%u devices", i, order[i], num_devs);
                return;
            }
        }
        if (!config().verbose && (errors != 0)) {
            w.fail("accepted with %lu error message(s)", errors);
        }
        w.count("accepted");
    } else if (status == UCS_ERR_INVALID_PARAM) {
        for (i = 0; i < num_devs; ++i) {
            if (order[i] != 0xdeadbeef) {
                w.fail("rejected, but order[%u] was written", i);
                return;
            }
        }
        if (!config().verbose && (errors != 1)) {
            w.fail("rejected with %lu error messages (expected exactly one)",
                   errors);
        }
        w.count("rejected");
    } else {
        w.fail("unexpected status %s", ucs_status_string(status));
    }
}

void maptab_loop(worker &w)
{
    std::vector<std::string> corpus = load_text_corpus(TARGET, ".json");
    guarded_buffer text(65536);
    guarded_buffer dev_mem(sizeof(uct_gaudi_dev_info_t) * UCT_GAUDI_MAX_DEVICES);
    guarded_buffer order_mem(sizeof(unsigned) * UCT_GAUDI_MAX_DEVICES);
    std::vector<uct_gaudi_dev_info_t> devs;
    std::vector<unsigned> sentinel(UCT_GAUDI_MAX_DEVICES, 0xdeadbeef);
    const uct_gaudi_dev_info_t *dev_p;
    unsigned long errors;
    ucs_status_t status;
    const char *json;
    unsigned *order;
    uint64_t i;

    quiet_ucx_log();
    w.summary("%zu corpus seeds", corpus.size());
    for (i = w.first(); w.more(i); ++i) {
        rng r = iteration_rng(TARGET, i);

        make_devices(r, devs);
        std::string input = make_input(r, devs.size(), corpus);
        w.begin(i, input);

        json   = text.place_string(input);
        dev_p  = (const uct_gaudi_dev_info_t*)
                 dev_mem.place(devs.data(), devs.size() * sizeof(devs[0]));
        order  = (unsigned*)order_mem.place(sentinel.data(),
                                            devs.size() * sizeof(unsigned));
        errors = swallowed_errors();
        status = uct_gaudi_maptab_parse(json, dev_p, devs.size(), order);
        check_result(w, status, devs.size(), order,
                     swallowed_errors() - errors);
    }
}

} /* namespace */


TEST(gaudi_fuzz, maptab)
{
    run_target(TARGET, 0, 10.0, maptab_loop);
}
