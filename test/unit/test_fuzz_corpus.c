/**
 * @file test_fuzz_corpus.c
 * Replays the fuzz corpus (test/fuzz/corpus/<target>/: the seeds and every
 * crash reproducer found by fuzzing) through the libFuzzer harnesses'
 * entry points (test/fuzz/fuzz_<target>.c), in the normal gcc and ASan
 * builds, so the suite keeps checking them without libFuzzer. A harness
 * checks pool use and leaks itself and abort()s on a violation; a crash
 * or sanitizer report fails this test (the last "replay" line names the
 * input). Each target must have at least its seeds.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#ifndef FUZZ_CORPUS_DIR
#error "FUZZ_CORPUS_DIR must name test/fuzz/corpus"
#endif

int fuzz_eth_one(const uint8_t *data, size_t size);
int fuzz_tcp_one(const uint8_t *data, size_t size);
int fuzz_dhcp_one(const uint8_t *data, size_t size);
int fuzz_dns_one(const uint8_t *data, size_t size);
int fuzz_http_one(const uint8_t *data, size_t size);
int fuzz_iperf_one(const uint8_t *data, size_t size);
int fuzz_arp_one(const uint8_t *data, size_t size);
int fuzz_ip4_frag_one(const uint8_t *data, size_t size);
int fuzz_sockets_one(const uint8_t *data, size_t size);

typedef int (*fuzz_fn)(const uint8_t *data, size_t size);

static int name_cmp(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* Run every file of corpus/<target> through fn; returns how many (seeds
 * and reproducers: crash-*). */
static unsigned replay(const char *target, fuzz_fn fn, unsigned *crashes)
{
    char dir[512], path[1024];
    static char names[512][256];
    unsigned n = 0, i;
    struct dirent *de;
    DIR *d;
    snprintf(dir, sizeof(dir), "%s/%s", FUZZ_CORPUS_DIR, target);
    d = opendir(dir);
    assert_non_null(d);
    while ((de = readdir(d)) != NULL && n < 512) {
        if (de->d_name[0] != '.' && strstr(de->d_name, ".bin") != NULL && strlen(de->d_name) < sizeof(names[0])) {
            strcpy(names[n], de->d_name);
            n++;
        }
    }
    closedir(d);
    qsort(names, n, sizeof(names[0]), name_cmp);
    *crashes = 0;
    for (i = 0; i < n; i++) {
        FILE *f;
        long len;
        uint8_t *buf;
        int k = snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        assert_true(k > 0 && (size_t)k < sizeof(path));
        f = fopen(path, "rb");
        assert_non_null(f);
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        len = ftell(f);
        assert_true(len >= 0);
        rewind(f);
        buf = malloc((size_t)len + 1);
        assert_non_null(buf);
        assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
        fclose(f);
        fprintf(stderr, "replay %s/%s (%ld bytes)\n", target, names[i], len);
        assert_int_equal(fn(buf, (size_t)len), 0);
        free(buf);
        if (strncmp(names[i], "crash-", 6) == 0) {
            (*crashes)++;
        }
    }
    print_message("%s: %u inputs replayed (%u crash reproducers)\n", target, n, *crashes);
    return n;
}

static void run_target(const char *target, fuzz_fn fn)
{
    unsigned crashes, n = replay(target, fn, &crashes);
    assert_true(n - crashes >= 3); /* the seeds are there */
}

/* The targets: corpus folder and harness entry point. */
static const struct target {
    const char *test;         /* the cmocka test name */
    const char *dir;          /* corpus/<dir> */
    fuzz_fn fn;
} targets[] = {
    { "test_eth", "eth", fuzz_eth_one },
    { "test_tcp", "tcp", fuzz_tcp_one },
    { "test_dhcp", "dhcp", fuzz_dhcp_one },
    { "test_dns", "dns", fuzz_dns_one },
    { "test_http", "http", fuzz_http_one },
    { "test_iperf", "iperf", fuzz_iperf_one },
    { "test_arp", "arp", fuzz_arp_one },
    { "test_ip4_frag", "ip4_frag", fuzz_ip4_frag_one },
    { "test_sockets", "sockets", fuzz_sockets_one },
};

/* One cmocka test per target (its state: the table entry). */
static void test_target(void **state)
{
    const struct target *t = *state;
    run_target(t->dir, t->fn);
}

int main(void)
{
    struct CMUnitTest tests[WISP_ARRAY_SIZE(targets)];
    unsigned i;
    for (i = 0; i < WISP_ARRAY_SIZE(targets); i++) {
        memset(&tests[i], 0, sizeof(tests[i]));
        tests[i].name = targets[i].test;
        tests[i].test_func = test_target;
        tests[i].initial_state = (void *)(uintptr_t)&targets[i];
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
