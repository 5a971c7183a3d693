/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef GAUDI_EMU_H_
#define GAUDI_EMU_H_

/*
 * Public interface of the Gaudi emulator library (libgaudi_emu). It
 * implements the habanalabs user-space ABI behind the driver seam
 * (seam/gaudi_drv.h). The driver library dlopen()s it only when
 * UCX_GAUDI_EMU_DEVICES > 0; the configuration comes from UCX's config
 * parser (the UCX_GAUDI_EMU_* knobs), so this library does not read the
 * environment itself and does not depend on UCS.
 */

#include <uct/gaudi/seam/gaudi_drv.h>
#include <uct/gaudi/seam/gaudi_abi.h>
#include <stddef.h>
#include <stdint.h>

#define GAUDI_EMU_INIT_SYMBOL "gaudi_emu_init"

/* In thread mode, a CS is executed by the thread that waits for it
 * (WAIT_CS); the context's worker thread executes it only after the context
 * saw no CS and no WAIT_CS for this long (docs/emulator.md, "Execution") */
#define GAUDI_EMU_EXEC_GRACE_NS 1000000ull

typedef enum {
    GAUDI_EMU_EXEC_THREAD = 0, /* CS run by its waiter or a worker (default) */
    GAUDI_EMU_EXEC_INLINE = 1  /* CS complete inside the CS ioctl */
} gaudi_emu_exec_t;

/* The PCIe topology of the emulated node (docs/emulator.md §11) */
typedef enum {
    GAUDI_EMU_PCI_SWITCH     = 0, /* every device below one PCIe switch */
    GAUDI_EMU_PCI_ROOT_PORTS = 1, /* one root port each, one host bridge
                                     that forwards peer DMA (8086:09a2) */
    GAUDI_EMU_PCI_SOCKETS    = 2  /* one root port each, the devices split
                                     over two host bridges (8086:2f00) that
                                     forward peer DMA only within one */
} gaudi_emu_pci_topology_t;

/* What a CS that passes the driver's timeout (TDR) does: reset_on_lockup */
typedef enum {
    GAUDI_EMU_LOCKUP_RESET       = 0, /* the driver's default
                                         (reset_on_lockup=1):
                                         hl_device_cond_reset, which kills
                                         a process that keeps the device */
    GAUDI_EMU_LOCKUP_NEEDS_RESET = 1  /* reset_on_lockup=0: the device only
                                         needs a reset, done when its owner
                                         closes it */
} gaudi_emu_lockup_t;

/* The speed profiles of the emulator's DMA engines (docs/emulator.md §8b) */
typedef enum {
    GAUDI_EMU_PROFILE_NONE   = 0, /* no profile: copies at memory speed, or
                                     the serial EMU_BW/EMU_LATENCY model */
    GAUDI_EMU_PROFILE_GAUDI2 = 1  /* a Gaudi2: PCIe Gen4 x16 per direction,
                                     HBM for device to device, pipelined
                                     submissions, in model time */
} gaudi_emu_profile_t;

/* Defaults of the reset model's times (docs/emulator.md §8a) */
#define GAUDI_EMU_WATCHDOG_DEFAULT       5.0  /* seconds */
#define GAUDI_EMU_KILL_DELAY             1.0  /* seconds */
#define GAUDI_EMU_RELEASE_RESET_DEFAULT  0.5  /* seconds */
#define GAUDI_EMU_OOT_VERSION_DEFAULT    "1.24.1"

typedef struct gaudi_emu_config {
    unsigned          num_devices;  /* > 0 */
    uct_gaudi_asic_t  asic;         /* GAUDI2 default; GAUDI1, GAUDI3 */
    uint64_t          hbm_size;     /* bytes of emulated HBM per device */
    uct_gaudi_abi_t   abi;          /* which generation to expose */
    int               oot_import;   /* emulate op 99 (out-of-tree driver) */
    gaudi_emu_exec_t  exec;         /* DMA execution mode */
    double            bandwidth;    /* modelled DMA bandwidth B/s, 0 = none */
    double            latency;      /* modelled CS latency seconds, 0 = none */
    const char       *state_dir;    /* NULL: default per-user directory */
    const char       *faults;       /* fault injection spec, NULL/"" none */
    unsigned          numa_nodes;   /* devices spread over this many NUMA
                                       nodes in blocks; 0 = 1 */
    uint32_t          edma_disabled; /* Gaudi2: EDMA engines binned out
                                        (bit 2 * dcore + n), as the driver
                                        leaves them out of
                                        edma_enabled_mask; 0 = none */
    /* Resets (docs/emulator.md §8a). Zero fields give the real driver's
     * default behaviour. */
    gaudi_emu_lockup_t lockup;      /* what a CS timeout (TDR) does */
    double            watchdog;     /* seconds a process registered for
                                       events has to release the device
                                       after a reset event; 0 = default */
    int               no_kill;      /* 1: never SIGKILL a process that still
                                       holds a device being reset (it then
                                       waits for the process); 0: kill, as
                                       the driver does */
    double            release_reset; /* seconds a Gaudi2/3 resets after its
                                        release (open: EAGAIN); 0 = the
                                        default, < 0 none */
    const char        *oot_version; /* with oot_import: the out-of-tree
                                       release emulated, "major.minor[.patch]"
                                       (DMA-BUF export offsets are applied
                                       from 1.24 on); NULL/"" = the default */
    int               pin_shared_files; /* 1: userptr mappings may pin
                                           writable shared mappings of files
                                           on disk, as kernels before 6.5
                                           did; 0: -EFAULT, as 6.5 on */
    int               page_fault_cs_only; /* 1: a DMA page fault on a Gaudi2
                                             fails its CS only; 0: the
                                             driver's hard reset */
    uint64_t          dram_bar_size; /* bytes of HBM, from its start, that
                                        the PCIe DRAM BAR reaches (exports
                                        of pages beyond: -EINVAL); 0 = all */
    gaudi_emu_pci_topology_t pci_topology; /* what sysfs shows above the
                                              devices, and which peer DMA
                                              the platform forwards */
    gaudi_emu_profile_t profile;    /* speed profile (replaces bandwidth and
                                       latency when not NONE) */
    double            profile_latency; /* the profile's submission-to-start
                                          latency, seconds, as given (the
                                          knob's default is 8 us) */
    unsigned          copy_slowdown; /* test: each emulated copy takes this
                                        many times its time (busy); 0/1 =
                                        as fast as the CPU copies */
} gaudi_emu_config_t;

typedef int (*gaudi_emu_init_func_t)(const gaudi_emu_config_t *config,
                                     const uct_gaudi_drv_ops_t **ops_p);

/*
 * Initialize the emulator (idempotent within a process: a second call with
 * the same configuration returns the same ops). Returns 0, or -errno with a
 * message on stderr-free error reporting through gaudi_emu_last_error().
 */
int gaudi_emu_init(const gaudi_emu_config_t *config,
                   const uct_gaudi_drv_ops_t **ops_p);

/* Text of the last initialization error (thread-unsafe, diagnostics only) */
const char *gaudi_emu_last_error(void);

/*
 * Close every emulated node this process still has open (releasing their
 * devices like the driver's release would) and forget the configuration,
 * so that the next gaudi_emu_init() may use another one. For tests and for
 * an orderly unload; the shared state directory is kept.
 */
void gaudi_emu_fini(void);

typedef void (*gaudi_emu_fini_func_t)(void);
#define GAUDI_EMU_FINI_SYMBOL "gaudi_emu_fini"

/*
 * Accounting of this process's emulated nodes, for tests that check that
 * nothing leaks ("the fd, VA and pinned-memory counts return to their
 * starting values"). Not part of the driver ABI. The driver library loads the
 * library RTLD_LOCAL, so tests find it with dlopen("libgaudi_emu.so",
 * RTLD_NOLOAD) and dlsym(handle, GAUDI_EMU_STATS_SYMBOL).
 */
typedef struct gaudi_emu_stats {
    unsigned contexts;      /* open emulated nodes (compute and control) */
    unsigned dram_maps;     /* device-memory VA mappings */
    unsigned host_maps;     /* userptr mappings (pinned host memory) */
    unsigned import_maps;   /* op 99 imports of peers' DMA-BUFs */
    unsigned cb_maps;       /* kernel CBs mapped into the device MMU */
    unsigned exports;       /* DMA-BUFs exported by this process, alive */
    uint64_t pinned_bytes;  /* bytes of host memory mapped by userptr */
    unsigned kernel_log_errors; /* dev_err lines the real driver would have
                                   written to the kernel log for this
                                   process's calls: unknown ioctl code of the
                                   'H' generations, unknown memory op, failed
                                   op 99 of the out-of-tree driver */
    uint64_t faults_fired;  /* faults injected since the fault spec was
                               installed (gaudi_emu_init or
                               gaudi_emu_set_faults) */
    uint64_t cb_fetch_bytes; /* bytes of user CBs the engines read, as
                                they fetch packets (not the CBs' sizes) */
    /* the speed profile's accounting (docs/emulator.md §8b), summed over
     * this process's open contexts; zero without a profile */
    uint64_t copy_ns;       /* wall time the emulator spent copying, which
                               the model clock does not count: model time =
                               wall time - copy_ns */
    uint64_t model_cs;      /* CSs timed by the profile */
    uint64_t model_depth_sum; /* sum over them of the CSs of the context
                                 in flight (in model time) at submission,
                                 itself included */
    unsigned model_depth_max;
} gaudi_emu_stats_t;

int gaudi_emu_get_stats(gaudi_emu_stats_t *stats);

typedef int (*gaudi_emu_get_stats_func_t)(gaudi_emu_stats_t *stats);
#define GAUDI_EMU_STATS_SYMBOL "gaudi_emu_get_stats"

/*
 * Replace the fault-injection spec of this process (docs/emulator.md §9) and
 * restart its counters, so that a test injects faults in the middle of its
 * traffic rather than counted from the start; NULL or "" disarms. Returns 0,
 * or -EINVAL (message in gaudi_emu_last_error()) and the spec in force
 * stays. Not part of the driver ABI.
 */
int gaudi_emu_set_faults(const char *spec);

typedef int (*gaudi_emu_set_faults_func_t)(const char *spec);
#define GAUDI_EMU_SET_FAULTS_SYMBOL "gaudi_emu_set_faults"

/*
 * A test importer of this emulator's DMA-BUFs: copy @a length bytes at
 * @a offset of the DMA-BUF @a fd (exported by any process of the emulated
 * node) into @a buf, and give its size in @a size_p (if not NULL). It reads
 * what the DMA-BUF holds, as a NIC that registered it would reach it through
 * the BAR (Habana's out-of-tree driver has such a CPU importer for its tests,
 * hl_importer); the tests of the DMA-BUF provider check offsets and bytes
 * with it. Not part of the driver ABI. Returns 0, or -EBADF / -EINVAL (not a
 * DMA-BUF of this node, or the range passes its end) / -ENODEV (emulator not
 * initialized in this process).
 */
int gaudi_emu_dmabuf_read(int fd, uint64_t offset, void *buf, size_t length,
                          uint64_t *size_p);

typedef int (*gaudi_emu_dmabuf_read_func_t)(int fd, uint64_t offset,
                                            void *buf, size_t length,
                                            uint64_t *size_p);
#define GAUDI_EMU_DMABUF_READ_SYMBOL "gaudi_emu_dmabuf_read"

/*
 * How many devices of the emulated node are being reset (a reset waits for
 * its owner's release, or the device is in reset or needs one), so that a
 * test can hold its devices until every reset is over: a process that
 * keeps a device being reset is killed meanwhile (docs/emulator.md §8a).
 * Not part of the driver ABI.
 */
int gaudi_emu_resets_pending(void);

typedef int (*gaudi_emu_resets_pending_func_t)(void);
#define GAUDI_EMU_RESETS_PENDING_SYMBOL "gaudi_emu_resets_pending"

#endif
