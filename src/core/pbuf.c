/**
 * @file pbuf.c
 * Packet buffers: allocation from the receive / transmit / reference pools,
 * reference counting, header push/pop, chains, copies across chains.
 *
 * Layout of a RAM or POOL element: [struct wisp_pbuf, padded][payload block
 * of WISP_PBUF_BLOCK_SIZE bytes]. Headroom is the distance between the start
 * of the block and the payload pointer; it is reserved at allocation so
 * lower layers prepend their headers without copying.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/stack.h"
#include "wisp/chksum.h"

static uint8_t *block_start(struct wisp_pbuf *p)
{
    return (uint8_t *)p + WISP_PBUF_HDR_SIZE;
}

/* The stack whose pools hold p (NULL: none known, nothing to check). A
 * macro: release builds, where WISP_CORE_ASSERT_OWNER has no code, have no
 * use for it. */
#define stack_of(p) (((p) != NULL && (p)->pool != NULL) ? (p)->pool->stack : NULL)

static void pbuf_setup(struct wisp_pbuf *p, struct wisp_pool *pool, uint8_t kind, uint8_t *payload, uint16_t len)
{
    p->next = NULL;
    p->payload = payload;
    p->pool = pool;
    p->tot_len = len;
    p->len = len;
    p->ref = 1;
    p->kind = kind;
    p->flags = 0;
    p->if_idx = 0;
    p->prio = WISP_PRIO_COMMON;
    p->pad_ = 0;
}

/* A chain of blocks from pool; the first block has `head` bytes of headroom. */
static struct wisp_pbuf *alloc_chain(struct wisp_pool *pool, uint16_t head, uint16_t len)
{
    struct wisp_pbuf *first = NULL, *last = NULL;
    uint32_t left = len;
    uint16_t room = (uint16_t)(WISP_PBUF_BLOCK_SIZE - head);
    do {
        struct wisp_pbuf *q = (struct wisp_pbuf *)wisp_pool_alloc(pool);
        uint16_t n = (uint16_t)(left < room ? left : room);
        if (q == NULL) {
            wisp_pbuf_free(first);
            return NULL;
        }
        pbuf_setup(q, pool, WISP_PBUF_POOL, block_start(q) + (WISP_PBUF_BLOCK_SIZE - room), n);
        q->tot_len = (uint16_t)left;
        if (last == NULL) {
            first = q;
        } else {
            last->next = q;
        }
        last = q;
        left -= n;
        room = WISP_PBUF_BLOCK_SIZE;
    } while (left > 0);
    return first;
}

struct wisp_pbuf *wisp_pbuf_alloc(struct wisp_stack *s, enum wisp_pbuf_layer layer, uint16_t len,
                                  enum wisp_pbuf_kind kind)
{
    struct wisp_pbuf *p;
    struct wisp_pool *pool;
    uint16_t head = (uint16_t)layer;
    WISP_CORE_ASSERT_OWNER(s);
    switch (kind) {
    case WISP_PBUF_RAM:
        if ((uint32_t)head + len > WISP_PBUF_BLOCK_SIZE) {
            s->pool[WISP_POOL_PBUF_TX].failed++;
            return NULL;
        }
        p = NULL;
#if WISP_PBUF_SMALL_COUNT > 0
        /* Short packets take a small block while there is one. */
        pool = &s->pool[WISP_POOL_PBUF_SMALL];
        if ((uint32_t)head + len <= WISP_PBUF_SMALL_SIZE && pool->free_list != NULL) {
            p = (struct wisp_pbuf *)wisp_pool_alloc(pool);
        }
#endif
        if (p == NULL) {
            pool = &s->pool[WISP_POOL_PBUF_TX];
            p = (struct wisp_pbuf *)wisp_pool_alloc(pool);
        }
        if (p != NULL) {
            pbuf_setup(p, pool, WISP_PBUF_RAM, block_start(p) + head, len);
        }
        return p;
    case WISP_PBUF_POOL:
        if (head >= WISP_PBUF_BLOCK_SIZE) {
            return NULL;
        }
        return alloc_chain(&s->pool[WISP_POOL_PBUF_TX], head, len);
    case WISP_PBUF_REF:
    case WISP_PBUF_ROM:
        p = (struct wisp_pbuf *)wisp_pool_alloc(&s->pool[WISP_POOL_PBUF_REF]);
        if (p != NULL) {
            pbuf_setup(p, &s->pool[WISP_POOL_PBUF_REF], (uint8_t)kind, NULL, len);
        }
        return p;
    default:
        return NULL;
    }
}

struct wisp_pbuf *wisp_pbuf_alloc_rx(struct wisp_stack *s, uint16_t len)
{
    WISP_CORE_ASSERT_OWNER(s);
    return alloc_chain(&s->pool[WISP_POOL_PBUF_RX], 0, len);
}

struct wisp_pbuf *wisp_pbuf_alloc_ref(struct wisp_stack *s, const void *data, uint16_t len, enum wisp_pbuf_kind kind)
{
    struct wisp_pbuf *p;
    WISP_CORE_ASSERT_OWNER(s);
    if (kind != WISP_PBUF_REF && kind != WISP_PBUF_ROM) {
        return NULL;
    }
    p = wisp_pbuf_alloc(s, WISP_LAYER_RAW, len, kind);
    if (p != NULL) {
        /* The payload is only written through for REF (caller memory). */
        memcpy(&p->payload, &data, sizeof(p->payload));
    }
    return p;
}

unsigned wisp_pbuf_free(struct wisp_pbuf *p)
{
    unsigned n = 0;
    WISP_CORE_ASSERT_OWNER(stack_of(p));
    while (p != NULL) {
        struct wisp_pbuf *next;
        WISP_ASSERT(p->ref > 0);
        if (--p->ref > 0) {
            break;
        }
        next = p->next;
        wisp_pool_free(p->pool, p);
        n++;
        p = next;
    }
    return n;
}

void wisp_pbuf_ref(struct wisp_pbuf *p)
{
    WISP_CORE_ASSERT_OWNER(stack_of(p));
    WISP_ASSERT(p != NULL && p->ref < 0xffffu);
    p->ref++;
}

unsigned wisp_pbuf_clen(const struct wisp_pbuf *p)
{
    unsigned n = 0;
    for (; p != NULL; p = p->next) {
        n++;
    }
    return n;
}

void wisp_pbuf_cat(struct wisp_pbuf *h, struct wisp_pbuf *t)
{
    struct wisp_pbuf *p;
    WISP_CORE_ASSERT_OWNER(stack_of(h));
    WISP_ASSERT(h != NULL && t != NULL);
    for (p = h; p->next != NULL; p = p->next) {
        p->tot_len = (uint16_t)(p->tot_len + t->tot_len);
    }
    p->tot_len = (uint16_t)(p->tot_len + t->tot_len);
    p->next = t;
}

void wisp_pbuf_chain(struct wisp_pbuf *h, struct wisp_pbuf *t)
{
    WISP_CORE_ASSERT_OWNER(stack_of(h));
    wisp_pbuf_cat(h, t);
    wisp_pbuf_ref(t);
}

uint16_t wisp_pbuf_headroom(const struct wisp_pbuf *p)
{
    if (p->kind != WISP_PBUF_RAM && p->kind != WISP_PBUF_POOL) {
        return 0;
    }
    return (uint16_t)(p->payload - ((const uint8_t *)p + WISP_PBUF_HDR_SIZE));
}

wisp_err_t wisp_pbuf_push(struct wisp_pbuf *p, uint16_t n)
{
    if (p == NULL || wisp_pbuf_headroom(p) < n || (uint32_t)p->tot_len + n > 0xffffu) {
        return WISP_ERR_BUF;
    }
    p->payload -= n;
    p->len = (uint16_t)(p->len + n);
    p->tot_len = (uint16_t)(p->tot_len + n);
    return WISP_OK;
}

wisp_err_t wisp_pbuf_pop(struct wisp_pbuf *p, uint16_t n)
{
    if (p == NULL || n > p->len) {
        return WISP_ERR_BUF;
    }
    p->payload += n;
    p->len = (uint16_t)(p->len - n);
    p->tot_len = (uint16_t)(p->tot_len - n);
    return WISP_OK;
}

void wisp_pbuf_trim(struct wisp_pbuf *p, uint16_t new_len)
{
    uint16_t rest = new_len;
    struct wisp_pbuf *q = p;
    if (p == NULL || new_len >= p->tot_len) {
        return;
    }
    while (rest > q->len) {
        q->tot_len = rest;
        rest = (uint16_t)(rest - q->len);
        q = q->next;
    }
    q->len = rest;
    q->tot_len = rest;
    if (q->next != NULL) {
        wisp_pbuf_free(q->next);
        q->next = NULL;
    }
}

uint16_t wisp_pbuf_copy_out(const struct wisp_pbuf *p, void *dst, uint16_t len, uint16_t offset)
{
    uint8_t *d = (uint8_t *)dst;
    uint16_t done = 0;
    for (; p != NULL && done < len; p = p->next) {
        uint16_t n;
        if (offset >= p->len) {
            offset = (uint16_t)(offset - p->len);
            continue;
        }
        n = (uint16_t)(p->len - offset);
        if (n > len - done) {
            n = (uint16_t)(len - done);
        }
        wisp_memcpy(d + done, p->payload + offset, n);
        done = (uint16_t)(done + n);
        offset = 0;
    }
    return done;
}

wisp_err_t wisp_pbuf_copy_in(struct wisp_pbuf *p, const void *src, uint16_t len, uint16_t offset)
{
    const uint8_t *s = (const uint8_t *)src;
    uint16_t done = 0;
    struct wisp_pbuf *q;
    if (p == NULL || (uint32_t)offset + len > p->tot_len) {
        return WISP_ERR_BUF;
    }
    for (q = p; q != NULL; q = q->next) {
        if (q->kind == WISP_PBUF_ROM) {
            return WISP_ERR_VAL;
        }
    }
    for (q = p; q != NULL && done < len; q = q->next) {
        uint16_t n;
        if (offset >= q->len) {
            offset = (uint16_t)(offset - q->len);
            continue;
        }
        n = (uint16_t)(q->len - offset);
        if (n > len - done) {
            n = (uint16_t)(len - done);
        }
        wisp_memcpy(q->payload + offset, s + done, n);
        done = (uint16_t)(done + n);
        offset = 0;
    }
    return WISP_OK;
}

int wisp_pbuf_get_u8(const struct wisp_pbuf *p, uint16_t offset)
{
    for (; p != NULL; p = p->next) {
        if (offset < p->len) {
            return p->payload[offset];
        }
        offset = (uint16_t)(offset - p->len);
    }
    return -1;
}

void *wisp_pbuf_contig(const struct wisp_pbuf *p, uint16_t offset, uint16_t len)
{
    for (; p != NULL; p = p->next) {
        if (offset < p->len) {
            return ((uint32_t)offset + len <= p->len) ? (void *)(p->payload + offset) : NULL;
        }
        offset = (uint16_t)(offset - p->len);
    }
    return NULL;
}

struct wisp_pbuf *wisp_pbuf_clone(struct wisp_stack *s, enum wisp_pbuf_layer layer, const struct wisp_pbuf *p)
{
    struct wisp_pbuf *q = wisp_pbuf_alloc(s, layer, p->tot_len, WISP_PBUF_POOL);
    struct wisp_pbuf *r;
    uint16_t off = 0;
    WISP_CORE_ASSERT_OWNER(s);
    if (q == NULL) {
        return NULL;
    }
    for (r = q; r != NULL; r = r->next) {
        wisp_pbuf_copy_out(p, r->payload, r->len, off);
        off = (uint16_t)(off + r->len);
    }
    q->flags = p->flags;
    q->if_idx = p->if_idx;
    q->prio = p->prio;
    return q;
}

bool wisp_pbuf_has_ref(const struct wisp_pbuf *p)
{
    for (; p != NULL; p = p->next) {
        if (p->kind == WISP_PBUF_REF) {
            return true;
        }
    }
    return false;
}

uint16_t wisp_pbuf_chksum(const struct wisp_pbuf *p, uint16_t offset, uint16_t len)
{
    uint16_t sum = 0;
    size_t done = 0;
    for (; p != NULL && done < len; p = p->next) {
        uint16_t n;
        if (offset >= p->len) {
            offset = (uint16_t)(offset - p->len);
            continue;
        }
        n = (uint16_t)(p->len - offset);
        if (n > len - done) {
            n = (uint16_t)(len - done);
        }
        sum = wisp_chksum_combine(sum, wisp_chksum_sum(p->payload + offset, n), done);
        done += n;
        offset = 0;
    }
    return sum;
}
