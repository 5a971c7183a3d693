/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_seam.h"
#include "gaudi_config.h"

#include <uct/gaudi/seam/gaudi_emu.h>
#include <ucs/debug/log.h>
#include <ucs/sys/string.h>
#include <dlfcn.h>
#include <limits.h>
#include <string.h>


const uct_gaudi_drv_ops_t *uct_gaudi_seam_ops = &uct_gaudi_drv_kernel_ops;
static void *uct_gaudi_seam_dl_handle         = NULL;


static const uct_gaudi_asic_t uct_gaudi_seam_emu_asics[] = {
    [UCT_GAUDI_EMU_ASIC_GAUDI2] = UCT_GAUDI_ASIC_GAUDI2,
    [UCT_GAUDI_EMU_ASIC_GAUDI1] = UCT_GAUDI_ASIC_GAUDI1,
    [UCT_GAUDI_EMU_ASIC_GAUDI3] = UCT_GAUDI_ASIC_GAUDI3
};


static void *uct_gaudi_seam_dlopen_emu(unsigned num_devices)
{
    char path[PATH_MAX];
    const char *slash;
    Dl_info dl_info;
    void *handle;

    /* next to this module first, so an installed UCX finds its own copy
     * (its directory taken in place: newer UCX builds its modules with
     * -Wframe-larger-than=8192, no room for a second path buffer) */
    if (dladdr((void*)uct_gaudi_seam_select, &dl_info) &&
        (dl_info.dli_fname != NULL)) {
        slash = strrchr(dl_info.dli_fname, '/');
        if (slash == NULL) {
            ucs_snprintf_safe(path, sizeof(path), "./%s",
                              UCT_GAUDI_EMU_LIB_NAME);
        } else {
            ucs_snprintf_safe(path, sizeof(path), "%.*s/%s",
                              (int)(slash - dl_info.dli_fname),
                              dl_info.dli_fname, UCT_GAUDI_EMU_LIB_NAME);
        }
        handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (handle != NULL) {
            ucs_debug("loaded Gaudi emulator %s", path);
            return handle;
        }

        ucs_debug("dlopen(%s) failed: %s", path, dlerror());
    }

    handle = dlopen(UCT_GAUDI_EMU_LIB_NAME, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        ucs_error("failed to load the Gaudi emulator (UCX_GAUDI_EMU_DEVICES="
                  "%u): %s", num_devices, dlerror());
        return NULL;
    }

    ucs_debug("loaded Gaudi emulator %s", UCT_GAUDI_EMU_LIB_NAME);
    return handle;
}

static void
uct_gaudi_seam_emu_config(const uct_gaudi_lib_config_t *config,
                          gaudi_emu_config_t *emu_config)
{
    memset(emu_config, 0, sizeof(*emu_config));
    emu_config->num_devices = config->emu_devices;
    emu_config->asic        = uct_gaudi_seam_emu_asics[config->emu_asic];
    emu_config->hbm_size    = (config->emu_hbm_size == UCS_MEMUNITS_AUTO) ?
                              0 : config->emu_hbm_size;
    emu_config->abi         = (uct_gaudi_abi_t)config->emu_abi;
    emu_config->oot_import  = config->emu_oot_import;
    emu_config->oot_version = config->emu_oot_version;
    emu_config->pin_shared_files = config->emu_pin_shared_files;
    emu_config->page_fault_cs_only = !config->emu_page_fault_reset;
    emu_config->dram_bar_size = (config->emu_dram_bar_size ==
                                 UCS_MEMUNITS_AUTO) ?
                                0 : config->emu_dram_bar_size;
    emu_config->pci_topology  = (gaudi_emu_pci_topology_t)
                                config->emu_pci_topology;
    emu_config->exec        = (gaudi_emu_exec_t)config->emu_exec;
    emu_config->bandwidth   = (config->emu_bw > 0) ? config->emu_bw : 0;
    emu_config->latency     = config->emu_latency;
    emu_config->profile     = (gaudi_emu_profile_t)config->emu_profile;
    emu_config->profile_latency = config->emu_profile_latency;
    emu_config->copy_slowdown   = config->emu_copy_slowdown;
    emu_config->state_dir   = (strlen(config->emu_state_dir) > 0) ?
                              config->emu_state_dir : NULL;
    emu_config->faults      = config->emu_faults;
    emu_config->numa_nodes  = config->emu_numa_nodes;
    emu_config->edma_disabled = (uint32_t)config->emu_edma_disabled;
    emu_config->lockup        = config->emu_reset_on_lockup ?
                                GAUDI_EMU_LOCKUP_RESET :
                                GAUDI_EMU_LOCKUP_NEEDS_RESET;
    /* the watchdog's 0 is the emulator's default: the shortest it takes */
    emu_config->watchdog      = ucs_max(config->emu_watchdog, 0.001);
    emu_config->no_kill       = !config->emu_kill;
    emu_config->release_reset = (config->emu_release_reset > 0) ?
                                config->emu_release_reset : -1;
}

static const char *uct_gaudi_seam_emu_error(void *handle)
{
    const char *(*last_error)(void);
    const char *text;

    last_error = (const char *(*)(void))dlsym(handle, "gaudi_emu_last_error");
    if (last_error == NULL) {
        return "no details";
    }

    text = last_error();
    return ((text != NULL) && (text[0] != '\0')) ? text : "no details";
}

ucs_status_t uct_gaudi_seam_select(const uct_gaudi_lib_config_t *config)
{
    const uct_gaudi_drv_ops_t *ops;
    gaudi_emu_config_t emu_config;
    gaudi_emu_init_func_t init;
    void *handle;
    int ret;

    if (config->emu_devices == 0) {
        uct_gaudi_seam_ops = &uct_gaudi_drv_kernel_ops;
        return UCS_OK;
    }

    handle = uct_gaudi_seam_dlopen_emu(config->emu_devices);
    if (handle == NULL) {
        return UCS_ERR_NO_DEVICE;
    }

    init = (gaudi_emu_init_func_t)dlsym(handle, GAUDI_EMU_INIT_SYMBOL);
    if (init == NULL) {
        ucs_error("the Gaudi emulator %s has no %s: %s",
                  UCT_GAUDI_EMU_LIB_NAME, GAUDI_EMU_INIT_SYMBOL, dlerror());
        goto err_close;
    }

    uct_gaudi_seam_emu_config(config, &emu_config);
    if ((emu_config.profile != GAUDI_EMU_PROFILE_NONE) &&
        ((emu_config.bandwidth > 0) || (emu_config.latency > 0))) {
        /* the profile times every CS itself */
        ucs_warn("UCX_GAUDI_EMU_BW and UCX_GAUDI_EMU_LATENCY are ignored: "
                 "UCX_GAUDI_EMU_PROFILE models the DMA (its latency is "
                 "UCX_GAUDI_EMU_PROFILE_LATENCY)");
    }

    ret = init(&emu_config, &ops);
    if ((ret != 0) || (ops == NULL)) {
        ucs_error("failed to initialize the Gaudi emulator (%u devices): %s "
                  "(%s)", config->emu_devices,
                  uct_gaudi_seam_emu_error(handle), strerror(-ret));
        goto err_close;
    }

    uct_gaudi_seam_ops       = ops;
    uct_gaudi_seam_dl_handle = handle;
    ucs_debug("Gaudi driver seam: %s with %u emulated devices", ops->name,
              config->emu_devices);
    return UCS_OK;

err_close:
    dlclose(handle);
    return UCS_ERR_NO_DEVICE;
}

int uct_gaudi_seam_is_emulated(void)
{
    return uct_gaudi_seam_dl_handle != NULL;
}

void uct_gaudi_seam_cleanup(void)
{
    gaudi_emu_fini_func_t fini;

    if (uct_gaudi_seam_dl_handle != NULL) {
        /* closes the nodes still open and forgets the configuration, so the
         * next init may use another one; the library stays loaded, it may
         * have registered fork handlers */
        fini = (gaudi_emu_fini_func_t)dlsym(uct_gaudi_seam_dl_handle,
                                            GAUDI_EMU_FINI_SYMBOL);
        if (fini != NULL) {
            fini();
        }
    }

    uct_gaudi_seam_ops       = &uct_gaudi_drv_kernel_ops;
    uct_gaudi_seam_dl_handle = NULL;
}
