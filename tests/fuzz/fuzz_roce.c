/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: RoCEv2 receive checks (lib/roce: ICRC, BTH and
 * extended-header parser, opcode table and sequencing).
 *
 * Input: option byte, 4-byte split seed, then a packet from its IPv4
 * header to the ICRC. Option bit 0: skip the ICRC check (reach the parser
 * with any bytes); bit 1: stamp a correct ICRC first (the check passes and
 * the parser still sees fuzzed headers); bits 4-7: junk bytes in front of
 * the IPv4 header in the mbuf variant (ip_off).
 *
 * Properties:
 *  - the contiguous and the mbuf-chain ICRC functions agree (result and
 *    value) however the chain is split, and generate-then-verify passes;
 *  - rnic_roce_pkt_parse() on the UDP payload, held in a buffer of exactly
 *    its length, either refuses with a named cause or returns headers that
 *    lie inside the packet and lengths that add up; every accessor of every
 *    header present is read;
 *  - opcode names and sequencing answer for any byte.
 */
#include <errno.h>

#include <rte_mbuf.h>

#include "roce/icrc.h"
#include "roce/roce_wire.h"
#include "fuzz_util.h"

#define ROCE_MAX_SEGS 8

/* A chain of hand-made mbufs over private copies of @p p (no mempool, no
 * EAL): @p junk bytes of 0xee, then the packet, cut at seeded points. */
struct roce_chain {
	struct rte_mbuf m[ROCE_MAX_SEGS];
	uint8_t *seg[ROCE_MAX_SEGS];
	unsigned n;
};

static void
roce_chain_build(struct roce_chain *c, const uint8_t *p, size_t len,
		 unsigned junk, struct fuzz_rng *rng)
{
	size_t total = len + junk, off = 0;
	unsigned i;

	memset(c, 0, sizeof(*c));
	while (off < total || c->n == 0) {
		size_t n = c->n == ROCE_MAX_SEGS - 1 ? total - off :
			   fuzz_chunk(rng, total - off);
		struct rte_mbuf *m = &c->m[c->n];
		uint8_t *s = malloc(n > 0 ? n : 1);

		FUZZ_CHECK(s != NULL);
		for (i = 0; i < n; i++)
			s[i] = off + i < junk ? 0xee : p[off + i - junk];
		m->buf_addr = s;
		m->buf_len = (uint16_t)n;
		m->data_off = 0;
		m->data_len = (uint16_t)n;
		if (c->n > 0)
			c->m[c->n - 1].next = m;
		c->seg[c->n++] = s;
		off += n;
	}
	c->m[0].pkt_len = (uint32_t)total;
	c->m[0].nb_segs = (uint16_t)c->n;
}

static void
roce_chain_free(struct roce_chain *c)
{
	unsigned i;

	for (i = 0; i < c->n; i++)
		free(c->seg[i]);
}

/* Read every field of every header the parsed packet has. */
static void
roce_read_headers(const struct rnic_roce_pkt *pkt, const uint8_t *end)
{
	const struct rnic_roce_opinfo *op = rnic_roce_op(pkt->opcode);
	volatile uint64_t sink = 0;
	uint64_t va;
	uint32_t rkey;
	unsigned h;

	for (h = 0; h < RNIC_ROCE_HDR_PAYLOAD; h++) {
		uint8_t *x = rnic_roce_pkt_hdr(pkt, (enum rnic_roce_hdr)h);

		if (x != NULL)
			FUZZ_CHECK(x >= pkt->bth + RNIC_ROCE_BTH_LEN &&
				   x < pkt->bth + op->length);
	}
	FUZZ_CHECK(rnic_roce_pkt_payload(pkt) == pkt->bth + op->length);
	FUZZ_CHECK(rnic_roce_pkt_payload(pkt) + pkt->paylen + pkt->pad +
		   RNIC_ROCE_ICRC_LEN == end);
	sink += rnic_roce_pkt_psn(pkt) + rnic_roce_pkt_dqpn(pkt) +
		rnic_roce_pkt_ackreq(pkt) + rnic_roce_pkt_se(pkt) +
		rnic_roce_bth_pkey(rnic_roce_pkt_bth(pkt)) +
		rnic_roce_bth_mig(rnic_roce_pkt_bth(pkt)) +
		rnic_roce_bth_fecn(rnic_roce_pkt_bth(pkt)) +
		rnic_roce_bth_becn(rnic_roce_pkt_bth(pkt));
	FUZZ_CHECK(rnic_roce_pkt_dqpn(pkt) <= 0xffffff &&
		   rnic_roce_pkt_psn(pkt) <= 0xffffff);
	if (rnic_roce_pkt_reth(pkt) != NULL)
		sink += rnic_roce_reth_va(rnic_roce_pkt_reth(pkt)) +
			rnic_roce_reth_rkey(rnic_roce_pkt_reth(pkt)) +
			rnic_roce_reth_len(rnic_roce_pkt_reth(pkt));
	if (rnic_roce_pkt_aeth(pkt) != NULL) {
		const struct rnic_roce_aeth *a = rnic_roce_pkt_aeth(pkt);

		sink += rnic_roce_aeth_syndrome(a) + rnic_roce_aeth_type(a) +
			rnic_roce_aeth_value(a) + rnic_roce_aeth_msn(a);
		FUZZ_CHECK(rnic_roce_aeth_msn(a) <= 0xffffff);
	}
	if (rnic_roce_pkt_atmeth(pkt) != NULL)
		sink += rnic_roce_atmeth_va(rnic_roce_pkt_atmeth(pkt)) +
			rnic_roce_atmeth_rkey(rnic_roce_pkt_atmeth(pkt)) +
			rnic_roce_atmeth_swap_add(rnic_roce_pkt_atmeth(pkt)) +
			rnic_roce_atmeth_compare(rnic_roce_pkt_atmeth(pkt));
	if (rnic_roce_pkt_atmack(pkt) != NULL)
		sink += rnic_roce_atmack_orig(rnic_roce_pkt_atmack(pkt));
	if (rnic_roce_pkt_immdt(pkt) != NULL)
		sink += rnic_roce_immdt_imm(rnic_roce_pkt_immdt(pkt));
	if (rnic_roce_pkt_ieth(pkt) != NULL)
		sink += rnic_roce_ieth_rkey(rnic_roce_pkt_ieth(pkt));
	if (rnic_roce_pkt_deth(pkt) != NULL)
		sink += rnic_roce_deth_qkey(rnic_roce_pkt_deth(pkt)) +
			rnic_roce_deth_sqp(rnic_roce_pkt_deth(pkt));
	if (rnic_roce_pkt_remote(pkt, &va, &rkey))
		sink += va + rkey;
	(void)sink;
}

/* ICRC: contiguous vs mbuf chain, and generate-then-verify. @return the
 * contiguous verify result. */
static int
roce_icrc(uint8_t *pkt, size_t len, uint8_t opt, struct fuzz_rng *rng)
{
	struct roce_chain c;
	unsigned junk = opt >> 4;
	uint32_t a = 0, b = 0;
	int ra, rb, va, vb;

	ra = rnic_roce_icrc_compute(pkt, (uint32_t)len, &a);
	FUZZ_CHECK(ra == 0 || ra == -EINVAL);
	if (ra == 0 && (opt & 2)) {
		FUZZ_CHECK(rnic_roce_icrc_generate(pkt, (uint32_t)len) == 0);
		FUZZ_CHECK(rnic_roce_icrc_verify(pkt, (uint32_t)len) == 0);
	}
	va = rnic_roce_icrc_verify(pkt, (uint32_t)len);

	/* Known finding (reported, lib/roce not ours): with ip_off equal to
	 * the chain's pkt_len, icrc_mbuf_headers() asks rte_pktmbuf_read()
	 * for 0 bytes at the very end, and DPDK walks past the last segment
	 * (NULL dereference). Skip the chain for an empty packet until the
	 * guard is in; drop this line then. */
	if (len == 0 && junk > 0)
		return va;
	roce_chain_build(&c, pkt, len, junk, rng);
	rb = rnic_roce_icrc_compute_mbuf(&c.m[0], junk, &b);
	FUZZ_CHECK(ra == rb && (ra != 0 || a == b));
	vb = rnic_roce_icrc_verify_mbuf(&c.m[0], junk);
	FUZZ_CHECK(va == vb);
	if (ra == 0) {
		/* Stamping the chain writes the same 4 bytes. */
		uint8_t want[RNIC_ROCE_ICRC_LEN], tmp[RNIC_ROCE_ICRC_LEN];
		/* the packet's length: IPv4 total length, or 40 + IPv6 payload */
		uint32_t tot = (pkt[0] >> 4) == 6 ? 40u + ((uint32_t)pkt[4] << 8 | pkt[5]) :
			       ((uint32_t)pkt[2] << 8) | pkt[3];
		const uint8_t *got;

		rnic_roce_icrc_put(want, a);
		FUZZ_CHECK(rnic_roce_icrc_generate_mbuf(&c.m[0], junk) == 0);
		FUZZ_CHECK(rnic_roce_icrc_verify_mbuf(&c.m[0], junk) == 0);
		got = rte_pktmbuf_read(&c.m[0], junk + tot - RNIC_ROCE_ICRC_LEN,
				       RNIC_ROCE_ICRC_LEN, tmp);
		FUZZ_CHECK(got != NULL && memcmp(got, want, sizeof(want)) == 0);
	}
	roce_chain_free(&c);
	return va;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rnic_roce_pkt pkt;
	enum rnic_roce_drop cause = RNIC_ROCE_DROP_MAX;
	struct fuzz_rng rng;
	struct fuzz_in in;
	uint8_t opt, *ip, *udp_pl;
	size_t len, ihl, ulen;
	uint32_t tot;
	int rc;

	fuzz_in_init(&in, data, size);
	opt = fuzz_u8(&in);
	fuzz_rng_init(&rng, fuzz_u32(&in));
	len = fuzz_in_left(&in);
	ip = malloc(len > 0 ? len : 1);
	FUZZ_CHECK(ip != NULL);
	memcpy(ip, data + in.off, len);

	/* Opcode table and sequencing for any byte pair. */
	if (len >= 2) {
		FUZZ_CHECK(rnic_roce_op_name(ip[0]) != NULL);
		(void)rnic_roce_op_seq_ok((enum rnic_roce_opcode)ip[1], ip[0]);
		(void)rnic_roce_op_seq_ok(RNIC_ROCE_OP_NONE, ip[0]);
		(void)rnic_roce_read_resp_seq_ok((enum rnic_roce_opcode)ip[1],
						 ip[0]);
	}

	rc = roce_icrc(ip, len, opt, &rng);
	if (rc != 0 && !(opt & 1))
		goto out;       /* dropped on the ICRC, as the receive path */

	/* The UDP payload, by the IPv4 header when it is sane. */
	if (len < 1)
		goto out;
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	if (ihl < 20 || len < ihl + 8)
		goto out;
	tot = len >= 4 ? ((uint32_t)ip[2] << 8) | ip[3] : 0;
	ulen = (tot >= ihl + 8 && tot <= len) ? tot - ihl - 8 : len - ihl - 8;
	udp_pl = malloc(ulen > 0 ? ulen : 1);
	FUZZ_CHECK(udp_pl != NULL);
	memcpy(udp_pl, ip + ihl + 8, ulen);
	rc = rnic_roce_pkt_parse(&pkt, udp_pl, (uint32_t)ulen, &cause);
	if (rc == 0) {
		FUZZ_CHECK(pkt.bth == udp_pl);
		FUZZ_CHECK(rnic_roce_op(pkt.opcode)->flags != 0);
		roce_read_headers(&pkt, udp_pl + ulen);
	} else {
		FUZZ_CHECK(rc == -EINVAL || rc == -EPROTONOSUPPORT);
		FUZZ_CHECK(cause < RNIC_ROCE_DROP_MAX);
		FUZZ_CHECK(strcmp(rnic_roce_drop_name(cause), "roce_unknown"));
		FUZZ_CHECK((ulen < RNIC_ROCE_BTH_LEN + RNIC_ROCE_ICRC_LEN) ==
			   (cause == RNIC_ROCE_DROP_SHORT));
	}
	free(udp_pl);
out:
	free(ip);
	return 0;
}
