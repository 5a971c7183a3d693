/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * The copy transport's zero-copy operations when the DMA queue is full
 * (base/gaudi_ep.c), through the UCT API as UCP uses it. Which behaviour is
 * right depends on the UCX the module is built against
 * (gaudi_ucx_compat.h, UCT_GAUDI_COPY_QUEUES_WHEN_FULL): UCP 1.13.1 gets
 * UCS_ERR_NO_RESOURCE and retries from the pending queue; newer UCP stages
 * memory-type copies with no pending path, so the operation waits in the
 * iface's backlog instead and completes in order, and a flush covers it.
 */

#include "iface_test.h"

#include <cstring>
#include <vector>

using namespace gaudi_drv_test;

namespace {

/* Operations of a test: how many completed, with which status, and how
 * many had completed when the flush did */
struct op_log {
    unsigned     done     = 0;
    unsigned     at_flush = 0;
    ucs_status_t status   = UCS_OK;
};

struct op_comp {
    uct_completion_t super = {};
    op_log           *log  = NULL;
};

void op_done(uct_completion_t *self)
{
    op_comp *comp = ucs_container_of(self, op_comp, super);

    ++comp->log->done;
    if (self->status != UCS_OK) {
        comp->log->status = self->status;
    }
}

void flush_done(uct_completion_t *self)
{
    op_comp *comp = ucs_container_of(self, op_comp, super);

    comp->log->at_flush = comp->log->done;
}

const unsigned num_ops      = 6;
const size_t   op_size      = 256 * 1024;
const char     max_inflight[] = "2";

/* Arm @a comp for one more operation of @a log */
void arm(op_comp &comp, op_log &log)
{
    comp.super = {op_done, 1, UCS_OK};
    comp.log   = &log;
}

/* Two command buffers, each command in flight for 50 ms */
void set_small_queue(emu_node &node)
{
    node.env("UCX_GAUDI_COPY_MAX_INFLIGHT", max_inflight);
    node.env("UCX_GAUDI_EMU_LATENCY", "50ms");
}

void fill(std::vector<char> &buf, unsigned seed)
{
    for (size_t i = 0; i < buf.size(); ++i) {
        buf[i] = (char)(i * 13 + seed);
    }
}

} /* namespace */

/* More zero-copy operations than command buffers: queued in order (newer
 * UCX) or refused with UCS_ERR_NO_RESOURCE until room frees (1.13.1); all
 * data arrives either way */
TEST(gaudi_iface, zcopy_when_dma_queue_full) {
    emu_node node(1);

    set_small_queue(node);
    run_with_iface(node, num_ops * op_size,
                   [](copy_iface &c, uct_gaudi_dev_t *dev,
                      uct_gaudi_mem_t &mem) {
        std::vector<std::vector<char> > src(num_ops,
                                            std::vector<char>(op_size));
        std::vector<char> dst(op_size);
        std::vector<op_comp> comps(num_ops);
        op_log log = {0, 0, UCS_OK};
        op_comp flush;
        ucs_status_t status;
        unsigned i, posted, refused;
        uct_iov_t iov;

        posted = refused = 0;
        for (i = 0; i < num_ops; ++i) {
            fill(src[i], i);
            arm(comps[i], log);
            set_iov(&iov, src[i].data(), op_size);
            do {
                status = uct_ep_put_zcopy(c.ep, &iov, 1, mem.dva + i * op_size,
                                          0, &comps[i].super);
                if (status == UCS_ERR_NO_RESOURCE) {
                    /* again once progress freed a command buffer */
                    ++refused;
                    uct_worker_progress(c.worker);
                }
            } while (status == UCS_ERR_NO_RESOURCE);
            ASSERT_EQ(UCS_INPROGRESS, status) << "operation " << i;
            ++posted;
        }

        if (UCT_GAUDI_COPY_QUEUES_WHEN_FULL) {
            /* none refused, none done yet: 4 of them wait for room */
            EXPECT_EQ(0u, refused);
            EXPECT_EQ(0u, log.done);
        } else {
            EXPECT_GE(refused, 1u);
        }

        /* a flush covers every operation posted before it */
        flush.super = {flush_done, 1, UCS_OK};
        flush.log   = &log;
        status      = uct_ep_flush(c.ep, 0, &flush.super);
        if (status == UCS_INPROGRESS) {
            while (flush.super.count > 0) {
                uct_worker_progress(c.worker);
            }
            EXPECT_EQ(UCS_OK, flush.super.status);
        } else {
            ASSERT_EQ(UCS_OK, status);
            log.at_flush = log.done;
        }
        EXPECT_EQ(num_ops, log.at_flush);
        EXPECT_EQ(num_ops, log.done);
        EXPECT_EQ(UCS_OK, log.status);

        for (i = 0; i < num_ops; ++i) {
            ASSERT_EQ(UCS_OK, uct_gaudi_dma_copy_host(
                                      dev, dst.data(),
                                      (void*)(mem.dva + i * op_size), op_size,
                                      UCT_GAUDI_DMA_D2H));
            EXPECT_EQ(0, memcmp(src[i].data(), dst.data(), op_size))
                    << "operation " << i;
        }
    });
}

/* Closing the iface with operations still in the backlog ends them with
 * UCS_ERR_CANCELED; those submitted complete */
TEST(gaudi_iface, backlog_canceled_at_close) {
    emu_node node(1);

    if (!UCT_GAUDI_COPY_QUEUES_WHEN_FULL) {
        GTEST_SKIP() << "no backlog where UCP retries from the pending queue "
                        "(UCX 1.13.1)";
    }

    set_small_queue(node);
    node.run([&]() {
        std::vector<char> src(op_size, 5);
        std::vector<op_comp> comps(num_ops);
        op_log log = {0, 0, UCS_OK};
        uct_gaudi_dev_t *dev;
        uct_gaudi_mem_t mem;
        unsigned i, canceled;
        uct_iov_t iov;
        copy_iface c;

        ASSERT_NO_FATAL_FAILURE(open_iface_and_device(&c, &dev));
        ASSERT_EQ(UCS_OK, uct_gaudi_mem_alloc(dev, num_ops * op_size, &mem));

        for (i = 0; i < num_ops; ++i) {
            arm(comps[i], log);
            set_iov(&iov, src.data(), op_size);
            ASSERT_EQ(UCS_INPROGRESS,
                      uct_ep_put_zcopy(c.ep, &iov, 1, mem.dva + i * op_size,
                                       0, &comps[i].super));
        }

        uct_ep_destroy(c.ep);
        uct_iface_close(c.iface);
        EXPECT_EQ(num_ops, log.done);
        for (i = 0, canceled = 0; i < num_ops; ++i) {
            EXPECT_EQ(0, comps[i].super.count) << "operation " << i;
            if (comps[i].super.status == UCS_ERR_CANCELED) {
                ++canceled;
            } else {
                EXPECT_EQ(UCS_OK, comps[i].super.status) << "operation " << i;
            }
        }
        /* 2 command buffers: the other 4 never left the backlog */
        EXPECT_EQ(num_ops - 2, canceled);

        uct_md_close(c.md);
        uct_worker_destroy(c.worker);
        ucs_async_context_destroy(c.async);
        EXPECT_EQ(UCS_OK, uct_gaudi_mem_free(dev, &mem));
        uct_gaudi_own_release(dev);
    });
}
