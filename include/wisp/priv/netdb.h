/**
 * @file priv/netdb.h
 * Private tier: the layout of the structures of wisp/netdb.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/netdb.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_NETDB_H
#define WISP_PRIV_NETDB_H

#include "wisp/netdb.h"

/** One pool record (internal; public for sizing). ai is the first member. */
struct wisp_netdb_ai {
    struct wisp_addrinfo WISP_PRIV(ai);
    struct wisp_sockaddr_in WISP_PRIV(sin);
    uint8_t WISP_PRIV(used);
    char WISP_PRIV(canon)[WISP_DNS_NAME_MAX + 1];
};

/** The netdb layer instance. Allocate it statically or on the heap;
 *  fields are private. */
struct wisp_netdb {
    struct wisp_tcpip *WISP_PRIV(tcpip);          /**< the stack thread that resolves */
    wisp_sys_mutex_t WISP_PRIV(lock);             /**< pool, static hostent, h_errno */
    unsigned WISP_PRIV(ai_used);
    struct wisp_netdb_ai WISP_PRIV(ai)[WISP_NETDB_ADDRINFO_COUNT];
    /* gethostbyname's result (POSIX: static, overwritten by the next call) */
    struct wisp_hostent WISP_PRIV(he);
    char *WISP_PRIV(he_aliases)[1];
    char *WISP_PRIV(he_addrs)[2];
    struct wisp_in_addr WISP_PRIV(he_addr);
    char WISP_PRIV(he_name)[WISP_DNS_NAME_MAX + 1];
    int WISP_PRIV(h_err);                         /**< h_errno of the last gethostbyname */
};

#endif /* WISP_PRIV_NETDB_H */
