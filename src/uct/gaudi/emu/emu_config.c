/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_config.h"
#include "emu_global.h"
#include "emu_log.h"

#include <math.h>
#include <stdio.h>
#include <string.h>


/* "major.minor[.patch...]": 1 with the first two numbers, else 0 */
static int emu_config_parse_version(const char *str, unsigned *major_p,
                                    unsigned *minor_p)
{
    unsigned major, minor;
    int n = 0;

    if ((strlen(str) >= sizeof(emu_g.oot_version)) ||
        (sscanf(str, "%u.%u%n", &major, &minor, &n) != 2) ||
        ((str[n] != '\0') && (str[n] != '.'))) {
        return 0;
    }

    if (major_p != NULL) {
        *major_p = major;
        *minor_p = minor;
    }
    return 1;
}

/*
 * Whether the emulated driver applies the offset of a DMA-BUF export.
 * Upstream: from "accel/habanalabs: add missing offset handling for
 * dma-buf", in the pull for 6.7 with the move to the DRM ioctl codes, so
 * the DRM generation does and the transitional one (6.3..6.6) does not.
 * Out of tree: 1.24 does (its memory.c, alloc_sgt_from_device_pages); no
 * older release was checked, so they are taken not to (the harsher case).
 */
static int emu_config_export_offset(void)
{
    unsigned major = 0, minor = 0;

    if (!emu_g.cfg.oot_import) {
        return emu_abi()->export_offset;
    }

    emu_config_parse_version(emu_g.oot_version, &major, &minor);
    return (major > 1) || ((major == 1) && (minor >= 24));
}

static int emu_config_check_model(const gaudi_emu_config_t *config)
{
    if (!(config->bandwidth >= 0) || isinf(config->bandwidth)) {
        emu_error("EMU_BW: invalid DMA bandwidth %g B/s", config->bandwidth);
        return -EINVAL;
    }

    if (!(config->latency >= 0) || (config->latency > 60)) {
        emu_error("EMU_LATENCY: invalid CS latency %g s (0..60)",
                  config->latency);
        return -EINVAL;
    }

    if ((config->profile != GAUDI_EMU_PROFILE_NONE) &&
        (config->profile != GAUDI_EMU_PROFILE_GAUDI2)) {
        emu_error("EMU_PROFILE: invalid speed profile %d", (int)config->profile);
        return -EINVAL;
    }

    if (!(config->profile_latency >= 0) || (config->profile_latency > 1)) {
        emu_error("EMU_PROFILE_LATENCY: invalid submission latency %g s "
                  "(0..1)", config->profile_latency);
        return -EINVAL;
    }

    if (config->copy_slowdown > 1000) {
        emu_error("EMU_COPY_SLOWDOWN: invalid copy slowdown %u (0..1000)",
                  config->copy_slowdown);
        return -EINVAL;
    }

    if ((config->lockup != GAUDI_EMU_LOCKUP_RESET) &&
        (config->lockup != GAUDI_EMU_LOCKUP_NEEDS_RESET)) {
        emu_error("EMU_RESET_ON_LOCKUP: invalid CS timeout behaviour %d",
                  (int)config->lockup);
        return -EINVAL;
    }

    if ((config->oot_version != NULL) && (config->oot_version[0] != '\0') &&
        !emu_config_parse_version(config->oot_version, NULL, NULL)) {
        emu_error("EMU_OOT_VERSION: invalid out-of-tree driver version '%s' "
                  "(major.minor[.patch], up to 31 characters)",
                  config->oot_version);
        return -EINVAL;
    }

    if (isnan(config->release_reset) || (config->release_reset > 60)) {
        emu_error("EMU_RELEASE_RESET: invalid reset time after release %g s "
                  "(at most 60; 0: %g s; negative: none)",
                  config->release_reset,
                  GAUDI_EMU_RELEASE_RESET_DEFAULT);
        return -EINVAL;
    }

    if (!(config->watchdog >= 0) || (config->watchdog > 600)) {
        emu_error("EMU_RELEASE_WATCHDOG: invalid release watchdog %g s "
                  "(0..600; 0: %g s)", config->watchdog,
                  GAUDI_EMU_WATCHDOG_DEFAULT);
        return -EINVAL;
    }

    return 0;
}

static int emu_config_check(const gaudi_emu_config_t *config,
                            const emu_asic_t *asic, uint64_t hbm_size)
{
    if ((config->num_devices == 0) ||
        (config->num_devices > EMU_MAX_DEVICES)) {
        emu_error("EMU_DEVICES: invalid number of emulated devices %u (1..%d)",
                  config->num_devices, EMU_MAX_DEVICES);
        return -EINVAL;
    }

    if ((config->edma_disabled != 0) &&
        ((asic == NULL) || ((config->edma_disabled & ~asic->edma_mask) != 0))) {
        emu_error("EMU_EDMA_DISABLE: invalid EDMA engines to disable 0x%x "
                  "(the ASIC has 0x%x)", config->edma_disabled,
                  (asic != NULL) ? asic->edma_mask : 0);
        return -EINVAL;
    }

    if (config->numa_nodes > config->num_devices) {
        emu_error("EMU_NUMA_NODES: invalid number of NUMA nodes %u (0..%u, "
                  "the number of devices)", config->numa_nodes,
                  config->num_devices);
        return -EINVAL;
    }

    if (asic == NULL) {
        emu_error("invalid emulated ASIC %d", (int)config->asic);
        return -EINVAL;
    }

    if ((config->profile == GAUDI_EMU_PROFILE_GAUDI2) &&
        (asic->asic != UCT_GAUDI_ASIC_GAUDI2)) {
        /* its engines and queues are a Gaudi2's */
        emu_error("EMU_PROFILE: the gaudi2 speed profile needs an emulated "
                  "Gaudi2 (EMU_ASIC)");
        return -EINVAL;
    }

    if (uct_gaudi_abi_desc(config->abi) == NULL) {
        emu_error("invalid ABI generation %d", (int)config->abi);
        return -EINVAL;
    }

    if ((config->exec != GAUDI_EMU_EXEC_THREAD) &&
        (config->exec != GAUDI_EMU_EXEC_INLINE)) {
        emu_error("invalid DMA execution mode %d", (int)config->exec);
        return -EINVAL;
    }

    if ((hbm_size < 2 * asic->dram_page_size) ||
        (hbm_size > EMU_MAX_HBM_SIZE)) {
        emu_error("EMU_HBM_SIZE: invalid HBM size %llu (%llu..%llu bytes: "
                  "at least two DRAM pages of %llu bytes)",
                  (unsigned long long)hbm_size,
                  (unsigned long long)(2 * asic->dram_page_size),
                  (unsigned long long)EMU_MAX_HBM_SIZE,
                  (unsigned long long)asic->dram_page_size);
        return -EINVAL;
    }

    if ((config->state_dir != NULL) &&
        ((config->state_dir[0] != '/') ||
         (strlen(config->state_dir) >= sizeof(emu_g.state_dir) - 32))) {
        emu_error("state directory must be an absolute path shorter than "
                  "%zu characters", sizeof(emu_g.state_dir) - 32);
        return -EINVAL;
    }

    if ((config->faults != NULL) &&
        (strlen(config->faults) >= sizeof(emu_g.faults))) {
        emu_error("fault spec longer than %zu characters",
                  sizeof(emu_g.faults) - 1);
        return -EINVAL;
    }

    return emu_config_check_model(config);
}

/* The configured HBM size, or the ASIC's real one */
static uint64_t emu_config_hbm_size(const gaudi_emu_config_t *config,
                                    const emu_asic_t *asic)
{
    return (config->hbm_size != 0) ? config->hbm_size : asic->hbm_size;
}

int emu_config_load(const gaudi_emu_config_t *config)
{
    const emu_asic_t *asic = emu_asic_get(config->asic);
    double release_reset;
    uint64_t hbm_size;
    int ret;

    if (asic == NULL) {
        emu_error("invalid emulated ASIC %d", (int)config->asic);
        return -EINVAL;
    }

    hbm_size = emu_config_hbm_size(config, asic);
    ret      = emu_config_check(config, asic, hbm_size);
    if (ret != 0) {
        return ret;
    }

    memset(&emu_g, 0, sizeof(emu_g));
    emu_g.cfg            = *config;
    emu_g.cfg.asic       = asic->asic;
    emu_g.cfg.numa_nodes = emu_max(config->numa_nodes, 1);
    emu_g.asic_cfg       = *asic;
    emu_g.asic_cfg.edma_mask &= ~config->edma_disabled;
    if ((asic->asic == UCT_GAUDI_ASIC_GAUDI2) &&
        (hbm_size == EMU_GAUDI2_HBM_SIZE_6)) {
        /* the 96 GiB Gaudi2 has 6 functional HBMs: its DRAM page is
         * 16 x 6 x 8 MiB = 768 MiB (gaudi2_set_dram_properties) */
        emu_g.asic_cfg.dram_page_size  = EMU_GAUDI2_DRAM_PAGE_6;
        emu_g.asic_cfg.alloc_page_size = EMU_GAUDI2_DRAM_PAGE_6;
    }
    emu_g.watchdog_ns    = (uint64_t)(1e9 * ((config->watchdog > 0) ?
                                                 config->watchdog :
                                                 GAUDI_EMU_WATCHDOG_DEFAULT));
    /* Goya and Gaudi keep reset_upon_device_release off
     * (fixup_device_params_per_asic) */
    release_reset          = (config->release_reset > 0) ?
                             config->release_reset :
                             GAUDI_EMU_RELEASE_RESET_DEFAULT;
    emu_g.release_reset_ns = ((asic->asic == UCT_GAUDI_ASIC_GAUDI1) ||
                              (config->release_reset < 0)) ? 0 :
                             (uint64_t)(1e9 * release_reset);
    snprintf(emu_g.oot_version, sizeof(emu_g.oot_version), "%s",
             ((config->oot_version != NULL) &&
              (config->oot_version[0] != '\0')) ?
             config->oot_version : GAUDI_EMU_OOT_VERSION_DEFAULT);
    emu_g.cfg.oot_version = emu_g.oot_version;
    emu_g.export_offset   = emu_config_export_offset();
    emu_g.asic           = &emu_g.asic_cfg;
    emu_g.hbm_size       = hbm_size;
    emu_g.dram_size      = emu_align_down(hbm_size, emu_g.asic->dram_page_size);

    snprintf(emu_g.faults, sizeof(emu_g.faults), "%s",
             (config->faults != NULL) ? config->faults : "");
    emu_g.cfg.faults = emu_g.faults;

    emu_g.state_dir_set = (config->state_dir != NULL) &&
                          (config->state_dir[0] != '\0');
    if (emu_g.state_dir_set) {
        snprintf(emu_g.state_dir, sizeof(emu_g.state_dir), "%s",
                 config->state_dir);
    }
    emu_g.cfg.state_dir = emu_g.state_dir_set ? emu_g.state_dir : NULL;
    return 0;
}

static int emu_config_str_same(const char *a, const char *b)
{
    return !strcmp((a != NULL) ? a : "", (b != NULL) ? b : "");
}

int emu_config_same(const gaudi_emu_config_t *config)
{
    const emu_asic_t *asic = emu_asic_get(config->asic);
    uint64_t hbm_size;

    if (asic == NULL) {
        return 0;
    }

    hbm_size = emu_config_hbm_size(config, asic);
    return (config->num_devices == emu_g.cfg.num_devices) &&
           (asic->asic == emu_g.asic->asic) &&
           (config->edma_disabled == emu_g.cfg.edma_disabled) &&
           (hbm_size == emu_g.hbm_size) &&
           (config->abi == emu_g.cfg.abi) &&
           (config->oot_import == emu_g.cfg.oot_import) &&
           (config->exec == emu_g.cfg.exec) &&
           (config->bandwidth == emu_g.cfg.bandwidth) &&
           (config->latency == emu_g.cfg.latency) &&
           (config->lockup == emu_g.cfg.lockup) &&
           (config->watchdog == emu_g.cfg.watchdog) &&
           (config->no_kill == emu_g.cfg.no_kill) &&
           (config->release_reset == emu_g.cfg.release_reset) &&
           (config->pin_shared_files == emu_g.cfg.pin_shared_files) &&
           (config->page_fault_cs_only == emu_g.cfg.page_fault_cs_only) &&
           (config->dram_bar_size == emu_g.cfg.dram_bar_size) &&
           (config->pci_topology == emu_g.cfg.pci_topology) &&
           (config->profile == emu_g.cfg.profile) &&
           (config->profile_latency == emu_g.cfg.profile_latency) &&
           (config->copy_slowdown == emu_g.cfg.copy_slowdown) &&
           emu_config_str_same(((config->oot_version != NULL) &&
                                (config->oot_version[0] != '\0')) ?
                               config->oot_version :
                               GAUDI_EMU_OOT_VERSION_DEFAULT,
                               emu_g.oot_version) &&
           (emu_max(config->numa_nodes, 1) == emu_g.cfg.numa_nodes) &&
           emu_config_str_same(config->state_dir, emu_g.cfg.state_dir) &&
           emu_config_str_same(config->faults, emu_g.cfg.faults);
}
