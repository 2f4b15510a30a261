/**
 * @file pcapdev.c
 * Capture wrapper: records every frame passing a device chain as a classic
 * pcap stream (libpcap 2.4, LINKTYPE_ETHERNET) through a user write
 * callback. Portable core code: no stdio, no allocation, no frame-sized
 * buffers (frame data is written from each pbuf of the chain in turn).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/pcapdev.h"
#include "wisp/stack.h"

/* Little-endian field writers: the stream's byte order is fixed (the magic
 * tells readers which one we chose), so captures are identical on every
 * target. */
static void put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static bool pc_write(struct wisp_pcapdev *pc, const void *buf, size_t len)
{
    if (pc->failed) {
        return false;
    }
    if (pc->write(pc->write_ctx, buf, len) != 0) {
        pc->write_errors++;
        pc->failed = 1;   /* a half-written record would corrupt the rest */
        return false;
    }
    return true;
}

bool wisp_pcapdev_record(struct wisp_pcapdev *pc, const struct wisp_pbuf *frame)
{
    uint8_t hdr[WISP_PCAP_RECORD_HDR_LEN];
    uint64_t us;
    uint32_t incl, left;
    const struct wisp_pbuf *q;
    WISP_CORE_ASSERT_OWNER(pc->stack);

    if (pc == NULL || frame == NULL || pc->failed) {
        return false;
    }
    us = (pc->time_us != NULL) ? pc->time_us(pc->time_ctx) : (uint64_t)wisp_now(pc->stack) * 1000u;
    incl = WISP_MIN((uint32_t)frame->tot_len, (uint32_t)WISP_PCAP_SNAPLEN);
    put_le32(hdr + 0, (uint32_t)(us / 1000000u));   /* ts_sec */
    put_le32(hdr + 4, (uint32_t)(us % 1000000u));   /* ts_usec */
    put_le32(hdr + 8, incl);                        /* incl_len */
    put_le32(hdr + 12, frame->tot_len);             /* orig_len */
    if (!pc_write(pc, hdr, sizeof hdr)) {
        return false;
    }
    left = incl;
    for (q = frame; q != NULL && left > 0; q = q->next) {
        uint32_t n = WISP_MIN((uint32_t)q->len, left);
        if (n > 0 && !pc_write(pc, q->payload, n)) {
            return false;
        }
        left -= n;
    }
    return true;
}

static wisp_err_t pc_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct wisp_pcapdev *pc = (struct wisp_pcapdev *)dev->ctx;
    wisp_err_t err = wisp_dev_transmit_lower(dev, frame);

    /* Only frames the lower device took are on the wire; a refused frame
     * comes back later and is recorded then. The caller still holds its
     * reference, so the frame is intact to read here. */
    if (err == WISP_OK && wisp_pcapdev_record(pc, frame)) {
        pc->tx_records++;
    }
    return err;
}

static void pc_input(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct wisp_pcapdev *pc = (struct wisp_pcapdev *)dev->ctx;

    if (wisp_pcapdev_record(pc, frame)) {
        pc->rx_records++;
    }
    wisp_dev_input(dev, frame);   /* ownership passes up */
}

static void pc_tx_ready(struct wisp_dev *dev)
{
    wisp_dev_tx_ready(dev);
}

static const struct wisp_dev_ops pcapdev_ops = { pc_transmit, pc_input, pc_tx_ready };

wisp_err_t wisp_pcapdev_init(struct wisp_pcapdev *pc, struct wisp_stack *s, struct wisp_dev *lower,
                             wisp_pcap_write_fn write, void *write_ctx, wisp_pcap_time_fn time_us, void *time_ctx)
{
    uint8_t gh[WISP_PCAP_GLOBAL_HDR_LEN];
    WISP_CORE_ASSERT_OWNER(s);

    if (pc == NULL || s == NULL || lower == NULL || write == NULL) {
        return WISP_ERR_ARG;
    }
    memset(pc, 0, sizeof *pc);
    pc->dev.ops = &pcapdev_ops;
    pc->dev.ctx = pc;
    pc->stack = s;
    pc->write = write;
    pc->write_ctx = write_ctx;
    pc->time_us = time_us;
    pc->time_ctx = time_ctx;
    wisp_dev_wrap(&pc->dev, lower);

    /* libpcap global header: magic, version 2.4, thiszone 0, sigfigs 0,
     * snaplen, network (LINKTYPE_ETHERNET). */
    put_le32(gh + 0, WISP_PCAP_MAGIC);
    put_le16(gh + 4, WISP_PCAP_VERSION_MAJOR);
    put_le16(gh + 6, WISP_PCAP_VERSION_MINOR);
    put_le32(gh + 8, 0);
    put_le32(gh + 12, 0);
    put_le32(gh + 16, WISP_PCAP_SNAPLEN);
    put_le32(gh + 20, WISP_PCAP_LINKTYPE_ETHERNET);
    return pc_write(pc, gh, sizeof gh) ? WISP_OK : WISP_ERR_IF;
}
