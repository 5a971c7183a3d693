/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * The test-only consumer of DMA-BUFs (dbufsink.h): a UCT component whose MD
 * registers DMA-BUFs and whose transport reaches nothing. Built only for the
 * plugin builds of a UCX that has DMA-BUF registration
 * (UCT_GAUDI_MD_DMABUF), never installed.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "dbufsink.h"

#include <uct/gaudi/gaudi_ucx_compat.h>
#include <uct/gaudi/seam/gaudi_emu.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <ucs/debug/log.h>
#include <ucs/sys/string.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if !UCT_GAUDI_MD_DMABUF
#  error "dbufsink needs a UCX with DMA-BUF registration"
#endif

#define DBUFSINK_NAME     "dbufsink"
#define DBUFSINK_MAX_REGS 1024

/* An op this module has nothing to do in: UCS's empty function
 * ucs_empty_function<_suffix>, cast to the op's type uct_<_type>_func_t (one
 * line each in the ops tables below, instead of a cast and a name) */
#define DBUFSINK_EMPTY(_type, _suffix) \
    ((uct_##_type##_func_t)ucs_empty_function##_suffix)
#define DBUFSINK_NOOP(_type)        DBUFSINK_EMPTY(_type, )
#define DBUFSINK_SUCCESS(_type)     DBUFSINK_EMPTY(_type, _return_success)
#define DBUFSINK_UNSUPPORTED(_type) DBUFSINK_EMPTY(_type, _return_unsupported)


typedef struct {
    dbufsink_reg_t reg;
    int            held_fd;  /* our reference to the DMA-BUF, -1 none */
} dbufsink_entry_t;

static struct {
    pthread_mutex_t  lock;
    dbufsink_entry_t regs[DBUFSINK_MAX_REGS];
    unsigned         count;        /* entries used (never reused) */
    unsigned         live;
    unsigned         with_dmabuf;
    unsigned         refused;
} dbufsink = {.lock = PTHREAD_MUTEX_INITIALIZER};


static int dbufsink_find_emu(struct dl_phdr_info *info, size_t size,
                             void *arg)
{
    if ((info->dlpi_name != NULL) &&
        (strstr(info->dlpi_name, "libgaudi_emu.so") != NULL)) {
        ucs_strncpy_safe(arg, info->dlpi_name, PATH_MAX);
        return 1;
    }

    return 0;
}

/* The emulator's test importer, in the copy UCX's gaudi module loaded (with
 * RTLD_LOCAL: found among the loaded objects) */
static gaudi_emu_dmabuf_read_func_t dbufsink_importer(void)
{
    char path[PATH_MAX];
    void *handle, *func;

    if (!dl_iterate_phdr(dbufsink_find_emu, path)) {
        return NULL;
    }

    handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (handle == NULL) {
        return NULL;
    }

    func = dlsym(handle, GAUDI_EMU_DMABUF_READ_SYMBOL);
    dlclose(handle); /* the gaudi module keeps its own reference */
    return (gaudi_emu_dmabuf_read_func_t)func;
}


/* ---- memory domain ---------------------------------------------------- */

static ucs_status_t dbufsink_md_query(uct_md_h md, uct_gaudi_md_attr_t *attr)
{
    uct_gaudi_md_caps_t caps = {
        .flags            = UCT_MD_FLAG_REG | UCT_MD_FLAG_REG_DMABUF,
        /* nothing of its own: UCP adds it for the memory types a DMA-BUF
         * provider covers */
        .reg_mem_types    = 0,
        .max_reg          = SIZE_MAX,
        .reg_cost         = ucs_linear_func_make(1e-6, 0)
    };

    uct_gaudi_md_attr_set(attr, &caps);
    return UCS_OK;
}

static ucs_status_t
dbufsink_mem_reg(uct_md_h md, void *address, size_t length,
                 const uct_md_mem_reg_params_t *params, uct_mem_h *memh_p)
{
    int fd = UCT_MD_MEM_REG_FIELD_VALUE(params, dmabuf_fd, FIELD_DMABUF_FD,
                                        UCT_DMABUF_FD_INVALID);
    gaudi_emu_dmabuf_read_func_t importer = dbufsink_importer();
    dbufsink_entry_t *entry;
    struct stat st;
    uint64_t size;
    int ret;

    pthread_mutex_lock(&dbufsink.lock);
    if (dbufsink.count == DBUFSINK_MAX_REGS) {
        pthread_mutex_unlock(&dbufsink.lock);
        ucs_error("dbufsink: more than %d registrations", DBUFSINK_MAX_REGS);
        return UCS_ERR_NO_RESOURCE;
    }

    entry = &dbufsink.regs[dbufsink.count];
    entry->reg.address       = address;
    entry->reg.length        = length;
    entry->reg.mem_type      = UCT_MD_MEM_REG_FIELD_VALUE(params, mem_type,
                                                          FIELD_MEM_TYPE,
                                                          UCS_MEMORY_TYPE_HOST);
    entry->reg.given_fd      = fd;
    entry->reg.dmabuf_offset = UCT_MD_MEM_REG_FIELD_VALUE(params,
                                                          dmabuf_offset,
                                                          FIELD_DMABUF_OFFSET,
                                                          0);
    entry->held_fd           = -1;

    /* what a NIC's ibv_reg_dmabuf_mr refuses: no DMA-BUF, an fd that is
     * none, a range past its end */
    if (fd == UCT_DMABUF_FD_INVALID) {
        ucs_error("dbufsink: %p+%zu (%s) comes without a DMA-BUF", address,
                  length, ucs_memory_type_names[entry->reg.mem_type]);
        goto refuse;
    }

    if ((fstat(fd, &st) != 0) || (importer == NULL) ||
        ((ret = importer(fd, 0, NULL, 0, &size)) != 0)) {
        ucs_error("dbufsink: fd %d of %p+%zu is not a DMA-BUF of the "
                  "emulated node", fd, address, length);
        goto refuse;
    }

    if ((entry->reg.dmabuf_offset > size) ||
        (length > size - entry->reg.dmabuf_offset)) {
        ucs_error("dbufsink: %p+%zu at offset %" PRIu64 " passes the end of "
                  "its DMA-BUF (%" PRIu64 " bytes)", address, length,
                  entry->reg.dmabuf_offset, size);
        goto refuse;
    }

    /* the NIC holds the buffer, not the fd: UCP closes the fd */
    entry->held_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (entry->held_fd < 0) {
        ucs_error("dbufsink: dup of fd %d failed: %m", fd);
        goto refuse;
    }

    entry->reg.given_dev   = st.st_dev;
    entry->reg.given_ino   = st.st_ino;
    entry->reg.dmabuf_size = size;
    entry->reg.live        = 1;
    ++dbufsink.count;
    ++dbufsink.live;
    ++dbufsink.with_dmabuf;
    pthread_mutex_unlock(&dbufsink.lock);
    *memh_p = entry;
    return UCS_OK;

refuse:
    ++dbufsink.refused;
    pthread_mutex_unlock(&dbufsink.lock);
    return UCS_ERR_INVALID_PARAM;
}

static ucs_status_t
dbufsink_mem_dereg(uct_md_h md, const uct_md_mem_dereg_params_t *params)
{
    dbufsink_entry_t *entry;

    UCT_MD_MEM_DEREG_CHECK_PARAMS(params, 0);

    entry = params->memh;
    pthread_mutex_lock(&dbufsink.lock);
    close(entry->held_fd);
    entry->held_fd  = -1;
    entry->reg.live = 0;
    --dbufsink.live;
    pthread_mutex_unlock(&dbufsink.lock);
    return UCS_OK;
}

static ucs_status_t
dbufsink_mkey_pack(uct_md_h md, uct_mem_h memh,
                   UCT_GAUDI_MKEY_PACK_ADDRESS_ARGS
                   const uct_md_mkey_pack_params_t *params, void *buffer)
{
    return UCS_OK;
}

static void dbufsink_md_close(uct_md_h md)
{
    ucs_free(md);
}

static uct_md_ops_t dbufsink_md_ops = {
    .close              = dbufsink_md_close,
    .query              = dbufsink_md_query,
    .mem_alloc          = DBUFSINK_UNSUPPORTED(md_mem_alloc),
    .mem_free           = DBUFSINK_UNSUPPORTED(md_mem_free),
    .mem_advise         = DBUFSINK_UNSUPPORTED(md_mem_advise),
    .mem_reg            = dbufsink_mem_reg,
    .mem_dereg          = dbufsink_mem_dereg,
    .mem_query          = DBUFSINK_UNSUPPORTED(md_mem_query),
    .mkey_pack          = dbufsink_mkey_pack,
    .detect_memory_type = DBUFSINK_UNSUPPORTED(md_detect_memory_type),
    UCT_GAUDI_MD_OPS_EXTRA
};

static ucs_status_t
dbufsink_md_open(uct_component_t *component, const char *md_name,
                 const uct_md_config_t *config, uct_md_h *md_p)
{
    uct_md_t *md = ucs_calloc(1, sizeof(*md), "dbufsink_md");

    if (md == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    md->ops       = &dbufsink_md_ops;
    md->component = component;
    *md_p         = md;
    return UCS_OK;
}

static ucs_status_t
dbufsink_rkey_unpack(uct_component_t *component, const void *buffer,
                     UCT_GAUDI_RKEY_UNPACK_PARAMS_ARG
                     uct_rkey_t *rkey_p, void **handle_p)
{
    *rkey_p   = 0;
    *handle_p = NULL;
    return UCS_OK;
}

extern uct_component_t dbufsink_component;


/* ---- transport: one device, reaches nothing --------------------------- */

typedef struct {
    uct_base_iface_t super;
} dbufsink_iface_t;

static ucs_config_field_t dbufsink_iface_config_table[] = {
    {"", "", NULL, 0, UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},
    {NULL}
};

static ucs_status_t
dbufsink_iface_query(uct_iface_h tl_iface, uct_iface_attr_t *attr)
{
    uct_base_iface_query(ucs_derived_of(tl_iface, uct_base_iface_t), attr);
    attr->cap.flags           = UCT_IFACE_FLAG_CONNECT_TO_IFACE;
    attr->iface_addr_len      = 0;
    attr->device_addr_len     = 0;
    attr->ep_addr_len         = 0;
    attr->latency             = ucs_linear_func_make(1e-6, 0);
    attr->bandwidth.dedicated = 0;
    attr->bandwidth.shared    = 1e9;
    attr->overhead            = 1e-6;
    attr->priority            = 0;
    return UCS_OK;
}

#if UCX_GAUDI_HAVE_IFACE_IS_REACHABLE_V2
static int
dbufsink_iface_is_reachable_v2(const uct_iface_h tl_iface,
                               const uct_iface_is_reachable_params_t *params)
{
    uct_gaudi_reach_fail(params, "dbufsink reaches nothing");
    return 0;
}
#  define DBUFSINK_IS_REACHABLE uct_base_iface_is_reachable
#else
static int dbufsink_iface_is_reachable(const uct_iface_h tl_iface,
                                       const uct_device_addr_t *dev_addr,
                                       const uct_iface_addr_t *iface_addr)
{
    return 0;
}
#  define DBUFSINK_IS_REACHABLE dbufsink_iface_is_reachable
#endif

static UCS_CLASS_DECLARE_DELETE_FUNC(dbufsink_iface_t, uct_iface_t);

/* no endpoint is ever created (nothing is reachable); UCT wants the ops */
static uct_iface_ops_t dbufsink_iface_ops = {
    .ep_flush                 = DBUFSINK_SUCCESS(ep_flush),
    .ep_fence                 = DBUFSINK_SUCCESS(ep_fence),
    .ep_create                = DBUFSINK_UNSUPPORTED(ep_create),
    .ep_destroy               = DBUFSINK_NOOP(ep_destroy),
    .iface_close              = UCS_CLASS_DELETE_FUNC_NAME(dbufsink_iface_t),
    .iface_query              = dbufsink_iface_query,
    .iface_flush              = DBUFSINK_SUCCESS(iface_flush),
    .iface_fence              = DBUFSINK_SUCCESS(iface_fence),
    .iface_progress_enable    = DBUFSINK_NOOP(iface_progress_enable),
    .iface_progress_disable   = DBUFSINK_NOOP(iface_progress_disable),
    .iface_progress           = DBUFSINK_EMPTY(iface_progress, _return_zero),
    .iface_get_device_address = DBUFSINK_SUCCESS(iface_get_device_address),
    .iface_get_address        = DBUFSINK_SUCCESS(iface_get_address),
    .iface_is_reachable       = DBUFSINK_IS_REACHABLE
};

static uct_iface_internal_ops_t dbufsink_iface_internal_ops = {
    .iface_estimate_perf   = uct_base_iface_estimate_perf,
    .iface_vfs_refresh     = DBUFSINK_NOOP(iface_vfs_refresh),
    .ep_query              = DBUFSINK_UNSUPPORTED(ep_query),
    .ep_invalidate         = DBUFSINK_UNSUPPORTED(ep_invalidate),
#if UCX_GAUDI_HAVE_IFACE_QUERY_V2
    .iface_query_v2        = uct_iface_base_query_v2,
#endif
#if UCX_GAUDI_HAVE_IFACE_IS_REACHABLE_V2
    .iface_is_reachable_v2 = dbufsink_iface_is_reachable_v2,
#endif
#if UCX_GAUDI_HAVE_EP_IS_CONNECTED
    .ep_is_connected       = DBUFSINK_EMPTY(ep_is_connected, _return_zero_int),
#endif
    _UCT_GAUDI_IFACE_OP_CONNECT_TO_EP_V2
    _UCT_GAUDI_IFACE_OP_GET_DEVICE_EP
    _UCT_GAUDI_IFACE_OP_PUT_SGL_ZCOPY
};

static UCS_CLASS_INIT_FUNC(dbufsink_iface_t, uct_md_h md, uct_worker_h worker,
                           const uct_iface_params_t *params,
                           const uct_iface_config_t *config)
{
    UCS_CLASS_CALL_SUPER_INIT(uct_base_iface_t, &dbufsink_iface_ops,
                              &dbufsink_iface_internal_ops, md, worker,
                              params, config
                              UCS_STATS_ARG(params->stats_root)
                              UCS_STATS_ARG(DBUFSINK_NAME));
    return UCS_OK;
}

static UCS_CLASS_CLEANUP_FUNC(dbufsink_iface_t)
{
}

UCS_CLASS_DEFINE(dbufsink_iface_t, uct_base_iface_t);
static UCS_CLASS_DEFINE_NEW_FUNC(dbufsink_iface_t, uct_iface_t, uct_md_h,
                                 uct_worker_h, const uct_iface_params_t*,
                                 const uct_iface_config_t*);
static UCS_CLASS_DEFINE_DELETE_FUNC(dbufsink_iface_t, uct_iface_t);

static ucs_status_t
dbufsink_query_devices(uct_md_h md, uct_tl_device_resource_t **devices_p,
                       unsigned *num_devices_p)
{
    return uct_single_device_resource(md, DBUFSINK_NAME "0",
                                      UCT_DEVICE_TYPE_NET,
                                      UCS_SYS_DEVICE_ID_UNKNOWN, devices_p,
                                      num_devices_p);
}

static ucs_status_t
dbufsink_query_md_resources(uct_component_t *component,
                            uct_md_resource_desc_t **resources_p,
                            unsigned *num_resources_p)
{
    return uct_md_query_single_md_resource(component, resources_p,
                                           num_resources_p);
}

uct_component_t dbufsink_component = {
    .query_md_resources = dbufsink_query_md_resources,
    .md_open            = dbufsink_md_open,
    .cm_open            = DBUFSINK_UNSUPPORTED(component_cm_open),
    .rkey_unpack        = dbufsink_rkey_unpack,
    .rkey_ptr           = DBUFSINK_UNSUPPORTED(component_rkey_ptr),
    .rkey_release       = DBUFSINK_SUCCESS(component_rkey_release),
    .name               = DBUFSINK_NAME,
    .md_config          = {
        .name           = "dbufsink memory domain (tests)",
        .prefix         = "DBUFSINK_",
        .table          = uct_md_config_table,
        .size           = sizeof(uct_md_config_t),
    },
    .cm_config          = UCS_CONFIG_EMPTY_GLOBAL_LIST_ENTRY,
    .tl_list            = UCT_COMPONENT_TL_LIST_INITIALIZER(
                                  &dbufsink_component),
    .flags              = 0,
    .md_vfs_init        = DBUFSINK_NOOP(component_md_vfs_init),
    UCT_GAUDI_COMPONENT_EXTRA
};
UCT_COMPONENT_REGISTER(&dbufsink_component);

UCT_TL_DEFINE(&dbufsink_component, dbufsink, dbufsink_query_devices,
              dbufsink_iface_t, "DBUFSINK_", dbufsink_iface_config_table,
              uct_iface_config_t);


/* ---- what the test asks (dbufsink.h) ---------------------------------- */

/* the latest live entry of exactly [address, address + length), else the
 * latest one (UCP may register the same range again for a transfer); lock
 * held */
static dbufsink_entry_t *dbufsink_lookup(const void *address, size_t length)
{
    dbufsink_entry_t *latest = NULL, *entry;
    unsigned i;

    for (i = dbufsink.count; i > 0; --i) {
        entry = &dbufsink.regs[i - 1];
        if ((entry->reg.address != address) || (entry->reg.length != length)) {
            continue;
        } else if (entry->reg.live) {
            return entry;
        } else if (latest == NULL) {
            latest = entry;
        }
    }

    return latest;
}

int dbufsink_find(const void *address, size_t length, dbufsink_reg_t *reg)
{
    dbufsink_entry_t *entry;

    pthread_mutex_lock(&dbufsink.lock);
    entry = dbufsink_lookup(address, length);
    if (entry != NULL) {
        *reg = entry->reg;
    }
    pthread_mutex_unlock(&dbufsink.lock);
    return (entry != NULL) ? 0 : -ENOENT;
}

int dbufsink_read(const void *address, size_t reg_length, size_t offset,
                  void *buf, size_t length)
{
    gaudi_emu_dmabuf_read_func_t importer = dbufsink_importer();
    dbufsink_entry_t *entry;
    int ret;

    if (importer == NULL) {
        return -ENODEV;
    }

    pthread_mutex_lock(&dbufsink.lock);
    entry = dbufsink_lookup(address, reg_length);
    if ((entry == NULL) || !entry->reg.live) {
        ret = -ENOENT;
    } else if ((offset > reg_length) || (length > reg_length - offset)) {
        ret = -EINVAL;
    } else {
        ret = importer(entry->held_fd, entry->reg.dmabuf_offset + offset,
                       buf, length, NULL);
    }
    pthread_mutex_unlock(&dbufsink.lock);
    return ret;
}

void dbufsink_counts(unsigned *live, unsigned *with_dmabuf, unsigned *refused)
{
    pthread_mutex_lock(&dbufsink.lock);
    *live        = dbufsink.live;
    *with_dmabuf = dbufsink.with_dmabuf;
    *refused     = dbufsink.refused;
    pthread_mutex_unlock(&dbufsink.lock);
}
