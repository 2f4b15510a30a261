/**
 * @file wisp_opts_core_min.h
 * Option set: the non-TCP core at its smallest (-DWISP_OPTS_HEADER=
 * '"wisp_opts_core_min.h"' with -I test/opts/build). Every core switch whose code
 * and RAM vanish when off is off: IP fragmentation and reassembly (no
 * reassembly table in struct wisp_stack), loopback interface, path MTU
 * cache, named counters (wisp_stack_counter() returns 0).
 *
 * * For images and build checks (tools/test.sh compiles the libraries with
 * every set of test/opts/build/): the unit tests read counters and exercise
 * fragmentation, loopback and PMTU, so they are not meant to pass with this
 * set. Measured (Cortex-M4 -Os, UDP-only probe: netif add/up, DHCP start,
 * DNS lookup, UDP bind/recv/sendto, ping; core built with WISP_TCP=0):
 * see the commit that added this file.
 */
#ifndef WISP_OPTS_CORE_MIN_H
#define WISP_OPTS_CORE_MIN_H

#define WISP_IP_FRAG 0
#define WISP_IP_REASS 0
#define WISP_LOOPBACK 0
#define WISP_PMTU 0
#define WISP_STATS 0

#endif /* WISP_OPTS_CORE_MIN_H */
