/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_lib.h"
#include "gaudi_ioctl.h"
#include "gaudi_maptab.h"
#include "gaudi_seam.h"

#include <uct/gaudi/gaudi_ucx_compat.h>
#include <uct/gaudi/seam/gaudi_emu.h>
#include <ucs/config/parser.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/preprocessor.h>
#include <ucs/sys/string.h>
#include <ucs/type/init_once.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>


#define UCT_GAUDI_LIB_CONFIG_PREFIX "GAUDI_"
/* Reasons uct_gaudi_lib_first_notice() tells apart, and their length */
#define UCT_GAUDI_LIB_MAX_NOTICES    64
#define UCT_GAUDI_LIB_NOTICE_MAX     64
#define UCT_GAUDI_MAPPING_TABLE_ENV  "GAUDI_MAPPING_TABLE"


static const char *uct_gaudi_lib_emu_asic_names[] = {
    [UCT_GAUDI_EMU_ASIC_GAUDI2] = "gaudi2",
    [UCT_GAUDI_EMU_ASIC_GAUDI1] = "gaudi1",
    [UCT_GAUDI_EMU_ASIC_GAUDI3] = "gaudi3",
    [UCT_GAUDI_EMU_ASIC_LAST]   = NULL
};

/* UCX_GAUDI_EMU_ABI's values: the generations' names (gaudi_abi.h), set
 * when the library loads, before any configuration is read */
static const char *uct_gaudi_lib_emu_abi_names[UCT_GAUDI_ABI_LAST + 1];

UCS_STATIC_INIT {
    int abi;

    for (abi = 0; uct_gaudi_abi_desc(abi) != NULL; ++abi) {
        uct_gaudi_lib_emu_abi_names[abi] = uct_gaudi_abi_desc(abi)->name;
    }
}

static const char *uct_gaudi_lib_emu_exec_names[] = {
    [GAUDI_EMU_EXEC_THREAD] = "thread",
    [GAUDI_EMU_EXEC_INLINE] = "inline",
    [GAUDI_EMU_EXEC_INLINE + 1] = NULL
};

static const char *uct_gaudi_lib_emu_profile_names[] = {
    [GAUDI_EMU_PROFILE_NONE]   = "none",
    [GAUDI_EMU_PROFILE_GAUDI2] = "gaudi2",
    [GAUDI_EMU_PROFILE_GAUDI2 + 1] = NULL
};

static const char *uct_gaudi_lib_emu_pci_names[] = {
    [GAUDI_EMU_PCI_SWITCH]      = "switch",
    [GAUDI_EMU_PCI_ROOT_PORTS]  = "root_ports",
    [GAUDI_EMU_PCI_SOCKETS]     = "sockets",
    [GAUDI_EMU_PCI_SOCKETS + 1] = NULL
};

static ucs_config_field_t uct_gaudi_lib_config_table[] = {
    {"DEVICE", "auto",
     "Which Gaudi this process owns (a compute node may be opened by one\n"
     "process only). If the process already holds an open compute node, that\n"
     "device is used regardless of this setting. Values:\n"
     " auto       - the rules of Habana's runtime, in order:\n"
     "              HLS_MODULE_ID; HABANA_VISIBLE_MODULES at the local\n"
     "              rank's position; the module whose ID is the local rank\n"
     "              (OMPI_COMM_WORLD_LOCAL_RANK, LOCAL_RANK, MPI_LOCALRANKID,\n"
     "              SLURM_LOCALID, PMIX_LOCAL_RANK); a free device on the\n"
     "              NUMA node of the process's CPUs; the first free device\n"
     "              in logical order\n"
     " <N>        - logical index N (after GAUDI_MAPPING_TABLE)\n"
     " gaudi<N>   - the same: the device name UCX prints (ucx_info -d)\n"
     " <bus id>   - PCI bus id, \"dddd:bb:dd.f\" or \"bb:dd.f\"\n"
     " module:<N> - the device with module id (OAM slot) N",
     ucs_offsetof(uct_gaudi_lib_config_t, device), UCS_CONFIG_TYPE_STRING},

    {"DMA_TIMEOUT", "30s",
     "How long a DMA command submission may stay in flight before the device\n"
     "is declared failed, counted from its submission or from the completion\n"
     "of an earlier submission of this process, whichever is later.",
     ucs_offsetof(uct_gaudi_lib_config_t, dma_timeout), UCS_CONFIG_TYPE_TIME},

    {"RESET_WAIT", "30s",
     "How long opening the Gaudi this process is assigned keeps retrying\n"
     "while the driver answers that the device resets (EAGAIN: the reset\n"
     "after its previous owner's release, or after an error), with a growing\n"
     "pause between attempts. Another device is never taken instead.",
     ucs_offsetof(uct_gaudi_lib_config_t, reset_wait), UCS_CONFIG_TYPE_TIME},

    {"APP_MEMORY", "y",
     "Learn the Gaudi memory the application's runtime allocates itself on\n"
     "the compute node UCX adopts (its HL_IOCTL_MEMORY requests, seen by a\n"
     "hook of ioctl() in every loaded object, as UCM hooks CUDA's calls), so\n"
     "that gaudi_ipc shares it with peers and revokes them before its UNMAP.\n"
     "n: such memory is never exported, and peers stage its transfers.",
     ucs_offsetof(uct_gaudi_lib_config_t, app_memory), UCS_CONFIG_TYPE_BOOL},

    {"PERF_PROBE", "y",
     "Measure each device's DMA latency and bandwidth once per process, when\n"
     "the first Gaudi interface opens (a few copies within a host buffer,\n"
     "none started after 20 ms), and report them to UCP where a transport's\n"
     "LAT or BW is \"auto\". n: report the constant estimates instead (no\n"
     "copy at open; fault-injection tests that count command submissions).",
     ucs_offsetof(uct_gaudi_lib_config_t, perf_probe), UCS_CONFIG_TYPE_BOOL},

    {"EMU_DEVICES", "0",
     "Number of emulated Gaudi devices. 0 (default) uses the real driver and\n"
     "never loads the emulator; N > 0 loads " UCT_GAUDI_EMU_LIB_NAME "\n"
     "and emulates N devices, so Gaudi transports run without hardware.\n"
     "The other UCX_GAUDI_EMU_* knobs are read only then.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_devices), UCS_CONFIG_TYPE_UINT},

    {NULL}
};

UCS_CONFIG_REGISTER_TABLE(uct_gaudi_lib_config_table, "Gaudi",
                          UCT_GAUDI_LIB_CONFIG_PREFIX,
                          uct_gaudi_lib_config_t, &ucs_config_global_list)

/* The emulator's knobs, in a table of their own over the same structure:
 * read only when the emulator is on, so that a stale or mistyped one
 * cannot take the transports away from a machine with real devices */
static ucs_config_field_t uct_gaudi_lib_emu_config_table[] = {
    {"EMU_ASIC", "gaudi2",
     "ASIC generation the emulator models: gaudi2, gaudi1 or gaudi3.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_asic),
     UCS_CONFIG_TYPE_ENUM(uct_gaudi_lib_emu_asic_names)},

    {"EMU_HBM_SIZE", "auto",
     "Emulated device memory (HBM) per device; auto = the ASIC's real size\n"
     "(Gaudi2: 80g, 5 functional HBMs of 16 GiB; 4g otherwise). At least two\n"
     "DRAM pages (Gaudi2: 640 MiB each). Backed by sparse files in the state\n"
     "directory.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_hbm_size),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"EMU_ABI", "drm",
     "Driver ABI generation the emulator exposes: misc (/dev/hlN, 'H' ioctl\n"
     "codes), trans (/dev/accel, 'H' codes) or drm (/dev/accel, DRM codes).",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_abi),
     UCS_CONFIG_TYPE_ENUM(uct_gaudi_lib_emu_abi_names)},

    {"EMU_OOT_IMPORT", "y",
     "Emulate Habana's out-of-tree driver: its module version in sysfs and,\n"
     "in the drm generation, its DMA-BUF import (memory op 99), which\n"
     "device-to-device IPC needs. 'n' emulates the upstream kernel's driver.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_oot_import),
     UCS_CONFIG_TYPE_BOOL},

    {"EMU_OOT_VERSION", "1.24.1",
     "Emulator: the release of Habana's out-of-tree driver emulated (with\n"
     "EMU_OOT_IMPORT), stated in sysfs as the module version. Releases before\n"
     "1.24 export a DMA-BUF from the start of the mapping whatever the offset\n"
     "asked (none older was checked; the harsher case is taken).",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_oot_version),
     UCS_CONFIG_TYPE_STRING},

    {"EMU_PIN_SHARED_FILES", "n",
     "Emulator: let a host registration pin a writable shared mapping of a\n"
     "file on a disk filesystem, as kernels before 6.5 did. From 6.5 the\n"
     "kernel refuses such long-term pins (EFAULT); tmpfs, /dev/shm, memfd,\n"
     "hugetlbfs and private mappings still pin.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_pin_shared_files),
     UCS_CONFIG_TYPE_BOOL},

    {"EMU_PAGE_FAULT_RESET", "y",
     "Emulator: a DMA to a device address the device MMU does not map resets\n"
     "an emulated Gaudi2, as the driver does at the firmware's page-fault\n"
     "event. 'n' only fails the command submission (what a Gaudi1 does).",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_page_fault_reset),
     UCS_CONFIG_TYPE_BOOL},

    {"EMU_DRAM_BAR_SIZE", "auto",
     "Emulator: how much of the HBM, from its start, the device's PCIe DRAM\n"
     "BAR reaches; the driver refuses to export a DMA-BUF of pages beyond it\n"
     "(EINVAL). auto = all of it (a Gaudi2's BAR size is not known to us).",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_dram_bar_size),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"EMU_PCI_TOPOLOGY", "switch",
     "Emulator: the PCIe tree sysfs shows above the devices, and which peer\n"
     "DMA the platform forwards. switch: every device below one PCIe switch;\n"
     "root_ports: a root port each, on a host bridge Linux lets forward peer\n"
     "DMA (Intel 8086:09a2); sockets: a root port each, the devices split over\n"
     "two host bridges (Intel 8086:2f00) that forward it only within one. A\n"
     "peer DMA the platform does not forward loses its writes and hangs on\n"
     "its reads, as the out-of-tree driver checks no route.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_pci_topology),
     UCS_CONFIG_TYPE_ENUM(uct_gaudi_lib_emu_pci_names)},

    {"EMU_EXEC", "thread",
     "How the emulator executes command submissions: thread (asynchronously,\n"
     "like hardware: by the thread that waits for the CS, or by a worker thread\n"
     "when nobody polls) or inline (inside the CS ioctl).",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_exec),
     UCS_CONFIG_TYPE_ENUM(uct_gaudi_lib_emu_exec_names)},

    {"EMU_BW", "auto",
     "Modelled DMA bandwidth of the emulator; auto: no model, copies run at\n"
     "memory speed.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_bw), UCS_CONFIG_TYPE_BW},

    {"EMU_LATENCY", "0us",
     "Modelled latency of one emulated command submission.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_latency), UCS_CONFIG_TYPE_TIME},

    {"EMU_PROFILE", "none",
     "Speed profile of the emulated DMA engines. none: copies at memory\n"
     "speed (or EMU_BW/EMU_LATENCY). gaudi2: a Gaudi2's PCIe Gen4 x16 link\n"
     "(25 GB/s per direction, shared by the PDMA engines), HBM for device to\n"
     "device, a submission-to-start latency that overlaps queued work and a\n"
     "per-CS engine gap, all in model time: the emulator's own copying is\n"
     "not counted (the copy_ns of its statistics). Replaces EMU_BW/EMU_LATENCY.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_profile),
     UCS_CONFIG_TYPE_ENUM(uct_gaudi_lib_emu_profile_names)},

    {"EMU_PROFILE_LATENCY", "8us",
     "The speed profile's submission-to-start latency of a command\n"
     "submission (an assumption: no Gaudi2 figure is published).",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_profile_latency),
     UCS_CONFIG_TYPE_TIME},

    {"EMU_COPY_SLOWDOWN", "1",
     "Test only: each emulated copy takes this many times as long as the CPU\n"
     "needs (busy), to show that a speed profile's figures do not depend on\n"
     "how fast the machine copies.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_copy_slowdown),
     UCS_CONFIG_TYPE_UINT},

    {"EMU_STATE_DIR", "",
     "Directory of the emulated node's shared state (device memory backing\n"
     "files, ownership locks). Processes that use the same directory see the\n"
     "same devices. Empty: a per-user default directory.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_state_dir),
     UCS_CONFIG_TYPE_STRING},

    {"EMU_FAULTS", "",
     "Fault injection for the emulator (see the emulator documentation),\n"
     "e.g. failing the Nth ioctl of a kind with an errno. Empty: none.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_faults),
     UCS_CONFIG_TYPE_STRING},

    {"EMU_NUMA_NODES", "1",
     "NUMA nodes the emulated devices sit on, in blocks of consecutive\n"
     "devices (8 devices on 2 nodes: devices 0-3 on node 0, 4-7 on node 1);\n"
     "at most the number of devices. The host need not have these nodes.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_numa_nodes),
     UCS_CONFIG_TYPE_UINT},

    {"EMU_EDMA_DISABLE", "0",
     "Gaudi2 emulation: EDMA engines the emulated devices lack, as a bit mask\n"
     "as a number (bit 2 * dcore + n is DCORE<dcore>_EDMA_<n>; 3: both\n"
     "engines of DCORE0), as binning leaves engines out of a real device's\n"
     "edma_enabled_mask. Their queues are refused like on such a device.\n"
     "0: all 8 engines.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_edma_disabled),
     UCS_CONFIG_TYPE_UINT},

    {"EMU_RESET_ON_LOCKUP", "y",
     "Emulator: what a command submission that passes the driver's timeout\n"
     "does (the driver's reset_on_lockup): y (the driver's default) resets\n"
     "the device, after the release watchdog if the owner registered for\n"
     "events, and kills a process that still holds it; n only marks the\n"
     "device as needing a reset, done when its owner closes it.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_reset_on_lockup),
     UCS_CONFIG_TYPE_BOOL},

    {"EMU_RELEASE_WATCHDOG", "5s",
     "Emulator: how long a process registered for the driver's events has to\n"
     "close the device after a reset event before the device is reset anyway\n"
     "and the process killed (the driver's release watchdog: 5 s in older\n"
     "releases, 30 s in newer ones).",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_watchdog),
     UCS_CONFIG_TYPE_TIME},

    {"EMU_KILL", "y",
     "Emulator: kill (SIGKILL) a process that still holds a device being\n"
     "reset, as the driver does. n: wait for it instead (debugging only).",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_kill), UCS_CONFIG_TYPE_BOOL},

    {"EMU_RELEASE_RESET", "0.5s",
     "Emulator: how long an emulated Gaudi2 resets after its owner releases\n"
     "it, or dies (the driver's reset_upon_device_release; an open meanwhile\n"
     "answers EAGAIN). 0: no reset after release.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_release_reset),
     UCS_CONFIG_TYPE_TIME},

    {"EMU_PROC_NUMA", "auto",
     "Test only, with emulated devices: the NUMA node that device assignment\n"
     "takes for the CPUs of this process, instead of asking libnuma, so that\n"
     "the NUMA rule can be tested on a host with one node. auto: libnuma.",
     ucs_offsetof(uct_gaudi_lib_config_t, emu_proc_numa),
     UCS_CONFIG_TYPE_ULUNITS},

    {NULL}
};

UCS_CONFIG_REGISTER_TABLE(uct_gaudi_lib_emu_config_table, "Gaudi emulator",
                          UCT_GAUDI_LIB_CONFIG_PREFIX,
                          uct_gaudi_lib_config_t, &ucs_config_global_list)


static struct {
    ucs_init_once_t         init_once;
    ucs_status_t            status;
    int                     config_valid;
    int                     emu_config_valid;
    uct_gaudi_lib_config_t config;
    uct_gaudi_dev_info_t    *devices;     /* logical order */
    unsigned                num_devices;
} uct_gaudi_lib_ctx = {
    .init_once = UCS_INIT_ONCE_INITIALIZER,
    .status    = UCS_ERR_NO_DEVICE
};


/* Reorder @a devs by the mapping table; identity when there is none */
static void uct_gaudi_lib_apply_maptab(uct_gaudi_dev_info_t *devs,
                                        unsigned num_devs)
{
    unsigned order[UCT_GAUDI_MAX_DEVICES];
    uint8_t placed[UCT_GAUDI_MAX_DEVICES] = {0};
    uct_gaudi_dev_info_t tmp;
    unsigned i, j, k;
    const char *json;

    json = getenv(UCT_GAUDI_MAPPING_TABLE_ENV);
    if ((json == NULL) ||
        (uct_gaudi_maptab_parse(json, devs, num_devs, order) != UCS_OK)) {
        for (i = 0; i < num_devs; ++i) {
            order[i] = i;
        }
    }

    /* devs[i] = old devs[order[i]], in place, one cycle of the permutation
     * at a time: a copy of the whole table would take 15 KiB of stack,
     * more than UCX allows its modules (-Wframe-larger-than=8192) */
    for (i = 0; i < num_devs; ++i) {
        if (placed[i]) {
            continue;
        }

        tmp = devs[i];
        for (j = i; (k = order[j]) != i; j = k) {
            devs[j]   = devs[k];
            placed[j] = 1;
        }
        devs[j]   = tmp;
        placed[j] = 1;
    }

    for (i = 0; i < num_devs; ++i) {
        uct_gaudi_discover_set_index(&devs[i], i);
        uct_gaudi_discover_name_sys_device(&devs[i]);
    }
}

/* Longest and shortest synchronous DMA wait that can be right: a 4 GiB
 * copy over one PCIe Gen4 link takes 0.2 s; valgrind runs take minutes */
#define UCT_GAUDI_LIB_DMA_TIMEOUT_MIN 0.1
#define UCT_GAUDI_LIB_DMA_TIMEOUT_MAX (24.0 * 3600.0)
/* 0: no wait; a reset scrubs the HBM in seconds, an hour is a stuck one */
#define UCT_GAUDI_LIB_RESET_WAIT_MAX  3600.0

/* What the config parser cannot check by type */
static ucs_status_t
uct_gaudi_lib_check_config(const uct_gaudi_lib_config_t *config)
{
    if (!(config->dma_timeout >= UCT_GAUDI_LIB_DMA_TIMEOUT_MIN) ||
        !(config->dma_timeout <= UCT_GAUDI_LIB_DMA_TIMEOUT_MAX)) {
        ucs_error("UCX_GAUDI_DMA_TIMEOUT=%.3gs is out of range: accepted "
                  "%gs..%gs", config->dma_timeout,
                  UCT_GAUDI_LIB_DMA_TIMEOUT_MIN,
                  UCT_GAUDI_LIB_DMA_TIMEOUT_MAX);
        return UCS_ERR_INVALID_PARAM;
    }

    if (!(config->reset_wait >= 0) ||
        !(config->reset_wait <= UCT_GAUDI_LIB_RESET_WAIT_MAX)) {
        ucs_error("UCX_GAUDI_RESET_WAIT=%.3gs is out of range: accepted "
                  "0s..%gs", config->reset_wait,
                  UCT_GAUDI_LIB_RESET_WAIT_MAX);
        return UCS_ERR_INVALID_PARAM;
    }

    return UCS_OK;
}

/* What the config parser cannot check by type, of the emulator's knobs */
static ucs_status_t
uct_gaudi_lib_check_emu_config(const uct_gaudi_lib_config_t *config)
{
    if (config->emu_proc_numa == UCS_ULUNITS_INF) {
        ucs_error("UCX_GAUDI_EMU_PROC_NUMA=inf is not a NUMA node (0..63 or "
                  "auto)");
        return UCS_ERR_INVALID_PARAM;
    } else if ((config->emu_proc_numa != UCS_ULUNITS_AUTO) &&
               (config->emu_proc_numa >= 64)) {
        ucs_error("UCX_GAUDI_EMU_PROC_NUMA=%lu is not a NUMA node (0..63 or "
                  "auto)", config->emu_proc_numa);
        return UCS_ERR_INVALID_PARAM;
    }

    return UCS_OK;
}

static ucs_status_t uct_gaudi_lib_init_once(void)
{
    ucs_status_t status;

    status = uct_gaudi_config_fill(&uct_gaudi_lib_ctx.config,
                                   &uct_gaudi_lib_config_table_config_entry,
                                   UCS_DEFAULT_ENV_PREFIX, 0);
    if (status != UCS_OK) {
        ucs_error("failed to read the Gaudi configuration (UCX_GAUDI_*): %s",
                  ucs_status_string(status));
        return status;
    }

    uct_gaudi_lib_ctx.config_valid = 1;
    status = uct_gaudi_lib_check_config(&uct_gaudi_lib_ctx.config);
    if (status != UCS_OK) {
        return status;
    }

    if (uct_gaudi_lib_ctx.config.emu_devices > 0) {
        status = uct_gaudi_config_fill(
                &uct_gaudi_lib_ctx.config,
                &uct_gaudi_lib_emu_config_table_config_entry,
                UCS_DEFAULT_ENV_PREFIX, 0);
        if (status != UCS_OK) {
            ucs_error("failed to read the Gaudi emulator's configuration "
                      "(UCX_GAUDI_EMU_*): %s", ucs_status_string(status));
            return status;
        }

        uct_gaudi_lib_ctx.emu_config_valid = 1;
        status = uct_gaudi_lib_check_emu_config(&uct_gaudi_lib_ctx.config);
        if (status != UCS_OK) {
            return status;
        }
    }

    status = uct_gaudi_seam_select(&uct_gaudi_lib_ctx.config);
    if (status != UCS_OK) {
        return status;
    }

    /* once per process at info level: every figure and failure of a run on
     * the emulator is the emulator's, and a node that also has real Gaudis
     * does not use them */
    if (uct_gaudi_seam_is_emulated() &&
        uct_gaudi_lib_first_notice("emulated")) {
        ucs_diag("Gaudi devices are emulated: %u %s device(s) of %s "
                 "(UCX_GAUDI_EMU_DEVICES); no real Gaudi is used",
                 uct_gaudi_lib_ctx.config.emu_devices,
                 uct_gaudi_lib_emu_asic_names[uct_gaudi_lib_ctx.config.emu_asic],
                 UCT_GAUDI_EMU_LIB_NAME);
    }

    status = uct_gaudi_ioctl_probe_abi();
    if (status != UCS_OK) {
        return status;
    }

    status = uct_gaudi_discover_devices(&uct_gaudi_lib_ctx.devices,
                                        &uct_gaudi_lib_ctx.num_devices);
    if (status != UCS_OK) {
        return status;
    }

    uct_gaudi_lib_apply_maptab(uct_gaudi_lib_ctx.devices,
                                uct_gaudi_lib_ctx.num_devices);
    ucs_debug("%u Gaudi device(s) through the %s seam, %s ABI",
              uct_gaudi_lib_ctx.num_devices, uct_gaudi_seam_ops->name,
              uct_gaudi_ioctl_abi_desc()->name);
    return UCS_OK;
}

ucs_status_t uct_gaudi_lib_init(void)
{
    UCS_INIT_ONCE(&uct_gaudi_lib_ctx.init_once) {
        uct_gaudi_lib_ctx.status = uct_gaudi_lib_init_once();
        if (uct_gaudi_lib_ctx.status != UCS_OK) {
            ucs_free(uct_gaudi_lib_ctx.devices);
            uct_gaudi_lib_ctx.devices     = NULL;
            uct_gaudi_lib_ctx.num_devices = 0;
        }
    }

    return uct_gaudi_lib_ctx.status;
}

void uct_gaudi_lib_cleanup(void)
{
    pthread_mutex_lock(&uct_gaudi_lib_ctx.init_once.lock);
    if (uct_gaudi_lib_ctx.init_once.initialized) {
        ucs_free(uct_gaudi_lib_ctx.devices);
        uct_gaudi_lib_ctx.devices     = NULL;
        uct_gaudi_lib_ctx.num_devices = 0;
        if (uct_gaudi_lib_ctx.emu_config_valid) {
            ucs_config_parser_release_opts(&uct_gaudi_lib_ctx.config,
                                           uct_gaudi_lib_emu_config_table);
            uct_gaudi_lib_ctx.emu_config_valid = 0;
        }
        if (uct_gaudi_lib_ctx.config_valid) {
            ucs_config_parser_release_opts(&uct_gaudi_lib_ctx.config,
                                           uct_gaudi_lib_config_table);
            uct_gaudi_lib_ctx.config_valid = 0;
        }

        uct_gaudi_seam_cleanup();
        uct_gaudi_lib_ctx.status                = UCS_ERR_NO_DEVICE;
        uct_gaudi_lib_ctx.init_once.initialized = 0;
    }
    pthread_mutex_unlock(&uct_gaudi_lib_ctx.init_once.lock);
}

const uct_gaudi_lib_config_t *uct_gaudi_lib_config(void)
{
    return uct_gaudi_lib_ctx.config_valid ? &uct_gaudi_lib_ctx.config :
                                             NULL;
}

unsigned uct_gaudi_lib_num_devices(void)
{
    return uct_gaudi_lib_ctx.num_devices;
}

unsigned uct_gaudi_lib_num_usable(void)
{
    unsigned i, count;

    count = 0;
    for (i = 0; i < uct_gaudi_lib_ctx.num_devices; ++i) {
        count += uct_gaudi_lib_ctx.devices[i].usable;
    }

    return count;
}

const uct_gaudi_dev_info_t *uct_gaudi_lib_device(unsigned index)
{
    return (index < uct_gaudi_lib_ctx.num_devices) ?
           &uct_gaudi_lib_ctx.devices[index] : NULL;
}

const uct_gaudi_dev_info_t *uct_gaudi_lib_devices(void)
{
    return uct_gaudi_lib_ctx.devices;
}

int uct_gaudi_lib_first_notice(const char *reason)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char given[UCT_GAUDI_LIB_MAX_NOTICES][UCT_GAUDI_LIB_NOTICE_MAX];
    static unsigned num_given;
    unsigned i;
    int first;

    pthread_mutex_lock(&lock);
    for (i = 0; (i < num_given) && strncmp(given[i], reason,
                                            UCT_GAUDI_LIB_NOTICE_MAX - 1);
         ++i) {
    }
    first = (i == num_given) && (num_given < UCT_GAUDI_LIB_MAX_NOTICES);
    if (first) {
        ucs_strncpy_safe(given[num_given++], reason,
                         UCT_GAUDI_LIB_NOTICE_MAX);
    }
    pthread_mutex_unlock(&lock);
    return first;
}
