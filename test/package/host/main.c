/**
 * @file main.c
 * A program outside the wisp tree, built against the installed package
 * (test/package/run.sh: once with find_package(wisp), once with
 * pkg-config): two stacks on an in-memory wire, a UDP datagram from A to
 * B's echo port and back (ARP, IPv4, UDP on both sides), the pools back at
 * their baseline afterwards; then the OS layer of the package (wisp::api on
 * wisp::port_unix) runs a stack thread and a call on it. Built against a
 * package with test/package/host/pkg_opts.h, it also checks that the
 * library's UDP pool has that header's size. Public headers only. Exit
 * status 0 = every check passed.
 */
#include <stdio.h>
#include <string.h>

#include "wisp/wisp.h"
#include "wisp/tcpip.h"
#include "unix_port.h"

#define FRAMES 16
#define FRAME_MAX 1518

struct wire_end {
    struct wisp_dev dev;
    struct wisp_stack *stack;
    struct wire_end *peer;
    unsigned char frame[FRAMES][FRAME_MAX]; /* frames on their way to this end */
    uint16_t len[FRAMES];
    unsigned count;
};

static struct wisp_stack stack_a, stack_b, stack_c;
static struct wisp_netif nif_a, nif_b;
static struct wire_end end_a, end_b;
static char reply[64];
static int failures;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    failures += !ok;
}

static wisp_err_t wire_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct wire_end *to = ((struct wire_end *)dev->ctx)->peer;
    uint16_t n;

    if (to->count == FRAMES) {
        return WISP_ERR_MEM;
    }
    n = wisp_pbuf_copy_out(frame, to->frame[to->count], FRAME_MAX, 0);
    to->len[to->count++] = n;
    return WISP_OK;
}

static const struct wisp_dev_ops wire_ops = { wire_transmit, NULL, NULL };

/* Hand what is queued for one end to its stack; how many frames. */
static unsigned wire_deliver(struct wire_end *e)
{
    unsigned i, n = e->count;

    for (i = 0; i < n; i++) {
        struct wisp_pbuf *p = wisp_pbuf_alloc_rx(e->stack, e->len[i]);
        if (p != NULL && wisp_pbuf_copy_in(p, e->frame[i], e->len[i], 0) == WISP_OK) {
            wisp_dev_input(&e->dev, p);
        } else if (p != NULL) {
            wisp_pbuf_free(p);
        }
    }
    e->count = 0;
    return n;
}

static void echo_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                      uint16_t port, const struct wisp_ip_info *ip)
{
    (void)arg;
    (void)ip;
    (void)wisp_udp_sendto(pcb, p, src, port);
    wisp_pbuf_free(p);
}

static void reply_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                       uint16_t port, const struct wisp_ip_info *ip)
{
    uint16_t n;

    (void)arg;
    (void)pcb;
    (void)src;
    (void)port;
    (void)ip;
    n = wisp_pbuf_copy_out(p, reply, sizeof(reply) - 1u, 0);
    reply[n] = '\0';
    wisp_pbuf_free(p);
}

static void stack_up(struct wisp_stack *s, struct wisp_netif *nif, struct wire_end *e, uint8_t host)
{
    const uint8_t mac[6] = { 2, 0, 0, 0, 0, host };
    struct wisp_config cfg;

    memset(&cfg, 0, sizeof(cfg));
    cfg.now_ms = wisp_unix_now_ms;
    cfg.rand = wisp_unix_random;
    wisp_stack_init(s, &cfg);
    e->dev.ops = &wire_ops;
    e->dev.ctx = e;
    e->stack = s;
    wisp_netif_add_eth(s, nif, "wire0", &e->dev, mac, 1500);
    wisp_netif_set_ip4(nif, wisp_ip4(198, 18, 7, host), wisp_ip4_prefix_mask(24), 0);
    wisp_netif_set_up(nif, true);
    wisp_netif_set_link(nif, true);
}

static wisp_err_t on_stack_thread(struct wisp_stack *s, void *arg)
{
    *(unsigned *)arg = wisp_stack_pools_in_use(s) + 1000u;
    return WISP_OK;
}

int main(void)
{
    static const char msg[] = "hello from a wisp package consumer";
    wisp_ipaddr_t dst = wisp_ipaddr4(wisp_ip4(198, 18, 7, 2));
    struct wisp_udp_pcb *echo, *client;
    struct wisp_pbuf *p;
    unsigned base_a, base_b, round, seen = 0;
    struct wisp_tcpip ctx;

    end_a.peer = &end_b;
    end_b.peer = &end_a;
    stack_up(&stack_a, &nif_a, &end_a, 1);
    stack_up(&stack_b, &nif_b, &end_b, 2);
    base_a = wisp_stack_pools_in_use(&stack_a);
    base_b = wisp_stack_pools_in_use(&stack_b);

    echo = wisp_udp_new(&stack_b);
    check(echo != NULL && wisp_udp_bind(echo, NULL, 7) == WISP_OK, "echo port bound on B");
    wisp_udp_recv(echo, echo_recv, NULL);
    client = wisp_udp_new(&stack_a);
    check(client != NULL && wisp_udp_bind(client, NULL, 40000) == WISP_OK, "client port bound on A");
    wisp_udp_recv(client, reply_recv, NULL);
    p = wisp_pbuf_alloc(&stack_a, WISP_LAYER_IP + 8, sizeof(msg) - 1u, WISP_PBUF_RAM);
    check(p != NULL && wisp_pbuf_copy_in(p, msg, sizeof(msg) - 1u, 0) == WISP_OK, "datagram built");
    (void)wisp_udp_sendto(client, p, &dst, 7);
    wisp_pbuf_free(p);
    /* ARP request, reply, datagram, echo: a few rounds of the wire. */
    for (round = 0; round < 20 && reply[0] == '\0'; round++) {
        seen += wire_deliver(&end_b) + wire_deliver(&end_a);
        wisp_stack_poll(&stack_a);
        wisp_stack_poll(&stack_b);
    }
    check(strcmp(reply, msg) == 0, "the echo came back over the wire");
    printf("   %u frames on the wire\n", seen);
#ifdef WISP_PKG_TEST_OPTS
    {
        /* pkg_opts.h: 3 UDP PCBs in the library's pool, one in use on A (client) */
        struct wisp_udp_pcb *more[3];
        unsigned i, got = 0;
        for (i = 0; i < 3; i++) {
            more[i] = wisp_udp_new(&stack_a);
            got += more[i] != NULL;
        }
        check(got == 2, "the package's options header sized the library's UDP pool (3 PCBs)");
        for (i = 0; i < 3; i++) {
            if (more[i] != NULL) {
                wisp_udp_remove(more[i]);
            }
        }
    }
#endif
    wisp_udp_remove(client);
    wisp_udp_remove(echo);
    check(wisp_stack_pools_in_use(&stack_a) == base_a && wisp_stack_pools_in_use(&stack_b) == base_b,
          "pools back at their baseline");
    wisp_stack_deinit(&stack_a);
    wisp_stack_deinit(&stack_b);

    {
        struct wisp_config cfg;
        unsigned got = 0;
        memset(&cfg, 0, sizeof(cfg));
        cfg.now_ms = wisp_unix_now_ms;
        cfg.rand = wisp_unix_random;
        check(wisp_stack_init(&stack_c, &cfg) == WISP_OK, "third stack");
        check(wisp_tcpip_start(&ctx, &stack_c, NULL) == WISP_OK, "stack thread started (wisp::api on the unix port)");
        check(wisp_tcpip_call(&ctx, on_stack_thread, &got) == WISP_OK && got >= 1000u, "a call ran on the stack thread");
        wisp_tcpip_stop(&ctx);
        wisp_stack_deinit(&stack_c);
    }
    printf("%s\n", failures ? "package consumer: FAILED" : "package consumer: all checks passed");
    return failures ? 1 : 0;
}
