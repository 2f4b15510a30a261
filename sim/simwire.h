/**
 * @file simwire.h
 * The simulated network (host library): any number of wisp stack instances
 * in one process, joined by one virtual Ethernet segment, running on
 * virtual time.
 *
 * The segment is a hub: every frame a port sends reaches every other port
 * (the stacks filter by MAC address). Each node is one heap-allocated
 * struct wisp_stack with one Ethernet interface "eth0" whose MAC address is
 * 02:00:00:00:00:NN (NN = 1, 2, ... in order of sim_node_add).
 *
 * Virtual time: the world keeps a clock in microseconds; every stack's
 * clock callback returns world_us / 1000. The run loop never sleeps: it
 * jumps straight to the next event, which is the earliest of a frame
 * delivery, a port finishing serialising a frame, and every stack's
 * wisp_stack_next_deadline(). A run is therefore fast and, since all
 * randomness comes from the world's generator seeded by the world seed,
 * reproducible from its seed (each stack gets its own seed derived from
 * the world seed and its node number).
 *
 * Link model (struct sim_link_cfg, changeable at any time):
 *  - bandwidth: a port serialises one frame at a time, frame bytes * 8 /
 *    bandwidth; while it is busy its device transmit returns
 *    WISP_ERR_WOULDBLOCK so the stack queues frames in its emergency and
 *    common queues; when the frame is out, the sim calls
 *    wisp_dev_tx_ready(). Bandwidth 0 = infinite (no serialisation delay,
 *    the device is never busy).
 *  - latency: propagation delay added to every frame.
 *  - loss: the frame is dropped on the wire (it reaches no port).
 *  - duplication: a second copy is delivered 1 us after the first.
 *  - reordering: a copy gets an extra delay, uniformly 1..3 x latency plus
 *    1 ms, so it arrives after frames sent later.
 *  - corruption: 1..3 bits of a copy are flipped (see corrupt_any).
 *  - MTU: frames longer than mtu + 14 bytes are dropped and counted.
 * Short frames are zero-padded to 60 bytes like a real NIC does (RFC 894).
 * Impairments are decided when a frame enters the wire, loss once per
 * frame, reordering and corruption per delivered copy.
 *
 * Capture: sim_pcap_open() records every frame as it enters the wire
 * (before impairments, padded), with virtual timestamps, using the generic
 * capture writer of src/netif/pcapdev.c.
 *
 * Safety: every run is bounded in virtual time (max_us) and in the number
 * of events it may process (sim_set_max_events, default 20 million); a run
 * that exceeds the event budget, or processes a million events without the
 * clock moving, stops and marks the world failed (sim_error()).
 *
 * Who may call: one thread; all stacks run in the caller's context, which
 * is their core context.
 */
#ifndef WISP_SIMWIRE_H
#define WISP_SIMWIRE_H

#include <stdio.h>
#include "wisp/wisp.h"

struct sim_world;
struct sim_node;

/** A small deterministic generator (xoshiro256**, seeded by splitmix64).
 *  Public so that tests can draw their own reproducible data. */
struct sim_rng {
    uint64_t s[4];
};
/** Seed r from seed (any value, 0 included). */
void sim_rng_seed(struct sim_rng *r, uint64_t seed);
/** Next 64 random bits. */
uint64_t sim_rng_next(struct sim_rng *r);
/** Uniform value in [0, n) (n > 0; 0 when n == 0). */
uint64_t sim_rng_below(struct sim_rng *r, uint64_t n);
/** Uniform double in [0, 1). */
double sim_rng_double(struct sim_rng *r);

/** Link parameters of the whole segment. */
struct sim_link_cfg {
    uint64_t bandwidth_bps;   /**< bit/s per sending port; 0 = infinite */
    uint32_t latency_us;      /**< propagation delay */
    double loss;              /**< probability a frame is lost, 0..1 */
    double dup;               /**< probability a frame is delivered twice */
    double reorder;           /**< probability a copy is delayed past later frames */
    double corrupt;           /**< probability 1..3 bits of a copy are flipped */
    /** false (default): the flipped bits all go the same direction (all
     *  0->1 or all 1->0). Up to three such flips always change the
     *  Internet checksum (the ones'-complement sum changes by a sum of at
     *  most three equal-signed powers of two, never a multiple of 0xFFFF),
     *  standing in for the Ethernet FCS guarantee that a real link would
     *  give. true: any bits, so a few corruptions are invisible to the
     *  Internet checksum (opposite flips at the same bit of two words). */
    bool corrupt_any;
    uint16_t mtu;             /**< largest IP packet; frames > mtu + 14 dropped */
    /** A router hop with a smaller MTU on the way (0 = none, the default):
     *  an IPv4 packet longer than path_mtu with DF set is dropped on the
     *  wire (pmtu_dropped) and, when path_mtu_icmp, answered with an ICMP
     *  "fragmentation needed" (RFC 1191 §4: type 3 code 4, next-hop MTU
     *  path_mtu, quoting the IP header and 8 bytes) from path_mtu_router
     *  to the sender (pmtu_icmp); path_mtu_icmp false = a black hole. A
     *  packet without DF passes unchanged (it stands for a router that
     *  fragments and a receiver that reassembles). */
    uint16_t path_mtu;
    bool path_mtu_icmp;
    wisp_ip4_t path_mtu_router;
};

/** The defaults: infinite bandwidth, 100 us latency, no impairment,
 *  MTU 1500. */
void sim_link_defaults(struct sim_link_cfg *cfg);

/** World counters (frames are whole frames on the wire). */
struct sim_counters {
    uint64_t sent;          /**< frames accepted by a port's transmit */
    uint64_t bytes;         /**< bytes of those frames (after padding) */
    uint64_t delivered;     /**< frame copies handed to a receiving stack */
    uint64_t lost;          /**< frames dropped by the loss probability */
    uint64_t duplicated;    /**< extra copies made by duplication */
    uint64_t reordered;     /**< copies given the reordering delay */
    uint64_t corrupted;     /**< copies with flipped bits */
    uint64_t oversize;      /**< frames dropped for exceeding mtu + 14 */
    uint64_t pmtu_dropped;  /**< DF packets dropped by the path_mtu hop */
    uint64_t pmtu_icmp;     /**< "fragmentation needed" messages it sent */
    uint64_t rx_nomem;      /**< copies dropped: receiving stack had no rx pbuf */
    uint64_t wouldblock;    /**< transmit calls refused because the port was busy */
    uint64_t events;        /**< events processed by the run loop */
};

/** Called for every frame as it enters the wire (before impairments):
 *  the sending node, the frame bytes (padded) and the virtual time. */
typedef void (*sim_tap_fn)(void *arg, struct sim_node *from, const uint8_t *frame, size_t len, uint64_t t_us);

/* ------------------------------------------------------------- world */

/** A new world at virtual time 0 with default link parameters; NULL when
 *  out of memory. */
struct sim_world *sim_world_new(uint64_t seed);
/** Deinitialise every stack, free every node and queued frame, close the
 *  capture. Returns the number of pool elements that were still in use in
 *  the stacks after wisp_stack_deinit (0 = no leak; each leaking pool is
 *  also reported on stderr). NULL is accepted (returns 0). */
unsigned sim_world_free(struct sim_world *w);

/** Replace / read the link parameters (take effect for frames entering
 *  the wire from now on). */
void sim_set_link(struct sim_world *w, const struct sim_link_cfg *cfg);
void sim_get_link(const struct sim_world *w, struct sim_link_cfg *cfg);

/** Current virtual time in microseconds. */
uint64_t sim_now_us(const struct sim_world *w);
/** Move the clock of an empty world (before the first sim_node_add), e.g.
 *  to test stack clock wrap-around. Returns false when nodes exist. */
bool sim_set_clock(struct sim_world *w, uint64_t us);
/** The world's seed. */
uint64_t sim_seed(const struct sim_world *w);

/** The world's counters. */
const struct sim_counters *sim_counters(const struct sim_world *w);

/** Install a tap (NULL to remove). */
void sim_set_tap(struct sim_world *w, sim_tap_fn fn, void *arg);

/** Event budget of each run call (sim_run_for / sim_run_until); 0 restores
 *  the default (20 million). */
void sim_set_max_events(struct sim_world *w, uint64_t max_events);
/** NULL while all is well; else a description of why a run was aborted
 *  (event budget exceeded, time stuck). A failed world runs no more. */
const char *sim_error(const struct sim_world *w);

/** Record every frame entering the wire into a pcap file at path
 *  (LINKTYPE_ETHERNET, virtual timestamps), replacing an open capture.
 *  Returns 0, or -1 when the file cannot be created. */
int sim_pcap_open(struct sim_world *w, const char *path);
/** Stop capturing and close the file (no-op when none is open). */
void sim_pcap_close(struct sim_world *w);

/* ------------------------------------------------------------- nodes */

/** Add a node: a stack (initialised with wisp_stack_init, clock = virtual
 *  time, seed derived from the world seed) with one Ethernet interface
 *  "eth0", MAC 02:00:00:00:00:NN, MTU = the link MTU at this moment,
 *  address ip_cidr ("198.18.0.1/24"), gateway gw ("198.18.0.254", or
 *  NULL for none), administratively up with link up (which sends a
 *  gratuitous ARP onto the wire). name is copied (for messages). Returns
 *  NULL on a malformed address, out of memory, or after 254 nodes. */
struct sim_node *sim_node_add(struct sim_world *w, const char *name, const char *ip_cidr, const char *gw);
/** Number of nodes, and node i (0-based, in order of addition; NULL past
 *  the end). */
unsigned sim_node_count(const struct sim_world *w);
struct sim_node *sim_node_at(const struct sim_world *w, unsigned i);

/** The node's stack, interface, address (network order), MAC and name. */
struct wisp_stack *sim_stack(struct sim_node *n);
struct wisp_netif *sim_netif(struct sim_node *n);
wisp_ip4_t sim_ip(const struct sim_node *n);
const uint8_t *sim_mac(const struct sim_node *n);
const char *sim_name(const struct sim_node *n);
/** Plug (true) or unplug (false) the node's cable: an unplugged port
 *  neither sends nor receives, and the stack sees its link go down/up. */
void sim_node_set_link(struct sim_node *n, bool up);

/* --------------------------------------------------------------- run */

/** Run every event up to now + us and leave the clock there. Returns false
 *  when the world failed (see sim_error). */
bool sim_run_for(struct sim_world *w, uint64_t us);
/** Run until done(arg) returns true (checked before the first event and
 *  after each one) or max_us of virtual time have passed. Returns true when
 *  done, false on timeout or failure; on timeout the clock is at
 *  start + max_us. */
bool sim_run_until(struct sim_world *w, bool (*done)(void *arg), void *arg, uint64_t max_us);

/** Print the world counters and, for every node, its non-zero stack
 *  counters, interface statistics and pools (for test diagnostics). */
void sim_dump(const struct sim_world *w, FILE *f);

#endif /* WISP_SIMWIRE_H */
