/**
 * @file test_lwip_app.c
 * The lwIP compatibility layer (wisp/lwip_app.h, compat/lwip/lwip_app.c)
 * in process, over wisp's loopback interface: lwIP's OS-layer conventions
 * (sys_*: 0 = forever, SYS_ARCH_TIMEOUT, SYS_MBOX_EMPTY), pbuf helpers and
 * pbuf_free from an application thread, the raw TCP API with lwIP's
 * callback signatures (listener argument inherited, sent lengths in u16_t
 * pieces, tcp_abort reporting ERR_ABRT, an accept refused), raw UDP with
 * lwIP's receive signature, tcpip_callback on the tcpip thread, DNS of
 * a dotted quad, netif_* / netifapi_* with a driver init function. The group's teardown is the leak check: after
 * wisp_lwip_shutdown() every pool element and every per-PCB record of the
 * layer must be back (it returns 0).
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "lwip/tcpip.h"
#include "lwip/tcp.h"
#include "lwip/udp.h"
#include "lwip/pbuf.h"
#include "lwip/sys.h"
#include "lwip/dns.h"
#include "lwip/netif.h"
#include "lwip/netifapi.h"

static sys_sem_t init_sem;

static void init_done(void *arg)
{
    assert_true(wisp_lwip_in_core());
    sys_sem_signal((sys_sem_t *)arg);
}

static int group_setup(void **state)
{
    (void)state;
    tcpip_init(init_done, &init_sem);
    sys_sem_wait(&init_sem);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    assert_int_equal(wisp_lwip_shutdown(), 0);  /* every pool and record back */
    sys_sem_free(&init_sem);
    return 0;
}

/* ------------------------------------------------------------------ sys */

static sys_sem_t thr_sem;
static void thr_fn(void *arg)
{
    *(int *)arg = 42;
    sys_sem_signal(&thr_sem);
}

static void test_sys(void **state)
{
    sys_sem_t sem;
    sys_mbox_t mb;
    sys_mutex_t m;
    void *msg = NULL;
    u32_t t;
    int v = 0;
    SYS_ARCH_DECL_PROTECT(lev);
    (void)state;

    assert_int_equal(sys_sem_new(&sem, 0), ERR_OK);
    assert_true(sys_sem_valid(&sem));
    assert_int_equal(sys_arch_sem_wait(&sem, 30), SYS_ARCH_TIMEOUT);
    sys_sem_signal(&sem);
    t = sys_arch_sem_wait(&sem, 0);                /* 0 = forever: returns at once */
    assert_true(t < 1000u);
    sys_sem_free(&sem);
    assert_false(sys_sem_valid(&sem));

    assert_int_equal(sys_mbox_new(&mb, 2), ERR_OK);
    assert_int_equal(sys_arch_mbox_tryfetch(&mb, &msg), SYS_MBOX_EMPTY);
    assert_int_equal(sys_mbox_trypost(&mb, &v), ERR_OK);
    assert_int_equal(sys_mbox_trypost(&mb, NULL), ERR_OK);
    assert_int_equal(sys_mbox_trypost(&mb, &v), ERR_MEM);   /* full */
    assert_true(sys_arch_mbox_fetch(&mb, &msg, 100) != SYS_ARCH_TIMEOUT);
    assert_ptr_equal(msg, &v);
    assert_int_equal(sys_arch_mbox_tryfetch(&mb, &msg), 0);
    assert_null(msg);
    assert_int_equal(sys_arch_mbox_fetch(&mb, &msg, 20), SYS_ARCH_TIMEOUT);
    sys_mbox_free(&mb);

    assert_int_equal(sys_mutex_new(&m), ERR_OK);
    sys_mutex_lock(&m);
    sys_mutex_unlock(&m);
    sys_mutex_free(&m);

    SYS_ARCH_PROTECT(lev);
    {
        SYS_ARCH_DECL_PROTECT(lev2);
        SYS_ARCH_PROTECT(lev2);                      /* nests */
        SYS_ARCH_UNPROTECT(lev2);
    }
    SYS_ARCH_UNPROTECT(lev);

    assert_int_equal(sys_sem_new(&thr_sem, 0), ERR_OK);
    assert_non_null(sys_thread_new("t", thr_fn, &v, 0, 0));
    assert_true(sys_arch_sem_wait(&thr_sem, 5000) != SYS_ARCH_TIMEOUT);
    assert_int_equal(v, 42);
    sys_sem_free(&thr_sem);
    t = sys_now();
    sys_msleep(20);
    assert_true(sys_now() - t >= 20u);
}

/* ----------------------------------------------------------------- pbuf */

static void test_pbuf(void **state)
{
    static const char text[] = "lwip-style pbuf";
    unsigned base = wisp_lwip_pools_in_use();
    struct pbuf *p, *q, *r;
    char out[64];
    unsigned n;
    (void)state;

    /* from an application thread: the layer takes the core lock */
    assert_false(wisp_lwip_in_core());
    p = pbuf_alloc(PBUF_TRANSPORT, sizeof text, PBUF_RAM);
    assert_non_null(p);
    assert_int_equal(p->tot_len, sizeof text);
    assert_int_equal(pbuf_take(p, text, sizeof text), ERR_OK);
    assert_int_equal(pbuf_copy_partial(p, out, sizeof text, 0), sizeof text);
    assert_string_equal(out, text);
    assert_int_equal(pbuf_memcmp(p, 0, text, sizeof text), 0);
    assert_int_equal(pbuf_memcmp(p, 0, "lwiX", 4), 4);
    pbuf_put_at(p, 0, 'L');
    assert_int_equal(pbuf_get_at(p, 0), 'L');
    pbuf_put_at(p, 1000, 'x');                       /* past the end: nothing */

    q = pbuf_clone(PBUF_RAW, PBUF_POOL, p);
    assert_non_null(q);
    assert_int_equal(pbuf_memcmp(q, 1, text + 1, sizeof text - 1u), 0);
    r = pbuf_alloc(PBUF_RAW, 4, PBUF_RAM);
    assert_non_null(r);
    assert_int_equal(pbuf_copy(r, p), ERR_ARG);     /* too short */

    pbuf_ref(p);
    assert_int_equal(pbuf_free(p), 0);               /* one reference left */
    assert_int_equal(pbuf_free(p), 1);
    n = pbuf_clen(q);
    assert_int_equal(pbuf_free(q), n);               /* every buffer of the clone */
    pbuf_free(r);
    /* PBUF_RAM is one block: no heap behind it */
    assert_null(pbuf_alloc(PBUF_RAW, WISP_PBUF_BLOCK_SIZE + 1u, PBUF_RAM));
    p = pbuf_alloc(PBUF_RAW, 3000, PBUF_POOL);
    assert_non_null(p);
    assert_int_equal(p->tot_len, 3000);
    assert_true(pbuf_clen(p) >= 2);
    pbuf_free(p);
    assert_int_equal(wisp_lwip_pools_in_use(), base);
}

/* ----------------------------------------------------------- raw TCP */

#define TCP_BYTES 200000u
#define TCP_PORT 5555

struct srv {
    int tag;
    u32_t received;
    int closed;
};
struct cli {
    struct tcp_pcb *pcb;
    u32_t queued, acked, max_sent_len;
    int err_calls;
    err_t last_err;
};
static struct srv srv_state = { 77, 0, 0 };
static struct cli cli_state;
static struct tcp_pcb *listener;
static sys_sem_t done_sem;

static err_t srv_recv(void *arg, struct tcp_pcb *tpcb, struct pbuf *p, err_t err)
{
    struct srv *s = (struct srv *)arg;
    assert_int_equal(err, ERR_OK);
    assert_ptr_equal(s, &srv_state);                 /* the listener's argument, inherited */
    if (p == NULL) {
        s->closed = 1;
        assert_int_equal(tcp_close(tpcb), ERR_OK);
        sys_sem_signal(&done_sem);
        return ERR_OK;
    }
    s->received += p->tot_len;
    tcp_recved(tpcb, p->tot_len);
    pbuf_free(p);                                    /* in the core: no lock taken */
    return ERR_OK;
}

static err_t srv_accept(void *arg, struct tcp_pcb *newpcb, err_t err)
{
    assert_ptr_equal(arg, &srv_state);
    assert_int_equal(err, ERR_OK);
    tcp_recv(newpcb, srv_recv);
    tcp_nagle_disable(newpcb);
    return ERR_OK;
}

static void cli_fill(struct cli *c)
{
    static u8_t buf[8192];
    while (c->queued < TCP_BYTES) {
        u16_t n = tcp_sndbuf(c->pcb);
        err_t e;
        if (n > sizeof buf) {
            n = sizeof buf;
        }
        if (n > TCP_BYTES - c->queued) {
            n = (u16_t)(TCP_BYTES - c->queued);
        }
        if (n == 0) {
            break;
        }
        e = tcp_write(c->pcb, buf, n, TCP_WRITE_FLAG_COPY);
        if (e == ERR_MEM) {
            break;
        }
        assert_int_equal(e, ERR_OK);
        c->queued += n;
    }
    tcp_output(c->pcb);
}

static err_t cli_sent(void *arg, struct tcp_pcb *tpcb, u16_t len)
{
    struct cli *c = (struct cli *)arg;
    assert_ptr_equal(tpcb, c->pcb);
    c->acked += len;
    if (len > c->max_sent_len) {
        c->max_sent_len = len;
    }
    if (c->acked == TCP_BYTES) {
        tcp_arg(tpcb, NULL);
        tcp_sent(tpcb, NULL);
        tcp_err(tpcb, NULL);
        assert_int_equal(tcp_close(tpcb), ERR_OK);
        c->pcb = NULL;
        return ERR_OK;
    }
    cli_fill(c);
    return ERR_OK;
}

static err_t cli_connected(void *arg, struct tcp_pcb *tpcb, err_t err)
{
    struct cli *c = (struct cli *)arg;
    assert_int_equal(err, ERR_OK);
    assert_ptr_equal(tpcb, c->pcb);
    cli_fill(c);
    return ERR_OK;
}

static void cli_err(void *arg, err_t err)
{
    struct cli *c = (struct cli *)arg;
    c->err_calls++;
    c->last_err = err;
    c->pcb = NULL;
    sys_sem_signal(&done_sem);
}

static void tcp_start(void *arg)
{
    ip_addr_t lo;
    struct tcp_pcb *pcb = tcp_new();
    (void)arg;
    IP4_ADDR(&lo, 127, 0, 0, 1);
    assert_non_null(pcb);
    tcp_arg(pcb, &srv_state);
    assert_int_equal(tcp_bind(pcb, IP_ADDR_ANY, TCP_PORT), ERR_OK);
    listener = tcp_listen(pcb);
    assert_non_null(listener);
    tcp_accept(listener, srv_accept);

    memset(&cli_state, 0, sizeof cli_state);
    cli_state.pcb = tcp_new();
    assert_non_null(cli_state.pcb);
    tcp_arg(cli_state.pcb, &cli_state);
    tcp_sent(cli_state.pcb, cli_sent);
    tcp_err(cli_state.pcb, cli_err);
    assert_int_equal(tcp_connect(cli_state.pcb, &lo, TCP_PORT, cli_connected), ERR_OK);
}

static void tcp_stop(void *arg)
{
    (void)arg;
    assert_int_equal(tcp_close(listener), ERR_OK);
    listener = NULL;
    sys_sem_signal(&done_sem);
}

static void test_raw_tcp(void **state)
{
    (void)state;
    assert_int_equal(sys_sem_new(&done_sem, 0), ERR_OK);
    assert_int_equal(tcpip_callback(tcp_start, NULL), ERR_OK);
    assert_true(sys_arch_sem_wait(&done_sem, 20000) != SYS_ARCH_TIMEOUT);   /* server saw the FIN */
    assert_int_equal(srv_state.received, TCP_BYTES);
    assert_int_equal(cli_state.acked, TCP_BYTES);
    assert_true(cli_state.max_sent_len <= 0xffffu);
    assert_int_equal(cli_state.err_calls, 0);
    assert_int_equal(tcpip_callback(tcp_stop, NULL), ERR_OK);
    assert_true(sys_arch_sem_wait(&done_sem, 5000) != SYS_ARCH_TIMEOUT);
    sys_sem_free(&done_sem);
}

/* tcp_abort reports ERR_ABRT through the error callback; an accept
 * callback that refuses has the connection aborted (the client sees a
 * reset). */
static err_t refuse_accept(void *arg, struct tcp_pcb *newpcb, err_t err)
{
    (void)arg;
    (void)newpcb;
    (void)err;
    return ERR_MEM;
}

static struct cli abort_cli;

static void abort_start(void *arg)
{
    ip_addr_t lo;
    struct tcp_pcb *pcb = tcp_new();
    (void)arg;
    IP4_ADDR(&lo, 127, 0, 0, 1);
    assert_int_equal(tcp_bind(pcb, IP_ADDR_ANY, TCP_PORT + 1), ERR_OK);
    listener = tcp_listen_with_backlog(pcb, 2);
    assert_non_null(listener);
    tcp_accept(listener, refuse_accept);

    /* an aborted fresh PCB: the error callback with ERR_ABRT */
    memset(&abort_cli, 0, sizeof abort_cli);
    pcb = tcp_new();
    tcp_arg(pcb, &abort_cli);
    tcp_err(pcb, cli_err);
    tcp_abort(pcb);
    assert_int_equal(abort_cli.err_calls, 1);
    assert_int_equal(abort_cli.last_err, ERR_ABRT);

    memset(&cli_state, 0, sizeof cli_state);
    cli_state.pcb = tcp_new();
    tcp_arg(cli_state.pcb, &cli_state);
    tcp_err(cli_state.pcb, cli_err);
    assert_int_equal(tcp_connect(cli_state.pcb, &lo, TCP_PORT + 1, cli_connected), ERR_OK);
}

static void test_raw_tcp_refused(void **state)
{
    (void)state;
    assert_int_equal(sys_sem_new(&done_sem, 0), ERR_OK);
    /* abort_cli's signal, then the client's reset */
    assert_int_equal(tcpip_callback(abort_start, NULL), ERR_OK);
    assert_true(sys_arch_sem_wait(&done_sem, 5000) != SYS_ARCH_TIMEOUT);
    assert_true(sys_arch_sem_wait(&done_sem, 20000) != SYS_ARCH_TIMEOUT);
    assert_int_equal(cli_state.err_calls, 1);
    assert_int_equal(cli_state.last_err, ERR_RST);
    assert_int_equal(tcpip_callback(tcp_stop, NULL), ERR_OK);
    assert_true(sys_arch_sem_wait(&done_sem, 5000) != SYS_ARCH_TIMEOUT);
    sys_sem_free(&done_sem);
}

/* ------------------------------------------------------------ raw UDP */

static struct udp_pcb *echo_pcb, *cli_pcb;
static int udp_got;

static void echo_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    assert_ptr_equal(arg, &echo_pcb);
    assert_int_equal(ip4_addr_get_u32(addr), PP_HTONL(LWIP_MAKEU32(127, 0, 0, 1)));
    assert_int_equal(udp_sendto(pcb, p, addr, port), ERR_OK);
    pbuf_free(p);
}

static void cli_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    (void)arg;
    (void)pcb;
    (void)addr;
    assert_int_equal(port, 7777);
    assert_int_equal(pbuf_memcmp(p, 0, "ping", 4), 0);
    udp_got = 1;
    pbuf_free(p);
    sys_sem_signal(&done_sem);
}

static void udp_start(void *arg)
{
    ip_addr_t lo;
    struct pbuf *p;
    (void)arg;
    IP4_ADDR(&lo, 127, 0, 0, 1);
    echo_pcb = udp_new();
    assert_non_null(echo_pcb);
    assert_int_equal(udp_bind(echo_pcb, IP_ADDR_ANY, 7777), ERR_OK);
    udp_recv(echo_pcb, echo_recv, &echo_pcb);
    cli_pcb = udp_new_ip_type(IPADDR_TYPE_ANY);
    assert_non_null(cli_pcb);
    udp_recv(cli_pcb, cli_recv, NULL);
    p = pbuf_alloc(PBUF_TRANSPORT, 4, PBUF_RAM);
    assert_non_null(p);
    pbuf_take(p, "ping", 4);
    assert_int_equal(udp_sendto(cli_pcb, p, &lo, 7777), ERR_OK);
    pbuf_free(p);                                    /* udp_sendto does not take it */
}

static void udp_stop(void *arg)
{
    (void)arg;
    udp_remove(echo_pcb);
    udp_remove(cli_pcb);
    sys_sem_signal(&done_sem);
}

static void test_raw_udp(void **state)
{
    (void)state;
    assert_int_equal(sys_sem_new(&done_sem, 0), ERR_OK);
    assert_int_equal(tcpip_callback(udp_start, NULL), ERR_OK);
    assert_true(sys_arch_sem_wait(&done_sem, 5000) != SYS_ARCH_TIMEOUT);
    assert_int_equal(udp_got, 1);
    assert_int_equal(tcpip_callback(udp_stop, NULL), ERR_OK);
    assert_true(sys_arch_sem_wait(&done_sem, 5000) != SYS_ARCH_TIMEOUT);
    sys_sem_free(&done_sem);
}

/* -------------------------------------------------------- DNS, callback */

static void dns_cb(const char *name, const ip_addr_t *ipaddr, void *arg)
{
    (void)name;
    (void)ipaddr;
    (void)arg;
    fail();                                          /* a dotted quad needs no query */
}

static void dns_check(void *arg)
{
    ip_addr_t a;
    assert_true(wisp_lwip_in_core());
    assert_int_equal(dns_gethostbyname("198.18.1.2", &a, dns_cb, NULL), ERR_OK);
    assert_int_equal(ip4_addr_get_u32(&a), PP_HTONL(LWIP_MAKEU32(198, 18, 1, 2)));
    assert_int_equal(dns_gethostbyname("not a name!", &a, dns_cb, NULL), ERR_ARG);
    sys_sem_signal((sys_sem_t *)arg);
}

static void test_dns_callback(void **state)
{
    sys_sem_t s;
    (void)state;
    assert_int_equal(sys_sem_new(&s, 0), ERR_OK);
    assert_int_equal(tcpip_callback(dns_check, &s), ERR_OK);
    assert_true(sys_arch_sem_wait(&s, 5000) != SYS_ARCH_TIMEOUT);
    sys_sem_free(&s);
    LOCK_TCPIP_CORE();
    assert_true(wisp_lwip_in_core());
    UNLOCK_TCPIP_CORE();
    assert_false(wisp_lwip_in_core());
}

/* ------------------------------------------------------ netif, netifapi */

static unsigned dev_frames;
static wisp_err_t dev_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    (void)dev;
    (void)frame;
    dev_frames++;                                    /* copied nowhere: dropped */
    return WISP_OK;
}
static const struct wisp_dev_ops dev_ops = { dev_transmit, NULL, NULL };
static struct wisp_dev dev = { &dev_ops, NULL, NULL, NULL, NULL };
static int status_calls;

static err_t dev_init(struct netif *netif)
{
    static const u8_t mac[6] = { 2, 0, 0, 0, 0, 9 };
    assert_true(wisp_lwip_in_core());
    assert_string_equal((const char *)netif->state, "state");
    netif->name[0] = 'd';
    netif->name[1] = 'v';
    netif->mtu = 1500;
    netif->hwaddr_len = 6;
    memcpy(netif->hwaddr, mac, 6);
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    netif->wisp_dev = &dev;
    return ERR_OK;
}

static void on_status(struct netif *netif)
{
    (void)netif;
    status_calls++;
}

static void test_netifapi(void **state)
{
    static struct netif nif;
    ip4_addr_t a, m, g;
    (void)state;
    IP4_ADDR(&a, 10, 9, 9, 9);
    IP4_ADDR(&m, 255, 255, 255, 0);
    IP4_ADDR(&g, 10, 9, 9, 1);
    assert_int_equal(netifapi_netif_add(&nif, &a, &m, &g, (void *)"state", dev_init, tcpip_input), ERR_OK);
    netif_set_status_callback(&nif, on_status);
    assert_int_equal(netifapi_netif_set_default(&nif), ERR_OK);
    assert_ptr_equal(netif_default, &nif);
    assert_int_equal(netifapi_netif_set_up(&nif), ERR_OK);
    assert_int_equal(netifapi_netif_set_link_up(&nif), ERR_OK);
    assert_true(netif_is_up(&nif) && netif_is_link_up(&nif));
    assert_int_equal(status_calls, 1);
    assert_int_equal(ip4_addr_get_u32(netif_ip4_addr(&nif)), ip4_addr_get_u32(&a));   /* any thread */
    assert_int_equal(ip4_addr_get_u32(netif_ip4_gw(&nif)), ip4_addr_get_u32(&g));
    IP4_ADDR(&a, 10, 9, 9, 10);
    assert_int_equal(netifapi_netif_set_addr(&nif, &a, &m, &g), ERR_OK);
    assert_int_equal(ip4_addr_get_u32(netif_ip4_addr(&nif)), ip4_addr_get_u32(&a));
    assert_true(dev_frames > 0);                     /* gratuitous ARP through the device */
    assert_int_equal(netifapi_netif_set_link_down(&nif), ERR_OK);
    assert_int_equal(netifapi_netif_set_down(&nif), ERR_OK);
    assert_int_equal(status_calls, 2);
    assert_int_equal(netifapi_netif_remove(&nif), ERR_OK);
    assert_null(netif_default);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sys),
        cmocka_unit_test(test_pbuf),
        cmocka_unit_test(test_raw_tcp),
        cmocka_unit_test(test_raw_tcp_refused),
        cmocka_unit_test(test_raw_udp),
        cmocka_unit_test(test_dns_callback),
        cmocka_unit_test(test_netifapi),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
