/**
 * @file simtest.h
 * Helpers shared by the simulator tests (test/sim/test_*.c): a UDP client
 * that records and checks what it receives, deterministic datagram
 * contents, an echo-with-retry loop and the end-of-test leak check.
 * Header-only (static inline) so each test program stays one file.
 */
#ifndef WISP_SIMTEST_H
#define WISP_SIMTEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "simwire.h"
#include "services.h"

/** The subnet of every test: 198.18.0.N/24 (RFC 2544 benchmarking range). */
#define ST_NET "198.18.0."

/** Free the world and fail the test when any stack pool is not empty. */
#define ST_FREE(w) assert_int_equal(sim_world_free(w), 0)

/** Add node N (1..) named name with 198.18.0.N/24. */
static inline struct sim_node *st_node(struct sim_world *w, const char *name, unsigned n)
{
    char cidr[32];
    struct sim_node *node;
    snprintf(cidr, sizeof(cidr), ST_NET "%u/24", n);
    node = sim_node_add(w, name, cidr, NULL);
    assert_non_null(node);
    return node;
}

static inline wisp_ipaddr_t st_addr(const struct sim_node *n)
{
    return wisp_ipaddr4(sim_ip(n));
}

/* ------------------------------------------------ datagram contents */

/** Byte i of test datagram k (a cheap integer hash, any k and i). */
static inline uint8_t st_pat(uint32_t k, uint32_t i)
{
    uint32_t x = k * 0x9E3779B1u + i * 0x85EBCA77u;
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    return (uint8_t)(x >> 24);
}

/** Fill buf (len >= 8) with datagram k: 4 bytes k, 4 bytes len, pattern. */
static inline void st_fill(uint8_t *buf, uint32_t len, uint32_t k)
{
    uint32_t i;
    wisp_wr32(buf, k);
    wisp_wr32(buf + 4, len);
    for (i = 8; i < len; i++) {
        buf[i] = st_pat(k, i);
    }
}

/** True when buf is exactly a datagram made by st_fill; *k gets its number. */
static inline bool st_valid(const uint8_t *buf, uint32_t len, uint32_t *k)
{
    uint32_t i;
    if (len < 8 || wisp_rd32(buf + 4) != len) {
        return false;
    }
    *k = wisp_rd32(buf);
    for (i = 8; i < len; i++) {
        if (buf[i] != st_pat(*k, i)) {
            return false;
        }
    }
    return true;
}

/* ---------------------------------------------------------- client */

/** A UDP endpoint that keeps the last datagram it received and checks
 *  every datagram that should be an st_fill datagram. */
struct st_client {
    struct wisp_udp_pcb *pcb;
    struct sim_world *w;
    bool check;              /**< received datagrams must be st_valid */
    uint8_t *last;           /**< last datagram (malloc'd, 65535 bytes) */
    uint16_t last_len;
    wisp_ip4_t last_src;
    uint16_t last_port;
    uint8_t last_tos;
    uint64_t last_t;         /**< virtual time of the last arrival */
    unsigned rx;             /**< datagrams received */
    unsigned bad;            /**< datagrams that failed st_valid */
    uint32_t want;           /**< datagram number awaited */
    bool got;                /**< the awaited datagram arrived intact */
};

static inline void st_client_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                                  uint16_t port, const struct wisp_ip_info *ip)
{
    struct st_client *c = (struct st_client *)arg;
    uint32_t k;
    (void)pcb;
    c->last_len = wisp_pbuf_copy_out(p, c->last, p->tot_len, 0);
    c->last_src = wisp_ipaddr_ip4(src);
    c->last_port = port;
    c->last_tos = ip->tos;
    c->last_t = sim_now_us(c->w);
    c->rx++;
    if (c->check) {
        if (!st_valid(c->last, c->last_len, &k)) {
            c->bad++;
            fprintf(stderr, "st_client: corrupted datagram delivered (len %u) at t=%llu\n", (unsigned)c->last_len,
                    (unsigned long long)c->last_t);
        } else if (k == c->want) {
            c->got = true;
        }
    } else {
        c->got = true;
    }
    wisp_pbuf_free(p);
}

/** Open a client on node n, bound to port (0 = ephemeral). */
static inline void st_client_open(struct st_client *c, struct sim_world *w, struct sim_node *n, uint16_t port)
{
    memset(c, 0, sizeof(*c));
    c->w = w;
    c->last = malloc(65536);
    assert_non_null(c->last);
    c->pcb = wisp_udp_new(sim_stack(n));
    assert_non_null(c->pcb);
    assert_int_equal(wisp_udp_bind(c->pcb, NULL, port), WISP_OK);
    wisp_udp_recv(c->pcb, st_client_recv, c);
}

static inline void st_client_close(struct st_client *c)
{
    if (c->pcb != NULL) {
        wisp_udp_remove(c->pcb);
    }
    c->pcb = NULL;
    free(c->last);
    c->last = NULL;
}

static inline bool st_client_got(void *arg)
{
    return ((struct st_client *)arg)->got;
}

/** Send len bytes of data from the client on stack s to dst:port. */
static inline wisp_err_t st_send(struct st_client *c, const uint8_t *data, uint16_t len, const wisp_ipaddr_t *dst,
                                 uint16_t port)
{
    struct wisp_pbuf *p;
    wisp_err_t err;
    struct wisp_stack *s = c->pcb->stack;
    if ((uint32_t)len + WISP_LAYER_TRANSPORT <= WISP_PBUF_BLOCK_SIZE) {
        p = wisp_pbuf_alloc(s, WISP_LAYER_TRANSPORT, len, WISP_PBUF_RAM);
    } else {
        p = wisp_pbuf_alloc(s, WISP_LAYER_TRANSPORT, len, WISP_PBUF_POOL);
    }
    if (p == NULL) {
        return WISP_ERR_MEM;
    }
    if (len > 0) {
        assert_int_equal(wisp_pbuf_copy_in(p, data, len, 0), WISP_OK);
    }
    err = wisp_udp_sendto(c->pcb, p, dst, port);
    wisp_pbuf_free(p);
    return err;
}

/** Send st_fill datagram k (len bytes, data is a scratch buffer that gets
 *  filled) to dst:port and wait up to timeout_us for its intact echo,
 *  retrying up to max_tries times. Returns the number of tries used, or 0
 *  when it never came back. */
static inline unsigned st_echo_retry(struct st_client *c, uint8_t *data, uint16_t len, uint32_t k,
                                     const wisp_ipaddr_t *dst, uint16_t port, uint64_t timeout_us,
                                     unsigned max_tries)
{
    unsigned t;
    st_fill(data, len, k);
    c->check = true;
    c->want = k;
    c->got = false;
    for (t = 1; t <= max_tries; t++) {
        (void)st_send(c, data, len, dst, port); /* a refused send is just another lost try */
        if (sim_run_until(c->w, st_client_got, c, timeout_us)) {
            return t;
        }
        if (sim_error(c->w) != NULL) {
            return 0;
        }
    }
    return 0;
}

/* -------------------------------------------------------------- ping */

/** Echo replies seen by one node, with the data checked against the
 *  pattern of wisp_icmp_echo_request (byte i of the data is (uint8_t)i). */
struct st_ping {
    unsigned replies;
    unsigned bad;            /**< replies with a wrong type or data */
    uint16_t last_id, last_seq;
    uint16_t last_len;       /**< data bytes of the last reply */
    wisp_ip4_t last_src;
};

static inline void st_ping_cb(void *arg, const struct wisp_ip_info *ip, uint16_t id, uint16_t seq,
                              struct wisp_pbuf *p)
{
    struct st_ping *pg = (struct st_ping *)arg;
    uint16_t i, n = p->tot_len;
    bool ok = n >= 8 && wisp_pbuf_get_u8(p, 0) == (int)WISP_ICMP_ECHO_REPLY && wisp_pbuf_get_u8(p, 1) == 0;
    for (i = 8; ok && i < n; i++) {
        ok = wisp_pbuf_get_u8(p, i) == (int)(uint8_t)(i - 8);
    }
    pg->replies++;
    if (!ok) {
        pg->bad++;
    }
    pg->last_id = id;
    pg->last_seq = seq;
    pg->last_len = (uint16_t)(n >= 8 ? n - 8 : 0);
    pg->last_src = wisp_ipaddr_ip4(&ip->src);
    wisp_pbuf_free(p);
}

#endif /* WISP_SIMTEST_H */
