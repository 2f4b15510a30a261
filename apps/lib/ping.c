/**
 * @file ping.c
 * ICMP echo client (RFC 792 "Echo or Echo Reply Message") on the raw API:
 * requests with an identifier and sequence numbers, replies matched and
 * verified, RTT statistics like ping(8), per-request timeouts, duplicate
 * detection. See ping.h.
 */
#include "ping.h"

#define SLOT_FREE 0u
#define SLOT_WAIT 1u
#define SLOT_ANSWERED 2u
#define SLOT_TIMEDOUT 3u

/* Largest data size: an IP datagram is at most 65535 bytes (RFC 791),
 * 20 of IP header and 8 of ICMP header. */
#define PING_MAX_SIZE 65507u

static void ping_timer(struct wisp_stack *s, struct wisp_timer *t);
static uint64_t ping_now_us(const struct wisp_ping *p)
{
    if (p->cfg.now_us != NULL) {
        return p->cfg.now_us(p->cfg.clock_ctx);
    }
    return (uint64_t)wisp_now(p->s) * 1000u;
}

/* Integer square root (no libm on bare metal). */
static uint64_t isqrt64(uint64_t v)
{
    uint64_t r = 0, bit = (uint64_t)1 << 62;
    while (bit > v) {
        bit >>= 2;
    }
    while (bit != 0u) {
        if (v >= r + bit) {
            v -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return r;
}

static void stats_update(struct wisp_ping *p)
{
    struct wisp_ping_stats *st = &p->st;
    uint32_t now = p->finished ? p->end_ms : wisp_now(p->s);
    st->elapsed_ms = st->sent > 0u ? now - p->start_ms : 0u;
    if (st->received == 0u) {
        st->avg_us = st->mdev_us = 0;
        return;
    }
    st->avg_us = (uint32_t)(st->sum_us / st->received);
    {
        /* mdev as ping(8): sqrt(E[x^2] - E[x]^2) */
        uint64_t mean2 = st->sum2_us / st->received, avg = st->sum_us / st->received;
        st->mdev_us = (mean2 > avg * avg) ? (uint32_t)isqrt64(mean2 - avg * avg) : 0u;
    }
}

static void ping_finish(struct wisp_ping *p)
{
    if (p->finished) {
        return;
    }
    p->finished = 1;
    p->running = 0;
    p->end_ms = wisp_now(p->s);
    wisp_timer_cancel(p->s, &p->tmr);
    if (wisp_icmp_echo_arg(p->s, NULL) == p) {
        wisp_icmp_set_echo_cb(p->s, NULL, NULL);
    }
    stats_update(p);
    if (p->cfg.done != NULL) {
        p->cfg.done(p->cfg.arg, p);
    }
}

/* Time out the requests whose deadline passed; true when none waits. */
static bool expire(struct wisp_ping *p, uint64_t now_us)
{
    unsigned i;
    bool idle = true;
    uint64_t tmo = (uint64_t)p->cfg.timeout_ms * 1000u;
    for (i = 0; i < WISP_PING_WINDOW; i++) {
        struct wisp_ping_slot *sl = &p->slot[i];
        if (sl->state != SLOT_WAIT) {
            continue;
        }
        if (now_us - sl->sent_us >= tmo) {
            sl->state = SLOT_TIMEDOUT;
            p->st.timeouts++;
        } else {
            idle = false;
        }
    }
    return idle;
}

static void send_one(struct wisp_ping *p)
{
    uint32_t n = p->next_n++;
    struct wisp_ping_slot *sl = &p->slot[n % WISP_PING_WINDOW];
    wisp_err_t err;

    if (sl->state == SLOT_WAIT) {
        /* the request this slot held is WISP_PING_WINDOW behind: give up on it */
        p->st.timeouts++;
    }
    sl->n = n;
    sl->sent_us = ping_now_us(p);
    sl->state = SLOT_WAIT;
    p->st.sent++;
    /* RFC 792: identifier and sequence number "to aid in matching echos
     * and replies"; the data is the stack's pattern (byte i = i). */
    err = wisp_icmp_echo_request(p->s, p->cfg.dst, p->id, (uint16_t)n, p->cfg.size, p->cfg.ttl);
    if (err != WISP_OK) {
        p->st.errors++;
        sl->state = SLOT_TIMEDOUT;   /* never answered; counted as an error, not a timeout */
    }
}

/* Arm the timer for the earliest of the next send and the next deadline. */
static void rearm(struct wisp_ping *p)
{
    uint32_t now = wisp_now(p->s), delay = UINT32_MAX;
    uint64_t now_us = ping_now_us(p), tmo = (uint64_t)p->cfg.timeout_ms * 1000u;
    unsigned i;

    if (p->next_n < p->cfg.count) {
        delay = wisp_time_before(now, p->next_send_ms) ? p->next_send_ms - now : 0u;
    }
    for (i = 0; i < WISP_PING_WINDOW; i++) {
        const struct wisp_ping_slot *sl = &p->slot[i];
        if (sl->state == SLOT_WAIT) {
            uint64_t left = (now_us - sl->sent_us >= tmo) ? 0u : tmo - (now_us - sl->sent_us);
            uint32_t d = (uint32_t)((left + 999u) / 1000u);
            if (d < delay) {
                delay = d;
            }
        }
    }
    if (delay != UINT32_MAX) {
        wisp_timer_arm(p->s, &p->tmr, delay, ping_timer);
    }
}

static void ping_timer(struct wisp_stack *s, struct wisp_timer *t)
{
    struct wisp_ping *p = (struct wisp_ping *)(void *)((char *)t - offsetof(struct wisp_ping, tmr));
    uint32_t now = wisp_now(s);
    bool idle;

    if (!p->running) {
        return;
    }
    idle = expire(p, ping_now_us(p));
    if (p->next_n < p->cfg.count && !wisp_time_before(now, p->next_send_ms)) {
        send_one(p);
        p->next_send_ms = now + p->cfg.interval_ms;
        idle = false;
    }
    if (p->next_n >= p->cfg.count && (idle || expire(p, ping_now_us(p)))) {
        ping_finish(p);
        return;
    }
    rearm(p);
}

/* The stack's echo reply hook (RFC 792 type 0). */
static void ping_echo(void *arg, const struct wisp_ip_info *ip, uint16_t id, uint16_t seq, struct wisp_pbuf *pb)
{
    struct wisp_ping *p = (struct wisp_ping *)arg;
    struct wisp_ping_reply r;
    struct wisp_ping_slot *sl = NULL;
    uint64_t now_us;
    unsigned i;

    if (p == NULL || !p->running || id != p->id || wisp_ipaddr_ip4(&ip->src) != p->cfg.dst) {
        wisp_pbuf_free(pb);   /* someone else's */
        return;
    }
    now_us = ping_now_us(p);
    /* the newest request with this sequence number */
    for (i = 0; i < WISP_PING_WINDOW; i++) {
        struct wisp_ping_slot *c = &p->slot[i];
        if (c->state != SLOT_FREE && (uint16_t)c->n == seq && (sl == NULL || c->n > sl->n)) {
            sl = c;
        }
    }
    memset(&r, 0, sizeof(r));
    r.from = wisp_ipaddr_ip4(&ip->src);
    r.seq = seq;
    r.bytes = pb->tot_len;
    r.ttl = ip->ttl;
    if (sl == NULL) {
        /* a sequence number we never sent (or long forgotten) */
        p->st.errors++;
        r.bad = true;
    } else {
        /* the data must be what was sent: 8-byte header, then byte i = i */
        bool ok = pb->tot_len == 8u + p->cfg.size;
        const struct wisp_pbuf *q;
        uint32_t k = 0;
        for (q = pb; q != NULL && ok; q = q->next) {
            uint16_t j;
            for (j = 0; j < q->len && ok; j++, k++) {
                if (k >= 8u && q->payload[j] != (uint8_t)(k - 8u)) {
                    ok = false;
                }
            }
        }
        r.rtt_us = (uint32_t)WISP_MIN(now_us - sl->sent_us, (uint64_t)UINT32_MAX);
        if (!ok) {
            p->st.errors++;
            r.bad = true;
        } else if (sl->state == SLOT_ANSWERED) {
            p->st.duplicates++;
            r.dup = true;
        } else if (sl->state == SLOT_TIMEDOUT) {
            p->st.late++;
            r.late = true;
        } else {
            struct wisp_ping_stats *st = &p->st;
            sl->state = SLOT_ANSWERED;
            if (st->received == 0u || r.rtt_us < st->min_us) {
                st->min_us = r.rtt_us;
            }
            if (r.rtt_us > st->max_us) {
                st->max_us = r.rtt_us;
            }
            st->received++;
            st->sum_us += r.rtt_us;
            st->sum2_us += (uint64_t)r.rtt_us * r.rtt_us;
            stats_update(p);
        }
    }
    wisp_pbuf_free(pb);
    if (p->cfg.on_reply != NULL) {
        p->cfg.on_reply(p->cfg.reply_arg, p, &r);
    }
    /* All sent and none waits: the run is over. */
    if (p->running && p->next_n >= p->cfg.count && expire(p, now_us)) {
        ping_finish(p);
    }
}

wisp_err_t wisp_ping_start_cfg(struct wisp_ping *p, struct wisp_stack *s, const struct wisp_ping_cfg *cfg)
{
    bool taken;
    if (cfg->dst == 0u || cfg->size > PING_MAX_SIZE) {
        return WISP_ERR_VAL;
    }
    if (wisp_icmp_echo_arg(s, &taken) != p && taken) {
        return WISP_ERR_USE;
    }
    memset(p, 0, sizeof(*p));
    p->s = s;
    p->cfg = *cfg;
    if (p->cfg.count == 0u) {
        p->cfg.count = 1;
    }
    if (p->cfg.interval_ms == 0u) {
        p->cfg.interval_ms = 1000;
    }
    if (p->cfg.timeout_ms == 0u) {
        p->cfg.timeout_ms = WISP_PING_TIMEOUT_MS;
    }
    p->id = (uint16_t)wisp_random_id(s, WISP_RID_ICMP_ID);
    p->running = 1;
    p->start_ms = wisp_now(s);
    wisp_icmp_set_echo_cb(s, ping_echo, p);
    send_one(p);
    p->next_send_ms = p->start_ms + p->cfg.interval_ms;
    rearm(p);
    return WISP_OK;
}

wisp_err_t wisp_ping_start(struct wisp_ping *p, struct wisp_stack *s, wisp_ip4_t dst, uint32_t count,
                           uint32_t interval_ms, uint16_t size, wisp_ping_done_fn done, void *arg)
{
    struct wisp_ping_cfg cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.dst = dst;
    cfg.count = count;
    cfg.interval_ms = interval_ms;
    cfg.size = size;
    cfg.done = done;
    cfg.arg = arg;
    return wisp_ping_start_cfg(p, s, &cfg);
}

void wisp_ping_stop(struct wisp_ping *p)
{
    unsigned i;
    if (!p->running) {
        return;
    }
    for (i = 0; i < WISP_PING_WINDOW; i++) {
        if (p->slot[i].state == SLOT_WAIT) {
            p->slot[i].state = SLOT_TIMEDOUT;
            p->st.timeouts++;
        }
    }
    p->cfg.done = NULL;
    ping_finish(p);
}

const struct wisp_ping_stats *wisp_ping_stats(struct wisp_ping *p)
{
    stats_update(p);
    return &p->st;
}

bool wisp_ping_finished(const struct wisp_ping *p)
{
    return p->finished != 0u;
}

uint32_t wisp_ping_loss_permille(const struct wisp_ping *p)
{
    if (p->st.sent == 0u) {
        return 0;
    }
    return (uint32_t)(((uint64_t)(p->st.sent - p->st.received) * 1000u) / p->st.sent);
}
