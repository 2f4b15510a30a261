/**
 * @file unix_port.h
 * The Linux/POSIX port's glue for a real (not simulated) stack: the
 * monotonic millisecond clock, the entropy source (getrandom()), a seed
 * for deterministic runs, a wall-clock
 * microsecond source for pcap timestamps, a printf adapter for
 * wisp_stack_dump() and the assertion hook that prints and aborts.
 * Who may call: the thread that owns the stack (the functions themselves
 * are thread-safe).
 */
#ifndef WISP_UNIX_PORT_H
#define WISP_UNIX_PORT_H

#include <stdint.h>
#include <stdio.h>

/** Monotonic milliseconds (CLOCK_MONOTONIC, wrapping at 2^32); ctx unused.
 *  Fits struct wisp_config.now_ms. */
uint32_t wisp_unix_now_ms(void *ctx);

/** Wall-clock microseconds since the Unix epoch (CLOCK_REALTIME); ctx
 *  unused. Fits the pcap wrapper's time callback. */
uint64_t wisp_unix_time_us(void *ctx);

/** The entropy source for struct wisp_config.rand in production: 32 bits
 *  from getrandom() (flags 0: blocks only until the kernel's pool is
 *  initialised at boot; interrupted calls are retried), /dev/urandom when
 *  the kernel lacks getrandom(). With neither it prints why and aborts:
 *  guessable secrets (ISNs, SYN cookies, ports, ids) are worse than no
 *  stack. ctx unused. */
uint32_t wisp_unix_random(void *ctx);

/** 64 random bits for struct wisp_config.seed (runs meant to be
 *  reproducible from a printed seed; benchmarks): getrandom(), or, when
 *  that fails, a mix of the clocks and the process id. Not for secrets:
 *  use wisp_unix_random as cfg.rand. */
uint64_t wisp_unix_seed(void);

/** printf adapter for wisp_stack_dump(): ctx is a FILE * (NULL = stdout). */
int wisp_unix_print(void *ctx, const char *fmt, ...);

/** The assertion hook of opt.h (WISP_ASSERT with WISP_DEBUG): prints the
 *  failed expression with its location to stderr and aborts. line 0: a
 *  rule broken at run time, reported by the stack (struct wisp_config.fail
 *  NULL): file is the function that was called, expr what is wrong. */
void wisp_assert_fail(const char *expr, const char *file, int line);

#endif /* WISP_UNIX_PORT_H */
