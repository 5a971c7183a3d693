/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_TLS_H_
#define UCT_GAUDI_TLS_H_

/*
 * What UCX_TLS asks of our transports. UCP reads UCX_TLS itself; these only
 * recognise the mistakes UCP reports with a message that does not say what
 * is missing ("no active messages transport", "Out of memory"), and say it
 * once per process when UCP queries our components. Only an explicit list
 * counts: unset, "all" or a "^" exclusion takes whatever is there.
 */

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS


/* Whether UCX_TLS lists one of @a names (NULL-terminated) */
int uct_gaudi_tls_lists(const char *const *names);

/* Warn once per mistake: a list of Gaudi transports alone (none of them
 * carries active messages, UCP needs one); gaudi_ipc without the copy
 * transport (UCP can then neither allocate, detect nor stage Gaudi memory) */
void uct_gaudi_tls_check(void);


END_C_DECLS

#endif
