/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 wire formats (IBTA vol. 1 chapter 9, annex A17): the Base
 * Transport Header and the extended transport headers, and the GRH that a
 * UD receive buffer starts with.
 *
 * Two levels of accessors, as in rxe:
 *   - raw ones take a typed header pointer (rnic_roce_bth_psn(bth));
 *   - packet-level ones take a parsed struct rnic_roce_pkt and find the
 *     header through the opcode table (rnic_roce_pkt_reth(pkt) is NULL when
 *     the opcode has no RETH).
 * All byte swapping and 24-bit masking happen here; nothing else in rnic
 * touches a wire field directly. Structs are packed, built from uint8_t and
 * rte_be types, with a size check against the lengths in opcode.h.
 */
#ifndef RNIC_ROCE_WIRE_H
#define RNIC_ROCE_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ip.h>

#include "roce/opcode.h"

#define RNIC_ROCE_UDP_PORT 4791
#define RNIC_ROCE_QPN_MASK 0x00ffffffu
#define RNIC_ROCE_MSN_MASK 0x00ffffffu
#define RNIC_ROCE_PKEY_DEFAULT 0xffff
#define RNIC_ROCE_TVER     0           /* the only transport header version */

/* ------------------------------------------------------------------------
 * BTH, 12 bytes (IBTA 9.2)
 *
 *   0       OpCode
 *   1       |SE|M|PadCnt(2)|TVer(4)|
 *   2..3    P_Key
 *   4       |FECN|BECN|resv6|   (RoCEv2 A17.9.2; "resv8a" in plain IB)
 *   5..7    DestQP
 *   8       |AckReq|resv7|
 *   9..11   PSN
 */
struct rnic_roce_bth {
	uint8_t opcode;
	uint8_t flags;        /* SE, M, PadCnt, TVer */
	rte_be16_t pkey;
	rte_be32_t qpn;       /* FECN, BECN, resv6, DestQP */
	rte_be32_t apsn;      /* AckReq, resv7, PSN */
} __rte_packed;
_Static_assert(sizeof(struct rnic_roce_bth) == RNIC_ROCE_BTH_LEN, "BTH");

#define RNIC_ROCE_BTH_SE        0x80u
#define RNIC_ROCE_BTH_MIG       0x40u
#define RNIC_ROCE_BTH_PAD_MASK  0x30u
#define RNIC_ROCE_BTH_PAD_SHIFT 4
#define RNIC_ROCE_BTH_TVER_MASK 0x0fu
/* Multi-byte flag constants in network byte order: test without a swap. */
#define RNIC_ROCE_BTH_FECN      RTE_BE32(0x80000000u)
#define RNIC_ROCE_BTH_BECN      RTE_BE32(0x40000000u)
#define RNIC_ROCE_BTH_ACKREQ    RTE_BE32(0x80000000u)
/* Offset of the byte that carries FECN/BECN/resv6: masked in the ICRC. */
#define RNIC_ROCE_BTH_FECN_BYTE 4

static inline uint8_t
rnic_roce_bth_opcode(const struct rnic_roce_bth *h)
{
	return h->opcode;
}

static inline void
rnic_roce_bth_set_opcode(struct rnic_roce_bth *h, uint8_t op)
{
	h->opcode = op;
}

static inline bool
rnic_roce_bth_se(const struct rnic_roce_bth *h)
{
	return (h->flags & RNIC_ROCE_BTH_SE) != 0;
}

static inline void
rnic_roce_bth_set_se(struct rnic_roce_bth *h, bool se)
{
	h->flags = (uint8_t)((h->flags & ~RNIC_ROCE_BTH_SE) |
			     (se ? RNIC_ROCE_BTH_SE : 0));
}

static inline bool
rnic_roce_bth_mig(const struct rnic_roce_bth *h)
{
	return (h->flags & RNIC_ROCE_BTH_MIG) != 0;
}

static inline void
rnic_roce_bth_set_mig(struct rnic_roce_bth *h, bool m)
{
	h->flags = (uint8_t)((h->flags & ~RNIC_ROCE_BTH_MIG) |
			     (m ? RNIC_ROCE_BTH_MIG : 0));
}

/* Pad count: bytes (0..3) appended to the payload to reach a 4-byte multiple. */
static inline unsigned int
rnic_roce_bth_pad(const struct rnic_roce_bth *h)
{
	return (h->flags & RNIC_ROCE_BTH_PAD_MASK) >> RNIC_ROCE_BTH_PAD_SHIFT;
}

static inline void
rnic_roce_bth_set_pad(struct rnic_roce_bth *h, unsigned int pad)
{
	h->flags = (uint8_t)((h->flags & ~RNIC_ROCE_BTH_PAD_MASK) |
			     ((pad << RNIC_ROCE_BTH_PAD_SHIFT) &
			      RNIC_ROCE_BTH_PAD_MASK));
}

static inline unsigned int
rnic_roce_bth_tver(const struct rnic_roce_bth *h)
{
	return h->flags & RNIC_ROCE_BTH_TVER_MASK;
}

static inline void
rnic_roce_bth_set_tver(struct rnic_roce_bth *h, unsigned int tver)
{
	h->flags = (uint8_t)((h->flags & ~RNIC_ROCE_BTH_TVER_MASK) |
			     (tver & RNIC_ROCE_BTH_TVER_MASK));
}

static inline uint16_t
rnic_roce_bth_pkey(const struct rnic_roce_bth *h)
{
	return rte_be_to_cpu_16(h->pkey);
}

static inline void
rnic_roce_bth_set_pkey(struct rnic_roce_bth *h, uint16_t pkey)
{
	h->pkey = rte_cpu_to_be_16(pkey);
}

/*
 * P_Key match (IBA 10.9.3): the low 15 bits (the partition) equal and not
 * 0, and at least one of the two keys a full member (bit 15): two limited
 * members may not talk. rnic's own key is always the default 0xffff (full
 * member), like rxe's; rxe's pkey_match() applies the same rule.
 */
static inline bool
rnic_roce_pkey_match(uint16_t a, uint16_t b)
{
	return (a & 0x7fffu) != 0 && (a & 0x7fffu) == (b & 0x7fffu) &&
	       ((a | b) & 0x8000u) != 0;
}

static inline bool
rnic_roce_bth_fecn(const struct rnic_roce_bth *h)
{
	return (h->qpn & RNIC_ROCE_BTH_FECN) != 0;
}

static inline void
rnic_roce_bth_set_fecn(struct rnic_roce_bth *h, bool on)
{
	h->qpn = on ? (h->qpn | RNIC_ROCE_BTH_FECN)
		    : (h->qpn & ~RNIC_ROCE_BTH_FECN);
}

static inline bool
rnic_roce_bth_becn(const struct rnic_roce_bth *h)
{
	return (h->qpn & RNIC_ROCE_BTH_BECN) != 0;
}

static inline void
rnic_roce_bth_set_becn(struct rnic_roce_bth *h, bool on)
{
	h->qpn = on ? (h->qpn | RNIC_ROCE_BTH_BECN)
		    : (h->qpn & ~RNIC_ROCE_BTH_BECN);
}

static inline uint32_t
rnic_roce_bth_dqpn(const struct rnic_roce_bth *h)
{
	return rte_be_to_cpu_32(h->qpn) & RNIC_ROCE_QPN_MASK;
}

/* Sets the 24-bit DestQP, keeping FECN/BECN/resv6. */
static inline void
rnic_roce_bth_set_dqpn(struct rnic_roce_bth *h, uint32_t qpn)
{
	uint32_t v = rte_be_to_cpu_32(h->qpn);

	v = (v & ~RNIC_ROCE_QPN_MASK) | (qpn & RNIC_ROCE_QPN_MASK);
	h->qpn = rte_cpu_to_be_32(v);
}

static inline bool
rnic_roce_bth_ackreq(const struct rnic_roce_bth *h)
{
	return (h->apsn & RNIC_ROCE_BTH_ACKREQ) != 0;
}

static inline void
rnic_roce_bth_set_ackreq(struct rnic_roce_bth *h, bool on)
{
	h->apsn = on ? (h->apsn | RNIC_ROCE_BTH_ACKREQ)
		     : (h->apsn & ~RNIC_ROCE_BTH_ACKREQ);
}

static inline uint32_t
rnic_roce_bth_psn(const struct rnic_roce_bth *h)
{
	return rte_be_to_cpu_32(h->apsn) & 0x00ffffffu;
}

/* Sets the 24-bit PSN, keeping AckReq and resv7. */
static inline void
rnic_roce_bth_set_psn(struct rnic_roce_bth *h, uint32_t psn)
{
	uint32_t v = rte_be_to_cpu_32(h->apsn);

	v = (v & ~0x00ffffffu) | (psn & 0x00ffffffu);
	h->apsn = rte_cpu_to_be_32(v);
}

/* ------------------------------------------------------------------------
 * RETH, 16 bytes (IBTA 9.3.3): Virtual Address, R_Key, DMA Length.
 */
struct rnic_roce_reth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be32_t dma_len;
} __rte_packed;
_Static_assert(sizeof(struct rnic_roce_reth) == RNIC_ROCE_RETH_LEN, "RETH");

static inline uint64_t
rnic_roce_reth_va(const struct rnic_roce_reth *h)
{
	return rte_be_to_cpu_64(h->va);
}

static inline void
rnic_roce_reth_set_va(struct rnic_roce_reth *h, uint64_t va)
{
	h->va = rte_cpu_to_be_64(va);
}

static inline uint32_t
rnic_roce_reth_rkey(const struct rnic_roce_reth *h)
{
	return rte_be_to_cpu_32(h->rkey);
}

static inline void
rnic_roce_reth_set_rkey(struct rnic_roce_reth *h, uint32_t rkey)
{
	h->rkey = rte_cpu_to_be_32(rkey);
}

static inline uint32_t
rnic_roce_reth_len(const struct rnic_roce_reth *h)
{
	return rte_be_to_cpu_32(h->dma_len);
}

static inline void
rnic_roce_reth_set_len(struct rnic_roce_reth *h, uint32_t len)
{
	h->dma_len = rte_cpu_to_be_32(len);
}

/* ------------------------------------------------------------------------
 * AETH, 4 bytes (IBTA 9.3.5): Syndrome (8) | MSN (24).
 *
 * Syndrome: bit 7 reserved; bits 6..5 the type; bits 4..0 its value:
 *   00 ACK       value = credit count (encoded, 0x1f = no flow control)
 *   01 RNR NAK   value = RNR timer (encoded, IBTA table 45)
 *   10 reserved
 *   11 NAK       value = NAK code below
 * The type is read with bit 7 (mask 0xe0, as Linux rxe does): a syndrome
 * with the reserved bit set is none of ACK, RNR NAK or NAK, and the
 * completer treats it as a reserved type (a bad response).
 */
struct rnic_roce_aeth {
	rte_be32_t smsn;      /* Syndrome, MSN */
} __rte_packed;
_Static_assert(sizeof(struct rnic_roce_aeth) == RNIC_ROCE_AETH_LEN, "AETH");

enum rnic_roce_aeth_type {
	RNIC_ROCE_AETH_TYPE_ACK     = 0x00,
	RNIC_ROCE_AETH_TYPE_RNR_NAK = 0x20,
	RNIC_ROCE_AETH_TYPE_RSVD    = 0x40,
	RNIC_ROCE_AETH_TYPE_NAK     = 0x60,
};
#define RNIC_ROCE_AETH_TYPE_MASK  0xe0u   /* the reserved bit 7 included */
#define RNIC_ROCE_AETH_VALUE_MASK 0x1fu

enum rnic_roce_nak_code {
	RNIC_ROCE_NAK_PSN_SEQ_ERR       = 0,
	RNIC_ROCE_NAK_INVALID_REQUEST   = 1,
	RNIC_ROCE_NAK_REMOTE_ACCESS_ERR = 2,
	RNIC_ROCE_NAK_REMOTE_OP_ERR     = 3,
	RNIC_ROCE_NAK_INVALID_RD_REQ    = 4,
};

/* "No end-to-end credits": the responder does not limit the requester. */
#define RNIC_ROCE_AETH_CREDITS_INVALID 0x1fu

/* Syndromes. */
static inline uint8_t
rnic_roce_syndrome_ack(unsigned int credits)
{
	return (uint8_t)(RNIC_ROCE_AETH_TYPE_ACK |
			 (credits & RNIC_ROCE_AETH_VALUE_MASK));
}

static inline uint8_t
rnic_roce_syndrome_rnr_nak(unsigned int timer)
{
	return (uint8_t)(RNIC_ROCE_AETH_TYPE_RNR_NAK |
			 (timer & RNIC_ROCE_AETH_VALUE_MASK));
}

static inline uint8_t
rnic_roce_syndrome_nak(enum rnic_roce_nak_code code)
{
	return (uint8_t)(RNIC_ROCE_AETH_TYPE_NAK |
			 ((unsigned int)code & RNIC_ROCE_AETH_VALUE_MASK));
}

static inline uint8_t
rnic_roce_aeth_syndrome(const struct rnic_roce_aeth *h)
{
	return (uint8_t)(rte_be_to_cpu_32(h->smsn) >> 24);
}

static inline enum rnic_roce_aeth_type
rnic_roce_aeth_type(const struct rnic_roce_aeth *h)
{
	return (enum rnic_roce_aeth_type)(rnic_roce_aeth_syndrome(h) &
					  RNIC_ROCE_AETH_TYPE_MASK);
}

/* Credit count, RNR timer or NAK code, depending on the type. */
static inline unsigned int
rnic_roce_aeth_value(const struct rnic_roce_aeth *h)
{
	return rnic_roce_aeth_syndrome(h) & RNIC_ROCE_AETH_VALUE_MASK;
}

static inline uint32_t
rnic_roce_aeth_msn(const struct rnic_roce_aeth *h)
{
	return rte_be_to_cpu_32(h->smsn) & RNIC_ROCE_MSN_MASK;
}

static inline void
rnic_roce_aeth_set(struct rnic_roce_aeth *h, uint8_t syndrome, uint32_t msn)
{
	h->smsn = rte_cpu_to_be_32(((uint32_t)syndrome << 24) |
				   (msn & RNIC_ROCE_MSN_MASK));
}

/* ------------------------------------------------------------------------
 * AtomicETH, 28 bytes (IBTA 9.3.4): VA, R_Key, Swap (or Add) Data, Compare
 * Data. The 64-bit fields sit at unaligned offsets 12 and 20.
 */
struct rnic_roce_atmeth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be64_t swap_add;
	rte_be64_t compare;
} __rte_packed;
_Static_assert(sizeof(struct rnic_roce_atmeth) == RNIC_ROCE_ATMETH_LEN,
	       "AtomicETH");

static inline uint64_t
rnic_roce_atmeth_va(const struct rnic_roce_atmeth *h)
{
	return rte_be_to_cpu_64(h->va);
}

static inline uint32_t
rnic_roce_atmeth_rkey(const struct rnic_roce_atmeth *h)
{
	return rte_be_to_cpu_32(h->rkey);
}

static inline uint64_t
rnic_roce_atmeth_swap_add(const struct rnic_roce_atmeth *h)
{
	return rte_be_to_cpu_64(h->swap_add);
}

static inline uint64_t
rnic_roce_atmeth_compare(const struct rnic_roce_atmeth *h)
{
	return rte_be_to_cpu_64(h->compare);
}

static inline void
rnic_roce_atmeth_set(struct rnic_roce_atmeth *h, uint64_t va, uint32_t rkey,
		     uint64_t swap_add, uint64_t compare)
{
	h->va = rte_cpu_to_be_64(va);
	h->rkey = rte_cpu_to_be_32(rkey);
	h->swap_add = rte_cpu_to_be_64(swap_add);
	h->compare = rte_cpu_to_be_64(compare);
}

/* ------------------------------------------------------------------------
 * AtomicAckETH, 8 bytes (IBTA 9.5.3): the original remote data.
 */
struct rnic_roce_atmack {
	rte_be64_t orig;
} __rte_packed;
_Static_assert(sizeof(struct rnic_roce_atmack) == RNIC_ROCE_ATMACK_LEN,
	       "AtomicAckETH");

static inline uint64_t
rnic_roce_atmack_orig(const struct rnic_roce_atmack *h)
{
	return rte_be_to_cpu_64(h->orig);
}

static inline void
rnic_roce_atmack_set_orig(struct rnic_roce_atmack *h, uint64_t orig)
{
	h->orig = rte_cpu_to_be_64(orig);
}

/* ------------------------------------------------------------------------
 * ImmDt, 4 bytes (IBTA 9.3.7) and IETH, 4 bytes (IBTA 9.3.8: the R_Key to
 * invalidate). Immediate data is opaque: verbs hand it over in network
 * order (ibv_send_wr.imm_data, ibv_wc.imm_data are __be32), so its accessor
 * does not swap.
 */
struct rnic_roce_immdt {
	rte_be32_t imm;
} __rte_packed;
_Static_assert(sizeof(struct rnic_roce_immdt) == RNIC_ROCE_IMMDT_LEN, "ImmDt");

static inline rte_be32_t
rnic_roce_immdt_imm(const struct rnic_roce_immdt *h)
{
	return h->imm;
}

static inline void
rnic_roce_immdt_set_imm(struct rnic_roce_immdt *h, rte_be32_t imm)
{
	h->imm = imm;
}

struct rnic_roce_ieth {
	rte_be32_t rkey;
} __rte_packed;
_Static_assert(sizeof(struct rnic_roce_ieth) == RNIC_ROCE_IETH_LEN, "IETH");

static inline uint32_t
rnic_roce_ieth_rkey(const struct rnic_roce_ieth *h)
{
	return rte_be_to_cpu_32(h->rkey);
}

static inline void
rnic_roce_ieth_set_rkey(struct rnic_roce_ieth *h, uint32_t rkey)
{
	h->rkey = rte_cpu_to_be_32(rkey);
}

/* ------------------------------------------------------------------------
 * DETH, 8 bytes (IBTA 9.3.2, UD only): Q_Key, resv8 | SrcQP (24).
 * A Q_Key with bit 31 set is a controlled Q_Key (IBTA 10.2.5).
 */
struct rnic_roce_deth {
	rte_be32_t qkey;
	rte_be32_t sqp;       /* resv8, SrcQP */
} __rte_packed;
_Static_assert(sizeof(struct rnic_roce_deth) == RNIC_ROCE_DETH_LEN, "DETH");

#define RNIC_ROCE_QKEY_CONTROLLED 0x80000000u

static inline uint32_t
rnic_roce_deth_qkey(const struct rnic_roce_deth *h)
{
	return rte_be_to_cpu_32(h->qkey);
}

static inline void
rnic_roce_deth_set_qkey(struct rnic_roce_deth *h, uint32_t qkey)
{
	h->qkey = rte_cpu_to_be_32(qkey);
}

static inline uint32_t
rnic_roce_deth_sqp(const struct rnic_roce_deth *h)
{
	return rte_be_to_cpu_32(h->sqp) & RNIC_ROCE_QPN_MASK;
}

/* Sets SrcQP and clears resv8, which senders must send as zero. */
static inline void
rnic_roce_deth_set_sqp(struct rnic_roce_deth *h, uint32_t qpn)
{
	h->sqp = rte_cpu_to_be_32(qpn & RNIC_ROCE_QPN_MASK);
}

/* ------------------------------------------------------------------------
 * GRH, 40 bytes (IBTA 8.3), as found at the start of a UD receive buffer.
 *
 *   0..3    |IPVer(4)|TClass(8)|FlowLabel(20)|
 *   4..5    PayLen
 *   6       NxtHdr
 *   7       HopLmt
 *   8..23   SGID
 *   24..39  DGID
 *
 * For RoCEv2 over IPv4 rxe (and the verbs helpers that parse the buffer,
 * ibv_init_ah_from_wc with the IPv4 network type) lay the 40 bytes out as
 * 20 reserved zero bytes followed by the received IPv4 header; rnic does the
 * same so applications see what they see on rxe.
 */
struct rnic_roce_grh {
	rte_be32_t ver_tclass_flow;
	rte_be16_t paylen;
	uint8_t next_hdr;
	uint8_t hop_limit;
	uint8_t sgid[16];
	uint8_t dgid[16];
} __rte_packed;
_Static_assert(sizeof(struct rnic_roce_grh) == RNIC_ROCE_GRH_LEN, "GRH");

struct rnic_roce_grh_ipv4 {
	uint8_t reserved[20];
	struct rte_ipv4_hdr ip;
} __rte_packed;
_Static_assert(sizeof(struct rnic_roce_grh_ipv4) == RNIC_ROCE_GRH_LEN,
	       "IPv4 GRH");

static inline unsigned int
rnic_roce_grh_version(const struct rnic_roce_grh *h)
{
	return rte_be_to_cpu_32(h->ver_tclass_flow) >> 28;
}

static inline uint8_t
rnic_roce_grh_tclass(const struct rnic_roce_grh *h)
{
	return (uint8_t)(rte_be_to_cpu_32(h->ver_tclass_flow) >> 20);
}

static inline uint32_t
rnic_roce_grh_flow_label(const struct rnic_roce_grh *h)
{
	return rte_be_to_cpu_32(h->ver_tclass_flow) & 0x000fffffu;
}

/* Fills a UD receive buffer's first 40 bytes from a received IPv4 header
 * (its options, if any, are not copied: there is no room for them). */
static inline void
rnic_roce_grh_fill_ipv4(struct rnic_roce_grh_ipv4 *g,
			const struct rte_ipv4_hdr *ip)
{
	memset(g->reserved, 0, sizeof(g->reserved));
	memcpy(&g->ip, ip, sizeof(g->ip));
}

/* Fills a UD receive buffer's 40-byte GRH from the received IP header at
 * @p ip: an IPv6 header is the GRH (IBA's GRH and IPv6's header share one
 * layout); an IPv4 one goes in as rnic_roce_grh_fill_ipv4() says. */
static inline void
rnic_roce_grh_fill(uint8_t g[RNIC_ROCE_GRH_LEN], const uint8_t *ip)
{
	if ((ip[0] >> 4) == 6)
		memcpy(g, ip, RNIC_ROCE_GRH_LEN);
	else
		rnic_roce_grh_fill_ipv4((struct rnic_roce_grh_ipv4 *)(void *)g,
					(const struct rte_ipv4_hdr *)(const void *)ip);
}

/* GID of an IPv4 address: the IPv4-mapped IPv6 address ::ffff:a.b.c.d.
 * @addr is in network order, as in struct rte_ipv4_hdr. */
static inline void
rnic_roce_gid_from_ipv4(uint8_t gid[16], rte_be32_t addr)
{
	memset(gid, 0, 10);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(&gid[12], &addr, 4);
}

/* True when @gid is IPv4-mapped; then *@addr gets the address. */
static inline bool
rnic_roce_gid_to_ipv4(const uint8_t gid[16], rte_be32_t *addr)
{
	static const uint8_t prefix[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (memcmp(gid, prefix, sizeof(prefix)) != 0)
		return false;
	memcpy(addr, &gid[12], 4);
	return true;
}

/* ------------------------------------------------------------------------
 * Packet level: a parsed RoCEv2 transport packet (BTH to the end of the
 * pad; the ICRC is checked and stripped from the lengths by the parser).
 */
struct rnic_roce_pkt {
	uint8_t *bth;         /* first byte of the BTH */
	uint32_t flags;       /* the opcode's table flags */
	uint32_t paylen;      /* payload bytes, pad excluded */
	uint8_t opcode;
	uint8_t pad;          /* BTH pad count */
};

/* Drop causes of the RoCE receive path, with their telemetry names. */
#define RNIC_ROCE_DROP_CAUSES(X)                        \
	X(SHORT,        "roce_short")                   \
	X(OPCODE,       "roce_opcode_unknown")          \
	X(TVER,         "roce_tver")                    \
	X(HDR_LEN,      "roce_hdr_len")                 \
	X(PAD,          "roce_pad")                     \
	X(PAYLOAD,      "roce_unexpected_payload")      \
	X(IP_HDR,       "roce_ip_hdr")                  \
	X(ICRC,         "roce_icrc")

enum rnic_roce_drop {
#define RNIC_ROCE_DROP_ENUM(sym, name) RNIC_ROCE_DROP_##sym,
	RNIC_ROCE_DROP_CAUSES(RNIC_ROCE_DROP_ENUM)
#undef RNIC_ROCE_DROP_ENUM
	RNIC_ROCE_DROP_MAX
};

/** Telemetry name of a RoCE drop cause. */
const char *rnic_roce_drop_name(enum rnic_roce_drop c);

/**
 * Parse and check the transport headers of one packet.
 *
 * @param pkt    filled on success
 * @param bth    first byte of the BTH (the UDP payload)
 * @param len    UDP payload length: BTH through the 4-byte ICRC
 * @param cause  on failure, why (may be NULL)
 * @return 0; -EINVAL for a packet too short for its headers or a pad/payload
 *         that does not fit the opcode; -EPROTONOSUPPORT for an unknown
 *         opcode or transport header version. The ICRC is not checked here
 *         (see icrc.h): it needs the IP and UDP headers.
 */
int rnic_roce_pkt_parse(struct rnic_roce_pkt *pkt, void *bth, uint32_t len,
			enum rnic_roce_drop *cause);

static inline struct rnic_roce_bth *
rnic_roce_pkt_bth(const struct rnic_roce_pkt *p)
{
	return (struct rnic_roce_bth *)p->bth;
}

/* Extended header @h of @p, or NULL when the opcode has none. */
static inline void *
rnic_roce_pkt_hdr(const struct rnic_roce_pkt *p, enum rnic_roce_hdr h)
{
	uint8_t off = rnic_roce_op(p->opcode)->offset[h];

	return off != 0 ? p->bth + off : NULL;
}

static inline struct rnic_roce_reth *
rnic_roce_pkt_reth(const struct rnic_roce_pkt *p)
{
	return (struct rnic_roce_reth *)rnic_roce_pkt_hdr(p, RNIC_ROCE_HDR_RETH);
}

static inline struct rnic_roce_aeth *
rnic_roce_pkt_aeth(const struct rnic_roce_pkt *p)
{
	return (struct rnic_roce_aeth *)rnic_roce_pkt_hdr(p, RNIC_ROCE_HDR_AETH);
}

static inline struct rnic_roce_atmeth *
rnic_roce_pkt_atmeth(const struct rnic_roce_pkt *p)
{
	return (struct rnic_roce_atmeth *)rnic_roce_pkt_hdr(p,
							     RNIC_ROCE_HDR_ATMETH);
}

static inline struct rnic_roce_atmack *
rnic_roce_pkt_atmack(const struct rnic_roce_pkt *p)
{
	return (struct rnic_roce_atmack *)rnic_roce_pkt_hdr(p,
							     RNIC_ROCE_HDR_ATMACK);
}

static inline struct rnic_roce_immdt *
rnic_roce_pkt_immdt(const struct rnic_roce_pkt *p)
{
	return (struct rnic_roce_immdt *)rnic_roce_pkt_hdr(p,
							    RNIC_ROCE_HDR_IMMDT);
}

static inline struct rnic_roce_ieth *
rnic_roce_pkt_ieth(const struct rnic_roce_pkt *p)
{
	return (struct rnic_roce_ieth *)rnic_roce_pkt_hdr(p, RNIC_ROCE_HDR_IETH);
}

static inline struct rnic_roce_deth *
rnic_roce_pkt_deth(const struct rnic_roce_pkt *p)
{
	return (struct rnic_roce_deth *)rnic_roce_pkt_hdr(p, RNIC_ROCE_HDR_DETH);
}

static inline uint8_t *
rnic_roce_pkt_payload(const struct rnic_roce_pkt *p)
{
	return p->bth + rnic_roce_op(p->opcode)->offset[RNIC_ROCE_HDR_PAYLOAD];
}

/* BTH fields, always present. */
static inline uint32_t
rnic_roce_pkt_psn(const struct rnic_roce_pkt *p)
{
	return rnic_roce_bth_psn(rnic_roce_pkt_bth(p));
}

static inline uint32_t
rnic_roce_pkt_dqpn(const struct rnic_roce_pkt *p)
{
	return rnic_roce_bth_dqpn(rnic_roce_pkt_bth(p));
}

static inline bool
rnic_roce_pkt_ackreq(const struct rnic_roce_pkt *p)
{
	return rnic_roce_bth_ackreq(rnic_roce_pkt_bth(p));
}

static inline bool
rnic_roce_pkt_se(const struct rnic_roce_pkt *p)
{
	return rnic_roce_bth_se(rnic_roce_pkt_bth(p));
}

/*
 * Remote address and R_Key of a request: from the RETH, or from the
 * AtomicETH for atomics. Returns false (and leaves the outputs alone) for
 * an opcode that carries neither, e.g. WRITE_MIDDLE, whose address comes
 * from the responder's state.
 */
static inline bool
rnic_roce_pkt_remote(const struct rnic_roce_pkt *p, uint64_t *va,
		     uint32_t *rkey)
{
	const struct rnic_roce_reth *r = rnic_roce_pkt_reth(p);
	const struct rnic_roce_atmeth *a;

	if (r != NULL) {
		*va = rnic_roce_reth_va(r);
		*rkey = rnic_roce_reth_rkey(r);
		return true;
	}
	a = rnic_roce_pkt_atmeth(p);
	if (a != NULL) {
		*va = rnic_roce_atmeth_va(a);
		*rkey = rnic_roce_atmeth_rkey(a);
		return true;
	}
	return false;
}

#endif
