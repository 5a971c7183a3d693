/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_TEST_IPC_CHILD_H_
#define UCT_GAUDI_TEST_IPC_CHILD_H_

/*
 * The "role" side of the gaudi_ipc multi-process tests. The gtest parent
 * (gaudi_ipc_mp_test.cc) starts two copies of the test binary with
 * "--role <scenario>"; each of them owns one emulated Gaudi, opens the plain
 * UCT API on the gaudi_ipc transport, and runs the same scenario function,
 * branching on its index (0 or 1). The two talk over a SOCK_SEQPACKET
 * socketpair (the "channel") made by the parent.
 *
 * No gtest here: a child reports problems with GIPC_EXPECT / GIPC_ASSERT
 * (printed as "FAIL file:line: ...") and its exit code, which the parent
 * judges. Facts worth reporting are printed as "RESULT key=value" lines.
 */

#include "gt_emu.h"
#include "gt_proc.h"

#include <uct/api/uct.h>
#include <uct/gaudi/ipc/gaudi_ipc_proto.h>

#include <stdint.h>
#include <functional>
#include <list>
#include <map>
#include <sstream>
#include <string>
#include <vector>


namespace gipc {

/* Command line of a child: <exe> --role <scenario> --index <i> --fd <n>
 * [key=value ...] */
extern const char *const ROLE_ARG;

/* The channel fd number in the child (the parent dup2()s it there) */
static const int CHANNEL_FD = 100;

/* Default deadline of one wait inside a child, seconds */
static const double WAIT_TIMEOUT = 20.0;


/* ---- checks -------------------------------------------------------------- */

/* Number of failed checks in this process */
unsigned failures();

/* One failed check; prints itself at destruction, exits if fatal */
class check_failure {
public:
    check_failure(const char *file, int line, const char *expr, bool fatal);
    ~check_failure();

    template <typename T> check_failure &operator<<(const T &value)
    {
        m_msg << value;
        return *this;
    }

private:
    std::ostringstream m_msg;
    const char         *m_file;
    int                m_line;
    bool               m_fatal;
};

#define GIPC_AMBIGUOUS_ELSE_BLOCKER_ \
    switch (0) \
    case 0: \
    default:

#define GIPC_CHECK_(_cond, _fatal) \
    GIPC_AMBIGUOUS_ELSE_BLOCKER_ \
    if (_cond) { \
    } else \
        ::gipc::check_failure(__FILE__, __LINE__, #_cond, _fatal)

#define GIPC_EXPECT(_cond) GIPC_CHECK_(_cond, false)
#define GIPC_ASSERT(_cond) GIPC_CHECK_(_cond, true)

#define GIPC_EXPECT_OK(_status) \
    GIPC_EXPECT((_status) == UCS_OK) << ucs_status_string(_status) << " "
#define GIPC_ASSERT_OK(_status) \
    GIPC_ASSERT((_status) == UCS_OK) << ucs_status_string(_status) << " "

/* "RESULT key=value" line for the parent */
void result(const std::string &key, const std::string &value);
void result(const std::string &key, uint64_t value);

/* Informational line */
void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Seconds of CLOCK_MONOTONIC */
using gaudi_test::now;


/* ---- data patterns ------------------------------------------------------- */

/* Fill @a buf with the pattern @a seed (a function of seed and position) */
void fill_pattern(void *buf, size_t length, uint64_t seed);

/**
 * Compare @a actual with pattern @a seed; on mismatch EXPECT-fail with the
 * first bad offset and the number of bad bytes (prefixed by @a what).
 * Returns true if equal.
 */
bool verify_pattern(const void *actual, size_t length, uint64_t seed,
                    const std::string &what);

/* Same, against a constant byte */
bool verify_fill(const void *actual, size_t length, uint8_t value,
                 const std::string &what);


/* ---- channel to the other child ------------------------------------------ */

enum msg_type {
    MSG_HELLO   = 1,   /* wire_hello */
    MSG_REGIONS = 2,   /* wire_region[] */
    MSG_SYNC    = 3,   /* uint32_t tag */
    MSG_VALUE   = 4    /* uint64_t */
};

class channel {
public:
    explicit channel(int fd) : m_fd(fd), m_peer_gone(false) {}

    void send(uint32_t type, const void *data, size_t length);

    /**
     * Receive one message of @a type, calling @a idle while waiting (the
     * worker's progress). Returns false if the peer closed the channel (it
     * exited or died); fatal on timeout or a message of another type.
     */
    bool recv(uint32_t type, std::vector<uint8_t> &data, double timeout,
              const std::function<void()> &idle);

private:
    int  m_fd;
    bool m_peer_gone;
};


/* What a child tells the other one about itself */
struct wire_hello {
    int32_t  pid;
    uint32_t index;
    uint32_t dev_addr_len;
    uint32_t iface_addr_len;
    uint8_t  dev_addr[64];
    uint8_t  iface_addr[64];
};

/* An exported region: where it is and its packed rkey */
struct wire_region {
    uint64_t address;
    uint64_t length;
    uint32_t rkey_len;
    uint32_t id;       /* scenario's own number */
    uint8_t  rkey[128];
};


/* ---- accounting ---------------------------------------------------------- */

/* The emulator's accounting and our fds that count (gaudi_test::list_fds:
 * the HBM backing files of our state dir left out) */
typedef gaudi_test::emu_snapshot snapshot;

using gaudi_test::stats_string;


/* ---- a child's UCT context ----------------------------------------------- */

/* A Gaudi buffer of this process, maybe registered (exported) */
struct region {
    void                   *address;
    size_t                 length;
    uct_mem_h              memh;       /* NULL if not registered */
    bool                   md_alloc;   /* allocated by gaudi_cpy mem_alloc */
    uct_allocated_memory_t mem;        /* valid if md_alloc */
    uint32_t               id;
};

/* A peer's region, as received */
struct remote_region {
    uint64_t               address;
    uint64_t               length;
    uint32_t               id;
    std::vector<uint8_t>   packed;
};

/* One zcopy operation and its completion */
struct op {
    uct_completion_t  comp;        /* first: the completion callback casts */
    uct_pending_req_t pending;     /* for pending_add */
    class peer        *owner;
    bool              is_put;
    uct_iov_t         iov;
    uint64_t          remote_addr;
    uct_rkey_t        rkey;
    bool              done;
    ucs_status_t      status;      /* final status */
};


class peer {
public:
    typedef std::map<std::string, std::string> params_t;

    peer(unsigned index, int channel_fd, const params_t &params);

    /* ---- identity and parameters ---- */
    unsigned index() const { return m_index; }
    pid_t peer_pid() const { return m_peer_hello.pid; }
    std::string param(const std::string &key, const std::string &def) const;
    long param_int(const std::string &key, long def) const;

    /* ---- lifetime ---- */
    /* Open MD/worker/iface, exchange addresses, take the baseline */
    void setup();
    /* Create the endpoint to the peer */
    void connect();
    /* Open the gaudi_ipc MD once more (the caller closes it) */
    uct_md_h reopen_md();
    /* Release everything, leak check, close (see ipc_child.cc) */
    void teardown();
    /* The peer died on purpose: skip the barriers with it */
    void set_peer_dead() { m_peer_dead = true; }

    /* ---- UCT objects ---- */
    uct_component_h component() const { return m_component; }
    uct_md_h md() const { return m_md; }
    uct_iface_h iface() const { return m_iface; }
    uct_ep_h ep() const { return m_ep; }
    const uct_iface_attr_t &iface_attr() const { return m_iface_attr; }
    const uct_md_attr_t &md_attr() const { return m_md_attr; }
    const wire_hello &my_hello() const { return m_my_hello; }
    const wire_hello &peer_hello() const { return m_peer_hello; }
    void progress();
    /* Whether the process of @a dev_addr and @a iface_addr is reachable */
    bool reachable(const void *dev_addr, const void *iface_addr) const;
    /* Progress until @a pred or @a timeout; false on timeout */
    bool wait_for(const std::function<bool()> &pred,
                  double timeout = WAIT_TIMEOUT);

    /* ---- error handler ---- */
    unsigned err_count() const { return m_err_count; }
    ucs_status_t err_status() const { return m_err_status; }

    /* ---- channel ---- */
    void send_regions(const std::vector<const region*> &regions);
    /* false if the peer is gone */
    bool recv_regions(std::vector<remote_region> &regions);
    /* The peer's regions, and the first one's key unpacked (fatal if the
     * peer is gone or the key does not unpack) */
    void recv_and_unpack(std::vector<remote_region> &regions,
                         uct_rkey_bundle_t *bundle);
    void send_value(uint64_t value);
    bool recv_value(uint64_t &value);
    /* Both sides meet at @a tag; false if the peer is gone */
    bool barrier(uint32_t tag);
    void send_sync(uint32_t tag);
    bool wait_sync(uint32_t tag, double timeout = WAIT_TIMEOUT);
    /* Wait until the peer closes the channel (it died) */
    bool wait_peer_gone(double timeout);

    /* ---- memory ---- */
    region *alloc(size_t length, uint32_t id = 0);
    region *alloc_md(size_t length, uint32_t id = 0); /* gaudi_cpy mem_alloc */
    void reg(region *r);                              /* gaudi_ipc mem_reg */
    void dereg(region *r);
    void free(region *r);                             /* dereg if needed */
    void pack(const region *r, wire_region *wire) const;
    /* host <-> device, fatal on error */
    void to_dev(void *dev, const void *host, size_t length);
    void from_dev(void *host, const void *dev, size_t length);
    void dev_memset(void *dev, uint8_t value, size_t length);
    void dev_pattern(void *dev, size_t length, uint64_t seed);
    bool dev_verify_pattern(const void *dev, size_t length, uint64_t seed,
                            const std::string &what);
    bool dev_verify_fill(const void *dev, size_t length, uint8_t value,
                         const std::string &what);

    /* ---- remote keys ---- */
    ucs_status_t unpack(const void *packed, uct_rkey_bundle_t *bundle);
    void release(uct_rkey_bundle_t *bundle);

    /* ---- operations ---- */
    void op_init(op *o, bool is_put, void *local, size_t length,
                 uct_mem_h memh, uint64_t remote_addr, uct_rkey_t rkey);
    /* Post; on NO_RESOURCE progress and retry (or pending_add if
     * @a use_pending); returns the status of the post */
    ucs_status_t op_post(op *o, bool use_pending = false);
    /* Post and wait; returns the final status */
    ucs_status_t op_run(op *o, double timeout = WAIT_TIMEOUT);
    bool op_wait(const std::vector<op*> &ops, double timeout = WAIT_TIMEOUT);
    ucs_status_t flush_ep(double timeout = WAIT_TIMEOUT);
    ucs_status_t flush_iface(double timeout = WAIT_TIMEOUT);
    unsigned no_resource_count() const { return m_no_resource; }

    /* ---- accounting ---- */
    snapshot take_snapshot() const;
    const snapshot &baseline() const { return m_baseline; }
    gaudi_emu_stats_t emu_stats() const;
    /* Our open fds that count for the leak check */
    size_t fd_count() const;
    bool has_emu_stats() const { return m_emu_stats_fn != NULL; }
    /* Wait until the accounting equals the baseline; EXPECT-fail with the
     * differences if it does not within @a timeout */
    bool check_leaks(const std::string &when, double timeout = 3.0);

private:
    static ucs_status_t err_handler(void *arg, uct_ep_h ep,
                                    ucs_status_t status);
    static void op_completed(uct_completion_t *self);
    static ucs_status_t op_pending_cb(uct_pending_req_t *self);
    static void flush_completed(uct_completion_t *self);
    /* uct_ep_flush() (@a ep) or uct_iface_flush(), until it completes */
    ucs_status_t flush(bool ep, double timeout);
    ucs_status_t op_post_once(op *o);

    void open_component(const char *name, uct_component_h *comp_p,
                        std::string *md_name_p);
    void open_md();
    void open_iface();
    void find_emu_stats();
    void warm_up();
    void exchange_hello();
    void close_all();

    unsigned                    m_index;
    channel                     m_chan;
    params_t                    m_params;
    bool                        m_peer_dead;

    uct_component_h             *m_components;
    unsigned                    m_num_components;
    uct_component_h             m_component;     /* gaudi_ipc */
    uct_component_h             m_cpy_component; /* gaudi_cpy, if needed */
    uct_md_h                    m_md;
    uct_md_h                    m_cpy_md;
    uct_md_attr_t               m_md_attr;
    ucs_async_context_t         *m_async;
    uct_worker_h                m_worker;
    uct_iface_h                 m_iface;
    uct_iface_attr_t            m_iface_attr;
    uct_ep_h                    m_ep;

    wire_hello                  m_my_hello;
    wire_hello                  m_peer_hello;

    volatile unsigned           m_err_count;
    volatile ucs_status_t       m_err_status;
    unsigned                    m_no_resource;

    std::string                 m_md_name;
    std::list<region>           m_regions;
    std::list<uct_rkey_bundle_t*> m_bundles;     /* not yet released */
    std::vector<uint8_t>        m_host;          /* staging for to/from_dev */
    std::vector<uint8_t>        m_host2;

    gaudi_emu_get_stats_func_t  m_emu_stats_fn;
    snapshot                    m_baseline;
};


/* ---- scenarios ----------------------------------------------------------- */

typedef void (*scenario_fn_t)(peer &p);

/* Registers a scenario by name at static initialization (a name taken
 * twice aborts) */
class scenario_reg {
public:
    scenario_reg(const char *name, scenario_fn_t fn);
};

scenario_fn_t find_scenario(const std::string &name);

#define GIPC_SCENARIO(_name) \
    static void gipc_scenario_##_name(::gipc::peer &p); \
    static ::gipc::scenario_reg gipc_scenario_reg_##_name( \
            #_name, gipc_scenario_##_name); \
    static void gipc_scenario_##_name(::gipc::peer &p)

/* Entry point of a child: argv[1] == ROLE_ARG */
int child_main(int argc, char **argv);

} /* namespace gipc */

#endif
