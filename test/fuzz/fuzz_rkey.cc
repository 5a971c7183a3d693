/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * Target "rkey_unpack": packed remote keys, which a peer sends through
 * UCP's wireup, unpacked through the UCT component API (uct_rkey_unpack)
 * of gaudi_ipc and of gaudi_cpy. The worker is an importer that owns
 * device 0 of a two-device emulated node; a live exporter (fuzz_ipc.h)
 * owns device 1 and gave it three valid keys. Each input starts from one
 * of them or from the corpus (test/fuzz/corpus/rkey_unpack/, hex) and gets
 * fields from the other keys, values at their limits, wrapped ranges
 * (offsets and lengths whose sums overflow), the fd servers of other
 * entries of the rendezvous directory as they are (ours; a process of
 * ours that exited, whose socket stays) or with another inode, truncation
 * (the rest zero, 0xff or random) or byte mutations. The key ends at a
 * guard page, so reading past its 112 bytes crashes.
 *
 * Checks: no crash; every unpack returns within 1.5 s (the garbage
 * identities fail fast: there is no such entry, or nobody listens); an
 * unpack that succeeds names a live export of the exporter (fd server,
 * export id, cookie) and a range inside its allocation, which the unpacked
 * key grants; the importer's imports
 * stay within its cache limit; after the loop a valid key still unpacks,
 * and once the exporter deregisters (revoking us) the importer's fds and
 * emulator accounting are back at their values before the loop.
 * gaudi_cpy's keys are empty: any buffer (none, NULL) unpacks.
 */

#include "fuzz_ipc.h"

extern "C" {
#include <uct/api/uct.h>
#include <uct/gaudi/drv/gaudi_buf.h>
#include <ucs/sys/sys.h>
}

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


using namespace gaudi_fuzz;

namespace {

const char *const TARGET = "rkey_unpack";

/* the importer's cache: small, so that evictions happen */
const unsigned CACHE_MAX = 8;

const double UNPACK_TIMEOUT = 1.5;

/* What gaudi_ipc's rkey_unpack returns as the rkey
 * (uct_gaudi_ipc_unpacked_rkey_t in gaudi_ipc_md.h, whose UCT internals a
 * C++ file cannot include): the mapping and the range the key grants */
struct unpacked_rkey {
    void     *map;
    uint64_t start;
    uint64_t end;
};

struct key_field {
    size_t   offset;
    unsigned width;
};

#define KEY_FIELD(_f) \
    {offsetof(uct_gaudi_ipc_rkey_t, _f), \
     sizeof(((uct_gaudi_ipc_rkey_t*)0)->_f)}

const key_field key_fields[] = {
    KEY_FIELD(system_id), KEY_FIELD(pid), KEY_FIELD(dev_index),
    KEY_FIELD(export_id), KEY_FIELD(cookie), KEY_FIELD(base),
    KEY_FIELD(length), KEY_FIELD(offset), KEY_FIELD(bus_hash),
    KEY_FIELD(srv.id.hi), KEY_FIELD(srv.id.lo), KEY_FIELD(srv.ino),
    KEY_FIELD(srv.ctime), KEY_FIELD(range_offset), KEY_FIELD(range_length)
};


class rkey_fuzzer {
public:
    explicit rkey_fuzzer(worker &w) : m_w(w) {}
    void run();

private:
    bool open_importer(std::string *err);
    uct_gaudi_ipc_rkey_t make_key(rng &r, bytes &raw);
    void unpack_ipc(const uct_gaudi_ipc_rkey_t &key, const bytes &raw);
    void unpack_cpy(rng &r);
    bool is_live(const uct_gaudi_ipc_rkey_t &key) const;
    bool at_baseline(std::string *diff) const;
    bool find_others(std::string *err);

    worker                    &m_w;
    exporter                  m_exp;
    std::string               m_state;
    std::vector<bytes>        m_corpus;
    uct_component_h           *m_comps = NULL;
    unsigned                  m_num_comps = 0;
    uct_component_h           m_ipc = NULL, m_cpy = NULL;
    uct_md_h                  m_md = NULL;
    emu_stats_fn_t            m_stats_fn = NULL;
    std::vector<std::string>  m_fds;
    gaudi_emu_stats_t         m_stats = {};
    /* other fd servers of the directory: ours, and one that exited */
    std::vector<uct_gaudi_ipc_entry_t> m_others;
    guarded_buffer            m_guard{4096};
};


bool rkey_fuzzer::open_importer(std::string *err)
{
    uct_md_resource_desc_t mds[2];
    uct_component_attr_t attr;
    uct_md_config_t *config;
    uint8_t host[4096] = {};
    unsigned i;
    void *dev;

    set_emu_env(m_state, 2, 0);
    setenv("UCX_GAUDI_IPC_DIR", ipc_dir_of(m_state).c_str(), 1);
    setenv("UCX_GAUDI_IPC_CACHE_MAX_ENTRIES",
           std::to_string(CACHE_MAX).c_str(), 1);
    setenv("UCX_GAUDI_IPC_TIMEOUT", "1s", 1);
    quiet_ucx_log();

    if (uct_query_components(&m_comps, &m_num_comps) != UCS_OK) {
        *err = "uct_query_components failed";
        return false;
    }
    for (i = 0; i < m_num_comps; ++i) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                          UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if (uct_component_query(m_comps[i], &attr) != UCS_OK) {
            continue;
        }
        if (!strcmp(attr.name, "gaudi_cpy")) {
            m_cpy = m_comps[i];
        } else if (!strcmp(attr.name, "gaudi_ipc") &&
                   (attr.md_resource_count == 1)) {
            m_ipc             = m_comps[i];
            attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
            attr.md_resources = mds;
            if ((uct_component_query(m_ipc, &attr) == UCS_OK) &&
                (uct_md_config_read(m_ipc, NULL, NULL, &config) == UCS_OK)) {
                if (uct_md_open(m_ipc, mds[0].md_name, config, &m_md) !=
                    UCS_OK) {
                    m_md = NULL;
                }
                uct_config_release(config);
            }
        }
    }
    if ((m_md == NULL) || (m_cpy == NULL)) {
        *err = "cannot open the importer's gaudi_ipc MD or find gaudi_cpy";
        return false;
    }

    /* what a process sets up once and keeps (the device, its DMA channel)
     * happens before the baseline */
    if ((uct_gaudi_buf_alloc(sizeof(host), &dev) != UCS_OK) ||
        (uct_gaudi_buf_copy(dev, 1, host, 0, sizeof(host)) != UCS_OK) ||
        (uct_gaudi_buf_free(dev) != UCS_OK)) {
        *err = "the importer's device does not work";
        return false;
    }

    m_stats_fn = find_emu_stats();
    if (m_stats_fn == NULL) {
        *err = "no emulator accounting";
        return false;
    }
    m_stats_fn(&m_stats);
    m_fds = list_fds(m_state.c_str());
    return true;
}

bool rkey_fuzzer::at_baseline(std::string *diff) const
{
    std::vector<std::string> fds = list_fds(m_state.c_str());
    gaudi_emu_stats_t stats;

    m_stats_fn(&stats);
    if ((fds == m_fds) && stats_equal(stats, m_stats)) {
        return true;
    }
    *diff = "fds:" + fd_diff(fds, m_fds) + " (gone:" + fd_diff(m_fds, fds) +
            "); emulator: " + stats_string(stats) + " (baseline " +
            stats_string(m_stats) + ")";
    return false;
}

/* The other fd servers of the directory (ours), and one that exited: a
 * socket bound there and closed */
bool rkey_fuzzer::find_others(std::string *err)
{
    std::string dir = ipc_dir_of(m_state), name;
    uct_gaudi_ipc_entry_t entry;
    struct dirent *ent;
    struct stat st;
    DIR *d;
    int fd;

    entry.id = {0xdeadf022deadf022ull, (uint64_t)getpid()};
    name     = dir + "/" + ipc_entry_name(entry.id, false);
    fd       = listen_unix(name);
    if (fd < 0) {
        *err = "cannot bind " + name + ": " + strerror(errno);
        return false;
    }
    close(fd);

    d = opendir(dir.c_str());
    while ((d != NULL) && ((ent = readdir(d)) != NULL)) {
        if ((strlen(ent->d_name) != 32) ||
            (sscanf(ent->d_name, "%16llx%16llx",
                    (unsigned long long*)&entry.id.hi,
                    (unsigned long long*)&entry.id.lo) != 2) ||
            (lstat((dir + "/" + ent->d_name).c_str(), &st) != 0)) {
            continue;
        }
        entry.ino   = st.st_ino;
        entry.ctime = (uint64_t)st.st_ctim.tv_sec * 1000000000ull +
                      st.st_ctim.tv_nsec;
        m_others.push_back(entry);
    }
    if (d != NULL) {
        closedir(d);
    }
    if (m_others.size() < 3) {
        *err = "found " + std::to_string(m_others.size()) + " fd servers in " +
               dir + " (the exporter, ours and one that exited expected)";
        return false;
    }
    return true;
}

bool rkey_fuzzer::is_live(const uct_gaudi_ipc_rkey_t &key) const
{
    for (const uct_gaudi_ipc_rkey_t &live : m_exp.keys()) {
        if ((key.srv.id.hi == live.srv.id.hi) &&
            (key.srv.id.lo == live.srv.id.lo) &&
            (key.export_id == live.export_id) && (key.cookie == live.cookie)) {
            return true;
        }
    }
    return false;
}

uct_gaudi_ipc_rkey_t rkey_fuzzer::make_key(rng &r, bytes &raw)
{
    const uct_gaudi_ipc_rkey_t &live = r.pick(m_exp.keys());
    uct_gaudi_ipc_rkey_t key;
    unsigned n, fill;
    uint64_t value;
    size_t keep;

    if (!m_corpus.empty() && r.chance(1, 4)) {
        raw = r.pick(m_corpus);
        raw.resize(sizeof(key), 0);
        if (r.chance(1, 2)) {   /* the seed's ranges, the live identity */
            memcpy(&raw[0], &live, offsetof(uct_gaudi_ipc_rkey_t, base));
            memcpy(&raw[offsetof(uct_gaudi_ipc_rkey_t, srv)], &live.srv,
                   sizeof(live.srv));
        }
    } else {
        raw.assign((const uint8_t*)&live, (const uint8_t*)&live + sizeof(key));
    }

    switch (r.below(8)) {
    case 0: /* as it is */
        break;
    case 1:
    case 2:
    case 3: /* fields */
        for (n = 1 + (unsigned)r.below(3); n > 0; --n) {
            const key_field &f = key_fields[r.below(sizeof(key_fields) /
                                                    sizeof(key_fields[0]))];
            switch (r.below(4)) {
            case 0:
                memcpy(&value, (const uint8_t*)&r.pick(m_exp.keys()) +
                       f.offset, f.width);
                break;
            case 1:
                memcpy(&value, &raw[f.offset], f.width);
                value += (r.chance(1, 2) ? 1 : -1) *
                         (int64_t)(r.chance(1, 2) ? 1 : 4096);
                break;
            case 2:
                value = r.next();
                break;
            default:
                value = interesting(r, f.width);
                break;
            }
            memcpy(&raw[f.offset], &value, f.width);
        }
        break;
    case 4: { /* a wrapped range */
        uct_gaudi_ipc_rkey_t k;
        memcpy(&k, raw.data(), sizeof(k));
        switch (r.below(4)) {
        case 0:
            k.range_offset = k.length - r.below(2);
            k.range_length = 0 - r.below(4096);
            break;
        case 1:
            k.base = 0 - 4096 * (1 + r.below(4));
            break;
        case 2:
            k.length       = 0 - 4096 * r.below(2);
            k.range_offset = 0 - 4096;
            break;
        default:
            k.range_offset = interesting(r, 8);
            k.range_length = interesting(r, 8);
            break;
        }
        memcpy(raw.data(), &k, sizeof(k));
        break;
    }
    case 5: { /* another fd server: live, exited, or another inode */
        uct_gaudi_ipc_rkey_t k;
        memcpy(&k, raw.data(), sizeof(k));
        k.srv = r.pick(m_others);
        if (r.chance(1, 3)) {
            k.srv.ino += r.chance(1, 2) ? 1 : -1;
        } else if (r.chance(1, 2)) {
            k.srv.ctime = interesting(r, 8);
        }
        memcpy(raw.data(), &k, sizeof(k));
        break;
    }
    case 6: /* truncated: the rest zero, 0xff or random */
        keep = r.below(sizeof(key));
        fill = (unsigned)r.below(3);
        for (size_t i = keep; i < sizeof(key); ++i) {
            raw[i] = (fill == 0) ? 0 : (fill == 1) ? 0xff : (uint8_t)r.next();
        }
        break;
    default:
        if (r.chance(1, 8)) {
            for (uint8_t &b : raw) {
                b = (uint8_t)r.next();
            }
        } else {
            mutate_bytes(r, raw, sizeof(key), m_corpus);
            raw.resize(sizeof(key), 0);
        }
        break;
    }

    memcpy(&key, raw.data(), sizeof(key));
    return key;
}

void rkey_fuzzer::unpack_ipc(const uct_gaudi_ipc_rkey_t &key,
                             const bytes &raw)
{
    const unpacked_rkey *unpacked;
    uct_rkey_bundle_t bundle;
    ucs_status_t status;
    double start;

    start  = now();
    status = uct_rkey_unpack(m_ipc, m_guard.place(raw.data(), raw.size()),
                             &bundle);
    if (now() - start > UNPACK_TIMEOUT) {
        m_w.fail("uct_rkey_unpack took %.1f s (fd server %s): %s",
                 now() - start, ipc_entry_name(key.srv.id, false).c_str(),
                 ucs_status_string(status));
    }
    if (status != UCS_OK) {
        m_w.count(status == UCS_ERR_UNREACHABLE ? "unreachable" :
                  status == UCS_ERR_INVALID_PARAM ? "invalid" : "other_err");
        /* UCX's perftest releases the key of an unreachable peer anyway,
         * its bundle as it was before the unpack (zeroed, or invalid):
         * that must do nothing (it was a NULL dereference) */
        bundle.handle = NULL;
        bundle.rkey   = 0;
        uct_rkey_release(m_ipc, &bundle);
        bundle.rkey   = UCT_INVALID_RKEY;
        uct_rkey_release(m_ipc, &bundle);
        return;
    }

    unpacked = (const unpacked_rkey*)bundle.rkey;
    if (!is_live(key)) {
        m_w.fail("unpacked a key of fd server %s export %llu that is no "
                 "live export", ipc_entry_name(key.srv.id, false).c_str(),
                 (unsigned long long)key.export_id);
    } else if ((key.range_offset > key.length) ||
               (key.range_length > key.length - key.range_offset)) {
        m_w.fail("unpacked a key whose range +%llu/%llu is outside its "
                 "allocation of %llu bytes",
                 (unsigned long long)key.range_offset,
                 (unsigned long long)key.range_length,
                 (unsigned long long)key.length);
    } else if ((unpacked->start != key.base + key.range_offset) ||
               (unpacked->end != unpacked->start + key.range_length)) {
        m_w.fail("the unpacked key grants 0x%llx..0x%llx, not its range",
                 (unsigned long long)unpacked->start,
                 (unsigned long long)unpacked->end);
    }
    m_w.count("unpacked");
    uct_rkey_release(m_ipc, &bundle);
}

void rkey_fuzzer::unpack_cpy(rng &r)
{
    uct_rkey_bundle_t bundle;
    uint8_t junk[16];
    const void *buf;

    for (uint8_t &b : junk) {
        b = (uint8_t)r.next();
    }
    /* rkey_packed_size is 0: nothing may be read, not even one byte */
    buf = r.chance(1, 3) ? NULL : r.chance(1, 2) ?
          m_guard.place(NULL, 0) : m_guard.place(junk, sizeof(junk));
    if (uct_rkey_unpack(m_cpy, buf, &bundle) != UCS_OK) {
        m_w.fail("gaudi_cpy refused an (empty) remote key");
        return;
    }
    uct_rkey_release(m_cpy, &bundle);
    m_w.count("cpy_unpacked");
}

void rkey_fuzzer::run()
{
    std::string err, diff;
    uct_gaudi_ipc_rkey_t key;
    unsigned long cached;
    gaudi_emu_stats_t stats;
    double deadline;
    uint64_t i;
    int status;
    bytes raw;

    m_state = make_temp_dir("rkey");
    for (const hex_seed &seed : load_hex_corpus(TARGET)) {
        m_corpus.push_back(seed.field(""));
    }
    if (!m_exp.start(m_state, "1s", &err) || !open_importer(&err) ||
        !find_others(&err)) {
        m_w.fail("%s", err.c_str());
        m_exp.stop();
        remove_tree(m_state);
        return;
    }
    m_w.summary("%zu corpus seeds, exporter pid %d", m_corpus.size(),
                m_exp.pid());

    for (i = m_w.first(); m_w.more(i); ++i) {
        rng r = iteration_rng(TARGET, i);

        key = make_key(r, raw);
        m_w.begin(i, raw.data(), raw.size());
        if (r.chance(1, 16)) {
            unpack_cpy(r);
        } else {
            unpack_ipc(key, raw);
        }

        if ((i % 256) == 0) {
            m_stats_fn(&stats);
            cached = stats.import_maps - m_stats.import_maps;
            if (cached > CACHE_MAX) {
                m_w.fail("%lu imports with a cache of %u", cached, CACHE_MAX);
            }
            if (!m_exp.alive(&status)) {
                m_w.fail("the exporter died");
                break;
            }
        }
    }

    /* still works, and leaves nothing behind once the exporter lets go */
    if (m_exp.alive(&status)) {
        raw.assign((const uint8_t*)&m_exp.keys()[0],
                   (const uint8_t*)&m_exp.keys()[0] + sizeof(key));
        m_w.begin(i, raw.data(), raw.size());
        uct_rkey_bundle_t bundle;
        if (uct_rkey_unpack(m_ipc, raw.data(), &bundle) != UCS_OK) {
            m_w.fail("after the loop a valid key does not unpack");
        } else {
            uct_rkey_release(m_ipc, &bundle);
        }
        if (!m_exp.deregister(&err)) {
            m_w.fail("exporter: %s", err.c_str());
        }
        deadline = now() + 3.0;
        while (!at_baseline(&diff) && (now() < deadline)) {
            usleep(10000);
        }
        if (!at_baseline(&diff)) {
            m_w.fail("the importer leaked: %s", diff.c_str());
        }
    }

    m_exp.stop();
    uct_md_close(m_md);
    uct_release_component_list(m_comps);
    remove_tree(m_state);
}

} /* namespace */


TEST(gaudi_fuzz, rkey_unpack)
{
    run_target(TARGET, 0, 15.0, [](worker &w) {
        rkey_fuzzer(w).run();
    });
}
