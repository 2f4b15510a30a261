/**
 * @file wisp_opts_none.h
 * Example options header for a no-OS (bare-metal) build: the default pool
 * sizes of include/wisp/opt.h (a Cortex-M class device), debug checks on,
 * and the no-OS sys port for code that includes wisp/sys.h. Used by the
 * no-OS test program (test/unit/test_noos.c).
 */
#ifndef WISP_OPTS_NONE_H
#define WISP_OPTS_NONE_H

#define WISP_DEBUG 1
#define WISP_SYS_PORT_HEADER "sys_none.h"
/* One context: nothing to check, WISP_CORE_ASSERT_OWNER keeps its default. */

#endif
