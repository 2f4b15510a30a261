/**
 * @file err.h
 * The core's error codes. Values and meanings match lwIP 2.1's err_t so that
 * the netconn layer can expose them unchanged; errno only appears at the
 * socket boundary.
 */
#ifndef WISP_ERR_H
#define WISP_ERR_H

typedef signed char wisp_err_t;

enum {
    WISP_OK = 0,              /**< no error */
    WISP_ERR_MEM = -1,        /**< out of memory (a pool is empty) */
    WISP_ERR_BUF = -2,        /**< buffer error (no headroom, bad chain) */
    WISP_ERR_TIMEOUT = -3,    /**< timed out */
    WISP_ERR_RTE = -4,        /**< no route to host */
    WISP_ERR_INPROGRESS = -5, /**< operation in progress */
    WISP_ERR_VAL = -6,        /**< illegal value */
    WISP_ERR_WOULDBLOCK = -7, /**< would block / device busy */
    WISP_ERR_USE = -8,        /**< address in use */
    WISP_ERR_ALREADY = -9,    /**< already connecting */
    WISP_ERR_ISCONN = -10,    /**< already connected */
    WISP_ERR_CONN = -11,      /**< not connected */
    WISP_ERR_IF = -12,        /**< low-level interface error (link down) */
    WISP_ERR_ABRT = -13,      /**< connection aborted */
    WISP_ERR_RST = -14,       /**< connection reset */
    WISP_ERR_CLSD = -15,      /**< connection closed */
    WISP_ERR_ARG = -16,       /**< illegal argument */
    /* wisp additions (not in lwIP): ICMP errors reported to a socket */
    WISP_ERR_REFUSED = -17,   /**< connection refused (ICMP port / protocol unreachable) */
    WISP_ERR_HOSTUNREACH = -18, /**< host unreachable (ICMP) */
    WISP_ERR_NETUNREACH = -19 /**< network unreachable (ICMP) */
};

/** Short constant name of an error code ("ERR_MEM"); never NULL. */
const char *wisp_err_str(wisp_err_t e);

#endif /* WISP_ERR_H */
