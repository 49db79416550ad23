/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IB Communication Management MADs (IBTA vol. 1 chapter 12, the CM class
 * of chapter 13's MADs) as they travel on QP1 over RoCEv2, and the header
 * librdmacm puts in front of a REQ's private data (the RDMA IP CM service,
 * IBTA annex A11).
 *
 * A CM MAD is exactly 256 bytes: the 24-byte common MAD header, then 232
 * bytes of message. The message layouts are the IBTA's tables 106-113
 * (Linux include/rdma/ibta_vol1_c12.h names the same fields, with offsets
 * counted from the end of the MAD header). Fields narrower than a byte are
 * numbered from the most significant bit, as the IBTA draws them; they are
 * read and written only by ibcm_wire.c.
 *
 * Like the rest of the protocol core this needs no EAL and keeps no state:
 * rnic_ibcm_encode() and rnic_ibcm_decode() turn a struct rnic_ibcm_msg
 * into 256 bytes and back, and the decode checks everything a message can
 * be checked for without connection state.
 */
#ifndef RNIC_ROCE_IBCM_WIRE_H
#define RNIC_ROCE_IBCM_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "rnic/rnic.h"

#define RNIC_MAD_LEN            256u
#define RNIC_MAD_HDR_LEN        24u
#define RNIC_MAD_BASE_VERSION   1
#define RNIC_MAD_CLASS_CM       0x07
#define RNIC_MAD_CM_VERSION     2       /* IBA 1.2 and later */
#define RNIC_MAD_METHOD_SEND    0x03    /* every CM message is a Send */
#define RNIC_GSI_QPN            1
#define RNIC_GSI_QKEY           0x80010000u
#define RNIC_ROCE_PKEY_MASK     0x7fffu /* membership bit aside */

/* CM attribute IDs (IBTA table 104) and the names of those rnic speaks. */
#define RNIC_IBCM_ATTRS(X)        \
	X(REQ,  0x0010)           \
	X(MRA,  0x0011)           \
	X(REJ,  0x0012)           \
	X(REP,  0x0013)           \
	X(RTU,  0x0014)           \
	X(DREQ, 0x0015)           \
	X(DREP, 0x0016)

enum rnic_ibcm_attr {
#define RNIC_IBCM_ATTR_ENUM(n, v) RNIC_IBCM_##n = v,
	RNIC_IBCM_ATTRS(RNIC_IBCM_ATTR_ENUM)
#undef RNIC_IBCM_ATTR_ENUM
};

/** Name of a CM attribute ("REQ", ...), "?" for others. */
const char *rnic_ibcm_attr_str(uint16_t attr);

/* Private data room of each message (IBTA tables 106-113). */
#define RNIC_IBCM_REQ_PDATA   92u
#define RNIC_IBCM_MRA_PDATA   222u
#define RNIC_IBCM_REJ_PDATA   148u
#define RNIC_IBCM_REP_PDATA   196u
#define RNIC_IBCM_RTU_PDATA   224u
#define RNIC_IBCM_DREQ_PDATA  220u
#define RNIC_IBCM_DREP_PDATA  224u
#define RNIC_IBCM_PDATA_MAX   224u
#define RNIC_IBCM_ARI_MAX     72u

/* Message a REJ or MRA is about (REJ "Message REJected", MRA "Message MRAed"). */
#define RNIC_IBCM_MSG_REQ   0
#define RNIC_IBCM_MSG_REP   1
#define RNIC_IBCM_MSG_OTHER 2   /* REJ: other; MRA: LAP */

/* REJ reasons rnic sends or interprets (IBTA table 109). */
#define RNIC_IBCM_REJ_NO_RESOURCES     3
#define RNIC_IBCM_REJ_TIMEOUT          4
#define RNIC_IBCM_REJ_INVALID_COMM_ID  6
#define RNIC_IBCM_REJ_INVALID_SERVICE  8
#define RNIC_IBCM_REJ_INVALID_TRANSPORT 9
#define RNIC_IBCM_REJ_STALE_CONN       10
#define RNIC_IBCM_REJ_INVALID_MTU      26
#define RNIC_IBCM_REJ_CONSUMER         28
#define RNIC_IBCM_REJ_INVALID_VERSION  31

/* REQ transport service types. */
#define RNIC_IBCM_TS_RC 0

/* The common MAD header (IBTA 13.4.2). */
struct rnic_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;          /* R bit 7, method 6:0 */
	rte_be16_t status;
	rte_be16_t class_specific;
	rte_be64_t tid;
	rte_be16_t attr_id;
	rte_be16_t resv;
	rte_be32_t attr_mod;
} __rte_packed;
_Static_assert(sizeof(struct rnic_mad_hdr) == RNIC_MAD_HDR_LEN, "MAD header");

/* Path information of a REQ (IBTA 12.6.5, primary and alternate alike). */
struct rnic_ibcm_path_wire {
	rte_be16_t local_lid;
	rte_be16_t remote_lid;
	uint8_t local_gid[16];
	uint8_t remote_gid[16];
	rte_be32_t flow_rate;    /* Flow Label 31:12, resv 11:6, Packet Rate 5:0 */
	uint8_t tclass;
	uint8_t hop_limit;
	uint8_t sl_sub;          /* SL 7:4, Subnet Local 3 */
	uint8_t ack_timeout;     /* Local ACK Timeout 7:3 */
} __rte_packed;
_Static_assert(sizeof(struct rnic_ibcm_path_wire) == 44, "CM path");

/* REQ (IBTA table 106). */
struct rnic_ibcm_req_wire {
	rte_be32_t local_comm_id;
	rte_be32_t resv4;
	rte_be64_t service_id;
	rte_be64_t local_ca_guid;
	rte_be32_t resv24;
	rte_be32_t local_qkey;
	rte_be32_t qpn_rres;     /* Local QPN 31:8, Responder Resources 7:0 */
	rte_be32_t eecn_idepth;  /* Local EECN 31:8, Initiator Depth 7:0 */
	rte_be32_t reecn_flags;  /* Remote EECN 31:8, Remote CM Response Timeout
				  * 7:3, Transport Service Type 2:1, E2E Flow 0 */
	rte_be32_t psn_flags;    /* Starting PSN 31:8, Local CM Response Timeout
				  * 7:3, Retry Count 2:0 */
	rte_be16_t pkey;
	uint8_t mtu_rnr;         /* Path MTU 7:4, RDC Exists 3, RNR Retry 2:0 */
	uint8_t cmr_srq;         /* Max CM Retries 7:4, SRQ 3, Ext Transport 2:0 */
	struct rnic_ibcm_path_wire primary;
	struct rnic_ibcm_path_wire alternate;
	uint8_t pdata[RNIC_IBCM_REQ_PDATA];
} __rte_packed;

/* MRA (table 107). */
struct rnic_ibcm_mra_wire {
	rte_be32_t local_comm_id;
	rte_be32_t remote_comm_id;
	uint8_t msg;             /* Message MRAed 7:6 */
	uint8_t timeout;         /* Service Timeout 7:3 */
	uint8_t pdata[RNIC_IBCM_MRA_PDATA];
} __rte_packed;

/* REJ (table 108). */
struct rnic_ibcm_rej_wire {
	rte_be32_t local_comm_id;
	rte_be32_t remote_comm_id;
	uint8_t msg;             /* Message REJected 7:6 */
	uint8_t ari_len;         /* Reject Info Length 7:1 */
	rte_be16_t reason;
	uint8_t ari[RNIC_IBCM_ARI_MAX];
	uint8_t pdata[RNIC_IBCM_REJ_PDATA];
} __rte_packed;

/* REP (table 110). */
struct rnic_ibcm_rep_wire {
	rte_be32_t local_comm_id;
	rte_be32_t remote_comm_id;
	rte_be32_t local_qkey;
	rte_be32_t qpn;          /* Local QPN 31:8 */
	rte_be32_t eecn;         /* Local EE Context 31:8 */
	rte_be32_t psn;          /* Starting PSN 31:8 */
	uint8_t rres;
	uint8_t idepth;
	uint8_t tad_flags;       /* Target ACK Delay 7:3, Failover 2:1, E2E Flow 0 */
	uint8_t rnr_srq;         /* RNR Retry 7:5, SRQ 4 */
	rte_be64_t local_ca_guid;
	uint8_t pdata[RNIC_IBCM_REP_PDATA];
} __rte_packed;

/* RTU and DREP (tables 111, 113). */
struct rnic_ibcm_rtu_wire {
	rte_be32_t local_comm_id;
	rte_be32_t remote_comm_id;
	uint8_t pdata[RNIC_IBCM_RTU_PDATA];
} __rte_packed;

/* DREQ (table 112). */
struct rnic_ibcm_dreq_wire {
	rte_be32_t local_comm_id;
	rte_be32_t remote_comm_id;
	rte_be32_t rqpn;         /* Remote QPN/EECN 31:8 */
	uint8_t pdata[RNIC_IBCM_DREQ_PDATA];
} __rte_packed;

#define RNIC_IBCM_BODY (RNIC_MAD_LEN - RNIC_MAD_HDR_LEN)
_Static_assert(sizeof(struct rnic_ibcm_req_wire) == RNIC_IBCM_BODY, "REQ");
_Static_assert(sizeof(struct rnic_ibcm_mra_wire) == RNIC_IBCM_BODY, "MRA");
_Static_assert(sizeof(struct rnic_ibcm_rej_wire) == RNIC_IBCM_BODY, "REJ");
_Static_assert(sizeof(struct rnic_ibcm_rep_wire) == RNIC_IBCM_BODY, "REP");
_Static_assert(sizeof(struct rnic_ibcm_rtu_wire) == RNIC_IBCM_BODY, "RTU");
_Static_assert(sizeof(struct rnic_ibcm_dreq_wire) == RNIC_IBCM_BODY, "DREQ");

/*
 * A CM message, decoded. One flat struct for all seven: each message uses
 * the fields its table has, the others stay zero. Comm IDs are named from
 * the sender's side, as on the wire: local_id is the sender's.
 */
struct rnic_ibcm_msg {
	uint16_t attr;              /* enum rnic_ibcm_attr */
	uint64_t tid;
	uint32_t local_id, remote_id;
	/* REQ */
	uint64_t service_id;
	uint64_t ca_guid;           /* REQ, REP: the sender's CA GUID */
	uint32_t qkey;              /* REQ, REP */
	uint32_t qpn;               /* REQ, REP: the sender's QPN; DREQ: the receiver's */
	uint32_t psn;               /* REQ, REP: the sender's starting PSN */
	uint8_t rres, idepth;       /* REQ, REP: responder resources, initiator depth */
	uint8_t remote_cm_timeout;  /* REQ: exponents of 4.096 us */
	uint8_t local_cm_timeout;
	uint8_t ts_type;            /* REQ: transport service type */
	bool e2e_flow;              /* REQ, REP */
	uint8_t retry_cnt;          /* REQ */
	uint8_t rnr_retry;          /* REQ, REP */
	uint8_t path_mtu;           /* REQ: enum ibv_mtu */
	uint8_t max_cm_retries;     /* REQ */
	bool srq;                   /* REQ, REP */
	uint16_t pkey;              /* REQ */
	uint16_t local_lid, remote_lid;          /* REQ primary path */
	uint8_t local_gid[16], remote_gid[16];
	uint32_t flow_label;
	uint8_t rate, tclass, hop_limit, sl, ack_timeout;
	bool subnet_local;
	/* REP */
	uint8_t target_ack_delay, failover;
	/* REJ, MRA */
	uint8_t msg;                /* the message rejected or MRAed */
	uint16_t reason;            /* REJ */
	uint8_t ari_len;            /* REJ */
	uint8_t ari[RNIC_IBCM_ARI_MAX];
	uint8_t service_timeout;    /* MRA */
	/* all: private data (always the message's full room when decoded) */
	uint16_t pdata_len;
	uint8_t pdata[RNIC_IBCM_PDATA_MAX];
};

/* Why a MAD was refused without connection state: counter names. */
#define RNIC_IBCM_BAD_CAUSES(X)                                               \
	X(cm_mad_len)        /* not exactly 256 bytes */                      \
	X(cm_base_version)   /* common MAD header base version not 1 */       \
	X(cm_class)          /* not the CM class */                           \
	X(cm_class_version)  /* CM class version not 2 */                     \
	X(cm_method)         /* not Send */                                   \
	X(cm_attr)           /* an attribute rnic does not speak (LAP, SIDR) */\
	X(cm_field)          /* a reserved code in a field (MRA/REJ message) */

enum rnic_ibcm_bad {
	RNIC_IBCM_OK = 0,
#define RNIC_IBCM_BAD_ENUM(n) RNIC_IBCM_BAD_##n,
	RNIC_IBCM_BAD_CAUSES(RNIC_IBCM_BAD_ENUM)
#undef RNIC_IBCM_BAD_ENUM
	RNIC_IBCM_BAD_MAX
};

/** Counter name of a cause ("cm_mad_len", ...). */
const char *rnic_ibcm_bad_str(enum rnic_ibcm_bad b);

/** Room for private data in message @p attr, 0 for an unknown one. */
uint16_t rnic_ibcm_pdata_room(uint16_t attr);

/**
 * Write @p m as a 256-byte MAD at @p mad (everything not in @p m zero).
 * @return 0, or -EINVAL for an unknown attribute or private data longer
 * than the message's room.
 */
int rnic_ibcm_encode(const struct rnic_ibcm_msg *m, uint8_t mad[RNIC_MAD_LEN]);

/**
 * Decode @p len bytes at @p mad into @p m. @p why (may be NULL) gets the
 * cause of a refusal. @return 0, -EBADMSG (malformed, wrong class,
 * version or method) or -EOPNOTSUPP (a CM attribute rnic does not speak).
 */
int rnic_ibcm_decode(struct rnic_ibcm_msg *m, const uint8_t *mad, size_t len,
		     enum rnic_ibcm_bad *why);

/* --- the RDMA IP CM service (annex A11), as librdmacm uses it ------------- */

#define RNIC_IBCM_PS_TCP 0x0106u   /* RDMA_PS_TCP: RC QPs */

/** Service ID of TCP-port-space @p port: 0x0000000001060000 | port. */
static inline uint64_t rnic_ibcm_service_id(uint16_t port)
{
	return ((uint64_t)RNIC_IBCM_PS_TCP << 16) | port;
}

/** @return true and the port if @p sid is an RDMA_PS_TCP service ID. */
static inline bool rnic_ibcm_service_port(uint64_t sid, uint16_t *port)
{
	if ((sid >> 16) != RNIC_IBCM_PS_TCP)
		return false;
	*port = (uint16_t)(sid & 0xffff);
	return true;
}

/* The CMA header at the start of a REQ's private data (librdmacm's
 * struct cma_hdr): the IP addresses and source port of the connection,
 * which the IB CM itself does not carry. */
struct rnic_cma_hdr {
	uint8_t version;         /* 0 */
	uint8_t ip_version;      /* 7:4: 4 or 6 */
	rte_be16_t port;         /* the active side's source port */
	uint8_t src[16];         /* IPv4: bytes 12..15 */
	uint8_t dst[16];
} __rte_packed;
#define RNIC_CMA_HDR_LEN 36u
_Static_assert(sizeof(struct rnic_cma_hdr) == RNIC_CMA_HDR_LEN, "CMA header");
#define RNIC_CMA_VERSION 0

/* User private data a REQ can carry behind the CMA header. */
#define RNIC_IBCM_REQ_USER_PDATA (RNIC_IBCM_REQ_PDATA - RNIC_CMA_HDR_LEN)

/** Fill @p h from the connection's addresses (both of one family; IPv4
 *  ones go in bytes 12..15 of the fields, as librdmacm puts them) and the
 *  active side's source port (host order). */
void rnic_cma_hdr_set(struct rnic_cma_hdr *h, const struct rnic_addr *src,
		      const struct rnic_addr *dst, uint16_t src_port);

/**
 * Read @p h. @return 0 with the addresses and port, -EPROTONOSUPPORT for
 * an unknown CMA version, -EAFNOSUPPORT for an IP version neither 4 nor 6.
 */
int rnic_cma_hdr_get(const struct rnic_cma_hdr *h, struct rnic_addr *src, struct rnic_addr *dst,
		     uint16_t *src_port);

#endif
