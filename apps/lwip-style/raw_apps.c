/**
 * @file raw_apps.c
 * Raw-API services in the style of lwIP contrib's tcpecho_raw.c and
 * udpecho_raw.c: TCP echo on port 7007 (callbacks, the pbuf chain kept
 * until the stack took it, tcp_recved as data is sent on: flow control),
 * UDP echo on port 7. Everything here runs on the tcpip thread.
 */
#include <string.h>

#include "lwip/opt.h"
#include "lwip/tcp.h"
#include "lwip/udp.h"
#include "lwip/pbuf.h"
#include "lwip/sys.h"
#if LWIP_DNS
#include "lwip/dns.h"
#endif

#include "lwip_style.h"

#define ECHO_CONNS 8

struct echo_state {
  struct tcp_pcb *pcb;      /* NULL = free */
  struct pbuf *p;           /* received, not yet written */
  u16_t off;                /* bytes of p (first buffer) written */
  u8_t closing;             /* the peer closed: close once p is written */
  u8_t retries;
};

static struct echo_state echo_states[ECHO_CONNS];
static struct tcp_pcb *echo_listener;
static struct udp_pcb *udp_echo_pcb;

static void echo_free(struct echo_state *es)
{
  if (es->p != NULL) {
    pbuf_free(es->p);
  }
  memset(es, 0, sizeof *es);
}

static err_t echo_close(struct echo_state *es)
{
  struct tcp_pcb *pcb = es->pcb;
  err_t ret = ERR_OK;
  tcp_arg(pcb, NULL);
  tcp_recv(pcb, NULL);
  tcp_sent(pcb, NULL);
  tcp_err(pcb, NULL);
  tcp_poll(pcb, NULL, 0);
  if (tcp_close(pcb) != ERR_OK) {
    tcp_abort(pcb);
    ret = ERR_ABRT;
  }
  echo_free(es);
  return ret;
}

/* Write what is pending as far as the send buffer takes it. ERR_ABRT when
 * the connection was aborted. */
static err_t echo_send(struct echo_state *es)
{
  struct tcp_pcb *pcb = es->pcb;
  err_t err = ERR_OK;

  while (es->p != NULL) {
    struct pbuf *q = es->p;
    u16_t n = (u16_t)(q->len - es->off);
    if (n > tcp_sndbuf(pcb)) {
      n = tcp_sndbuf(pcb);
    }
    if (n == 0 && q->len > es->off) {
      break;                                   /* send buffer full: wait for sent */
    }
    if (n > 0) {
      err = tcp_write(pcb, (const u8_t *)q->payload + es->off, n, TCP_WRITE_FLAG_COPY);
      if (err == ERR_MEM) {
        break;                                 /* retried from sent / poll */
      }
      if (err != ERR_OK) {
        tcp_abort(pcb);
        return ERR_ABRT;
      }
      es->off = (u16_t)(es->off + n);
      tcp_recved(pcb, n);
    }
    if (es->off == q->len) {
      es->p = q->next;
      if (es->p != NULL) {
        pbuf_ref(es->p);                       /* keep the rest when q goes */
      }
      pbuf_free(q);
      es->off = 0;
    }
  }
  tcp_output(pcb);
  if (es->p == NULL && es->closing) {
    return echo_close(es);
  }
  return ERR_OK;
}

static err_t echo_recv(void *arg, struct tcp_pcb *tpcb, struct pbuf *p, err_t err)
{
  struct echo_state *es = (struct echo_state *)arg;
  LWIP_UNUSED_ARG(tpcb);
  if (p == NULL) {
    es->closing = 1;
    return echo_send(es);
  }
  if (err != ERR_OK) {
    pbuf_free(p);
    return err;
  }
  if (es->p == NULL) {
    es->p = p;
    es->off = 0;
  } else {
    pbuf_cat(es->p, p);
  }
  return echo_send(es);
}

static err_t echo_sent(void *arg, struct tcp_pcb *tpcb, u16_t len)
{
  struct echo_state *es = (struct echo_state *)arg;
  LWIP_UNUSED_ARG(tpcb);
  LWIP_UNUSED_ARG(len);
  es->retries = 0;
  return echo_send(es);
}

static err_t echo_poll(void *arg, struct tcp_pcb *tpcb)
{
  struct echo_state *es = (struct echo_state *)arg;
  if (es == NULL) {
    tcp_abort(tpcb);
    return ERR_ABRT;
  }
  return echo_send(es);
}

static void echo_error(void *arg, err_t err)
{
  struct echo_state *es = (struct echo_state *)arg;
  LWIP_UNUSED_ARG(err);
  if (es != NULL) {
    echo_free(es);     /* the pcb is gone */
  }
}

static err_t echo_accept(void *arg, struct tcp_pcb *newpcb, err_t err)
{
  struct echo_state *es = NULL;
  int i;
  LWIP_UNUSED_ARG(arg);
  if (err != ERR_OK || newpcb == NULL) {
    return ERR_VAL;
  }
  for (i = 0; i < ECHO_CONNS && es == NULL; i++) {
    if (echo_states[i].pcb == NULL) {
      es = &echo_states[i];
    }
  }
  if (es == NULL) {
    return ERR_MEM;                            /* the stack aborts it */
  }
  memset(es, 0, sizeof *es);
  es->pcb = newpcb;
  tcp_setprio(newpcb, TCP_PRIO_MIN);
  tcp_nagle_disable(newpcb);
  tcp_arg(newpcb, es);
  tcp_recv(newpcb, echo_recv);
  tcp_sent(newpcb, echo_sent);
  tcp_err(newpcb, echo_error);
  tcp_poll(newpcb, echo_poll, 2);
  return ERR_OK;
}

static void udp_echo_recv(void *arg, struct udp_pcb *upcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
  LWIP_UNUSED_ARG(arg);
  if (p != NULL) {
    udp_sendto(upcb, p, addr, port);   /* does not take p */
    pbuf_free(p);
  }
}

void raw_apps_start(void *arg)
{
  struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_ANY);
  if (pcb != NULL) {
    if (tcp_bind(pcb, IP_ANY_TYPE, LWIP_STYLE_RAW_ECHO_PORT) == ERR_OK) {
      echo_listener = tcp_listen(pcb);
      if (echo_listener != NULL) {
        tcp_accept(echo_listener, echo_accept);
      }
    } else {
      tcp_abort(pcb);
    }
  }
  udp_echo_pcb = udp_new_ip_type(IPADDR_TYPE_ANY);
  if (udp_echo_pcb != NULL) {
    if (udp_bind(udp_echo_pcb, IP_ANY_TYPE, LWIP_STYLE_ECHO_PORT) == ERR_OK) {
      udp_recv(udp_echo_pcb, udp_echo_recv, NULL);
    } else {
      udp_remove(udp_echo_pcb);
      udp_echo_pcb = NULL;
    }
  }
  sys_sem_signal((sys_sem_t *)arg);
}

void raw_apps_stop(void *arg)
{
  int i;
  if (echo_listener != NULL) {
    tcp_close(echo_listener);
    echo_listener = NULL;
  }
  for (i = 0; i < ECHO_CONNS; i++) {
    if (echo_states[i].pcb != NULL) {
      tcp_abort(echo_states[i].pcb);     /* echo_error frees the state */
    }
  }
  if (udp_echo_pcb != NULL) {
    udp_remove(udp_echo_pcb);
    udp_echo_pcb = NULL;
  }
  sys_sem_signal((sys_sem_t *)arg);
}

/* ------------------------------------------------------ raw TCP client */

struct client_state {
  struct raw_client_req *req;
  u32_t queued;
  u16_t rlen;
  u8_t fin_sent;
};

static struct client_state client;

static void client_finish(int status)
{
  struct raw_client_req *req = client.req;
  if (req == NULL) {
    return;
  }
  req->status = status;
  req->sent = client.queued;
  req->reply[client.rlen] = '\0';
  client.req = NULL;
  sys_sem_signal(&req->done);
}

static err_t client_send(struct tcp_pcb *pcb)
{
  struct raw_client_req *req = client.req;
  u8_t buf[1024];
  while (req != NULL && client.queued < req->n) {
    u32_t left = req->n - client.queued;
    u16_t n = tcp_sndbuf(pcb);
    u16_t k;
    err_t err;
    if (n > sizeof buf) {
      n = sizeof buf;
    }
    if (n > left) {
      n = (u16_t)left;
    }
    if (n == 0) {
      break;
    }
    for (k = 0; k < n; k++) {
      buf[k] = (u8_t)http_data_byte(client.queued + k);
    }
    err = tcp_write(pcb, buf, n, (u8_t)(TCP_WRITE_FLAG_COPY | (n < left ? TCP_WRITE_FLAG_MORE : 0)));
    if (err == ERR_MEM) {
      break;
    }
    if (err != ERR_OK) {
      tcp_abort(pcb);
      return ERR_ABRT;
    }
    client.queued += n;
  }
  if (req != NULL && client.queued == req->n && !client.fin_sent) {
    client.fin_sent = tcp_shutdown(pcb, 0, 1) == ERR_OK;
  }
  tcp_output(pcb);
  return ERR_OK;
}

static err_t client_connected(void *arg, struct tcp_pcb *tpcb, err_t err)
{
  LWIP_UNUSED_ARG(arg);
  if (err != ERR_OK) {
    return err;
  }
  return client_send(tpcb);
}

static err_t client_sent(void *arg, struct tcp_pcb *tpcb, u16_t len)
{
  LWIP_UNUSED_ARG(arg);
  LWIP_UNUSED_ARG(len);
  return client_send(tpcb);
}

static err_t client_recv(void *arg, struct tcp_pcb *tpcb, struct pbuf *p, err_t err)
{
  struct raw_client_req *req = client.req;
  LWIP_UNUSED_ARG(arg);
  LWIP_UNUSED_ARG(err);
  if (p == NULL) {
    /* the peer answered and closed: done */
    tcp_arg(tpcb, NULL);
    tcp_recv(tpcb, NULL);
    tcp_sent(tpcb, NULL);
    tcp_err(tpcb, NULL);
    if (tcp_close(tpcb) != ERR_OK) {
      tcp_abort(tpcb);
      client_finish(-1);
      return ERR_ABRT;
    }
    if (req != NULL) {
      req->reply[client.rlen] = '\0';
    }
    client.req = NULL;
    if (req != NULL) {
      req->status = 0;
      req->sent = client.queued;
      sys_sem_signal(&req->done);
    }
    return ERR_OK;
  }
  if (req != NULL) {
    u16_t room = (u16_t)(sizeof req->reply - 1u - client.rlen);
    client.rlen = (u16_t)(client.rlen + pbuf_copy_partial(p, req->reply + client.rlen,
                                                          p->tot_len < room ? p->tot_len : room, 0));
  }
  tcp_recved(tpcb, p->tot_len);
  pbuf_free(p);
  return ERR_OK;
}

static void client_error(void *arg, err_t err)
{
  LWIP_UNUSED_ARG(arg);
  LWIP_UNUSED_ARG(err);
  client_finish(-1);
}

void raw_client_start(void *arg)
{
  struct raw_client_req *req = (struct raw_client_req *)arg;
  struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
  memset(&client, 0, sizeof client);
  client.req = req;
  if (pcb == NULL) {
    client_finish(-1);
    return;
  }
  tcp_arg(pcb, &client);
  tcp_recv(pcb, client_recv);
  tcp_sent(pcb, client_sent);
  tcp_err(pcb, client_error);
  if (tcp_connect(pcb, &req->ip, req->port, client_connected) != ERR_OK) {
    tcp_abort(pcb);
  }
}

/* ------------------------------------------------------------------ DNS */

#if LWIP_DNS
static void dns_found(const char *name, const ip_addr_t *ipaddr, void *callback_arg)
{
  struct dns_req *r = (struct dns_req *)callback_arg;
  LWIP_UNUSED_ARG(name);
  if (ipaddr != NULL) {
    ip_addr_copy(r->addr, *ipaddr);
    r->status = 0;
  } else {
    r->status = -1;
  }
  sys_sem_signal(&r->done);
}
#endif

void dns_start(void *arg)
{
  struct dns_req *r = (struct dns_req *)arg;
#if LWIP_DNS
  err_t err = dns_gethostbyname(r->name, &r->addr, dns_found, r);
  if (err == ERR_INPROGRESS) {
    return;
  }
  r->status = err == ERR_OK ? 0 : -1;
#else
  r->status = -2;
#endif
  sys_sem_signal(&r->done);
}
