/*
 * wprobe.c -- the Linux-side probes of the benchmark suite (bench/run.sh),
 * and the Linux target's servers. Every mode is bounded in time.
 *
 *   wprobe send ADDR PORT SIZE|rand NAGLE|NODELAY SECONDS [PID...]
 *       connect, write SIZE-byte writes (rand: 1..1460, seeded) for
 *       SECONDS, shut the write side, wait for the server's close (it
 *       closes after reading everything); goodput = bytes / (connect ..
 *       server's FIN). Also the sender namespace's TCP counters delta
 *       (RetransSegs, InSegs, OutSegs from /proc/net/snmp; TCPLossProbes,
 *       TCPTimeouts, TCPDSACKRecv from /proc/net/netstat), the TAP's
 *       drops, the CPU time (utime+stime, /proc/PID/stat) and context
 *       switches (all threads) of the given server PIDs.
 *   wprobe recv ADDR PORT SECONDS [PID...]
 *       read from a chargen-like server for SECONDS (receive goodput).
 *   wprobe pingpong ADDR PORT SIZE SECONDS
 *       echo round trips of SIZE bytes (TCP_NODELAY): median, p10, p90 us.
 *   wprobe connrate ADDR PORT SECONDS SRCS [PID...]
 *       sequential connections: connect, shutdown(WR), wait for the
 *       server's close, close; connections/s, median connect() us, CPU
 *       and context switches of the server PIDs per connection; the
 *       client binds to 198.18.0.100 + (i mod SRCS) (0: no bind).
 *   wprobe msend ADDR PORT SIZE CONNS SECONDS [PID...]
 *       CONNS concurrent connections (a thread each), each as send (Nagle
 *       on) for SECONDS; aggregate goodput = all bytes / (first connect ..
 *       last server FIN), the slowest and fastest connection's goodput,
 *       the server PIDs' CPU per MB and their resident set (VmRSS, VmHWM
 *       from /proc/PID/status, kB) at the end.
 *   wprobe serve ADDR SECONDS
 *       the Linux target: TCP echo 7, discard 9, chargen 19 (a thread per
 *       connection) on ADDR, for at most SECONDS; WPROBE_RCVBUF=N in the
 *       environment sets SO_RCVBUF of the listening sockets.
 * Output: one line of key=value pairs. Exit 0 ok, 1 error, 2 usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAXPIDS 4

/* connrate: the client's address rotates over src_count addresses
 * 198.18.0.100.. (the run script puts them on the TAP) so that TIME-WAIT
 * never exhausts the ephemeral ports of one address */
static int src_count;
static unsigned src_next;
/* msend: a refused or reset connect returns -1 instead of ending the probe */
static int dial_soft;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "wprobe: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* TCP counters of this namespace: /proc/net/snmp "Tcp:" line. */
struct tcpc {
    long long retrans, insegs, outsegs;
};
static void snmp(struct tcpc *c)
{
    char hdr[1024], val[1024];
    FILE *f = fopen("/proc/net/snmp", "r");
    memset(c, 0, sizeof *c);
    if (f == NULL) {
        return;
    }
    while (fgets(hdr, sizeof hdr, f) != NULL) {
        if (strncmp(hdr, "Tcp:", 4) != 0 || fgets(val, sizeof val, f) == NULL) {
            continue;
        }
        char *hs, *vs, *h = strtok_r(hdr, " \n", &hs), *v = strtok_r(val, " \n", &vs);
        while (h != NULL && v != NULL) {
            if (strcmp(h, "RetransSegs") == 0) c->retrans = atoll(v);
            if (strcmp(h, "InSegs") == 0) c->insegs = atoll(v);
            if (strcmp(h, "OutSegs") == 0) c->outsegs = atoll(v);
            h = strtok_r(NULL, " \n", &hs);
            v = strtok_r(NULL, " \n", &vs);
        }
        break;
    }
    fclose(f);
}

/* TcpExt counters of this namespace (/proc/net/netstat): tail loss
 * probes, RTO expiries, DSACKs received (the receiver had the data:
 * a spurious retransmission) */
struct tcpx {
    long long lossprobes, rtos, dsack;
};
static void netstat(struct tcpx *c)
{
    static char hdr[8192], val[8192];
    FILE *f = fopen("/proc/net/netstat", "r");
    memset(c, 0, sizeof *c);
    if (f == NULL) {
        return;
    }
    while (fgets(hdr, sizeof hdr, f) != NULL) {
        if (strncmp(hdr, "TcpExt:", 7) != 0 || fgets(val, sizeof val, f) == NULL) {
            continue;
        }
        char *hs, *vs, *h = strtok_r(hdr, " \n", &hs), *v = strtok_r(val, " \n", &vs);
        while (h != NULL && v != NULL) {
            if (strcmp(h, "TCPLossProbes") == 0) c->lossprobes = atoll(v);
            if (strcmp(h, "TCPTimeouts") == 0) c->rtos = atoll(v);
            if (strcmp(h, "TCPDSACKRecv") == 0) c->dsack = atoll(v);
            h = strtok_r(NULL, " \n", &hs);
            v = strtok_r(NULL, " \n", &vs);
        }
        break;
    }
    fclose(f);
}

/* context switches (voluntary + involuntary) of every thread of the
 * given processes: the wake-ups the server needed */
static long long ctxsw(char **pids, int n)
{
    long long sum = 0;
    for (int i = 0; i < n; i++) {
        char path[96], sp[400], line[256];
        struct dirent *e;
        DIR *dir;
        snprintf(path, sizeof path, "/proc/%s/task", pids[i]);
        dir = opendir(path);
        if (dir == NULL) return -1;
        while ((e = readdir(dir)) != NULL) {
            FILE *f;
            if (e->d_name[0] == '.') continue;
            snprintf(sp, sizeof sp, "%s/%s/status", path, e->d_name);
            f = fopen(sp, "r");
            if (f == NULL) continue;
            while (fgets(line, sizeof line, f) != NULL) {
                long long v;
                if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1 ||
                    sscanf(line, "nonvoluntary_ctxt_switches: %lld", &v) == 1) sum += v;
            }
            fclose(f);
        }
        closedir(dir);
    }
    return sum;
}

/* a counter of the namespace's TAP wbt0 (sysfs of this namespace, as
 * ip netns exec mounts it): tx_dropped = frames for the target process
 * that its queue had no room for; rx_dropped = the target's frames the
 * kernel dropped */
static long long tapstat(const char *name)
{
    char path[128];
    long long v = -1;
    FILE *f;
    snprintf(path, sizeof path, "/sys/class/net/wbt0/statistics/%s", name);
    f = fopen(path, "r");
    if (f != NULL) {
        if (fscanf(f, "%lld", &v) != 1) v = -1;
        fclose(f);
    }
    return v;
}

/* utime+stime of a process (all its threads), in ms */
static double cpu_ms(const char *pid)
{
    char path[64], buf[2048];
    FILE *f;
    size_t n;
    char *p;
    unsigned long long ut = 0, st = 0;
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    f = fopen(path, "r");
    if (f == NULL) {
        return -1;
    }
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')');
    if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) {
        return -1;
    }
    return (double)(ut + st) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

static double cpu_sum(char **pids, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) {
        double c = cpu_ms(pids[i]);
        if (c < 0) {
            return -1;
        }
        s += c;
    }
    return s;
}

static int dial(const char *addr, int port, int nodelay, double *conn_us)
{
    struct sockaddr_in sa;
    struct timeval tv = { 10, 0 };
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
    double t0;
    if (fd < 0) die("socket");
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        fprintf(stderr, "wprobe: bad address %s\n", addr);
        exit(2);
    }
    if (src_count > 0) {
        struct sockaddr_in la;
        memset(&la, 0, sizeof la);
        la.sin_family = AF_INET;
        la.sin_addr.s_addr = htonl(0xc6120064u + (src_next++ % (unsigned)src_count)); /* 198.18.0.100 + i */
        if (bind(fd, (struct sockaddr *)&la, sizeof la) != 0) die("bind");
    }
    if (nodelay) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    t0 = now();
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (!dial_soft) die("connect");
        close(fd);
        return -1;
    }
    if (conn_us != NULL) *conn_us = (now() - t0) * 1e6;
    return fd;
}

/* read until the peer's FIN; 0 when it came */
static int drain(int fd, unsigned long long *n)
{
    static char buf[65536];
    for (;;) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r == 0) return 0;
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (n != NULL) *n += (unsigned long long)r;
    }
}

static int mode_send(int argc, char **argv)
{
    static char buf[65536];
    const char *addr = argv[2];
    int port = atoi(argv[3]), rnd = strcmp(argv[4], "rand") == 0, size = atoi(argv[4]);
    int nodelay = strcmp(argv[5], "NODELAY") == 0;
    double secs = atof(argv[6]), t0, tend, t1, c0, c1, cus;
    unsigned long long bytes = 0;
    unsigned int seed = 12345;
    struct tcpc a, b;
    long long txd0 = tapstat("tx_dropped"), rxd0 = tapstat("rx_dropped"), cs0, cs1;
    struct tcpx xa, xb;
    int fd;
    if ((!rnd && (size < 1 || size > 65536)) || secs <= 0 || secs > 120 || argc - 7 > MAXPIDS) return 2;
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (char)(i * 7 + 1);
    snmp(&a);
    netstat(&xa);
    c0 = cpu_sum(argv + 7, argc - 7);
    cs0 = ctxsw(argv + 7, argc - 7);
    t0 = now();
    fd = dial(addr, port, nodelay, &cus);
    tend = t0 + secs;
    while (now() < tend) {
        int n = rnd ? 1 + (int)(rand_r(&seed) % 1460) : size;
        ssize_t w = write(fd, buf, (size_t)n);
        if (w < 0) {
            if (errno == EINTR) continue;
            die("write");
        }
        bytes += (unsigned long long)w;
    }
    shutdown(fd, SHUT_WR);
    if (drain(fd, NULL) != 0) die("waiting for the server's close");
    t1 = now();
    close(fd);
    c1 = cpu_sum(argv + 7, argc - 7);
    cs1 = ctxsw(argv + 7, argc - 7);
    snmp(&b);
    netstat(&xb);
    double mb = (double)bytes / 1e6;
    printf("bytes=%llu secs=%.4f mbit=%.2f connect_us=%.0f retrans=%lld insegs=%lld outsegs=%lld cpu_ms=%.0f "
           "cpu_ms_per_mb=%.3f tap_tx_dropped=%lld tap_rx_dropped=%lld lossprobes=%lld rtos=%lld dsack_rx=%lld "
           "ctxsw=%lld\n",
           bytes, t1 - t0, (double)bytes * 8 / (t1 - t0) / 1e6, cus, b.retrans - a.retrans, b.insegs - a.insegs,
           b.outsegs - a.outsegs, c0 >= 0 && c1 >= 0 ? c1 - c0 : -1, c0 >= 0 && c1 >= 0 ? (c1 - c0) / mb : -1, tapstat("tx_dropped") - txd0, tapstat("rx_dropped") - rxd0, xb.lossprobes - xa.lossprobes, xb.rtos - xa.rtos,
           xb.dsack - xa.dsack, cs0 >= 0 && cs1 >= 0 ? cs1 - cs0 : -1);
    return 0;
}

/* msend: one connection's thread */
struct mconn {
    pthread_t th;
    const char *addr;
    int port, size, ok, fd;
    double t0, tend, t1;
    unsigned long long bytes;
};

static void *mconn_thread(void *arg)
{
    struct mconn *m = arg;
    char buf[1460], rb[4096];
    int fd = m->fd;
    memset(buf, 0x5a, sizeof buf);
    m->t0 = now();
    while (now() < m->tend) {
        ssize_t w = write(fd, buf, (size_t)m->size);
        if (w < 0) {
            if (errno == EINTR) continue;
            close(fd);
            return NULL;
        }
        m->bytes += (unsigned long long)w;
    }
    shutdown(fd, SHUT_WR);
    for (;;) { /* the server's close (SO_RCVTIMEO bounds each read) */
        ssize_t r = read(fd, rb, sizeof rb);
        if (r == 0) {
            m->ok = 1;
            break;
        }
        if (r < 0 && errno != EINTR) break;
    }
    m->t1 = now();
    close(fd);
    return NULL;
}

/* VmRSS / VmHWM of the first PID (kB), -1 when unknown */
static long vmstat_kb(const char *pid, const char *key)
{
    char fn[64], line[256];
    long v = -1;
    size_t kl = strlen(key);
    FILE *f;
    snprintf(fn, sizeof fn, "/proc/%s/status", pid);
    f = fopen(fn, "r");
    if (f == NULL) return -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
            v = atol(line + kl + 1);
            break;
        }
    }
    fclose(f);
    return v;
}

static int mode_msend(int argc, char **argv)
{
    const char *addr = argv[2];
    int port = atoi(argv[3]), size = atoi(argv[4]), conns = atoi(argv[5]), i, okc = 0, retries = 0;
    double secs = atof(argv[6]), t0, t1 = 0, c0, c1, mn = 1e18, mx = 0;
    unsigned long long bytes = 0;
    struct mconn *m;
    if (size < 1 || size > 1460 || conns < 1 || conns > 500 || secs <= 0 || secs > 120 || argc - 7 > MAXPIDS) return 2;
    m = calloc((size_t)conns, sizeof *m);
    if (m == NULL) die("calloc");
    /* connect one after the other, 5 ms apart (a real client set ramps
     * up too; env WPROBE_MSEND_GAP_US sets the gap, 0 = a burst that
     * meets the server's full accept queue); then, up to 5 rounds 200 ms
     * apart, replace every connection the server refused or reset with a
     * new one (counted) */
    const char *gs = getenv("WPROBE_MSEND_GAP_US");
    long gap = gs != NULL ? atol(gs) : 5000;
    if (gap < 0 || gap > 1000000) return 2;
    dial_soft = 1;
    for (i = 0; i < conns; i++) {
        m[i].fd = dial(addr, port, 0, NULL);
        if (gap > 0) usleep((useconds_t)gap);
    }
    for (int round = 0; round < 6; round++) {
        int bad = 0;
        usleep(200000);
        for (i = 0; i < conns; i++) {
            char c;
            if (m[i].fd >= 0 && recv(m[i].fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) < 0 &&
                (errno == EAGAIN || errno == EWOULDBLOCK)) {
                continue; /* alive, nothing to read */
            }
            bad++;
            if (round == 5) break;
            if (m[i].fd >= 0) close(m[i].fd);
            retries++;
            m[i].fd = dial(addr, port, 0, NULL);
            usleep(5000);
        }
        if (bad == 0) break;
        if (round == 5) {
            fprintf(stderr, "wprobe: msend: %d connections still refused or reset after 5 rounds\n", bad);
            return 1;
        }
    }
    c0 = cpu_sum(argv + 7, argc - 7);
    t0 = now();
    for (i = 0; i < conns; i++) {
        m[i].addr = addr;
        m[i].port = port;
        m[i].size = size;
        m[i].tend = t0 + secs;
        if (pthread_create(&m[i].th, NULL, mconn_thread, &m[i]) != 0) die("pthread_create");
    }
    for (i = 0; i < conns; i++) {
        pthread_join(m[i].th, NULL);
        bytes += m[i].bytes;
        if (m[i].ok) {
            double g = (double)m[i].bytes * 8 / (m[i].t1 - m[i].t0) / 1e6;
            okc++;
            if (m[i].t1 > t1) t1 = m[i].t1;
            if (g < mn) mn = g;
            if (g > mx) mx = g;
        }
    }
    c1 = cpu_sum(argv + 7, argc - 7);
    if (okc == 0) {
        free(m);
        fprintf(stderr, "wprobe: msend: no connection finished\n");
        return 1;
    }
    double mb = (double)bytes / 1e6;
    printf("conns=%d ok=%d connect_retries=%d bytes=%llu secs=%.4f mbit=%.2f conn_min_mbit=%.2f conn_max_mbit=%.2f cpu_ms=%.0f "
           "cpu_ms_per_mb=%.3f rss_kb=%ld hwm_kb=%ld\n",
           conns, okc, retries, bytes, t1 - t0, (double)bytes * 8 / (t1 - t0) / 1e6, mn, mx,
           c0 >= 0 && c1 >= 0 ? c1 - c0 : -1, c0 >= 0 && c1 >= 0 ? (c1 - c0) / mb : -1,
           argc > 7 ? vmstat_kb(argv[7], "VmRSS") : -1, argc > 7 ? vmstat_kb(argv[7], "VmHWM") : -1);
    free(m);
    return okc == conns ? 0 : 1;
}

static int mode_recv(int argc, char **argv)
{
    static char buf[65536];
    double secs = atof(argv[4]), t0, t1, c0, c1;
    unsigned long long bytes = 0;
    struct tcpc a, b;
    int fd;
    if (secs <= 0 || secs > 120 || argc - 5 > MAXPIDS) return 2;
    snmp(&a);
    c0 = cpu_sum(argv + 5, argc - 5);
    t0 = now();
    fd = dial(argv[2], atoi(argv[3]), 0, NULL);
    while ((t1 = now()) < t0 + secs) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r <= 0) {
            if (r < 0 && errno == EINTR) continue;
            die("read");
        }
        bytes += (unsigned long long)r;
    }
    c1 = cpu_sum(argv + 5, argc - 5);
    snmp(&b);
    close(fd);
    printf("bytes=%llu secs=%.4f mbit=%.2f retrans=%lld insegs=%lld outsegs=%lld cpu_ms=%.0f cpu_ms_per_mb=%.3f\n", bytes,
           t1 - t0, (double)bytes * 8 / (t1 - t0) / 1e6, b.retrans - a.retrans, b.insegs - a.insegs,
           b.outsegs - a.outsegs, c1 - c0, (c1 - c0) / ((double)bytes / 1e6));
    return 0;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define MAXS 200000
static double samples[MAXS];

static int mode_pingpong(char **argv)
{
    static char buf[65536];
    int size = atoi(argv[4]), fd;
    double secs = atof(argv[5]), tend;
    size_t n = 0;
    if (size < 1 || size > 65536 || secs <= 0 || secs > 120) return 2;
    memset(buf, 'p', sizeof buf);
    fd = dial(argv[2], atoi(argv[3]), 1, NULL);
    tend = now() + secs;
    while (n < MAXS) {
        double t0 = now();
        if (t0 > tend) break;
        if (write(fd, buf, (size_t)size) != size) die("write");
        for (int got = 0; got < size;) {
            ssize_t r = read(fd, buf, (size_t)(size - got));
            if (r <= 0) die("read echo");
            got += (int)r;
        }
        samples[n++] = (now() - t0) * 1e6;
    }
    shutdown(fd, SHUT_WR);
    drain(fd, NULL);
    close(fd);
    qsort(samples, n, sizeof samples[0], cmpd);
    printf("rtts=%zu median_us=%.1f p10_us=%.1f p90_us=%.1f\n", n, samples[n / 2], samples[n / 10],
           samples[n * 9 / 10]);
    return 0;
}

static int mode_connrate(int argc, char **argv)
{
    double secs = atof(argv[4]), t0, tend, c0, c1;
    long long cs0, cs1;
    size_t n = 0;
    src_count = atoi(argv[5]);
    if (secs <= 0 || secs > 120 || src_count < 0 || src_count > 100 || argc - 6 > MAXPIDS) return 2;
    c0 = cpu_sum(argv + 6, argc - 6);
    cs0 = ctxsw(argv + 6, argc - 6);
    t0 = now();
    tend = t0 + secs;
    while (n < MAXS && now() < tend) {
        double cus;
        int fd = dial(argv[2], atoi(argv[3]), 0, &cus);
        shutdown(fd, SHUT_WR);
        if (drain(fd, NULL) != 0) die("waiting for the server's close");
        close(fd);
        samples[n++] = cus;
    }
    double el = now() - t0;
    c1 = cpu_sum(argv + 6, argc - 6);
    cs1 = ctxsw(argv + 6, argc - 6);
    qsort(samples, n, sizeof samples[0], cmpd);
    printf("conns=%zu secs=%.3f conn_per_s=%.1f connect_median_us=%.1f connect_max_us=%.0f cpu_us_per_conn=%.1f "
           "ctxsw_per_conn=%.2f\n",
           n, el, (double)n / el, samples[n / 2], samples[n - 1], c0 >= 0 && c1 >= 0 ? (c1 - c0) * 1000 / (double)n : -1,
           cs0 >= 0 && cs1 >= 0 ? (double)(cs1 - cs0) / (double)n : -1);
    return 0;
}

/* ---- the Linux target: echo 7, discard 9, chargen 19 ---- */
struct conn {
    int fd, svc;
};

static char pattern[65536];

static void *serve_conn(void *arg)
{
    char buf[65536];
    struct conn c = *(struct conn *)arg;
    free(arg);
    if (c.svc == 19) {
        while (write(c.fd, pattern, sizeof pattern) > 0) {
        }
    } else {
        for (;;) {
            ssize_t r = read(c.fd, buf, sizeof buf);
            if (r <= 0) break;
            if (c.svc == 7 && write(c.fd, buf, (size_t)r) != r) break;
        }
    }
    close(c.fd);
    return NULL;
}

static void *listener(void *arg)
{
    int lfd = (int)(intptr_t)arg;
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    getsockname(lfd, (struct sockaddr *)&sa, &sl);
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        pthread_t t;
        struct conn *c;
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return NULL;
        }
        c = malloc(sizeof *c);
        if (c == NULL) {
            close(fd);
            continue;
        }
        c->fd = fd;
        c->svc = ntohs(sa.sin_port);
        if (pthread_create(&t, NULL, serve_conn, c) != 0) {
            close(fd);
            free(c);
            continue;
        }
        pthread_detach(t);
    }
}

static void on_term(int s)
{
    (void)s;
    _exit(0);
}

static int mode_serve(char **argv)
{
    static const int ports[3] = { 7, 9, 19 };
    double secs = atof(argv[3]);
    if (secs <= 0 || secs > 36000) return 2;
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, on_term);
    for (size_t i = 0; i < sizeof pattern; i++) pattern[i] = (char)(' ' + i % 95);
    for (int i = 0; i < 3; i++) {
        struct sockaddr_in sa;
        int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
        pthread_t t;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)ports[i]);
        if (inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1) return 2;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (getenv("WPROBE_RCVBUF") != NULL) { /* before listen: the window scale follows from it */
            int rb = atoi(getenv("WPROBE_RCVBUF"));
            if (rb > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof rb) != 0) die("SO_RCVBUF");
        }
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 512) != 0) die("bind/listen");
        if (pthread_create(&t, NULL, listener, (void *)(intptr_t)fd) != 0) die("pthread_create");
        pthread_detach(t);
    }
    printf("serving\n");
    fflush(stdout);
    sleep((unsigned)secs);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 2;
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 7 && strcmp(argv[1], "send") == 0) rc = mode_send(argc, argv);
    else if (argc >= 5 && strcmp(argv[1], "recv") == 0) rc = mode_recv(argc, argv);
    else if (argc == 6 && strcmp(argv[1], "pingpong") == 0) rc = mode_pingpong(argv);
    else if (argc >= 6 && strcmp(argv[1], "connrate") == 0) rc = mode_connrate(argc, argv);
    else if (argc == 4 && strcmp(argv[1], "serve") == 0) rc = mode_serve(argv);
    else if (argc >= 7 && strcmp(argv[1], "msend") == 0) rc = mode_msend(argc, argv);
    if (rc == 2) fprintf(stderr, "wprobe: usage: see the head of bench/wprobe.c\n");
    fflush(stdout);
    return rc;
}
