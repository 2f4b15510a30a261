/*
 * taprelay.c -- the user-space hop of the Linux ceiling (bench/run.sh):
 * copies every Ethernet frame between TAP A (in the namespace the relay
 * starts in) and TAP B (in the network namespace NS-PATH, e.g.
 * /var/run/netns/NAME), one read and one write per frame, a thread per
 * direction: the same TAP + user-space copy a wisp or lwIP process does,
 * with the Linux kernel behind it (the kernel's receive work on B runs in
 * the writing thread, so one thread per direction keeps the ceiling
 * from being the relay's single thread). Both TAPs must exist (ip tuntap add).
 *   taprelay TAP-A NS-PATH TAP-B SECONDS
 * Prints "relaying" when ready, then "frames a2b=N b2a=N" at the end
 * (after SECONDS or SIGTERM).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_sig(int s)
{
    (void)s;
    stop = 1;
}

static int tap_open(const char *name)
{
    struct ifreq ifr;
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0) return -1;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
    if (ioctl(fd, TUNSETIFF, &ifr) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

struct dir {
    int from, to;
    unsigned long long n;
};

/* one direction: read a frame, write it to the other TAP */
static void *pump(void *arg)
{
    struct dir *d = (struct dir *)arg;
    static __thread unsigned char buf[65536];
    struct pollfd p;
    p.fd = d->from;
    while (!stop) {
        p.events = POLLIN;
        if (poll(&p, 1, 200) <= 0) continue;
        ssize_t n = read(d->from, buf, sizeof buf);
        if (n > 0 && write(d->to, buf, (size_t)n) == n) d->n++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    struct dir d[2];
    pthread_t th[2];
    int a, b, nsfd;
    time_t end;
    if (argc != 5) {
        fprintf(stderr, "usage: taprelay TAP-A NS-PATH TAP-B SECONDS\n");
        return 2;
    }
    a = tap_open(argv[1]);
    nsfd = open(argv[2], O_RDONLY | O_CLOEXEC);
    if (a < 0 || nsfd < 0 || setns(nsfd, CLONE_NEWNET) != 0) {
        perror("taprelay: tap A / setns");
        return 1;
    }
    b = tap_open(argv[3]);
    if (b < 0) {
        perror("taprelay: tap B");
        return 1;
    }
    signal(SIGTERM, on_sig);
    signal(SIGINT, on_sig);
    end = time(NULL) + atol(argv[4]);
    d[0].from = a;
    d[0].to = b;
    d[1].from = b;
    d[1].to = a;
    d[0].n = d[1].n = 0;
    for (int i = 0; i < 2; i++) {
        if (pthread_create(&th[i], NULL, pump, &d[i]) != 0) {
            perror("taprelay: pthread_create");
            return 1;
        }
    }
    printf("relaying\n");
    fflush(stdout);
    while (!stop && time(NULL) < end) {
        usleep(100000);
    }
    stop = 1;
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    printf("frames a2b=%llu b2a=%llu\n", d[0].n, d[1].n);
    return 0;
}
