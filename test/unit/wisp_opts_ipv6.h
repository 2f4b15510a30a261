/**
 * @file wisp_opts_ipv6.h
 * Options of the second unit-test build (tools/test.sh): the host options
 * with WISP_IPV6 1, so wisp_ipaddr_t takes its tagged 20-byte layout. IPv6
 * itself is not implemented yet; this build keeps the core and the unit
 * tests green in both address layouts (nothing may touch the members or
 * rely on the collapsed 4-byte form).
 */
#ifndef WISP_OPTS_IPV6_H
#define WISP_OPTS_IPV6_H

#include "wisp_opts_host.h"

#define WISP_IPV6 1

#endif /* WISP_OPTS_IPV6_H */
