/**
 * @file unix_port.c
 * Linux/POSIX port glue: clocks, seed, printf adapter and the assertion
 * hook (see unix_port.h).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "unix_port.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>

#include "wisp/opt.h"

uint32_t wisp_unix_now_ms(void *ctx)
{
    struct timespec ts;

    (void)ctx;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
        return 0;
    }
    /* Wrapping at 2^32 ms is expected: the stack compares times wrap-safe. */
    return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

uint64_t wisp_unix_time_us(void *ctx)
{
    struct timespec ts;

    (void)ctx;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) {
        return 0;
    }
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint32_t wisp_unix_random(void *ctx)
{
    uint32_t v = 0;
    unsigned tries;
    int fd;

    (void)ctx;
    for (tries = 0; tries < 100u; tries++) {
        ssize_t n = getrandom(&v, sizeof v, 0);
        if (n == (ssize_t)sizeof v) {
            return v;
        }
        if (n < 0 && errno != EINTR) {
            break; /* ENOSYS: no getrandom() in this kernel */
        }
    }
    fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, &v, sizeof v);
        (void)close(fd);
        if (n == (ssize_t)sizeof v) {
            return v;
        }
    }
    fflush(stdout);
    fprintf(stderr, "wisp: no entropy source (getrandom() and /dev/urandom failed)\n");
    abort();
}

uint64_t wisp_unix_seed(void)
{
    uint64_t seed = 0;
    struct timespec a, b;

    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) == (ssize_t)sizeof seed && seed != 0) {
        return seed;
    }
    /* Fallback (no entropy yet / old kernel): mix clocks and pid with a
     * splitmix64 finaliser. Good enough for ports and ISNs in tests. */
    (void)clock_gettime(CLOCK_REALTIME, &a);
    (void)clock_gettime(CLOCK_MONOTONIC, &b);
    seed = ((uint64_t)a.tv_sec << 32) ^ (uint64_t)a.tv_nsec ^ ((uint64_t)b.tv_nsec << 20) ^ (uint64_t)getpid();
    seed += 0x9e3779b97f4a7c15ull;
    seed = (seed ^ (seed >> 30)) * 0xbf58476d1ce4e5b9ull;
    seed = (seed ^ (seed >> 27)) * 0x94d049bb133111ebull;
    seed ^= seed >> 31;
    return seed != 0 ? seed : 1;
}

int wisp_unix_print(void *ctx, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vfprintf(ctx != NULL ? (FILE *)ctx : stdout, fmt, ap);
    va_end(ap);
    return n;
}

void wisp_assert_fail(const char *expr, const char *file, int line)
{
    fflush(stdout);
    if (line == 0) { /* a run-time rule (struct wisp_config.fail): file is the function */
        fprintf(stderr, "wisp: %s %s\n", file, expr);
    } else {
        fprintf(stderr, "wisp: assertion failed: %s (%s:%d)\n", expr, file, line);
    }
    fflush(stderr);
    abort();
}
