/**
 * @file wisp_opts_everything.h
 * Option matrix (tools/test.sh): every optional part on, including those
 * off by default -- the tagged 20-byte address layout (WISP_IPV6 1), debug
 * checks and their probes (WISP_DEBUG, owner checks, allocation-failure
 * injection, blocked-thread probe) and CUBIC as the default congestion
 * control -- on the host's pools.
 */
#ifndef WISP_OPTS_EVERYTHING_H
#define WISP_OPTS_EVERYTHING_H

#include "wisp_opts_host.h"

#define WISP_IPV6 1
#define WISP_TCP_CC_DEFAULT 1

#endif /* WISP_OPTS_EVERYTHING_H */
