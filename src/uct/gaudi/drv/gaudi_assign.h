/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_ASSIGN_H_
#define UCT_GAUDI_ASSIGN_H_

/*
 * Which Gaudi this process takes: the rules of Habana's runtime (its
 * "Gaudi-to-process assignment"), so that UCX and the application's
 * framework agree on the device when either of them opens it first. Under
 * UCX_GAUDI_DEVICE=auto, in this order:
 *   1. HLS_MODULE_ID=N                    the module N
 *   2. HABANA_VISIBLE_MODULES=a,b,...     the entry at the local rank
 *   3. a local rank R                     the module R
 *   4. a free device on a NUMA node of the CPUs the process may run on
 *   5. the first free device
 * With HABANA_VISIBLE_MODULES and no local rank, rules 4 and 5 choose among
 * the listed modules. A compute node the process already has open comes
 * before all of them (gaudi_own.c), and any other UCX_GAUDI_DEVICE value
 * replaces rules 1-5.
 *
 * This file decides; gaudi_own.c opens. The decision is a pure function of
 * the values read from the environment, so that the unit tests can give it
 * any input.
 */

#include "gaudi_discover.h"

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stdint.h>

BEGIN_C_DECLS


#define UCT_GAUDI_ASSIGN_WHY_MAX 192
#define UCT_GAUDI_ASSIGN_ERROR_MAX 384


/* The rule that chose the device */
typedef enum {
    UCT_GAUDI_ASSIGN_ADOPTED,    /* compute node already open in the process */
    UCT_GAUDI_ASSIGN_CONFIG,     /* UCX_GAUDI_DEVICE */
    UCT_GAUDI_ASSIGN_HLS_MODULE, /* HLS_MODULE_ID */
    UCT_GAUDI_ASSIGN_VISIBLE,    /* HABANA_VISIBLE_MODULES at the local rank */
    UCT_GAUDI_ASSIGN_LOCAL_RANK, /* module ID = local rank */
    UCT_GAUDI_ASSIGN_NUMA,       /* free device near the process's CPUs */
    UCT_GAUDI_ASSIGN_FIRST_FREE  /* first free device */
} uct_gaudi_assign_rule_t;


/* What the rules read; NULL strings are unset (or set to "") variables */
typedef struct {
    const char *device;          /* UCX_GAUDI_DEVICE */
    const char *hls_module_id;   /* HLS_MODULE_ID */
    const char *visible_modules; /* HABANA_VISIBLE_MODULES */
    const char *rank_var;        /* first local-rank variable that is set */
    const char *rank_value;      /* its value */
    uint64_t   numa_nodes;       /* NUMA nodes of the process's CPUs (bit N:
                                    node N); 0 if unknown */
} uct_gaudi_assign_env_t;


/* The decision */
typedef struct {
    uct_gaudi_assign_rule_t    rule;       /* forced rules, or NUMA/FIRST */
    const uct_gaudi_dev_info_t *device;    /* forced: this device or none */
    uint64_t                   candidates; /* scan: usable devices allowed,
                                              by logical index */
    uint64_t                   preferred;  /* scan: NUMA-near candidates, tried
                                              first; 0: no NUMA preference */
    char                       why[UCT_GAUDI_ASSIGN_WHY_MAX]; /* for logs */
    char                       error[UCT_GAUDI_ASSIGN_ERROR_MAX]; /* why the
                                  rules give no device, for the caller to
                                  log */
} uct_gaudi_assign_t;


/* Local-rank variables of the launchers, in the order they are consulted */
extern const char *uct_gaudi_assign_rank_vars[];


/**
 * Fill @a env from the process environment, UCX_GAUDI_DEVICE = @a device and
 * the NUMA nodes of the CPU affinity (libnuma), or the node @a fake_numa
 * instead when it is >= 0 (tests of an emulated node).
 */
void uct_gaudi_assign_read_env(const char *device, long fake_numa,
                               uct_gaudi_assign_env_t *env);


/**
 * Apply the rules to the devices @a devs (logical order).
 *
 * @return UCS_OK with @a assign filled: a forced rule names its device
 *         (which may be busy: forced means no other); the NUMA and first-free
 *         rules give the candidates to try. Wrong input: UCS_ERR_INVALID_PARAM
 *         (malformed, listed twice, local rank beyond the list),
 *         UCS_ERR_NO_DEVICE (no such device) or UCS_ERR_UNSUPPORTED (the
 *         device cannot be used), with assign->error naming the variable and
 *         its value. Nothing is logged: the caller says it once.
 */
ucs_status_t uct_gaudi_assign_plan(const uct_gaudi_assign_env_t *env,
                                   const uct_gaudi_dev_info_t *devs,
                                   unsigned num_devs,
                                   uct_gaudi_assign_t *assign);


/**
 * After a scan took @a info: set the rule that took it and its "why" (the
 * NUMA rule when it was preferred, else the first-free rule).
 */
void uct_gaudi_assign_scan_taken(uct_gaudi_assign_t *assign,
                                 const uct_gaudi_dev_info_t *info);

END_C_DECLS

#endif
