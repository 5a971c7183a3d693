/**
 * Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_GAUDI_ABI_LAYOUT_H_
#define UCT_GAUDI_ABI_LAYOUT_H_

/*
 * The habanalabs uAPI layout this library relies on: struct sizes, field
 * offsets (x86-64) and constant values, as docs/driver-abi.md documents
 * them (sections 2-7). One list, applied twice: gaudi_abi.h asserts it
 * against its own definitions, gaudi_abi_check.c against the system header
 * when one is installed. Each argument is a macro:
 *   _size(type, bytes)  _offset(type, field, bytes)  _value(name, value)
 */

/* Common to every generation's header */
#define UCT_GAUDI_ABI_LAYOUT(_size, _offset, _value) \
    _size(struct hl_info_args, 24) \
    _offset(struct hl_info_args, return_pointer, 0) \
    _offset(struct hl_info_args, return_size, 8) \
    _offset(struct hl_info_args, op, 12) \
    _offset(struct hl_info_args, ctx_id, 16) \
    _offset(struct hl_info_args, eventfd, 16) \
    _offset(struct hl_info_args, pad, 20) \
    _offset(struct hl_info_hw_ip_info, sram_base_address, 0) \
    _offset(struct hl_info_hw_ip_info, dram_base_address, 8) \
    _offset(struct hl_info_hw_ip_info, dram_size, 16) \
    _offset(struct hl_info_hw_ip_info, sram_size, 24) \
    _offset(struct hl_info_hw_ip_info, num_of_events, 28) \
    _offset(struct hl_info_hw_ip_info, device_id, 32) \
    _offset(struct hl_info_hw_ip_info, module_id, 36) \
    _offset(struct hl_info_hw_ip_info, decoder_enabled_mask, 40) \
    _offset(struct hl_info_hw_ip_info, first_available_interrupt_id, 44) \
    _offset(struct hl_info_hw_ip_info, server_type, 46) \
    _offset(struct hl_info_hw_ip_info, tpc_enabled_mask, 68) \
    _offset(struct hl_info_hw_ip_info, dram_enabled, 69) \
    _offset(struct hl_info_hw_ip_info, security_enabled, 70) \
    _offset(struct hl_info_hw_ip_info, cpucp_version, 72) \
    _offset(struct hl_info_hw_ip_info, card_name, 200) \
    _offset(struct hl_info_hw_ip_info, tpc_enabled_mask_ext, 216) \
    _offset(struct hl_info_hw_ip_info, dram_page_size, 224) \
    _offset(struct hl_info_hw_ip_info, edma_enabled_mask, 232) \
    _offset(struct hl_info_hw_ip_info, number_of_user_interrupts, 236) \
    _offset(struct hl_info_hw_ip_info, device_mem_alloc_default_page_size, \
            248) \
    _size(struct hl_info_dram_usage, 16) \
    _offset(struct hl_info_dram_usage, dram_free_mem, 0) \
    _offset(struct hl_info_dram_usage, ctx_dram_mem, 8) \
    _size(struct hl_info_dev_memalloc_page_sizes, 8) \
    _offset(struct hl_info_dev_memalloc_page_sizes, page_order_bitmask, 0) \
    _size(struct hl_info_device_status, 8) \
    _offset(struct hl_info_device_status, status, 0) \
    _offset(struct hl_info_hw_idle, is_idle, 0) \
    _offset(struct hl_info_hw_idle, busy_engines_mask, 4) \
    _offset(struct hl_info_hw_idle, busy_engines_mask_ext, 8) \
    _size(struct hl_info_clk_rate, 8) \
    _offset(struct hl_info_clk_rate, cur_clk_rate_mhz, 0) \
    _offset(struct hl_info_clk_rate, max_clk_rate_mhz, 4) \
    _size(struct hl_info_reset_count, 8) \
    _offset(struct hl_info_reset_count, hard_reset_cnt, 0) \
    _offset(struct hl_info_reset_count, soft_reset_cnt, 4) \
    _offset(struct hl_info_time_sync, device_time, 0) \
    _offset(struct hl_info_time_sync, host_time, 8) \
    _size(struct hl_info_pci_counters, 24) \
    _offset(struct hl_info_pci_counters, rx_throughput, 0) \
    _offset(struct hl_info_pci_counters, tx_throughput, 8) \
    _offset(struct hl_info_pci_counters, replay_cnt, 16) \
    _offset(struct hl_info_clk_throttle, clk_throttling_reason, 0) \
    _size(struct hl_info_sync_manager, 16) \
    _offset(struct hl_info_sync_manager, first_available_sync_object, 0) \
    _offset(struct hl_info_sync_manager, first_available_monitor, 4) \
    _offset(struct hl_info_sync_manager, first_available_cq, 8) \
    _size(struct hl_info_cs_counters, 96) \
    _offset(struct hl_info_cs_counters, total_queue_full_drop_cnt, 32) \
    _offset(struct hl_info_cs_counters, ctx_queue_full_drop_cnt, 40) \
    _offset(struct hl_info_cs_counters, total_max_cs_in_flight_drop_cnt, 64) \
    _offset(struct hl_info_cs_counters, total_validation_drop_cnt, 80) \
    _offset(struct hl_info_cs_counters, ctx_validation_drop_cnt, 88) \
    _size(struct hl_open_stats_info, 24) \
    _offset(struct hl_open_stats_info, open_counter, 0) \
    _offset(struct hl_open_stats_info, last_open_period_ms, 8) \
    _offset(struct hl_open_stats_info, is_compute_ctx_active, 16) \
    _offset(struct hl_open_stats_info, compute_ctx_in_release, 17) \
    _size(struct hl_cb_in, 24) \
    _offset(struct hl_cb_in, cb_handle, 0) \
    _offset(struct hl_cb_in, op, 8) \
    _offset(struct hl_cb_in, cb_size, 12) \
    _offset(struct hl_cb_in, ctx_id, 16) \
    _offset(struct hl_cb_in, flags, 20) \
    _size(struct hl_cb_out, 8) \
    _offset(struct hl_cb_out, cb_handle, 0) \
    _offset(struct hl_cb_out, usage_cnt, 0) \
    _offset(struct hl_cb_out, device_va, 0) \
    _size(union hl_cb_args, 24) \
    _offset(union hl_cb_args, in, 0) \
    _offset(union hl_cb_args, out, 0) \
    _size(struct hl_cs_chunk, 64) \
    _offset(struct hl_cs_chunk, cb_handle, 0) \
    _offset(struct hl_cs_chunk, queue_index, 8) \
    _offset(struct hl_cs_chunk, cb_size, 12) \
    _offset(struct hl_cs_chunk, cs_chunk_flags, 16) \
    _offset(struct hl_cs_chunk, collective_engine_id, 20) \
    _size(struct hl_cs_in, 48) \
    _offset(struct hl_cs_in, chunks_restore, 0) \
    _offset(struct hl_cs_in, chunks_execute, 8) \
    _offset(struct hl_cs_in, seq, 16) \
    _offset(struct hl_cs_in, num_chunks_restore, 24) \
    _offset(struct hl_cs_in, num_chunks_execute, 28) \
    _offset(struct hl_cs_in, timeout, 32) \
    _offset(struct hl_cs_in, cs_flags, 36) \
    _offset(struct hl_cs_in, ctx_id, 40) \
    _offset(struct hl_cs_in, pad, 44) \
    _size(struct hl_cs_out, 24) \
    _offset(struct hl_cs_out, seq, 0) \
    _offset(struct hl_cs_out, status, 8) \
    _offset(struct hl_cs_out, sob_base_addr_offset, 12) \
    _size(union hl_cs_args, 48) \
    _offset(union hl_cs_args, in, 0) \
    _offset(union hl_cs_args, out, 0) \
    _size(struct hl_wait_cs_in, 56) \
    _offset(struct hl_wait_cs_in, seq, 0) \
    _offset(struct hl_wait_cs_in, timeout_us, 8) \
    _offset(struct hl_wait_cs_in, addr, 0) \
    _offset(struct hl_wait_cs_in, ctx_id, 16) \
    _offset(struct hl_wait_cs_in, flags, 20) \
    _offset(struct hl_wait_cs_in, seq_arr_len, 24) \
    _offset(struct hl_wait_cs_in, interrupt_timeout_us, 24) \
    _offset(struct hl_wait_cs_in, cq_counters_offset, 32) \
    _offset(struct hl_wait_cs_in, timestamp_handle, 40) \
    _offset(struct hl_wait_cs_in, timestamp_offset, 48) \
    _size(struct hl_wait_cs_out, 24) \
    _offset(struct hl_wait_cs_out, status, 0) \
    _offset(struct hl_wait_cs_out, flags, 4) \
    _offset(struct hl_wait_cs_out, timestamp_nsec, 8) \
    _offset(struct hl_wait_cs_out, cs_completion_map, 16) \
    _size(union hl_wait_cs_args, 56) \
    _offset(union hl_wait_cs_args, in, 0) \
    _offset(union hl_wait_cs_args, out, 0) \
    _size(struct hl_mem_in, 40) \
    _offset(struct hl_mem_in, alloc.mem_size, 0) \
    _offset(struct hl_mem_in, alloc.page_size, 8) \
    _offset(struct hl_mem_in, free.handle, 0) \
    _offset(struct hl_mem_in, map_device.hint_addr, 0) \
    _offset(struct hl_mem_in, map_device.handle, 8) \
    _offset(struct hl_mem_in, map_host.host_virt_addr, 0) \
    _offset(struct hl_mem_in, map_host.hint_addr, 8) \
    _offset(struct hl_mem_in, map_host.mem_size, 16) \
    _offset(struct hl_mem_in, unmap.device_virt_addr, 0) \
    _offset(struct hl_mem_in, op, 24) \
    _offset(struct hl_mem_in, flags, 28) \
    _offset(struct hl_mem_in, ctx_id, 32) \
    _offset(struct hl_mem_in, num_of_elements, 36) \
    _size(struct hl_mem_out, 16) \
    _offset(struct hl_mem_out, device_virt_addr, 0) \
    _offset(struct hl_mem_out, handle, 0) \
    _offset(struct hl_mem_out, block_handle, 0) \
    _offset(struct hl_mem_out, block_size, 8) \
    _offset(struct hl_mem_out, fd, 0) \
    _size(union hl_mem_args, 40) \
    _offset(union hl_mem_args, in, 0) \
    _offset(union hl_mem_args, out, 0) \
    _size(struct hl_debug_args, 40) \
    _value(HL_INFO_HW_IP_INFO, 0) \
    _value(HL_INFO_HW_EVENTS, 0x1) \
    _value(HL_INFO_DRAM_USAGE, 0x2) \
    _value(HL_INFO_HW_IDLE, 0x3) \
    _value(HL_INFO_DEVICE_STATUS, 0x4) \
    _value(HL_INFO_DEVICE_UTILIZATION, 0x6) \
    _value(HL_INFO_HW_EVENTS_AGGREGATE, 0x7) \
    _value(HL_INFO_CLK_RATE, 0x8) \
    _value(HL_INFO_RESET_COUNT, 0x9) \
    _value(HL_INFO_TIME_SYNC, 0xa) \
    _value(HL_INFO_CS_COUNTERS, 0xb) \
    _value(HL_INFO_PCI_COUNTERS, 0xc) \
    _value(HL_INFO_CLK_THROTTLE_REASON, 0xd) \
    _value(HL_INFO_SYNC_MANAGER, 0xe) \
    _value(HL_INFO_TOTAL_ENERGY, 0xf) \
    _value(HL_INFO_PLL_FREQUENCY, 0x10) \
    _value(HL_INFO_POWER, 0x11) \
    _value(HL_INFO_OPEN_STATS, 0x12) \
    _value(HL_INFO_DRAM_REPLACED_ROWS, 0x15) \
    _value(HL_INFO_DRAM_PENDING_ROWS, 0x16) \
    _value(HL_INFO_LAST_ERR_OPEN_DEV_TIME, 0x17) \
    _value(HL_INFO_CS_TIMEOUT_EVENT, 0x18) \
    _value(HL_INFO_RAZWI_EVENT, 0x19) \
    _value(HL_INFO_DEV_MEM_ALLOC_PAGE_SIZES, 0x1a) \
    _value(HL_INFO_SECURED_ATTESTATION, 0x1b) \
    _value(HL_INFO_REGISTER_EVENTFD, 0x1c) \
    _value(HL_INFO_UNREGISTER_EVENTFD, 0x1d) \
    _value(HL_INFO_GET_EVENTS, 0x1e) \
    _value(HL_INFO_UNDEFINED_OPCODE_EVENT, 0x1f) \
    _value(HL_INFO_ENGINE_STATUS, 0x20) \
    _value(HL_INFO_VERSION_MAX_LEN, 0x80) \
    _value(HL_INFO_CARD_NAME_MAX_LEN, 0x10) \
    _value(HL_CLK_THROTTLE_TYPE_MAX, 0x2) \
    _value(HL_NOTIFIER_EVENT_TPC_ASSERT, 0x1) \
    _value(HL_NOTIFIER_EVENT_UNDEFINED_OPCODE, 0x2) \
    _value(HL_NOTIFIER_EVENT_DEVICE_RESET, 0x4) \
    _value(HL_NOTIFIER_EVENT_CS_TIMEOUT, 0x8) \
    _value(HL_NOTIFIER_EVENT_DEVICE_UNAVAILABLE, 0x10) \
    _value(HL_NOTIFIER_EVENT_USER_ENGINE_ERR, 0x20) \
    _value(HL_NOTIFIER_EVENT_GENERAL_HW_ERR, 0x40) \
    _value(HL_DEVICE_STATUS_OPERATIONAL, 0) \
    _value(HL_DEVICE_STATUS_IN_RESET, 0x1) \
    _value(HL_DEVICE_STATUS_MALFUNCTION, 0x2) \
    _value(HL_DEVICE_STATUS_NEEDS_RESET, 0x3) \
    _value(HL_DEVICE_STATUS_IN_DEVICE_CREATION, 0x4) \
    _value(HL_DEVICE_STATUS_IN_RESET_AFTER_DEVICE_RELEASE, 0x5) \
    _value(HL_CB_OP_CREATE, 0) \
    _value(HL_CB_OP_DESTROY, 0x1) \
    _value(HL_CB_OP_INFO, 0x2) \
    _value(HL_CB_FLAGS_MAP, 0x1) \
    _value(HL_CB_FLAGS_GET_DEVICE_VA, 0x2) \
    _value(HL_MAX_CB_SIZE, 0x1fffe0) \
    _value(HL_MAX_JOBS_PER_CS, 0x200) \
    _value(HL_CS_CHUNK_FLAGS_USER_ALLOC_CB, 0x1) \
    _value(HL_CS_STATUS_SUCCESS, 0) \
    _value(HL_CS_FLAGS_FORCE_RESTORE, 0x1) \
    _value(HL_CS_FLAGS_SIGNAL, 0x2) \
    _value(HL_CS_FLAGS_WAIT, 0x4) \
    _value(HL_CS_FLAGS_COLLECTIVE_WAIT, 0x8) \
    _value(HL_CS_FLAGS_TIMESTAMP, 0x20) \
    _value(HL_CS_FLAGS_STAGED_SUBMISSION, 0x40) \
    _value(HL_CS_FLAGS_ENCAP_SIGNALS, 0x800) \
    _value(HL_CS_FLAGS_RESERVE_SIGNALS_ONLY, 0x1000) \
    _value(HL_CS_FLAGS_UNRESERVE_SIGNALS_ONLY, 0x2000) \
    _value(HL_CS_FLAGS_ENGINE_CORE_COMMAND, 0x4000) \
    _value(GAUDI_QUEUE_ID_DMA_0_0, 0) \
    _value(GAUDI_QUEUE_ID_DMA_0_1, 0x1) \
    _value(GAUDI_QUEUE_ID_DMA_1_0, 0x4) \
    _value(GAUDI_QUEUE_ID_DMA_1_3, 0x7) \
    _value(GAUDI_QUEUE_ID_CPU_PQ, 0x8) \
    _value(GAUDI_QUEUE_ID_DMA_2_0, 0x9) \
    _value(GAUDI_QUEUE_ID_DMA_7_3, 0x20) \
    _value(GAUDI_QUEUE_ID_SIZE, 0x71) \
    _value(GAUDI2_QUEUE_ID_PDMA_0_0, 0) \
    _value(GAUDI2_QUEUE_ID_PDMA_0_1, 0x1) \
    _value(GAUDI2_QUEUE_ID_PDMA_1_0, 0x4) \
    _value(GAUDI2_QUEUE_ID_PDMA_1_1, 0x5) \
    _value(GAUDI2_QUEUE_ID_DCORE0_EDMA_0_0, 0x8) \
    _value(GAUDI2_QUEUE_ID_DCORE0_EDMA_1_3, 0xf) \
    _value(GAUDI2_QUEUE_ID_DCORE1_EDMA_0_0, 0x30) \
    _value(GAUDI2_QUEUE_ID_DCORE1_EDMA_1_3, 0x37) \
    _value(GAUDI2_QUEUE_ID_DCORE2_EDMA_0_0, 0x54) \
    _value(GAUDI2_QUEUE_ID_DCORE2_EDMA_1_3, 0x5b) \
    _value(GAUDI2_QUEUE_ID_DCORE3_EDMA_0_0, 0x78) \
    _value(GAUDI2_QUEUE_ID_DCORE3_EDMA_1_3, 0x7f) \
    _value(GAUDI2_QUEUE_ID_CPU_PQ, 0x104) \
    _value(GAUDI2_QUEUE_ID_SIZE, 0x105) \
    _value(HL_WAIT_CS_FLAGS_INTERRUPT, 0x2) \
    _value(HL_WAIT_CS_FLAGS_MULTI_CS, 0x4) \
    _value(HL_WAIT_CS_FLAGS_INTERRUPT_KERNEL_CQ, 0x10) \
    _value(HL_WAIT_CS_FLAGS_REGISTER_INTERRUPT, 0x20) \
    _value(HL_WAIT_MULTI_CS_LIST_MAX_LEN, 0x20) \
    _value(HL_WAIT_CS_STATUS_COMPLETED, 0) \
    _value(HL_WAIT_CS_STATUS_BUSY, 0x1) \
    _value(HL_WAIT_CS_STATUS_TIMEDOUT, 0x2) \
    _value(HL_WAIT_CS_STATUS_ABORTED, 0x3) \
    _value(HL_WAIT_CS_STATUS_FLAG_GONE, 0x1) \
    _value(HL_WAIT_CS_STATUS_FLAG_TIMESTAMP_VLD, 0x2) \
    _value(HL_MEM_OP_ALLOC, 0) \
    _value(HL_MEM_OP_FREE, 0x1) \
    _value(HL_MEM_OP_MAP, 0x2) \
    _value(HL_MEM_OP_UNMAP, 0x3) \
    _value(HL_MEM_OP_MAP_BLOCK, 0x4) \
    _value(HL_MEM_OP_EXPORT_DMABUF_FD, 0x5) \
    _value(HL_MEM_OP_TS_ALLOC, 0x6) \
    _value(HL_MEM_CONTIGUOUS, 0x1) \
    _value(HL_MEM_SHARED, 0x2) \
    _value(HL_MEM_USERPTR, 0x4) \
    _value(HL_MEM_FORCE_HINT, 0x8) \
    _value(HL_MEM_PREFETCH, 0x40)

/* Only as in 6.1's <misc/habanalabs.h>: later headers grew these structs
 * (append-only), renamed the export handle and reuse HL_IOCTL_* for DRM
 * command numbers */
#define UCT_GAUDI_ABI_LAYOUT_MISC(_size, _value) \
    _size(struct hl_info_hw_ip_info, 256) \
    _size(struct hl_info_hw_idle, 24) \
    _value(HL_BUSY_ENGINES_MASK_EXT_SIZE, 2) \
    _value(HL_IOCTL_INFO, 0xc0184801u) \
    _value(HL_IOCTL_CB, 0xc0184802u) \
    _value(HL_IOCTL_CS, 0xc0304803u) \
    _value(HL_IOCTL_WAIT_CS, 0xc0384804u) \
    _value(HL_IOCTL_MEMORY, 0xc0284805u) \
    _value(HL_IOCTL_DEBUG, 0xc0284806u)

#endif
