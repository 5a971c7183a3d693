/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * What the transports report to UCP about their speed (base/gaudi_probe.h):
 * with LAT and BW "auto", what the device's DMA was measured to do when the
 * first interface opened, once per device and process; what the user set
 * always wins; UCX_GAUDI_PERF_PROBE=n gives the constants. Under the
 * emulator's Gaudi2 profile no measurement can beat the model, so the
 * figures are checked against its latency and its link, never against a
 * time of this machine.
 */

#include "iface_test.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>

extern "C" {
#include <uct/api/v2/uct_v2.h>
}

using namespace gaudi_drv_test;

namespace {

/* the profile's PCIe link, bytes/s per direction (docs/emulator.md §8b) */
const double link_bw = 25e9;

/* what "auto" is when nothing was measured */
const double auto_bw      = 24000.0 * UCS_MBYTE;
const double auto_latency = 8e-6;

uct_iface_attr_t query(const copy_iface &c)
{
    uct_iface_attr_t attr;

    EXPECT_EQ(UCS_OK, uct_iface_query(c.iface, &attr));
    return attr;
}

/* UCP's question for one operation between two memory types */
double estimate_bw(const copy_iface &c, uct_ep_operation_t op,
                   ucs_memory_type_t local, ucs_memory_type_t remote)
{
    uct_perf_attr_t perf;

    perf.field_mask         = UCT_PERF_ATTR_FIELD_OPERATION |
                              UCT_PERF_ATTR_FIELD_LOCAL_MEMORY_TYPE |
                              UCT_PERF_ATTR_FIELD_REMOTE_MEMORY_TYPE |
                              UCT_PERF_ATTR_FIELD_BANDWIDTH;
    perf.operation          = op;
    perf.local_memory_type  = local;
    perf.remote_memory_type = remote;
    EXPECT_EQ(UCS_OK, uct_iface_estimate_perf(c.iface, &perf));
    return perf.bandwidth.shared + perf.bandwidth.dedicated;
}

uint64_t model_cs()
{
    gaudi_emu_stats_t stats;

    EXPECT_TRUE(emu_stats(&stats));
    return stats.model_cs;
}

emu_node &profile(emu_node &node, const char *latency)
{
    return node.env("UCX_GAUDI_EMU_PROFILE", "gaudi2")
               .env("UCX_GAUDI_EMU_PROFILE_LATENCY", latency);
}

} /* namespace */

/* The latency reported is the device's: under a profile with a submission
 * latency of 300 us, nothing measured can be less */
TEST(gaudi_iface_perf, latency_measured) {
    emu_node node(1);

    profile(node, "300us").run([]() {
        copy_iface c;

        ASSERT_NO_FATAL_FAILURE(open_copy_iface(&c));
        /* 0.9: the model's clock and UCS's are calibrated apart; above:
         * the smallest of 8 copies, not their sum nor another unit */
        EXPECT_GE(query(c).latency.c, 300e-6 * 0.9);
        EXPECT_LE(query(c).latency.c, 3 * 300e-6 + 1e-3);
        EXPECT_GT(model_cs(), 0u);
        close_copy_iface(&c);
    });
}

/* The bandwidth crosses the link: the measurement copies host to host,
 * which the DMA engine reads in over the link and writes back over it, and
 * cannot beat it (it did, at 44 GB/s, while the emulator timed such a copy
 * as if it stayed in the HBM). Device to device is not measured. */
TEST(gaudi_iface_perf, bandwidth_within_link) {
    emu_node node(1);

    profile(node, "2us").run([]() {
        copy_iface c;

        ASSERT_NO_FATAL_FAILURE(open_copy_iface(&c));
        uct_iface_attr_t attr = query(c);
        EXPECT_GE(attr.bandwidth.shared, 1e8); /* bytes/s, not MB/s */
        EXPECT_LE(attr.bandwidth.shared, link_bw * 1.1);
        EXPECT_NE(auto_bw, attr.bandwidth.shared);

        double h2d = estimate_bw(c, UCT_EP_OP_PUT_ZCOPY,
                                 UCS_MEMORY_TYPE_HOST, UCS_MEMORY_TYPE_GAUDI);
        double d2h = estimate_bw(c, UCT_EP_OP_GET_ZCOPY,
                                 UCS_MEMORY_TYPE_HOST, UCS_MEMORY_TYPE_GAUDI);
        EXPECT_LE(h2d, link_bw * 1.1);
        EXPECT_LE(d2h, link_bw * 1.1);
        /* one figure for both PCI queues (their measurements differ by
         * noise only, and a put or a get must not be chosen on noise) */
        EXPECT_DOUBLE_EQ(attr.bandwidth.shared, h2d);
        EXPECT_DOUBLE_EQ(attr.bandwidth.shared, d2h);
        /* on-device copies are not measured, and not slower than ones
         * across the link */
        EXPECT_DOUBLE_EQ(std::max(auto_bw, attr.bandwidth.shared),
                         estimate_bw(c, UCT_EP_OP_PUT_ZCOPY,
                                     UCS_MEMORY_TYPE_GAUDI,
                                     UCS_MEMORY_TYPE_GAUDI));
        close_copy_iface(&c);
    });
}

/* Once per device and process: a second interface reuses the first one's
 * figures and submits nothing at its open */
TEST(gaudi_iface_perf, measured_once) {
    emu_node node(1);

    profile(node, "2us").run([]() {
        copy_iface c1, c2;

        ASSERT_NO_FATAL_FAILURE(open_copy_iface(&c1));
        uint64_t first = model_cs();
        EXPECT_GT(first, 0u);
        ASSERT_NO_FATAL_FAILURE(open_copy_iface(&c2));
        EXPECT_EQ(first, model_cs());
        EXPECT_EQ(query(c1).latency.c, query(c2).latency.c);
        EXPECT_EQ(query(c1).bandwidth.shared, query(c2).bandwidth.shared);
        close_copy_iface(&c2);
        close_copy_iface(&c1);
    });
}

/* What the user sets wins, and then nothing is measured */
TEST(gaudi_iface_perf, knobs_win) {
    emu_node node(1);

    profile(node, "2us").env("UCX_GAUDI_COPY_LAT", "5us")
                        .env("UCX_GAUDI_COPY_BW", "3000MBs").run([]() {
        copy_iface c;

        ASSERT_NO_FATAL_FAILURE(open_copy_iface(&c));
        EXPECT_NEAR(5e-6, query(c).latency.c, 1e-9); /* time units */
        EXPECT_DOUBLE_EQ(3000.0 * UCS_MBYTE, query(c).bandwidth.shared);
        EXPECT_DOUBLE_EQ(3000.0 * UCS_MBYTE,
                         estimate_bw(c, UCT_EP_OP_PUT_ZCOPY,
                                     UCS_MEMORY_TYPE_HOST,
                                     UCS_MEMORY_TYPE_GAUDI));
        EXPECT_EQ(0u, model_cs());
        close_copy_iface(&c);
    });
}

/* UCX_GAUDI_PERF_PROBE=n: the constants, and no copy at open */
TEST(gaudi_iface_perf, probe_off) {
    emu_node node(1);

    profile(node, "2us").env("UCX_GAUDI_PERF_PROBE", "n").run([]() {
        copy_iface c;

        ASSERT_NO_FATAL_FAILURE(open_copy_iface(&c));
        EXPECT_DOUBLE_EQ(auto_latency, query(c).latency.c);
        EXPECT_DOUBLE_EQ(auto_bw, query(c).bandwidth.shared);
        EXPECT_EQ(0u, model_cs());
        close_copy_iface(&c);
    });
}

/* The measurement's budget (20 ms) bounds how many copies it starts: with
 * a submission latency of 100 ms it makes one, and reports that latency */
TEST(gaudi_iface_perf, budget_bounds_copies) {
    emu_node node(1);

    profile(node, "100ms").run([]() {
        copy_iface c;

        ASSERT_NO_FATAL_FAILURE(open_copy_iface(&c));
        EXPECT_EQ(1u, model_cs());
        EXPECT_GE(query(c).latency.c, 0.1 * 0.9);
        EXPECT_DOUBLE_EQ(auto_bw, query(c).bandwidth.shared);
        close_copy_iface(&c);
    });
}

/* LAT set, BW auto: the latency is the user's, the bandwidth measured */
TEST(gaudi_iface_perf, lat_set_bw_measured) {
    emu_node node(1);

    profile(node, "2us").env("UCX_GAUDI_COPY_LAT", "5us").run([]() {
        copy_iface c;

        ASSERT_NO_FATAL_FAILURE(open_copy_iface(&c));
        uct_iface_attr_t attr = query(c);
        EXPECT_NEAR(5e-6, attr.latency.c, 1e-9);
        EXPECT_GE(attr.bandwidth.shared, 1e8);
        EXPECT_LE(attr.bandwidth.shared, link_bw * 1.1);
        EXPECT_NE(auto_bw, attr.bandwidth.shared);
        close_copy_iface(&c);
    });
}

/* The copy size of the measurement's debug line ("(N-byte copies)"), 0
 * none was logged; and how many such lines were */
static size_t measured_size;
static unsigned measured_count;

static ucs_log_func_rc_t
measured_size_log(const char *file, unsigned line, const char *function,
                  ucs_log_level_t level,
                  const ucs_log_component_config_t *comp_conf,
                  const char *message, va_list ap)
{
    char buf[1024];
    const char *size;
    va_list aq;

    va_copy(aq, ap);
    vsnprintf(buf, sizeof(buf), message, aq);
    va_end(aq);
    size = strstr(buf, "-byte copies)");
    if ((strstr(buf, "DMA measured in") != NULL) && (size != NULL)) {
        while ((size > buf) && isdigit(size[-1])) {
            --size;
        }
        measured_size = strtoul(size, NULL, 10);
        __atomic_add_fetch(&measured_count, 1, __ATOMIC_RELAXED);
    }

    /* the debug lines this test enables are not the run's output */
    return (level > UCS_LOG_LEVEL_WARN) ? UCS_LOG_FUNC_RC_STOP :
                                          UCS_LOG_FUNC_RC_CONTINUE;
}

/* @a fn with the measurement's debug line caught by measured_size_log
 * (UCS read UCX_LOG_LEVEL before the fork: the level is set here) */
static void with_measurement_log(const std::function<void()> &fn)
{
    ucs_log_level_t level = ucs_global_opts.log_component.log_level;

    ucs_global_opts.log_component.log_level = UCS_LOG_LEVEL_DEBUG;
    ucs_log_push_handler(measured_size_log);
    fn();
    ucs_log_pop_handler();
    ucs_global_opts.log_component.log_level = level;
}

/* A large bounce buffer does not make the open copy it: the bandwidth is
 * measured with 1 MiB copies at most (half the buffer below that) */
TEST(gaudi_iface_perf, copy_size_bounded) {
    static const struct {
        const char *bounce_size;
        size_t      copy_size;
    } cases[] = {{"64m", 1024 * 1024}, {"512k", 256 * 1024}};

    for (const auto &test : cases) {
        emu_node node(1);

        profile(node, "2us").env("UCX_GAUDI_COPY_BOUNCE_SIZE",
                                 test.bounce_size).run([&test]() {
            copy_iface c;

            with_measurement_log([&c]() { open_copy_iface(&c); });
            ASSERT_FALSE(::testing::Test::HasFatalFailure());
            EXPECT_EQ(test.copy_size, measured_size) << test.bounce_size;
            EXPECT_NE(auto_bw, query(c).bandwidth.shared);
            close_copy_iface(&c);
        });
    }
}

/* A copy of the measurement that fails the device (it times out, or the
 * driver aborts it) fails the iface's open: an iface on that device would
 * fail every transfer */
TEST(gaudi_iface_perf, failed_device_fails_open) {
    for (const char *fault : {"cs_timeout:1", "cs_abort:1"}) {
        emu_node node(1);

        profile(node, "2us").env("UCX_GAUDI_EMU_FAULTS", fault).run([]() {
            copy_iface c;

            ASSERT_NO_FATAL_FAILURE(open_copy_iface(&c, UCS_ERR_IO_ERROR));
            close_copy_iface(&c);
        });
    }
}

/* The driver's queue refuses the measurement's first copy ("queue full",
 * the device fine): the iface opens with the constants, the refusal does
 * not hold back its first operation, and nothing is kept: the next iface
 * measures */
TEST(gaudi_iface_perf, queue_full_at_open) {
    emu_node node(1);

    profile(node, "2us").env("UCX_GAUDI_EMU_FAULTS", "fail:cs:1:EAGAIN")
                        .run([]() {
        uct_pending_req_t req = {};
        copy_iface c1, c2;

        ASSERT_NO_FATAL_FAILURE(open_copy_iface(&c1));
        EXPECT_DOUBLE_EQ(auto_latency, query(c1).latency.c);
        EXPECT_DOUBLE_EQ(auto_bw, query(c1).bandwidth.shared);
        EXPECT_EQ(0u, model_cs());
        /* BUSY: there is room, send now (not queued behind a refusal) */
        EXPECT_EQ(UCS_ERR_BUSY, uct_ep_pending_add(c1.ep, &req, 0));

        ASSERT_NO_FATAL_FAILURE(open_copy_iface(&c2));
        EXPECT_GT(model_cs(), 0u);
        EXPECT_NE(auto_latency, query(c2).latency.c);
        EXPECT_NE(auto_bw, query(c2).bandwidth.shared);
        close_copy_iface(&c2);
        close_copy_iface(&c1);
    });
}

/* Two threads open an iface on the device at once: one measures, the other
 * waits for it and takes its figures (measuring together, each would time
 * the other's copies) */
TEST(gaudi_iface_perf, concurrent_opens) {
    emu_node node(1);

    profile(node, "2us").run([]() {
        copy_iface c[2];

        with_measurement_log([&c]() {
            std::thread other([&c]() { open_copy_iface(&c[1]); });
            open_copy_iface(&c[0]);
            other.join();
        });
        ASSERT_FALSE(::testing::Test::HasFatalFailure());
        EXPECT_EQ(1u, measured_count);
        EXPECT_EQ(query(c[0]).latency.c, query(c[1]).latency.c);
        EXPECT_EQ(query(c[0]).bandwidth.shared, query(c[1]).bandwidth.shared);
        close_copy_iface(&c[1]);
        close_copy_iface(&c[0]);
    });
}
