/**
 * @file test_pbuf.c
 * Unit tests of pools and pbufs: kinds, budgets, chains, reference counts,
 * header push/pop, trim, copies across chains, clone, chain checksum.
 */
#define _POSIX_C_SOURCE 200809L /* fork, waitpid */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_pool_counters_and_exhaustion(void **state)
{
    struct tu_env *e = tu_env_new(1);
    struct wisp_pool *ref = &e->s->pool[WISP_POOL_PBUF_REF];
    struct wisp_pbuf *p[WISP_PBUF_REF_COUNT];
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_PBUF_REF_COUNT; i++) {
        p[i] = wisp_pbuf_alloc(e->s, WISP_LAYER_RAW, 10, WISP_PBUF_REF);
        assert_non_null(p[i]);
    }
    assert_int_equal(ref->used, WISP_PBUF_REF_COUNT);
    assert_int_equal(ref->high, WISP_PBUF_REF_COUNT);
    assert_null(wisp_pbuf_alloc(e->s, WISP_LAYER_RAW, 10, WISP_PBUF_REF));
    assert_int_equal(ref->failed, 1);
    for (i = 0; i < WISP_PBUF_REF_COUNT; i++) {
        assert_int_equal(wisp_pbuf_free(p[i]), 1);
    }
    assert_int_equal(ref->used, 0);
    assert_int_equal(ref->high, WISP_PBUF_REF_COUNT);
    tu_env_free(e);
}

static void test_budgets_are_separate(void **state)
{
    /* Exhausting the transmit budget leaves receive allocations working. */
    struct tu_env *e = tu_env_new(2);
    struct wisp_pbuf *tx[WISP_PBUF_TX_COUNT];
    struct wisp_pbuf *rx;
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_PBUF_TX_COUNT; i++) {
        tx[i] = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 100, WISP_PBUF_RAM);
        assert_non_null(tx[i]);
    }
    assert_null(wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 100, WISP_PBUF_RAM));
    rx = wisp_pbuf_alloc_rx(e->s, 1514);
    assert_non_null(rx);
    assert_true(rx->pool == &e->s->pool[WISP_POOL_PBUF_RX]);
    wisp_pbuf_free(rx);
    for (i = 0; i < WISP_PBUF_TX_COUNT; i++) {
        wisp_pbuf_free(tx[i]);
    }
    tu_env_free(e);
}

#if WISP_DEBUG
/* Debug builds catch a double free (pool.c marks free elements, walks the
 * free list only when the mark is present); a live element whose contents
 * happen to equal the mark is not mistaken for a free one. The double free
 * runs in a child process: the assertion aborts it. */
static void test_pool_double_free_caught_in_debug_builds(void **state)
{
    uint64_t mem[4 * 8];
    struct wisp_pool pool;
    void *a, *b;
    uint32_t look_alike;
    pid_t pid;
    int st = 0;
    (void)state;

    wisp_pool_init(&pool, "t", mem, sizeof mem, 64, 4);
    a = wisp_pool_alloc(&pool);
    b = wisp_pool_alloc(&pool);
    assert_non_null(a);
    assert_non_null(b);
    /* a live element holding the mark's value at the mark's place */
    look_alike = 0x5eedf4eeu ^ (uint32_t)(uintptr_t)b;
    memcpy((uint8_t *)b + sizeof(void *), &look_alike, sizeof look_alike);
    wisp_pool_free(&pool, b);
    assert_int_equal(pool.used, 1);
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        (void)freopen("/dev/null", "w", stderr);
        wisp_pool_free(&pool, a);
        wisp_pool_free(&pool, a); /* must abort here */
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGABRT);
    wisp_pool_free(&pool, a);
    assert_int_equal(pool.used, 0);
}
#endif

static void test_small_ram_uses_small_pool_then_falls_back(void **state)
{
#if WISP_PBUF_SMALL_COUNT > 0
    struct tu_env *e = tu_env_new(10);
    struct wisp_pool *small = &e->s->pool[WISP_POOL_PBUF_SMALL];
    struct wisp_pbuf *p[WISP_PBUF_SMALL_COUNT + 1];
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_PBUF_SMALL_COUNT; i++) {
        p[i] = wisp_pbuf_alloc(e->s, WISP_LAYER_IP, WISP_PBUF_SMALL_SIZE - WISP_LAYER_IP, WISP_PBUF_RAM);
        assert_non_null(p[i]);
        assert_ptr_equal(p[i]->pool, small);
        assert_int_equal(wisp_pbuf_headroom(p[i]), WISP_LAYER_IP);
    }
    /* small pool empty: a full block serves, and no failure is counted */
    p[i] = wisp_pbuf_alloc(e->s, WISP_LAYER_IP, 8, WISP_PBUF_RAM);
    assert_non_null(p[i]);
    assert_ptr_equal(p[i]->pool, &e->s->pool[WISP_POOL_PBUF_TX]);
    assert_int_equal(small->failed, 0);
    /* one byte more than a small block holds goes to a full block */
    for (i = 0; i <= WISP_PBUF_SMALL_COUNT; i++) {
        wisp_pbuf_free(p[i]);
    }
    p[0] = wisp_pbuf_alloc(e->s, WISP_LAYER_IP, WISP_PBUF_SMALL_SIZE - WISP_LAYER_IP + 1, WISP_PBUF_RAM);
    assert_ptr_equal(p[0]->pool, &e->s->pool[WISP_POOL_PBUF_TX]);
    wisp_pbuf_free(p[0]);
    assert_int_equal(tu_tx_used(e), 0);
    tu_env_free(e);
#else
    (void)state;
#endif
}

static void test_ram_headroom_push_pop(void **state)
{
    struct tu_env *e = tu_env_new(3);
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 100, WISP_PBUF_RAM);
    (void)state;
    assert_non_null(p);
    assert_int_equal(p->len, 100);
    assert_int_equal(p->tot_len, 100);
    assert_int_equal(wisp_pbuf_headroom(p), WISP_LAYER_TRANSPORT);
    assert_int_equal(wisp_pbuf_push(p, 20), WISP_OK);
    assert_int_equal(p->len, 120);
    assert_int_equal(wisp_pbuf_headroom(p), WISP_LAYER_TRANSPORT - 20);
    assert_int_equal(wisp_pbuf_push(p, WISP_LAYER_TRANSPORT), WISP_ERR_BUF); /* not enough room */
    assert_int_equal(wisp_pbuf_pop(p, 20), WISP_OK);
    assert_int_equal(wisp_pbuf_pop(p, 101), WISP_ERR_BUF);
    assert_int_equal(p->len, 100);
    /* RAM larger than a block is refused (use POOL). */
    assert_null(wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, WISP_PBUF_BLOCK_SIZE, WISP_PBUF_RAM));
    wisp_pbuf_free(p);
    tu_env_free(e);
}

static void test_pool_chain_layout(void **state)
{
    struct tu_env *e = tu_env_new(4);
    uint16_t len = (uint16_t)(3 * WISP_PBUF_BLOCK_SIZE);
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_IP, len, WISP_PBUF_POOL);
    struct wisp_pbuf *q;
    unsigned total = 0;
    (void)state;
    assert_non_null(p);
    assert_int_equal(wisp_pbuf_clen(p), 4);
    assert_int_equal(p->len, WISP_PBUF_BLOCK_SIZE - WISP_LAYER_IP);
    for (q = p; q != NULL; q = q->next) {
        assert_int_equal(q->tot_len, len - total);
        total += q->len;
    }
    assert_int_equal(total, len);
    assert_int_equal(wisp_pbuf_free(p), 4);
    tu_env_free(e);
}

static void test_refcount_shared_tail(void **state)
{
    struct tu_env *e = tu_env_new(5);
    struct wisp_pbuf *h1 = wisp_pbuf_alloc(e->s, WISP_LAYER_RAW, 10, WISP_PBUF_RAM);
    struct wisp_pbuf *h2 = wisp_pbuf_alloc(e->s, WISP_LAYER_RAW, 10, WISP_PBUF_RAM);
    struct wisp_pbuf *t = wisp_pbuf_alloc(e->s, WISP_LAYER_RAW, 30, WISP_PBUF_RAM);
    (void)state;
    wisp_pbuf_chain(h1, t); /* t->ref 2 */
    wisp_pbuf_cat(h2, t);   /* h2 takes our reference */
    assert_int_equal(t->ref, 2);
    assert_int_equal(h1->tot_len, 40);
    assert_int_equal(wisp_pbuf_free(h1), 1); /* t survives */
    assert_int_equal(t->ref, 1);
    assert_int_equal(wisp_pbuf_free(h2), 2);
    tu_env_free(e);
}

static void test_ref_and_rom_zero_copy(void **state)
{
    static const char rom[] = "constant data";
    char ram[32] = "caller memory";
    struct tu_env *e = tu_env_new(6);
    struct wisp_pbuf *r = wisp_pbuf_alloc_ref(e->s, ram, 13, WISP_PBUF_REF);
    struct wisp_pbuf *o = wisp_pbuf_alloc_ref(e->s, rom, 13, WISP_PBUF_ROM);
    char out[20] = { 0 };
    (void)state;
    assert_ptr_equal(r->payload, (uint8_t *)ram);
    assert_true(wisp_pbuf_has_ref(r));
    assert_false(wisp_pbuf_has_ref(o));
    assert_int_equal(wisp_pbuf_headroom(r), 0);
    assert_int_equal(wisp_pbuf_push(r, 1), WISP_ERR_BUF);
    assert_int_equal(wisp_pbuf_copy_in(o, "x", 1, 0), WISP_ERR_VAL); /* ROM is read-only */
    assert_int_equal(wisp_pbuf_pop(o, 9), WISP_OK);
    assert_int_equal(wisp_pbuf_copy_out(o, out, sizeof(out), 0), 4);
    assert_string_equal(out, "data");
    assert_null(wisp_pbuf_alloc_ref(e->s, ram, 1, WISP_PBUF_RAM));
    wisp_pbuf_free(r);
    wisp_pbuf_free(o);
    tu_env_free(e);
}

static void test_copy_in_out_across_chain(void **state)
{
    struct tu_env *e = tu_env_new(7);
    uint16_t len = 5000;
    uint8_t *src = malloc(len), *dst = malloc(len);
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, len, WISP_PBUF_POOL);
    unsigned i, off;
    (void)state;
    for (i = 0; i < len; i++) {
        src[i] = (uint8_t)(i * 7u + 3u);
    }
    assert_int_equal(wisp_pbuf_copy_in(p, src, len, 0), WISP_OK);
    assert_int_equal(wisp_pbuf_copy_in(p, src, 2, (uint16_t)(len - 1)), WISP_ERR_BUF);
    for (off = 0; off < len; off += 397) {
        uint16_t n = (uint16_t)(len - off < 1700 ? len - off : 1700);
        memset(dst, 0, len);
        assert_int_equal(wisp_pbuf_copy_out(p, dst, n, (uint16_t)off), n);
        assert_memory_equal(dst, src + off, n);
        assert_int_equal(wisp_pbuf_get_u8(p, (uint16_t)off), src[off]);
    }
    assert_int_equal(wisp_pbuf_copy_out(p, dst, 100, (uint16_t)(len - 10)), 10);
    assert_int_equal(wisp_pbuf_get_u8(p, len), -1);
    /* contiguous view only inside one buffer */
    assert_non_null(wisp_pbuf_contig(p, 0, 20));
    assert_null(wisp_pbuf_contig(p, (uint16_t)(p->len - 2), 4));
    free(src);
    free(dst);
    wisp_pbuf_free(p);
    tu_env_free(e);
}

static void test_trim_frees_tail(void **state)
{
    struct tu_env *e = tu_env_new(8);
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_RAW, 4000, WISP_PBUF_POOL);
    (void)state;
    assert_int_equal(wisp_pbuf_clen(p), 3);
    wisp_pbuf_trim(p, 1600);
    assert_int_equal(wisp_pbuf_clen(p), 2);
    assert_int_equal(p->tot_len, 1600);
    assert_int_equal(p->next->len, 1600 - WISP_PBUF_BLOCK_SIZE);
    assert_int_equal(p->next->tot_len, 1600 - WISP_PBUF_BLOCK_SIZE);
    assert_int_equal(tu_tx_used(e), 2);
    wisp_pbuf_trim(p, 60);
    assert_int_equal(wisp_pbuf_clen(p), 1);
    assert_int_equal(p->len, 60);
    wisp_pbuf_trim(p, 100); /* growing is a no-op */
    assert_int_equal(p->tot_len, 60);
    wisp_pbuf_free(p);
    tu_env_free(e);
}

static void test_clone_and_chain_checksum(void **state)
{
    struct tu_env *e = tu_env_new(9);
    uint8_t buf[3001];
    struct wisp_pbuf *a = wisp_pbuf_alloc(e->s, WISP_LAYER_RAW, 1001, WISP_PBUF_RAM);
    struct wisp_pbuf *b = wisp_pbuf_alloc(e->s, WISP_LAYER_RAW, 2000, WISP_PBUF_POOL);
    struct wisp_pbuf *c;
    unsigned i;
    (void)state;
    for (i = 0; i < sizeof(buf); i++) {
        buf[i] = (uint8_t)(i ^ (i >> 3));
    }
    wisp_pbuf_copy_in(a, buf, 1001, 0);
    wisp_pbuf_copy_in(b, buf + 1001, 2000, 0);
    wisp_pbuf_cat(a, b);
    a->prio = WISP_PRIO_EMERG;
    /* odd-length first buffer: the chain sum must equal the flat sum */
    assert_int_equal(wisp_pbuf_chksum(a, 0, 3001), wisp_chksum_sum_ref(buf, 3001));
    assert_int_equal(wisp_pbuf_chksum(a, 999, 1500), wisp_chksum_sum_ref(buf + 999, 1500));
    c = wisp_pbuf_clone(e->s, WISP_LAYER_LINK, a);
    assert_non_null(c);
    assert_int_equal(c->tot_len, 3001);
    assert_int_equal(c->prio, WISP_PRIO_EMERG);
    assert_int_equal(wisp_pbuf_headroom(c), WISP_LAYER_LINK);
    {
        uint8_t out[3001];
        assert_int_equal(wisp_pbuf_copy_out(c, out, 3001, 0), 3001);
        assert_memory_equal(out, buf, 3001);
    }
    wisp_pbuf_free(a);
    wisp_pbuf_free(c);
    tu_env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_counters_and_exhaustion),
#if WISP_DEBUG
        cmocka_unit_test(test_pool_double_free_caught_in_debug_builds),
#endif
        cmocka_unit_test(test_budgets_are_separate),
        cmocka_unit_test(test_small_ram_uses_small_pool_then_falls_back),
        cmocka_unit_test(test_ram_headroom_push_pop),
        cmocka_unit_test(test_pool_chain_layout),
        cmocka_unit_test(test_refcount_shared_tail),
        cmocka_unit_test(test_ref_and_rom_zero_copy),
        cmocka_unit_test(test_copy_in_out_across_chain),
        cmocka_unit_test(test_trim_frees_tail),
        cmocka_unit_test(test_clone_and_chain_checksum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
