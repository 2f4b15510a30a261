/**
 * @file chksum.h
 * Internet checksum (RFC 1071) and the block copy used on the transmit path.
 *
 * Conventions used by every function here:
 *  - A "sum" is the folded 16-bit ones'-complement sum, NOT inverted, of the
 *    covered bytes taken as big-endian 16-bit words (an odd trailing byte is
 *    the high byte of a last word padded with zero), returned as a host-order
 *    value. It is 0x0000 only when every covered byte is zero; otherwise it is
 *    in 0x0001..0xFFFF (0xFFFF being ones'-complement "-0").
 *  - The checksum FIELD to put on the wire is (uint16_t)~sum over the covered
 *    bytes with the field itself zeroed, written big-endian (wisp_wr16).
 *  - A received block is valid when the sum over it, field included, is
 *    0xFFFF.
 *
 * Who may call: anyone, from any context (task or interrupt). All functions
 * are pure (no state, no locks, no allocation); wisp_memcpy/wisp_memcpy_ref/
 * wisp_chksum_copy write only to dst.
 *
 * Per-architecture replacement: src/core/chksum.c supplies portable C
 * versions of the fast functions. A port may provide its own (e.g. assembler
 * using ADC chains or LDM/STM) by defining, when compiling chksum.c:
 *  - WISP_ARCH_CHKSUM_SUM  -> the port defines wisp_chksum_sum()
 *  - WISP_ARCH_CHKSUM_COPY -> the port defines wisp_chksum_copy()
 *  - WISP_ARCH_MEMCPY      -> the port defines wisp_memcpy()
 * The replacement must keep exactly the contract documented below; the unit
 * test (test/unit/test_chksum.c) checks it against the _ref versions, which
 * are always built.
 */
#ifndef WISP_CHKSUM_H
#define WISP_CHKSUM_H

#include <stdint.h>
#include <stddef.h>

/**
 * Sum (see file comment) of @p len bytes at @p data, which may have any
 * alignment; @p len may be 0 (result 0). Fast portable version: aligned
 * 32-bit loads into a 64-bit accumulator. Any context, pure.
 */
uint16_t wisp_chksum_sum(const void *data, size_t len);

/**
 * Reference version of wisp_chksum_sum(): one big-endian byte pair at a time,
 * folded as it goes. Same contract and results; slow, obviously correct.
 * Used by the tests as the oracle. Any context, pure.
 */
uint16_t wisp_chksum_sum_ref(const void *data, size_t len);

/**
 * Ones'-complement addition of two sums (end-around carry), e.g. to add a
 * pseudo-header sum to a payload sum. add(0, 0) == 0. Any context, pure.
 */
uint16_t wisp_chksum_add(uint16_t a, uint16_t b);

/**
 * Sum of the concatenation A|B, given sum_a over block A (@p len_a bytes) and
 * sum_b over block B (summed as if it started at offset 0). When @p len_a is
 * odd, B's bytes sit at the other byte position of each word, so sum_b is
 * byte-swapped before the addition (RFC 1071 §2(B)). Lets a chain of buffers
 * be summed piece by piece. Any context, pure.
 */
uint16_t wisp_chksum_combine(uint16_t sum_a, uint16_t sum_b, size_t len_a);

/**
 * Sum of the IPv4 pseudo header used by TCP and UDP (RFC 768, RFC 9293 §3.1):
 * source address, destination address, zero, protocol, transport length.
 * @p src_be / @p dst_be are addresses in NETWORK byte order held in a
 * uint32_t (the 4 bytes in memory are the octets in wire order, as
 * memcpy'd from a header); @p proto is the IP protocol number and @p len the
 * transport header + payload length in host order. Returns the folded sum
 * (not inverted); add it to the transport sum with wisp_chksum_add().
 * Any context, pure.
 */
uint16_t wisp_chksum_pseudo4(uint32_t src_be, uint32_t dst_be, uint8_t proto, uint16_t len);

/**
 * Incremental checksum update, RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m').
 * @p hc is the checksum FIELD as read from the wire (host-order value of the
 * big-endian field, i.e. already inverted); one 16-bit word of the covered
 * data changed from @p old16 to @p new16 (host-order values of the big-endian
 * words, at an even offset from the start of the covered data). Returns the
 * new field value. The result equals a recomputation from scratch, including
 * the 0x0000/0xFFFF cases discussed in RFC 1624 §3-5, whenever the covered
 * data is not all zeros (always true for IPv4 headers: version/IHL != 0).
 * Any context, pure.
 */
uint16_t wisp_chksum_adjust(uint16_t hc, uint16_t old16, uint16_t new16);

/**
 * Copy @p len bytes from @p src to @p dst and return wisp_chksum_sum() of
 * them, in one pass (checksum-while-copy on the transmit path). Either
 * pointer may have any alignment; the regions must not overlap; @p len may be
 * 0. Any context; writes only dst.
 */
uint16_t wisp_chksum_copy(void *dst, const void *src, size_t len);

/**
 * Fast memcpy: copy @p len bytes (any length including 0, any alignment,
 * regions must not overlap); returns @p dst. Aligns dst with head bytes, then
 * moves native words (64-bit on 64-bit hosts, 32-bit otherwise) unrolled,
 * then the tail bytes. Any context; writes only dst.
 */
void *wisp_memcpy(void *dst, const void *src, size_t len);

/**
 * Reference copy: a plain byte loop. Same contract as wisp_memcpy().
 * Any context; writes only dst.
 */
void *wisp_memcpy_ref(void *dst, const void *src, size_t len);

#endif /* WISP_CHKSUM_H */
