/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

/*
 * An MPI application moving Gaudi buffers between two ranks, the way a user
 * of Open MPI's pml ucx does: MPI_Send/MPI_Recv straight on device
 * addresses, UCX detects the memory type and picks the transports.
 *
 * The Gaudi buffers come from UCP (ucp_mem_map with memory type gaudi), as
 * an application's own runtime would hand them out; the bytes never pass
 * through the CPU inside this program. For every size from 1 B to 16 MiB a
 * pattern takes the path
 *
 *     host(0) -> gaudi(1) -> gaudi(0) -> gaudi(1)' -> host(0)
 *
 * so that Gaudi -> Gaudi runs in both directions, and rank 0 checks the
 * pattern byte by byte, with guard bytes after the received message and the
 * received count. Prints "PASS size" / "FAIL size: reason" per size, then
 * "imports=N" per rank: the peak number of peer DMA-BUFs the rank imported
 * (from the emulator's accounting, "-" without it), which tells whether
 * gaudi_ipc carried the Gaudi -> Gaudi legs. Exits non-zero on any failure.
 *
 * usage: mpirun -np 2 ... gaudi_mpi_xfer [MAX_SIZE]
 */

#define _GNU_SOURCE
#include <mpi.h>
#include <ucp/api/ucp.h>
#include <uct/gaudi/seam/gaudi_emu.h>

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XFER_GUARD      64
#define XFER_GUARD_BYTE 0xa5

#define CHECK(_cond, ...) \
    do { \
        if (!(_cond)) { \
            fprintf(stderr, "gaudi_mpi_xfer: " __VA_ARGS__); \
            fprintf(stderr, "\n"); \
            MPI_Abort(MPI_COMM_WORLD, 2); \
        } \
    } while (0)


static ucp_context_h xfer_context;

static gaudi_emu_get_stats_func_t xfer_emu_stats;
static int                        xfer_imports_peak;

static int xfer_emu_find(struct dl_phdr_info *info, size_t size, void *arg)
{
    if ((info->dlpi_name != NULL) &&
        (strstr(info->dlpi_name, "libgaudi_emu.so") != NULL)) {
        snprintf(arg, PATH_MAX, "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

/* the emulator's accounting, when the module runs over it: the driver library
 * dlopen()s it RTLD_LOCAL, so look it up among the loaded objects */
static void xfer_emu_stats_init(void)
{
    char path[PATH_MAX];
    void *handle;

    if (!dl_iterate_phdr(xfer_emu_find, path)) {
        return;
    }
    handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (handle != NULL) {
        xfer_emu_stats = (gaudi_emu_get_stats_func_t)dlsym(
                handle, GAUDI_EMU_STATS_SYMBOL);
        dlclose(handle); /* UCX keeps its own reference */
    }
}

static void xfer_emu_sample(void)
{
    gaudi_emu_stats_t stats;

    if ((xfer_emu_stats != NULL) && (xfer_emu_stats(&stats) == 0) &&
        ((int)stats.import_maps > xfer_imports_peak)) {
        xfer_imports_peak = stats.import_maps;
    }
}

static void *xfer_gaudi_alloc(size_t size, ucp_mem_h *memh_p)
{
    ucp_mem_map_params_t params = {
        .field_mask  = UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                       UCP_MEM_MAP_PARAM_FIELD_FLAGS |
                       UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE,
        .length      = size,
        .flags       = UCP_MEM_MAP_ALLOCATE,
        .memory_type = UCS_MEMORY_TYPE_GAUDI
    };
    ucp_mem_attr_t attr = {
        .field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_MEM_TYPE
    };
    ucs_status_t status;

    status = ucp_mem_map(xfer_context, &params, memh_p);
    CHECK(status == UCS_OK, "ucp_mem_map(%zu bytes of gaudi memory): %s",
          size, ucs_status_string(status));
    status = ucp_mem_query(*memh_p, &attr);
    CHECK(status == UCS_OK, "ucp_mem_query: %s", ucs_status_string(status));
    CHECK(attr.mem_type == UCS_MEMORY_TYPE_GAUDI,
          "ucp_mem_map gave %s memory, not gaudi",
          ucs_memory_type_names[attr.mem_type]);
    return attr.address;
}

static uint8_t xfer_pattern(size_t size, size_t i)
{
    uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ (size * 0x2545f4914f6cdd1dull);

    return (uint8_t)(x >> 56);
}

static void xfer_send(void *buf, size_t size, int peer)
{
    MPI_Send(buf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
    xfer_emu_sample();
}

/* receive exactly SIZE bytes */
static void xfer_recv(void *buf, size_t size, int peer)
{
    MPI_Status st;
    int count;

    MPI_Recv(buf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK((size_t)count == size, "received %d bytes, expected %zu", count,
          size);
    xfer_emu_sample();
}

/* rank 0's check of the pattern that came back; returns the failures */
static int xfer_check(const uint8_t *host, size_t size)
{
    size_t i;

    for (i = 0; i < size; ++i) {
        if (host[i] != xfer_pattern(size, i)) {
            printf("FAIL %zu: byte %zu is 0x%02x, expected 0x%02x\n", size, i,
                   host[i], xfer_pattern(size, i));
            return 1;
        }
    }
    for (i = size; i < size + XFER_GUARD; ++i) {
        if (host[i] != XFER_GUARD_BYTE) {
            printf("FAIL %zu: guard byte %zu after the message overwritten\n",
                   size, i - size);
            return 1;
        }
    }
    printf("PASS %zu\n", size);
    return 0;
}

int main(int argc, char **argv)
{
    size_t max = (argc > 1) ? strtoull(argv[1], NULL, 0) : (16ul << 20);
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES,
        .features   = UCP_FEATURE_TAG
    };
    size_t sizes[64], size, nsizes = 0;
    int rank, nranks, failures = 0, peak, i;
    ucp_mem_h memh_a, memh_b;
    uint8_t *host, *gaudi_a, *gaudi_b;
    ucs_status_t status;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(nranks == 2, "needs exactly 2 ranks, got %d", nranks);
    CHECK((max > 0) && (max <= (1ul << 30)), "MAX_SIZE must be in 1..1 GiB");

    status = ucp_init(&params, NULL, &xfer_context);
    CHECK(status == UCS_OK, "ucp_init: %s", ucs_status_string(status));
    xfer_emu_stats_init();

    /* 1 B .. MAX: powers of 4 and their odd neighbours */
    for (size = 1; size <= max; size *= 4) {
        sizes[nsizes++] = size;
        if ((size > 4) && (size + 3 <= max)) {
            sizes[nsizes++] = size + 3;
        }
    }
    if (sizes[nsizes - 1] != max) {
        sizes[nsizes++] = max;
    }

    host    = malloc(max + XFER_GUARD);
    gaudi_a = xfer_gaudi_alloc(max, &memh_a);
    gaudi_b = xfer_gaudi_alloc(max, &memh_b);
    CHECK(host != NULL, "cannot allocate %zu bytes of host memory", max);

    for (i = 0; i < (int)nsizes; ++i) {
        size = sizes[i];
        if (rank == 0) {
            for (size_t j = 0; j < size; ++j) {
                host[j] = xfer_pattern(size, j);
            }
            xfer_send(host, size, 1);              /* host(0) -> gaudi(1) */
            xfer_recv(gaudi_a, size, 1);           /* gaudi(1) -> gaudi(0) */
            xfer_send(gaudi_a, size, 1);           /* gaudi(0) -> gaudi(1)' */
            memset(host, XFER_GUARD_BYTE, size + XFER_GUARD);
            xfer_recv(host, size, 1);              /* gaudi(1)' -> host(0) */
            failures += xfer_check(host, size);
        } else {
            xfer_recv(gaudi_a, size, 0);
            xfer_send(gaudi_a, size, 0);
            xfer_recv(gaudi_b, size, 0);
            xfer_send(gaudi_b, size, 0);
        }
    }

    /* each rank's import count, printed by rank 0 in order */
    peak = (xfer_emu_stats != NULL) ? xfer_imports_peak : -1;
    if (rank == 0) {
        int other;

        MPI_Recv(&other, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 0 imports=%d\nrank 1 imports=%d\n", peak, other);
        printf("%s: %d of %zu sizes failed\n", failures ? "FAILED" : "PASSED",
               failures, nsizes);
    } else {
        MPI_Send(&peak, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    }
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);

    /* pml ucx's registrations of the buffers go with MPI_Finalize, before
     * the memory they cover is freed */
    MPI_Finalize();
    ucp_mem_unmap(xfer_context, memh_b);
    ucp_mem_unmap(xfer_context, memh_a);
    ucp_cleanup(xfer_context);
    free(host);
    return failures ? 1 : 0;
}
