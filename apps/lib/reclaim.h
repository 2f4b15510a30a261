/**
 * @file reclaim.h
 * The admission choice shared by the services (services.c, and
 * services_thread.c for services_netconn.c and services_socket.c) and the
 * HTTP server (httpd.c): which connection record, if any, a new
 * connection may take when every record is in use or its address is at
 * its per-source cap (issue 11 items 2 and 3). Header-only, no state.
 *
 * The caller describes its records (in use, remote address, time since the
 * last progress, whether it may be taken at all) and asks for a victim:
 *  - the new address at its cap: only a record of that address without
 *    progress for at least reclaim_ms (the oldest), so an address cannot
 *    grow beyond its cap and cannot take anybody else's record;
 *  - else a record is eligible when it has made no progress for at least
 *    reclaim_ms, or when its address holds at least two records more than
 *    the new address does (fair share: attackers that keep reconnecting
 *    keep their connections fresh, but they cannot also keep them few).
 *    Among the eligible, the record of the address holding the most
 *    records goes first, then the one idle the longest.
 * Time is in ms (the caller's clock, differences only). reclaim_ms of
 * WISP_RECLAIM_OFF: never reclaim (only a free record admits).
 */
#ifndef WISP_APPS_RECLAIM_H
#define WISP_APPS_RECLAIM_H

#include <stdbool.h>
#include <stdint.h>

/** reclaim_ms at this value (or above) switches reclaiming off entirely,
 *  the fair-share rule too (2^31 - 1 ms, about 24.8 days). */
#define WISP_RECLAIM_OFF 0x7FFFFFFFu

/** One record as the admission choice sees it. */
struct wisp_reclaim_rec {
    uint32_t ip;          /**< remote IPv4 address (any byte order, compared only) */
    uint32_t idle_ms;     /**< time since its last progress */
    uint8_t used;         /**< the record holds a connection (counts for its address) */
    uint8_t takeable;     /**< it may be reclaimed at all (e.g. no response being sent) */
};

/** Records of n held by address ip. */
static inline unsigned wisp_reclaim_count(const struct wisp_reclaim_rec *r, unsigned n, uint32_t ip)
{
    unsigned i, k = 0;
    for (i = 0; i < n; i++) {
        if (r[i].used && r[i].ip == ip) {
            k++;
        }
    }
    return k;
}

/** The record to reclaim for a new connection from ip (see above), or -1.
 *  capped: the new address holds per_source records already. */
static inline int wisp_reclaim_pick(const struct wisp_reclaim_rec *r, unsigned n, uint32_t ip, bool capped,
                                    uint32_t reclaim_ms)
{
    unsigned i, mine = wisp_reclaim_count(r, n, ip), best_cnt = 0;
    uint32_t best_idle = 0;
    int best = -1;

    if (reclaim_ms >= WISP_RECLAIM_OFF) {
        return -1;
    }
    for (i = 0; i < n; i++) {
        unsigned cnt;
        bool ok;
        if (!r[i].used || !r[i].takeable) {
            continue;
        }
        cnt = wisp_reclaim_count(r, n, r[i].ip);
        if (capped) {
            ok = r[i].ip == ip && r[i].idle_ms >= reclaim_ms;
        } else {
            ok = r[i].idle_ms >= reclaim_ms || cnt >= mine + 2u;
        }
        if (!ok) {
            continue;
        }
        if (best < 0 || cnt > best_cnt || (cnt == best_cnt && r[i].idle_ms > best_idle)) {
            best = (int)i;
            best_cnt = cnt;
            best_idle = r[i].idle_ms;
        }
    }
    return best;
}

#endif /* WISP_APPS_RECLAIM_H */
