/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#include "gt_register.h"

#include <stdio.h>
#include <stdlib.h>

#include <set>
#include <string>


namespace gaudi_test {

void claim_test_name(const char *suite, const char *name)
{
    static std::set<std::string> names;
    std::string full = std::string(suite) + "." + name;

    if (!names.insert(full).second) {
        fprintf(stderr, "gaudi_test: the test %s is registered twice (two "
                "rows of one name in its table)\n", full.c_str());
        abort();
    }
}

} /* namespace gaudi_test */
