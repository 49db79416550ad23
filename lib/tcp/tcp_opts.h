/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP options: parsing with strict bounds (a malformed option list is an
 * error, never an out-of-bounds read) and building for SYN, SYN-ACK and
 * data segments. MSS (RFC 9293), window scale and timestamps (RFC 7323),
 * SACK-permitted and SACK blocks (RFC 2018).
 */
#ifndef RNIC_TCP_OPTS_H
#define RNIC_TCP_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TCPOPT_EOL      0
#define TCPOPT_NOP      1
#define TCPOPT_MSS      2
#define TCPOPT_WS       3
#define TCPOPT_SACK_OK  4
#define TCPOPT_SACK     5
#define TCPOPT_TS       8

#define TCP_MAX_SACK_BLOCKS 4
#define TCP_MAX_WSCALE      14   /* RFC 7323 section 2.3 */

struct tcp_sack_block {
	uint32_t start, end;          /* host order; [start, end) */
};

struct tcp_opts {
	bool mss_ok, ws_ok, sack_ok, ts_ok;
	bool ws_clamped;              /* parse: the peer's shift was above 14 */
	uint16_t mss;
	uint8_t ws;
	uint32_t tsval, tsecr;
	unsigned n_sack;
	struct tcp_sack_block sack[TCP_MAX_SACK_BLOCKS];
};

/**
 * Parse @p len bytes of options. @return 0, or -EINVAL for a malformed list
 * (length byte < 2 or past the end, wrong fixed length for a known kind,
 * a SACK length that is not 2 + 8n).
 */
int tcp_opts_parse(const uint8_t *p, size_t len, bool syn, struct tcp_opts *o);

/**
 * Write options; @return bytes written (a multiple of 4, at most 40).
 * SYN/SYN-ACK: MSS, SACK-permitted, timestamps, window scale as enabled in
 * @p o; other segments: timestamps and up to @p o->n_sack SACK blocks.
 */
size_t tcp_opts_build(uint8_t *p, const struct tcp_opts *o, bool syn);

#endif
