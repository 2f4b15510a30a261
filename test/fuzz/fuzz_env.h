/**
 * @file fuzz_env.h
 * Shared environment of wisp's fuzz harnesses (test/fuzz/fuzz_*.c), built
 * both as libFuzzer targets (tools/fuzz.sh, clang -fsanitize=fuzzer) and
 * into the corpus replay test (test/unit/test_fuzz_corpus.c, plain cmocka
 * build): no libFuzzer or cmocka dependency here.
 *
 * One stack with a manual clock and one Ethernet netif (198.18.0.2/24,
 * gateway = the "peer" 198.18.0.1) whose device records the frames the
 * stack sends (a bounded ring of copies), frame builders with correct
 * checksums, and the leak checks: fz_check_pools() (pool use against a
 * baseline while the stack runs) and fz_env_fini() (every pool at zero
 * use after wisp_stack_deinit). A failed check prints what it saw and
 * calls abort(), which libFuzzer reports as a crash and the replay test as
 * a failure.
 *
 * Each harness exposes one entry point, int fuzz_<target>_one(data, size),
 * which builds a fresh stack for the input and tears it down; with
 * FUZZ_LIBFUZZER defined the file also defines LLVMFuzzerTestOneInput.
 */
#ifndef WISP_FUZZ_ENV_H
#define WISP_FUZZ_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "wisp/wisp.h"

#define FZ_REC_MAX 64u     /**< frames kept by the recorder (older ones are dropped) */
#define FZ_FRAME_MAX 1600u /**< bytes kept per recorded frame */

struct fz_env {
    struct wisp_stack *s;
    uint32_t now;
    struct wisp_netif nif;
    struct wisp_dev dev;
    uint8_t mac[6];
    uint8_t frame[FZ_REC_MAX][FZ_FRAME_MAX];
    uint16_t flen[FZ_REC_MAX];
    unsigned head, count;      /**< FIFO of recorded frames */
    unsigned long sent;        /**< frames transmitted in total */
};

/** 198.18.0.2 / 02:00:00:00:00:02 (the stack), 198.18.0.1 / ..:01 (peer). */
extern const uint8_t fz_mac_self[6], fz_mac_peer[6];
wisp_ip4_t fz_ip_self(void);
wisp_ip4_t fz_ip_peer(void);

/** Print the message (printf-like) and abort(). */
void fz_fail(const char *fmt, ...);

/** Set up e (the stack is allocated once per process and re-initialised):
 *  netif added, addressed (unless !addressed), up, link up; the
 *  gratuitous ARP is discarded. */
void fz_env_init(struct fz_env *e, uint64_t seed, int addressed);
/** Deinit the stack and check every pool is at zero use (fz_fail else). */
void fz_env_fini(struct fz_env *e);
/** fz_fail unless wisp_stack_pools_in_use() == baseline. */
void fz_check_pools(struct fz_env *e, unsigned baseline, const char *where);

/** Advance the clock by ms, running timers at their deadlines. */
void fz_advance(struct fz_env *e, uint32_t ms);
/** Inject one received frame (copied into receive pbufs); 0 when the
 *  receive pool is empty or len is 0 / above 65535. */
int fz_inject(struct fz_env *e, const uint8_t *frame, size_t len);
/** Pop the oldest recorded frame: its length (copied up to cap), or -1. */
int fz_pop(struct fz_env *e, uint8_t *buf, size_t cap);
void fz_clear(struct fz_env *e);
/** Preload the ARP cache with the peer. */
void fz_arp_peer(struct fz_env *e);

/* ------------------------------------------------------------ builders */
/** Ethernet + IPv4 (20-byte header, checksum filled) header at buf for a
 *  payload of len bytes; returns 34. */
size_t fz_eth_ip4(uint8_t *buf, const uint8_t dst_mac[6], wisp_ip4_t src, wisp_ip4_t dst, uint8_t proto,
                  uint16_t len);
/** A full Ethernet + IPv4 + UDP frame (checksum filled); returns its length
 *  (42 + len). buf must hold it. */
size_t fz_udp_frame(uint8_t *buf, const uint8_t dst_mac[6], wisp_ip4_t src, wisp_ip4_t dst, uint16_t sport,
                    uint16_t dport, const uint8_t *data, uint16_t len);
/** A full Ethernet + IPv4 + TCP frame from the peer to the stack: options
 *  (optlen rounded up to 4 with NOPs/EOL, at most 40) and payload; IP and
 *  TCP checksums filled. Returns its length. */
size_t fz_tcp_frame(uint8_t *buf, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags,
                    uint16_t wnd, const uint8_t *opt, uint8_t optlen, const uint8_t *data, uint16_t len);

#define FZ_FIN WISP_TCP_FLAG_FIN
#define FZ_SYN WISP_TCP_FLAG_SYN
#define FZ_RST WISP_TCP_FLAG_RST
#define FZ_PSH WISP_TCP_FLAG_PSH
#define FZ_ACK WISP_TCP_FLAG_ACK

/** A TCP segment the stack sent (parsed from a recorded frame). */
struct fz_seg {
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint8_t flags;
    uint16_t wnd;
    uint16_t len;   /**< payload bytes */
    uint32_t tsval; /**< TSval option, valid when has_ts */
    uint8_t has_ts;
};
/** Parse a recorded frame as an IPv4/TCP segment; 0 when it is not one. */
int fz_parse_tcp(const uint8_t *f, int n, struct fz_seg *sg);

/** Passive open on the stack's port from the peer's pport: injects a SYN
 *  (MSS 1460, no other options unless ts), reads the SYN-ACK and
 *  acknowledges it. *stack_nxt gets the stack's ISS + 1 (its next sequence
 *  number) and *peer_nxt the peer's; returns 1 on success. The frames sent
 *  meanwhile are popped. */
int fz_handshake(struct fz_env *e, uint16_t port, uint16_t pport, uint32_t peer_iss, uint32_t *stack_nxt,
                 uint32_t *peer_nxt);

#endif
