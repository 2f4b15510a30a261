/**
 * @file fuzz_tcp.c
 * Fuzz harness: sequences of TCP segments against a listener, a passively
 * opened ESTABLISHED connection and an actively opened one, with
 * application actions and virtual time in between.
 *
 * Setup (fresh stack per input): listener on port 80 (backlog 4), a
 * connection from the peer's port 40000 brought to ESTABLISHED by a
 * scripted handshake whose SYN options the first input byte chooses
 * (bit 0 timestamps, bit 1 SACK-permitted, bit 2 window scale 7), and a
 * connection the stack opens to the peer's port 5001 (left in SYN-SENT for
 * the fuzzer). Bit 3 of the first byte: teardown closes the application's
 * connections gracefully (else aborts them).
 *
 * Then records, each a segment from the peer plus an action:
 *   b0       TCP flags
 *   b1       bits 0-1 connection (0: port 40000, 1: the active open,
 *            2/3: new connections from ports 40001/40002 to the listener);
 *            bits 2-4 application action on it (none, write 2000 copied,
 *            write 300 zero-copy, close, shutdown TX, abort, toggle
 *            refusing received data, recv_retry + output);
 *            bits 5-7 clock advance after it (0, 1 ms, 10 ms, 200 ms, 1 s,
 *            5 s, 60 s, 10 min)
 *   b2-b3    sequence number: signed offset from what the stack expects
 *            next (its last ACK; before any, the peer's ISS)
 *   b4-b5    acknowledgment number: signed offset from the stack's next
 *            sequence number (as seen on the wire)
 *   b6       window = b6 * 257
 *   b7       bits 0-5 raw option bytes that follow (up to 40), bit 6 add a
 *            valid timestamps option (peer clock, echo of the stack's
 *            last TSval), bit 7 add a SACK block from 4 more bytes (two
 *            16-bit offsets from the peer's last cumulative ACK)
 *   b8       payload length (0..255), then the payload bytes.
 * After the records: 1 s, then every connection the application holds is
 * closed or aborted, 20 minutes of silence from the peer, and pool use
 * must be back at the baseline (the listener); then deinit and every pool
 * at zero.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_env.h"

#define TCP_APPS 16

/* The peer's view of one connection. */
struct tpeer {
    uint16_t lport, pport;      /* the stack's port, the peer's */
    uint32_t iss;               /* the peer's ISS */
    uint32_t stack_nxt;         /* highest sequence number the stack sent + its length */
    uint32_t stack_ack;         /* last ACK the stack sent */
    uint32_t peer_acked;        /* last ACK the peer sent */
    uint32_t ts_recent;         /* the stack's last TSval */
    uint8_t synced;             /* stack_nxt known */
    uint8_t acked;              /* stack_ack known */
};

struct tapp {
    struct wisp_tcp_pcb *pcb;
    uint8_t refuse;
};

struct tcp_fx {
    struct fz_env e;
    struct tpeer pc[4];
    struct tapp app[TCP_APPS];
    uint32_t clock;             /* the peer's TSval clock */
    int verbose;                /* FUZZ_VERBOSE: trace the segments */
};

static struct tcp_fx tfx;

static const uint8_t tcp_rom[4096] = { 'w', 'i', 's', 'p' }; /* zero-copy write source */

static struct tapp *tcp_app_of(struct wisp_tcp_pcb *pcb)
{
    unsigned i;
    for (i = 0; i < TCP_APPS; i++) {
        if (tfx.app[i].pcb == pcb) {
            return &tfx.app[i];
        }
    }
    return NULL;
}

static void tcp_err_cb(void *arg, wisp_err_t err)
{
    struct tapp *a = (struct tapp *)arg;
    (void)err;
    a->pcb = NULL;
}

static wisp_err_t tcp_recv_cb(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct tapp *a = (struct tapp *)arg;
    (void)err;
    if (p == NULL) {
        return WISP_OK;
    }
    if (a->refuse) {
        return WISP_ERR_MEM;
    }
    wisp_tcp_recved(pcb, p->tot_len);
    wisp_pbuf_free(p);
    return WISP_OK;
}

static wisp_err_t tcp_sent_cb(void *arg, struct wisp_tcp_pcb *pcb, uint32_t len)
{
    (void)arg;
    (void)pcb;
    (void)len;
    return WISP_OK;
}

static struct tapp *tcp_app_add(struct wisp_tcp_pcb *pcb)
{
    struct tapp *a = tcp_app_of(NULL);
    if (a == NULL) {
        return NULL;
    }
    a->pcb = pcb;
    a->refuse = 0;
    wisp_tcp_arg(pcb, a);
    wisp_tcp_recv(pcb, tcp_recv_cb);
    wisp_tcp_sent(pcb, tcp_sent_cb);
    wisp_tcp_err(pcb, tcp_err_cb);
    return a;
}

static wisp_err_t tcp_accept_cb(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    (void)arg;
    (void)err;
    return tcp_app_add(pcb) != NULL ? WISP_OK : WISP_ERR_MEM;
}

static wisp_err_t tcp_connected_cb(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    (void)arg;
    (void)pcb;
    (void)err;
    return WISP_OK;
}

/* Read what the stack sent: update the peer's view of each connection. */
static void tcp_observe(void)
{
    static uint8_t f[FZ_FRAME_MAX];
    struct fz_seg sg;
    int n;
    unsigned i;
    while ((n = fz_pop(&tfx.e, f, sizeof(f))) >= 0) {
        if (!fz_parse_tcp(f, n, &sg)) {
            continue;
        }
        if (tfx.verbose) {
            fprintf(stderr, "  stack -> %u: flags %02x seq %u ack %u wnd %u len %u\n", sg.dport, sg.flags,
                    (unsigned)sg.seq, (unsigned)sg.ack, sg.wnd, sg.len);
        }
        for (i = 0; i < 4; i++) {
            struct tpeer *c = &tfx.pc[i];
            uint32_t end = sg.seq + sg.len + ((sg.flags & FZ_SYN) ? 1u : 0u) + ((sg.flags & FZ_FIN) ? 1u : 0u);
            if (sg.dport != c->pport || (c->lport != 0 && sg.sport != c->lport)) {
                continue;
            }
            if (sg.flags & FZ_RST) {
                break;
            }
            c->lport = sg.sport;
            if (!c->synced || (sg.flags & FZ_SYN) || (int32_t)(end - c->stack_nxt) > 0) {
                c->stack_nxt = end;
            }
            c->synced = 1;
            if (sg.flags & FZ_ACK) {
                c->stack_ack = sg.ack;
                c->acked = 1;
            }
            if (sg.has_ts) {
                c->ts_recent = sg.tsval;
            }
            break;
        }
    }
}

/* The application's PCB for peer connection i, or NULL. */
static struct tapp *tcp_app_for(unsigned i)
{
    unsigned k;
    for (k = 0; k < TCP_APPS; k++) {
        wisp_ipaddr_t ip;
        uint16_t lport, rport;
        if (tfx.app[k].pcb == NULL) {
            continue;
        }
        wisp_tcp_local(tfx.app[k].pcb, &ip, &lport);
        wisp_tcp_remote(tfx.app[k].pcb, &ip, &rport);
        if (rport == tfx.pc[i].pport && (tfx.pc[i].lport == 0 || lport == tfx.pc[i].lport)) {
            return &tfx.app[k];
        }
    }
    return NULL;
}

static void tcp_action(unsigned i, unsigned act)
{
    static uint8_t pattern[2000];
    struct tapp *a = tcp_app_for(i);
    if (a == NULL || act == 0) {
        return;
    }
    switch (act) {
    case 1:
        memset(pattern, 'a' + (int)i, sizeof(pattern));
        (void)wisp_tcp_write(a->pcb, pattern, sizeof(pattern), WISP_TCP_WRITE_COPY);
        (void)wisp_tcp_output(a->pcb);
        break;
    case 2:
        (void)wisp_tcp_write(a->pcb, tcp_rom, 300, 0);
        break;
    case 3:
        if (wisp_tcp_close(a->pcb) == WISP_OK) {
            a->pcb = NULL;
        }
        break;
    case 4:
        (void)wisp_tcp_shutdown(a->pcb, false, true);
        break;
    case 5:
        wisp_tcp_abort(a->pcb); /* err callback clears the record */
        break;
    case 6:
        a->refuse = (uint8_t)!a->refuse;
        break;
    default:
        wisp_tcp_recv_retry(a->pcb);
        (void)wisp_tcp_output(a->pcb);
        break;
    }
}

static uint32_t tcp_seq_base(const struct tpeer *c)
{
    return c->acked ? c->stack_ack : c->iss;
}

int fuzz_tcp_one(const uint8_t *data, size_t size);

int fuzz_tcp_one(const uint8_t *data, size_t size)
{
    static uint8_t frame[2048];
    static const uint32_t adv[8] = { 0, 1, 10, 200, 1000, 5000, 60000, 600000 };
    struct fz_env *e = &tfx.e;
    struct wisp_tcp_pcb *pcb, *lpcb;
    wisp_err_t err;
    wisp_ipaddr_t peer;
    uint8_t synopt[20], setup = size > 0 ? data[0] : 0;
    uint8_t ol = 0;
    unsigned baseline, i;
    size_t off = 1, n;

    memset(tfx.pc, 0, sizeof(tfx.pc));
    memset(tfx.app, 0, sizeof(tfx.app));
    tfx.clock = 1000;
    tfx.verbose = getenv("FUZZ_VERBOSE") != NULL;
    fz_env_init(e, 2, 1);
    fz_arp_peer(e);
    pcb = wisp_tcp_new(e->s);
    if (pcb == NULL || wisp_tcp_bind(pcb, NULL, 80) != WISP_OK) {
        fz_fail("tcp setup");
    }
    lpcb = wisp_tcp_listen(pcb, 4, &err);
    if (lpcb == NULL) {
        fz_fail("listen");
    }
    wisp_tcp_accept(lpcb, tcp_accept_cb);
    baseline = wisp_stack_pools_in_use(e->s);

    tfx.pc[0].pport = 40000;
    tfx.pc[0].lport = 80;
    tfx.pc[0].iss = 0x10000000u;
    tfx.pc[1].pport = 5001;
    tfx.pc[1].iss = 0x30000000u;
    tfx.pc[2].pport = 40001;
    tfx.pc[2].lport = 80;
    tfx.pc[2].iss = 0x50000000u;
    tfx.pc[3].pport = 40002;
    tfx.pc[3].lport = 80;
    tfx.pc[3].iss = 0x70000000u;

    /* passive open from 40000 with the options of the setup byte */
    synopt[ol++] = 2;
    synopt[ol++] = 4;
    synopt[ol++] = 0x05;
    synopt[ol++] = 0xb4;
    if (setup & 2u) {
        synopt[ol++] = 4;
        synopt[ol++] = 2;
    }
    if (setup & 4u) {
        synopt[ol++] = 3;
        synopt[ol++] = 3;
        synopt[ol++] = 7;
    }
    if (setup & 1u) {
        synopt[ol++] = 8;
        synopt[ol++] = 10;
        wisp_wr32(synopt + ol, tfx.clock);
        wisp_wr32(synopt + ol + 4, 0);
        ol = (uint8_t)(ol + 8);
    }
    n = fz_tcp_frame(frame, 40000, 80, tfx.pc[0].iss, 0, FZ_SYN, 65535, synopt, ol, NULL, 0);
    fz_inject(e, frame, n);
    tcp_observe();
    if (!tfx.pc[0].synced) {
        fz_fail("no SYN-ACK");
    }
    ol = 0;
    if (setup & 1u) {
        synopt[ol++] = 1;
        synopt[ol++] = 1;
        synopt[ol++] = 8;
        synopt[ol++] = 10;
        wisp_wr32(synopt + ol, tfx.clock);
        wisp_wr32(synopt + ol + 4, tfx.pc[0].ts_recent);
        ol = (uint8_t)(ol + 8);
    }
    tfx.pc[0].peer_acked = tfx.pc[0].stack_nxt;
    n = fz_tcp_frame(frame, 40000, 80, tfx.pc[0].iss + 1u, tfx.pc[0].stack_nxt, FZ_ACK, 65535, synopt, ol, NULL, 0);
    fz_inject(e, frame, n);
    tcp_observe();
    if (tcp_app_for(0) == NULL) {
        fz_fail("handshake: not accepted");
    }
    /* active open to the peer's 5001 */
    pcb = wisp_tcp_new(e->s);
    peer = wisp_ipaddr4(fz_ip_peer());
    if (pcb == NULL || tcp_app_add(pcb) == NULL || wisp_tcp_connect(pcb, &peer, 5001, tcp_connected_cb) != WISP_OK) {
        fz_fail("connect");
    }
    tcp_observe();

    while (off + 9 <= size) {
        const uint8_t *h = data + off;
        unsigned ci = h[1] & 3u;
        struct tpeer *c = &tfx.pc[ci];
        uint8_t opt[40 + 12 + 12];
        uint8_t rawlen = (uint8_t)(h[7] & 0x3fu), plen;
        uint32_t seq, ack;
        off += 9;
        plen = h[8];
        if (rawlen > 40) {
            rawlen = 40;
        }
        ol = 0;
        if (h[7] & 0x40u) {
            opt[ol++] = 1;
            opt[ol++] = 1;
            opt[ol++] = 8;
            opt[ol++] = 10;
            tfx.clock += 1;
            wisp_wr32(opt + ol, tfx.clock);
            wisp_wr32(opt + ol + 4, c->ts_recent);
            ol = (uint8_t)(ol + 8);
        }
        if ((h[7] & 0x80u) && off + 4 <= size) {
            opt[ol++] = 1;
            opt[ol++] = 1;
            opt[ol++] = 5;
            opt[ol++] = 10;
            wisp_wr32(opt + ol, c->peer_acked + wisp_rd16(data + off));
            wisp_wr32(opt + ol + 4, c->peer_acked + wisp_rd16(data + off + 2));
            ol = (uint8_t)(ol + 8);
            off += 4;
        }
        if (rawlen > size - off) {
            rawlen = (uint8_t)(size - off);
        }
        if (ol + rawlen > 40) {
            rawlen = (uint8_t)(40 - ol);
        }
        memcpy(opt + ol, data + off, rawlen);
        ol = (uint8_t)(ol + rawlen);
        off += (size_t)(h[7] & 0x3fu) < size - off ? (size_t)(h[7] & 0x3fu) : size - off;
        if (plen > size - off) {
            plen = (uint8_t)(size - off);
        }
        seq = tcp_seq_base(c) + (uint32_t)(int32_t)(int16_t)wisp_rd16(h + 2);
        ack = c->stack_nxt + (uint32_t)(int32_t)(int16_t)wisp_rd16(h + 4);
        if (h[0] & FZ_ACK) {
            c->peer_acked = ack;
        }
        n = fz_tcp_frame(frame, c->pport, c->lport != 0 ? c->lport : 1, seq, ack, h[0], (uint16_t)(h[6] * 257u), opt,
                         ol, data + off, plen);
        off += plen;
        if (tfx.verbose) {
            fprintf(stderr, "peer %u -> stack: flags %02x seq %u ack %u wnd %u len %u; action %u, +%u ms\n", c->pport,
                    h[0], (unsigned)seq, (unsigned)ack, h[6] * 257u, plen, (h[1] >> 2) & 7u, (unsigned)adv[h[1] >> 5]);
        }
        fz_inject(e, frame, n);
        tcp_observe();
        tcp_action(ci, (h[1] >> 2) & 7u);
        if (adv[h[1] >> 5] > 0) {
            fz_advance(e, adv[h[1] >> 5]);
        }
        tcp_observe();
    }

    fz_advance(e, 1000);
    if (getenv("FUZZ_VERBOSE") != NULL) {
        for (i = 0; i < TCP_APPS; i++) {
            if (tfx.app[i].pcb != NULL) {
                struct wisp_tcp_info inf;
                wisp_tcp_get_info(tfx.app[i].pcb, &inf);
                fprintf(stderr, "app %u: %s rx %u acked %u retx %u fastrec %u\n", i,
                        wisp_tcp_state_str(wisp_tcp_state(tfx.app[i].pcb)), (unsigned)inf.bytes_received,
                        (unsigned)inf.bytes_acked, (unsigned)inf.retransmits, (unsigned)inf.fast_recoveries);
            }
        }
    }
    for (i = 0; i < TCP_APPS; i++) {
        struct wisp_tcp_pcb *p = tfx.app[i].pcb;
        if (p == NULL) {
            continue;
        }
        if ((setup & 8u) && wisp_tcp_close(p) == WISP_OK) {
            tfx.app[i].pcb = NULL;
        } else {
            wisp_tcp_abort(p);
        }
    }
    fz_advance(e, 20u * 60u * 1000u);
    fz_clear(e);
    fz_check_pools(e, baseline, "tcp: after close/abort and 20 min");
    (void)wisp_tcp_close(lpcb);
    fz_env_fini(e);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_tcp_one(data, size);
}
#endif
