/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_CS_TEST_H_
#define GAUDI_EMU_CS_TEST_H_

#include "emu_test.h"

#include <sys/eventfd.h>

/* Fixture for the CS / WAIT_CS / LIN_DMA tests: an open compute node and a
 * userptr-mapped user CB (Gaudi2) or a kernel CB (Gaudi1) */
class emu_cs_test : public emu_test {
protected:
    enum { CB_SIZE = 64 * 1024 };

    virtual void SetUp()
    {
        emu_test::SetUp();
        m_fd     = -1;
        m_cb     = NULL;
        m_cb_va  = 0;
        m_kcb    = 0;
        m_kcb_ptr = NULL;
    }

    virtual void TearDown()
    {
        if (m_fd >= 0) {
            m_ops->close(m_fd);
        }
        free(m_cb);
        emu_test::TearDown();
    }

    bool gaudi1() const
    {
        return m_cfg.asic == UCT_GAUDI_ASIC_GAUDI1;
    }

    void open_ok()
    {
        init_ok();
        m_fd = open_node(0, false);
        ASSERT_GE(m_fd, 0) << strerror(errno);
        ASSERT_EQ(0, posix_memalign(&m_cb, 4096, CB_SIZE));
        memset(m_cb, 0, CB_SIZE);
        ASSERT_EQ(0, map_host(m_fd, m_cb, CB_SIZE, &m_cb_va));

        if (gaudi1()) {
            union hl_cb_args args = cb_args(HL_CB_OP_CREATE, CB_SIZE);

            ASSERT_EQ(0, ioctl_err(m_fd, UCT_GAUDI_IOC_CB, &args));
            m_kcb     = args.out.cb_handle;
            m_kcb_ptr = m_ops->mmap(NULL, CB_SIZE, PROT_READ | PROT_WRITE,
                                    MAP_SHARED, m_fd, m_kcb);
            ASSERT_NE(MAP_FAILED, m_kcb_ptr);
        }
    }

    /* An eventfd registered for the device's events; -1 on failure */
    int register_eventfd(int fd)
    {
        struct hl_info_args args = info_args(HL_INFO_REGISTER_EVENTFD);
        int efd;

        efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (efd < 0) {
            return -1;
        }
        args.eventfd = efd;
        if (ioctl_err(fd, UCT_GAUDI_IOC_INFO, &args) != 0) {
            close(efd);
            return -1;
        }
        return efd;
    }

    static struct uct_gaudi_pkt_lin_dma lin_dma(uint64_t src, uint64_t dst,
                                                uint32_t size, bool memset_op,
                                                bool g1)
    {
        struct uct_gaudi_pkt_lin_dma pkt;

        pkt.tsize    = size;
        pkt.ctl      = (UCT_GAUDI_PKT_LIN_DMA << UCT_GAUDI_PKT_OPCODE_SHIFT) |
                       UCT_GAUDI2_LIN_DMA_MSG_BARRIER;
        if (g1) {
            pkt.ctl |= UCT_GAUDI1_LIN_DMA_LIN | UCT_GAUDI1_LIN_DMA_REG_BARRIER;
        }
        if (memset_op) {
            pkt.ctl |= UCT_GAUDI2_LIN_DMA_MEMSET;
        }
        pkt.src_addr = src;
        pkt.dst_addr = dst;
        return pkt;
    }

    /* Write raw packets into the CB (user CB, or kernel CB on Gaudi1) */
    uint32_t write_cb(const void *pkts, size_t size)
    {
        memcpy(gaudi1() ? m_kcb_ptr : m_cb, pkts, size);
        return size;
    }

    int submit_raw(uint32_t cb_size, uint64_t *seq, uint32_t queue = 0,
                   uint32_t cs_flags = 0, int chunk_flags = -1,
                   uint64_t cb_handle = 0)
    {
        struct hl_cs_chunk chunk = zeroed<struct hl_cs_chunk>();
        union hl_cs_args args    = zeroed<union hl_cs_args>();
        int err;

        chunk.cb_handle      = cb_handle ? cb_handle :
                               gaudi1() ? m_kcb : m_cb_va;
        chunk.queue_index    = queue;
        chunk.cb_size        = cb_size;
        chunk.cs_chunk_flags = (chunk_flags >= 0) ? chunk_flags :
                               gaudi1() ? 0 : HL_CS_CHUNK_FLAGS_USER_ALLOC_CB;

        args.in.chunks_execute     = (uintptr_t)&chunk;
        args.in.num_chunks_execute = 1;
        args.in.cs_flags           = cs_flags;
        err                        = ioctl_err(m_fd, UCT_GAUDI_IOC_CS, &args);
        *seq                       = args.out.seq;
        return err;
    }

    /* One LIN_DMA in the CB, submitted; returns errno */
    int dma(uint64_t src, uint64_t dst, uint32_t size, uint64_t *seq,
            bool memset_op = false, uint32_t queue = 0)
    {
        struct uct_gaudi_pkt_lin_dma pkt = lin_dma(src, dst, size, memset_op,
                                                   gaudi1());

        return submit_raw(write_cb(&pkt, sizeof(pkt)), seq, queue);
    }

    int wait(uint64_t seq, uint64_t timeout_us, struct hl_wait_cs_out *out,
             uint32_t flags = 0)
    {
        union hl_wait_cs_args args = zeroed<union hl_wait_cs_args>();
        int err;

        args.in.seq        = seq;
        args.in.timeout_us = timeout_us;
        args.in.flags      = flags;
        err                = ioctl_err(m_fd, UCT_GAUDI_IOC_WAIT_CS, &args);
        *out               = args.out;
        return err;
    }

    /* Wait for completion; returns the final status */
    uint32_t wait_done(uint64_t seq, int *err = NULL)
    {
        struct hl_wait_cs_out out;
        int e;

        do {
            e = wait(seq, 5000000, &out);
        } while ((e == 0) && (out.status == HL_WAIT_CS_STATUS_BUSY));

        if (err != NULL) {
            *err = e;
        }
        return out.status;
    }

    /* Device address of a buffer: DRAM VA (Gaudi2) or HBM phys (Gaudi1) */
    uint64_t dev_buffer(uint64_t size)
    {
        uint64_t handle, va;

        if (gaudi1()) {
            return hw_ip(m_fd).dram_base_address + (2 << 20);
        }
        EXPECT_EQ(0, alloc(m_fd, size, &handle));
        EXPECT_EQ(0, map_device(m_fd, handle, &va));
        return va;
    }

    int      m_fd;
    void     *m_cb;
    uint64_t m_cb_va;
    uint64_t m_kcb;
    void     *m_kcb_ptr;
};

#endif
