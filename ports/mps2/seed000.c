/**
 * @file seed000.c
 * Seed 000 (socket API vs netconn API; /work/shared/SEEDS.md) on the
 * FreeRTOS firmware of mps2-an385, console command "seed".
 *
 * What is measured, for each API, both ends on that API, over the loopback
 * interface (127.0.0.1) of the firmware's own stack -- so the figures hold
 * the API and stack cost of the sender *and* of the receiver on this one
 * CPU, and nothing of the NIC model or of a host peer (the bench needs no
 * network and gives the same figures on slirp, TAP or no netdev):
 *  - client connect: the duration of connect() / netconn_connect, N times;
 *  - server accept: from the client's connect call until the server task's
 *    accept() / netconn_accept returned the connection (the handshake as
 *    the server application sees it), N times;
 *  - goodput: a client task writes SEED_TOTAL bytes in writes of 128, 512,
 *    1024 or 1460 bytes (send() / netconn_write with NETCONN_COPY -- wisp's
 *    NOCOPY waits for the acknowledgement of every write, see netconn.h),
 *    a sink task reads them (recv() into a buffer / netconn_recv + netbuf
 *    deleted: zero copy); time from the first write until the sink counted
 *    the last byte; SEED_REPS runs per size;
 *  - RAM per connection: the static slot of each layer (struct sizes), the
 *    FreeRTOS heap the netconn layer took per slot at init (its kernel
 *    objects), and measured: the stack's pool bytes and FreeRTOS heap taken
 *    per connection with SEED_PAIRS connection pairs open and idle, and the
 *    pool bytes at the peak of an untimed 1460-byte bulk transfer.
 * Times come from the LAN9118's FREE_RUN counter (25 MHz of QEMU virtual
 * time). QEMU is not the MCU: only the ratios netconn/socket and the RAM
 * figures mean something (docs/seed000-firmware.md).
 */
#define WISP_PRIVATE_ACCESS 1 /* ports/ rule; sizeof of the API slots below */
#include <stdio.h>
#include <string.h>

#include "FreeRTOS.h"
#include "task.h"
#include "semphr.h"

#include "fw_rtos.h"
#include "wisp/sockets.h"

#define SEED_N_CONN 20u
#define SEED_TOTAL (1024u * 1024u)
#define SEED_REPS 5u
#define SEED_MSS 1460 /* Ethernet-sized segments on the loopback (MTU 65535) too, as in the seed */
#define SEED_PAIRS 4u
#define SEED_PORT 5100u
#define SEED_WAIT_MS 10000u
#define SEED_TICKS_PER_US 25u /* FREE_RUN: 25 MHz */
#define SEED_NSIZES 4u

static const uint16_t seed_sizes[SEED_NSIZES] = { 128, 512, 1024, 1460 };

/* --------------------------------------------------- the two APIs, alike */

typedef intptr_t bh_t; /* a socket descriptor, or a struct wisp_netconn * */
#define BH_NONE ((bh_t)-1)

struct bapi {
    const char *name;
    bh_t (*listen)(struct wisp_netconn_api *api, uint16_t port);
    bh_t (*accept)(bh_t l);
    bh_t (*connect)(struct wisp_netconn_api *api, uint16_t port);
    int (*write)(bh_t c, const void *buf, size_t n);
    long (*read)(bh_t c, void *buf, size_t n); /* bytes, 0 at the peer's FIN, < 0 error */
    void (*abort)(bh_t c);                     /* close with RST (no TIME-WAIT left behind) */
    void (*unlisten)(bh_t l);
};

static bh_t sk_listen(struct wisp_netconn_api *api, uint16_t port)
{
    struct wisp_sockaddr_in a;
    int one = 1;
    int s = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
    (void)api;
    if (s < 0) {
        return BH_NONE;
    }
    (void)wisp_setsockopt(s, WISP_SOL_SOCKET, WISP_SO_REUSEADDR, &one, sizeof one);
    memset(&a, 0, sizeof a);
    a.sin_family = WISP_AF_INET;
    a.sin_port = wisp_htons(port);
    a.sin_addr.s_addr = 0;
    if (wisp_bind(s, (const struct wisp_sockaddr *)&a, sizeof a) != 0 || wisp_listen(s, 8) != 0) {
        (void)wisp_close(s);
        return BH_NONE;
    }
    return s;
}

static bh_t sk_accept(bh_t l)
{
    int c = wisp_accept((int)l, NULL, NULL);
    return c < 0 ? BH_NONE : c;
}

static bh_t sk_connect(struct wisp_netconn_api *api, uint16_t port)
{
    struct wisp_sockaddr_in a;
    int mss = SEED_MSS;
    int s = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
    (void)api;
    if (s < 0) {
        return BH_NONE;
    }
    memset(&a, 0, sizeof a);
    a.sin_family = WISP_AF_INET;
    a.sin_port = wisp_htons(port);
    a.sin_addr.s_addr = wisp_ip4(127, 0, 0, 1);
    (void)wisp_setsockopt(s, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG, &mss, sizeof mss);
    if (wisp_connect(s, (const struct wisp_sockaddr *)&a, sizeof a) != 0) {
        (void)wisp_close(s);
        return BH_NONE;
    }
    return s;
}

static int sk_write(bh_t c, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n > 0) {
        wisp_ssize_t k = wisp_send((int)c, p, n, 0);
        if (k <= 0) {
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static long sk_read(bh_t c, void *buf, size_t n)
{
    return (long)wisp_recv((int)c, buf, n, 0);
}

static void sk_abort(bh_t c)
{
    struct wisp_linger lg = { 1, 0 };
    (void)wisp_setsockopt((int)c, WISP_SOL_SOCKET, WISP_SO_LINGER, &lg, sizeof lg);
    (void)wisp_close((int)c);
}

static void sk_unlisten(bh_t l)
{
    (void)wisp_close((int)l);
}

static bh_t nc_listen(struct wisp_netconn_api *api, uint16_t port)
{
    struct wisp_netconn *c = wisp_netconn_new(api, WISP_NETCONN_TCP);
    wisp_ipaddr_t any = wisp_ipaddr_any4();
    if (c == NULL) {
        return BH_NONE;
    }
    if (wisp_netconn_bind(c, &any, port) != WISP_OK || wisp_netconn_listen_with_backlog(c, 8) != WISP_OK) {
        (void)wisp_netconn_delete(c);
        return BH_NONE;
    }
    return (bh_t)c;
}

static bh_t nc_accept(bh_t l)
{
    struct wisp_netconn *c = NULL;
    if (wisp_netconn_accept((struct wisp_netconn *)l, &c) != WISP_OK) {
        return BH_NONE;
    }
    return (bh_t)c;
}

static bh_t nc_connect(struct wisp_netconn_api *api, uint16_t port)
{
    struct wisp_netconn *c = wisp_netconn_new(api, WISP_NETCONN_TCP);
    wisp_ipaddr_t lo = wisp_ipaddr4(wisp_ip4(127, 0, 0, 1));
    if (c == NULL) {
        return BH_NONE;
    }
    (void)wisp_netconn_set_maxseg(c, SEED_MSS);
    if (wisp_netconn_connect(c, &lo, port) != WISP_OK) {
        (void)wisp_netconn_delete(c);
        return BH_NONE;
    }
    return (bh_t)c;
}

static int nc_write(bh_t c, const void *buf, size_t n)
{
    return wisp_netconn_write((struct wisp_netconn *)c, buf, n, WISP_NETCONN_COPY) == WISP_OK ? 0 : -1;
}

static long nc_read(bh_t c, void *buf, size_t n)
{
    struct wisp_netbuf *nb = NULL;
    wisp_err_t err = wisp_netconn_recv((struct wisp_netconn *)c, &nb);
    long len;
    (void)buf; /* zero copy: the data stays in the netbuf */
    (void)n;
    if (err == WISP_ERR_CLSD) {
        return 0;
    }
    if (err != WISP_OK) {
        return -1;
    }
    len = (long)wisp_netbuf_len(nb);
    wisp_netbuf_delete(nb);
    return len;
}

static void nc_abort(bh_t c)
{
    (void)wisp_netconn_abort((struct wisp_netconn *)c);
    (void)wisp_netconn_delete((struct wisp_netconn *)c);
}

static void nc_unlisten(bh_t l)
{
    (void)wisp_netconn_close((struct wisp_netconn *)l);
    (void)wisp_netconn_delete((struct wisp_netconn *)l);
}

static const struct bapi seed_apis[2] = {
    { "socket", sk_listen, sk_accept, sk_connect, sk_write, sk_read, sk_abort, sk_unlisten },
    { "netconn", nc_listen, nc_accept, nc_connect, nc_write, nc_read, nc_abort, nc_unlisten },
};

/* ------------------------------------------------------- the server task */

enum seed_job { JOB_NONE = 0, JOB_ACCEPT, JOB_SINK, JOB_HOLD, JOB_QUIT };

static struct seed {
    const struct seed000_env *env;
    const struct bapi *b;
    bh_t listener;
    TaskHandle_t srv;
    SemaphoreHandle_t done;     /* server -> client: a job step finished */
    SemaphoreHandle_t go;       /* client -> server: start a job / release held conns */
    volatile enum seed_job job;
    volatile uint32_t t_accept; /* JOB_ACCEPT: FREE_RUN when accept returned */
    volatile uint32_t t_end;    /* JOB_SINK: FREE_RUN when the last byte was counted */
    volatile uint32_t want;     /* JOB_SINK: bytes to count */
    volatile uint32_t got;
    volatile int fail;
    bh_t held[SEED_PAIRS];
    uint8_t rx[1460];
    uint8_t tx[1460];
} sd;

static void srv_accept_one(void)
{
    bh_t c = sd.b->accept(sd.listener);
    sd.t_accept = fw_cycles();
    if (c == BH_NONE) {
        sd.fail++;
    } else {
        sd.b->abort(c);
    }
}

static void srv_sink(void)
{
    bh_t c = sd.b->accept(sd.listener);
    uint32_t got = 0;
    if (c == BH_NONE) {
        sd.fail++;
        return;
    }
    while (got < sd.want) {
        long k = sd.b->read(c, sd.rx, sizeof sd.rx);
        if (k <= 0) {
            sd.fail++;
            break;
        }
        got += (uint32_t)k;
    }
    sd.t_end = fw_cycles();
    sd.got = got;
    sd.b->abort(c);
}

static void srv_hold(void)
{
    unsigned i;
    for (i = 0; i < SEED_PAIRS; i++) {
        sd.held[i] = sd.b->accept(sd.listener);
        if (sd.held[i] == BH_NONE) {
            sd.fail++;
        }
    }
    xSemaphoreGive(sd.done); /* all held: the client measures */
    (void)xSemaphoreTake(sd.go, pdMS_TO_TICKS(SEED_WAIT_MS));
    for (i = 0; i < SEED_PAIRS; i++) {
        if (sd.held[i] != BH_NONE) {
            sd.b->abort(sd.held[i]);
        }
    }
}

static void srv_task(void *arg)
{
    (void)arg;
    for (;;) {
        enum seed_job j;
        (void)xSemaphoreTake(sd.go, portMAX_DELAY);
        j = sd.job;
        if (j == JOB_QUIT) {
            break;
        }
        if (j == JOB_ACCEPT) {
            srv_accept_one();
        } else if (j == JOB_SINK) {
            srv_sink();
        } else if (j == JOB_HOLD) {
            srv_hold();
        }
        xSemaphoreGive(sd.done);
    }
    xSemaphoreGive(sd.done);
    vTaskDelete(NULL);
}

static bool srv_run(enum seed_job j)
{
    sd.job = j;
    return xSemaphoreGive(sd.go) == pdTRUE;
}

static bool srv_wait(void)
{
    if (xSemaphoreTake(sd.done, pdMS_TO_TICKS(SEED_WAIT_MS)) != pdTRUE) {
        sd.fail++;
        return false;
    }
    return true;
}

/* --------------------------------------------------------- statistics */

struct acc {
    uint64_t sum, sum2;
    uint32_t n;
};

static void acc_add(struct acc *a, uint32_t v)
{
    a->sum += v;
    a->sum2 += (uint64_t)v * v;
    a->n++;
}

static uint32_t isqrt64(uint64_t v)
{
    uint64_t r = 0, bit = (uint64_t)1 << 62;
    while (bit > v) {
        bit >>= 2;
    }
    while (bit != 0) {
        if (v >= r + bit) {
            v -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return (uint32_t)r;
}

static uint32_t acc_mean(const struct acc *a)
{
    return a->n == 0 ? 0 : (uint32_t)(a->sum / a->n);
}

static uint32_t acc_sd(const struct acc *a)
{
    uint64_t m;
    if (a->n < 2) {
        return 0;
    }
    m = a->sum / a->n;
    return a->sum2 / a->n > m * m ? isqrt64(a->sum2 / a->n - m * m) : 0;
}

/* ------------------------------------------------------------ results */

struct api_res {
    struct acc conn_us, acc_us;
    uint32_t mbps100[SEED_NSIZES][SEED_REPS]; /* Mbit/s x 100, per run */
    int32_t pool_idle;               /* stack pool bytes per connection, idle */
    int32_t heap_conn;               /* FreeRTOS heap per connection opened */
    int32_t pool_bulk;               /* pool bytes at the peak of a bulk transfer, per pair */
    uint32_t refused;                /* netconn layer: TCP data refused, mailbox full (retried later) */
};

static struct api_res res[2];

static void run_handshakes(struct wisp_netconn_api *api, struct api_res *r)
{
    unsigned i;
    for (i = 0; i < SEED_N_CONN; i++) {
        uint32_t t0, t1;
        bh_t c;
        srv_run(JOB_ACCEPT);
        t0 = fw_cycles();
        c = sd.b->connect(api, SEED_PORT);
        t1 = fw_cycles();
        if (!srv_wait() || c == BH_NONE) {
            sd.fail++;
            if (c != BH_NONE) {
                sd.b->abort(c);
            }
            return;
        }
        acc_add(&r->conn_us, (t1 - t0) / SEED_TICKS_PER_US);
        acc_add(&r->acc_us, (sd.t_accept - t0) / SEED_TICKS_PER_US);
        sd.b->abort(c);
        vTaskDelay(2); /* the resets are processed */
    }
}

static void run_goodput(struct wisp_netconn_api *api, struct api_res *r)
{
    unsigned si, rep;
    for (si = 0; si < SEED_NSIZES; si++) {
        for (rep = 0; rep < SEED_REPS; rep++) {
            uint32_t sz = seed_sizes[si], left = SEED_TOTAL, t0, us;
            bh_t c;
            sd.want = SEED_TOTAL;
            sd.got = 0;
            srv_run(JOB_SINK);
            c = sd.b->connect(api, SEED_PORT);
            if (c == BH_NONE) {
                sd.fail++;
                (void)srv_wait();
                return;
            }
            t0 = fw_cycles();
            while (left > 0) {
                uint32_t n = left < sz ? left : sz;
                if (sd.b->write(c, sd.tx, n) != 0) {
                    sd.fail++;
                    break;
                }
                left -= n;
            }
            if (!srv_wait() || sd.got != SEED_TOTAL) {
                sd.b->abort(c);
                return;
            }
            us = (sd.t_end - t0) / SEED_TICKS_PER_US;
            fw_say("seed000: raw %s write %lu run %u: %lu bytes in %lu us\n", sd.b->name, (unsigned long)sz, rep,
                   (unsigned long)SEED_TOTAL, (unsigned long)us);
            r->mbps100[si][rep] = us == 0 ? 0 : (uint32_t)((uint64_t)SEED_TOTAL * 8u * 100u / us);
            sd.b->abort(c);
            vTaskDelay(2);
        }
    }
}

static void run_ram(struct wisp_netconn_api *api, struct api_res *r)
{
    bh_t c[SEED_PAIRS];
    uint32_t p0, p1, peak, left;
    size_t h0, h1;
    unsigned i;
    vTaskDelay(pdMS_TO_TICKS(50)); /* resets and closes of the runs before are done */
    p0 = fw_pool_bytes();
    h0 = xPortGetFreeHeapSize();
    srv_run(JOB_HOLD);
    for (i = 0; i < SEED_PAIRS; i++) {
        c[i] = sd.b->connect(api, SEED_PORT);
        if (c[i] == BH_NONE) {
            sd.fail++;
        }
    }
    (void)srv_wait();
    vTaskDelay(pdMS_TO_TICKS(20)); /* the last ACKs are in */
    p1 = fw_pool_bytes();
    h1 = xPortGetFreeHeapSize();
    r->pool_idle = (int32_t)(p1 - p0) / (int32_t)(2u * SEED_PAIRS);
    r->heap_conn = (int32_t)(h0 - h1) / (int32_t)(2u * SEED_PAIRS);
    xSemaphoreGive(sd.go); /* the server lets its ends go */
    (void)srv_wait();
    for (i = 0; i < SEED_PAIRS; i++) {
        if (c[i] != BH_NONE) {
            sd.b->abort(c[i]);
        }
    }
    /* one untimed 1460-byte bulk transfer, the pools sampled after every write */
    vTaskDelay(pdMS_TO_TICKS(50));
    p0 = fw_pool_bytes();
    peak = p0;
    sd.want = 64u * 1024u;
    srv_run(JOB_SINK);
    c[0] = sd.b->connect(api, SEED_PORT);
    for (left = sd.want; c[0] != BH_NONE && left > 0;) {
        uint32_t n = left < 1460u ? left : 1460u, p;
        if (sd.b->write(c[0], sd.tx, n) != 0) {
            sd.fail++;
            break;
        }
        left -= n;
        p = fw_pool_bytes();
        peak = p > peak ? p : peak;
    }
    (void)srv_wait();
    if (c[0] != BH_NONE) {
        sd.b->abort(c[0]);
    } else {
        sd.fail++;
    }
    r->pool_bulk = (int32_t)(peak - p0);
}

/* ------------------------------------------------------------ printing */

static void say_ratio(char *out, size_t n, uint32_t num, uint32_t den)
{
    uint32_t r = den == 0 ? 0 : (uint32_t)((uint64_t)num * 100u / den);
    (void)snprintf(out, n, "%lu.%02lu", (unsigned long)(r / 100u), (unsigned long)(r % 100u));
}

/* out[0] = min, out[1] = median, out[2] = max of the SEED_REPS runs */
static void median3(const uint32_t *in, uint32_t out[3])
{
    uint32_t v[SEED_REPS];
    unsigned i, j;
    memcpy(v, in, sizeof v);
    for (i = 1; i < SEED_REPS; i++) {
        for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint32_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    }
    out[0] = v[0];
    out[1] = v[SEED_REPS / 2u];
    out[2] = v[SEED_REPS - 1u];
}

static void print_tables(const struct seed000_env *env)
{
    char q[16];
    unsigned si;
    uint32_t pcb = (uint32_t)sizeof(struct wisp_tcp_pcb), nc = (uint32_t)sizeof(struct wisp_netconn);
    uint32_t sk = (uint32_t)sizeof(struct wisp_sock), kh = (uint32_t)env->heap_per_netconn_slot;
    uint32_t tot_s, tot_n;

    fw_say("seed000: connection set-up: %u connects per API over loopback, microseconds of QEMU virtual time\n",
           (unsigned)SEED_N_CONN);
    fw_say("seed000: | connection set-up (us) | socket | netconn | netconn / socket |\n");
    fw_say("seed000: |---|---|---|---|\n");
    say_ratio(q, sizeof q, acc_mean(&res[1].conn_us), acc_mean(&res[0].conn_us));
    fw_say("seed000: | client connect | %lu ± %lu | %lu ± %lu | %s |\n", (unsigned long)acc_mean(&res[0].conn_us),
           (unsigned long)acc_sd(&res[0].conn_us), (unsigned long)acc_mean(&res[1].conn_us),
           (unsigned long)acc_sd(&res[1].conn_us), q);
    say_ratio(q, sizeof q, acc_mean(&res[1].acc_us), acc_mean(&res[0].acc_us));
    fw_say("seed000: | server accept (connect call to accept return) | %lu ± %lu | %lu ± %lu | %s |\n",
           (unsigned long)acc_mean(&res[0].acc_us), (unsigned long)acc_sd(&res[0].acc_us),
           (unsigned long)acc_mean(&res[1].acc_us), (unsigned long)acc_sd(&res[1].acc_us), q);
    fw_say("seed000: goodput: %u KiB per run, %u runs per size, median (min-max), Mbit/s of QEMU virtual time\n",
           (unsigned)(SEED_TOTAL / 1024u), (unsigned)SEED_REPS);
    fw_say("seed000: | write size (bytes) | socket (Mbit/s) | netconn (Mbit/s) | netconn / socket (medians) |\n");
    fw_say("seed000: |---|---|---|---|\n");
    for (si = 0; si < SEED_NSIZES; si++) {
        uint32_t v[2][3];
        unsigned k;
        for (k = 0; k < 2u; k++) {
            median3(res[k].mbps100[si], v[k]);
        }
        say_ratio(q, sizeof q, v[1][1], v[0][1]);
        fw_say("seed000: | %u | %lu.%02lu (%lu.%02lu-%lu.%02lu) | %lu.%02lu (%lu.%02lu-%lu.%02lu) | %s |\n",
               (unsigned)seed_sizes[si], (unsigned long)(v[0][1] / 100u), (unsigned long)(v[0][1] % 100u),
               (unsigned long)(v[0][0] / 100u), (unsigned long)(v[0][0] % 100u), (unsigned long)(v[0][2] / 100u),
               (unsigned long)(v[0][2] % 100u), (unsigned long)(v[1][1] / 100u), (unsigned long)(v[1][1] % 100u),
               (unsigned long)(v[1][0] / 100u), (unsigned long)(v[1][0] % 100u), (unsigned long)(v[1][2] / 100u),
               (unsigned long)(v[1][2] % 100u), q);
    }
    tot_s = nc + sk + kh + (uint32_t)(res[0].pool_idle > 0 ? res[0].pool_idle : 0) +
            (uint32_t)(res[0].heap_conn > 0 ? res[0].heap_conn : 0);
    tot_n = nc + kh + (uint32_t)(res[1].pool_idle > 0 ? res[1].pool_idle : 0) +
            (uint32_t)(res[1].heap_conn > 0 ? res[1].heap_conn : 0);
    fw_say("seed000: RAM per connection (bytes; Cortex-M3 build, wisp_opts_mps2_rtos.h)\n");
    fw_say("seed000: | RAM per connection (bytes) | socket | netconn |\n");
    fw_say("seed000: |---|---|---|\n");
    fw_say("seed000: | TCP PCB (pool element; in the measured pools below) | %lu | %lu |\n", (unsigned long)pcb, (unsigned long)pcb);
    fw_say("seed000: | netconn slot (struct wisp_netconn, static) | %lu | %lu |\n", (unsigned long)nc,
           (unsigned long)nc);
    fw_say("seed000: | socket slot (struct wisp_sock, static) | %lu | 0 |\n", (unsigned long)sk);
    fw_say("seed000: | FreeRTOS heap per netconn slot (mailbox and semaphore; at init) | %lu | %lu |\n",
           (unsigned long)kh, (unsigned long)kh);
    fw_say("seed000: | stack pools per idle connection, measured (%u pairs) | %ld | %ld |\n", (unsigned)SEED_PAIRS,
           (long)res[0].pool_idle, (long)res[1].pool_idle);
    fw_say("seed000: | FreeRTOS heap per connection opened, measured | %ld | %ld |\n", (long)res[0].heap_conn,
           (long)res[1].heap_conn);
    say_ratio(q, sizeof q, tot_n, tot_s);
    fw_say("seed000: | total per idle connection | %lu | %lu (netconn / socket %s) |\n", (unsigned long)tot_s,
           (unsigned long)tot_n, q);
    fw_say("seed000: | stack pools at the peak of a 64 KiB bulk transfer, 1460-byte writes (both ends) | %ld | %ld |\n",
           (long)res[0].pool_bulk, (long)res[1].pool_bulk);
    fw_say("seed000: netconn layer, TCP data refused for a full receive mailbox (retried by the stack): socket run %lu, "
           "netconn run %lu\n", (unsigned long)res[0].refused, (unsigned long)res[1].refused);
    fw_say("seed000: heap: %lu free now, %lu minimum ever free, of %lu (heap_4)\n",
           (unsigned long)xPortGetFreeHeapSize(), (unsigned long)xPortGetMinimumEverFreeHeapSize(),
           (unsigned long)configTOTAL_HEAP_SIZE);
}

int seed000_run(const struct seed000_env *env)
{
    struct wisp_netconn_stats ns0, ns1;
    unsigned a;
    unsigned i;
    memset(&sd, 0, sizeof sd);
    memset(res, 0, sizeof res);
    for (i = 0; i < sizeof sd.tx; i++) {
        sd.tx[i] = (uint8_t)('a' + i % 26u);
    }
    sd.env = env;
    sd.done = xSemaphoreCreateBinary();
    sd.go = xSemaphoreCreateBinary();
    if (sd.done == NULL || sd.go == NULL) {
        fw_say("seed000: no heap for the bench\n");
        return 1;
    }
    for (a = 0; a < 2u; a++) {
        sd.b = &seed_apis[a];
        sd.listener = sd.b->listen(env->api, SEED_PORT);
        if (sd.listener == BH_NONE ||
            xTaskCreate(srv_task, "seed-srv", 1024, NULL, 2, &sd.srv) != pdPASS) {
            fw_say("seed000: %s: no listener or server task\n", sd.b->name);
            sd.fail++;
            if (sd.listener != BH_NONE) {
                sd.b->unlisten(sd.listener);
            }
            continue;
        }
        fw_say("seed000: %s API ...\n", sd.b->name);
        wisp_netconn_api_stats(env->api, &ns0);
        run_handshakes(env->api, &res[a]);
        run_goodput(env->api, &res[a]);
        run_ram(env->api, &res[a]);
        wisp_netconn_api_stats(env->api, &ns1);
        res[a].refused = ns1.tcp_refused - ns0.tcp_refused;
        srv_run(JOB_QUIT);
        (void)srv_wait();
        sd.b->unlisten(sd.listener);
        vTaskDelay(pdMS_TO_TICKS(20)); /* the idle task frees the server task */
    }
    print_tables(env);
    vSemaphoreDelete(sd.done);
    vSemaphoreDelete(sd.go);
    return sd.fail;
}
