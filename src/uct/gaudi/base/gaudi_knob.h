/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_KNOB_H_
#define UCT_GAUDI_KNOB_H_

/*
 * Ranges of the transports' knobs. UCS's parser checks a value's type, not
 * whether it can be right: "-1" for an unsigned knob wraps to 4294967295,
 * "inf" is a size, a negative time is a time. Each check logs the knob's
 * full name, the value read and the accepted range, and fails with
 * UCS_ERR_INVALID_PARAM.
 */

#include <ucs/sys/compiler_def.h>
#include <ucs/time/time_def.h>
#include <ucs/type/status.h>
#include <stddef.h>

BEGIN_C_DECLS


/* @a prefix: the table's, with UCX_ ("UCX_GAUDI_COPY_"); @a name: the knob */
ucs_status_t uct_gaudi_knob_check_uint(const char *prefix, const char *name,
                                       unsigned value, unsigned min,
                                       unsigned max);

ucs_status_t uct_gaudi_knob_check_size(const char *prefix, const char *name,
                                       size_t value, size_t min, size_t max);

/* @a value and the range in @a unit (for the message only) */
ucs_status_t uct_gaudi_knob_check_dbl(const char *prefix, const char *name,
                                      double value, const char *unit,
                                      double min, double max);

ucs_status_t uct_gaudi_knob_check_time(const char *prefix, const char *name,
                                       ucs_time_t value, ucs_time_t min,
                                       ucs_time_t max);

END_C_DECLS

#endif
