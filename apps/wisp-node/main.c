/**
 * @file main.c
 * wisp-node: one wisp stack on a Linux TAP interface, serving the standard
 * small services (UDP echo 7, discard 9), for interoperability tests
 * against the Linux kernel.
 *
 *   wisp-node --tap NAME --addr A.B.C.D/PREFIX [--gw ADDR] [--pcap FILE]
 *             [--mtu N] [--seed N] [--api raw] [--quiet]
 *
 * The event loop waits in ppoll() on the tap fd with the time until the
 * stack's next timer (capped) and then runs the due timers. SIGINT/SIGTERM
 * only set a flag (they are blocked outside ppoll, so none is missed);
 * the loop then ends, prints every counter, the interfaces and the pools,
 * tears the stack down and checks that every pool is back at zero use.
 *
 * Exit status: 0 = clean, 1 = runtime error or a pool leak, 2 = usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wisp/wisp.h"
#include "wisp/pcapdev.h"
#include "services.h"
#include "tapdev.h"
#include "unix_port.h"

/** Longest wait in the event loop (ms): bounds the reaction to anything
 *  that is not an fd event or a timer. */
#define NODE_MAX_WAIT_MS 1000u

struct node_opts {
    const char *tap;
    const char *pcap;
    const char *api;
    wisp_ip4_t addr, mask, gw;
    unsigned prefix;
    unsigned mtu;
    uint64_t seed;
    bool have_seed;
    bool quiet;
};

struct node {
    struct node_opts o;
    struct wisp_stack stack;
    struct wisp_tapdev tap;
    struct wisp_pcapdev pcap;
    FILE *pcap_file;
    uint32_t pcap_flushed;       /**< records written at the last fflush */
    struct wisp_netif nif;
    struct wisp_services svc;
    bool services_up;
};

/* ---------------------------------------------------------- API table
 * One row per application API; each starts and stops the node's services
 * on that API. Only "raw" (the core-context callback API) exists so far;
 * netconn and socket add rows here. */
struct node_api {
    const char *name;
    int (*start)(struct node *n);
    void (*stop)(struct node *n);
    void (*dump)(struct node *n);
};

static int raw_start(struct node *n)
{
    unsigned i, cnt;
    const struct wisp_service_desc *t = wisp_services_table(&cnt);
    wisp_err_t err = wisp_services_udp_start(&n->stack, &n->svc);

    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot start UDP services: %s\n", wisp_err_str(err));
        return -1;
    }
    n->services_up = true;
    if (!n->o.quiet) {
        for (i = 0; i < cnt; i++) {
            printf("wisp-node: service %s/%u %s (raw API)\n", t[i].proto == WISP_IP4_PROTO_UDP ? "udp" : "tcp",
                   (unsigned)t[i].port, t[i].name);
        }
    }
    return 0;
}

static void raw_stop(struct node *n)
{
    if (n->services_up) {
        wisp_services_udp_stop(&n->svc);
        n->services_up = false;
    }
}

static void print_service(const char *name, const struct wisp_service_stats *st)
{
    printf("  %-16s datagrams %" PRIu32 " bytes %" PRIu32 " dropped %" PRIu32 " send_err %" PRIu32 "\n", name,
           st->datagrams, st->bytes, st->dropped, st->send_err);
}

static void raw_dump(struct node *n)
{
    printf("services:\n");
    print_service("udp/7 echo", &n->svc.udp_echo_st);
    print_service("udp/9 discard", &n->svc.udp_discard_st);
}

static const struct node_api node_apis[] = {
    { "raw", raw_start, raw_stop, raw_dump },
};

static const struct node_api *find_api(const char *name)
{
    size_t i;
    for (i = 0; i < sizeof node_apis / sizeof node_apis[0]; i++) {
        if (strcmp(node_apis[i].name, name) == 0) {
            return &node_apis[i];
        }
    }
    return NULL;
}

/* ------------------------------------------------------------ options */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: wisp-node --tap NAME --addr A.B.C.D/PREFIX [options]\n"
            "  --tap NAME          tap interface to use (created when absent)\n"
            "  --addr A.B.C.D/N    the stack's IPv4 address and prefix length\n"
            "  --gw ADDR           default gateway\n"
            "  --pcap FILE         write a capture of every frame to FILE\n"
            "  --mtu N             IP MTU of the interface (68..65000, default 1500)\n"
            "  --seed N            seed of the stack's generator (default: random)\n"
            "  --api raw           application API of the services (raw; netconn and\n"
            "                      socket are not available yet)\n"
            "  --quiet             no start-up messages; only non-zero counters at exit\n"
            "  --help              this text\n"
            "SIGINT/SIGTERM stop the node; exit 0 = clean, 1 = error or leak, 2 = usage.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "wisp-node: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage(stderr);
    return 2;
}

static bool parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    unsigned long long v;

    if (s == NULL || *s < '0' || *s > '9') {
        return false;
    }
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno != 0 || *end != '\0' || v > max) {
        return false;
    }
    *out = v;
    return true;
}

static bool parse_addr(const char *arg, struct node_opts *o)
{
    char buf[32];
    char *slash;
    unsigned long long pfx;

    if (strlen(arg) >= sizeof buf) {
        return false;
    }
    strcpy(buf, arg);
    slash = strchr(buf, '/');
    if (slash == NULL) {
        return false;
    }
    *slash = '\0';
    if (!wisp_ip4_aton(buf, &o->addr) || !parse_uint(slash + 1, 32, &pfx) || pfx < 1) {
        return false;
    }
    o->prefix = (unsigned)pfx;
    o->mask = wisp_ip4_prefix_mask(o->prefix);
    return o->addr != 0;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct node_opts *o)
{
    static const struct option longopts[] = {
        { "tap", required_argument, NULL, 't' },  { "addr", required_argument, NULL, 'a' },
        { "gw", required_argument, NULL, 'g' },   { "pcap", required_argument, NULL, 'p' },
        { "mtu", required_argument, NULL, 'm' },  { "seed", required_argument, NULL, 's' },
        { "api", required_argument, NULL, 'A' },  { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },       { NULL, 0, NULL, 0 },
    };
    bool have_addr = false;
    unsigned long long v;
    int c;

    memset(o, 0, sizeof *o);
    o->mtu = 1500;
    o->api = "raw";
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            o->tap = optarg;
            break;
        case 'a':
            if (!parse_addr(optarg, o)) {
                return usage_error("bad --addr '%s' (want A.B.C.D/PREFIX, prefix 1..32)", optarg);
            }
            have_addr = true;
            break;
        case 'g':
            if (!wisp_ip4_aton(optarg, &o->gw)) {
                return usage_error("bad --gw '%s'", optarg);
            }
            break;
        case 'p':
            o->pcap = optarg;
            break;
        case 'm':
            if (!parse_uint(optarg, 65000, &v) || v < 68) {
                return usage_error("bad --mtu '%s' (68..65000)", optarg);
            }
            o->mtu = (unsigned)v;
            break;
        case 's':
            if (!parse_uint(optarg, UINT64_MAX, &v)) {
                return usage_error("bad --seed '%s'", optarg);
            }
            o->seed = v;
            o->have_seed = true;
            break;
        case 'A':
            o->api = optarg;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            return usage_error("unknown option or missing argument near '%s'",
                               (optind > 0 && optind <= argc) ? argv[optind - 1] : "?");
        }
    }
    if (optind < argc) {
        return usage_error("unexpected argument '%s'", argv[optind]);
    }
    if (o->tap == NULL) {
        return usage_error("%s", "--tap NAME is required");
    }
    if (o->tap[0] == '\0' || strlen(o->tap) > 15) {
        return usage_error("bad --tap '%s' (1..15 characters)", o->tap);
    }
    if (!have_addr) {
        return usage_error("%s", "--addr A.B.C.D/PREFIX is required");
    }
    if (find_api(o->api) == NULL) {
        return usage_error("--api '%s' is not available (have: raw)", o->api);
    }
    return -1;
}

/* --------------------------------------------------------------- pcap */

static int pcap_file_write(void *ctx, const void *buf, size_t len)
{
    FILE *f = ctx;
    return fwrite(buf, 1, len, f) == len ? 0 : -1;
}

/* Flush whole records after each loop turn: a reader (tshark) sees a valid
 * file while the node runs. */
static void pcap_flush(struct node *n)
{
    uint32_t recs;

    if (n->pcap_file == NULL) {
        return;
    }
    recs = n->pcap.rx_records + n->pcap.tx_records;
    if (recs != n->pcap_flushed) {
        n->pcap_flushed = recs;
        if (fflush(n->pcap_file) != 0) {
            n->pcap.failed = 1;
        }
    }
}

/* ------------------------------------------------------------ signals */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

/* Block SIGINT/SIGTERM (they are delivered only inside ppoll) and install
 * a handler that just records them. *wait_mask is the mask for ppoll. */
static int setup_signals(sigset_t *wait_mask)
{
    struct sigaction sa;
    sigset_t block;

    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &block, wait_mask) != 0) {
        return -1;
    }
    sigdelset(wait_mask, SIGINT);
    sigdelset(wait_mask, SIGTERM);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0) {
        return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

/* --------------------------------------------------------------- main */

static int run_loop(struct node *n, const sigset_t *wait_mask)
{
    while (!stop_signal) {
        struct pollfd pfd;
        struct timespec ts;
        uint32_t wait_ms = wisp_stack_next_timeout(&n->stack);
        int r;

        if (wait_ms > NODE_MAX_WAIT_MS) {
            wait_ms = NODE_MAX_WAIT_MS;
        }
        ts.tv_sec = (time_t)(wait_ms / 1000u);
        ts.tv_nsec = (long)(wait_ms % 1000u) * 1000000L;
        pfd.fd = n->tap.fd;
        pfd.events = wisp_tapdev_poll_events(&n->tap);
        pfd.revents = 0;
        r = ppoll(&pfd, 1, &ts, wait_mask);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            perror("wisp-node: ppoll");
            return 1;
        }
        if (r > 0) {
            if (pfd.revents & POLLNVAL) {
                fprintf(stderr, "wisp-node: tap fd became invalid\n");
                return 1;
            }
            (void)wisp_tapdev_handle(&n->tap, pfd.revents);
        }
        wisp_stack_poll(&n->stack);
        pcap_flush(n);
    }
    return 0;
}

static void print_report(struct node *n, const struct node_api *api)
{
    const struct wisp_tapdev *t = &n->tap;

    printf("wisp-node: stopping (signal %d)\n", (int)stop_signal);
    wisp_stack_dump(&n->stack, wisp_unix_print, stdout, !n->o.quiet);
    printf("tap %s: rx %" PRIu32 " frames %" PRIu32 " bytes, %" PRIu32 " nomem, %" PRIu32 " errors; "
           "tx %" PRIu32 " frames %" PRIu32 " bytes, %" PRIu32 " wouldblock, %" PRIu32 " errors\n",
           t->name, t->rx_frames, t->rx_bytes, t->rx_nomem, t->rx_errors, t->tx_frames, t->tx_bytes,
           t->tx_wouldblock, t->tx_errors);
    if (n->pcap_file != NULL) {
        printf("pcap %s: %" PRIu32 " rx records, %" PRIu32 " tx records, %" PRIu32 " write errors%s\n", n->o.pcap,
               n->pcap.rx_records, n->pcap.tx_records, n->pcap.write_errors,
               n->pcap.failed ? " (capture stopped)" : "");
    }
    api->dump(n);
}

/* Tear down and check the pools; returns 0 (clean) or 1 (leak). */
static int teardown(struct node *n, const struct node_api *api, bool nif_added)
{
    unsigned i, in_use;

    api->stop(n);
    if (nif_added) {
        wisp_netif_remove(&n->nif);
    }
    wisp_stack_deinit(&n->stack);
    wisp_tapdev_close(&n->tap);
    in_use = wisp_stack_pools_in_use(&n->stack);
    if (in_use == 0) {
        printf("pools: all back at baseline\n");
    } else {
        printf("pools: LEAK, %u elements still in use:", in_use);
        for (i = 0; i < WISP_POOL_COUNT; i++) {
            if (n->stack.pool[i].used != 0) {
                printf(" %s=%u", n->stack.pool[i].name, (unsigned)n->stack.pool[i].used);
            }
        }
        printf("\n");
    }
    fflush(stdout);
    return in_use == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct node *n;
    const struct node_api *api;
    struct wisp_config cfg;
    struct wisp_dev *top;
    sigset_t wait_mask;
    char err[256];
    uint8_t mac[6];
    wisp_err_t e;
    int rc;

    setvbuf(stdout, NULL, _IOLBF, 0);
    n = calloc(1, sizeof *n);
    if (n == NULL) {
        fprintf(stderr, "wisp-node: out of memory\n");
        return 1;
    }
    rc = parse_args(argc, argv, &n->o);
    if (rc >= 0) {
        free(n);
        return rc;
    }
    api = find_api(n->o.api);
    if (setup_signals(&wait_mask) != 0) {
        perror("wisp-node: signals");
        free(n);
        return 1;
    }

    memset(&cfg, 0, sizeof cfg);
    cfg.now_ms = wisp_unix_now_ms;
    cfg.seed = n->o.have_seed ? n->o.seed : wisp_unix_seed();
    e = wisp_stack_init(&n->stack, &cfg);
    if (e != WISP_OK) {
        fprintf(stderr, "wisp-node: stack init failed: %s\n", wisp_err_str(e));
        free(n);
        return 1;
    }
    if (wisp_tapdev_open(&n->tap, &n->stack, n->o.tap, err, sizeof err) != 0) {
        fprintf(stderr, "wisp-node: %s\n", err);
        wisp_stack_deinit(&n->stack);
        free(n);
        return 1;
    }
    top = &n->tap.dev;
    if (n->o.pcap != NULL) {
        n->pcap_file = fopen(n->o.pcap, "wb");
        if (n->pcap_file == NULL) {
            fprintf(stderr, "wisp-node: cannot open %s: %s\n", n->o.pcap, strerror(errno));
            (void)teardown(n, api, false);
            free(n);
            return 1;
        }
        if (wisp_pcapdev_init(&n->pcap, &n->stack, top, pcap_file_write, n->pcap_file, wisp_unix_time_us, NULL) !=
            WISP_OK) {
            fprintf(stderr, "wisp-node: cannot write %s\n", n->o.pcap);
            fclose(n->pcap_file);
            (void)teardown(n, api, false);
            free(n);
            return 1;
        }
        fflush(n->pcap_file);
        top = &n->pcap.dev;
    }

    wisp_tapdev_mac_for(n->o.addr, mac);
    /* The netif is named like the tap when that fits (netif names: 7 chars). */
    e = wisp_netif_add_eth(&n->stack, &n->nif, strlen(n->tap.name) < sizeof n->nif.name ? n->tap.name : "tap0", top,
                           mac, (uint16_t)n->o.mtu);
    if (e != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot add the interface: %s\n", wisp_err_str(e));
        rc = 1;
    } else {
        char a[16], g[16];
        wisp_netif_set_ip4(&n->nif, n->o.addr, n->o.mask, n->o.gw);
        wisp_netif_set_up(&n->nif, true);
        wisp_netif_set_link(&n->nif, true);   /* the tap fd is open: carrier */
        rc = (api->start(n) == 0) ? -1 : 1;
        if (rc < 0) {
            if (!n->o.quiet) {
                printf("wisp-node: up on %s, %s/%u gw %s, mac %02x:%02x:%02x:%02x:%02x:%02x, mtu %u, api %s, "
                       "seed %" PRIu64 "%s%s\n",
                       n->tap.name, wisp_ip4_ntoa(n->o.addr, a), n->o.prefix, wisp_ip4_ntoa(n->o.gw, g), mac[0],
                       mac[1], mac[2], mac[3], mac[4], mac[5], n->o.mtu, api->name, cfg.seed,
                       n->o.pcap ? ", pcap " : "", n->o.pcap ? n->o.pcap : "");
            }
            printf("wisp-node: ready\n");
            rc = run_loop(n, &wait_mask);
            print_report(n, api);
        }
    }
    if (teardown(n, api, e == WISP_OK) != 0) {
        rc = 1;
    }
    if (n->pcap_file != NULL && fclose(n->pcap_file) != 0) {
        fprintf(stderr, "wisp-node: closing %s: %s\n", n->o.pcap, strerror(errno));
        rc = 1;
    }
    free(n);
    return rc;
}
