/**
 * @file pcapdev.h
 * Capture wrapper: a device decorator (see netif.h) that records every frame
 * it passes, in both directions, as a classic pcap stream (libpcap format
 * 2.4, LINKTYPE_ETHERNET, snaplen 65535) written through a user callback.
 *
 * The stream is written little-endian (magic d4 c3 b2 a1 on the wire), so
 * the bytes are the same on every target; every pcap reader accepts both
 * byte orders. Frame data is written straight from each pbuf of the chain
 * (one write call per buffer), so the wrapper needs no frame-sized buffer.
 *
 * Which frames are recorded:
 *  - receive: every frame the lower device hands up, before passing it on;
 *  - transmit: every frame the lower device accepted (WISP_OK). A frame the
 *    lower device refused with WISP_ERR_WOULDBLOCK is recorded when it is
 *    sent again later, so each frame on the wire appears exactly once.
 *
 * Usage:
 * @code
 *   struct wisp_pcapdev pc;
 *   wisp_pcapdev_init(&pc, s, &driver.dev, my_write, my_file, NULL, NULL);
 *   wisp_netif_add_eth(s, &nif, "eth0", &pc.dev, mac, 1500);
 * @endcode
 * Who may call: the core context only (like every device function).
 */
#ifndef WISP_PCAPDEV_H
#define WISP_PCAPDEV_H

#include "wisp/netif.h"

/** pcap constants (libpcap file format, "LINKTYPE_ETHERNET" = 1). */
#define WISP_PCAP_MAGIC 0xa1b2c3d4u
#define WISP_PCAP_VERSION_MAJOR 2u
#define WISP_PCAP_VERSION_MINOR 4u
#define WISP_PCAP_SNAPLEN 65535u
#define WISP_PCAP_LINKTYPE_ETHERNET 1u
#define WISP_PCAP_GLOBAL_HDR_LEN 24u
#define WISP_PCAP_RECORD_HDR_LEN 16u

/** Write len bytes of the capture stream; return 0 on success, anything
 *  else on failure (capture then stops, see wisp_pcapdev.failed). */
typedef int (*wisp_pcap_write_fn)(void *ctx, const void *buf, size_t len);
/** Timestamp of a record in microseconds (any epoch; wall clock is nicest
 *  for readers). */
typedef uint64_t (*wisp_pcap_time_fn)(void *ctx);

struct wisp_pcapdev;

/** Set up pc above the device lower (wisp_dev_wrap) and write the pcap
 *  global header. time_us may be NULL (stack clock). Returns WISP_ERR_ARG
 *  on NULL arguments, WISP_ERR_IF when the header could not be written
 *  (the wrapper is then still installed and passes frames without
 *  recording them). */
wisp_err_t wisp_pcapdev_init(struct wisp_pcapdev *pc, struct wisp_stack *s, struct wisp_dev *lower,
                             wisp_pcap_write_fn write, void *write_ctx, wisp_pcap_time_fn time_us, void *time_ctx);

/** Record one frame now (as if it had passed): used by the wrapper itself,
 *  public for tools that want to log frames of their own. Does not take
 *  the caller's reference. Returns true when the record was written. */
bool wisp_pcapdev_record(struct wisp_pcapdev *pc, const struct wisp_pbuf *frame);

/* the layout of the structures above (private tier) */
#include "wisp/priv/pcapdev.h"

#endif /* WISP_PCAPDEV_H */
