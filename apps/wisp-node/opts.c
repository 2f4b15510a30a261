/**
 * @file opts.c
 * wisp-node: wisp-node's command line: usage and parsing into struct node_opts.
 */
#include "node.h"

/* ------------------------------------------------------------ options */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: wisp-node --tap NAME (--addr A.B.C.D/PREFIX | --dhcp) [options]\n"
            "  --tap NAME          tap interface to use (created when absent)\n"
            "  --addr A.B.C.D/N    the stack's IPv4 address and prefix length\n"
            "  --dhcp              get address, mask, gateway, MTU from a DHCP server instead\n"
            "                      (--api raw; prints 'dhcp bound' / 'dhcp renewed' lines)\n"
            "  --gw ADDR           default gateway\n"
            "  --pcap FILE         write a capture of every frame to FILE\n"
            "  --mtu N             IP MTU of the interface (68..65000, default 1500)\n"
            "  --seed N            derive the stack's secrets from N: a reproducible run\n"
            "                      (default: entropy from getrandom())\n"
            "  --api API           application API of the services and the client: raw\n"
            "                      (callbacks in the main loop, default), netconn or socket\n"
            "                      (a stack thread; services and client as threads)\n"
            "  --quiet             no start-up messages; only non-zero counters at exit\n"
            "  --tx-direct-max N   netconn/socket: a frame of at most N bytes that finds the\n"
            "                      tap's transmit ring empty and the I/O thread asleep is\n"
            "                      written by the thread that sends it (0..1514, default %u;\n"
            "                      0 = every frame through the ring and the I/O thread)\n",
            NODE_TX_DIRECT_MAX);
    fprintf(f,
            "  --connect ADDR:PORT TCP client transfer to ADDR:PORT (with --send or --recv);\n"
            "                      the node exits when it is done\n"
            "  --send BYTES        send BYTES of a deterministic pattern, then close\n"
            "  --recv              receive until the peer closes\n"
            "  --write-size N      bytes per write of --send (1..16777216, default 1460)\n"
            "  --connects N        with --connect: open and close N connections in sequence,\n"
            "                      print the connect times (mean, median, min, max)\n"
            "  --iperf             iperf 2 server on TCP and UDP port 5001 (--api raw)\n"
            "  --iperf-client ADDR[:PORT]  one iperf 2 test to ADDR (port 5001), TCP unless\n"
            "                      --iperf-udp; prints iperf-like results and exits\n"
            "  --iperf-udp RATE    UDP test at RATE bit/s (suffix k, M, G = 10^3, 10^6, 10^9)\n"
            "  --iperf-time S      test length in seconds (default 10; decimals allowed)\n"
            "  --iperf-bytes N     send N bytes instead (header included)\n"
            "  --iperf-len N       UDP datagram payload (16..65507, default 1470); TCP bytes\n"
            "                      per write (1..1000, default 1000)\n"
            "  --http              HTTP/1.1 server on TCP port 80 (--api raw): /, /style.css,\n"
            "                      /big.bin (1 MiB), /status, /status.json\n"
            "  --http-max-conns N  connection records of the server (default 128 on the host)\n"
            "  --http-per-source N connections per remote address (default half the records)\n"
            "  --http-idle-ms MS   idle timeout (default 10000)\n"
            "  --http-head-ms MS   a request head must be complete this long after its first\n"
            "                      byte, else 408 (default 10000; slowloris)\n"
            "  --http-reclaim-ms MS  when full, a connection waiting this long for a request\n"
            "                      is reset for a new one (default 1000)\n"
            "  --svc-idle-ms MS    idle timeout of TCP echo/discard/chargen (default 30000)\n"
            "  --svc-per-source N  their connections per remote address (default: all the\n"
            "                      records, 8 raw, 16 netconn/socket)\n"
            "  --svc-reclaim-ms MS when full, a connection idle this long is reset for a new\n"
            "                      one (default 1000)\n"
            "  --ping ADDR         ping ADDR like ping(8) and exit (0 = a reply came back)\n"
            "  --count N           requests of --ping (default 4)\n"
            "  --interval MS       between requests (default 1000)\n"
            "  --size N            data bytes per request (default 56)\n"
            "  --dns ADDR          DNS server of the stack's resolver\n"
            "  --resolve NAME      resolve NAME (A record), print the address and TTL or why\n"
            "                      not, exit 0 (resolved) or 1 (--api raw)\n"
            "  --udp-probe A:P     connected UDP datagrams to A:P until an ICMP error comes\n"
            "                      back; exit 0 when it is port unreachable (--api raw)\n"
            "  --help              this text\n"
            "The client prints bytes, goodput (MB = 10^6 bytes) and the SHA-256 of the data.\n"
            "SIGINT/SIGTERM stop the node; exit 0 = clean (client: transfer complete),\n"
            "1 = error or leak, 2 = usage.\n");
}

int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "wisp-node: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage(stderr);
    return 2;
}

bool parse_uint(const char *s, unsigned long long max, unsigned long long *out)
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

static bool parse_hostport(const char *arg, struct node_opts *o)
{
    char buf[32];
    char *colon;
    unsigned long long port;

    if (strlen(arg) >= sizeof buf) {
        return false;
    }
    strcpy(buf, arg);
    colon = strrchr(buf, ':');
    if (colon == NULL) {
        return false;
    }
    *colon = '\0';
    if (!wisp_ip4_aton(buf, &o->peer_ip) || !parse_uint(colon + 1, 65535, &port) || port < 1) {
        return false;
    }
    o->peer_port = (uint16_t)port;
    return o->peer_ip != 0;
}

/* Returns -1 to go on, else the exit status. */
int parse_args(int argc, char **argv, struct node_opts *o)
{
    static const struct option longopts[] = {
        { "tap", required_argument, NULL, 't' },  { "addr", required_argument, NULL, 'a' },
        { "gw", required_argument, NULL, 'g' },   { "pcap", required_argument, NULL, 'p' },
        { "mtu", required_argument, NULL, 'm' },  { "seed", required_argument, NULL, 's' },
        { "api", required_argument, NULL, 'A' },  { "quiet", no_argument, NULL, 'q' },
        { "connect", required_argument, NULL, 'c' }, { "send", required_argument, NULL, 'S' },
        { "recv", no_argument, NULL, 'R' },       { "write-size", required_argument, NULL, 'w' },
        { "connects", required_argument, NULL, 'C' },
        { "iperf", no_argument, NULL, 1001 },     { "iperf-client", required_argument, NULL, 1002 },
        { "iperf-udp", required_argument, NULL, 1003 }, { "iperf-time", required_argument, NULL, 1004 },
        { "iperf-bytes", required_argument, NULL, 1005 }, { "iperf-len", required_argument, NULL, 1006 },
        { "http", no_argument, NULL, 1101 },      { "ping", required_argument, NULL, 1102 },
        { "count", required_argument, NULL, 1103 }, { "interval", required_argument, NULL, 1104 },
        { "size", required_argument, NULL, 1105 },
        { "dns", required_argument, NULL, 1201 }, { "resolve", required_argument, NULL, 1202 },
        { "udp-probe", required_argument, NULL, 1203 },
        { "dhcp", no_argument, NULL, 1100 },
        { "svc-idle-ms", required_argument, NULL, 1301 }, { "svc-per-source", required_argument, NULL, 1302 },
        { "svc-reclaim-ms", required_argument, NULL, 1303 }, { "http-max-conns", required_argument, NULL, 1304 },
        { "http-per-source", required_argument, NULL, 1305 }, { "http-idle-ms", required_argument, NULL, 1306 },
        { "http-head-ms", required_argument, NULL, 1307 }, { "http-reclaim-ms", required_argument, NULL, 1308 },
        { "tx-direct-max", required_argument, NULL, 1309 },
        { "help", no_argument, NULL, 'h' },       { NULL, 0, NULL, 0 },
    };
    bool have_addr = false;
    unsigned long long v;
    int c;

    memset(o, 0, sizeof *o);
    o->mtu = 1500;
    o->api = "raw";
    o->write_size = 1460;
    o->tx_direct_max = NODE_TX_DIRECT_MAX;
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
        case 1309:
            if (!parse_uint(optarg, 1514, &v)) {
                return usage_error("bad --tx-direct-max '%s' (0..1514)", optarg);
            }
            o->tx_direct_max = (uint32_t)v;
            break;
        case 'c':
            if (!parse_hostport(optarg, o)) {
                return usage_error("bad --connect '%s' (want A.B.C.D:PORT)", optarg);
            }
            o->client = true;
            break;
        case 'S':
            if (!parse_uint(optarg, UINT64_MAX, &v)) {
                return usage_error("bad --send '%s'", optarg);
            }
            o->send_bytes = v;
            o->send = true;
            break;
        case 'R':
            o->recv = true;
            break;
        case 'w':
            if (!parse_uint(optarg, NODE_MAX_WRITE_SIZE, &v) || v < 1) {
                return usage_error("bad --write-size '%s' (1..16777216)", optarg);
            }
            o->write_size = (uint32_t)v;
            break;
        case 'C':
            if (!parse_uint(optarg, 1000000, &v) || v < 1) {
                return usage_error("bad --connects '%s' (1..1000000)", optarg);
            }
            o->connects = (uint32_t)v;
            break;
        case 1001:
            o->iperf = true;
            break;
        case 1101: case 1102: case 1103: case 1104: case 1105:
            if (node_http_ping_opt(c, optarg, o) != 0) {
                return 2;
            }
            break;
        case 1301: case 1302: case 1303: case 1304: case 1305: case 1306: case 1307: case 1308:
            if (node_limit_opt(c, optarg, o) != 0) {
                return 2;
            }
            break;
        case 1002:
            if (!node_iperf_parse_target(optarg, o)) {
                return usage_error("bad --iperf-client '%s' (want A.B.C.D[:PORT])", optarg);
            }
            o->iperf_client = true;
            break;
        case 1003: {
            double d;
            if (!node_iperf_parse_num(optarg, true, 1.0, 1e10, &d)) {
                return usage_error("bad --iperf-udp '%s' (bit/s, 1..10G, e.g. 50M)", optarg);
            }
            o->iperf_rate = (uint64_t)d;
            o->iperf_udp = true;
            break;
        }
        case 1004: {
            double d;
            if (!node_iperf_parse_num(optarg, false, 1000.0, 3600e3, &d)) {
                return usage_error("bad --iperf-time '%s' (seconds, 0.001..3600)", optarg);
            }
            o->iperf_time_ms = (uint32_t)d;
            break;
        }
        case 1005:
            if (!parse_uint(optarg, UINT64_MAX, &v) || v < 1) {
                return usage_error("bad --iperf-bytes '%s'", optarg);
            }
            o->iperf_bytes = v;
            break;
        case 1100:
            o->dhcp = true;
            break;
        case 1006:
            if (!parse_uint(optarg, 65507, &v) || v < 1) {
                return usage_error("bad --iperf-len '%s' (1..65507)", optarg);
            }
            o->iperf_len = (uint32_t)v;
            break;
        case 1201:
            if (!wisp_ip4_aton(optarg, &o->dns_server) || o->dns_server == 0) {
                return usage_error("bad --dns '%s' (want A.B.C.D)", optarg);
            }
            break;
        case 1202:
            o->resolve = optarg;
            break;
        case 1203: {
            struct node_opts hp;
            memset(&hp, 0, sizeof hp);
            if (!parse_hostport(optarg, &hp)) {
                return usage_error("bad --udp-probe '%s' (want A.B.C.D:PORT)", optarg);
            }
            o->udp_probe = true;
            o->probe_ip = hp.peer_ip;
            o->probe_port = hp.peer_port;
            break;
        }
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
    if (!have_addr && !o->dhcp) {
        return usage_error("%s", "--addr A.B.C.D/PREFIX (or --dhcp) is required");
    }
    if (have_addr && o->dhcp) {
        return usage_error("%s", "--addr and --dhcp exclude each other");
    }
    if (o->dhcp && strcmp(o->api, "raw") != 0) {
        return usage_error("%s", "--dhcp needs --api raw");
    }
    if (find_api(o->api) == NULL) {
        return usage_error("--api '%s' is not available (have: raw, netconn, socket)", o->api);
    }
    if (o->connects > 0 && (!o->client || o->send || o->recv)) {
        return usage_error("%s", "--connects N needs --connect ADDR:PORT and neither --send nor --recv");
    }
    if (o->client && o->connects == 0 && o->send == o->recv) {
        return usage_error("%s", "--connect needs exactly one of --send BYTES and --recv");
    }
    if (!o->client && (o->send || o->recv)) {
        return usage_error("%s", "--send and --recv need --connect ADDR:PORT");
    }
    if (!o->iperf_client && (o->iperf_udp || o->iperf_time_ms || o->iperf_bytes || o->iperf_len)) {
        return usage_error("%s", "--iperf-udp, --iperf-time, --iperf-bytes and --iperf-len need --iperf-client");
    }
    if ((o->iperf || o->iperf_client) && strcmp(o->api, "raw") != 0) {
        return usage_error("%s", "--iperf and --iperf-client run on --api raw only");
    }
    if (o->iperf_client && o->client) {
        return usage_error("%s", "--iperf-client and --connect exclude each other");
    }
    if (node_http_ping_check(o) != 0) {
        return 2;
    }
    if (o->resolve != NULL && (strcmp(o->api, "raw") != 0 || o->client || o->iperf_client || o->ping)) {
        return usage_error("%s", "--resolve runs on --api raw, without --connect, --iperf-client or --ping");
    }
    if (o->udp_probe &&
        (strcmp(o->api, "raw") != 0 || o->client || o->iperf_client || o->ping || o->resolve != NULL)) {
        return usage_error("%s", "--udp-probe runs on --api raw, without other client modes");
    }
    return -1;
}

