/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>

#include "tcp/tcp_opts.h"

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24; p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

int tcp_opts_parse(const uint8_t *p, size_t len, bool syn, struct tcp_opts *o)
{
	size_t i = 0;

	memset(o, 0, sizeof(*o));
	while (i < len) {
		uint8_t kind = p[i];
		if (kind == TCPOPT_EOL)
			break;
		if (kind == TCPOPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= len)
			return -EINVAL;
		uint8_t olen = p[i + 1];
		if (olen < 2 || i + olen > len)
			return -EINVAL;
		const uint8_t *v = p + i + 2;
		switch (kind) {
		case TCPOPT_MSS:
			if (olen != 4)
				return -EINVAL;
			if (syn) {  /* only meaningful on SYNs (RFC 9293 3.7.1) */
				o->mss_ok = true;
				o->mss = get16(v);
			}
			break;
		case TCPOPT_WS:
			if (olen != 3)
				return -EINVAL;
			if (syn) {
				o->ws_ok = true;
				/* RFC 7323 2.3: larger than 14 is used as 14 */
				o->ws_clamped = v[0] > TCP_MAX_WSCALE;
				o->ws = o->ws_clamped ? TCP_MAX_WSCALE : v[0];
			}
			break;
		case TCPOPT_SACK_OK:
			if (olen != 2)
				return -EINVAL;
			o->sack_ok = syn;
			break;
		case TCPOPT_SACK:
			if (olen < 10 || (olen - 2) % 8 != 0)
				return -EINVAL;
			for (unsigned b = 0; b < (olen - 2u) / 8 &&
			     o->n_sack < TCP_MAX_SACK_BLOCKS; b++) {
				o->sack[o->n_sack].start = get32(v + 8 * b);
				o->sack[o->n_sack].end = get32(v + 8 * b + 4);
				o->n_sack++;
			}
			break;
		case TCPOPT_TS:
			if (olen != 10)
				return -EINVAL;
			o->ts_ok = true;
			o->tsval = get32(v);
			o->tsecr = get32(v + 4);
			break;
		default:
			break;  /* unknown options are skipped by their length */
		}
		i += olen;
	}
	return 0;
}

size_t tcp_opts_build(uint8_t *p, const struct tcp_opts *o, bool syn)
{
	size_t n = 0;

	if (syn && o->mss_ok) {
		p[n++] = TCPOPT_MSS; p[n++] = 4;
		put16(p + n, o->mss); n += 2;
	}
	if (syn && o->sack_ok && o->ts_ok) {
		p[n++] = TCPOPT_SACK_OK; p[n++] = 2;  /* shares a word with TS */
	} else if (syn && o->sack_ok) {
		p[n++] = TCPOPT_NOP; p[n++] = TCPOPT_NOP;
		p[n++] = TCPOPT_SACK_OK; p[n++] = 2;
	}
	if (o->ts_ok) {
		if (!(syn && o->sack_ok)) {
			p[n++] = TCPOPT_NOP; p[n++] = TCPOPT_NOP;
		}
		p[n++] = TCPOPT_TS; p[n++] = 10;
		put32(p + n, o->tsval); put32(p + n + 4, o->tsecr); n += 8;
	}
	if (syn && o->ws_ok) {
		p[n++] = TCPOPT_NOP;
		p[n++] = TCPOPT_WS; p[n++] = 3; p[n++] = o->ws;
	}
	if (!syn && o->n_sack) {
		unsigned max = o->ts_ok ? 3 : 4;
		unsigned nb = o->n_sack < max ? o->n_sack : max;
		p[n++] = TCPOPT_NOP; p[n++] = TCPOPT_NOP;
		p[n++] = TCPOPT_SACK; p[n++] = (uint8_t)(2 + 8 * nb);
		for (unsigned b = 0; b < nb; b++) {
			put32(p + n, o->sack[b].start);
			put32(p + n + 4, o->sack[b].end);
			n += 8;
		}
	}
	return n;
}
