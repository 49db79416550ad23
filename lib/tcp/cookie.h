/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Seed 004's SYN stage primitives: stateless SYN cookies and RFC 6528
 * initial sequence numbers, both keyed with SipHash-2-4.
 *
 * Cookie layout (the ISS of the SYN-ACK, 32 bits):
 *   bits 31..30  epoch (64 s periods) modulo 4
 *   bits 29..27  index of the client's MSS in a table
 *   bits 26..0   SipHash(secret[epoch], 4-tuple, client ISN, epoch, MSS index)
 * Window scale and SACK-permitted travel in the low 5 bits of our timestamp
 * value (echoed back in the ACK's TSecr); without timestamps they are lost,
 * as with any cookie scheme. A cookie is valid during its own epoch and the
 * next one (64..128 s); a secret is replaced two epochs after its last use.
 */
#ifndef RNIC_TCP_COOKIE_H
#define RNIC_TCP_COOKIE_H

#include <stdbool.h>
#include <stdint.h>

#define COOKIE_EPOCH_S   64
#define COOKIE_TS_BITS   5    /* wscale (4 bits, 15 = none) + SACK (1) */

struct tcp_cookie_keys {
	uint64_t secret[4][2];        /* per epoch mod 4 */
	uint64_t isn_key[2];
	uint32_t epoch_installed;     /* secrets valid up to this epoch + 1 */
};

/* A flow's four-tuple as the SYN stage hashes it: network byte order, as
 * on the wire; IPv4 addresses IPv4-mapped (::ffff:a.b.c.d), so one cookie
 * covers both families and an IPv4 cookie never validates an IPv6 flow. */
struct tcp_flow {
	uint8_t laddr[16], raddr[16];
	uint16_t lport, rport;
};

uint64_t rnic_siphash24(const uint64_t key[2], const void *data, size_t len);

/** Random keys (from rte_rand) for epochs @p epoch .. epoch+1. */
void tcp_cookie_keys_init(struct tcp_cookie_keys *k, uint32_t epoch);

/** Install the secret for epoch @p epoch + 1 and forget epoch - 2's. */
void tcp_cookie_rotate(struct tcp_cookie_keys *k, uint32_t epoch);

/** The MSS a cookie can carry for a client's advertised @p mss. */
uint16_t tcp_cookie_mss_round(uint16_t mss);

uint32_t tcp_cookie_make(const struct tcp_cookie_keys *k, const struct tcp_flow *f,
			 uint32_t client_isn, uint16_t mss, uint32_t epoch);

/**
 * Check the cookie acked by a final ACK (ack - 1). @return true and the MSS
 * when valid in @p epoch (current) or the one before.
 */
bool tcp_cookie_check(const struct tcp_cookie_keys *k, const struct tcp_flow *f,
		      uint32_t client_isn, uint32_t cookie, uint32_t epoch,
		      uint16_t *mss);

/** Timestamp low bits carrying window scale (or none) and SACK-permitted. */
uint32_t tcp_cookie_ts_encode(uint32_t tsval, bool ws_ok, uint8_t ws, bool sack);
void tcp_cookie_ts_decode(uint32_t tsecr, bool *ws_ok, uint8_t *ws, bool *sack);

/** RFC 6528: ISN = M + F(4-tuple, key), M a 4-microsecond clock. */
uint32_t tcp_isn(const struct tcp_cookie_keys *k, const struct tcp_flow *f,
		 uint64_t now_us);

#endif
