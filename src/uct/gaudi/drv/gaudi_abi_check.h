/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_ABI_CHECK_H_
#define UCT_GAUDI_ABI_CHECK_H_

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

/* The system uAPI header our ABI was checked against at build time, or
 * NULL if none was installed */
const char *uct_gaudi_abi_check_header(void);

END_C_DECLS

#endif
