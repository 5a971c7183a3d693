/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_cs_test.h"

/*
 * The cheap ioctl path (docs/emulator.md, "Known differences"): the fd is
 * found in the emulator's table without an fstat, and pointers into the
 * caller's live stack are copied without process_vm_*(). What is not ours
 * must still get the kernel's errnos.
 */

class emu_ioctl_path : public emu_cs_test {
protected:
    int cs_with_chunks(struct hl_cs_chunk *chunk, uint64_t *seq)
    {
        union hl_cs_args args;
        int err;

        memset(&args, 0, sizeof(args));
        args.in.chunks_execute     = (uintptr_t)chunk;
        args.in.num_chunks_execute = 1;
        err                        = ioctl_err(m_fd, UCT_GAUDI_IOC_CS, &args);
        *seq                       = args.out.seq;
        return err;
    }

    struct hl_cs_chunk nop_chunk()
    {
        struct uct_gaudi_pkt_lin_dma pkt = lin_dma(0, 0, 0, false, false);
        struct hl_cs_chunk chunk;

        memset(&chunk, 0, sizeof(chunk));
        chunk.cb_handle      = m_cb_va;
        chunk.cb_size        = write_cb(&pkt, sizeof(pkt));
        chunk.cs_chunk_flags = HL_CS_CHUNK_FLAGS_USER_ALLOC_CB;
        return chunk;
    }
};

TEST_F(emu_ioctl_path, fds_that_are_not_ours) {
    open_ok();

    struct hl_info_device_status st;
    struct hl_info_args args = info_args(HL_INFO_DEVICE_STATUS, &st,
                                         sizeof(st));

    /* no such fd */
    EXPECT_EQ(-1, m_ops->ioctl(1000, code(UCT_GAUDI_IOC_INFO), &args));
    EXPECT_EQ(EBADF, errno);
    EXPECT_EQ(-1, m_ops->ioctl(-1, code(UCT_GAUDI_IOC_INFO), &args));
    EXPECT_EQ(EBADF, errno);

    /* a real fd of another file */
    int fds[2];
    ASSERT_EQ(0, pipe(fds));
    EXPECT_EQ(-1, m_ops->ioctl(fds[0], code(UCT_GAUDI_IOC_INFO), &args));
    EXPECT_EQ(ENOTTY, errno);
    close(fds[0]);
    close(fds[1]);

    /* ours, closed through the seam: gone from the table */
    int fd = open_node(1, true);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(0, m_ops->ioctl(fd, code(UCT_GAUDI_IOC_INFO), &args));
    EXPECT_EQ(0, m_ops->close(fd));
    EXPECT_EQ(-1, m_ops->ioctl(fd, code(UCT_GAUDI_IOC_INFO), &args));
    EXPECT_EQ(EBADF, errno);

    /* ours, inherited over fork: not usable in the child */
    EXPECT_EQ(EBADF, in_child([&]() {
        return (m_ops->ioctl(m_fd, code(UCT_GAUDI_IOC_INFO), &args) == -1) ?
               errno : 0;
    }));
}

/* A chunk array on the stack (copied directly), on the heap (checked copy)
 * and in memory that is not readable (EFAULT, never a crash) */
TEST_F(emu_ioctl_path, chunk_arrays_anywhere) {
    open_ok();
    uint64_t seq;

    struct hl_cs_chunk on_stack = nop_chunk();
    ASSERT_EQ(0, cs_with_chunks(&on_stack, &seq));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));

    struct hl_cs_chunk *on_heap = new hl_cs_chunk(nop_chunk());
    ASSERT_EQ(0, cs_with_chunks(on_heap, &seq));
    EXPECT_EQ((uint32_t)HL_WAIT_CS_STATUS_COMPLETED, wait_done(seq));
    delete on_heap;

    void *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    ASSERT_NE(MAP_FAILED, none);
    EXPECT_EQ(EFAULT, cs_with_chunks((struct hl_cs_chunk*)none, &seq));
    munmap(none, 4096);
}

/* INFO's return pointer: the stack and the heap get the data, read-only
 * memory gets EFAULT */
TEST_F(emu_ioctl_path, info_return_pointer_anywhere) {
    open_ok();

    struct hl_info_hw_ip_info on_stack;
    memset(&on_stack, 0, sizeof(on_stack));
    EXPECT_EQ(0, info(m_fd, HL_INFO_HW_IP_INFO, &on_stack,
                      sizeof(on_stack)));
    EXPECT_NE(0u, on_stack.device_id);

    std::vector<uint8_t> on_heap(sizeof(on_stack), 0);
    EXPECT_EQ(0, info(m_fd, HL_INFO_HW_IP_INFO, on_heap.data(),
                      on_heap.size()));
    EXPECT_EQ(0, memcmp(&on_stack, on_heap.data(), on_heap.size()));

    void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                    0);
    ASSERT_NE(MAP_FAILED, ro);
    EXPECT_EQ(EFAULT, info(m_fd, HL_INFO_HW_IP_INFO, ro, sizeof(on_stack)));
    munmap(ro, 4096);
}

/* The request's own argument: an unmapped pointer is EFAULT before the
 * request runs, a read-only one EFAULT after it ran (_hl_ioctl copies it
 * in, then out); neither crashes the caller */
TEST_F(emu_ioctl_path, argument_pointer_checked) {
    open_ok();

    EXPECT_EQ(-1, m_ops->ioctl(m_fd, code(UCT_GAUDI_IOC_MEMORY), (void*)8));
    EXPECT_EQ(EFAULT, errno);

    union hl_mem_args *ro;
    ro = (union hl_mem_args*)mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, (void*)ro);
    memset(ro, 0, sizeof(*ro));
    ro->in.op             = HL_MEM_OP_ALLOC;
    ro->in.alloc.mem_size = 4096;
    ASSERT_EQ(0, mprotect(ro, 4096, PROT_READ));
    EXPECT_EQ(-1, m_ops->ioctl(m_fd, code(UCT_GAUDI_IOC_MEMORY), ro));
    EXPECT_EQ(EFAULT, errno);
    munmap(ro, 4096);
}
