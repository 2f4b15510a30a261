/**
 * @file http_socket.c
 * A small HTTP/1.0 server on port 80 with the lwIP socket API (lwip_*
 * names): one thread waits with select() (poll() where the lwIP build
 * has no select, as Debian's: LWIP_SOCKET_SELECT 0) for new connections
 * and requests of up to 8 clients, and answers each request with a
 * blocking send of the whole response, then closes.
 *   GET /         a short HTML page
 *   GET /data/N   N bytes (N <= 4 MB) of http_data_byte(0..N-1)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwip/opt.h"
#include "lwip/sys.h"
#include "lwip/sockets.h"

#include "lwip_style.h"

#define MAX_CLIENTS 8
#define REQ_MAX 512
#define DATA_MAX (4ul * 1024ul * 1024ul)

struct client {
  int fd;                 /* -1 = free */
  size_t len;
  char req[REQ_MAX];
};

static const char page[] =
  "<!DOCTYPE html><html><head><title>lwip-style</title></head>"
  "<body><h1>lwip-style</h1><p>served by the socket API</p></body></html>\n";

char http_data_byte(unsigned long i)
{
  static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789\n";
  return alphabet[i % (sizeof alphabet - 1u)];
}

static int send_all(int fd, const char *p, size_t n)
{
  while (n > 0) {
    ssize_t w = lwip_send(fd, p, n, 0);
    if (w <= 0) {
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static void respond(int fd, const char *req)
{
  char hdr[160], chunk[1460];
  unsigned long n = 0, off;
  const char *body = NULL;
  int hl;

  if (strncmp(req, "GET / ", 6) == 0) {
    body = page;
    n = sizeof page - 1u;
  } else if (strncmp(req, "GET /data/", 10) == 0) {
    n = strtoul(req + 10, NULL, 10);
    if (n > DATA_MAX) {
      n = DATA_MAX;
    }
  } else {
    static const char nf[] = "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    (void)send_all(fd, nf, sizeof nf - 1u);
    return;
  }
  hl = snprintf(hdr, sizeof hdr, "HTTP/1.0 200 OK\r\nContent-Type: %s\r\nContent-Length: %lu\r\n"
                "Connection: close\r\n\r\n", body != NULL ? "text/html" : "application/octet-stream", n);
  if (hl <= 0 || send_all(fd, hdr, (size_t)hl) != 0) {
    return;
  }
  if (body != NULL) {
    (void)send_all(fd, body, n);
    return;
  }
  for (off = 0; off < n;) {
    size_t k, c = (n - off) < sizeof chunk ? (size_t)(n - off) : sizeof chunk;
    for (k = 0; k < c; k++) {
      chunk[k] = http_data_byte(off + k);
    }
    if (send_all(fd, chunk, c) != 0) {
      return;
    }
    off += c;
  }
}

/* Read what a client sent; 1 when its request is complete (answered and
 * closed) or it went away, 0 to keep waiting. */
static int client_readable(struct client *c)
{
  ssize_t r = lwip_recv(c->fd, c->req + c->len, sizeof c->req - 1u - c->len, 0);
  if (r <= 0) {
    return 1;
  }
  c->len += (size_t)r;
  c->req[c->len] = '\0';
  if (strstr(c->req, "\r\n\r\n") != NULL || c->len == sizeof c->req - 1u) {
    respond(c->fd, c->req);
    return 1;
  }
  return 0;
}

static void client_close(struct client *c)
{
  lwip_close(c->fd);
  c->fd = -1;
  c->len = 0;
}

void http_server(void *arg)
{
  struct client cl[MAX_CLIENTS];
  struct sockaddr_in sa;
  int lfd, i, one = 1;
  LWIP_UNUSED_ARG(arg);

  for (i = 0; i < MAX_CLIENTS; i++) {
    cl[i].fd = -1;
    cl[i].len = 0;
  }
  lfd = lwip_socket(AF_INET, SOCK_STREAM, 0);
  if (lfd < 0) {
    lwip_style_thread_done("http");
    return;
  }
  (void)lwip_setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = lwip_htons(LWIP_STYLE_HTTP_PORT);
  sa.sin_addr.s_addr = lwip_htonl(INADDR_ANY);
  if (lwip_bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || lwip_listen(lfd, 4) != 0) {
    lwip_close(lfd);
    lwip_style_thread_done("http");
    return;
  }
  while (!lwip_style_stopping()) {
    int ready_l = 0, ready[MAX_CLIENTS];
#if LWIP_SOCKET_SELECT
    fd_set rs;
    struct timeval tv;
    int maxfd = lfd;
    FD_ZERO(&rs);
    FD_SET(lfd, &rs);
    for (i = 0; i < MAX_CLIENTS; i++) {
      if (cl[i].fd >= 0) {
        FD_SET(cl[i].fd, &rs);
        maxfd = cl[i].fd > maxfd ? cl[i].fd : maxfd;
      }
    }
    tv.tv_sec = 0;
    tv.tv_usec = LWIP_STYLE_POLL_MS * 1000L;
    if (lwip_select(maxfd + 1, &rs, NULL, NULL, &tv) < 0) {
      break;
    }
    ready_l = FD_ISSET(lfd, &rs);
    for (i = 0; i < MAX_CLIENTS; i++) {
      ready[i] = cl[i].fd >= 0 && FD_ISSET(cl[i].fd, &rs);
    }
#elif LWIP_SOCKET_POLL
    struct pollfd pf[MAX_CLIENTS + 1];
    pf[0].fd = lfd;
    pf[0].events = POLLIN;
    pf[0].revents = 0;
    for (i = 0; i < MAX_CLIENTS; i++) {
      pf[i + 1].fd = cl[i].fd;     /* negative: ignored */
      pf[i + 1].events = POLLIN;
      pf[i + 1].revents = 0;
    }
    if (lwip_poll(pf, MAX_CLIENTS + 1, LWIP_STYLE_POLL_MS) < 0) {
      break;
    }
    ready_l = (pf[0].revents & (POLLIN | POLLERR | POLLHUP)) != 0;
    for (i = 0; i < MAX_CLIENTS; i++) {
      ready[i] = cl[i].fd >= 0 && (pf[i + 1].revents & (POLLIN | POLLERR | POLLHUP)) != 0;
    }
#else
#error "http_socket.c needs select() or poll() (LWIP_SOCKET_SELECT or LWIP_SOCKET_POLL)"
#endif
    for (i = 0; i < MAX_CLIENTS; i++) {
      if (ready[i] && client_readable(&cl[i])) {
        client_close(&cl[i]);
      }
    }
    if (ready_l) {
      int fd = lwip_accept(lfd, NULL, NULL);
      if (fd >= 0) {
        for (i = 0; i < MAX_CLIENTS && cl[i].fd >= 0; i++) {
        }
        if (i == MAX_CLIENTS) {
          lwip_close(fd);            /* busy */
        } else {
          cl[i].fd = fd;
          cl[i].len = 0;
        }
      }
    }
  }
  for (i = 0; i < MAX_CLIENTS; i++) {
    if (cl[i].fd >= 0) {
      client_close(&cl[i]);
    }
  }
  lwip_close(lfd);
  lwip_style_thread_done("http");
}
