/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_ioctl.h"
#include "gaudi_hook.h"
#include "gaudi_abi_check.h"
#include "gaudi_seam.h"

#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/sys/string.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


typedef struct {
    int      *indices;
    unsigned max;
    unsigned count;
} uct_gaudi_ioctl_scan_t;


static uct_gaudi_abi_t    uct_gaudi_ioctl_cur_abi    = UCT_GAUDI_ABI_DRM;
static uct_gaudi_driver_t uct_gaudi_ioctl_cur_driver = UCT_GAUDI_DRIVER_UNKNOWN;
static char uct_gaudi_ioctl_cur_version[64];  /* out of tree: its release */
static __thread char      uct_gaudi_ioctl_op[32];


static const char *uct_gaudi_ioctl_driver_names[] = {
    [UCT_GAUDI_DRIVER_UNKNOWN]  = "unknown",
    [UCT_GAUDI_DRIVER_UPSTREAM] = "upstream",
    [UCT_GAUDI_DRIVER_OOT]      = "out-of-tree"
};


static const char *uct_gaudi_ioctl_node_fmt(uct_gaudi_node_type_t type)
{
    const uct_gaudi_abi_desc_t *desc = uct_gaudi_ioctl_abi_desc();

    return (type == UCT_GAUDI_NODE_COMPUTE) ? desc->compute_fmt :
                                              desc->control_fmt;
}

static int uct_gaudi_ioctl_raw(int fd, unsigned long request, void *arg)
{
    int ret;

    /* the hook of the application's requests must not take ours for its */
    uct_gaudi_hook_own_begin();
    do {
        ret = uct_gaudi_seam_ops->ioctl(fd, request, arg);
    } while ((ret < 0) && (errno == EINTR));
    uct_gaudi_hook_own_end();

    return ret;
}

static int uct_gaudi_ioctl_raw_info(int fd, unsigned long request,
                                    struct hl_info_hw_ip_info *hw_ip)
{
    struct hl_info_args args;

    memset(&args, 0, sizeof(args));
    args.return_pointer = (uintptr_t)hw_ip;
    args.return_size    = sizeof(*hw_ip);
    args.op             = HL_INFO_HW_IP_INFO;
    return uct_gaudi_ioctl_raw(fd, request, &args);
}

const char *uct_gaudi_ioctl_abi_name(uct_gaudi_abi_t abi)
{
    const uct_gaudi_abi_desc_t *desc = uct_gaudi_abi_desc(abi);

    return (desc != NULL) ? desc->name : "unknown";
}

const uct_gaudi_abi_desc_t *uct_gaudi_ioctl_abi_desc(void)
{
    return uct_gaudi_abi_desc(uct_gaudi_ioctl_cur_abi);
}

uct_gaudi_abi_t uct_gaudi_ioctl_abi(void)
{
    return uct_gaudi_ioctl_cur_abi;
}

const char *uct_gaudi_ioctl_driver_name(uct_gaudi_driver_t driver)
{
    return (driver <= UCT_GAUDI_DRIVER_OOT) ?
           uct_gaudi_ioctl_driver_names[driver] : "unknown";
}

uct_gaudi_driver_t uct_gaudi_ioctl_driver(void)
{
    return uct_gaudi_ioctl_cur_driver;
}

int uct_gaudi_ioctl_oot_release(unsigned *major_p, unsigned *minor_p)
{
    return (uct_gaudi_ioctl_cur_driver == UCT_GAUDI_DRIVER_OOT) &&
           (sscanf(uct_gaudi_ioctl_cur_version, "%u.%u", major_p,
                   minor_p) == 2);
}

void uct_gaudi_ioctl_set_abi(uct_gaudi_abi_t abi)
{
    /* every caller of uct_gaudi_ioctl_abi_desc() takes a descriptor */
    ucs_assert(uct_gaudi_abi_desc(abi) != NULL);
    uct_gaudi_ioctl_cur_abi = abi;
}

static const char *uct_gaudi_ioctl_mem_op_name(const union hl_mem_args *args)
{
    switch (args->in.op) {
    case HL_MEM_OP_ALLOC:
        return "ALLOC";
    case HL_MEM_OP_FREE:
        return "FREE";
    case HL_MEM_OP_MAP:
        return (args->in.flags & HL_MEM_USERPTR) ? "MAP_USERPTR" : "MAP";
    case HL_MEM_OP_UNMAP:
        return "UNMAP";
    case HL_MEM_OP_EXPORT_DMABUF_FD:
        return "EXPORT_DMABUF_FD";
    case UCT_GAUDI_MEM_OP_REG_DMABUF_FD:
        return "REG_DMABUF_FD";
    default:
        return NULL;
    }
}

static const char *uct_gaudi_ioctl_info_op_name(uint32_t op)
{
    switch (op) {
    case HL_INFO_HW_IP_INFO:
        return "HW_IP_INFO";
    case HL_INFO_DEVICE_STATUS:
        return "DEVICE_STATUS";
    case HL_INFO_DRAM_USAGE:
        return "DRAM_USAGE";
    default:
        return NULL;
    }
}

static const char *uct_gaudi_ioctl_cb_op_name(uint32_t op)
{
    switch (op) {
    case HL_CB_OP_CREATE:
        return "CREATE";
    case HL_CB_OP_DESTROY:
        return "DESTROY";
    case HL_CB_OP_INFO:
        return "INFO";
    default:
        return NULL;
    }
}

static void uct_gaudi_ioctl_set_op(uct_gaudi_ioc_t ioc, const void *arg)
{
    static const char *ioc_names[] = {
        [UCT_GAUDI_IOC_INFO]    = "INFO",
        [UCT_GAUDI_IOC_CB]      = "CB",
        [UCT_GAUDI_IOC_CS]      = "CS",
        [UCT_GAUDI_IOC_WAIT_CS] = "WAIT_CS",
        [UCT_GAUDI_IOC_MEMORY]  = "MEMORY",
        [UCT_GAUDI_IOC_DEBUG]   = "DEBUG"
    };
    const char *op_name = NULL;
    unsigned op         = 0;

    switch (ioc) {
    case UCT_GAUDI_IOC_INFO:
        op      = ((const struct hl_info_args*)arg)->op;
        op_name = uct_gaudi_ioctl_info_op_name(op);
        break;
    case UCT_GAUDI_IOC_CB:
        op      = ((const union hl_cb_args*)arg)->in.op;
        op_name = uct_gaudi_ioctl_cb_op_name(op);
        break;
    case UCT_GAUDI_IOC_MEMORY:
        op      = ((const union hl_mem_args*)arg)->in.op;
        op_name = uct_gaudi_ioctl_mem_op_name(arg);
        break;
    default:
        ucs_snprintf_safe(uct_gaudi_ioctl_op, sizeof(uct_gaudi_ioctl_op),
                          "%s", ioc_names[ioc]);
        return;
    }

    if (op_name != NULL) {
        ucs_snprintf_safe(uct_gaudi_ioctl_op, sizeof(uct_gaudi_ioctl_op),
                          "%s/%s", ioc_names[ioc], op_name);
    } else {
        ucs_snprintf_safe(uct_gaudi_ioctl_op, sizeof(uct_gaudi_ioctl_op),
                          "%s/%u", ioc_names[ioc], op);
    }
}

int uct_gaudi_ioctl(int fd, uct_gaudi_ioc_t ioc, void *arg)
{
    int ret, err;

    ret = uct_gaudi_ioctl_raw(fd,
                              uct_gaudi_abi_ioctl_code(uct_gaudi_ioctl_cur_abi,
                                                       ioc),
                              arg);
    if (ucs_unlikely(ret < 0)) {
        err = errno;
        uct_gaudi_ioctl_set_op(ioc, arg);
        errno = err;
    }

    return ret;
}

const char *uct_gaudi_ioctl_failed_op(void)
{
    return uct_gaudi_ioctl_op;
}

void uct_gaudi_ioctl_op_reset(void)
{
    uct_gaudi_ioctl_op[0] = '\0';
}

int uct_gaudi_ioctl_info(int fd, uint32_t op, void *buf, size_t size)
{
    struct hl_info_args args;

    memset(&args, 0, sizeof(args));
    args.return_pointer = (uintptr_t)buf;
    args.return_size    = size;
    args.op             = op;
    return uct_gaudi_ioctl(fd, UCT_GAUDI_IOC_INFO, &args);
}

void uct_gaudi_ioctl_node_path(uct_gaudi_node_type_t type, int index,
                               char *buf, size_t max)
{
    ucs_snprintf_safe(buf, max, uct_gaudi_ioctl_node_fmt(type), index);
}

int uct_gaudi_ioctl_node_index(uct_gaudi_node_type_t type, const char *path,
                               int *index_p)
{
    char expected[64];
    int index;

    if ((sscanf(path, uct_gaudi_ioctl_node_fmt(type), &index) != 1) ||
        (index < 0) || (index >= UCT_GAUDI_MAX_MINOR)) {
        return -1;
    }

    /* sscanf accepts a prefix: require the exact name ("accel1" must not
     * match "accel_controlD1" or "accel12x") */
    uct_gaudi_ioctl_node_path(type, index, expected, sizeof(expected));
    if (strcmp(path, expected) != 0) {
        return -1;
    }

    *index_p = index;
    return 0;
}

static int uct_gaudi_ioctl_scan_cb(const char *name, void *arg)
{
    uct_gaudi_ioctl_scan_t *scan = arg;
    char path[64];
    int index;

    ucs_snprintf_safe(path, sizeof(path), "%s/%s",
                      uct_gaudi_ioctl_abi_desc()->node_dir, name);
    if ((uct_gaudi_ioctl_node_index(UCT_GAUDI_NODE_CONTROL, path, &index) == 0)
        && (scan->count < scan->max)) {
        scan->indices[scan->count++] = index;
    }

    return 0;
}

static int uct_gaudi_ioctl_cmp_int(const void *a, const void *b)
{
    return *(const int*)a - *(const int*)b;
}

unsigned uct_gaudi_ioctl_scan_nodes(int *indices, unsigned max)
{
    uct_gaudi_ioctl_scan_t scan = {indices, max, 0};
    const char *dir;

    dir = uct_gaudi_ioctl_abi_desc()->node_dir;
    if (uct_gaudi_seam_ops->list_dir(dir, uct_gaudi_ioctl_scan_cb,
                                     &scan) < 0) {
        ucs_debug("cannot list %s: %m", dir);
        return 0;
    }

    qsort(indices, scan.count, sizeof(*indices), uct_gaudi_ioctl_cmp_int);
    return scan.count;
}

/* HW_IP_INFO with the INFO code of @a abi: 0, or -1 with errno */
static int uct_gaudi_ioctl_try_info(int fd, uct_gaudi_abi_t abi)
{
    struct hl_info_hw_ip_info hw_ip;

    return uct_gaudi_ioctl_raw_info(fd, uct_gaudi_abi_ioctl_code(
                                            abi, UCT_GAUDI_IOC_INFO),
                                    &hw_ip);
}

/* The accel generations (nodes below /dev/accel), newest first, with
 * @a first (if not NULL) moved to the front; returns how many */
static unsigned
uct_gaudi_ioctl_accel_order(const uct_gaudi_abi_desc_t *first,
                            const uct_gaudi_abi_desc_t **order)
{
    const uct_gaudi_abi_desc_t *desc;
    unsigned count = 0;
    int abi;

    if (first != NULL) {
        order[count++] = first;
    }

    for (abi = UCT_GAUDI_ABI_LAST - 1; abi >= 0; --abi) {
        desc = uct_gaudi_abi_desc(abi);
        if (desc->accel && (desc != first)) {
            order[count++] = desc;
        }
    }

    return count;
}

/**
 * Which codes the control node @a fd speaks, asking first with those of
 * @a stated (NULL: nothing stated, the newest first). A driver that speaks
 * them answers and logs nothing. The other codes are unknown to it: ENOTTY,
 * and from the 'H' drivers an "invalid ioctl" line at error level in the
 * kernel log, so they are only tried when the first ones are refused.
 */
static const uct_gaudi_abi_desc_t *
uct_gaudi_ioctl_probe_accel(int fd, const char *path,
                            const uct_gaudi_abi_desc_t *stated)
{
    const uct_gaudi_abi_desc_t *order[UCT_GAUDI_ABI_LAST];
    unsigned i, count;

    count = uct_gaudi_ioctl_accel_order(stated, order);
    for (i = 0; i < count; ++i) {
        if (uct_gaudi_ioctl_try_info(fd, order[i]->abi) == 0) {
            return order[i];
        } else if (errno != ENOTTY) {
            /* the request code was understood; the failure is else */
            ucs_debug("%s INFO on %s failed: %m; assuming the %s ioctl "
                      "codes", order[i]->name, path, order[i]->name);
            return order[i];
        } else if ((i == 0) && (stated != NULL)) {
            ucs_debug("%s refused the %s INFO code its sysfs layout names; "
                      "asking with the other codes", path, stated->name);
        }
    }

    /* no code is understood: keep what sysfs said, else the oldest */
    ucs_debug("%s refused the INFO codes of every accel generation", path);
    return (stated != NULL) ? stated : order[count - 1];
}

/**
 * The generation the sysfs layout of device @a index states (driver-abi.md
 * 1.4): the driver's attributes on the PCI function behind the class
 * device in the DRM generation (the out-of-tree package built without
 * CONFIG_DRM_ACCEL copies them to a "device" group there, and speaks the DRM
 * codes too), on the class device itself in the transitional one.
 * NULL if no accel generation's attributes are there.
 */
static const uct_gaudi_abi_desc_t *uct_gaudi_ioctl_stated_abi(int index)
{
    const uct_gaudi_abi_desc_t *order[UCT_GAUDI_ABI_LAST];
    unsigned i, count;
    char fmt[64], path[64];

    count = uct_gaudi_ioctl_accel_order(NULL, order);
    for (i = 0; i < count; ++i) {
        /* the directory is a format of the index */
        ucs_snprintf_safe(fmt, sizeof(fmt), "%s/pci_addr",
                          order[i]->sysfs_dir);
        ucs_snprintf_safe(path, sizeof(path), fmt, index);
        if (uct_gaudi_seam_ops->exists(path) == 0) {
            return order[i];
        }
    }

    return NULL;
}

/**
 * Which driver is loaded. Habana's out-of-tree package sets MODULE_VERSION,
 * the kernel's own habanalabs does not, so the module's sysfs directory
 * without a version file is the upstream driver. Anything else (no such
 * directory, a read error) tells nothing.
 */
static uct_gaudi_driver_t uct_gaudi_ioctl_read_driver(void)
{
    char version[64];
    int err;

    if (uct_gaudi_seam_ops->read_attr(UCT_GAUDI_SYSFS_MODULE_VERSION, version,
                                      sizeof(version)) >= 0) {
        version[strcspn(version, "\n")] = '\0';
        ucs_strncpy_safe(uct_gaudi_ioctl_cur_version, version,
                         sizeof(uct_gaudi_ioctl_cur_version));
        ucs_debug("habanalabs %s: Habana's out-of-tree driver", version);
        return UCT_GAUDI_DRIVER_OOT;
    }

    err = errno;
    if ((err == ENOENT) &&
        (uct_gaudi_seam_ops->exists(UCT_GAUDI_SYSFS_MODULE_DIR) == 0)) {
        ucs_debug("habanalabs states no module version: the upstream driver");
        return UCT_GAUDI_DRIVER_UPSTREAM;
    }

    ucs_debug("cannot tell which habanalabs driver is loaded: %s: %s",
              UCT_GAUDI_SYSFS_MODULE_VERSION, strerror(err));
    return UCT_GAUDI_DRIVER_UNKNOWN;
}

ucs_status_t uct_gaudi_ioctl_probe_abi(void)
{
    const uct_gaudi_abi_desc_t *stated = NULL;
    char path[64];
    int index;
    int fd;

    uct_gaudi_ioctl_cur_driver = uct_gaudi_ioctl_read_driver();

    if (uct_gaudi_seam_ops->exists(UCT_GAUDI_DEV_ACCEL_DIR) != 0) {
        uct_gaudi_ioctl_cur_abi = UCT_GAUDI_ABI_MISC;
        goto out;
    }

    /* accel naming: find a control node to ask which codes it speaks */
    uct_gaudi_ioctl_cur_abi = UCT_GAUDI_ABI_DRM;
    if (uct_gaudi_ioctl_scan_nodes(&index, 1) == 0) {
        ucs_debug("no Gaudi control node in %s", UCT_GAUDI_DEV_ACCEL_DIR);
        goto out;
    }

    stated = uct_gaudi_ioctl_stated_abi(index);
    if (stated != NULL) {
        uct_gaudi_ioctl_cur_abi = stated->abi;
    }

    uct_gaudi_ioctl_node_path(UCT_GAUDI_NODE_CONTROL, index, path,
                              sizeof(path));
    fd = uct_gaudi_seam_ops->open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        ucs_debug("cannot open %s to probe the ABI: %m", path);
        goto out;
    }

    uct_gaudi_ioctl_cur_abi = uct_gaudi_ioctl_probe_accel(fd, path,
                                                          stated)->abi;
    uct_gaudi_seam_ops->close(fd);

out:
    ucs_debug("Gaudi driver ABI generation: %s (sysfs layout: %s; built-in "
              "uAPI layout, checked at build time against %s), %s driver",
              uct_gaudi_ioctl_abi_desc()->name,
              !uct_gaudi_ioctl_abi_desc()->accel ?
              uct_gaudi_ioctl_abi_desc()->name :
              (stated != NULL) ? stated->name : "says nothing",
              (uct_gaudi_abi_check_header() != NULL) ?
              uct_gaudi_abi_check_header() : "no system header",
              uct_gaudi_ioctl_driver_name(uct_gaudi_ioctl_cur_driver));
    return UCS_OK;
}
