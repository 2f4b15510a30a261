/**
 * @file addr.c
 * IPv4 address text conversion and family-tagged address helpers.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/addr.h"

wisp_ip4_t wisp_ip4_prefix_mask(unsigned prefix)
{
    uint32_t host = prefix == 0 ? 0u : (prefix >= 32 ? 0xffffffffu : (0xffffffffu << (32 - prefix)));
    return wisp_htonl(host);
}

bool wisp_ip4_aton(const char *s, wisp_ip4_t *out)
{
    uint8_t o[4];
    int i;
    if (s == NULL) {
        return false;
    }
    for (i = 0; i < 4; i++) {
        unsigned v = 0, digits = 0;
        while (*s >= '0' && *s <= '9') {
            v = v * 10u + (unsigned)(*s - '0');
            if (++digits > 3 || v > 255u) {
                return false;
            }
            s++;
        }
        if (digits == 0) {
            return false;
        }
        o[i] = (uint8_t)v;
        if (i < 3) {
            if (*s != '.') {
                return false;
            }
            s++;
        }
    }
    if (*s != '\0') {
        return false;
    }
    if (out != NULL) {
        memcpy(out, o, 4);
    }
    return true;
}

char *wisp_ip4_ntoa(wisp_ip4_t a, char *buf)
{
    uint8_t o[4];
    char *p = buf;
    int i;
    memcpy(o, &a, 4);
    for (i = 0; i < 4; i++) {
        unsigned v = o[i];
        if (v >= 100u) {
            *p++ = (char)('0' + v / 100u);
        }
        if (v >= 10u) {
            *p++ = (char)('0' + (v / 10u) % 10u);
        }
        *p++ = (char)('0' + v % 10u);
        if (i < 3) {
            *p++ = '.';
        }
    }
    *p = '\0';
    return buf;
}
