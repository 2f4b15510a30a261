/*
 * taprelay.c -- the user-space hop of the Linux ceiling (bench/run.sh):
 * copies every Ethernet frame between TAP A (in the namespace the relay
 * starts in) and TAP B (in the network namespace NS-PATH, e.g.
 * /var/run/netns/NAME), one read and one write per frame, in one thread:
 * the same TAP + user-space copy a wisp or lwIP process does, with the
 * Linux kernel behind it. Both TAPs must exist (ip tuntap add).
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

int main(int argc, char **argv)
{
    static unsigned char buf[65536];
    struct pollfd p[2];
    unsigned long long cnt[2] = { 0, 0 };
    int nsfd;
    time_t end;
    if (argc != 5) {
        fprintf(stderr, "usage: taprelay TAP-A NS-PATH TAP-B SECONDS\n");
        return 2;
    }
    p[0].fd = tap_open(argv[1]);
    nsfd = open(argv[2], O_RDONLY | O_CLOEXEC);
    if (p[0].fd < 0 || nsfd < 0 || setns(nsfd, CLONE_NEWNET) != 0) {
        perror("taprelay: tap A / setns");
        return 1;
    }
    p[1].fd = tap_open(argv[3]);
    if (p[1].fd < 0) {
        perror("taprelay: tap B");
        return 1;
    }
    signal(SIGTERM, on_sig);
    signal(SIGINT, on_sig);
    end = time(NULL) + atol(argv[4]);
    printf("relaying\n");
    fflush(stdout);
    while (!stop && time(NULL) < end) {
        p[0].events = p[1].events = POLLIN;
        if (poll(p, 2, 200) <= 0) continue;
        for (int i = 0; i < 2; i++) {
            if (p[i].revents & POLLIN) {
                ssize_t n = read(p[i].fd, buf, sizeof buf);
                if (n > 0 && write(p[1 - i].fd, buf, (size_t)n) == n) cnt[i]++;
            }
        }
    }
    printf("frames a2b=%llu b2a=%llu\n", cnt[0], cnt[1]);
    return 0;
}
