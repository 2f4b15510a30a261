/**
 * @file prio_bench.c
 * wisp-prio-bench: seed 001's experiment ("Analysis and optimization of
 * the lwIP mechanism", Computer Engineering 41(2), 2015): the response time
 * of the transmit path -- from the application's send call to the driver
 * putting the frame on the wire -- of urgent (DSCP EF) and common traffic
 * at rising offered load, with the paper's optimizations on and off.
 *
 * One wisp stack with its stack thread (wisp_tcpip); the application
 * thread sends 1024-byte UDP datagrams (1066-byte frames) at random
 * (exponential) intervals whose mean makes the offered load a chosen
 * fraction of an emulated wire (default 100 Mbit/s, the paper's board);
 * each datagram is urgent with probability 0.1 (sent from a UDP PCB with
 * TOS 0xb8, DSCP 46 = EF, which wisp's IP output maps to the emergency
 * transmit queue) or common (TOS 0). The emulated driver takes a frame only
 * when its transmitter is free: it copies the frame into its transmit
 * buffer (wisp_pbuf_copy_out: the stack's copy routine), reads the send
 * time the application wrote into the payload, records the response time,
 * and is busy for the frame's wire time (frame + 24 bytes of preamble,
 * FCS and gap); until then it answers WISP_ERR_WOULDBLOCK and the frame
 * waits in the netif's emergency or common queue (wisp/netif.h). When the
 * wire time has passed the application thread, which spins on the clock
 * between its sends, reports the transmitter free (wisp_tcpip_tx_ready,
 * the "eth_available" semaphore of the paper): the emergency queue is
 * served first.
 *
 * The optimizations (each can be switched off):
 *  - checksum and copy routines: wisp's word-wise checksum and block copy
 *    (src/core/chksum.c) or the byte-pair checksum and byte copy
 *    (wisp_chksum_sum_ref, wisp_memcpy_ref: what the paper started from).
 *    Chosen when the library is built: compile it with
 *    -DWISP_ARCH_CHKSUM_SUM -DWISP_ARCH_CHKSUM_COPY -DWISP_ARCH_MEMCPY
 *    and this program supplies the byte-wise versions (the port hooks of
 *    wisp/chksum.h); bench/run.sh builds both;
 *  - core locking (--msg: message passing): the send runs in the
 *    application thread under the core lock (wisp_tcpip_lock), or is
 *    posted to the stack thread, which runs it while the application waits
 *    (wisp_tcpip_call: a mailbox post and two thread wake-ups per send);
 *  - priority queues (--noprio: urgent datagrams are sent with TOS 0 and
 *    share the common queue).
 *
 * Output, one line per load: load=.. sent=.. urg_n=.. urg_mean_us=..
 * urg_p50_us=.. urg_p99_us=.. com_n=.. com_mean_us=.. com_p50_us=..
 * com_p99_us=.. drops=.. cpu_us_per_pkt=.. (process CPU per datagram).
 *
 * Usage: wisp-prio-bench [--n N] [--loads 10,30,50,70,90] [--mbit R]
 *                        [--msg] [--noprio] [--seed S]
 * Not a test (timing; the application thread spins): run by bench/run.sh
 * (experiment 5).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wisp/wisp.h"
#include "wisp/tcpip.h"
#include "wisp/chksum.h"
#include "unix_port.h"

#define PAYLOAD 1024u
#define FRAME (14u + 20u + 8u + PAYLOAD)
#define WIRE_EXTRA 24u /* preamble 8 + FCS 4 + inter-frame gap 12 */
#define TOS_EF 0xb8u   /* DSCP 46 (Expedited Forwarding) << 2 */
#define MAXN 100000u

/* The byte-wise routines, when the library was built to take them from the
 * port (see the file comment). */
#ifdef WISP_ARCH_CHKSUM_SUM
uint16_t wisp_chksum_sum(const void *data, size_t len)
{
    return wisp_chksum_sum_ref(data, len);
}
#endif
#ifdef WISP_ARCH_CHKSUM_COPY
uint16_t wisp_chksum_copy(void *dst, const void *src, size_t len)
{
    (void)wisp_memcpy_ref(dst, src, len);
    return wisp_chksum_sum_ref(dst, len);
}
#endif
#ifdef WISP_ARCH_MEMCPY
void *wisp_memcpy(void *dst, const void *src, size_t len)
{
    return wisp_memcpy_ref(dst, src, len);
}
#endif

struct bench {
    struct wisp_stack *s;
    struct wisp_netif nif;
    struct wisp_dev dev;
    struct wisp_tcpip ctx;
    struct wisp_udp_pcb *pcb[2]; /* common, urgent */
    wisp_ipaddr_t dst;
    uint64_t t0;
    double ns_per_byte;
    /* the virtual clock (ns): the application's last step started at
     * v_base, when the process had used c_base seconds of CPU */
    double v_base, c_base;
    /* transmitter (virtual time) */
    int busy;
    double busy_until;
    uint8_t txbuf[2048];
    /* response times (ns) per class */
    double *lat[2];
    unsigned nlat[2];
    unsigned bad;
    /* one send */
    unsigned cls;
    uint8_t payload[PAYLOAD];
};

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "wisp-prio-bench: %s\n", what);
    exit(2);
}

/* The driver (core context). */
/* The virtual time now: the step's start plus the CPU spent since. */
static double vnow(const struct bench *b)
{
    return b->v_base + (cpu_s() - b->c_base) * 1e9;
}

static wisp_err_t drv_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct bench *b = dev->ctx;
    uint16_t len;
    double t, sent;
    unsigned cls;
    if (b->busy) {
        return WISP_ERR_WOULDBLOCK;
    }
    len = wisp_pbuf_copy_out(frame, b->txbuf, sizeof(b->txbuf), 0); /* the copy into the driver's buffer */
    t = vnow(b);
    b->busy_until = t + (double)(len + WIRE_EXTRA) * b->ns_per_byte;
    b->busy = 1;
    if (len != FRAME || b->txbuf[12] != 0x08 || b->txbuf[23] != 17) {
        b->bad++; /* not one of ours (none expected: static ARP) */
        return WISP_OK;
    }
    memcpy(&sent, b->txbuf + 42, sizeof(sent));
    cls = b->txbuf[50] & 1u;
    if (b->nlat[cls] < MAXN) {
        b->lat[cls][b->nlat[cls]++] = t - sent;
    }
    return WISP_OK;
}

static const struct wisp_dev_ops drv_ops = { drv_transmit, NULL, NULL };

/* The send (core context: under the lock or on the stack thread). */
static wisp_err_t send_fn(struct wisp_stack *s, void *arg)
{
    struct bench *b = arg;
    struct wisp_pbuf *p = wisp_pbuf_alloc(s, WISP_LAYER_TRANSPORT, PAYLOAD, WISP_PBUF_POOL);
    wisp_err_t err;
    if (p == NULL) {
        return WISP_ERR_MEM;
    }
    err = wisp_pbuf_copy_in(p, b->payload, PAYLOAD, 0); /* the copy into stack buffers */
    if (err == WISP_OK) {
        err = wisp_udp_sendto(b->pcb[b->cls], p, &b->dst, 9);
    }
    wisp_pbuf_free(p);
    return err;
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, c = *(const double *)y;
    return a < c ? -1 : a > c;
}

static void stats(double *v, unsigned n, double *mean, double *p50, double *p99)
{
    double sum = 0;
    unsigned i;
    if (n == 0) {
        *mean = *p50 = *p99 = -1;
        return;
    }
    qsort(v, n, sizeof(*v), cmp_d);
    for (i = 0; i < n; i++) {
        sum += v[i];
    }
    *mean = sum / n / 1000.0;
    *p50 = v[n / 2] / 1000.0;
    *p99 = v[(unsigned)((double)(n - 1) * 0.99)] / 1000.0;
}

/* xorshift64*: the application's random intervals and classes. */
static uint64_t rng_next(uint64_t *st)
{
    uint64_t x = *st;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *st = x;
    return x * 0x2545f4914f6cdd1dull;
}

static double rng_unit(uint64_t *st)
{
    return ((double)(rng_next(st) >> 11) + 0.5) / 9007199254740992.0;
}

int main(int argc, char **argv)
{
    static struct bench B;
    struct bench *b = &B;
    struct wisp_config cfg;
    static const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 1 }, peer_mac[6] = { 0x02, 0, 0, 0, 0, 2 };
    unsigned n = 1000, loads[16], nloads = 0, li, i;
    double mbit = 100.0;
    int msg = 0, noprio = 0;
    uint64_t seed = 1;
    char lbuf[128] = "10,30,50,70,90", *tok;

    for (i = 1; i < (unsigned)argc; i++) {
        if (strcmp(argv[i], "--n") == 0 && i + 1 < (unsigned)argc) {
            n = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--loads") == 0 && i + 1 < (unsigned)argc) {
            snprintf(lbuf, sizeof(lbuf), "%s", argv[++i]);
        } else if (strcmp(argv[i], "--mbit") == 0 && i + 1 < (unsigned)argc) {
            mbit = strtod(argv[++i], NULL);
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < (unsigned)argc) {
            seed = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--msg") == 0) {
            msg = 1;
        } else if (strcmp(argv[i], "--noprio") == 0) {
            noprio = 1;
        } else {
            fprintf(stderr, "usage: wisp-prio-bench [--n N] [--loads 10,30,..] [--mbit R] [--msg] [--noprio] "
                            "[--seed S]\n");
            return 2;
        }
    }
    if (n < 10 || n > MAXN || !(mbit >= 1.0 && mbit <= 100000.0)) {
        die("bad --n (10..100000) or --mbit (1..100000)");
    }
    for (tok = strtok(lbuf, ","); tok != NULL && nloads < 16; tok = strtok(NULL, ",")) {
        unsigned long l = strtoul(tok, NULL, 10);
        if (l < 1 || l > 99) {
            die("loads are percentages 1..99");
        }
        loads[nloads++] = (unsigned)l;
    }
    if (seed == 0) {
        seed = 1;
    }
    b->ns_per_byte = 8000.0 / mbit;
    b->lat[0] = malloc(MAXN * sizeof(double));
    b->lat[1] = malloc(MAXN * sizeof(double));
    if (b->lat[0] == NULL || b->lat[1] == NULL || wisp_sys_init() != WISP_OK) {
        die("init");
    }

    memset(&cfg, 0, sizeof(cfg));
    cfg.now_ms = wisp_unix_now_ms;
    cfg.seed = wisp_unix_seed();
    b->s = malloc(sizeof(*b->s));
    if (b->s == NULL || wisp_stack_init(b->s, &cfg) != WISP_OK) {
        die("stack init");
    }
    b->dev.ops = &drv_ops;
    b->dev.ctx = b;
    if (wisp_netif_add_eth(b->s, &b->nif, "wire", &b->dev, mac, 1500) != WISP_OK) {
        die("netif");
    }
    wisp_netif_set_ip4(&b->nif, wisp_ip4(198, 18, 0, 1), wisp_ip4_prefix_mask(24), 0);
    wisp_netif_set_up(&b->nif, true);
    wisp_netif_set_link(&b->nif, true);
    (void)wisp_arp_add_static(&b->nif, wisp_ip4(198, 18, 0, 2), peer_mac);
    b->dst = wisp_ipaddr4(wisp_ip4(198, 18, 0, 2));
    for (i = 0; i < 2; i++) {
        b->pcb[i] = wisp_udp_new(b->s);
        if (b->pcb[i] == NULL || wisp_udp_bind(b->pcb[i], NULL, (uint16_t)(5000 + i)) != WISP_OK) {
            die("udp");
        }
        wisp_udp_set_tos(b->pcb[i], (i == 1 && !noprio) ? (uint8_t)TOS_EF : 0u);
    }
    for (i = 0; i < PAYLOAD; i++) {
        b->payload[i] = (uint8_t)(i * 7u + 3u);
    }
    if (wisp_tcpip_start(&b->ctx, b->s, NULL) != WISP_OK) {
        die("tcpip start");
    }
    /* the gratuitous ARP of link-up went through the driver: forget it */
    wisp_tcpip_lock(&b->ctx);
    b->busy = 0;
    b->bad = 0;
    wisp_tcpip_unlock(&b->ctx);

    for (li = 0; li < nloads; li++) {
        double frame_ns = (double)(FRAME + WIRE_EXTRA) * b->ns_per_byte;
        double mean_gap = frame_ns * 100.0 / loads[li];
        uint64_t rs = seed * 0x9e3779b97f4a7c15ull + li + 1;
        double v, next;
        unsigned sent = 0, fails = 0;
        const struct wisp_netif_stats *ns;
        uint32_t drops0;
        double c0, mu, m50, m99, cu, cm, c50, c99;
        b->nlat[0] = b->nlat[1] = 0;
        wisp_tcpip_lock(&b->ctx);
        ns = wisp_netif_get_stats(&b->nif);
        drops0 = ns->tx_drops;
        wisp_tcpip_unlock(&b->ctx);
        c0 = cpu_s();
        v = 0.0;
        next = mean_gap * -log(rng_unit(&rs));
        for (;;) {
            /* the next event in virtual time: the transmitter becoming free
             * or the application's next send */
            if (b->busy && (sent >= n || b->busy_until <= next)) {
                if (b->busy_until > v) {
                    v = b->busy_until;
                }
                b->v_base = v;
                b->c_base = cpu_s();
                b->busy = 0;
                wisp_tcpip_tx_ready(&b->ctx, &b->dev); /* the transmitter is free: queues drained, emergency first */
                v = vnow(b);
                continue;
            }
            if (sent < n) {
                wisp_err_t err;
                if (next > v) {
                    v = next; /* idle until then */
                }
                b->cls = rng_unit(&rs) < 0.1 ? 1u : 0u;
                memcpy(b->payload, &v, sizeof(v)); /* the send call's time */
                b->payload[8] = (uint8_t)b->cls;
                b->v_base = v;
                b->c_base = cpu_s();
                if (msg) {
                    err = wisp_tcpip_call(&b->ctx, send_fn, b);
                } else {
                    wisp_tcpip_lock(&b->ctx);
                    err = send_fn(b->s, b);
                    wisp_tcpip_unlock(&b->ctx);
                }
                v = vnow(b);
                if (err != WISP_OK) {
                    fails++;
                }
                sent++;
                next += -log(rng_unit(&rs)) * mean_gap;
                continue;
            }
            break; /* all sent, transmitter free */
        }
        {
            unsigned q;
            wisp_tcpip_lock(&b->ctx);
            q = wisp_netif_txq_len(&b->nif, WISP_PRIO_EMERG) + wisp_netif_txq_len(&b->nif, WISP_PRIO_COMMON);
            wisp_tcpip_unlock(&b->ctx);
            if (q != 0) {
                fprintf(stderr, "wisp-prio-bench: %u frames left in the queues\n", q);
                fails += q;
            }
        }
        cu = cpu_s() - c0;
        wisp_tcpip_lock(&b->ctx);
        ns = wisp_netif_get_stats(&b->nif);
        drops0 = ns->tx_drops - drops0;
        wisp_tcpip_unlock(&b->ctx);
        stats(b->lat[1], b->nlat[1], &mu, &m50, &m99);
        stats(b->lat[0], b->nlat[0], &cm, &c50, &c99);
        printf("load=%u sent=%u send_errors=%u urg_n=%u urg_mean_us=%.1f urg_p50_us=%.1f urg_p99_us=%.1f com_n=%u "
               "com_mean_us=%.1f com_p50_us=%.1f com_p99_us=%.1f drops=%u bad=%u cpu_s=%.3f\n",
               loads[li], sent, fails, b->nlat[1], mu, m50, m99, b->nlat[0], cm, c50, c99, (unsigned)drops0, b->bad,
               cu);
        fflush(stdout);
    }
    wisp_tcpip_stop(&b->ctx);
    for (i = 0; i < 2; i++) {
        wisp_udp_remove(b->pcb[i]);
    }
    wisp_netif_remove(&b->nif);
    wisp_stack_deinit(b->s);
    if (wisp_stack_pools_in_use(b->s) != 0) {
        fprintf(stderr, "wisp-prio-bench: pool leak\n");
        return 1;
    }
    free(b->s);
    free(b->lat[0]);
    free(b->lat[1]);
    return 0;
}
