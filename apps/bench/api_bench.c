/**
 * @file api_bench.c
 * wisp-api-bench: the "socket tax" -- BSD sockets (wisp/sockets.h) against
 * the netconn API they are built on (wisp/netconn.h), on the same stacks,
 * in real time.
 *
 * Set-up: two wisp stacks in one process (10.0.0.1 "A" and 10.0.0.2 "B"),
 * each with its own stack thread and netconn layer, joined by an in-process
 * wire: a ring of frame slots per direction and a delivery thread that takes
 * the receiving stack's core lock and hands it the frames (a bandwidth of
 * as much as the CPU gives: the measurement is CPU-bound, which is where a
 * socket layer's overhead shows). A transmitter that finds the ring full
 * gets WISP_ERR_WOULDBLOCK and a tx_ready when room is back.
 *
 * Measurements, for each write size (128, 512, 1024, 1460 bytes):
 *  - goodput: A writes N bytes over one TCP connection (netconn_write with
 *    NETCONN_COPY, or send()), B reads them (netconn_recv + netbuf_delete,
 *    zero-copy; or recv() into a 16 KB buffer: the one copy a socket
 *    cannot avoid); time from the first write to the last byte read. The
 *    two APIs run interleaved (netconn, socket, socket, netconn, ...) and
 *    the median of each is printed with the ratio socket / netconn;
 *  - CPU: process CPU time per MB over the same runs (all threads: stack
 *    threads, wire, application), median, and its ratio netconn / socket
 *    (>= 1: sockets cost no more CPU per byte than netconn);
 *  - connect / accept: mean time of a blocking connect, and from the
 *    connect call until the server's accept returned, over many
 *    connections.
 *
 * Usage: wisp-api-bench [-q] [--bytes N] [--reps N] [--conns N]
 *                       [--check RATIO] [--one-cpu] [--size S] [--api A]
 *   -q           quick mode (8 MB per run, 5 pairs of runs, 50 connections)
 *   --check R    exit 1 unless, for every write size, the median of the
 *                per-pair goodput ratios socket/netconn is >= R (a size
 *                below R is measured again, up to four times in all, and
 *                then judged by the median of all its pairs: the machine may
 *                be shared), and every pool is back at zero use at the end.
 *                Implies --one-cpu.
 *   --one-cpu    run every thread on one CPU (Linux): scheduling noise of a
 *                shared machine mostly cancels out of the ratios
 *   --size S, --api A   one write size / one API only (for profilers, e.g.
 *                valgrind --tool=callgrind, whose instruction counts are
 *                reproducible where timings are not)
 * Diagnostics (environment): BENCH_DEBUG=1 prints every run (and TCP state
 * of the netconn sender), BENCH_MIX=s,n / n,s sends with one API and
 * receives with the other.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity, sched_getcpu */
#endif
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sched.h>
#endif

#include "wisp/wisp.h"
#include "wisp/tcpip.h"
#include "wisp/netconn.h"
#include "wisp/sockets.h"
#include "unix_port.h"

#define WIRE_RING 256
#define FRAME_MAX 1518
#define MTU 1500
#define PORT_BASE 6000
#define RX_BUF 16384

/* ------------------------------------------------------------ the wire */

struct node;

struct wire_slot {
    uint16_t len;
    uint8_t data[FRAME_MAX];
};

/** One direction of the wire. */
struct wire_dir {
    wisp_sys_mutex_t mtx;
    wisp_sys_sem_t sem;           /**< frames available / stop */
    unsigned head, count;         /**< under mtx */
    bool blocked;                 /**< the transmitter was told WOULDBLOCK */
    bool stop;
    struct node *from, *to;
    uint64_t frames, drops;       /**< delivery thread only */
    wisp_sys_thread_t th;
    struct wire_slot slot[WIRE_RING];
};

struct node {
    struct wisp_stack *s;
    struct wisp_netif nif;
    struct wisp_dev dev;
    struct wisp_tcpip ctx;
    struct wisp_netconn_api api;
    struct wire_dir *out;
    uint8_t mac[6];
    wisp_ip4_t ip;
};

/* Core context of the sending node: copy the frame into a free slot. */
static wisp_err_t wire_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct node *n = (struct node *)dev->ctx;
    struct wire_dir *w = n->out;
    unsigned idx;
    bool was_empty;
    if (frame->tot_len > FRAME_MAX) {
        return WISP_ERR_VAL;
    }
    wisp_sys_mutex_lock(&w->mtx);
    if (w->count == WIRE_RING) {
        w->blocked = true;
        wisp_sys_mutex_unlock(&w->mtx);
        return WISP_ERR_WOULDBLOCK;
    }
    idx = (w->head + w->count) % WIRE_RING;
    wisp_sys_mutex_unlock(&w->mtx);
    /* the slot is ours until count covers it (one producer: the core) */
    w->slot[idx].len = wisp_pbuf_copy_out(frame, w->slot[idx].data, frame->tot_len, 0);
    wisp_sys_mutex_lock(&w->mtx);
    was_empty = w->count == 0;
    w->count++;
    wisp_sys_mutex_unlock(&w->mtx);
    if (was_empty) {
        wisp_sys_sem_signal(&w->sem);
    }
    return WISP_OK;
}

static const struct wisp_dev_ops wire_ops = { wire_transmit, NULL, NULL };

/* Delivery thread: hand every queued frame to the receiving stack, a batch
 * per core-lock entry. */
static void wire_thread(void *arg)
{
    struct wire_dir *w = (struct wire_dir *)arg;
    for (;;) {
        unsigned n, h, i;
        bool wake;
        wisp_sys_mutex_lock(&w->mtx);
        while (w->count == 0 && !w->stop) {
            wisp_sys_mutex_unlock(&w->mtx);
            (void)wisp_sys_sem_wait(&w->sem, WISP_SYS_FOREVER);
            wisp_sys_mutex_lock(&w->mtx);
        }
        if (w->stop) {
            wisp_sys_mutex_unlock(&w->mtx);
            return;
        }
        n = w->count;
        h = w->head;
        wisp_sys_mutex_unlock(&w->mtx);
        wisp_tcpip_lock(&w->to->ctx);
        for (i = 0; i < n; i++) {
            struct wire_slot *sl = &w->slot[(h + i) % WIRE_RING];
            struct wisp_pbuf *p = wisp_pbuf_alloc_rx(w->to->s, sl->len);
            if (p == NULL) {
                w->drops++;
                continue;
            }
            (void)wisp_pbuf_copy_in(p, sl->data, sl->len, 0);
            wisp_dev_input(&w->to->dev, p);
            w->frames++;
        }
        wisp_tcpip_unlock(&w->to->ctx);
        wisp_sys_mutex_lock(&w->mtx);
        w->head = (w->head + n) % WIRE_RING;
        w->count -= n;
        wake = w->blocked;
        w->blocked = false;
        wisp_sys_mutex_unlock(&w->mtx);
        if (wake) {
            wisp_tcpip_tx_ready(&w->from->ctx, &w->from->dev);
        }
    }
}

static void die(const char *what)
{
    fprintf(stderr, "wisp-api-bench: %s\n", what);
    exit(2);
}

static void node_init(struct node *n, uint8_t id)
{
    struct wisp_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.now_ms = wisp_unix_now_ms;
    cfg.seed = wisp_unix_seed();
    n->s = malloc(sizeof(*n->s));
    if (n->s == NULL || wisp_stack_init(n->s, &cfg) != WISP_OK) {
        die("stack init");
    }
    n->mac[0] = 0x02;
    n->mac[5] = id;
    n->ip = wisp_ip4(10, 0, 0, id);
    n->dev.ops = &wire_ops;
    n->dev.ctx = n;
    if (wisp_netif_add_eth(n->s, &n->nif, "wire", &n->dev, n->mac, MTU) != WISP_OK) {
        die("netif");
    }
    wisp_netif_set_ip4(&n->nif, n->ip, wisp_ip4_prefix_mask(24), 0);
    wisp_netif_set_up(&n->nif, true);
    wisp_netif_set_link(&n->nif, true);
}

static struct wire_dir *wire_new(struct node *from, struct node *to)
{
    struct wire_dir *w = calloc(1, sizeof(*w));
    if (w == NULL || wisp_sys_mutex_new(&w->mtx) != WISP_OK || wisp_sys_sem_new(&w->sem, 0) != WISP_OK) {
        die("wire");
    }
    w->from = from;
    w->to = to;
    from->out = w;
    return w;
}

static void wire_stop(struct wire_dir *w)
{
    wisp_sys_mutex_lock(&w->mtx);
    w->stop = true;
    wisp_sys_mutex_unlock(&w->mtx);
    wisp_sys_sem_signal(&w->sem);
    wisp_sys_thread_join(&w->th);
    wisp_sys_sem_free(&w->sem);
    wisp_sys_mutex_free(&w->mtx);
}

/* ------------------------------------------------------------ clocks */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ transfers */

enum api { API_NETCONN = 0, API_SOCKET = 1 };
static const char *const api_name[] = { "netconn", "socket" };

struct bench {
    struct node a, b;
    struct wire_dir *ab, *ba;
    struct wisp_sockets socks;
    uint64_t bytes;
    unsigned reps, conns;
    uint16_t next_port;
};

/* A listener on stack B, port, with the given API (*lconn or *lfd). */
static bool listen_on(struct bench *bn, enum api api, uint16_t port, uint8_t backlog, struct wisp_netconn **lconn,
                      int *lfd)
{
    struct wisp_sockaddr_in sa;
    if (api == API_NETCONN) {
        *lconn = wisp_netconn_new(&bn->b.api, WISP_NETCONN_TCP);
        return *lconn != NULL && wisp_netconn_bind(*lconn, NULL, port) == WISP_OK &&
               wisp_netconn_listen_with_backlog(*lconn, backlog) == WISP_OK;
    }
    memset(&sa, 0, sizeof sa);
    sa.sin_family = WISP_AF_INET;
    sa.sin_port = wisp_htons(port);
    *lfd = wisp_socket_on(&bn->b.api, WISP_AF_INET, WISP_SOCK_STREAM, 0);
    return *lfd >= 0 && wisp_bind(*lfd, (struct wisp_sockaddr *)&sa, sizeof sa) == 0 && wisp_listen(*lfd, backlog) == 0;
}

/* Receiver side of one transfer (a thread on stack B). */
struct rx_job {
    struct bench *bn;
    enum api api;
    uint16_t port;
    struct wisp_netconn *lconn;   /* netconn listener */
    int lfd;                      /* socket listener */
    wisp_sys_sem_t ready;         /* listening */
    uint64_t got;
    double t_end;
    bool ok;
    uint8_t buf[RX_BUF];          /* socket receiver's buffer */
};

static void rx_thread(void *arg)
{
    struct rx_job *j = (struct rx_job *)arg;
    j->ok = false;
    if (j->api == API_NETCONN) {
        struct wisp_netconn *c = NULL;
        struct wisp_netbuf *nb;
        if (wisp_netconn_accept(j->lconn, &c) != WISP_OK) {
            return;
        }
        while (wisp_netconn_recv(c, &nb) == WISP_OK) {
            j->got += wisp_netbuf_len(nb);
            wisp_netbuf_delete(nb);
        }
        j->t_end = now_s();
        (void)wisp_netconn_delete(c);
    } else {
        int fd = wisp_accept(j->lfd, NULL, NULL);
        wisp_ssize_t r;
        if (fd < 0) {
            return;
        }
        while ((r = wisp_recv(fd, j->buf, sizeof j->buf, 0)) > 0) {
            j->got += (uint64_t)r;
        }
        j->t_end = now_s();
        (void)wisp_close(fd);
    }
    j->ok = true;
}

struct result {
    double mbps;      /* goodput, MB/s (10^6) */
    double cpu_per_mb; /* process CPU seconds per MB */
};

/* One transfer of bn->bytes in writes of wsize with the given API. */
static bool transfer(struct bench *bn, enum api api, uint32_t wsize, struct result *res)
{
    static uint8_t data[1460];
    static struct rx_job j;
    wisp_sys_thread_t th;
    wisp_ipaddr_t dst = wisp_ipaddr4(bn->b.ip);
    uint64_t sent = 0;
    double t0, c0, c1;
    struct wisp_netconn *cc = NULL;
    int cfd = -1;
    unsigned i;
    /* the sending and the receiving side's API (the same, unless the
     * environment variable BENCH_MIX=tx,rx (n or s) mixes them: to see
     * which side a difference comes from) */
    enum api txa = api, rxa = api;
    const char *mix = getenv("BENCH_MIX");
    if (mix != NULL && strlen(mix) == 3) {
        txa = mix[0] == 's' ? API_SOCKET : API_NETCONN;
        rxa = mix[2] == 's' ? API_SOCKET : API_NETCONN;
    }

    for (i = 0; i < sizeof data; i++) {
        data[i] = (uint8_t)i;
    }
    memset(&j, 0, sizeof j);
    j.bn = bn;
    j.api = rxa;
    j.port = bn->next_port++;
    if (bn->next_port > PORT_BASE + 2000) {
        bn->next_port = PORT_BASE;
    }
    j.lfd = -1;
    /* listener on B, client on A */
    if (!listen_on(bn, rxa, j.port, 1, &j.lconn, &j.lfd)) {
        return false;
    }
    if (txa == API_NETCONN) {
        cc = wisp_netconn_new(&bn->a.api, WISP_NETCONN_TCP);
        if (cc == NULL) {
            return false;
        }
    } else {
        cfd = wisp_socket_on(&bn->a.api, WISP_AF_INET, WISP_SOCK_STREAM, 0);
        if (cfd < 0) {
            return false;
        }
    }
    if (wisp_sys_thread_new(&th, "bench-rx", rx_thread, &j, 0, 0) != WISP_OK) {
        return false;
    }
    if (txa == API_NETCONN) {
        if (wisp_netconn_connect(cc, &dst, j.port) != WISP_OK) {
            return false;
        }
    } else {
        struct wisp_sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = WISP_AF_INET;
        sa.sin_port = wisp_htons(j.port);
        sa.sin_addr.s_addr = bn->b.ip;
        if (wisp_connect(cfd, (struct wisp_sockaddr *)&sa, sizeof sa) != 0) {
            return false;
        }
    }
    t0 = now_s();
    c0 = cpu_s();
    while (sent < bn->bytes) {
        uint32_t n = (uint32_t)WISP_MIN((uint64_t)wsize, bn->bytes - sent);
        if (txa == API_NETCONN) {
            if (wisp_netconn_write(cc, data, n, WISP_NETCONN_COPY) != WISP_OK) {
                break;
            }
        } else {
            if (wisp_send(cfd, data, n, 0) != (wisp_ssize_t)n) {
                break;
            }
        }
        sent += n;
    }
    if (txa == API_NETCONN) {
        if (getenv("BENCH_DEBUG") != NULL) {
            struct wisp_tcp_info info;
            wisp_tcpip_lock(&bn->a.ctx);
            if (cc->pcb.tcp != NULL) {
                wisp_tcp_get_info(cc->pcb.tcp, &info);
                fprintf(stderr, "cwnd %u ssthresh %u srtt %u rto %u snd_wnd %u unacked %u rtx %u to %u mss %u\n",
                        (unsigned)info.cwnd, (unsigned)info.ssthresh, (unsigned)info.srtt_ms, (unsigned)info.rto_ms,
                        (unsigned)info.snd_wnd, (unsigned)info.unacked, (unsigned)info.retransmits,
                        (unsigned)info.timeouts, (unsigned)info.mss);
            }
            wisp_tcpip_unlock(&bn->a.ctx);
        }
        (void)wisp_netconn_close(cc);
        (void)wisp_netconn_delete(cc);
    } else {
        (void)wisp_close(cfd);
    }
    wisp_sys_thread_join(&th);
    c1 = cpu_s();
    if (rxa == API_NETCONN) {
        (void)wisp_netconn_delete(j.lconn);
    } else {
        (void)wisp_close(j.lfd);
    }
    if (!j.ok || j.got != bn->bytes || sent != bn->bytes) {
        fprintf(stderr, "wisp-api-bench: %s transfer incomplete: sent %llu, received %llu\n", api_name[api],
                (unsigned long long)sent, (unsigned long long)j.got);
        return false;
    }
    res->mbps = (double)bn->bytes / 1e6 / (j.t_end - t0);
    res->cpu_per_mb = (c1 - c0) / ((double)bn->bytes / 1e6);
    return true;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
    qsort(v, n, sizeof v[0], cmp_double);
    return (n % 2) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

#define POOL_MAX 256u
struct row {
    double mbps[2], cpu[2];  /* medians per API */
    double ratio;            /* median over the pairs of socket / netconn goodput */
    double cpu_ratio;        /* median over the pairs of netconn / socket CPU per MB */
    double pool[POOL_MAX];   /* --check: every pair's goodput ratio of every attempt */
    unsigned npool;
};

/* reps interleaved pairs of runs for one write size (only: -1 = both APIs,
 * else just that one). The ratios are taken per pair -- two runs next to
 * each other in time see the same load on a shared machine -- and their
 * median is reported. */
static bool measure(struct bench *bn, uint32_t wsize, int only, struct row *r)
{
    double g[2][64], c[2][64], gr[64], cr[64];
    unsigned i, k, reps = WISP_MIN(bn->reps, 64u);
    memset(r, 0, offsetof(struct row, pool)); /* the pool goes on */
    for (i = 0; i < reps; i++) {
        for (k = 0; k < 2; k++) {
            /* alternate the order: N S, S N, N S, ... */
            enum api a = (enum api)((i % 2) ? (1 - k) : k);
            struct result res;
            if (only >= 0 && (int)a != only) {
                continue;
            }
            if (!transfer(bn, a, wsize, &res)) {
                return false;
            }
            g[a][i] = res.mbps;
            c[a][i] = res.cpu_per_mb;
            if (getenv("BENCH_DEBUG") != NULL) {
                fprintf(stderr, "  size %u pair %u %s: %.1f MB/s, %.2f ms CPU/MB\n", (unsigned)wsize, i, api_name[a],
                        res.mbps, res.cpu_per_mb * 1e3);
            }
        }
        if (only < 0) {
            gr[i] = g[API_SOCKET][i] / g[API_NETCONN][i];
            cr[i] = c[API_NETCONN][i] / c[API_SOCKET][i];
            if (r->npool < POOL_MAX) {
                r->pool[r->npool++] = gr[i];
            }
        }
    }
    for (k = 0; k < 2; k++) {
        if (only < 0 || (int)k == only) {
            r->mbps[k] = median(g[k], reps);
            r->cpu[k] = median(c[k], reps);
        }
    }
    if (only < 0) {
        r->ratio = median(gr, reps);
        r->cpu_ratio = median(cr, reps);
    }
    return true;
}

/* Connection set-up: mean connect and accept times (microseconds). */
struct acc_job {
    enum api api;
    struct wisp_netconn *lconn;
    int lfd;
    unsigned n;
    double *t_acc;        /* accept return times */
    wisp_sys_sem_t *done; /* one signal per accepted connection */
    bool ok;
};

static void acc_thread(void *arg)
{
    struct acc_job *j = (struct acc_job *)arg;
    unsigned i;
    j->ok = false;
    for (i = 0; i < j->n; i++) {
        if (j->api == API_NETCONN) {
            struct wisp_netconn *c = NULL;
            if (wisp_netconn_accept(j->lconn, &c) != WISP_OK) {
                return;
            }
            j->t_acc[i] = now_s();
            (void)wisp_netconn_close(c);
            (void)wisp_netconn_delete(c);
        } else {
            int fd = wisp_accept(j->lfd, NULL, NULL);
            if (fd < 0) {
                return;
            }
            j->t_acc[i] = now_s();
            (void)wisp_close(fd);
        }
        wisp_sys_sem_signal(j->done);
    }
    j->ok = true;
}

static bool conn_times(struct bench *bn, enum api api, double *conn_us, double *acc_us)
{
    struct acc_job j;
    wisp_sys_thread_t th;
    wisp_sys_sem_t done;
    wisp_ipaddr_t dst = wisp_ipaddr4(bn->b.ip);
    uint16_t port = bn->next_port++;
    double *t0 = calloc(bn->conns, sizeof(double)), *t1 = calloc(bn->conns, sizeof(double));
    double sc = 0, sa = 0;
    unsigned i;
    bool ok = true;

    if (t0 == NULL || t1 == NULL || wisp_sys_sem_new(&done, 0) != WISP_OK) {
        die("memory");
    }
    memset(&j, 0, sizeof j);
    j.api = api;
    j.n = bn->conns;
    j.t_acc = calloc(bn->conns, sizeof(double));
    j.done = &done;
    j.lfd = -1;
    if (!listen_on(bn, api, port, 4, &j.lconn, &j.lfd)) {
        return false;
    }
    if (wisp_sys_thread_new(&th, "bench-acc", acc_thread, &j, 0, 0) != WISP_OK) {
        return false;
    }
    for (i = 0; i < bn->conns && ok; i++) {
        if (api == API_NETCONN) {
            struct wisp_netconn *c = wisp_netconn_new(&bn->a.api, WISP_NETCONN_TCP);
            t0[i] = now_s();
            ok = c != NULL && wisp_netconn_connect(c, &dst, port) == WISP_OK;
            t1[i] = now_s();
            (void)wisp_sys_sem_wait(&done, ok ? WISP_SYS_FOREVER : 0);
            if (c != NULL) {
                (void)wisp_netconn_close(c);
                (void)wisp_netconn_delete(c);
            }
        } else {
            struct wisp_sockaddr_in sa_;
            int fd = wisp_socket_on(&bn->a.api, WISP_AF_INET, WISP_SOCK_STREAM, 0);
            memset(&sa_, 0, sizeof sa_);
            sa_.sin_family = WISP_AF_INET;
            sa_.sin_port = wisp_htons(port);
            sa_.sin_addr.s_addr = bn->b.ip;
            t0[i] = now_s();
            ok = fd >= 0 && wisp_connect(fd, (struct wisp_sockaddr *)&sa_, sizeof sa_) == 0;
            t1[i] = now_s();
            (void)wisp_sys_sem_wait(&done, ok ? WISP_SYS_FOREVER : 0);
            if (fd >= 0) {
                (void)wisp_close(fd);
            }
        }
    }
    wisp_sys_thread_join(&th);
    ok = ok && j.ok;
    for (i = 0; ok && i < bn->conns; i++) {
        sc += t1[i] - t0[i];
        sa += j.t_acc[i] - t0[i];
    }
    *conn_us = sc / bn->conns * 1e6;
    *acc_us = sa / bn->conns * 1e6;
    if (api == API_NETCONN) {
        (void)wisp_netconn_delete(j.lconn);
    } else {
        (void)wisp_close(j.lfd);
    }
    wisp_sys_sem_free(&done);
    free(t0);
    free(t1);
    free(j.t_acc);
    return ok;
}

/* -------------------------------------------------------------- main */

static void usage(void)
{
    fprintf(stderr, "usage: wisp-api-bench [-q] [--bytes N] [--reps N] [--conns N] [--check RATIO] [--one-cpu]\n"
                    "                      [--size 128|512|1024|1460] [--api netconn|socket]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    static const uint32_t sizes[] = { 128, 512, 1024, 1460 };
    struct bench *bn = calloc(1, sizeof(*bn));
    struct row rows[4];
    double check = 0.0, cu[2], au[2];
    bool quick = false, pass = true;
    unsigned only_size = 0;
    int only_api = -1;
    bool pin = false;
    unsigned i, attempts[4];
    int k;

    if (bn == NULL) {
        die("memory");
    }
    bn->bytes = 20u * 1000u * 1000u;
    bn->reps = 7;
    bn->conns = 200;
    for (k = 1; k < argc; k++) {
        if (strcmp(argv[k], "-q") == 0) {
            quick = true;
        } else if (strcmp(argv[k], "--bytes") == 0 && k + 1 < argc) {
            bn->bytes = strtoull(argv[++k], NULL, 10);
        } else if (strcmp(argv[k], "--reps") == 0 && k + 1 < argc) {
            bn->reps = (unsigned)strtoul(argv[++k], NULL, 10);
        } else if (strcmp(argv[k], "--conns") == 0 && k + 1 < argc) {
            bn->conns = (unsigned)strtoul(argv[++k], NULL, 10);
        } else if (strcmp(argv[k], "--check") == 0 && k + 1 < argc) {
            check = strtod(argv[++k], NULL);
        } else if (strcmp(argv[k], "--one-cpu") == 0) {
            pin = true;
        } else if (strcmp(argv[k], "--size") == 0 && k + 1 < argc) {
            only_size = (unsigned)strtoul(argv[++k], NULL, 10);
        } else if (strcmp(argv[k], "--api") == 0 && k + 1 < argc) {
            k++;
            only_api = strcmp(argv[k], "netconn") == 0 ? API_NETCONN : (strcmp(argv[k], "socket") == 0 ? API_SOCKET : -2);
            if (only_api == -2) {
                usage();
            }
        } else {
            usage();
        }
    }
    if (quick) {
        bn->bytes = 8u * 1000u * 1000u; /* a few tens of ms per run at the goodput of today */
        bn->reps = 5;
        bn->conns = 50;
    }
    if (bn->reps < 1 || bn->conns < 1 || bn->bytes < 1) {
        usage();
    }
    bn->next_port = PORT_BASE;
    if (check > 0.0) {
        pin = true;
    }
#ifdef __linux__
    if (pin) {
        /* Every thread of the process on the CPU we run on now: the
         * scheduling of the stack, wire and application threads is then
         * the same for both APIs (like a single-core device), which takes
         * most of the noise of a shared machine out of the ratios. */
        cpu_set_t set;
        int cpu = sched_getcpu();
        CPU_ZERO(&set);
        CPU_SET(cpu < 0 ? 0 : cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) {
            fprintf(stderr, "wisp-api-bench: could not pin to one CPU (running unpinned)\n");
            pin = false;
        }
    }
#endif

    if (wisp_sys_init() != WISP_OK) {
        die("sys");
    }
    bn->ab = wire_new(&bn->a, &bn->b); /* first: link-up already transmits */
    bn->ba = wire_new(&bn->b, &bn->a);
    node_init(&bn->a, 1);
    node_init(&bn->b, 2);
    (void)wisp_arp_add_static(&bn->a.nif, bn->b.ip, bn->b.mac);
    (void)wisp_arp_add_static(&bn->b.nif, bn->a.ip, bn->a.mac);
    if (wisp_tcpip_start(&bn->a.ctx, bn->a.s, NULL) != WISP_OK || wisp_tcpip_start(&bn->b.ctx, bn->b.s, NULL) != WISP_OK ||
        wisp_netconn_api_init(&bn->a.api, &bn->a.ctx) != WISP_OK ||
        wisp_netconn_api_init(&bn->b.api, &bn->b.ctx) != WISP_OK ||
        wisp_sockets_init(&bn->socks, &bn->a.api) != WISP_OK) {
        die("start");
    }
    if (wisp_sys_thread_new(&bn->ab->th, "wire-ab", wire_thread, bn->ab, 0, 0) != WISP_OK ||
        wisp_sys_thread_new(&bn->ba->th, "wire-ba", wire_thread, bn->ba, 0, 0) != WISP_OK) {
        die("wire threads");
    }

    printf("wisp-api-bench: %llu bytes per run, %u interleaved pairs of runs per size (medians; ratios per "
           "pair), %u connections%s\n\n",
           (unsigned long long)bn->bytes, bn->reps, bn->conns, pin ? ", all threads on one CPU" : "");
    printf("| write size | netconn MB/s | socket MB/s | goodput ratio socket/netconn | netconn CPU ms/MB | socket CPU ms/MB | "
           "CPU ratio netconn/socket |\n");
    printf("|---:|---:|---:|---:|---:|---:|---:|\n");
    fflush(stdout);
    for (i = 0; i < 4; i++) {
        if (only_size != 0 && sizes[i] != only_size) {
            continue;
        }
        attempts[i] = 0;
        rows[i].npool = 0;
        do {
            attempts[i]++;
            if (!measure(bn, sizes[i], only_api, &rows[i])) {
                die("transfer failed");
            }
            if (attempts[i] > 1) {
                /* the check's ratio: the median of every pair so far */
                rows[i].ratio = median(rows[i].pool, rows[i].npool);
            }
        } while (check > 0.0 && only_api < 0 && rows[i].ratio < check && attempts[i] < 4);
        printf("| %u | %.1f | %.1f | %.3f | %.2f | %.2f | %.3f |", (unsigned)sizes[i], rows[i].mbps[0],
               rows[i].mbps[1], rows[i].ratio, rows[i].cpu[0] * 1e3, rows[i].cpu[1] * 1e3, rows[i].cpu_ratio);
        if (attempts[i] > 1) {
            printf(" (measured %u times: shared machine; ratio = median of all %u pairs)", attempts[i],
                   rows[i].npool);
        }
        printf("\n");
        fflush(stdout);
        if (check > 0.0 && only_api < 0 && rows[i].ratio < check) {
            pass = false;
        }
    }
    printf("\n| API | connect (mean) | connect to accept (mean) |\n|---|---:|---:|\n");
    for (k = 0; k < 2; k++) {
        if (only_api >= 0 && k != only_api) {
            continue;
        }
        if (!conn_times(bn, (enum api)k, &cu[k], &au[k])) {
            die("connection set-up failed");
        }
        printf("| %s | %.1f us | %.1f us |\n", api_name[k], cu[k], au[k]);
    }
    {
        struct wisp_netconn_stats st;
        wisp_netconn_api_stats(&bn->b.api, &st);
        printf("\nwire: %llu frames A->B, %llu B->A, %llu dropped (receive budget); receiver's netconn layer: "
               "%lu segments refused (receive mailbox full; offered again when the reader makes room)\n",
               (unsigned long long)bn->ab->frames, (unsigned long long)bn->ba->frames,
               (unsigned long long)(bn->ab->drops + bn->ba->drops), (unsigned long)st.tcp_refused);
    }

    /* teardown and leak check */
    if (wisp_sockets_deinit() != 0) {
        fprintf(stderr, "wisp-api-bench: sockets left open\n");
        pass = false;
    }
    {
        double t = now_s();
        for (;;) { /* closing handshakes */
            unsigned used;
            wisp_tcpip_lock(&bn->a.ctx);
            used = wisp_stack_pool_used(bn->a.s, WISP_POOL_TCP_PCB);
            wisp_tcpip_unlock(&bn->a.ctx);
            wisp_tcpip_lock(&bn->b.ctx);
            used += wisp_stack_pool_used(bn->b.s, WISP_POOL_TCP_PCB);
            wisp_tcpip_unlock(&bn->b.ctx);
            if (used == 0 || now_s() - t > 5.0) {
                break;
            }
            wisp_sys_sleep_ms(5);
        }
    }
    if (wisp_netconn_api_deinit(&bn->a.api) != WISP_OK || wisp_netconn_api_deinit(&bn->b.api) != WISP_OK) {
        fprintf(stderr, "wisp-api-bench: netconns left\n");
        pass = false;
    }
    wire_stop(bn->ab);
    wire_stop(bn->ba);
    wisp_tcpip_stop(&bn->a.ctx);
    wisp_tcpip_stop(&bn->b.ctx);
    wisp_stack_deinit(bn->a.s);
    wisp_stack_deinit(bn->b.s);
    if (wisp_stack_pools_in_use(bn->a.s) != 0 || wisp_stack_pools_in_use(bn->b.s) != 0) {
        fprintf(stderr, "wisp-api-bench: pool leak\n");
        pass = false;
    }
    free(bn->a.s);
    free(bn->b.s);
    free(bn->ab);
    free(bn->ba);
    free(bn);
    if (check > 0.0) {
        printf("\ncheck: socket goodput >= %.2f x netconn for every write size: %s\n", check, pass ? "PASS" : "FAIL");
    }
    return pass ? 0 : 1;
}
