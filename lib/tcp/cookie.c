/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_random.h>

#include "tcp/cookie.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static inline void sip_round(uint64_t v[4])
{
	v[0] += v[1]; v[1] = ROTL(v[1], 13); v[1] ^= v[0]; v[0] = ROTL(v[0], 32);
	v[2] += v[3]; v[3] = ROTL(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = ROTL(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = ROTL(v[1], 17); v[1] ^= v[2]; v[2] = ROTL(v[2], 32);
}

/* SipHash-2-4 (Aumasson and Bernstein), little-endian word loads. Two
 * run per SYN (the cookie and the timestamp offset), so the words are
 * loaded whole, not assembled byte by byte. */
uint64_t rnic_siphash24(const uint64_t key[2], const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t v[4] = {
		key[0] ^ 0x736f6d6570736575ULL, key[1] ^ 0x646f72616e646f6dULL,
		key[0] ^ 0x6c7967656e657261ULL, key[1] ^ 0x7465646279746573ULL,
	};
	uint64_t m, b = (uint64_t)len << 56;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&m, p + i, 8);
		m = rte_le_to_cpu_64(m);
		v[3] ^= m;
		sip_round(v);
		sip_round(v);
		v[0] ^= m;
	}
	m = 0;
	memcpy(&m, p + i, len - i);   /* the last 0..7 bytes, in memory order */
	b |= rte_le_to_cpu_64(m);
	v[3] ^= b;
	sip_round(v);
	sip_round(v);
	v[0] ^= b;
	v[2] ^= 0xff;
	for (int r = 0; r < 4; r++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* MSS values a cookie can name (3 bits), most common first-fit upward. */
static const uint16_t mss_table[8] = { 536, 1200, 1360, 1440, 1460, 4036, 8940, 8960 };

uint16_t tcp_cookie_mss_round(uint16_t mss)
{
	for (int i = 7; i >= 0; i--)
		if (mss >= mss_table[i])
			return mss_table[i];
	return mss_table[0];
}

static unsigned mss_index(uint16_t mss)
{
	for (int i = 7; i >= 0; i--)
		if (mss >= mss_table[i])
			return (unsigned)i;
	return 0;
}

static void new_secret(uint64_t s[2])
{
	s[0] = rte_rand();
	s[1] = rte_rand();
}

void tcp_cookie_keys_init(struct tcp_cookie_keys *k, uint32_t epoch)
{
	memset(k, 0, sizeof(*k));
	for (int i = 0; i < 4; i++)
		new_secret(k->secret[i]);
	new_secret(k->isn_key);
	k->epoch_installed = epoch + 1;
}

void tcp_cookie_rotate(struct tcp_cookie_keys *k, uint32_t epoch)
{
	/* readers use epochs e-1 and e; install e+1 ahead of time (so no reader
	 * sees a secret being written) and replace e-2's, whose slot is also
	 * e+2's: its cookies die with it */
	while ((int32_t)(k->epoch_installed - (epoch + 1)) < 0) {
		k->epoch_installed++;
		new_secret(k->secret[k->epoch_installed & 3]);
		new_secret(k->secret[(k->epoch_installed + 1) & 3]);
	}
}

static uint32_t cookie_hash(const struct tcp_cookie_keys *k, const struct tcp_flow *f,
			    uint32_t client_isn, uint32_t epoch, unsigned mssi)
{
	struct {
		struct tcp_flow f;
		uint32_t isn, epoch, mssi;
	} in;
	memset(&in, 0, sizeof(in));   /* no padding byte left undefined */
	in.f = *f;
	in.isn = client_isn;
	in.epoch = epoch;
	in.mssi = mssi;
	return (uint32_t)rnic_siphash24(k->secret[epoch & 3], &in, sizeof(in)) &
	       ((1u << 27) - 1);
}

uint32_t tcp_cookie_make(const struct tcp_cookie_keys *k, const struct tcp_flow *f,
			 uint32_t client_isn, uint16_t mss, uint32_t epoch)
{
	unsigned mi = mss_index(mss);
	return (epoch & 3) << 30 | mi << 27 | cookie_hash(k, f, client_isn, epoch, mi);
}

bool tcp_cookie_check(const struct tcp_cookie_keys *k, const struct tcp_flow *f,
		      uint32_t client_isn, uint32_t cookie, uint32_t epoch,
		      uint16_t *mss)
{
	uint32_t ce = cookie >> 30;
	unsigned mi = (cookie >> 27) & 7;
	uint32_t e;

	if (ce == (epoch & 3))
		e = epoch;
	else if (ce == ((epoch - 1) & 3))
		e = epoch - 1;
	else
		return false;   /* older than one epoch: stale */
	if (cookie_hash(k, f, client_isn, e, mi) != (cookie & ((1u << 27) - 1)))
		return false;
	*mss = mss_table[mi];
	return true;
}

uint32_t tcp_cookie_ts_encode(uint32_t tsval, bool ws_ok, uint8_t ws, bool sack)
{
	const uint32_t mask = (1u << COOKIE_TS_BITS) - 1;
	uint32_t bits = (ws_ok ? (ws & 0xf) : 0xf) << 1 | (sack ? 1 : 0);
	uint32_t v = (tsval & ~mask) | bits;
	/* never ahead of the clock (at most 63 ticks behind): the segments
	 * that follow carry the real clock, and a peer's PAWS check would drop
	 * them if this value were larger */
	if ((int32_t)(v - tsval) > 0)
		v -= mask + 1;
	return v;
}

void tcp_cookie_ts_decode(uint32_t tsecr, bool *ws_ok, uint8_t *ws, bool *sack)
{
	uint32_t w = (tsecr >> 1) & 0xf;
	*sack = tsecr & 1;
	*ws_ok = w != 0xf;
	*ws = *ws_ok ? (uint8_t)(w > 14 ? 14 : w) : 0;
}

uint32_t tcp_isn(const struct tcp_cookie_keys *k, const struct tcp_flow *f,
		 uint64_t now_us)
{
	return (uint32_t)(now_us / 4) +
	       (uint32_t)rnic_siphash24(k->isn_key, f, sizeof(*f));
}
