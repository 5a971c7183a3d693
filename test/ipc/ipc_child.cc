/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "ipc_child.h"

extern "C" {
#include <uct/gaudi/drv/gaudi_buf.h>
#include <ucs/async/async.h>
}

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>


namespace gipc {

const char *const ROLE_ARG = "--role";

/* Channel tags of the teardown barriers (scenarios use small numbers) */
enum {
    TAG_HELLO_DONE = 0xfff00001,
    TAG_RELEASED   = 0xfff00002,
    TAG_UNEXPORTED = 0xfff00003,
    TAG_CHECKED    = 0xfff00004
};

static unsigned g_failures = 0;


/* ---- checks -------------------------------------------------------------- */

unsigned failures()
{
    return g_failures;
}

check_failure::check_failure(const char *file, int line, const char *expr,
                             bool fatal) :
    m_file(file), m_line(line), m_fatal(fatal)
{
    m_msg << "(" << expr << ") ";
}

check_failure::~check_failure()
{
    const char *slash = strrchr(m_file, '/');

    ++g_failures;
    fprintf(stdout, "FAIL %s:%d: %s\n", (slash != NULL) ? slash + 1 : m_file,
            m_line, m_msg.str().c_str());
    fflush(stdout);
    if (m_fatal) {
        fflush(NULL);
        _exit(1);
    }
}

void result(const std::string &key, const std::string &value)
{
    fprintf(stdout, "RESULT %s=%s\n", key.c_str(), value.c_str());
    fflush(stdout);
}

void result(const std::string &key, uint64_t value)
{
    result(key, std::to_string(value));
}

void info(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

/* ---- data patterns ------------------------------------------------------- */

/* splitmix64: every 8-byte word of a pattern is a hash of (seed, position),
 * so a shifted, truncated or stale copy never matches */
static inline uint64_t pattern_word(uint64_t seed, uint64_t word)
{
    uint64_t x = (seed * 0x9e3779b97f4a7c15ull) ^
                 ((word + 1) * 0xbf58476d1ce4e5b9ull);

    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 29;
    return x;
}

void fill_pattern(void *buf, size_t length, uint64_t seed)
{
    uint8_t *p = (uint8_t*)buf;
    size_t words = length / 8;
    uint64_t value;
    size_t i;

    for (i = 0; i < words; ++i) {
        value = pattern_word(seed, i);
        memcpy(p + (i * 8), &value, 8);
    }

    if (length % 8) {
        value = pattern_word(seed, words);
        memcpy(p + (words * 8), &value, length % 8);
    }
}

static bool verify_bytes(const uint8_t *actual, const uint8_t *expected,
                         size_t length, const std::string &what)
{
    size_t first = SIZE_MAX, last = 0, bad = 0, i;

    if (memcmp(actual, expected, length) == 0) {
        return true;
    }

    for (i = 0; i < length; ++i) {
        if (actual[i] != expected[i]) {
            first = std::min(first, i);
            last  = i;
            ++bad;
        }
    }

    GIPC_EXPECT(false) << what << ": " << bad << " of " << length
                       << " bytes differ, first at " << first << " (0x"
                       << std::hex << (unsigned)actual[first] << " != 0x"
                       << (unsigned)expected[first] << std::dec
                       << "), last at " << last;
    return false;
}

/* The expected bytes; kept between calls (up to 64 MiB are compared, and
 * fresh buffers of that size cost more page faults than the copies) */
static uint8_t *expected_buf(size_t length)
{
    static std::vector<uint8_t> buf;

    /* never NULL, not even for 0 bytes: memset() and memcmp() need a valid
     * pointer (UBSan's nonnull-attribute check) */
    if (buf.size() < std::max<size_t>(length, 1)) {
        buf.resize(std::max<size_t>(length, 1));
    }
    return buf.data();
}

bool verify_pattern(const void *actual, size_t length, uint64_t seed,
                    const std::string &what)
{
    uint8_t *expected = expected_buf(length);

    fill_pattern(expected, length, seed);
    return verify_bytes((const uint8_t*)actual, expected, length, what);
}

bool verify_fill(const void *actual, size_t length, uint8_t value,
                 const std::string &what)
{
    uint8_t *expected = expected_buf(length);

    memset(expected, value, length);
    return verify_bytes((const uint8_t*)actual, expected, length, what);
}


/* ---- channel ------------------------------------------------------------- */

struct msg_header {
    uint32_t type;
    uint32_t length;
};

static const size_t MSG_MAX = 65536;

/* A step of the scenario is done (a message to or from the peer): the log
 * file's time moves, which the harness's watchdog counts as progress, so
 * that a scenario slowed down by a loaded machine is not taken for a hang
 * (stdout is the log file) */
static void mark_progress()
{
    futimens(1, NULL);
}

void channel::send(uint32_t type, const void *data, size_t length)
{
    msg_header hdr = {type, (uint32_t)length};
    struct iovec iov[2];
    struct msghdr msg;
    ssize_t ret;

    GIPC_ASSERT(length + sizeof(hdr) <= MSG_MAX) << length;
    iov[0].iov_base = &hdr;
    iov[0].iov_len  = sizeof(hdr);
    iov[1].iov_base = const_cast<void*>(data);
    iov[1].iov_len  = length;
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov    = iov;
    msg.msg_iovlen = 2;

    do {
        ret = sendmsg(m_fd, &msg, MSG_NOSIGNAL);
    } while ((ret < 0) && (errno == EINTR));

    if ((ret < 0) && ((errno == EPIPE) || (errno == ECONNRESET))) {
        m_peer_gone = true;  /* the caller finds out at its next recv */
        return;
    }

    GIPC_ASSERT(ret == (ssize_t)(sizeof(hdr) + length))
            << "channel send: " << strerror(errno);
    mark_progress();
}

bool channel::recv(uint32_t type, std::vector<uint8_t> &data, double timeout,
                   const std::function<void()> &idle)
{
    std::vector<uint8_t> buf(MSG_MAX);
    double deadline = now() + timeout;
    unsigned spins  = 0;
    struct pollfd pfd;
    msg_header hdr;
    ssize_t ret;

    if (m_peer_gone) {
        return false;
    }

    /* progress the worker while waiting: spin briefly, then nap 1 ms */
    for (;;) {
        idle();
        pfd.fd     = m_fd;
        pfd.events = POLLIN;
        ret        = poll(&pfd, 1, (spins++ < 1000) ? 0 : 1);
        if (ret > 0) {
            break;
        }

        GIPC_ASSERT((ret == 0) || (errno == EINTR))
                << "channel poll: " << strerror(errno);
        GIPC_ASSERT(now() < deadline)
                << "timed out (" << timeout << " s) waiting for message type "
                << type << " from the peer";
    }

    ret = ::recv(m_fd, buf.data(), buf.size(), 0);
    if ((ret == 0) || ((ret < 0) && (errno == ECONNRESET))) {
        m_peer_gone = true;
        return false;
    }
    mark_progress();

    GIPC_ASSERT(ret >= (ssize_t)sizeof(hdr)) << "channel recv: " << ret << " "
                                             << strerror(errno);
    memcpy(&hdr, buf.data(), sizeof(hdr));
    GIPC_ASSERT(hdr.type == type) << "expected message type " << type
                                  << ", got " << hdr.type
                                  << " (the children are out of step)";
    GIPC_ASSERT(hdr.length == ret - sizeof(hdr)) << hdr.length;
    data.assign(buf.begin() + sizeof(hdr), buf.begin() + ret);
    return true;
}


/* ---- accounting ---------------------------------------------------------- */

/* Our fds that count for the leak check: not the emulator's mappings of
 * our devices' HBM backing files (gaudi_test::list_fds) */
static std::vector<std::string> counted_fds()
{
    return gaudi_test::list_fds(getenv("UCX_GAUDI_EMU_STATE_DIR"));
}


/* ---- peer: setup and teardown -------------------------------------------- */

peer::peer(unsigned index, int channel_fd, const params_t &params) :
    m_index(index), m_chan(channel_fd), m_params(params), m_peer_dead(false),
    m_components(NULL), m_num_components(0), m_component(NULL),
    m_cpy_component(NULL), m_md(NULL), m_cpy_md(NULL), m_async(NULL),
    m_worker(NULL), m_iface(NULL), m_ep(NULL), m_err_count(0),
    m_err_status(UCS_OK), m_no_resource(0), m_emu_stats_fn(NULL)
{
    memset(&m_md_attr, 0, sizeof(m_md_attr));
    memset(&m_iface_attr, 0, sizeof(m_iface_attr));
    memset(&m_my_hello, 0, sizeof(m_my_hello));
    memset(&m_peer_hello, 0, sizeof(m_peer_hello));
}

std::string peer::param(const std::string &key, const std::string &def) const
{
    params_t::const_iterator it = m_params.find(key);

    return (it == m_params.end()) ? def : it->second;
}

long peer::param_int(const std::string &key, long def) const
{
    return strtol(param(key, std::to_string(def)).c_str(), NULL, 0);
}

void peer::open_component(const char *name, uct_component_h *comp_p,
                          std::string *md_name_p)
{
    uct_component_attr_t attr;
    std::vector<uct_md_resource_desc_t> mds;
    ucs_status_t status;
    unsigned i;

    if (m_components == NULL) {
        status = uct_query_components(&m_components, &m_num_components);
        GIPC_ASSERT_OK(status) << "uct_query_components";
    }

    for (i = 0; i < m_num_components; ++i) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                          UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        status          = uct_component_query(m_components[i], &attr);
        GIPC_ASSERT_OK(status) << "uct_component_query";
        if (strcmp(attr.name, name) != 0) {
            continue;
        }

        GIPC_ASSERT(attr.md_resource_count >= 1) << name << " has no MD";
        mds.resize(attr.md_resource_count);
        attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        attr.md_resources = mds.data();
        status            = uct_component_query(m_components[i], &attr);
        GIPC_ASSERT_OK(status) << "uct_component_query";
        *comp_p    = m_components[i];
        *md_name_p = mds[0].md_name;
        return;
    }

    GIPC_ASSERT(false) << "UCT component '" << name << "' not found "
                       << "(is the transport installed?)";
}

static uct_md_h open_md_of(uct_component_h comp, const std::string &md_name)
{
    uct_md_config_t *config;
    ucs_status_t status;
    uct_md_h md;

    status = uct_md_config_read(comp, NULL, NULL, &config);
    GIPC_ASSERT_OK(status) << "uct_md_config_read";
    status = uct_md_open(comp, md_name.c_str(), config, &md);
    uct_config_release(config);
    GIPC_ASSERT_OK(status) << "uct_md_open(" << md_name << ")";
    return md;
}

void peer::open_md()
{
    std::string md_name;
    ucs_status_t status;

    open_component("gaudi_ipc", &m_component, &m_md_name);
    m_md   = open_md_of(m_component, m_md_name);
    status = uct_md_query(m_md, &m_md_attr);
    GIPC_ASSERT_OK(status) << "uct_md_query";

    if (param_int("cpy_md", 0)) {
        open_component("gaudi_cpy", &m_cpy_component, &md_name);
        m_cpy_md = open_md_of(m_cpy_component, md_name);
    }
}

void peer::open_iface()
{
    uct_iface_config_t *config;
    uct_iface_params_t params;
    ucs_status_t status;

    status = ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                      &m_async);
    GIPC_ASSERT_OK(status) << "ucs_async_context_create";
    status = uct_worker_create(m_async, UCS_THREAD_MODE_SINGLE, &m_worker);
    GIPC_ASSERT_OK(status) << "uct_worker_create";

    status = uct_md_iface_config_read(m_md, "gaudi_ipc", NULL, NULL, &config);
    GIPC_ASSERT_OK(status) << "uct_md_iface_config_read";

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                        UCT_IFACE_PARAM_FIELD_DEVICE |
                        UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
                        UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                        UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
    params.open_mode  = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = "gaudi_ipc";
    params.mode.device.dev_name = "gaudi_ipc";
    params.err_handler          = err_handler;
    params.err_handler_arg      = this;
    params.err_handler_flags    = UCT_CB_FLAG_ASYNC;

    status = uct_iface_open(m_md, m_worker, &params, config, &m_iface);
    uct_config_release(config);
    GIPC_ASSERT_OK(status) << "uct_iface_open(gaudi_ipc/gaudi_ipc)";

    status = uct_iface_query(m_iface, &m_iface_attr);
    GIPC_ASSERT_OK(status) << "uct_iface_query";
    uct_iface_progress_enable(m_iface,
                              UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
}

void peer::find_emu_stats()
{
    std::string err;

    m_emu_stats_fn = gaudi_test::find_emu_stats(&err);
    GIPC_ASSERT(m_emu_stats_fn != NULL) << err;
}

/* The device, its DMA channels and the host-copy path are set up for the
 * process on first use and kept: make that happen before the baseline */
void peer::warm_up()
{
    uint8_t host[4096];
    void *dev;

    GIPC_ASSERT(uct_gaudi_buf_is_supported()) << "no Gaudi for this process";
    GIPC_ASSERT_OK(uct_gaudi_buf_alloc(sizeof(host), &dev));
    memset(host, 0x5a, sizeof(host));
    to_dev(dev, host, sizeof(host));
    dev_memset(dev, 0, 64);
    from_dev(host, dev, sizeof(host));
    GIPC_ASSERT((host[0] == 0) && (host[64] == 0x5a));
    GIPC_ASSERT_OK(uct_gaudi_buf_free(dev));
}

void peer::exchange_hello()
{
    std::vector<uint8_t> data;
    ucs_status_t status;

    m_my_hello.pid            = getpid();
    m_my_hello.index          = m_index;
    m_my_hello.dev_addr_len   = m_iface_attr.device_addr_len;
    m_my_hello.iface_addr_len = m_iface_attr.iface_addr_len;
    GIPC_ASSERT(m_iface_attr.device_addr_len <= sizeof(m_my_hello.dev_addr));
    GIPC_ASSERT(m_iface_attr.iface_addr_len <= sizeof(m_my_hello.iface_addr));
    status = uct_iface_get_device_address(
            m_iface, (uct_device_addr_t*)m_my_hello.dev_addr);
    GIPC_ASSERT_OK(status) << "uct_iface_get_device_address";
    status = uct_iface_get_address(m_iface,
                                   (uct_iface_addr_t*)m_my_hello.iface_addr);
    GIPC_ASSERT_OK(status) << "uct_iface_get_address";

    m_chan.send(MSG_HELLO, &m_my_hello, sizeof(m_my_hello));
    GIPC_ASSERT(m_chan.recv(MSG_HELLO, data, WAIT_TIMEOUT,
                            [this]() { progress(); }))
            << "peer gone before hello";
    GIPC_ASSERT(data.size() == sizeof(m_peer_hello));
    memcpy(&m_peer_hello, data.data(), sizeof(m_peer_hello));
    GIPC_ASSERT(m_peer_hello.index == (1 - m_index));
}

void peer::setup()
{
    open_md();
    find_emu_stats();
    open_iface();
    warm_up();
    exchange_hello();
    barrier(TAG_HELLO_DONE);
    m_baseline = take_snapshot();
    info("pid %d dev index %u: baseline %s, %zu fds", getpid(), m_index,
         stats_string(m_baseline.emu).c_str(), m_baseline.fds.size());
}

void peer::connect()
{
    uct_ep_params_t params;
    ucs_status_t status;

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                        UCT_EP_PARAM_FIELD_DEV_ADDR |
                        UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface      = m_iface;
    params.dev_addr   = (const uct_device_addr_t*)m_peer_hello.dev_addr;
    params.iface_addr = (const uct_iface_addr_t*)m_peer_hello.iface_addr;
    status            = uct_ep_create(&params, &m_ep);
    GIPC_ASSERT_OK(status) << "uct_ep_create";
}

uct_md_h peer::reopen_md()
{
    return open_md_of(m_component, m_md_name);
}

static void purge_cb(uct_pending_req_t *self, void *arg)
{
    op *o = ucs_container_of(self, op, pending);

    o->done   = true;
    o->status = UCS_ERR_CANCELED;
}

/*
 * The end of every scenario, in both processes:
 *  1. endpoint, remote keys and unregistered buffers go;
 *  2. (barrier) nobody uses the peer's memory any more;
 *  3. the exported buffers are deregistered (REVOKE) and freed;
 *  4. (barrier) then the accounting must return to the baseline, waiting a
 *     little for deferred work (revokes, deferred frees);
 *  5. (barrier) so that neither process's exit releases anything the other
 *     one is being checked for; then close.
 * With a dead peer the barriers are skipped.
 */
void peer::teardown()
{
    std::list<region>::iterator it;

    if (m_ep != NULL) {
        uct_ep_pending_purge(m_ep, purge_cb, NULL);
        uct_ep_destroy(m_ep);
        m_ep = NULL;
    }

    while (!m_bundles.empty()) {
        release(m_bundles.front());
    }

    for (it = m_regions.begin(); it != m_regions.end();) {
        region *r = &*(it++);
        if (r->memh == NULL) {
            free(r);
        }
    }

    barrier(TAG_RELEASED);
    while (!m_regions.empty()) {
        free(&m_regions.front());
    }

    barrier(TAG_UNEXPORTED);
    check_leaks("at teardown");
    barrier(TAG_CHECKED);
    close_all();
}

/* @a fn(@a obj) if there is one, and no more of it */
template <typename T>
static void release_once(T *&obj, void (*fn)(T*))
{
    if (obj != NULL) {
        fn(obj);
        obj = NULL;
    }
}

void peer::close_all()
{
    release_once(m_iface, uct_iface_close);
    release_once(m_worker, uct_worker_destroy);
    release_once(m_async, ucs_async_context_destroy);
    release_once(m_cpy_md, uct_md_close);
    release_once(m_md, uct_md_close);
    release_once(m_components, uct_release_component_list);
}


/* ---- peer: progress, errors, channel ------------------------------------- */

void peer::progress()
{
    if (m_worker != NULL) {
        uct_worker_progress(m_worker);
    }
}

bool peer::reachable(const void *dev_addr, const void *iface_addr) const
{
    return uct_iface_is_reachable(m_iface,
                                  (const uct_device_addr_t*)dev_addr,
                                  (const uct_iface_addr_t*)iface_addr);
}

bool peer::wait_for(const std::function<bool()> &pred, double timeout)
{
    double deadline = now() + timeout;
    unsigned spins  = 0;

    while (!pred()) {
        if (now() > deadline) {
            return false;
        }
        progress();
        if (++spins > 10000) {
            usleep(100);  /* two cores for two children and their threads */
        }
    }
    return true;
}

ucs_status_t peer::err_handler(void *arg, uct_ep_h ep, ucs_status_t status)
{
    peer *self = (peer*)arg;

    self->m_err_status = status;
    __sync_synchronize();
    ++self->m_err_count;
    fprintf(stdout, "error handler: ep %p status %s\n", (void*)ep,
            ucs_status_string(status));
    fflush(stdout);
    return UCS_OK;
}

void peer::send_regions(const std::vector<const region*> &regions)
{
    std::vector<wire_region> wire(regions.size());
    size_t i;

    for (i = 0; i < regions.size(); ++i) {
        pack(regions[i], &wire[i]);
    }
    m_chan.send(MSG_REGIONS, wire.data(), wire.size() * sizeof(wire_region));
}

bool peer::recv_regions(std::vector<remote_region> &regions)
{
    std::vector<uint8_t> data;
    wire_region wire;
    size_t i;

    if (!m_chan.recv(MSG_REGIONS, data, WAIT_TIMEOUT,
                     [this]() { progress(); })) {
        return false;
    }

    GIPC_ASSERT((data.size() % sizeof(wire_region)) == 0) << data.size();
    regions.resize(data.size() / sizeof(wire_region));
    for (i = 0; i < regions.size(); ++i) {
        memcpy(&wire, data.data() + (i * sizeof(wire)), sizeof(wire));
        regions[i].address = wire.address;
        regions[i].length  = wire.length;
        regions[i].id      = wire.id;
        regions[i].packed.assign(wire.rkey, wire.rkey + wire.rkey_len);
    }
    return true;
}

void peer::recv_and_unpack(std::vector<remote_region> &regions,
                           uct_rkey_bundle_t *bundle)
{
    GIPC_ASSERT(recv_regions(regions)) << "peer gone";
    GIPC_ASSERT(!regions.empty());
    GIPC_ASSERT_OK(unpack(regions[0].packed.data(), bundle))
            << "uct_rkey_unpack of the peer's first region";
}

void peer::send_value(uint64_t value)
{
    m_chan.send(MSG_VALUE, &value, sizeof(value));
}

bool peer::recv_value(uint64_t &value)
{
    std::vector<uint8_t> data;

    if (!m_chan.recv(MSG_VALUE, data, WAIT_TIMEOUT,
                     [this]() { progress(); })) {
        return false;
    }

    GIPC_ASSERT(data.size() == sizeof(value));
    memcpy(&value, data.data(), sizeof(value));
    return true;
}

void peer::send_sync(uint32_t tag)
{
    m_chan.send(MSG_SYNC, &tag, sizeof(tag));
}

bool peer::wait_sync(uint32_t tag, double timeout)
{
    std::vector<uint8_t> data;
    uint32_t got;

    if (!m_chan.recv(MSG_SYNC, data, timeout, [this]() { progress(); })) {
        return false;
    }

    GIPC_ASSERT(data.size() == sizeof(got));
    memcpy(&got, data.data(), sizeof(got));
    GIPC_ASSERT(got == tag) << "sync tag 0x" << std::hex << got
                            << ", expected 0x" << tag
                            << " (the children are out of step)";
    return true;
}

bool peer::barrier(uint32_t tag)
{
    if (m_peer_dead) {
        return false;
    }

    send_sync(tag);
    return wait_sync(tag);
}

bool peer::wait_peer_gone(double timeout)
{
    std::vector<uint8_t> data;
    double deadline = now() + timeout;

    while (now() < deadline) {
        /* any message now would be a protocol error: type 0 never comes */
        if (!m_chan.recv(0, data, deadline - now(),
                         [this]() { progress(); })) {
            return true;
        }
    }
    return false;
}


/* ---- peer: memory -------------------------------------------------------- */

region *peer::alloc(size_t length, uint32_t id)
{
    region r;
    ucs_status_t status;

    memset(&r, 0, sizeof(r));
    status = uct_gaudi_buf_alloc(length, &r.address);
    GIPC_ASSERT_OK(status) << "uct_gaudi_buf_alloc(" << length << ")";
    r.length = length;
    r.id     = id;
    m_regions.push_back(r);
    return &m_regions.back();
}

region *peer::alloc_md(size_t length, uint32_t id)
{
    uct_alloc_method_t method = UCT_ALLOC_METHOD_MD;
    uct_mem_alloc_params_t params;
    ucs_status_t status;
    region r;

    GIPC_ASSERT(m_cpy_md != NULL) << "scenario needs cpy_md=1";
    memset(&r, 0, sizeof(r));
    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_MEM_ALLOC_PARAM_FIELD_FLAGS |
                        UCT_MEM_ALLOC_PARAM_FIELD_MEM_TYPE |
                        UCT_MEM_ALLOC_PARAM_FIELD_MDS |
                        UCT_MEM_ALLOC_PARAM_FIELD_NAME;
    params.flags      = UCT_MD_MEM_ACCESS_ALL;
    params.mem_type   = UCS_MEMORY_TYPE_GAUDI;
    params.mds.mds    = &m_cpy_md;
    params.mds.count  = 1;
    params.name       = "gaudi_ipc_mp_test";

    status = uct_mem_alloc(length, &method, 1, &params, &r.mem);
    GIPC_ASSERT_OK(status) << "uct_mem_alloc(gaudi_cpy, GAUDI, " << length
                           << ")";
    GIPC_ASSERT(r.mem.mem_type == UCS_MEMORY_TYPE_GAUDI);
    r.address  = r.mem.address;
    r.length   = length;
    r.md_alloc = true;
    r.id       = id;
    m_regions.push_back(r);
    return &m_regions.back();
}

void peer::reg(region *r)
{
    ucs_status_t status;

    status = uct_md_mem_reg(m_md, r->address, r->length, UCT_MD_MEM_ACCESS_ALL,
                            &r->memh);
    GIPC_ASSERT_OK(status) << "uct_md_mem_reg(" << r->address << ", "
                           << r->length << ")";
    GIPC_ASSERT(r->memh != NULL);
}

void peer::dereg(region *r)
{
    ucs_status_t status;

    if (r->memh == NULL) {
        return;
    }

    status  = uct_md_mem_dereg(m_md, r->memh);
    r->memh = NULL;
    GIPC_EXPECT_OK(status) << "uct_md_mem_dereg(" << r->address << ")";
}

void peer::free(region *r)
{
    std::list<region>::iterator it;
    ucs_status_t status;

    dereg(r);
    if (r->md_alloc) {
        status = uct_mem_free(&r->mem);
    } else {
        status = uct_gaudi_buf_free(r->address);
    }
    GIPC_EXPECT_OK(status) << "free of Gaudi buffer " << r->address;

    for (it = m_regions.begin(); it != m_regions.end(); ++it) {
        if (&*it == r) {
            m_regions.erase(it);
            return;
        }
    }
    GIPC_ASSERT(false) << "unknown region";
}

void peer::pack(const region *r, wire_region *wire) const
{
    ucs_status_t status;

    GIPC_ASSERT(r->memh != NULL);
    GIPC_ASSERT(m_md_attr.rkey_packed_size <= sizeof(wire->rkey))
            << m_md_attr.rkey_packed_size;
    memset(wire, 0, sizeof(*wire));
    wire->address  = (uintptr_t)r->address;
    wire->length   = r->length;
    wire->rkey_len = m_md_attr.rkey_packed_size;
    wire->id       = r->id;
    status         = uct_md_mkey_pack(m_md, r->memh, wire->rkey);
    GIPC_ASSERT_OK(status) << "uct_md_mkey_pack";
}

void peer::to_dev(void *dev, const void *host, size_t length)
{
    ucs_status_t status = uct_gaudi_buf_copy(dev, 1, host, 0, length);

    GIPC_ASSERT_OK(status) << "host->device copy of " << length << " bytes";
}

void peer::from_dev(void *host, const void *dev, size_t length)
{
    ucs_status_t status = uct_gaudi_buf_copy(host, 0, dev, 1, length);

    GIPC_ASSERT_OK(status) << "device->host copy of " << length << " bytes";
}

void peer::dev_memset(void *dev, uint8_t value, size_t length)
{
    ucs_status_t status;

    if (length == 0) {
        return;
    }

    status = uct_gaudi_buf_memset(dev, value, length);
    GIPC_ASSERT_OK(status) << "device memset of " << length << " bytes";
}

void peer::dev_pattern(void *dev, size_t length, uint64_t seed)
{
    m_host.resize(std::max(m_host.size(), length));
    fill_pattern(m_host.data(), length, seed);
    to_dev(dev, m_host.data(), length);
}

bool peer::dev_verify_pattern(const void *dev, size_t length, uint64_t seed,
                              const std::string &what)
{
    m_host.resize(std::max(m_host.size(), length));
    from_dev(m_host.data(), dev, length);
    return verify_pattern(m_host.data(), length, seed, what);
}

bool peer::dev_verify_fill(const void *dev, size_t length, uint8_t value,
                           const std::string &what)
{
    if (length == 0) {
        return true;
    }

    m_host2.resize(std::max(m_host2.size(), length));
    from_dev(m_host2.data(), dev, length);
    return verify_fill(m_host2.data(), length, value, what);
}


/* ---- peer: remote keys --------------------------------------------------- */

ucs_status_t peer::unpack(const void *packed, uct_rkey_bundle_t *bundle)
{
    ucs_status_t status = uct_rkey_unpack(m_component, packed, bundle);

    if (status == UCS_OK) {
        m_bundles.push_back(bundle);
    }
    return status;
}

void peer::release(uct_rkey_bundle_t *bundle)
{
    ucs_status_t status;

    m_bundles.remove(bundle);
    status = uct_rkey_release(m_component, bundle);
    GIPC_EXPECT_OK(status) << "uct_rkey_release";
}


/* ---- peer: operations ---------------------------------------------------- */

void peer::op_init(op *o, bool is_put, void *local, size_t length,
                   uct_mem_h memh, uint64_t remote_addr, uct_rkey_t rkey)
{
    memset(o, 0, sizeof(*o));
    o->comp.func      = op_completed;
    o->comp.count     = 1;
    o->comp.status    = UCS_OK;
    o->pending.func   = op_pending_cb;
    o->owner          = this;
    o->is_put         = is_put;
    o->iov.buffer     = local;
    o->iov.length     = length;
    o->iov.memh       = (memh != NULL) ? memh : UCT_MEM_HANDLE_NULL;
    o->iov.stride     = 0;
    o->iov.count      = 1;
    o->remote_addr    = remote_addr;
    o->rkey           = rkey;
    o->status         = UCS_INPROGRESS;
}

void peer::op_completed(uct_completion_t *self)
{
    op *o = ucs_container_of(self, op, comp);

    o->status = self->status;
    o->done   = true;
}

ucs_status_t peer::op_post_once(op *o)
{
    ucs_status_t status;

    GIPC_ASSERT(m_ep != NULL) << "no endpoint (scenario did not connect)";
    if (o->is_put) {
        status = uct_ep_put_zcopy(m_ep, &o->iov, 1, o->remote_addr, o->rkey,
                                  &o->comp);
    } else {
        status = uct_ep_get_zcopy(m_ep, &o->iov, 1, o->remote_addr, o->rkey,
                                  &o->comp);
    }

    if (status == UCS_ERR_NO_RESOURCE) {
        ++m_no_resource;
        return status;
    }

    if (status != UCS_INPROGRESS) {
        /* completed (or failed) at once: the completion is not called */
        o->status = status;
        o->done   = true;
    }
    return status;
}

ucs_status_t peer::op_pending_cb(uct_pending_req_t *self)
{
    op *o = ucs_container_of(self, op, pending);

    return (o->owner->op_post_once(o) == UCS_ERR_NO_RESOURCE) ?
           UCS_ERR_NO_RESOURCE : UCS_OK;
}

ucs_status_t peer::op_post(op *o, bool use_pending)
{
    double deadline = now() + WAIT_TIMEOUT;
    ucs_status_t status;

    for (;;) {
        status = op_post_once(o);
        if (status != UCS_ERR_NO_RESOURCE) {
            return status;
        }

        if (use_pending) {
            status = uct_ep_pending_add(m_ep, &o->pending, 0);
            if (status == UCS_OK) {
                return UCS_ERR_NO_RESOURCE; /* queued; completes later */
            }
            GIPC_ASSERT(status == UCS_ERR_BUSY)
                    << "uct_ep_pending_add: " << ucs_status_string(status);
        } else {
            progress();
        }

        GIPC_ASSERT(now() < deadline) << "NO_RESOURCE for " << WAIT_TIMEOUT
                                      << " s";
    }
}

bool peer::op_wait(const std::vector<op*> &ops, double timeout)
{
    return wait_for(
            [&ops]() {
                for (op *o : ops) {
                    if (!o->done) {
                        return false;
                    }
                }
                return true;
            },
            timeout);
}

ucs_status_t peer::op_run(op *o, double timeout)
{
    op_post(o);
    GIPC_ASSERT(op_wait({o}, timeout))
            << (o->is_put ? "put" : "get") << "_zcopy of " << o->iov.length
            << " bytes did not complete in " << timeout << " s";
    return o->status;
}

struct flush_comp {
    uct_completion_t comp;
    bool             done;
};

void peer::flush_completed(uct_completion_t *self)
{
    ucs_container_of(self, flush_comp, comp)->done = true;
}

static ucs_status_t flush_wait(peer &p, flush_comp *fc, ucs_status_t status,
                               double timeout, const char *what)
{
    if (status == UCS_INPROGRESS) {
        GIPC_ASSERT(p.wait_for([fc]() { return fc->done; }, timeout))
                << what << " did not complete in " << timeout << " s";
        status = fc->comp.status;
    }
    return status;
}

ucs_status_t peer::flush(bool ep, double timeout)
{
    const char *what = ep ? "uct_ep_flush" : "uct_iface_flush";
    double deadline  = now() + timeout;
    flush_comp fc;
    ucs_status_t status;

    for (;;) {
        fc.comp.func   = flush_completed;
        fc.comp.count  = 1;
        fc.comp.status = UCS_OK;
        fc.done        = false;
        status         = ep ? uct_ep_flush(m_ep, 0, &fc.comp) :
                              uct_iface_flush(m_iface, 0, &fc.comp);
        if (status != UCS_ERR_NO_RESOURCE) {
            return flush_wait(*this, &fc, status, deadline - now(), what);
        }
        progress();
        GIPC_ASSERT(now() < deadline) << what << ": NO_RESOURCE";
    }
}

ucs_status_t peer::flush_ep(double timeout)
{
    return flush(true, timeout);
}

ucs_status_t peer::flush_iface(double timeout)
{
    return flush(false, timeout);
}


/* ---- peer: accounting ---------------------------------------------------- */

gaudi_emu_stats_t peer::emu_stats() const
{
    gaudi_emu_stats_t stats;

    memset(&stats, 0, sizeof(stats));
    GIPC_ASSERT(m_emu_stats_fn != NULL);
    GIPC_ASSERT(m_emu_stats_fn(&stats) == 0);
    return stats;
}

size_t peer::fd_count() const
{
    return counted_fds().size();
}

snapshot peer::take_snapshot() const
{
    snapshot s;

    s.emu = emu_stats();
    s.fds = counted_fds();
    return s;
}

bool peer::check_leaks(const std::string &when, double timeout)
{
    double start = now();
    snapshot cur;
    bool equal;

    equal = wait_for(
            [this, &cur]() {
                cur = take_snapshot();
                return gaudi_test::stats_equal(cur.emu, m_baseline.emu) &&
                       (cur.fds.size() == m_baseline.fds.size());
            },
            timeout);

    if (equal) {
        info("leak check %s: ok after %.3f s (%s, %zu fds)", when.c_str(),
             now() - start, stats_string(cur.emu).c_str(), cur.fds.size());
        return true;
    }

    GIPC_EXPECT(false) << "leak check " << when << " (waited " << timeout
                       << " s):\n    start: " << stats_string(m_baseline.emu)
                       << ", " << m_baseline.fds.size() << " fds"
                       << "\n    now:   " << stats_string(cur.emu) << ", "
                       << cur.fds.size() << " fds"
                       << "\n    new fds:"
                       << gaudi_test::fd_diff(cur.fds, m_baseline.fds)
                       << "\n    gone fds:"
                       << gaudi_test::fd_diff(m_baseline.fds, cur.fds);
    return false;
}


/* ---- scenarios and main -------------------------------------------------- */

static std::map<std::string, scenario_fn_t> &scenarios()
{
    static std::map<std::string, scenario_fn_t> table;
    return table;
}

scenario_reg::scenario_reg(const char *name, scenario_fn_t fn)
{
    if (!scenarios().insert({name, fn}).second) {
        fprintf(stderr, "gaudi_ipc_mp_test: two scenarios are named %s\n",
                name);
        abort();
    }
}

scenario_fn_t find_scenario(const std::string &name)
{
    std::map<std::string, scenario_fn_t>::iterator it = scenarios().find(name);

    return (it == scenarios().end()) ? NULL : it->second;
}

int child_main(int argc, char **argv)
{
    peer::params_t params;
    std::string scenario;
    scenario_fn_t fn;
    int index = -1;
    int fd    = -1;
    int i;

    setvbuf(stdout, NULL, _IOLBF, 0);
    for (i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if ((arg == ROLE_ARG) && (i + 1 < argc)) {
            scenario = argv[++i];
        } else if ((arg == "--index") && (i + 1 < argc)) {
            index = atoi(argv[++i]);
        } else if ((arg == "--fd") && (i + 1 < argc)) {
            fd = atoi(argv[++i]);
        } else if (arg.find('=') != std::string::npos) {
            size_t eq = arg.find('=');
            params[arg.substr(0, eq)] = arg.substr(eq + 1);
        } else {
            GIPC_ASSERT(false) << "bad argument '" << arg << "'";
        }
    }

    fn = find_scenario(scenario);
    GIPC_ASSERT(fn != NULL) << "unknown scenario '" << scenario << "'";
    GIPC_ASSERT((index == 0) || (index == 1)) << index;
    GIPC_ASSERT(fd >= 0);

    /* we were exec'ed as /proc/self/exe: a name for ps and gdb */
    prctl(PR_SET_NAME, ("gipc-child" + std::to_string(index)).c_str());
    info("child %d: scenario %s, pid %d", index, scenario.c_str(), getpid());
    {
        peer p(index, fd, params);
        fn(p);
    }

    info("child %d: %u failure(s)", index, failures());
    fflush(NULL);
    return (failures() == 0) ? 0 : 1;
}

} /* namespace gipc */
