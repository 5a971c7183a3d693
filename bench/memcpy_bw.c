/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * Plain memcpy bandwidth between two host buffers, the reference the
 * benchmark divides by. Prints "<MB/s>" (MB = 2^20, like ucx_perftest).
 * usage: memcpy_bw SIZE ITERATIONS
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

int main(int argc, char **argv)
{
    size_t size  = (argc > 1) ? strtoul(argv[1], NULL, 0) : (4ul << 20);
    long iters   = (argc > 2) ? strtol(argv[2], NULL, 0) : 200;
    char *src    = malloc(size);
    char *dst    = malloc(size);
    double start, elapsed;
    long i;

    if ((src == NULL) || (dst == NULL) || (iters <= 0)) {
        fprintf(stderr, "usage: memcpy_bw SIZE ITERATIONS\n");
        return 1;
    }

    memset(src, 1, size);
    memset(dst, 2, size);
    memcpy(dst, src, size); /* warm up */
    start = now();
    for (i = 0; i < iters; ++i) {
        src[i % size] = (char)i;
        memcpy(dst, src, size);
    }
    elapsed = now() - start;
    if (dst[(iters - 1) % size] != (char)(iters - 1)) {
        fprintf(stderr, "memcpy_bw: copy check failed\n");
        return 1;
    }

    printf("%.2f\n", (size * (double)iters) / elapsed / (1 << 20));
    free(src);
    free(dst);
    return 0;
}
