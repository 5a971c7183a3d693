/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_maptab.h"

#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/sys/string.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <string.h>


#define UCT_GAUDI_MAPTAB_ENV "GAUDI_MAPPING_TABLE"
#define UCT_GAUDI_MAPTAB_ERR_MAX 256


typedef struct {
    const uct_gaudi_dev_info_t *devs;
    unsigned                   num_devs;
    int                        dev_pos[UCT_GAUDI_MAX_DEVICES];   /* by index */
    int                        dev_entry[UCT_GAUDI_MAX_DEVICES]; /* by pos */
    char                       err[UCT_GAUDI_MAPTAB_ERR_MAX];
} uct_gaudi_maptab_ctx_t;


#define uct_gaudi_maptab_fail(_ctx, _fmt, ...) \
    ({ \
        ucs_snprintf_safe((_ctx)->err, sizeof((_ctx)->err), _fmt, \
                          ## __VA_ARGS__); \
        UCS_ERR_INVALID_PARAM; \
    })


static int uct_gaudi_maptab_get_int(const cJSON *item, int *value_p)
{
    double value;

    if (!cJSON_IsNumber(item)) {
        return 0;
    }

    value = item->valuedouble;
    if ((value < INT_MIN) || (value > INT_MAX) || (value != (int)value)) {
        return 0;
    }

    *value_p = (int)value;
    return 1;
}

/* Position of the single device matching; -1 none, -2 ambiguous */
static int uct_gaudi_maptab_find_module(const uct_gaudi_maptab_ctx_t *ctx,
                                        int module_id)
{
    int found = -1;
    unsigned i;

    for (i = 0; i < ctx->num_devs; ++i) {
        if (ctx->devs[i].module_id == (uint32_t)module_id) {
            found = (found == -1) ? (int)i : -2;
        }
    }

    return found;
}

static int uct_gaudi_maptab_find_bus(const uct_gaudi_maptab_ctx_t *ctx,
                                     const ucs_sys_bus_id_t *bus_id)
{
    unsigned i;

    for (i = 0; i < ctx->num_devs; ++i) {
        if (uct_gaudi_discover_is_at(&ctx->devs[i], bus_id)) {
            return i;
        }
    }

    return -1;
}

static ucs_status_t
uct_gaudi_maptab_entry_module(uct_gaudi_maptab_ctx_t *ctx, unsigned entry_no,
                              const cJSON *item, int *pos_p)
{
    int module_id;

    if (!uct_gaudi_maptab_get_int(item, &module_id) || (module_id < 0)) {
        return uct_gaudi_maptab_fail(ctx, "entry [%u]: \"module_id\" is not "
                                     "a non-negative integer", entry_no);
    }

    *pos_p = uct_gaudi_maptab_find_module(ctx, module_id);
    if (*pos_p == -1) {
        return uct_gaudi_maptab_fail(ctx, "entry [%u]: no Gaudi device has "
                                     "module_id %d", entry_no, module_id);
    } else if (*pos_p == -2) {
        return uct_gaudi_maptab_fail(ctx, "entry [%u]: module_id %d is shared "
                                     "by several devices; use \"bus_id\"",
                                     entry_no, module_id);
    }

    return UCS_OK;
}

static ucs_status_t
uct_gaudi_maptab_entry_bus(uct_gaudi_maptab_ctx_t *ctx, unsigned entry_no,
                           const cJSON *item, int *pos_p)
{
    ucs_sys_bus_id_t bus_id;

    if (!cJSON_IsString(item) ||
        (uct_gaudi_discover_parse_bus_id(item->valuestring,
                                         &bus_id) != UCS_OK)) {
        return uct_gaudi_maptab_fail(ctx, "entry [%u]: \"bus_id\" is not a PCI"
                                     " bus id string (\"dddd:bb:dd.f\")",
                                     entry_no);
    }

    *pos_p = uct_gaudi_maptab_find_bus(ctx, &bus_id);
    if (*pos_p < 0) {
        return uct_gaudi_maptab_fail(ctx, "entry [%u]: no Gaudi device has "
                                     "bus_id %s", entry_no, item->valuestring);
    }

    return UCS_OK;
}

/* Device position named by an entry (by module id and/or bus id) */
static ucs_status_t
uct_gaudi_maptab_entry_device(uct_gaudi_maptab_ctx_t *ctx, unsigned entry_no,
                              const cJSON *entry, int *pos_p)
{
    const cJSON *module = cJSON_GetObjectItemCaseSensitive(entry, "module_id");
    const cJSON *bus    = cJSON_GetObjectItemCaseSensitive(entry, "bus_id");
    int module_pos      = -1;
    int bus_pos         = -1;
    ucs_status_t status;

    if ((module == NULL) && (bus == NULL)) {
        return uct_gaudi_maptab_fail(ctx, "entry [%u]: needs \"module_id\" or "
                                     "\"bus_id\"", entry_no);
    }

    if (module != NULL) {
        status = uct_gaudi_maptab_entry_module(ctx, entry_no, module,
                                               &module_pos);
        if (status != UCS_OK) {
            return status;
        }
    }

    if (bus != NULL) {
        status = uct_gaudi_maptab_entry_bus(ctx, entry_no, bus, &bus_pos);
        if (status != UCS_OK) {
            return status;
        }
    }

    if ((module_pos >= 0) && (bus_pos >= 0) && (module_pos != bus_pos)) {
        return uct_gaudi_maptab_fail(ctx, "entry [%u]: module_id and bus_id "
                                     "name different devices (%s and %s)",
                                     entry_no, ctx->devs[module_pos].bus_id,
                                     ctx->devs[bus_pos].bus_id);
    }

    *pos_p = (module_pos >= 0) ? module_pos : bus_pos;
    return UCS_OK;
}

static ucs_status_t uct_gaudi_maptab_entry(uct_gaudi_maptab_ctx_t *ctx,
                                           unsigned entry_no,
                                           const cJSON *entry)
{
    ucs_status_t status;
    int index, pos;

    if (!cJSON_IsObject(entry)) {
        return uct_gaudi_maptab_fail(ctx, "entry [%u] is not an object",
                                     entry_no);
    }

    if (!uct_gaudi_maptab_get_int(cJSON_GetObjectItemCaseSensitive(entry,
                                                                   "index"),
                                  &index)) {
        return uct_gaudi_maptab_fail(ctx, "entry [%u]: \"index\" is missing "
                                     "or not an integer", entry_no);
    }

    if ((index < 0) || (index >= (int)ctx->num_devs)) {
        return uct_gaudi_maptab_fail(ctx, "entry [%u]: index %d is out of "
                                     "range (%u device(s) discovered)",
                                     entry_no, index, ctx->num_devs);
    }

    if (ctx->dev_pos[index] >= 0) {
        return uct_gaudi_maptab_fail(ctx, "entry [%u]: duplicate index %d",
                                     entry_no, index);
    }

    status = uct_gaudi_maptab_entry_device(ctx, entry_no, entry, &pos);
    if (status != UCS_OK) {
        return status;
    }

    if (ctx->dev_entry[pos] >= 0) {
        return uct_gaudi_maptab_fail(ctx, "entry [%u]: device %s is already "
                                     "mapped by entry [%d]", entry_no,
                                     ctx->devs[pos].bus_id,
                                     ctx->dev_entry[pos]);
    }

    ctx->dev_pos[index] = pos;
    ctx->dev_entry[pos] = entry_no;
    return UCS_OK;
}

static ucs_status_t uct_gaudi_maptab_walk(uct_gaudi_maptab_ctx_t *ctx,
                                          const cJSON *root)
{
    const cJSON *entry;
    ucs_status_t status;
    unsigned entry_no;

    if (!cJSON_IsArray(root)) {
        return uct_gaudi_maptab_fail(ctx, "it is not a JSON array");
    }

    if (cJSON_GetArraySize(root) == 0) {
        return uct_gaudi_maptab_fail(ctx, "it is an empty array");
    }

    entry_no = 0;
    cJSON_ArrayForEach(entry, root) {
        status = uct_gaudi_maptab_entry(ctx, entry_no++, entry);
        if (status != UCS_OK) {
            return status;
        }
    }

    return UCS_OK;
}

/* Mapped devices at their indices, the others in physical order */
static void uct_gaudi_maptab_fill(const uct_gaudi_maptab_ctx_t *ctx,
                                  unsigned *order)
{
    unsigned index, pos;

    pos = 0;
    for (index = 0; index < ctx->num_devs; ++index) {
        if (ctx->dev_pos[index] >= 0) {
            order[index] = ctx->dev_pos[index];
            continue;
        }

        while (ctx->dev_entry[pos] >= 0) {
            ++pos;
        }

        order[index] = pos++;
    }
}

ucs_status_t uct_gaudi_maptab_parse(const char *json,
                                    const uct_gaudi_dev_info_t *devs,
                                    unsigned num_devs, unsigned *order)
{
    uct_gaudi_maptab_ctx_t ctx;
    ucs_status_t status;
    const char *where;
    cJSON *root;
    unsigned i;

    ucs_assert(num_devs <= UCT_GAUDI_MAX_DEVICES);
    ctx.devs     = devs;
    ctx.num_devs = num_devs;
    ctx.err[0]   = '\0';
    for (i = 0; i < UCT_GAUDI_MAX_DEVICES; ++i) {
        ctx.dev_pos[i]   = -1;
        ctx.dev_entry[i] = -1;
    }

    root = cJSON_Parse(json);
    if (root == NULL) {
        where  = cJSON_GetErrorPtr();
        status = uct_gaudi_maptab_fail(&ctx, "it is not valid JSON (error "
                                       "near \"%.20s\")",
                                       (where != NULL) ? where : "");
    } else {
        status = uct_gaudi_maptab_walk(&ctx, root);
        cJSON_Delete(root);
    }

    if (status != UCS_OK) {
        ucs_error("ignoring %s: %s; using the discovered device order",
                  UCT_GAUDI_MAPTAB_ENV, ctx.err);
        return status;
    }

    uct_gaudi_maptab_fill(&ctx, order);
    ucs_debug("applied %s with %d entries", UCT_GAUDI_MAPTAB_ENV, num_devs);
    return UCS_OK;
}
