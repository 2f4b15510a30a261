/**
 * @file pkg_opts.h
 * The options header of the second package build of test/package/run.sh
 * (-DWISP_OPTS_HEADER=pkg_opts.h -DWISP_OPTS_DIR=test/package/host): it is
 * installed with the package and every consumer is compiled with it. Three
 * UDP PCBs (the consumer checks that a fourth is refused: the library was
 * built with this header), debug checks on (the core calls the unix port's
 * wisp_assert_fail), the pthreads sys port.
 */
#ifndef PKG_OPTS_H
#define PKG_OPTS_H

#define WISP_PKG_TEST_OPTS 1
#define WISP_DEBUG 1
#define WISP_UDP_PCB_COUNT 3
#define WISP_SYS_PORT_HEADER "sys_posix.h"

#endif
