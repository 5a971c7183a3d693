/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "gaudi_knob.h"

#include <ucs/config/types.h>
#include <ucs/debug/log.h>
#include <ucs/sys/string.h>
#include <ucs/time/time.h>
#include <limits.h>
#include <math.h>


ucs_status_t uct_gaudi_knob_check_uint(const char *prefix, const char *name,
                                       unsigned value, unsigned min,
                                       unsigned max)
{
    if ((value >= min) && (value <= max)) {
        return UCS_OK;
    }

    ucs_error("%s%s=%u is out of range: accepted %u..%u%s", prefix, name,
              value, min, max,
              (value > INT_MAX) ? " (a negative value wraps around)" : "");
    return UCS_ERR_INVALID_PARAM;
}

ucs_status_t uct_gaudi_knob_check_size(const char *prefix, const char *name,
                                       size_t value, size_t min, size_t max)
{
    char buf[3][32];

    if ((value >= min) && (value <= max) && (value != UCS_MEMUNITS_INF) &&
        (value != UCS_MEMUNITS_AUTO)) {
        return UCS_OK;
    }

    ucs_error("%s%s=%s is out of range: accepted %s..%s%s", prefix, name,
              (value == UCS_MEMUNITS_INF) ? "inf" :
              (value == UCS_MEMUNITS_AUTO) ? "auto" :
              ucs_memunits_to_str(value, buf[0], sizeof(buf[0])),
              ucs_memunits_to_str(min, buf[1], sizeof(buf[1])),
              ucs_memunits_to_str(max, buf[2], sizeof(buf[2])),
              (value > SSIZE_MAX) ? " (a negative value wraps around)" : "");
    return UCS_ERR_INVALID_PARAM;
}

ucs_status_t uct_gaudi_knob_check_dbl(const char *prefix, const char *name,
                                      double value, const char *unit,
                                      double min, double max)
{
    /* NaN fails both comparisons */
    if ((value >= min) && (value <= max)) {
        return UCS_OK;
    }

    ucs_error("%s%s=%g%s is out of range: accepted %g%s..%g%s", prefix, name,
              value, unit, min, unit, max, unit);
    return UCS_ERR_INVALID_PARAM;
}

ucs_status_t uct_gaudi_knob_check_time(const char *prefix, const char *name,
                                       ucs_time_t value, ucs_time_t min,
                                       ucs_time_t max)
{
    if ((value >= min) && (value <= max)) {
        return UCS_OK;
    }

    ucs_error("%s%s=%.3fus is out of range: accepted %.3fus..%.3fus%s",
              prefix, name, ucs_time_to_usec(value), ucs_time_to_usec(min),
              ucs_time_to_usec(max),
              ((int64_t)value < 0) ? " (a negative value wraps around)" : "");
    return UCS_ERR_INVALID_PARAM;
}
