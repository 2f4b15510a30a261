/**
 * @file netif.c
 * Network interfaces, the device decorator chain, and the two transmit
 * queues (emergency and common) served in strict priority when the device
 * becomes free (the lwIP-analysis paper's §4.3 priority queues; full
 * citation in wisp/netif.h).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/stack.h"
#include "wisp/ethernet.h"

/* ---------------------------------------------------------- devices */

void wisp_dev_wrap(struct wisp_dev *w, struct wisp_dev *d)
{
    struct wisp_netif *nif = d->netif;
    WISP_CORE_ASSERT_OWNER(d->netif != NULL ? d->netif->stack : NULL);
    w->lower = d;
    w->upper = NULL;
    d->upper = w;
    w->netif = nif;
    if (nif != NULL && nif->dev == d) {
        nif->dev = w;
    }
}

static void netif_input(struct wisp_netif *nif, struct wisp_pbuf *frame)
{
    nif->st.rx_frames++;
    nif->st.rx_bytes += frame->tot_len;
    frame->if_idx = nif->index;
    if (nif->link != NULL) {
        nif->link->input(nif, frame);
    } else {
        nif->st.rx_drops++;
        wisp_pbuf_free(frame);
    }
}

void wisp_dev_input(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct wisp_stack *s = dev->netif != NULL ? dev->netif->stack : NULL;
    WISP_CORE_ASSERT_OWNER(s);
    if (s != NULL) {
        wisp_event_begin(s); /* one clock sample for the whole frame (stack.h) */
    }
    if (dev->upper != NULL) {
        dev->upper->ops->input(dev->upper, frame);
    } else if (dev->netif != NULL) {
        netif_input(dev->netif, frame);
    } else {
        wisp_pbuf_free(frame);
    }
    if (s != NULL) {
        wisp_event_end(s);
    }
}

static void netif_drain(struct wisp_netif *nif);

void wisp_dev_tx_ready(struct wisp_dev *dev)
{
    WISP_CORE_ASSERT_OWNER(dev->netif != NULL ? dev->netif->stack : NULL);
    if (dev->upper != NULL) {
        dev->upper->ops->tx_ready(dev->upper);
    } else if (dev->netif != NULL) {
        dev->netif->tx_busy = 0;
        netif_drain(dev->netif);
    }
}

wisp_err_t wisp_dev_transmit_lower(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    WISP_CORE_ASSERT_OWNER(dev->netif != NULL ? dev->netif->stack : NULL);
    if (dev->lower == NULL) {
        return WISP_ERR_IF;
    }
    return dev->lower->ops->transmit(dev->lower, frame);
}

/* --------------------------------------------------- transmit queues */

static struct wisp_txq *txq_of(struct wisp_netif *nif, unsigned prio)
{
    return prio == WISP_PRIO_EMERG ? &nif->txq_emerg : &nif->txq_common;
}

unsigned wisp_netif_txq_len(const struct wisp_netif *nif, unsigned prio)
{
    WISP_CORE_ASSERT_OWNER(nif->stack);
    return prio == WISP_PRIO_EMERG ? nif->txq_emerg.count : nif->txq_common.count;
}

static void txq_flush(struct wisp_txq *q)
{
    while (q->count > 0) {
        wisp_pbuf_free(q->slot[q->head]);
        q->slot[q->head] = NULL;
        q->head = (uint8_t)((q->head + 1u) % q->cap);
        q->count--;
    }
}

static WISP_NOINLINE void count_sent(struct wisp_netif *nif, const struct wisp_pbuf *frame)
{
    nif->st.tx_frames++;
    nif->st.tx_bytes += frame->tot_len;
    if (frame->prio == WISP_PRIO_EMERG) {
        nif->st.tx_emerg++;
    } else {
        nif->st.tx_common++;
    }
}

/* Serve the queues while the device takes frames: emergency first, the
 * common queue only while the emergency queue is empty (lwIP-analysis paper §4.3, see netif.h). */
static void netif_drain(struct wisp_netif *nif)
{
    struct wisp_stack *s = nif->stack;
    if (nif->tx_draining) {
        return; /* a driver called tx_ready from inside transmit */
    }
    nif->tx_draining = 1;
    while (!nif->tx_busy) {
        struct wisp_txq *q = nif->txq_emerg.count > 0 ? &nif->txq_emerg : &nif->txq_common;
        struct wisp_pbuf *frame;
        wisp_err_t err;
        if (q->count == 0) {
            break;
        }
        frame = q->slot[q->head];
        err = nif->dev->ops->transmit(nif->dev, frame);
        if (err == WISP_ERR_WOULDBLOCK) {
            nif->tx_busy = 1;
            break;
        }
        q->slot[q->head] = NULL;
        q->head = (uint8_t)((q->head + 1u) % q->cap);
        q->count--;
        if (err == WISP_OK) {
            count_sent(nif, frame);
        } else {
            nif->st.tx_drops++;
            WISP_CTR_INC(s, NETIF_TX_ERR);
        }
        wisp_pbuf_free(frame);
    }
    nif->tx_draining = 0;
}

static wisp_err_t txq_put(struct wisp_netif *nif, struct wisp_pbuf *frame)
{
    struct wisp_stack *s = nif->stack;
    struct wisp_txq *q = txq_of(nif, frame->prio);
    struct wisp_pbuf *held;
    if (q->count >= q->cap) {
        goto drop;
    }
    /* Caller memory (REF) may change after we return: keep a copy. */
    if (wisp_pbuf_has_ref(frame)) {
        held = wisp_pbuf_clone(s, WISP_LAYER_RAW, frame);
        if (held == NULL) {
            goto drop;
        }
    } else {
        held = frame;
        wisp_pbuf_ref(held);
    }
    q->slot[(q->head + q->count) % q->cap] = held;
    q->count++;
    nif->st.tx_queued++;
    if (frame->prio == WISP_PRIO_EMERG) {
        if (q->count > nif->st.txq_emerg_high) {
            nif->st.txq_emerg_high = q->count;
        }
    } else if (q->count > nif->st.txq_common_high) {
        nif->st.txq_common_high = q->count;
    }
    return WISP_OK;
drop:
    nif->st.tx_drops++;
    WISP_CTR_INC(s, NETIF_TXQ_DROP);
    return WISP_ERR_MEM;
}

wisp_err_t wisp_netif_tx(struct wisp_netif *nif, struct wisp_pbuf *frame)
{
    wisp_err_t err;
    WISP_CORE_ASSERT_OWNER(nif->stack);
    if (!wisp_netif_is_usable(nif) || nif->dev == NULL) {
        nif->st.tx_drops++;
        return WISP_ERR_IF;
    }
    if (frame->prio != WISP_PRIO_EMERG) {
        frame->prio = WISP_PRIO_COMMON;
    }
    if (nif->tx_busy || nif->txq_emerg.count > 0 || nif->txq_common.count > 0) {
        err = txq_put(nif, frame);
        netif_drain(nif);
        return err;
    }
    err = nif->dev->ops->transmit(nif->dev, frame);
    if (err == WISP_OK) {
        count_sent(nif, frame);
        return WISP_OK;
    }
    if (err == WISP_ERR_WOULDBLOCK) {
        nif->tx_busy = 1;
        return txq_put(nif, frame);
    }
    nif->st.tx_drops++;
    WISP_CTR_INC(nif->stack, NETIF_TX_ERR);
    return err;
}

/* -------------------------------------------------------- interfaces */

wisp_err_t wisp_netif_add(struct wisp_stack *s, struct wisp_netif *nif, const char *name, struct wisp_dev *dev,
                          const struct wisp_link_ops *link, const uint8_t *hwaddr, uint8_t hwaddr_len, uint16_t mtu)
{
    unsigned idx;
    struct wisp_netif **pp;
    struct wisp_dev *d;
    WISP_CORE_ASSERT_OWNER(s);
    for (idx = 1; idx <= WISP_MAX_NETIFS; idx++) {
        if (s->netif_by_idx[idx] == NULL) {
            break;
        }
    }
    if (idx > WISP_MAX_NETIFS) {
        return WISP_ERR_MEM;
    }
    if (mtu < 68u) {
        return WISP_ERR_VAL; /* RFC 791: every host must accept 68-octet datagrams unfragmented */
    }
    if (link == NULL || link->input == NULL || link->output == NULL || hwaddr_len > sizeof(nif->hwaddr) ||
        (hwaddr_len > 0 && hwaddr == NULL)) {
        return WISP_ERR_VAL;
    }
    memset(nif, 0, sizeof(*nif));
    nif->stack = s;
    nif->dev = dev;
    if (name != NULL) {
        size_t n = strlen(name);
        memcpy(nif->name, name, n < sizeof(nif->name) - 1 ? n : sizeof(nif->name) - 1);
    }
    nif->index = (uint8_t)idx;
    nif->link = link;
    nif->flags = (uint8_t)(link->flags & (WISP_NETIF_F_ETHARP | WISP_NETIF_F_BROADCAST));
    nif->hwaddr_len = hwaddr_len;
    if (hwaddr_len > 0) {
        memcpy(nif->hwaddr, hwaddr, hwaddr_len);
    }
    nif->mtu = mtu;
    nif->txq_emerg.slot = nif->txq_emerg_slot;
    nif->txq_emerg.cap = WISP_TXQ_EMERG_LEN;
    nif->txq_common.slot = nif->txq_common_slot;
    nif->txq_common.cap = WISP_TXQ_COMMON_LEN;
    /* Every device in the chain points at its netif. */
    for (d = dev; d != NULL; d = d->lower) {
        d->netif = nif;
    }
    for (pp = &s->netifs; *pp != NULL; pp = &(*pp)->next) {
    }
    *pp = nif;
    s->netif_by_idx[idx] = nif;
    return WISP_OK;
}

wisp_err_t wisp_netif_add_eth(struct wisp_stack *s, struct wisp_netif *nif, const char *name, struct wisp_dev *dev,
                              const uint8_t mac[6], uint16_t mtu)
{
    WISP_CORE_ASSERT_OWNER(s);
    return wisp_netif_add(s, nif, name, dev, &wisp_link_eth, mac, WISP_ETH_ADDR_LEN, mtu);
}

static void netif_went_down(struct wisp_netif *nif)
{
    txq_flush(&nif->txq_emerg);
    txq_flush(&nif->txq_common);
    nif->tx_busy = 0;
    if (nif->link != NULL && nif->link->down != NULL) {
        nif->link->down(nif);
    }
}

static void netif_went_up(struct wisp_netif *nif)
{
    if (nif->link != NULL && nif->link->up != NULL) {
        nif->link->up(nif);
    }
}

static void netif_set_flag(struct wisp_netif *nif, uint8_t flag, bool on)
{
    bool was = wisp_netif_is_usable(nif);
    bool is;
    if (on) {
        nif->flags |= flag;
    } else {
        nif->flags &= (uint8_t)~flag;
    }
    is = wisp_netif_is_usable(nif);
    if (was && !is) {
        netif_went_down(nif);
    } else if (!was && is) {
        netif_went_up(nif);
    }
    if (was != is) {
        struct wisp_netif_watch *w, *wnext;
        for (w = nif->watch; w != NULL; w = wnext) {
            wnext = w->next;
            w->fn(w->arg, nif, is);
        }
    }
}

void wisp_netif_watch_add(struct wisp_netif *nif, struct wisp_netif_watch *w)
{
    struct wisp_netif_watch *q;
    WISP_CORE_ASSERT_OWNER(nif->stack);
    for (q = nif->watch; q != NULL; q = q->next) {
        if (q == w) {
            return;
        }
    }
    w->next = nif->watch;
    nif->watch = w;
}

void wisp_netif_watch_remove(struct wisp_netif *nif, struct wisp_netif_watch *w)
{
    struct wisp_netif_watch **pp;
    WISP_CORE_ASSERT_OWNER(nif->stack);
    for (pp = &nif->watch; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            w->next = NULL;
            return;
        }
    }
}

void wisp_netif_set_up(struct wisp_netif *nif, bool up)
{
    WISP_CORE_ASSERT_OWNER(nif->stack);
    netif_set_flag(nif, WISP_NETIF_F_UP, up);
}

void wisp_netif_set_link(struct wisp_netif *nif, bool up)
{
    WISP_CORE_ASSERT_OWNER(nif->stack);
    netif_set_flag(nif, WISP_NETIF_F_LINK_UP, up);
}

void wisp_netif_set_ip4(struct wisp_netif *nif, wisp_ip4_t ip, wisp_ip4_t mask, wisp_ip4_t gw)
{
    bool changed = nif->ip4.addr != ip;
    WISP_CORE_ASSERT_OWNER(nif->stack);
    nif->ip4.addr = ip;
    nif->ip4.mask = mask;
    nif->ip4.gw = gw;
    if (changed && wisp_netif_is_usable(nif) && nif->link != NULL) {
        if (nif->link->down != NULL) {
            nif->link->down(nif);
        }
        netif_went_up(nif);
    }
}

void wisp_netif_remove(struct wisp_netif *nif)
{
    struct wisp_stack *s = nif->stack;
    struct wisp_netif **pp;
    WISP_CORE_ASSERT_OWNER(nif->stack);
    netif_went_down(nif);
    for (pp = &s->netifs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == nif) {
            *pp = nif->next;
            break;
        }
    }
    s->netif_by_idx[nif->index] = NULL;
    nif->next = NULL;
    nif->flags = 0;
}

struct wisp_netif *wisp_netif_by_index(struct wisp_stack *s, uint8_t index)
{
    WISP_CORE_ASSERT_OWNER(s);
    return (index >= 1 && index <= WISP_MAX_NETIFS) ? s->netif_by_idx[index] : NULL;
}

struct wisp_netif *wisp_netif_by_name(struct wisp_stack *s, const char *name)
{
    struct wisp_netif *nif;
    WISP_CORE_ASSERT_OWNER(s);
    for (nif = s->netifs; nif != NULL; nif = nif->next) {
        if (strncmp(nif->name, name, sizeof(nif->name)) == 0) {
            return nif;
        }
    }
    return NULL;
}

const char *wisp_netif_name(const struct wisp_netif *nif) {
    WISP_CORE_ASSERT_OWNER(nif->stack);
    return nif->name;
}
uint8_t wisp_netif_index(const struct wisp_netif *nif) {
    WISP_CORE_ASSERT_OWNER(nif->stack);
    return nif->index;
}
uint8_t wisp_netif_flags(const struct wisp_netif *nif) {
    WISP_CORE_ASSERT_OWNER(nif->stack);
    return nif->flags;
}
uint16_t wisp_netif_mtu(const struct wisp_netif *nif) {
    WISP_CORE_ASSERT_OWNER(nif->stack);
    return nif->mtu;
}
const uint8_t *wisp_netif_hwaddr(const struct wisp_netif *nif, uint8_t *len)
{
    WISP_CORE_ASSERT_OWNER(nif->stack);
    if (len != NULL) {
        *len = nif->hwaddr_len;
    }
    return nif->hwaddr;
}
const struct wisp_netif_stats *wisp_netif_get_stats(const struct wisp_netif *nif) {
    WISP_CORE_ASSERT_OWNER(nif->stack);
    return &nif->st;
}
wisp_ip4_t wisp_netif_ip4_addr(const struct wisp_netif *nif) {
    WISP_CORE_ASSERT_OWNER(nif->stack);
    return nif->ip4.addr;
}
wisp_ip4_t wisp_netif_ip4_mask(const struct wisp_netif *nif) {
    WISP_CORE_ASSERT_OWNER(nif->stack);
    return nif->ip4.mask;
}
wisp_ip4_t wisp_netif_ip4_gw(const struct wisp_netif *nif) {
    WISP_CORE_ASSERT_OWNER(nif->stack);
    return nif->ip4.gw;
}
struct wisp_stack *wisp_netif_stack(const struct wisp_netif *nif) {
    WISP_CORE_ASSERT_OWNER(nif->stack);
    return nif->stack;
}
void *wisp_netif_user(const struct wisp_netif *nif) {
    WISP_CORE_ASSERT_OWNER(nif->stack);
    return nif->user;
}
void wisp_netif_set_user(struct wisp_netif *nif, void *user) {
    WISP_CORE_ASSERT_OWNER(nif->stack);
    nif->user = user;
}
