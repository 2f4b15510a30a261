/**
 * @file netdb.c
 * getaddrinfo / freeaddrinfo / gai_strerror / gethostbyname(_r) for
 * application threads (wisp/netdb.h): argument checks, numeric hosts and
 * services, the blocking bridge to the core resolver (start in the core
 * context, wait on a semaphore the resolver's callback signals), and the
 * addrinfo pool of the netdb instance.
 *
 * Locking: db->lock (a leaf) guards the pool, the static hostent and
 * h_err; it is never held while entering the core or waiting.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/netdb.h"

#if WISP_DNS

/* The installed instance (see netdb.h: getaddrinfo has no stack argument). */
static struct wisp_netdb *g_netdb;

/* Longest wait for the resolver: its whole retry budget (every
 * transmission at the largest timeout) plus a second. */
#define NETDB_WAIT_MS ((uint32_t)WISP_DNS_TIMEOUT_MS * 8u * (WISP_DNS_MAX_RETRIES + 1u) + 1000u)

/* ------------------------------------------------ blocking resolution */

struct nd_req {
    wisp_sys_sem_t done;
    const char *name;
    wisp_err_t err;
    wisp_ip4_t addr;
};

/* Core context: the resolver's callback. */
static void nd_found(void *arg, const char *name, wisp_err_t err, const wisp_ipaddr_t *addr, uint32_t ttl_s)
{
    struct nd_req *r = arg;
    WISP_UNUSED(name);
    WISP_UNUSED(ttl_s);
    r->err = err;
    r->addr = (err == WISP_OK && addr != NULL) ? wisp_ipaddr_ip4(addr) : 0;
    wisp_sys_sem_signal(&r->done); /* last touch of r by the core */
}

/* Core context: start the query. */
static wisp_err_t nd_start(struct wisp_stack *s, void *arg)
{
    struct nd_req *r = arg;
    wisp_ipaddr_t a;
    wisp_err_t err = wisp_dns_gethostbyname(s, r->name, &a, nd_found, r);
    if (err == WISP_OK) {
        r->addr = wisp_ipaddr_ip4(&a);
    }
    return err;
}

/* Core context: give up a request that waited too long. */
static wisp_err_t nd_cancel(struct wisp_stack *s, void *arg)
{
    (void)wisp_dns_cancel(s, nd_found, arg);
    return WISP_OK;
}

/* Resolve name on the installed instance's stack (blocking). Returns
 * WISP_OK with *out, or the resolver's error. WISP_ERR_IF: called on the
 * stack thread; WISP_ERR_BUF: no semaphore. */
static wisp_err_t nd_resolve(struct wisp_netdb *db, const char *name, wisp_ip4_t *out)
{
    struct nd_req r;
    wisp_err_t err;

    if (wisp_tcpip_on_stack_thread(db->tcpip)) {
        return WISP_ERR_IF; /* would wait for ourselves */
    }
    r.name = name; /* err and addr: written before they are read (nd_start, nd_found) */
    if (wisp_sys_sem_new(&r.done, 0) != WISP_OK) {
        return WISP_ERR_BUF;
    }
    err = wisp_tcpip_run(db->tcpip, nd_start, &r);
    if (err == WISP_ERR_INPROGRESS) {
        if (wisp_sys_sem_wait(&r.done, NETDB_WAIT_MS) == WISP_OK) {
            err = r.err;
        } else {
            /* Cancel in the core; the callback and the cancel are both core
             * context, so afterwards it either ran (the semaphore is
             * signalled) or never will. */
            (void)wisp_tcpip_run(db->tcpip, nd_cancel, &r);
            err = wisp_sys_sem_wait(&r.done, WISP_SYS_NO_WAIT) == WISP_OK ? r.err : WISP_ERR_TIMEOUT;
        }
    }
    wisp_sys_sem_free(&r.done);
    if (err == WISP_OK) {
        *out = r.addr;
    }
    return err;
}

/* EAI_* for a resolver error. */
static int nd_eai(wisp_err_t err)
{
    if (err == WISP_DNS_ERR_NOTFOUND || err == WISP_ERR_ARG) {
        return WISP_EAI_NONAME;
    }
    if (err == WISP_ERR_TIMEOUT || err == WISP_ERR_MEM) {
        return WISP_EAI_AGAIN;
    }
    if (err == WISP_ERR_BUF) {
        return WISP_EAI_SYSTEM;
    }
    return WISP_EAI_FAIL; /* CONN (refused), VAL (no server), ABRT/CLSD (stopping), IF */
}

/* h_errno for a resolver error. */
static int nd_herr(wisp_err_t err)
{
    switch (nd_eai(err)) {
    case WISP_EAI_NONAME:
        return WISP_HOST_NOT_FOUND;
    case WISP_EAI_AGAIN:
        return WISP_TRY_AGAIN;
    default:
        return WISP_NO_RECOVERY;
    }
}

/* ------------------------------------------------------------ instance */

wisp_err_t wisp_netdb_init(struct wisp_netdb *db, struct wisp_tcpip *tcpip)
{
    if (db == NULL || tcpip == NULL) {
        return WISP_ERR_ARG;
    }
    if (g_netdb != NULL) {
        return WISP_ERR_ALREADY;
    }
    memset(db, 0, sizeof(*db));
    db->tcpip = tcpip;
    if (wisp_sys_mutex_new(&db->lock) != WISP_OK) {
        return WISP_ERR_MEM;
    }
    g_netdb = db;
    return WISP_OK;
}

unsigned wisp_netdb_deinit(void)
{
    struct wisp_netdb *db = g_netdb;
    unsigned n;
    if (db == NULL) {
        return 0;
    }
    n = db->ai_used;
    g_netdb = NULL;
    wisp_sys_mutex_free(&db->lock);
    return n;
}

unsigned wisp_netdb_ai_in_use(void)
{
    struct wisp_netdb *db = g_netdb;
    unsigned n;
    if (db == NULL) {
        return 0;
    }
    wisp_sys_mutex_lock(&db->lock);
    n = db->ai_used;
    wisp_sys_mutex_unlock(&db->lock);
    return n;
}

/* --------------------------------------------------------- getaddrinfo */

/* Numeric service: 0 with *port, else an EAI_* value. */
static int parse_service(const char *service, int flags, uint16_t *port)
{
    unsigned long v = 0;
    const char *c = service;
    if (service == NULL) {
        *port = 0;
        return 0;
    }
    if (*c == '\0') {
        return WISP_EAI_SERVICE;
    }
    for (; *c != '\0'; c++) {
        if (*c < '0' || *c > '9') {
            /* No services database (POSIX: EAI_NONAME with AI_NUMERICSERV). */
            return (flags & WISP_AI_NUMERICSERV) ? WISP_EAI_NONAME : WISP_EAI_SERVICE;
        }
        v = v * 10u + (unsigned long)(*c - '0');
        if (v > 65535u) {
            return WISP_EAI_SERVICE;
        }
    }
    *port = (uint16_t)v;
    return 0;
}

/* Copy a host name, cut at WISP_DNS_NAME_MAX (dst has room for that and
 * the NUL). */
static void name_copy(char *dst, const char *name)
{
    size_t len = strlen(name);
    if (len > WISP_DNS_NAME_MAX) {
        len = WISP_DNS_NAME_MAX;
    }
    memcpy(dst, name, len);
    dst[len] = '\0';
}

/* Free records (db->lock held). */
static void ai_put_locked(struct wisp_netdb *db, struct wisp_addrinfo *ai)
{
    while (ai != NULL) {
        struct wisp_addrinfo *next = ai->ai_next;
        struct wisp_netdb_ai *rec = (struct wisp_netdb_ai *)(void *)ai; /* ai is the first member */
        if (rec >= &db->ai[0] && rec < &db->ai[WISP_NETDB_ADDRINFO_COUNT] && rec->used) {
            rec->used = 0;
            db->ai_used--;
        } else {
            WISP_ASSERT(0); /* not one of ours, or freed twice */
        }
        ai = next;
    }
}

/* The arguments of getaddrinfo that can be refused before any lookup
 * (POSIX getaddrinfo ERRORS): 0 or the EAI code. */
static int ai_hints_check(const char *node, const char *service, int flags, int family, int socktype, int protocol)
{
    const int known = WISP_AI_PASSIVE | WISP_AI_CANONNAME | WISP_AI_NUMERICHOST | WISP_AI_V4MAPPED | WISP_AI_ALL |
                      WISP_AI_ADDRCONFIG | WISP_AI_NUMERICSERV;
    if (node == NULL && service == NULL) {
        return WISP_EAI_NONAME; /* POSIX: at least one of them */
    }
    if ((flags & ~known) != 0 || ((flags & WISP_AI_CANONNAME) && node == NULL)) {
        return WISP_EAI_BADFLAGS;
    }
    if (family != WISP_AF_UNSPEC && family != WISP_AF_INET) {
        return WISP_EAI_FAMILY; /* IPv4 only */
    }
    if (socktype != 0 && socktype != WISP_SOCK_STREAM && socktype != WISP_SOCK_DGRAM && socktype != WISP_SOCK_RAW) {
        return WISP_EAI_SOCKTYPE;
    }
    if (socktype != WISP_SOCK_RAW && protocol != 0) {
        /* TCP with a stream socket, UDP with a datagram socket (or any) */
        int want = protocol == WISP_IPPROTO_TCP ? WISP_SOCK_STREAM
                   : protocol == WISP_IPPROTO_UDP ? WISP_SOCK_DGRAM : -1;
        if (want < 0 || (socktype != 0 && socktype != want)) {
            return WISP_EAI_SOCKTYPE;
        }
    }
    if (socktype == WISP_SOCK_RAW && service != NULL) {
        return WISP_EAI_SERVICE; /* no ports on raw sockets */
    }
    return 0;
}

int wisp_getaddrinfo(const char *node, const char *service, const struct wisp_addrinfo *hints,
                     struct wisp_addrinfo **res)
{
    struct wisp_netdb *db = g_netdb;
    struct wisp_addrinfo *head = NULL, **tail = &head;
    int flags = 0, family = WISP_AF_UNSPEC, socktype = 0, protocol = 0;
    int i, e;
    uint16_t port;
    wisp_ip4_t addr;

    if (res == NULL) {
        return WISP_EAI_FAIL;
    }
    if (hints != NULL) {
        flags = hints->ai_flags;
        family = hints->ai_family;
        socktype = hints->ai_socktype;
        protocol = hints->ai_protocol;
    }
    e = ai_hints_check(node, service, flags, family, socktype, protocol);
    if (e != 0) {
        return e;
    }
    e = parse_service(service, flags, &port);
    if (e != 0) {
        return e;
    }

    /* The address. */
    if (node == NULL) {
        addr = (flags & WISP_AI_PASSIVE) ? WISP_IP4_ANY : wisp_ip4(127, 0, 0, 1);
    } else if (wisp_ip4_aton(node, &addr)) {
        /* numeric host */
    } else if (flags & WISP_AI_NUMERICHOST) {
        return WISP_EAI_NONAME;
    } else {
        wisp_err_t err;
        if (db == NULL) {
            return WISP_EAI_SYSTEM;
        }
        err = nd_resolve(db, node, &addr);
        if (err != WISP_OK) {
            return nd_eai(err);
        }
    }
    if (db == NULL) {
        return WISP_EAI_SYSTEM; /* the pool lives in the instance */
    }

    /* One record per socket type the hints allow (ai_hints_check made
     * sure there is one): TCP and UDP, or the raw socket asked for. */
    wisp_sys_mutex_lock(&db->lock);
    for (i = 0; i < 2; i++) {
        struct wisp_netdb_ai *rec = db->ai;
        int st = i ? WISP_SOCK_DGRAM : WISP_SOCK_STREAM, pr = i ? WISP_IPPROTO_UDP : WISP_IPPROTO_TCP;
        if (socktype == WISP_SOCK_RAW) {
            st = WISP_SOCK_RAW;
            pr = protocol;
        } else if ((socktype != 0 && socktype != st) || (protocol != 0 && protocol != pr)) {
            continue;
        }
        while (rec != &db->ai[WISP_NETDB_ADDRINFO_COUNT] && rec->used) { /* the first free record */
            rec++;
        }
        if (rec == &db->ai[WISP_NETDB_ADDRINFO_COUNT]) {
            ai_put_locked(db, head);
            wisp_sys_mutex_unlock(&db->lock);
            return WISP_EAI_MEMORY;
        }
        memset(rec, 0, sizeof(*rec));
        rec->used = 1;
        db->ai_used++;
        rec->sin.sin_family = WISP_AF_INET;
        rec->sin.sin_port = wisp_htons(port);
        rec->sin.sin_addr.s_addr = addr;
        rec->ai.ai_flags = flags;
        rec->ai.ai_family = WISP_AF_INET;
        rec->ai.ai_socktype = st;
        rec->ai.ai_protocol = pr;
        rec->ai.ai_addrlen = (wisp_socklen_t)sizeof(rec->sin);
        rec->ai.ai_addr = (struct wisp_sockaddr *)(void *)&rec->sin;
        if (head == NULL && (flags & WISP_AI_CANONNAME)) {
            name_copy(rec->canon, node);
            rec->ai.ai_canonname = rec->canon;
        }
        *tail = &rec->ai;
        tail = &rec->ai.ai_next;
        if (st == WISP_SOCK_RAW) {
            break;
        }
    }
    wisp_sys_mutex_unlock(&db->lock);
    *res = head;
    return 0;
}

void wisp_freeaddrinfo(struct wisp_addrinfo *ai)
{
    struct wisp_netdb *db = g_netdb;
    if (ai == NULL || db == NULL) {
        return;
    }
    wisp_sys_mutex_lock(&db->lock);
    ai_put_locked(db, ai);
    wisp_sys_mutex_unlock(&db->lock);
}

const char *wisp_gai_strerror(int errcode)
{
    switch (errcode) {
    case 0:
        return "Success";
    case WISP_EAI_BADFLAGS:
        return "Bad value for ai_flags";
    case WISP_EAI_NONAME:
        return "Name or service not known";
    case WISP_EAI_AGAIN:
        return "Temporary failure in name resolution";
    case WISP_EAI_FAIL:
        return "Non-recoverable failure in name resolution";
    case WISP_EAI_FAMILY:
        return "ai_family not supported";
    case WISP_EAI_SOCKTYPE:
        return "ai_socktype not supported";
    case WISP_EAI_SERVICE:
        return "Servname not supported for ai_socktype";
    case WISP_EAI_MEMORY:
        return "Memory allocation failure";
    case WISP_EAI_SYSTEM:
        return "System error";
    case WISP_EAI_OVERFLOW:
        return "Argument buffer overflow";
    default:
        return "Unknown error";
    }
}

/* ------------------------------------------------------- gethostbyname */

/* Resolve for gethostbyname: a dotted quad directly, else the resolver. */
static wisp_err_t hb_resolve(struct wisp_netdb *db, const char *name, wisp_ip4_t *addr)
{
    if (name == NULL) {
        return WISP_ERR_ARG;
    }
    if (wisp_ip4_aton(name, addr)) {
        return WISP_OK;
    }
    if (db == NULL) {
        return WISP_ERR_VAL;
    }
    return nd_resolve(db, name, addr);
}

struct wisp_hostent *wisp_gethostbyname(const char *name)
{
    struct wisp_netdb *db = g_netdb;
    wisp_ip4_t addr = 0;
    wisp_err_t err;

    if (db == NULL) {
        return NULL;
    }
    err = hb_resolve(db, name, &addr);
    wisp_sys_mutex_lock(&db->lock);
    if (err != WISP_OK) {
        db->h_err = nd_herr(err);
        wisp_sys_mutex_unlock(&db->lock);
        return NULL;
    }
    db->h_err = 0;
    name_copy(db->he_name, name);
    db->he_addr.s_addr = addr;
    db->he_aliases[0] = NULL;
    db->he_addrs[0] = (char *)&db->he_addr;
    db->he_addrs[1] = NULL;
    db->he.h_name = db->he_name;
    db->he.h_aliases = db->he_aliases;
    db->he.h_addrtype = WISP_AF_INET;
    db->he.h_length = 4;
    db->he.h_addr_list = db->he_addrs;
    wisp_sys_mutex_unlock(&db->lock);
    return &db->he;
}

int wisp_h_errno(void)
{
    struct wisp_netdb *db = g_netdb;
    int e;
    if (db == NULL) {
        return WISP_NO_RECOVERY;
    }
    wisp_sys_mutex_lock(&db->lock);
    e = db->h_err;
    wisp_sys_mutex_unlock(&db->lock);
    return e;
}

int wisp_gethostbyname_r(const char *name, struct wisp_hostent *ret, char *buf, size_t buflen,
                         struct wisp_hostent **result, int *h_errnop)
{
    /* buf layout: pointer-aligned { char *addrs[2]; char *aliases[1]; }
     * then the 4-byte address, then the name. */
    size_t pad, need, len;
    char **ptrs;
    char *p;
    wisp_ip4_t addr = 0;
    wisp_err_t err;
    int dummy;

    if (h_errnop == NULL) {
        h_errnop = &dummy;
    }
    if (result == NULL) {
        return WISP_EINVAL;
    }
    *result = NULL;
    if (ret == NULL || buf == NULL || name == NULL) {
        *h_errnop = WISP_NO_RECOVERY;
        return WISP_EINVAL;
    }
    len = strlen(name);
    pad = (sizeof(char *) - ((uintptr_t)buf % sizeof(char *))) % sizeof(char *);
    need = pad + 3u * sizeof(char *) + 4u + len + 1u;
    if (buflen < need) {
        *h_errnop = WISP_NO_RECOVERY;
        return WISP_ERANGE;
    }
    err = hb_resolve(g_netdb, name, &addr);
    if (err != WISP_OK) {
        *h_errnop = nd_herr(err);
        return 0;
    }
    p = buf + pad;
    ptrs = (char **)(void *)p;
    p += 3u * sizeof(char *);
    memcpy(p, &addr, 4);
    ptrs[0] = p;
    ptrs[1] = NULL;
    ptrs[2] = NULL;
    p += 4;
    memcpy(p, name, len + 1u);
    ret->h_name = p;
    ret->h_aliases = &ptrs[2];
    ret->h_addrtype = WISP_AF_INET;
    ret->h_length = 4;
    ret->h_addr_list = &ptrs[0];
    *h_errnop = 0;
    *result = ret;
    return 0;
}

#else
typedef int wisp_netdb_disabled_t; /* ISO C forbids an empty translation unit */
#endif /* WISP_DNS */
