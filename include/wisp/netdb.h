/**
 * @file netdb.h
 * Name resolution for application threads: getaddrinfo / freeaddrinfo /
 * gai_strerror and gethostbyname / gethostbyname_r with wisp's prefixed
 * names (wisp/sockets_posix_names.h maps the standard names onto them),
 * on top of the core's DNS resolver (wisp/dns.h).
 *
 * A call that needs the network starts the query in the core context (by
 * wisp_tcpip_run, like the netconn API) and blocks the calling thread on a
 * semaphore until the resolver's callback, which runs on the stack thread,
 * signals it. The wait is bounded (the resolver's own retry budget plus a
 * second); if it ever runs out the request is cancelled in the core.
 *
 * Memory: no heap. Results of getaddrinfo come from a pool of
 * WISP_NETDB_ADDRINFO_COUNT records in the netdb instance (struct
 * wisp_netdb) that the application provides (statically, like the socket
 * table) and installs once with wisp_netdb_init(); one record per address
 * and socket type. They must be returned with wisp_freeaddrinfo();
 * wisp_netdb_ai_in_use() shows the pool's use (0 = back at baseline).
 * The netdb instance is the one piece of process-wide state of this file
 * (getaddrinfo has no stack argument): it names the stack thread whose
 * stack resolves.
 *
 * Supported: IPv4 only (AF_UNSPEC or AF_INET; AF_INET6 gives EAI_FAMILY);
 * flags AI_PASSIVE, AI_CANONNAME (the canonical name reported is the name
 * asked for: CNAME targets are not kept), AI_NUMERICHOST, AI_NUMERICSERV,
 * AI_ADDRCONFIG and AI_V4MAPPED/AI_ALL (accepted; no effect with IPv4
 * only); numeric services 0..65535 only (there is no services database:
 * a service name gives EAI_SERVICE, or EAI_NONAME with AI_NUMERICSERV);
 * socket types 0 (then one result for SOCK_STREAM/TCP and one for
 * SOCK_DGRAM/UDP, in that order), SOCK_STREAM, SOCK_DGRAM, SOCK_RAW
 * (without a service). A node that is a dotted quad is used as it is;
 * NULL gives the wildcard address with AI_PASSIVE and 127.0.0.1 without.
 *
 * Errors (EAI_* with glibc's values): EAI_NONAME (the name does not exist:
 * NXDOMAIN or no address record, an invalid host name, or not numeric with
 * AI_NUMERICHOST), EAI_AGAIN (no answer in time, SERVFAIL, the resolver is
 * busy), EAI_FAIL (the servers refused, no server configured, the stack is
 * stopping, called on the stack thread), EAI_MEMORY (the addrinfo pool is
 * empty), EAI_FAMILY, EAI_SOCKTYPE, EAI_SERVICE, EAI_BADFLAGS, EAI_SYSTEM
 * (no netdb instance installed, or an OS object could not be made).
 *
 * Who may call: any thread except the stack thread / core context (the
 * calls block until the core answers).
 */
#ifndef WISP_NETDB_H
#define WISP_NETDB_H

#include "wisp/sockets.h"
#include "wisp/dns.h"

/* getaddrinfo errors (glibc's values) */
#define WISP_EAI_BADFLAGS -1
#define WISP_EAI_NONAME -2
#define WISP_EAI_AGAIN -3
#define WISP_EAI_FAIL -4
#define WISP_EAI_FAMILY -6
#define WISP_EAI_SOCKTYPE -7
#define WISP_EAI_SERVICE -8
#define WISP_EAI_MEMORY -10
#define WISP_EAI_SYSTEM -11
#define WISP_EAI_OVERFLOW -12

/* ai_flags (glibc's values) */
#define WISP_AI_PASSIVE 0x0001
#define WISP_AI_CANONNAME 0x0002
#define WISP_AI_NUMERICHOST 0x0004
#define WISP_AI_V4MAPPED 0x0008
#define WISP_AI_ALL 0x0010
#define WISP_AI_ADDRCONFIG 0x0020
#define WISP_AI_NUMERICSERV 0x0400

/* h_errno values of gethostbyname (glibc's) */
#define WISP_HOST_NOT_FOUND 1
#define WISP_TRY_AGAIN 2
#define WISP_NO_RECOVERY 3
#define WISP_NO_DATA 4

/** struct addrinfo (glibc layout). */
struct wisp_addrinfo {
    int ai_flags;
    int ai_family;
    int ai_socktype;
    int ai_protocol;
    wisp_socklen_t ai_addrlen;
    struct wisp_sockaddr *ai_addr;
    char *ai_canonname;
    struct wisp_addrinfo *ai_next;
};

/** struct hostent. */
struct wisp_hostent {
    char *h_name;
    char **h_aliases;
    int h_addrtype;
    int h_length;
    char **h_addr_list;
};

struct wisp_netdb_ai;

struct wisp_netdb;

/** Install db as the process's netdb instance, resolving on the stack of
 *  tcpip (running or about to be started). WISP_OK, WISP_ERR_ARG,
 *  WISP_ERR_MEM (OS resources) or WISP_ERR_ALREADY (one is installed).
 *  Call once, before other threads use the calls below. */
wisp_err_t wisp_netdb_init(struct wisp_netdb *db, struct wisp_tcpip *tcpip);
/** Uninstall the instance; returns the number of addrinfo records that
 *  were never freed (0 = clean). Call when no thread uses the calls. */
unsigned wisp_netdb_deinit(void);
/** addrinfo records in use now. */
unsigned wisp_netdb_ai_in_use(void);

/** getaddrinfo() (POSIX; see the file comment for what is supported).
 *  0 and *res = a list to free with wisp_freeaddrinfo(), or an EAI_*
 *  value (*res untouched). */
int wisp_getaddrinfo(const char *node, const char *service, const struct wisp_addrinfo *hints,
                     struct wisp_addrinfo **res);
/** Return a list from wisp_getaddrinfo() to the pool (NULL is ignored). */
void wisp_freeaddrinfo(struct wisp_addrinfo *ai);
/** Text of an EAI_* value (never NULL). */
const char *wisp_gai_strerror(int errcode);

/** gethostbyname() (POSIX.1-2001, obsolescent): IPv4, one address. The
 *  result lives in the netdb instance and is overwritten by the next call
 *  from any thread; NULL on failure with wisp_h_errno() telling why
 *  (WISP_HOST_NOT_FOUND, WISP_TRY_AGAIN, WISP_NO_RECOVERY). */
struct wisp_hostent *wisp_gethostbyname(const char *name);
/** h_errno of the last wisp_gethostbyname() (process-wide, not per
 *  thread: use wisp_gethostbyname_r in threaded code). */
int wisp_h_errno(void);
/** Reentrant gethostbyname (the glibc interface): ret and buf (buflen
 *  bytes: the address, the pointer arrays and the name, about 40 bytes +
 *  the name) belong to the caller. Returns 0 with *result = ret on
 *  success, 0 with *result = NULL and *h_errnop set when the name is not
 *  resolved, or WISP_ERANGE when buf is too small (also with *result =
 *  NULL). */
int wisp_gethostbyname_r(const char *name, struct wisp_hostent *ret, char *buf, size_t buflen,
                         struct wisp_hostent **result, int *h_errnop);

/* the layout of the structures above (private tier) */
#include "wisp/priv/netdb.h"

#endif /* WISP_NETDB_H */
