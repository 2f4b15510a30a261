/**
 * @file wisp_opts_bench.h
 * Options of the API benchmark (wisp-api-bench): the host options
 * (ports/unix/wisp_opts_host.h) without the debug checks, so that the
 * timings are those of a production build (the debug pool checks and the
 * core-owner assertion, both WISP_DEBUG, cost more than the code being
 * measured).
 */
#ifndef WISP_OPTS_BENCH_H
#define WISP_OPTS_BENCH_H

#include "wisp_opts_host.h"

#undef WISP_DEBUG
#define WISP_DEBUG 0

#endif
