/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_TEST_H_
#define GAUDI_EMU_TEST_H_

/* Shared fixture of the emulator unit tests (the .cc files here) */

/* gaudi_abi.h is C11; g++ spells the static assertion differently */
#ifndef _Static_assert
#  define _Static_assert static_assert
#endif

extern "C" {
#include <uct/gaudi/seam/gaudi_emu.h>
}

#include <gtest/gtest.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>


class emu_test : public ::testing::Test {
protected:
    virtual void SetUp()
    {
        char tmpl[] = "/tmp/gaudi-emu-test.XXXXXX";

        ASSERT_NE((char*)NULL, mkdtemp(tmpl));
        m_dir = tmpl;
        memset(&m_cfg, 0, sizeof(m_cfg));
        m_cfg.num_devices = 2;
        m_cfg.asic        = UCT_GAUDI_ASIC_GAUDI2;
        m_cfg.hbm_size    = 0;  /* the ASIC's real size and DRAM page */
        m_cfg.abi         = UCT_GAUDI_ABI_DRM;
        m_cfg.exec        = GAUDI_EMU_EXEC_THREAD;
        m_cfg.state_dir   = m_dir.c_str();
        m_ops             = NULL;
    }

    virtual void TearDown()
    {
        gaudi_emu_fini();
        nftw(m_dir.c_str(), rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    }

    static int rm_cb(const char *path, const struct stat *st, int flag,
                     struct FTW *ftw)
    {
        return remove(path);
    }

    int init()
    {
        return gaudi_emu_init(&m_cfg, &m_ops);
    }

    void init_ok()
    {
        int ret = init();

        ASSERT_EQ(0, ret) << gaudi_emu_last_error();
        ASSERT_TRUE(m_ops != NULL);
    }

    unsigned long code(uct_gaudi_ioc_t ioc) const
    {
        return uct_gaudi_abi_ioctl_code(m_cfg.abi, ioc);
    }

    std::string node(int dev, bool control) const
    {
        char buf[64];

        if (m_cfg.abi == UCT_GAUDI_ABI_MISC) {
            snprintf(buf, sizeof(buf),
                     control ? UCT_GAUDI_DEV_MISC_CONTROL :
                               UCT_GAUDI_DEV_MISC_COMPUTE, dev);
        } else {
            snprintf(buf, sizeof(buf),
                     control ? UCT_GAUDI_DEV_ACCEL_CONTROL :
                               UCT_GAUDI_DEV_ACCEL_COMPUTE, dev);
        }
        return buf;
    }

    /* A Gaudi2 resets after every release (docs/emulator.md §8a): an open
     * meanwhile answers EAGAIN, and is retried as any user does; a failure
     * the test injected is not */
    int open_node(int dev, bool control, int flags = O_RDWR | O_CLOEXEC)
    {
        int fd;

        bool last = false;

        for (int i = 0; i < 1000; ++i) {
            fd = m_ops->open(node(dev, control).c_str(), flags);
            if ((fd >= 0) || (errno != EAGAIN) || control || last) {
                break;
            }
            /* once more right after the reset ended */
            last = !in_release_reset(dev);
            usleep(last ? 0 : 10000);
        }

        return fd;
    }

    bool in_release_reset(int dev)
    {
        uint32_t status[2] = {0, 0};
        int cfd = m_ops->open(node(dev, true).c_str(), O_RDWR | O_CLOEXEC);

        if (cfd < 0) {
            return false;
        }
        info(cfd, HL_INFO_DEVICE_STATUS, status, sizeof(status));
        m_ops->close(cfd);
        errno = EAGAIN;
        return status[0] == HL_DEVICE_STATUS_IN_RESET_AFTER_DEVICE_RELEASE;
    }

    /* The arguments of an ioctl, zeros but for what a caller sets */
    template <typename T> static T zeroed()
    {
        T args;

        memset(&args, 0, sizeof(args));
        return args;
    }

    /* INFO @a op into @a size bytes at @a buf */
    static struct hl_info_args info_args(uint32_t op, void *buf = NULL,
                                         uint32_t size = 0)
    {
        struct hl_info_args args = zeroed<struct hl_info_args>();

        args.return_pointer = (uintptr_t)buf;
        args.return_size    = size;
        args.op             = op;
        return args;
    }

    static union hl_mem_args mem_args(uint32_t op, uint32_t flags = 0)
    {
        union hl_mem_args args = zeroed<union hl_mem_args>();

        args.in.op    = op;
        args.in.flags = flags;
        return args;
    }

    static union hl_cb_args cb_args(uint32_t op, uint32_t cb_size = 0)
    {
        union hl_cb_args args = zeroed<union hl_cb_args>();

        args.in.op      = op;
        args.in.cb_size = cb_size;
        return args;
    }

    /* returns 0 or errno */
    int ioctl_err(int fd, uct_gaudi_ioc_t ioc, void *arg)
    {
        errno = 0;
        return (m_ops->ioctl(fd, code(ioc), arg) == 0) ? 0 : errno;
    }

    int info(int fd, uint32_t op, void *buf, uint32_t size)
    {
        struct hl_info_args args = info_args(op, buf, size);

        return ioctl_err(fd, UCT_GAUDI_IOC_INFO, &args);
    }

    struct hl_info_hw_ip_info hw_ip(int fd)
    {
        struct hl_info_hw_ip_info hw;

        memset(&hw, 0, sizeof(hw));
        EXPECT_EQ(0, info(fd, HL_INFO_HW_IP_INFO, &hw, sizeof(hw)));
        return hw;
    }

    uint32_t dev_status(int fd)
    {
        struct hl_info_device_status st;

        memset(&st, 0xff, sizeof(st));
        EXPECT_EQ(0, info(fd, HL_INFO_DEVICE_STATUS, &st, sizeof(st)));
        return st.status;
    }

    int mem(int fd, union hl_mem_args *args)
    {
        return ioctl_err(fd, UCT_GAUDI_IOC_MEMORY, args);
    }

    /* MEMORY; returns errno, and in *out what the driver answers (a handle
     * or a device VA: one union) */
    int mem(int fd, union hl_mem_args *args, uint64_t *out)
    {
        int err = mem(fd, args);

        *out = args->out.handle;
        return err;
    }

    /* ALLOC; returns errno, handle in *handle */
    int alloc(int fd, uint64_t size, uint64_t *handle, uint64_t page = 0,
              uint32_t flags = 0)
    {
        union hl_mem_args args = mem_args(HL_MEM_OP_ALLOC, flags);

        args.in.alloc.mem_size  = size;
        args.in.alloc.page_size = page;
        return mem(fd, &args, handle);
    }

    int free_handle(int fd, uint64_t handle)
    {
        union hl_mem_args args = mem_args(HL_MEM_OP_FREE);

        args.in.free.handle = handle;
        return mem(fd, &args);
    }

    int map_device(int fd, uint64_t handle, uint64_t *va, uint64_t hint = 0,
                   uint32_t flags = 0)
    {
        union hl_mem_args args = mem_args(HL_MEM_OP_MAP, flags);

        args.in.map_device.handle    = handle;
        args.in.map_device.hint_addr = hint;
        return mem(fd, &args, va);
    }

    /* ALLOC and MAP of @a size bytes; ASSERT-style */
    void alloc_map(int fd, uint64_t size, uint64_t *handle, uint64_t *va)
    {
        ASSERT_EQ(0, alloc(fd, size, handle));
        ASSERT_EQ(0, map_device(fd, *handle, va));
    }

    int map_host(int fd, const void *ptr, uint64_t size, uint64_t *va,
                 uint64_t hint = 0, uint32_t flags = 0)
    {
        union hl_mem_args args = mem_args(HL_MEM_OP_MAP,
                                          HL_MEM_USERPTR | flags);

        args.in.map_host.host_virt_addr = (uintptr_t)ptr;
        args.in.map_host.mem_size       = size;
        args.in.map_host.hint_addr      = hint;
        return mem(fd, &args, va);
    }

    int unmap(int fd, uint64_t va)
    {
        union hl_mem_args args = mem_args(HL_MEM_OP_UNMAP);

        args.in.unmap.device_virt_addr = va;
        return mem(fd, &args);
    }

    /* Errors the emulated kernel logged so far */
    static unsigned kernel_log_errors()
    {
        gaudi_emu_stats_t stats;

        EXPECT_EQ(0, gaudi_emu_get_stats(&stats));
        return stats.kernel_log_errors;
    }

    /* Run @body in a child process; returns its exit status (or -1) */
    template <typename F> static int in_child(F body)
    {
        int status;
        pid_t pid = fork();

        if (pid == 0) {
            _exit(body());
        }
        if ((pid < 0) || (waitpid(pid, &status, 0) != pid) ||
            !WIFEXITED(status)) {
            return -1;
        }
        return WEXITSTATUS(status);
    }

    std::string                m_dir;
    gaudi_emu_config_t         m_cfg;
    const uct_gaudi_drv_ops_t  *m_ops;
};

#endif
