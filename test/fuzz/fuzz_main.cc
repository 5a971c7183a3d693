/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * gaudi_fuzz: every input that reaches ucx-gaudi from outside the process,
 * mutated in seeded loops (docs/fuzzing.md). One gtest per target, each
 * running for GAUDI_FUZZ_SECONDS (10) in forked workers; the fixed inputs
 * of the bugs it found run as ordinary tests beside them.
 *
 *   gaudi_fuzz [gtest options]
 *   GAUDI_FUZZ_SECONDS=600 gaudi_fuzz --gtest_filter=gaudi_fuzz.ioctl
 *   GAUDI_FUZZ_SEED=0x... GAUDI_FUZZ_FIRST=N GAUDI_FUZZ_ITERATIONS=1 ...
 *                                  replay one input (the report prints it)
 */

#include <gtest/gtest.h>

int main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
