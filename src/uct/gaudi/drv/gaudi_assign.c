/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_assign.h"

#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/sys/math.h>
#include <ucs/sys/string.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <numa.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


#define UCT_GAUDI_ASSIGN_LIST_MAX 256

/* Every assignment error ends the same way: the process goes on without the
 * Gaudi transports rather than taking a device the rules did not give it */
#define uct_gaudi_assign_fail(_assign, _fmt, ...) \
    ucs_snprintf_safe((_assign)->error, sizeof((_assign)->error), \
                      _fmt "; UCX continues without the Gaudi transports", \
                      ## __VA_ARGS__)


const char *uct_gaudi_assign_rank_vars[] = {
    "OMPI_COMM_WORLD_LOCAL_RANK", /* Open MPI (mpirun, PRRTE) */
    "LOCAL_RANK",                 /* torchrun, Habana's own launchers */
    "MPI_LOCALRANKID",            /* MPICH Hydra, Intel MPI */
    "SLURM_LOCALID",              /* srun */
    "PMIX_LOCAL_RANK",            /* PMIx launchers that export it */
    NULL
};


static const char *uct_gaudi_assign_getenv(const char *name)
{
    const char *value = getenv(name);

    return ((value != NULL) && (value[0] != '\0')) ? value : NULL;
}

static uint64_t uct_gaudi_assign_affinity_numa(void)
{
    struct bitmask *cpus;
    uint64_t nodes;
    int cpu, node;

    if (numa_available() < 0) {
        return 0;
    }

    cpus = numa_allocate_cpumask();
    if (numa_sched_getaffinity(0, cpus) < 0) {
        ucs_debug("numa_sched_getaffinity failed: %m");
        numa_free_cpumask(cpus);
        return 0;
    }

    nodes = 0;
    for (cpu = 0; cpu < numa_num_possible_cpus(); ++cpu) {
        if (!numa_bitmask_isbitset(cpus, cpu)) {
            continue;
        }

        node = numa_node_of_cpu(cpu);
        if ((node >= 0) && (node < 64)) {
            nodes |= UCS_BIT(node);
        }
    }

    numa_free_cpumask(cpus);
    return nodes;
}

void uct_gaudi_assign_read_env(const char *device, long fake_numa,
                               uct_gaudi_assign_env_t *env)
{
    const char **var;

    memset(env, 0, sizeof(*env));
    env->device          = device;
    env->hls_module_id   = uct_gaudi_assign_getenv("HLS_MODULE_ID");
    env->visible_modules = uct_gaudi_assign_getenv("HABANA_VISIBLE_MODULES");
    for (var = uct_gaudi_assign_rank_vars; *var != NULL; ++var) {
        env->rank_value = uct_gaudi_assign_getenv(*var);
        if (env->rank_value != NULL) {
            env->rank_var = *var;
            break;
        }
    }

    if (fake_numa >= 0) {
        env->numa_nodes = (fake_numa < 64) ? UCS_BIT(fake_numa) : 0;
    } else {
        env->numa_nodes = uct_gaudi_assign_affinity_numa();
    }
}

/* A decimal number, spaces around it allowed; sets *end_p past the spaces */
static int uct_gaudi_assign_parse_uint(const char *str, const char **end_p,
                                       unsigned *value_p)
{
    unsigned long value;
    char *end;

    while (isspace((unsigned char)*str)) {
        ++str;
    }

    if (!isdigit((unsigned char)*str)) {
        return 0;
    }

    errno = 0;
    value = strtoul(str, &end, 10);
    if ((errno != 0) || (value > UINT_MAX)) {
        return 0;
    }

    while (isspace((unsigned char)*end)) {
        ++end;
    }

    *end_p   = end;
    *value_p = value;
    return 1;
}

static int uct_gaudi_assign_parse_single(const char *str, unsigned *value_p)
{
    const char *end;

    return uct_gaudi_assign_parse_uint(str, &end, value_p) && (*end == '\0');
}

static int uct_gaudi_assign_find_module(const uct_gaudi_dev_info_t *devs,
                                        unsigned num_devs, unsigned module)
{
    unsigned i;

    for (i = 0; i < num_devs; ++i) {
        if (devs[i].module_id == module) {
            return i;
        }
    }

    return -1;
}

static int uct_gaudi_assign_cmp_uint(const void *a, const void *b)
{
    unsigned x = *(const unsigned*)a;
    unsigned y = *(const unsigned*)b;

    return (x > y) - (x < y);
}

/* "0,1,2,3": the module IDs of this node, for error messages */
static void uct_gaudi_assign_modules_str(const uct_gaudi_dev_info_t *devs,
                                         unsigned num_devs, char *buf,
                                         size_t max)
{
    unsigned ids[UCT_GAUDI_MAX_DEVICES];
    size_t len;
    unsigned i;

    for (i = 0; i < num_devs; ++i) {
        ids[i] = devs[i].module_id;
    }

    qsort(ids, num_devs, sizeof(ids[0]), uct_gaudi_assign_cmp_uint);
    buf[0] = '\0';
    for (i = 0; i < num_devs; ++i) {
        len = strlen(buf);
        ucs_snprintf_safe(buf + len, max - len, "%s%u", (i > 0) ? "," : "",
                          ids[i]);
    }
}

/* The rule forces @a info: no other device may be taken */
static ucs_status_t uct_gaudi_assign_force(uct_gaudi_assign_t *assign,
                                           const uct_gaudi_dev_info_t *info,
                                           uct_gaudi_assign_rule_t rule)
{
    if (!info->usable) {
        uct_gaudi_assign_fail(assign, "%s selects %s (module %u, %s, %s), "
                              "which cannot be used: %s", assign->why,
                              info->name, info->module_id,
                              uct_gaudi_discover_asic_name(info->asic),
                              info->bus_id,
                              (info->asic == UCT_GAUDI_ASIC_GAUDI3) ?
                              "Gaudi3 DMA is not supported" :
                              "device not operational");
        return UCS_ERR_UNSUPPORTED;
    }

    assign->rule   = rule;
    assign->device = info;
    return UCS_OK;
}

static ucs_status_t uct_gaudi_assign_module(uct_gaudi_assign_t *assign,
                                            const uct_gaudi_dev_info_t *devs,
                                            unsigned num_devs, unsigned module,
                                            uct_gaudi_assign_rule_t rule)
{
    char list[UCT_GAUDI_ASSIGN_LIST_MAX];
    int index;

    index = uct_gaudi_assign_find_module(devs, num_devs, module);
    if (index < 0) {
        uct_gaudi_assign_modules_str(devs, num_devs, list, sizeof(list));
        uct_gaudi_assign_fail(assign, "%s: no Gaudi device has module ID %u "
                              "(the module IDs of this node: %s)", assign->why,
                              module, list);
        return UCS_ERR_NO_DEVICE;
    }

    return uct_gaudi_assign_force(assign, &devs[index], rule);
}

static const uct_gaudi_dev_info_t *
uct_gaudi_assign_find_spec(const char *spec, const uct_gaudi_dev_info_t *devs,
                           unsigned num_devs)
{
    ucs_sys_bus_id_t bus_id;
    unsigned value;
    int index;
    unsigned i;

    if (!strncmp(spec, "module:", 7)) {
        if (!isdigit((unsigned char)spec[7]) ||
            !uct_gaudi_assign_parse_single(spec + 7, &value)) {
            return NULL;
        }

        index = uct_gaudi_assign_find_module(devs, num_devs, value);
        return (index >= 0) ? &devs[index] : NULL;
    }

    /* "gaudiN", the device name UCX prints (ucx_info -d), is index N */
    if (!strncmp(spec, "gaudi", 5) && isdigit((unsigned char)spec[5])) {
        spec += 5;
    }

    if (isdigit((unsigned char)spec[0]) &&
        uct_gaudi_assign_parse_single(spec, &value)) {
        return (value < num_devs) ? &devs[value] : NULL;
    }

    if (uct_gaudi_discover_parse_bus_id(spec, &bus_id) != UCS_OK) {
        return NULL;
    }

    for (i = 0; i < num_devs; ++i) {
        if (uct_gaudi_discover_is_at(&devs[i], &bus_id)) {
            return &devs[i];
        }
    }

    return NULL;
}

/* UCX_GAUDI_DEVICE other than auto */
static ucs_status_t uct_gaudi_assign_config(const uct_gaudi_assign_env_t *env,
                                            const uct_gaudi_dev_info_t *devs,
                                            unsigned num_devs,
                                            uct_gaudi_assign_t *assign)
{
    const uct_gaudi_dev_info_t *info;

    ucs_snprintf_safe(assign->why, sizeof(assign->why), "UCX_GAUDI_DEVICE=%s",
                      env->device);
    info = uct_gaudi_assign_find_spec(env->device, devs, num_devs);
    if (info == NULL) {
        uct_gaudi_assign_fail(assign, "UCX_GAUDI_DEVICE=%s does not name one "
                              "of the %u Gaudi devices (use auto, a logical "
                              "index N or gaudiN, a PCI bus id or "
                              "module:<id>)",
                              env->device, num_devs);
        return UCS_ERR_NO_DEVICE;
    }

    return uct_gaudi_assign_force(assign, info, UCT_GAUDI_ASSIGN_CONFIG);
}

static ucs_status_t
uct_gaudi_assign_hls_module(const uct_gaudi_assign_env_t *env,
                            const uct_gaudi_dev_info_t *devs,
                            unsigned num_devs, uct_gaudi_assign_t *assign)
{
    unsigned module;

    ucs_snprintf_safe(assign->why, sizeof(assign->why), "HLS_MODULE_ID=%s",
                      env->hls_module_id);
    if (!uct_gaudi_assign_parse_single(env->hls_module_id, &module)) {
        uct_gaudi_assign_fail(assign, "HLS_MODULE_ID=%s is not a module ID "
                              "(a non-negative integer)", env->hls_module_id);
        return UCS_ERR_INVALID_PARAM;
    }

    return uct_gaudi_assign_module(assign, devs, num_devs, module,
                                   UCT_GAUDI_ASSIGN_HLS_MODULE);
}

static ucs_status_t
uct_gaudi_assign_local_rank(const uct_gaudi_assign_env_t *env,
                            uct_gaudi_assign_t *assign, unsigned *rank_p)
{
    if (!uct_gaudi_assign_parse_single(env->rank_value, rank_p)) {
        uct_gaudi_assign_fail(assign, "%s=%s is not a local rank (a "
                              "non-negative integer)", env->rank_var,
                              env->rank_value);
        return UCS_ERR_INVALID_PARAM;
    }

    return UCS_OK;
}

/* HABANA_VISIBLE_MODULES: module IDs of this node, each listed once */
static ucs_status_t
uct_gaudi_assign_parse_visible(const char *value,
                               const uct_gaudi_dev_info_t *devs,
                               unsigned num_devs, uct_gaudi_assign_t *assign,
                               unsigned *modules, unsigned *count_p)
{
    char list[UCT_GAUDI_ASSIGN_LIST_MAX];
    const char *p = value;
    unsigned count, i;

    for (count = 0; ; ++count) {
        if ((count == UCT_GAUDI_MAX_DEVICES) ||
            !uct_gaudi_assign_parse_uint(p, &p, &modules[count]) ||
            ((*p != ',') && (*p != '\0'))) {
            uct_gaudi_assign_fail(assign, "HABANA_VISIBLE_MODULES=%s: entry "
                                  "%u is not a module ID (expected a comma-"
                                  "separated list of non-negative integers)",
                                  value, count + 1);
            return UCS_ERR_INVALID_PARAM;
        }

        if (uct_gaudi_assign_find_module(devs, num_devs, modules[count]) < 0) {
            uct_gaudi_assign_modules_str(devs, num_devs, list, sizeof(list));
            uct_gaudi_assign_fail(assign, "HABANA_VISIBLE_MODULES=%s: no "
                                  "Gaudi device has module ID %u (the module "
                                  "IDs of this node: %s)", value,
                                  modules[count], list);
            return UCS_ERR_NO_DEVICE;
        }

        for (i = 0; i < count; ++i) {
            if (modules[i] == modules[count]) {
                uct_gaudi_assign_fail(assign, "HABANA_VISIBLE_MODULES=%s: "
                                      "module ID %u is listed twice", value,
                                      modules[count]);
                return UCS_ERR_INVALID_PARAM;
            }
        }

        if (*p++ == '\0') {
            *count_p = count + 1;
            return UCS_OK;
        }
    }
}

static ucs_status_t uct_gaudi_assign_visible(const uct_gaudi_assign_env_t *env,
                                             const uct_gaudi_dev_info_t *devs,
                                             unsigned num_devs,
                                             uct_gaudi_assign_t *assign)
{
    unsigned modules[UCT_GAUDI_MAX_DEVICES];
    unsigned count, rank, i;
    ucs_status_t status;

    status = uct_gaudi_assign_parse_visible(env->visible_modules, devs,
                                            num_devs, assign, modules, &count);
    if (status != UCS_OK) {
        return status;
    }

    if (env->rank_var == NULL) {
        /* no local rank: the scan rules choose among the listed modules */
        assign->candidates = 0;
        for (i = 0; i < count; ++i) {
            assign->candidates |= UCS_BIT(uct_gaudi_assign_find_module(
                    devs, num_devs, modules[i]));
        }
        ucs_snprintf_safe(assign->why, sizeof(assign->why),
                          " among HABANA_VISIBLE_MODULES=%s",
                          env->visible_modules);
        return UCS_OK;
    }

    status = uct_gaudi_assign_local_rank(env, assign, &rank);
    if (status != UCS_OK) {
        return status;
    }

    if (rank >= count) {
        uct_gaudi_assign_fail(assign, "local rank %u (%s=%s) is beyond "
                              "HABANA_VISIBLE_MODULES=%s, which lists %u "
                              "module(s)", rank, env->rank_var,
                              env->rank_value, env->visible_modules, count);
        return UCS_ERR_INVALID_PARAM;
    }

    ucs_snprintf_safe(assign->why, sizeof(assign->why),
                      "HABANA_VISIBLE_MODULES=%s at local rank %u (%s=%s)",
                      env->visible_modules, rank, env->rank_var,
                      env->rank_value);
    return uct_gaudi_assign_module(assign, devs, num_devs, modules[rank],
                                   UCT_GAUDI_ASSIGN_VISIBLE);
}

static ucs_status_t
uct_gaudi_assign_rank_module(const uct_gaudi_assign_env_t *env,
                             const uct_gaudi_dev_info_t *devs,
                             unsigned num_devs, uct_gaudi_assign_t *assign)
{
    ucs_status_t status;
    unsigned rank;

    status = uct_gaudi_assign_local_rank(env, assign, &rank);
    if (status != UCS_OK) {
        return status;
    }

    ucs_snprintf_safe(assign->why, sizeof(assign->why),
                      "module ID = local rank %u (%s=%s)", rank, env->rank_var,
                      env->rank_value);
    return uct_gaudi_assign_module(assign, devs, num_devs, rank,
                                   UCT_GAUDI_ASSIGN_LOCAL_RANK);
}

/* Candidates on the NUMA nodes of the process's CPUs, when that narrows the
 * choice (an unbound process on a two-socket host prefers nothing) */
static void uct_gaudi_assign_numa(const uct_gaudi_assign_env_t *env,
                                  const uct_gaudi_dev_info_t *devs,
                                  unsigned num_devs, uct_gaudi_assign_t *assign)
{
    unsigned i;

    assign->preferred = 0;
    for (i = 0; i < num_devs; ++i) {
        if ((assign->candidates & UCS_BIT(i)) && (devs[i].numa_node >= 0) &&
            (devs[i].numa_node < 64) &&
            (env->numa_nodes & UCS_BIT(devs[i].numa_node))) {
            assign->preferred |= UCS_BIT(i);
        }
    }

    if (assign->preferred == assign->candidates) {
        assign->preferred = 0;
    }
}

ucs_status_t uct_gaudi_assign_plan(const uct_gaudi_assign_env_t *env,
                                   const uct_gaudi_dev_info_t *devs,
                                   unsigned num_devs,
                                   uct_gaudi_assign_t *assign)
{
    ucs_status_t status;
    unsigned i;

    ucs_assert(num_devs <= UCT_GAUDI_MAX_DEVICES);
    memset(assign, 0, sizeof(*assign));
    assign->rule       = UCT_GAUDI_ASSIGN_FIRST_FREE;
    assign->candidates = (num_devs == 64) ? UINT64_MAX :
                                            (UCS_BIT(num_devs) - 1);

    if (strcasecmp(env->device, "auto")) {
        return uct_gaudi_assign_config(env, devs, num_devs, assign);
    } else if (env->hls_module_id != NULL) {
        return uct_gaudi_assign_hls_module(env, devs, num_devs, assign);
    } else if (env->visible_modules != NULL) {
        status = uct_gaudi_assign_visible(env, devs, num_devs, assign);
        if ((status != UCS_OK) || (assign->device != NULL)) {
            return status;
        }
    } else if (env->rank_var != NULL) {
        return uct_gaudi_assign_rank_module(env, devs, num_devs, assign);
    }

    for (i = 0; i < num_devs; ++i) {
        if (!devs[i].usable) {
            assign->candidates &= ~UCS_BIT(i);
        }
    }

    uct_gaudi_assign_numa(env, devs, num_devs, assign);
    return UCS_OK;
}

void uct_gaudi_assign_scan_taken(uct_gaudi_assign_t *assign,
                                 const uct_gaudi_dev_info_t *info)
{
    char why[UCT_GAUDI_ASSIGN_WHY_MAX];

    /* assign->why holds the restriction of the scan, if any */
    if (assign->preferred & UCS_BIT(info->index)) {
        assign->rule = UCT_GAUDI_ASSIGN_NUMA;
        ucs_snprintf_safe(why, sizeof(why), "the first free device on NUMA "
                          "node %d, where this process's CPUs are%s",
                          info->numa_node, assign->why);
    } else {
        assign->rule = UCT_GAUDI_ASSIGN_FIRST_FREE;
        ucs_snprintf_safe(why, sizeof(why), "the first free device%s%s",
                          assign->preferred ?
                          " (none is free near this process's CPUs)" : "",
                          assign->why);
    }

    ucs_strncpy_safe(assign->why, why, sizeof(assign->why));
}
