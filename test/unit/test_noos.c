/**
 * @file test_noos.c
 * No-OS mode (ports/none): the stack driven by a plain bare-metal main loop
 * -- poll the NIC's receive ring, hand frames to wisp_dev_input(), call
 * wisp_stack_poll() when a timer is due -- with the sys port "none", built
 * from the core sources with ports/none/wisp_opts_none.h (the default,
 * microcontroller-sized pools) and linked without ports/unix, pthreads or
 * the simulator. The "board" here provides wisp_sys_now_ms() (a SysTick
 * counter the loop advances) and wisp_assert_fail().
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "wisp/wisp.h"
#include "wisp/sys.h"
#include "wisp/tcpip.h"

/* ------------------------------------------------------------ the board */

/* The SysTick counter: the board's one piece of global state. */
static volatile uint32_t board_ms;
/* When non-zero, every clock read advances the clock (lets the spinning
 * waits of sys_none time out in a test). */
static uint32_t board_autotick;

uint32_t wisp_sys_now_ms(void)
{
    uint32_t t = board_ms;
    board_ms = t + board_autotick;
    return t;
}

void wisp_assert_fail(const char *expr, const char *file, int line);
void wisp_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "assertion failed: %s (%s:%d)\n", expr, file, line);
    abort();
}

static uint32_t stack_clock(void *ctx)
{
    (void)ctx;
    return board_ms;
}

/* ----------------------------------------------- a NIC with rings, no OS */

#define RING 8
#define FRAME_MAX 1514

struct nic {
    struct wisp_dev dev;
    uint8_t rx[RING][FRAME_MAX];     /* filled by "DMA" (the test) */
    uint16_t rx_len[RING];
    unsigned rx_head, rx_count;
    uint8_t tx[RING][FRAME_MAX];     /* frames the stack sent */
    uint16_t tx_len[RING];
    unsigned tx_count;
};

static wisp_err_t nic_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct nic *n = (struct nic *)dev->ctx;
    if (n->tx_count == RING || frame->tot_len > FRAME_MAX) {
        return WISP_ERR_IF;
    }
    n->tx_len[n->tx_count] = wisp_pbuf_copy_out(frame, n->tx[n->tx_count], frame->tot_len, 0);
    n->tx_count++;
    return WISP_OK;
}

static const struct wisp_dev_ops nic_ops = { nic_transmit, NULL, NULL };

static void nic_rx_put(struct nic *n, const uint8_t *frame, size_t len)
{
    unsigned slot = (n->rx_head + n->rx_count) % RING;
    assert_true(n->rx_count < RING);
    assert_true(len <= FRAME_MAX);
    memcpy(n->rx[slot], frame, len);
    n->rx_len[slot] = (uint16_t)len;
    n->rx_count++;
}

/* --------------------------------------------------------- the app */

struct app {
    struct wisp_stack s;
    struct wisp_netif nif;
    struct nic nic;
    struct wisp_udp_pcb *echo;
    unsigned echoed;
    wisp_sys_mutex_t lock;           /* compiled for both modes: a flag here */
};

static const uint8_t mac_self[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const uint8_t mac_peer[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static wisp_ip4_t ip_self(void) { return wisp_ip4(198, 18, 0, 2); }
static wisp_ip4_t ip_peer(void) { return wisp_ip4(198, 18, 0, 1); }

static void echo_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                      uint16_t port, const struct wisp_ip_info *ip)
{
    struct app *a = (struct app *)arg;
    (void)ip;
    wisp_sys_mutex_lock(&a->lock);
    a->echoed++;
    wisp_sys_mutex_unlock(&a->lock);
    (void)wisp_udp_sendto(pcb, p, src, port);
    wisp_pbuf_free(p);
}

static struct app *app_new(void)
{
    struct app *a = calloc(1, sizeof(*a));
    struct wisp_config cfg;
    wisp_ipaddr_t any = wisp_ipaddr4(WISP_IP4_ANY);

    assert_non_null(a);
    assert_int_equal(wisp_sys_init(), WISP_OK);
    assert_int_equal(wisp_sys_mutex_new(&a->lock), WISP_OK);
    board_ms = 5000;
    board_autotick = 0;
    memset(&cfg, 0, sizeof(cfg));
    cfg.now_ms = stack_clock;
    cfg.seed = 7;
    assert_int_equal(wisp_stack_init(&a->s, &cfg), WISP_OK);
    a->nic.dev.ops = &nic_ops;
    a->nic.dev.ctx = &a->nic;
    assert_int_equal(wisp_netif_add_eth(&a->s, &a->nif, "eth0", &a->nic.dev, mac_self, 1500), WISP_OK);
    wisp_netif_set_ip4(&a->nif, ip_self(), wisp_ip4_prefix_mask(24), 0);
    wisp_netif_set_up(&a->nif, true);
    wisp_netif_set_link(&a->nif, true);
    a->nic.tx_count = 0; /* forget the gratuitous ARP */
    a->echo = wisp_udp_new(&a->s);
    assert_non_null(a->echo);
    assert_int_equal(wisp_udp_bind(a->echo, &any, 7), WISP_OK);
    wisp_udp_recv(a->echo, echo_recv, a);
    return a;
}

static void app_free(struct app *a)
{
    wisp_udp_remove(a->echo);
    wisp_stack_deinit(&a->s);
    assert_int_equal(wisp_stack_pools_in_use(&a->s), 0);
    wisp_sys_mutex_free(&a->lock);
    free(a);
}

/* The bare-metal main loop, for ms SysTick periods: drain the receive
 * ring, run due timers, "sleep" one tick. */
static void main_loop(struct app *a, uint32_t ms)
{
    uint32_t i;
    for (i = 0; i < ms; i++) {
        while (a->nic.rx_count > 0) {
            unsigned slot = a->nic.rx_head;
            struct wisp_pbuf *p = wisp_pbuf_alloc_rx(&a->s, a->nic.rx_len[slot]);
            if (p != NULL) {
                assert_int_equal(wisp_pbuf_copy_in(p, a->nic.rx[slot], a->nic.rx_len[slot], 0), WISP_OK);
                wisp_dev_input(&a->nic.dev, p);
            }
            a->nic.rx_head = (slot + 1u) % RING;
            a->nic.rx_count--;
        }
        if (wisp_stack_next_timeout(&a->s) == 0) {
            wisp_stack_poll(&a->s);
        }
        board_ms = board_ms + 1u; /* the SysTick interrupt */
    }
}

/* ---------------------------------------------------- frame builders */

static size_t eth_hdr(uint8_t *b, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
    memcpy(b, dst, 6);
    memcpy(b + 6, src, 6);
    wisp_wr16(b + 12, type);
    return 14;
}

static size_t udp_frame(uint8_t *b, uint16_t sport, uint16_t dport, const void *data, uint16_t len)
{
    uint8_t *ip = b + 14, *u = b + 34;
    uint16_t sum;
    eth_hdr(b, mac_self, mac_peer, WISP_ETHTYPE_IP4);
    memset(ip, 0, 20);
    ip[0] = 0x45;
    wisp_wr16(ip + 2, (uint16_t)(28u + len));
    wisp_wr16(ip + 4, 0x77);
    ip[8] = 64;
    ip[9] = WISP_IP4_PROTO_UDP;
    wisp_ip4_wr(ip + 12, ip_peer());
    wisp_ip4_wr(ip + 16, ip_self());
    wisp_wr16(ip + 10, (uint16_t)~wisp_chksum_sum(ip, 20));
    wisp_wr16(u, sport);
    wisp_wr16(u + 2, dport);
    wisp_wr16(u + 4, (uint16_t)(8u + len));
    wisp_wr16(u + 6, 0);
    memcpy(u + 8, data, len);
    sum = (uint16_t)~wisp_chksum_add(wisp_chksum_pseudo4(ip_peer(), ip_self(), WISP_IP4_PROTO_UDP, (uint16_t)(8u + len)),
                                     wisp_chksum_sum(u, 8u + len));
    wisp_wr16(u + 6, sum == 0 ? 0xffff : sum);
    return 42u + len;
}

/* An ARP reply from the peer to the stack (RFC 826 packet layout). */
static size_t arp_reply(uint8_t *b)
{
    uint8_t *a = b + 14;
    eth_hdr(b, mac_self, mac_peer, WISP_ETHTYPE_ARP);
    wisp_wr16(a, 1);                 /* Ethernet */
    wisp_wr16(a + 2, WISP_ETHTYPE_IP4);
    a[4] = 6;
    a[5] = 4;
    wisp_wr16(a + 6, 2);             /* reply */
    memcpy(a + 8, mac_peer, 6);
    wisp_ip4_wr(a + 14, ip_peer());
    memcpy(a + 18, mac_self, 6);
    wisp_ip4_wr(a + 24, ip_self());
    return 42;
}

static bool is_arp_request_for_peer(const uint8_t *f, size_t len)
{
    return len >= 42 && wisp_rd16(f + 12) == WISP_ETHTYPE_ARP && wisp_rd16(f + 20) == 1 &&
           wisp_ip4_rd(f + 38) == ip_peer();
}

/* ------------------------------------------------------------ tests */

/* UDP echo through the main loop: the request waits for ARP, the ARP reply
 * arrives through the receive ring, the echo goes out with the same data. */
static void test_noos_udp_echo_main_loop(void **state)
{
    struct app *a = app_new();
    uint8_t f[128];
    const char msg[] = "bare metal";
    const uint8_t *e;
    size_t n;
    (void)state;

    n = udp_frame(f, 5000, 7, msg, sizeof msg);
    nic_rx_put(&a->nic, f, n);
    main_loop(a, 3);
    assert_int_equal(a->echoed, 1);
    assert_int_equal(a->nic.tx_count, 1);
    assert_true(is_arp_request_for_peer(a->nic.tx[0], a->nic.tx_len[0]));
    a->nic.tx_count = 0;

    nic_rx_put(&a->nic, f, arp_reply(f));
    main_loop(a, 3);
    assert_int_equal(a->nic.tx_count, 1);
    e = a->nic.tx[0];
    assert_int_equal(a->nic.tx_len[0], 42 + sizeof msg);
    assert_memory_equal(e, mac_peer, 6);                 /* to the peer's MAC */
    assert_int_equal(wisp_rd16(e + 12), WISP_ETHTYPE_IP4);
    assert_int_equal(e[23], WISP_IP4_PROTO_UDP);
    assert_true(wisp_ip4_rd(e + 26) == ip_self());
    assert_true(wisp_ip4_rd(e + 30) == ip_peer());
    assert_int_equal(wisp_rd16(e + 34), 7);              /* from the echo port */
    assert_int_equal(wisp_rd16(e + 36), 5000);           /* back to the sender */
    assert_memory_equal(e + 42, msg, sizeof msg);
    /* Checksums verify (one's complement sum over header incl. checksum). */
    assert_int_equal(wisp_chksum_sum(e + 14, 20), 0xffff);
    assert_int_equal(wisp_chksum_add(wisp_chksum_pseudo4(ip_self(), ip_peer(), WISP_IP4_PROTO_UDP,
                                                         (uint16_t)(8u + sizeof msg)),
                                     wisp_chksum_sum(e + 34, 8u + sizeof msg)), 0xffff);
    app_free(a);
}

/* Timers run only through wisp_stack_poll() in the loop: an unanswered ARP
 * request is retried every WISP_ARP_RETRY_MS. */
static void test_noos_timers_run_from_main_loop(void **state)
{
    struct app *a = app_new();
    uint8_t f[128];
    unsigned i, requests = 0;
    (void)state;

    nic_rx_put(&a->nic, f, udp_frame(f, 5000, 7, "x", 1));
    main_loop(a, 1);
    assert_int_equal(a->nic.tx_count, 1);
    main_loop(a, WISP_ARP_RETRY_MS * 2u + 10u);
    for (i = 0; i < a->nic.tx_count; i++) {
        requests += is_arp_request_for_peer(a->nic.tx[i], a->nic.tx_len[i]) ? 1u : 0u;
    }
    assert_int_equal(requests, 3);
    assert_int_equal(a->nic.tx_count, 3);
    app_free(a);
}

/* The sys API in no-OS mode: flags, counters and rings with spinning timed
 * waits; no threads (so no stack thread either). */
static void test_noos_sys_primitives_single_context(void **state)
{
    wisp_sys_mutex_t m;
    wisp_sys_sem_t sem;
    wisp_sys_mbox_t mb;
    wisp_sys_thread_t t;
    void *msg = NULL;
    int x = 1, y = 2, z = 3;
    uint32_t t0;
    (void)state;

    board_ms = 100;
    board_autotick = 1;
    assert_int_equal(wisp_sys_init(), WISP_OK);
    assert_int_equal(wisp_sys_mutex_new(&m), WISP_OK);
    assert_false(wisp_sys_mutex_held(&m));
    wisp_sys_mutex_lock(&m);
    assert_true(wisp_sys_mutex_held(&m));
    wisp_sys_mutex_unlock(&m);
    assert_false(wisp_sys_mutex_held(&m));
    wisp_sys_mutex_free(&m);

    assert_int_equal(wisp_sys_sem_new(&sem, 1), WISP_OK);
    assert_int_equal(wisp_sys_sem_wait(&sem, 0), WISP_OK);
    assert_int_equal(wisp_sys_sem_wait(&sem, 0), WISP_ERR_TIMEOUT);
    t0 = board_ms;
    assert_int_equal(wisp_sys_sem_wait(&sem, 20), WISP_ERR_TIMEOUT);
    assert_true(board_ms - t0 >= 20);
    wisp_sys_sem_signal(&sem);
    assert_int_equal(wisp_sys_sem_wait(&sem, WISP_SYS_FOREVER), WISP_OK);
    wisp_sys_sem_free(&sem);

    assert_int_equal(wisp_sys_mbox_new(&mb, WISP_SYS_NONE_MBOX_MAX + 1), WISP_ERR_MEM);
    assert_int_equal(wisp_sys_mbox_new(&mb, 2), WISP_OK);
    assert_int_equal(wisp_sys_mbox_trypost(&mb, &x), WISP_OK);
    wisp_sys_mbox_post(&mb, &y);
    assert_int_equal(wisp_sys_mbox_trypost(&mb, &z), WISP_ERR_WOULDBLOCK);
    assert_int_equal(wisp_sys_mbox_fetch(&mb, &msg, 0), WISP_OK);
    assert_ptr_equal(msg, &x);
    assert_int_equal(wisp_sys_mbox_tryfetch(&mb, &msg), WISP_OK);
    assert_ptr_equal(msg, &y);
    assert_int_equal(wisp_sys_mbox_tryfetch(&mb, &msg), WISP_ERR_WOULDBLOCK);
    t0 = board_ms;
    assert_int_equal(wisp_sys_mbox_fetch(&mb, &msg, 15), WISP_ERR_TIMEOUT);
    assert_true(board_ms - t0 >= 15);
    assert_ptr_equal(msg, &y);
    wisp_sys_mbox_free(&mb);

    t0 = board_ms;
    wisp_sys_sleep_ms(10);
    assert_true(board_ms - t0 >= 10);

    assert_int_equal(wisp_sys_thread_new(&t, "x", NULL, NULL, 0, 0), WISP_ERR_VAL);
    assert_false(wisp_sys_thread_is_self(&t));
    /* the blocked-thread probe: no other context can be blocked */
    wisp_sys_debug_thread_register(&t);
    assert_false(wisp_sys_debug_wait_blocked(&t, NULL, 5));
    assert_true(wisp_sys_debug_wait_blocked_n(&mb, 0, 0));
    assert_false(wisp_sys_debug_wait_blocked_n(&mb, 1, 5));
    assert_null(wisp_sys_debug_blocked_on(&t, NULL));
    wisp_sys_debug_thread_unregister(&t);
    board_autotick = 0;
}

/* The same stack-thread code compiles here, and refuses to start. */
static void test_noos_tcpip_start_refused_without_threads(void **state)
{
    struct app *a = app_new();
    struct wisp_tcpip *ctx = calloc(1, sizeof(*ctx));
    (void)state;
    assert_non_null(ctx);
    assert_int_equal(wisp_tcpip_start(ctx, &a->s, NULL), WISP_ERR_VAL);
    assert_null(a->s.core_lock);     /* the stack is still the caller's */
    main_loop(a, 1);
    free(ctx);
    app_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_noos_udp_echo_main_loop),
        cmocka_unit_test(test_noos_timers_run_from_main_loop),
        cmocka_unit_test(test_noos_sys_primitives_single_context),
        cmocka_unit_test(test_noos_tcpip_start_refused_without_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
