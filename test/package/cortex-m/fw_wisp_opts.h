/**
 * @file fw_wisp_opts.h
 * The options header of the example firmware (test/package/cortex-m): what
 * a Cortex-M project passes to wisp (WISP_OPTS_HEADER / WISP_OPTS_DIR
 * before add_subdirectory). Small pools, debug checks on (the firmware
 * provides wisp_assert_fail), the no-OS port for the OS layer.
 */
#ifndef FW_WISP_OPTS_H
#define FW_WISP_OPTS_H

#define WISP_DEBUG 1
#define WISP_UDP_PCB_COUNT 2
#define WISP_TCP_PCB_COUNT 2
#define WISP_TCP_LISTEN_COUNT 1
#define WISP_SYS_PORT_HEADER "sys_none.h"

#endif
