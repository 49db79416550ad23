/* SPDX-License-Identifier: BSD-3-Clause */
/* RoCEv2 ICRC over ISA-L's reflected CRC-32; see icrc.h for what is covered. */
#include <errno.h>
#include <string.h>

#include <isa-l/crc.h>

#include "common/mbuf_crc.h"
#include <rte_mbuf.h>

#include "roce/icrc.h"
#include "roce/opcode.h"

#define ICRC_LRH_LEN     8u        /* 0xff bytes standing in for the LRH */
#define ICRC_IP_MIN      20u
#define ICRC_IP_MAX      60u
#define ICRC_UDP_LEN     8u
/* Masked pseudo header: LRH stand-in, IPv4 (with options), UDP, BTH. */
#define ICRC_PSEUDO_MAX  (ICRC_LRH_LEN + ICRC_IP_MAX + ICRC_UDP_LEN + \
			  RNIC_ROCE_BTH_LEN)

#define ICRC_IP6_LEN     40u       /* IPv6 header; RoCEv2 uses no extension headers */

/* Byte offsets of the variant fields. */
#define ICRC_IP6_HLIM    7u
#define ICRC_IP_TOS      1u
#define ICRC_IP_TTL      8u
#define ICRC_IP_CSUM     10u
#define ICRC_UDP_CSUM    6u
#define ICRC_BTH_FECN    4u

/* The packet's length from its IP header's first 8 bytes: the IPv4 total
 * length, or 40 + the IPv6 payload length. */
static uint32_t
icrc_total(const uint8_t *ip)
{
	if ((ip[0] >> 4) == 6)
		return ICRC_IP6_LEN + (((uint32_t)ip[4] << 8) | ip[5]);
	return ((uint32_t)ip[2] << 8) | ip[3];
}

/*
 * Read the IP header length and the packet's length from the first 20
 * bytes at @ip (IPv4, or IPv6 whose next header is UDP), given @avail
 * bytes of packet. Returns 0 or -EINVAL when they cannot describe a RoCEv2
 * packet that fits.
 */
static int
icrc_lengths(const uint8_t *ip, uint32_t avail, uint32_t *ihl, uint32_t *tot)
{
	if (avail < ICRC_IP_MIN)
		return -EINVAL;
	if ((ip[0] >> 4) == 6) {
		if (ip[6] != 17)   /* UDP right after the fixed header */
			return -EINVAL;
		*ihl = ICRC_IP6_LEN;
	} else if ((ip[0] >> 4) == 4) {
		*ihl = (uint32_t)(ip[0] & 0x0f) * 4u;
	} else {
		return -EINVAL;
	}
	*tot = icrc_total(ip);
	if (*ihl < ICRC_IP_MIN)
		return -EINVAL;
	if (*tot < *ihl + ICRC_UDP_LEN + RNIC_ROCE_BTH_LEN + RNIC_ROCE_ICRC_LEN ||
	    *tot > avail)
		return -EINVAL;
	return 0;
}

/*
 * CRC of the masked pseudo header. @hdr holds the packet's first
 * @ihl + UDP + BTH bytes; the variant fields are overwritten in a copy.
 */
static uint32_t
icrc_pseudo(const uint8_t *hdr, uint32_t ihl)
{
	uint8_t ps[ICRC_PSEUDO_MAX];
	uint32_t n = ihl + ICRC_UDP_LEN + RNIC_ROCE_BTH_LEN;
	uint8_t *ip = ps + ICRC_LRH_LEN;
	uint8_t *udp = ip + ihl;
	uint8_t *bth = udp + ICRC_UDP_LEN;

	memset(ps, 0xff, ICRC_LRH_LEN);
	memcpy(ip, hdr, n);
	if ((ip[0] >> 4) == 6) {
		/* annex A17.4: traffic class, flow label, hop limit */
		ip[0] |= 0x0f;
		ip[1] = ip[2] = ip[3] = 0xff;
		ip[ICRC_IP6_HLIM] = 0xff;
	} else {
		ip[ICRC_IP_TOS] = 0xff;
		ip[ICRC_IP_TTL] = 0xff;
		ip[ICRC_IP_CSUM] = 0xff;
		ip[ICRC_IP_CSUM + 1] = 0xff;
	}
	udp[ICRC_UDP_CSUM] = 0xff;
	udp[ICRC_UDP_CSUM + 1] = 0xff;
	bth[ICRC_BTH_FECN] = 0xff;
	/* crc32_gzip_refl inverts on entry and exit, so 0 starts a fresh CRC
	 * and a finished CRC can be passed back in to continue it. */
	return crc32_gzip_refl(0, ps, ICRC_LRH_LEN + n);
}

int
rnic_roce_icrc_compute(const void *ip, uint32_t len, uint32_t *icrc)
{
	const uint8_t *p = ip;
	uint32_t ihl, tot, hdr;
	int rc;

	rc = icrc_lengths(p, len, &ihl, &tot);
	if (rc != 0)
		return rc;
	hdr = ihl + ICRC_UDP_LEN + RNIC_ROCE_BTH_LEN;
	*icrc = crc32_gzip_refl(icrc_pseudo(p, ihl), p + hdr,
				tot - hdr - RNIC_ROCE_ICRC_LEN);
	return 0;
}

int
rnic_roce_icrc_generate(void *ip, uint32_t len)
{
	uint8_t *p = ip;
	uint32_t icrc, tot;
	int rc;

	rc = rnic_roce_icrc_compute(p, len, &icrc);
	if (rc != 0)
		return rc;
	tot = icrc_total(p);
	rnic_roce_icrc_put(p + tot - RNIC_ROCE_ICRC_LEN, icrc);
	return 0;
}

int
rnic_roce_icrc_verify(const void *ip, uint32_t len)
{
	const uint8_t *p = ip;
	uint32_t icrc, tot;
	int rc;

	rc = rnic_roce_icrc_compute(p, len, &icrc);
	if (rc != 0)
		return rc;
	tot = icrc_total(p);
	return rnic_roce_icrc_get(p + tot - RNIC_ROCE_ICRC_LEN) == icrc ?
	       0 : -EBADMSG;
}

static uint32_t
icrc_step(uint32_t crc, const uint8_t *p, uint32_t len)
{
	return crc32_gzip_refl(crc, p, len);
}

/* Continue @crc over @len bytes of @m starting @off bytes into the chain. */
static int
icrc_mbuf_run(const struct rte_mbuf *m, uint32_t off, uint32_t len,
	      uint32_t *crc)
{
	return rnic_mbuf_crc(m, off, len, crc, icrc_step);
}

/*
 * Headers of the packet at @ip_off in @m, gathered into @buf if they span
 * segments. Fills the lengths; returns a pointer to the headers or NULL.
 */
static const uint8_t *
icrc_mbuf_headers(const struct rte_mbuf *m, uint32_t ip_off,
		  uint8_t buf[ICRC_PSEUDO_MAX], uint32_t *ihl, uint32_t *tot)
{
	const uint8_t *p;
	uint32_t avail;

	/* too short for an IPv4 header: never ask rte_pktmbuf_read() for 0
	 * bytes at the end of a chain (it walks past the last segment) */
	if (m == NULL || rte_pktmbuf_pkt_len(m) < ip_off + ICRC_IP_MIN)
		return NULL;
	avail = rte_pktmbuf_pkt_len(m) - ip_off;
	p = rte_pktmbuf_read(m, ip_off, RTE_MIN(avail, ICRC_IP_MIN), buf);
	if (p == NULL || icrc_lengths(p, avail, ihl, tot) != 0)
		return NULL;
	return rte_pktmbuf_read(m, ip_off,
				*ihl + ICRC_UDP_LEN + RNIC_ROCE_BTH_LEN, buf);
}

int
rnic_roce_icrc_compute_mbuf(const struct rte_mbuf *m, uint32_t ip_off,
			    uint32_t *icrc)
{
	uint8_t buf[ICRC_PSEUDO_MAX];
	const uint8_t *h;
	uint32_t ihl, tot, hdr, crc;
	int rc;

	h = icrc_mbuf_headers(m, ip_off, buf, &ihl, &tot);
	if (h == NULL)
		return -EINVAL;
	hdr = ihl + ICRC_UDP_LEN + RNIC_ROCE_BTH_LEN;
	crc = icrc_pseudo(h, ihl);
	rc = icrc_mbuf_run(m, ip_off + hdr, tot - hdr - RNIC_ROCE_ICRC_LEN, &crc);
	if (rc != 0)
		return rc;
	*icrc = crc;
	return 0;
}

/* Offset of the ICRC in @m, for a packet whose headers were checked. */
static uint32_t
icrc_mbuf_tail(const struct rte_mbuf *m, uint32_t ip_off)
{
	uint8_t b[8];
	const uint8_t *p = rte_pktmbuf_read(m, ip_off, 8, b);

	return ip_off + icrc_total(p) - RNIC_ROCE_ICRC_LEN;
}

int
rnic_roce_icrc_generate_mbuf(struct rte_mbuf *m, uint32_t ip_off)
{
	uint8_t out[RNIC_ROCE_ICRC_LEN];
	uint32_t icrc, off, i;
	int rc;

	rc = rnic_roce_icrc_compute_mbuf(m, ip_off, &icrc);
	if (rc != 0)
		return rc;
	rnic_roce_icrc_put(out, icrc);
	off = icrc_mbuf_tail(m, ip_off);
	/* The 4 bytes may straddle segments: store them one by one. */
	for (i = 0; i < RNIC_ROCE_ICRC_LEN; i++) {
		struct rte_mbuf *s = m;
		uint32_t o = off + i;

		while (s != NULL && o >= s->data_len) {
			o -= s->data_len;
			s = s->next;
		}
		if (s == NULL)
			return -EINVAL; /* pkt_len disagrees with the chain */
		*rte_pktmbuf_mtod_offset(s, uint8_t *, o) = out[i];
	}
	return 0;
}

int
rnic_roce_icrc_verify_mbuf(const struct rte_mbuf *m, uint32_t ip_off)
{
	uint8_t b[RNIC_ROCE_ICRC_LEN];
	const uint8_t *p;
	uint32_t icrc;
	int rc;

	rc = rnic_roce_icrc_compute_mbuf(m, ip_off, &icrc);
	if (rc != 0)
		return rc;
	p = rte_pktmbuf_read(m, icrc_mbuf_tail(m, ip_off), RNIC_ROCE_ICRC_LEN, b);
	if (p == NULL)
		return -EINVAL;
	return rnic_roce_icrc_get(p) == icrc ? 0 : -EBADMSG;
}
