/**
 * @file lan9118.c
 * SMSC LAN9118 driver (lan9118.h). Register facts: the LAN9118 data sheet
 * and QEMU's model (hw/net/lan9118.c) as checked in MPS2-AN385.md; 32-bit
 * accesses only; FIFO data is little-endian (frame byte 0 in bits 7:0).
 */
#define WISP_PRIVATE_ACCESS 1 /* port code (the check-tiers rule for ports/) */
#include "lan9118.h"

#include <string.h>

/* direct registers */
#define RX_DATA 0x00u
#define TX_DATA 0x20u
#define RX_STATUS 0x40u
#define TX_STATUS 0x48u
#define ID_REV 0x50u
#define IRQ_CFG 0x54u
#define INT_STS 0x58u
#define INT_EN 0x5Cu
#define BYTE_TEST 0x64u
#define FIFO_INT 0x68u
#define RX_CFG 0x6Cu
#define TX_CFG 0x70u
#define HW_CFG 0x74u
#define RX_FIFO_INF 0x7Cu
#define TX_FIFO_INF 0x80u
#define PMT_CTRL 0x84u
#define MAC_CSR_CMD 0xA4u
#define MAC_CSR_DATA 0xA8u
#define E2P_CMD 0xB0u

/* bits */
#define IRQ_CFG_EN 0x100u      /* IRQ_EN */
#define IRQ_CFG_POL 0x10u      /* active high */
#define IRQ_CFG_TYPE 0x01u     /* push-pull */
#define INT_RSFL 0x08u         /* RX status FIFO level */
#define HW_CFG_SRST 0x01u
#define PMT_READY 0x01u
#define TX_CFG_ON 0x02u
#define TX_CFG_SAO 0x04u       /* TX status may overrun (we pop it anyway) */
#define E2P_MAC_LOADED 0x100u  /* bit 8 (pitfall 1: not bit 4) */
#define CSR_BUSY 0x80000000u
#define CSR_READ 0x40000000u
#define TXA_FIRST 0x2000u
#define TXA_LAST 0x1000u
#define RXS_ERROR 0x8000u
#define TXS_ERROR 0x8000u

/* indirect MAC registers */
#define MAC_CR 1u
#define MAC_ADDRH 2u
#define MAC_ADDRL 3u
#define MAC_MII_ACC 6u
#define MAC_MII_DATA 7u
#define MAC_CR_RXALL 0x80000000u
#define MAC_CR_FDPX 0x00100000u
#define MAC_CR_MCPAS 0x00080000u
#define MAC_CR_TXEN 0x8u
#define MAC_CR_RXEN 0x4u

/* PHY (internal, address 1) */
#define PHY_ADDR 1u
#define PHY_BMCR 0u
#define PHY_BMSR 1u
#define PHY_ANAR 4u

#define SPIN_MAX 100000u     /* bound of every register wait */
#define ETH_MIN_FRAME 60u    /* without FCS: the model does not pad (pitfall 2) */
#define ETH_MAX_FRAME 1518u  /* without FCS, room for one VLAN tag */

static uint32_t rd(const struct lan9118 *d, uint32_t off)
{
    return *(volatile uint32_t *)(d->base + off);
}

static void wr(const struct lan9118 *d, uint32_t off, uint32_t v)
{
    *(volatile uint32_t *)(d->base + off) = v;
}

static bool csr_wait(const struct lan9118 *d)
{
    uint32_t i;
    for (i = 0; i < SPIN_MAX; i++) {
        if ((rd(d, MAC_CSR_CMD) & CSR_BUSY) == 0) {
            return true;
        }
    }
    return false;
}

static uint32_t mac_rd(const struct lan9118 *d, uint32_t idx)
{
    wr(d, MAC_CSR_CMD, CSR_BUSY | CSR_READ | idx);
    (void)csr_wait(d);
    return rd(d, MAC_CSR_DATA);
}

static void mac_wr(const struct lan9118 *d, uint32_t idx, uint32_t v)
{
    wr(d, MAC_CSR_DATA, v);
    wr(d, MAC_CSR_CMD, CSR_BUSY | idx);
    (void)csr_wait(d);
}

static bool mii_wait(const struct lan9118 *d)
{
    uint32_t i;
    for (i = 0; i < SPIN_MAX; i++) {
        if ((mac_rd(d, MAC_MII_ACC) & 1u) == 0) {
            return true;
        }
    }
    return false;
}

static uint16_t phy_rd(const struct lan9118 *d, uint32_t reg)
{
    mac_wr(d, MAC_MII_ACC, (PHY_ADDR << 11) | (reg << 6) | 1u);
    (void)mii_wait(d);
    return (uint16_t)mac_rd(d, MAC_MII_DATA);
}

static void phy_wr(const struct lan9118 *d, uint32_t reg, uint16_t v)
{
    mac_wr(d, MAC_MII_DATA, v);
    mac_wr(d, MAC_MII_ACC, (PHY_ADDR << 11) | (reg << 6) | 2u | 1u);
    (void)mii_wait(d);
}

/* ---------------------------------------------------------------- TX */

/* Write the frame's bytes (chain) as little-endian words, padded with
 * zeros to ETH_MIN_FRAME. */
static void tx_copy(const struct lan9118 *d, const struct wisp_pbuf *frame, uint32_t padded)
{
    const struct wisp_pbuf *q;
    uint32_t w = 0, n = 0, i;
    for (q = frame; q != NULL; q = q->next) {
        const uint8_t *b = q->payload;
        for (i = 0; i < q->len; i++) {
            w |= (uint32_t)b[i] << (8u * (n & 3u));
            if ((++n & 3u) == 0) {
                wr(d, TX_DATA, w);
                w = 0;
            }
        }
    }
    while (n < padded) {
        if ((++n & 3u) == 0) {
            wr(d, TX_DATA, w);
            w = 0;
        }
    }
    if ((n & 3u) != 0) {
        wr(d, TX_DATA, w);
    }
}

static void tx_status_pop(struct lan9118 *d)
{
    uint32_t i;
    for (i = 0; i < 512u && ((rd(d, TX_FIFO_INF) >> 16) & 0xFFu) != 0; i++) {
        if (rd(d, TX_STATUS) & TXS_ERROR) {
            d->st.tx_errors++;
        }
    }
}

static wisp_err_t lan_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct lan9118 *d = (struct lan9118 *)dev->ctx;
    uint32_t len = frame->tot_len;
    uint32_t padded = len < ETH_MIN_FRAME ? ETH_MIN_FRAME : len;
    uint32_t need = 8u + ((padded + 3u) & ~3u); /* command words + data */
    uint32_t room;

    if (len > ETH_MAX_FRAME || len < 14u) {
        d->st.tx_errors++;
        return WISP_ERR_VAL;
    }
    tx_status_pop(d);
    room = (rd(d, TX_FIFO_INF) & 0xFFFFu) * d->tx_room_unit;
    if (room < need) {
        d->st.tx_busy++;
        d->tx_blocked = true;
        return WISP_ERR_WOULDBLOCK;
    }
    wr(d, TX_DATA, TXA_FIRST | TXA_LAST | padded);        /* command A: one segment */
    wr(d, TX_DATA, ((d->st.tx_frames & 0xFFFFu) << 16) | padded); /* command B: tag, length */
    tx_copy(d, frame, padded); /* sent when the last word is written */
    d->st.tx_frames++;
    d->st.tx_bytes += padded;
    return WISP_OK;
}

static const struct wisp_dev_ops lan_ops = { lan_transmit, NULL, NULL };

/* ---------------------------------------------------------------- RX */

static void rx_drain(const struct lan9118 *d, uint32_t words)
{
    uint32_t i;
    for (i = 0; i < words; i++) {
        (void)rd(d, RX_DATA); /* not RX_DP_CTRL fast-forward: it leaks FIFO space in the model (pitfall 3) */
    }
}

/* Copy flen bytes of the frame into p (a chain of flen bytes), then read
 * out the rest of the words (the FCS). */
static void rx_copy(const struct lan9118 *d, struct wisp_pbuf *p, uint32_t flen, uint32_t words)
{
    struct wisp_pbuf *q = p;
    uint32_t got = 0, qoff = 0, i = 0, b;
    for (; i < words && got < flen; i++) {
        uint32_t w = rd(d, RX_DATA);
        if (q != NULL && qoff + 4u <= q->len) { /* whole word into this buffer */
            memcpy(q->payload + qoff, &w, 4);    /* the host is little-endian too */
            qoff += 4u;
            got += 4u;
            continue;
        }
        for (b = 0; b < 4u && got < flen; b++, got++) {
            while (q != NULL && qoff >= q->len) {
                q = q->next;
                qoff = 0;
            }
            if (q == NULL) {
                break;
            }
            q->payload[qoff++] = (uint8_t)(w >> (8u * b));
        }
    }
    rx_drain(d, words - i);
}

static void rx_one(struct lan9118 *d)
{
    uint32_t sts = rd(d, RX_STATUS);
    uint32_t len = (sts >> 16) & 0x3FFFu; /* with the 4-byte FCS */
    uint32_t words = (len + 3u) / 4u;
    uint32_t flen;
    struct wisp_pbuf *p;

    if ((sts & RXS_ERROR) != 0 || len < 14u + 4u || len > ETH_MAX_FRAME + 4u) {
        d->st.rx_errors++;
        rx_drain(d, words);
        return;
    }
    flen = len - 4u;
    p = wisp_pbuf_alloc_rx(d->stack, (uint16_t)flen);
    if (p == NULL) {
        d->st.rx_nomem++; /* the stack counts nothing here: ours is the named drop */
        rx_drain(d, words);
        return;
    }
    rx_copy(d, p, flen, words);
    d->st.rx_frames++;
    d->st.rx_bytes += flen;
    wisp_dev_input(&d->dev, p);
}

uint32_t lan9118_rx_fifo_used(struct lan9118 *d)
{
    return rd(d, RX_FIFO_INF) & 0xFFFFu;
}

unsigned lan9118_service(struct lan9118 *d, unsigned budget)
{
    unsigned n = 0;
    uint32_t used;

    d->pending = 0;
    /* acknowledge first, then look: a frame that arrives after this raises
     * RSFL again */
    wr(d, INT_STS, INT_RSFL);
    used = lan9118_rx_fifo_used(d);
    if (used > d->st.rx_fifo_high) {
        d->st.rx_fifo_high = used;
    }
    while (n < budget && ((rd(d, RX_FIFO_INF) >> 16) & 0xFFu) != 0) {
        rx_one(d);
        n++;
    }
    tx_status_pop(d);
    if (d->tx_blocked) {
        d->tx_blocked = false;
        wisp_dev_tx_ready(&d->dev); /* may transmit (and block again) */
    }
    if (((rd(d, RX_FIFO_INF) >> 16) & 0xFFu) != 0 || d->tx_blocked) {
        d->pending = 1; /* budget used up: the caller comes back without sleeping */
    }
    wr(d, INT_EN, INT_RSFL);
    return n;
}

void lan9118_isr(struct lan9118 *d)
{
    wr(d, INT_EN, 0); /* mask at the chip: the level line drops until lan9118_service */
    d->pending = 1;
    d->st.irqs++;
    if (d->signal != NULL) {
        d->signal(d->signal_ctx);
    }
}

void lan9118_irq_start(struct lan9118 *d)
{
    wr(d, INT_STS, 0xFFFFFFFFu);
    /* active-high push-pull: with IRQ_CFG = 0 the model drives the line
     * active-low, a permanent interrupt (pitfall 4) */
    wr(d, IRQ_CFG, IRQ_CFG_EN | IRQ_CFG_POL | IRQ_CFG_TYPE);
    wr(d, INT_EN, INT_RSFL);
}

bool lan9118_link_up(struct lan9118 *d)
{
    return (phy_rd(d, PHY_BMSR) & 0x4u) != 0;
}

static bool wait_reset(const struct lan9118 *d)
{
    uint32_t i;
    for (i = 0; i < SPIN_MAX; i++) {
        if ((rd(d, HW_CFG) & HW_CFG_SRST) == 0 && (rd(d, PMT_CTRL) & PMT_READY) != 0) {
            return true;
        }
    }
    return false;
}

static void read_mac(struct lan9118 *d, const uint8_t fallback[6])
{
    uint32_t lo, hi;
    d->mac_from_eeprom = (rd(d, E2P_CMD) & E2P_MAC_LOADED) != 0;
    if (!d->mac_from_eeprom) {
        lo = (uint32_t)fallback[0] | ((uint32_t)fallback[1] << 8) | ((uint32_t)fallback[2] << 16) |
             ((uint32_t)fallback[3] << 24);
        hi = (uint32_t)fallback[4] | ((uint32_t)fallback[5] << 8);
        mac_wr(d, MAC_ADDRL, lo);
        mac_wr(d, MAC_ADDRH, hi);
    }
    lo = mac_rd(d, MAC_ADDRL);
    hi = mac_rd(d, MAC_ADDRH);
    d->mac[0] = (uint8_t)lo;
    d->mac[1] = (uint8_t)(lo >> 8);
    d->mac[2] = (uint8_t)(lo >> 16);
    d->mac[3] = (uint8_t)(lo >> 24);
    d->mac[4] = (uint8_t)hi;
    d->mac[5] = (uint8_t)(hi >> 8);
}

wisp_err_t lan9118_init(struct lan9118 *d, uintptr_t base, struct wisp_stack *s, const uint8_t fallback_mac[6])
{
    uint32_t i, room;
    memset(d, 0, sizeof *d);
    d->base = base;
    d->stack = s;
    d->dev.ops = &lan_ops;
    d->dev.ctx = d;
    if (rd(d, BYTE_TEST) != 0x87654321u || (rd(d, ID_REV) >> 16) != 0x0118u) {
        return WISP_ERR_VAL;
    }
    wr(d, HW_CFG, HW_CFG_SRST);
    if (!wait_reset(d)) {
        return WISP_ERR_TIMEOUT;
    }
    wr(d, INT_EN, 0);
    wr(d, INT_STS, 0xFFFFFFFFu);
    wr(d, IRQ_CFG, 0);
    read_mac(d, fallback_mac);
    /* PHY: reset, advertise 10/100 half/full + CSMA, auto-negotiate */
    phy_wr(d, PHY_BMCR, 0x8000u);
    phy_wr(d, PHY_ANAR, 0x01E1u);
    phy_wr(d, PHY_BMCR, 0x1200u);
    for (i = 0; i < SPIN_MAX && (phy_rd(d, PHY_BMSR) & 0x24u) != 0x24u; i++) {
    }
    if (i == SPIN_MAX) {
        return WISP_ERR_TIMEOUT;
    }
    wr(d, RX_CFG, 0);                                 /* no offset, no end padding */
    wr(d, FIFO_INT, rd(d, FIFO_INT) & ~0xFFu);        /* RSFL at >= 1 frame */
    wr(d, TX_CFG, TX_CFG_ON | TX_CFG_SAO);
    mac_wr(d, MAC_CR, (MAC_CR_TXEN | MAC_CR_RXEN | MAC_CR_FDPX | MAC_CR_MCPAS) & ~MAC_CR_RXALL);
    /* TX_FIFO_INF free space: bytes on the chip (about 4.5 KiB when empty),
     * words in QEMU's model (pitfall 6). Tell them apart on the empty FIFO. */
    room = rd(d, TX_FIFO_INF) & 0xFFFFu;
    d->tx_room_unit = room < 1536u ? 4u : 1u;
    return WISP_OK;
}
