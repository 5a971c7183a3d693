/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* UCX's config.h, included first, may have it */
#endif
#include "ucp_gaudi.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

typedef int (*gaudi_ioctl_func_t)(int fd, uct_gaudi_ioc_t ioc, void *arg);

typedef struct {
    const char *name;
    char       path[PATH_MAX];
} lib_find_t;


static int lib_find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    lib_find_t *find = arg;

    if ((info->dlpi_name == NULL) ||
        (strstr(info->dlpi_name, find->name) == NULL)) {
        return 0;
    }
    snprintf(find->path, sizeof(find->path), "%s", info->dlpi_name);
    return 1;
}

void *ucp_gaudi_lib_symbol(const char *lib, const char *symbol)
{
    lib_find_t find = {.name = lib, .path = ""};
    void *handle, *sym;

    sym = dlsym(RTLD_DEFAULT, symbol);
    if ((sym != NULL) || !dl_iterate_phdr(lib_find_cb, &find)) {
        return sym;
    }

    handle = dlopen(find.path, RTLD_NOW | RTLD_NOLOAD);
    if (handle == NULL) {
        return NULL;
    }
    sym = dlsym(handle, symbol);
    dlclose(handle); /* UCX keeps its own reference while the context lives */
    return sym;
}

void *ucp_gaudi_emu_symbol(const char *symbol)
{
    return ucp_gaudi_lib_symbol("libgaudi_emu.so", symbol);
}

void ucp_gaudi_emu_stats_str(gaudi_emu_get_stats_func_t get_stats,
                             const char *pinned, char *buf, size_t max)
{
    gaudi_emu_stats_t s;

    if ((get_stats == NULL) || (get_stats(&s) != 0)) {
        snprintf(buf, max, "unavailable");
        return;
    }
    snprintf(buf, max, "contexts=%u dram_maps=%u host_maps=%u "
             "import_maps=%u cb_maps=%u exports=%u %s=%llu",
             s.contexts, s.dram_maps, s.host_maps, s.import_maps, s.cb_maps,
             s.exports, pinned, (unsigned long long)s.pinned_bytes);
}


/* ---- the application's own Gaudi memory --------------------------------- */

static int app_mem_op(ucp_gaudi_app_mem_t *mem, uint32_t op,
                      union hl_mem_args *args)
{
    static gaudi_ioctl_func_t ioctl_func;
    uct_gaudi_abi_t (*abi_func)(void);

    args->in.op = op;
    if (mem->raw) {
        abi_func = (uct_gaudi_abi_t (*)(void))ucp_gaudi_lib_symbol(
                GAUDI_UCT_MODULE_FILE, "uct_gaudi_ioctl_abi");
        UCP_APP_CHECK(abi_func != NULL, "uct_gaudi_ioctl_abi not found");
        return ioctl(mem->fd, uct_gaudi_abi_ioctl_code(abi_func(),
                                                       UCT_GAUDI_IOC_MEMORY),
                     args);
    }

    if (ioctl_func == NULL) {
        ioctl_func = (gaudi_ioctl_func_t)ucp_gaudi_lib_symbol(
                GAUDI_UCT_MODULE_FILE, "uct_gaudi_ioctl");
        UCP_APP_CHECK(ioctl_func != NULL, "uct_gaudi_ioctl not found");
    }
    return ioctl_func(mem->fd, UCT_GAUDI_IOC_MEMORY, args);
}

/* The compute fd of this process, found in /proc/self/fd by the driver
 * seam's name of each file */
static int app_find_fd(void)
{
    const uct_gaudi_drv_ops_t **ops;
    char path[PATH_MAX];
    struct dirent *entry;
    int fd, n, app_fd = -1;
    DIR *dir;

    ops = (const uct_gaudi_drv_ops_t**)ucp_gaudi_lib_symbol(
            GAUDI_UCT_MODULE_FILE, "uct_gaudi_seam_ops");
    UCP_APP_CHECK((ops != NULL) && (*ops != NULL),
                  "uct_gaudi_seam_ops not found");
    dir = opendir("/proc/self/fd");
    UCP_APP_CHECK(dir != NULL, "opendir(/proc/self/fd): %m");
    while ((app_fd < 0) && ((entry = readdir(dir)) != NULL)) {
        fd = atoi(entry->d_name);
        if (((*ops)->fd_path(fd, path, sizeof(path)) >= 0) &&
            ((sscanf(path, UCT_GAUDI_DEV_ACCEL_COMPUTE "%n", &n, &n) == 1) ||
             (sscanf(path, UCT_GAUDI_DEV_MISC_COMPUTE "%n", &n, &n) == 1)) &&
            (path[n] == '\0')) {
            app_fd = fd;
        }
    }
    closedir(dir);
    UCP_APP_CHECK(app_fd >= 0, "no Gaudi compute fd open in this process");
    return app_fd;
}

void ucp_gaudi_app_alloc(ucp_gaudi_app_mem_t *mem, size_t size)
{
    union hl_mem_args args;

    mem->fd = app_find_fd();
    memset(&args, 0, sizeof(args));
    args.in.alloc.mem_size = size;
    UCP_APP_CHECK(app_mem_op(mem, HL_MEM_OP_ALLOC, &args) == 0, "ALLOC: %m");
    mem->handle = args.out.handle;
    memset(&args, 0, sizeof(args));
    args.in.map_device.handle = mem->handle;
    UCP_APP_CHECK(app_mem_op(mem, HL_MEM_OP_MAP, &args) == 0, "MAP: %m");
    mem->address = (void*)(uintptr_t)args.out.device_virt_addr;
}

void ucp_gaudi_app_free(ucp_gaudi_app_mem_t *mem)
{
    union hl_mem_args args;

    memset(&args, 0, sizeof(args));
    args.in.unmap.device_virt_addr = (uintptr_t)mem->address;
    UCP_APP_CHECK(app_mem_op(mem, HL_MEM_OP_UNMAP, &args) == 0, "UNMAP: %m");
    memset(&args, 0, sizeof(args));
    args.in.free.handle = mem->handle;
    UCP_APP_CHECK(app_mem_op(mem, HL_MEM_OP_FREE, &args) == 0, "FREE: %m");
}
