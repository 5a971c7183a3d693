/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_tls.h"

#include <uct/gaudi/gaudi_ucx_compat.h>
#include <uct/gaudi/drv/gaudi_lib.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>
#include <stdlib.h>
#include <string.h>


/* our transports' names in this build, and the alias of both */
static const char *const uct_gaudi_tls_ours[] = {
    UCT_GAUDI_COPY_TL_NAME, "gaudi_ipc", UCT_GAUDI_TLS_ALIAS, NULL
};


/* Count the entries of an explicit UCX_TLS list, and those among them that
 * are one of @a names; 0 entries: no explicit list */
static unsigned uct_gaudi_tls_scan(const char *const *names,
                                   unsigned *num_listed_p)
{
    const char *tls = getenv("UCX_TLS");
    const char *const *name;
    char *list, *tl, *save;
    unsigned count = 0;

    *num_listed_p = 0;
    if ((tls == NULL) || (tls[0] == '^')) {
        return 0;
    }

    /* a copy of the whole value: a truncated one could cut a name */
    list = ucs_strdup(tls, "gaudi_tls");
    if (list == NULL) {
        return 0;
    }

    for (tl = strtok_r(list, ",", &save); tl != NULL;
         tl = strtok_r(NULL, ",", &save)) {
        tl += (tl[0] == '\\');  /* "\name": the transport, not an alias */
        if (!strcmp(tl, "all")) {
            count         = 0;
            *num_listed_p = 0;
            break;
        }

        ++count;
        for (name = names; *name != NULL; ++name) {
            if (!strcmp(tl, *name)) {
                ++(*num_listed_p);
                break;
            }
        }
    }

    ucs_free(list);
    return count;
}

int uct_gaudi_tls_lists(const char *const *names)
{
    unsigned num_listed;

    uct_gaudi_tls_scan(names, &num_listed);
    return num_listed > 0;
}

void uct_gaudi_tls_check(void)
{
    static const char *const ipc[]  = {"gaudi_ipc", NULL};
    static const char *const copy[] = {UCT_GAUDI_COPY_TL_NAME,
                                       UCT_GAUDI_TLS_ALIAS, NULL};
    unsigned count, num_ours;

    count = uct_gaudi_tls_scan(uct_gaudi_tls_ours, &num_ours);
    if ((count > 0) && (num_ours == count) &&
        uct_gaudi_lib_first_notice("tls-only-gaudi")) {
        ucs_warn("UCX_TLS=%s lists Gaudi transports only, and they carry no "
                 "active messages, which UCP needs for every endpoint: add "
                 "one that does (posix or sysv within a node, tcp or rc "
                 "between nodes, self for the process itself), e.g. "
                 "UCX_TLS=" UCT_GAUDI_COPY_TL_NAME ",gaudi_ipc,posix,self",
                 getenv("UCX_TLS"));
    }

    if (uct_gaudi_tls_lists(ipc) && !uct_gaudi_tls_lists(copy) &&
        uct_gaudi_lib_first_notice("tls-ipc-without-copy")) {
        ucs_warn("UCX_TLS=%s lists gaudi_ipc without " UCT_GAUDI_COPY_TL_NAME
                 ": UCP can neither allocate, detect nor stage Gaudi memory "
                 "without it (add " UCT_GAUDI_COPY_TL_NAME " to UCX_TLS)",
                 getenv("UCX_TLS"));
    }
}
