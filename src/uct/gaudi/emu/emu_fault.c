/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "emu_common.h"
#include "emu_fault.h"
#include "emu_log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#define EMU_FAULT_MAX_RULES 32

typedef enum {
    EMU_RULE_FAIL,
    EMU_RULE_CS_TIMEOUT,
    EMU_RULE_CS_ABORT,
    EMU_RULE_RESET
} emu_rule_type_t;

typedef struct {
    emu_rule_type_t  type;
    emu_fault_kind_t kind;
    uint64_t         nth;     /* 1-based */
    int              repeat;  /* "N+": the Nth and every later one */
    int              err;
} emu_fault_rule_t;

typedef struct {
    const char *name;
    int        value;
} emu_name_value_t;


/* The rules can be replaced while other threads (the application's, the
 * emulator's DMA workers) make calls (gaudi_emu_set_faults): the lock guards
 * the rules and their number; the counters are atomic */
static pthread_mutex_t  emu_fault_lock = PTHREAD_MUTEX_INITIALIZER;
static emu_fault_rule_t emu_fault_rules[EMU_FAULT_MAX_RULES];
static unsigned         emu_fault_num_rules;
static uint64_t         emu_fault_counts[EMU_FAULT_KIND_LAST];
static uint64_t         emu_fault_cs_count;
static uint64_t         emu_fault_fired;
static __thread uint64_t emu_fault_last_ioctl;

static const emu_name_value_t emu_fault_kinds[] = {
    {"open", EMU_FAULT_OPEN},     {"mmap", EMU_FAULT_MMAP},
    {"info", EMU_FAULT_INFO},     {"cb", EMU_FAULT_CB},
    {"cs", EMU_FAULT_CS},         {"wait_cs", EMU_FAULT_WAIT_CS},
    {"memory", EMU_FAULT_MEMORY}, {"debug", EMU_FAULT_DEBUG},
    {"import", EMU_FAULT_IMPORT}, {"any", EMU_FAULT_IOCTL}
};

static const emu_name_value_t emu_fault_errnos[] = {
    {"EPERM", EPERM},         {"ENOENT", ENOENT},   {"EINTR", EINTR},
    {"EIO", EIO},             {"ENXIO", ENXIO},     {"EBADF", EBADF},
    {"EAGAIN", EAGAIN},       {"ENOMEM", ENOMEM},   {"EACCES", EACCES},
    {"EFAULT", EFAULT},       {"EBUSY", EBUSY},     {"ENODEV", ENODEV},
    {"EINVAL", EINVAL},       {"ENOSPC", ENOSPC},   {"ENOTTY", ENOTTY},
    {"ETIMEDOUT", ETIMEDOUT}, {"ENOSYS", ENOSYS},   {"EOVERFLOW", EOVERFLOW},
    {"EOPNOTSUPP", EOPNOTSUPP}, {"ECANCELED", ECANCELED}
};


static int emu_fault_lookup(const emu_name_value_t *table, size_t size,
                            const char *name, int *value_p)
{
    size_t i;

    for (i = 0; i < size; ++i) {
        if (!strcmp(table[i].name, name)) {
            *value_p = table[i].value;
            return 0;
        }
    }
    return -1;
}

static int emu_fault_parse_count(const char *str, emu_fault_rule_t *rule)
{
    char *end;
    unsigned long long n;

    if ((*str < '0') || (*str > '9')) {
        return -1;
    }

    n = strtoull(str, &end, 10);
    if (*end == '+') {
        rule->repeat = 1;
        ++end;
    }

    if ((*end != '\0') || (n == 0)) {
        return -1;
    }

    rule->nth = n;
    return 0;
}

static int emu_fault_parse_errno(const char *str, int *err_p)
{
    char *end;
    long n;

    if (!emu_fault_lookup(emu_fault_errnos, emu_array_size(emu_fault_errnos),
                          str, err_p)) {
        return 0;
    }

    n = strtol(str, &end, 10);
    if ((*str == '\0') || (*end != '\0') || (n <= 0) || (n > 4095)) {
        return -1;
    }

    *err_p = (int)n;
    return 0;
}

/* "fail:KIND:N[+]:ERRNO" (or "ioctl:..."), already split at ':' */
static int emu_fault_parse_fail(char **f, int nf, emu_fault_rule_t *rule)
{
    int kind;

    if (nf != 4) {
        return -1;
    }

    if (emu_fault_lookup(emu_fault_kinds, emu_array_size(emu_fault_kinds),
                         f[1], &kind)) {
        return -1;
    }

    rule->type = EMU_RULE_FAIL;
    rule->kind = (emu_fault_kind_t)kind;
    return (emu_fault_parse_count(f[2], rule) ||
            emu_fault_parse_errno(f[3], &rule->err)) ? -1 : 0;
}

static int emu_fault_parse_item(char *item, emu_fault_rule_t *rule)
{
    char *f[5];
    int nf = 0;
    char *tok;

    /* strsep: empty fields ("a::b") stay visible and are rejected */
    while ((tok = strsep(&item, ":")) != NULL) {
        if ((nf == emu_array_size(f)) || (*tok == '\0')) {
            return -1;
        }
        f[nf++] = tok;
    }

    if (nf == 0) {
        return -1;
    }

    memset(rule, 0, sizeof(*rule));
    if (!strcmp(f[0], "fail") || !strcmp(f[0], "ioctl")) {
        return emu_fault_parse_fail(f, nf, rule);
    } else if (!strcmp(f[0], "cs_timeout")) {
        rule->type = EMU_RULE_CS_TIMEOUT;
    } else if (!strcmp(f[0], "cs_abort")) {
        rule->type = EMU_RULE_CS_ABORT;
    } else if (!strcmp(f[0], "reset")) {
        rule->type = EMU_RULE_RESET;
    } else {
        return -1;
    }

    return ((nf != 2) || emu_fault_parse_count(f[1], rule)) ? -1 : 0;
}

/* Parse @a spec into @a rules; returns the number of rules or -errno */
static int emu_fault_parse(const char *spec, emu_fault_rule_t *rules)
{
    char *copy, *rest, *item;
    char bad[128];
    int num = 0;

    copy = strdup(spec);
    if (copy == NULL) {
        emu_error("out of memory parsing the fault spec");
        return -ENOMEM;
    }

    rest = copy;
    while ((item = strsep(&rest, ",")) != NULL) {
        snprintf(bad, sizeof(bad), "%s", item);
        if (num == EMU_FAULT_MAX_RULES) {
            emu_error("fault spec (EMU_FAULTS): more than %d items", EMU_FAULT_MAX_RULES);
            num = -EINVAL;
            break;
        }
        if (emu_fault_parse_item(item, &rules[num])) {
            emu_error("fault spec (EMU_FAULTS): malformed item '%s' (expected "
                      "fail:KIND:N[+]:ERRNO, cs_timeout:N, cs_abort:N or "
                      "reset:N; KIND is open, mmap, info, cb, cs, wait_cs, "
                      "memory, debug or any)", bad);
            num = -EINVAL;
            break;
        }
        ++num;
    }

    if (num == 0) {
        emu_error("fault spec (EMU_FAULTS): '%s' holds no item", spec);
        num = -EINVAL;
    }

    free(copy);
    return num;
}

int emu_fault_setup(const char *spec)
{
    emu_fault_rule_t rules[EMU_FAULT_MAX_RULES];
    int num = 0;

    if ((spec != NULL) && (*spec != '\0')) {
        num = emu_fault_parse(spec, rules);
        if (num < 0) {
            return num; /* the rules in force stay */
        }
    }

    pthread_mutex_lock(&emu_fault_lock);
    memcpy(emu_fault_rules, rules, num * sizeof(*rules));
    emu_fault_num_rules = num;
    __atomic_store_n(&emu_fault_cs_count, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&emu_fault_fired, 0, __ATOMIC_RELAXED);
    memset(emu_fault_counts, 0, sizeof(emu_fault_counts));
    pthread_mutex_unlock(&emu_fault_lock);
    return 0;
}

EMU_EXPORT int gaudi_emu_set_faults(const char *spec)
{
    return emu_fault_setup(spec);
}

uint64_t emu_fault_fired_count(void)
{
    return __atomic_load_n(&emu_fault_fired, __ATOMIC_RELAXED);
}

static void emu_fault_count_fired(void)
{
    __atomic_add_fetch(&emu_fault_fired, 1, __ATOMIC_RELAXED);
}

static int emu_fault_match(const emu_fault_rule_t *rule, uint64_t count)
{
    return rule->repeat ? (count >= rule->nth) : (count == rule->nth);
}

int emu_fault_call(emu_fault_kind_t kind)
{
    uint64_t counts[EMU_FAULT_KIND_LAST] = {0};
    const emu_fault_rule_t *rule;
    int err = 0;
    unsigned i;

    counts[kind] = __atomic_add_fetch(&emu_fault_counts[kind], 1,
                                      __ATOMIC_RELAXED);
    /* an import is a memory ioctl, which counted already */
    if ((kind != EMU_FAULT_OPEN) && (kind != EMU_FAULT_MMAP) &&
        (kind != EMU_FAULT_IMPORT)) {
        counts[EMU_FAULT_IOCTL] = __atomic_add_fetch(
                &emu_fault_counts[EMU_FAULT_IOCTL], 1, __ATOMIC_RELAXED);
        emu_fault_last_ioctl = counts[EMU_FAULT_IOCTL];
    }

    pthread_mutex_lock(&emu_fault_lock);
    for (i = 0; i < emu_fault_num_rules; ++i) {
        rule = &emu_fault_rules[i];
        if ((rule->type == EMU_RULE_FAIL) && (counts[rule->kind] != 0) &&
            emu_fault_match(rule, counts[rule->kind])) {
            err = rule->err;
            break;
        }
    }
    pthread_mutex_unlock(&emu_fault_lock);

    if (err != 0) {
        emu_fault_count_fired();
    }
    return err;
}

emu_cs_fault_t emu_fault_cs(void)
{
    uint64_t count = __atomic_add_fetch(&emu_fault_cs_count, 1,
                                        __ATOMIC_RELAXED);
    emu_cs_fault_t fault  = EMU_CS_FAULT_NONE;
    const emu_fault_rule_t *rule;
    unsigned i;

    pthread_mutex_lock(&emu_fault_lock);
    for (i = 0; (i < emu_fault_num_rules) && (fault == EMU_CS_FAULT_NONE);
         ++i) {
        rule = &emu_fault_rules[i];
        if (!emu_fault_match(rule, count)) {
            continue;
        }
        if (rule->type == EMU_RULE_CS_TIMEOUT) {
            fault = EMU_CS_FAULT_TIMEOUT;
        } else if (rule->type == EMU_RULE_CS_ABORT) {
            fault = EMU_CS_FAULT_ABORT;
        }
    }
    pthread_mutex_unlock(&emu_fault_lock);

    if (fault != EMU_CS_FAULT_NONE) {
        emu_fault_count_fired();
    }
    return fault;
}

int emu_fault_reset_due(void)
{
    int due = 0;
    unsigned i;

    pthread_mutex_lock(&emu_fault_lock);
    for (i = 0; (i < emu_fault_num_rules) && !due; ++i) {
        due = (emu_fault_rules[i].type == EMU_RULE_RESET) &&
              emu_fault_match(&emu_fault_rules[i], emu_fault_last_ioctl);
    }
    pthread_mutex_unlock(&emu_fault_lock);

    if (due) {
        emu_fault_count_fired();
    }
    return due;
}

emu_fault_kind_t emu_fault_ioc_kind(uct_gaudi_ioc_t ioc)
{
    static const emu_fault_kind_t kinds[UCT_GAUDI_IOC_LAST] = {
        [UCT_GAUDI_IOC_INFO]    = EMU_FAULT_INFO,
        [UCT_GAUDI_IOC_CB]      = EMU_FAULT_CB,
        [UCT_GAUDI_IOC_CS]      = EMU_FAULT_CS,
        [UCT_GAUDI_IOC_WAIT_CS] = EMU_FAULT_WAIT_CS,
        [UCT_GAUDI_IOC_MEMORY]  = EMU_FAULT_MEMORY,
        [UCT_GAUDI_IOC_DEBUG]   = EMU_FAULT_DEBUG
    };

    return kinds[ioc];
}
