/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_TEST_GT_REGISTER_H_
#define GAUDI_TEST_GT_REGISTER_H_

/*
 * Tests registered from a table (one row a test) rather than one TEST_F
 * each. gtest itself takes a name twice without a word (both run, under
 * the same name, and a filter picks both): a row copied without renaming
 * aborts the program here instead.
 */

#include <gtest/gtest.h>


namespace gaudi_test {

/* Abort, naming it, if @a suite.@a name was registered before */
void claim_test_name(const char *suite, const char *name);

/*
 * Register @a suite.@a name (before RUN_ALL_TESTS), run by the fixture
 * that @a factory returns (a new object of one class for the whole suite)
 */
template <typename Factory>
void register_test(const char *suite, const char *name, const char *file,
                   int line, Factory factory)
{
    claim_test_name(suite, name);
    ::testing::RegisterTest(suite, name, nullptr, nullptr, file, line,
                            factory);
}

} /* namespace gaudi_test */

#endif
