/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IB CM MAD encode and decode (ibcm_wire.h). The only code that touches
 * the bit fields of the CM messages: each message has one encoder and one
 * decoder, chosen by attribute from a table.
 */
#include <errno.h>
#include <string.h>

#include "roce/ibcm_wire.h"

static const char *const bad_names[] = {
	[RNIC_IBCM_OK] = "ok",
#define RNIC_IBCM_BAD_NAME(n) [RNIC_IBCM_BAD_##n] = #n,
	RNIC_IBCM_BAD_CAUSES(RNIC_IBCM_BAD_NAME)
#undef RNIC_IBCM_BAD_NAME
};

const char *rnic_ibcm_bad_str(enum rnic_ibcm_bad b)
{
	return (unsigned)b < RTE_DIM(bad_names) ? bad_names[b] : "?";
}

const char *rnic_ibcm_attr_str(uint16_t attr)
{
	switch (attr) {
#define RNIC_IBCM_ATTR_NAME(n, v) case v: return #n;
	RNIC_IBCM_ATTRS(RNIC_IBCM_ATTR_NAME)
#undef RNIC_IBCM_ATTR_NAME
	default:
		return "?";
	}
}

/* 24-bit values in the top of a big-endian word, and the byte below. */
static inline uint32_t hi24(rte_be32_t v) { return rte_be_to_cpu_32(v) >> 8; }
static inline uint8_t lo8(rte_be32_t v) { return (uint8_t)rte_be_to_cpu_32(v); }
static inline rte_be32_t mk24(uint32_t hi, uint8_t lo)
{
	return rte_cpu_to_be_32(((hi & 0xffffffu) << 8) | lo);
}

/* --- per-message encoders and decoders ------------------------------------ */

static void path_enc(struct rnic_ibcm_path_wire *p, const struct rnic_ibcm_msg *m)
{
	p->local_lid = rte_cpu_to_be_16(m->local_lid);
	p->remote_lid = rte_cpu_to_be_16(m->remote_lid);
	memcpy(p->local_gid, m->local_gid, 16);
	memcpy(p->remote_gid, m->remote_gid, 16);
	p->flow_rate = rte_cpu_to_be_32(((m->flow_label & 0xfffffu) << 12) | (m->rate & 0x3fu));
	p->tclass = m->tclass;
	p->hop_limit = m->hop_limit;
	p->sl_sub = (uint8_t)(((m->sl & 0xfu) << 4) | (m->subnet_local ? 0x08u : 0));
	p->ack_timeout = (uint8_t)((m->ack_timeout & 0x1fu) << 3);
}

static void path_dec(struct rnic_ibcm_msg *m, const struct rnic_ibcm_path_wire *p)
{
	m->local_lid = rte_be_to_cpu_16(p->local_lid);
	m->remote_lid = rte_be_to_cpu_16(p->remote_lid);
	memcpy(m->local_gid, p->local_gid, 16);
	memcpy(m->remote_gid, p->remote_gid, 16);
	uint32_t fr = rte_be_to_cpu_32(p->flow_rate);
	m->flow_label = fr >> 12;
	m->rate = fr & 0x3fu;
	m->tclass = p->tclass;
	m->hop_limit = p->hop_limit;
	m->sl = p->sl_sub >> 4;
	m->subnet_local = (p->sl_sub & 0x08u) != 0;
	m->ack_timeout = p->ack_timeout >> 3;
}

static void req_enc(void *b, const struct rnic_ibcm_msg *m)
{
	struct rnic_ibcm_req_wire *w = b;
	w->local_comm_id = rte_cpu_to_be_32(m->local_id);
	w->service_id = rte_cpu_to_be_64(m->service_id);
	w->local_ca_guid = rte_cpu_to_be_64(m->ca_guid);
	w->local_qkey = rte_cpu_to_be_32(m->qkey);
	w->qpn_rres = mk24(m->qpn, m->rres);
	w->eecn_idepth = mk24(0, m->idepth);
	w->reecn_flags = mk24(0, (uint8_t)(((m->remote_cm_timeout & 0x1fu) << 3) |
					   ((m->ts_type & 3u) << 1) | (m->e2e_flow ? 1u : 0)));
	w->psn_flags = mk24(m->psn, (uint8_t)(((m->local_cm_timeout & 0x1fu) << 3) |
					      (m->retry_cnt & 7u)));
	w->pkey = rte_cpu_to_be_16(m->pkey);
	w->mtu_rnr = (uint8_t)(((m->path_mtu & 0xfu) << 4) | (m->rnr_retry & 7u));
	w->cmr_srq = (uint8_t)(((m->max_cm_retries & 0xfu) << 4) | (m->srq ? 0x08u : 0));
	path_enc(&w->primary, m);
	memcpy(w->pdata, m->pdata, m->pdata_len);
}

static void req_dec(struct rnic_ibcm_msg *m, const void *b)
{
	const struct rnic_ibcm_req_wire *w = b;
	m->local_id = rte_be_to_cpu_32(w->local_comm_id);
	m->service_id = rte_be_to_cpu_64(w->service_id);
	m->ca_guid = rte_be_to_cpu_64(w->local_ca_guid);
	m->qkey = rte_be_to_cpu_32(w->local_qkey);
	m->qpn = hi24(w->qpn_rres);
	m->rres = lo8(w->qpn_rres);
	m->idepth = lo8(w->eecn_idepth);
	uint8_t f = lo8(w->reecn_flags);
	m->remote_cm_timeout = f >> 3;
	m->ts_type = (f >> 1) & 3u;
	m->e2e_flow = f & 1u;
	m->psn = hi24(w->psn_flags);
	m->local_cm_timeout = lo8(w->psn_flags) >> 3;
	m->retry_cnt = lo8(w->psn_flags) & 7u;
	m->pkey = rte_be_to_cpu_16(w->pkey);
	m->path_mtu = w->mtu_rnr >> 4;
	m->rnr_retry = w->mtu_rnr & 7u;
	m->max_cm_retries = w->cmr_srq >> 4;
	m->srq = (w->cmr_srq & 0x08u) != 0;
	path_dec(m, &w->primary);
	m->pdata_len = RNIC_IBCM_REQ_PDATA;
	memcpy(m->pdata, w->pdata, RNIC_IBCM_REQ_PDATA);
}

static void mra_enc(void *b, const struct rnic_ibcm_msg *m)
{
	struct rnic_ibcm_mra_wire *w = b;
	w->local_comm_id = rte_cpu_to_be_32(m->local_id);
	w->remote_comm_id = rte_cpu_to_be_32(m->remote_id);
	w->msg = (uint8_t)((m->msg & 3u) << 6);
	w->timeout = (uint8_t)((m->service_timeout & 0x1fu) << 3);
	memcpy(w->pdata, m->pdata, m->pdata_len);
}

static void mra_dec(struct rnic_ibcm_msg *m, const void *b)
{
	const struct rnic_ibcm_mra_wire *w = b;
	m->local_id = rte_be_to_cpu_32(w->local_comm_id);
	m->remote_id = rte_be_to_cpu_32(w->remote_comm_id);
	m->msg = w->msg >> 6;
	m->service_timeout = w->timeout >> 3;
	m->pdata_len = RNIC_IBCM_MRA_PDATA;
	memcpy(m->pdata, w->pdata, RNIC_IBCM_MRA_PDATA);
}

static void rej_enc(void *b, const struct rnic_ibcm_msg *m)
{
	struct rnic_ibcm_rej_wire *w = b;
	w->local_comm_id = rte_cpu_to_be_32(m->local_id);
	w->remote_comm_id = rte_cpu_to_be_32(m->remote_id);
	w->msg = (uint8_t)((m->msg & 3u) << 6);
	uint8_t ari = RTE_MIN(m->ari_len, (uint8_t)RNIC_IBCM_ARI_MAX);
	w->ari_len = (uint8_t)(ari << 1);
	w->reason = rte_cpu_to_be_16(m->reason);
	memcpy(w->ari, m->ari, ari);
	memcpy(w->pdata, m->pdata, m->pdata_len);
}

static void rej_dec(struct rnic_ibcm_msg *m, const void *b)
{
	const struct rnic_ibcm_rej_wire *w = b;
	m->local_id = rte_be_to_cpu_32(w->local_comm_id);
	m->remote_id = rte_be_to_cpu_32(w->remote_comm_id);
	m->msg = w->msg >> 6;
	m->ari_len = w->ari_len >> 1;
	m->reason = rte_be_to_cpu_16(w->reason);
	memcpy(m->ari, w->ari, RNIC_IBCM_ARI_MAX);
	m->pdata_len = RNIC_IBCM_REJ_PDATA;
	memcpy(m->pdata, w->pdata, RNIC_IBCM_REJ_PDATA);
}

static void rep_enc(void *b, const struct rnic_ibcm_msg *m)
{
	struct rnic_ibcm_rep_wire *w = b;
	w->local_comm_id = rte_cpu_to_be_32(m->local_id);
	w->remote_comm_id = rte_cpu_to_be_32(m->remote_id);
	w->local_qkey = rte_cpu_to_be_32(m->qkey);
	w->qpn = mk24(m->qpn, 0);
	w->psn = mk24(m->psn, 0);
	w->rres = m->rres;
	w->idepth = m->idepth;
	w->tad_flags = (uint8_t)(((m->target_ack_delay & 0x1fu) << 3) |
				 ((m->failover & 3u) << 1) | (m->e2e_flow ? 1u : 0));
	w->rnr_srq = (uint8_t)(((m->rnr_retry & 7u) << 5) | (m->srq ? 0x10u : 0));
	w->local_ca_guid = rte_cpu_to_be_64(m->ca_guid);
	memcpy(w->pdata, m->pdata, m->pdata_len);
}

static void rep_dec(struct rnic_ibcm_msg *m, const void *b)
{
	const struct rnic_ibcm_rep_wire *w = b;
	m->local_id = rte_be_to_cpu_32(w->local_comm_id);
	m->remote_id = rte_be_to_cpu_32(w->remote_comm_id);
	m->qkey = rte_be_to_cpu_32(w->local_qkey);
	m->qpn = hi24(w->qpn);
	m->psn = hi24(w->psn);
	m->rres = w->rres;
	m->idepth = w->idepth;
	m->target_ack_delay = w->tad_flags >> 3;
	m->failover = (w->tad_flags >> 1) & 3u;
	m->e2e_flow = w->tad_flags & 1u;
	m->rnr_retry = w->rnr_srq >> 5;
	m->srq = (w->rnr_srq & 0x10u) != 0;
	m->ca_guid = rte_be_to_cpu_64(w->local_ca_guid);
	m->pdata_len = RNIC_IBCM_REP_PDATA;
	memcpy(m->pdata, w->pdata, RNIC_IBCM_REP_PDATA);
}

/* RTU and DREP share a layout. */
static void rtu_enc(void *b, const struct rnic_ibcm_msg *m)
{
	struct rnic_ibcm_rtu_wire *w = b;
	w->local_comm_id = rte_cpu_to_be_32(m->local_id);
	w->remote_comm_id = rte_cpu_to_be_32(m->remote_id);
	memcpy(w->pdata, m->pdata, m->pdata_len);
}

static void rtu_dec(struct rnic_ibcm_msg *m, const void *b)
{
	const struct rnic_ibcm_rtu_wire *w = b;
	m->local_id = rte_be_to_cpu_32(w->local_comm_id);
	m->remote_id = rte_be_to_cpu_32(w->remote_comm_id);
	m->pdata_len = RNIC_IBCM_RTU_PDATA;
	memcpy(m->pdata, w->pdata, RNIC_IBCM_RTU_PDATA);
}

static void dreq_enc(void *b, const struct rnic_ibcm_msg *m)
{
	struct rnic_ibcm_dreq_wire *w = b;
	w->local_comm_id = rte_cpu_to_be_32(m->local_id);
	w->remote_comm_id = rte_cpu_to_be_32(m->remote_id);
	w->rqpn = mk24(m->qpn, 0);
	memcpy(w->pdata, m->pdata, m->pdata_len);
}

static void dreq_dec(struct rnic_ibcm_msg *m, const void *b)
{
	const struct rnic_ibcm_dreq_wire *w = b;
	m->local_id = rte_be_to_cpu_32(w->local_comm_id);
	m->remote_id = rte_be_to_cpu_32(w->remote_comm_id);
	m->qpn = hi24(w->rqpn);
	m->pdata_len = RNIC_IBCM_DREQ_PDATA;
	memcpy(m->pdata, w->pdata, RNIC_IBCM_DREQ_PDATA);
}

/* One row per message rnic speaks. */
struct ibcm_codec {
	uint16_t attr;
	uint16_t pdata;
	void (*enc)(void *body, const struct rnic_ibcm_msg *m);
	void (*dec)(struct rnic_ibcm_msg *m, const void *body);
};

static const struct ibcm_codec codecs[] = {
	{ RNIC_IBCM_REQ, RNIC_IBCM_REQ_PDATA, req_enc, req_dec },
	{ RNIC_IBCM_MRA, RNIC_IBCM_MRA_PDATA, mra_enc, mra_dec },
	{ RNIC_IBCM_REJ, RNIC_IBCM_REJ_PDATA, rej_enc, rej_dec },
	{ RNIC_IBCM_REP, RNIC_IBCM_REP_PDATA, rep_enc, rep_dec },
	{ RNIC_IBCM_RTU, RNIC_IBCM_RTU_PDATA, rtu_enc, rtu_dec },
	{ RNIC_IBCM_DREQ, RNIC_IBCM_DREQ_PDATA, dreq_enc, dreq_dec },
	{ RNIC_IBCM_DREP, RNIC_IBCM_DREP_PDATA, rtu_enc, rtu_dec },
};

static const struct ibcm_codec *codec_of(uint16_t attr)
{
	for (unsigned i = 0; i < RTE_DIM(codecs); i++)
		if (codecs[i].attr == attr)
			return &codecs[i];
	return NULL;
}

uint16_t rnic_ibcm_pdata_room(uint16_t attr)
{
	const struct ibcm_codec *c = codec_of(attr);
	return c ? c->pdata : 0;
}

int rnic_ibcm_encode(const struct rnic_ibcm_msg *m, uint8_t mad[RNIC_MAD_LEN])
{
	const struct ibcm_codec *c = codec_of(m->attr);
	if (c == NULL || m->pdata_len > c->pdata)
		return -EINVAL;
	memset(mad, 0, RNIC_MAD_LEN);
	struct rnic_mad_hdr *h = (struct rnic_mad_hdr *)mad;
	h->base_version = RNIC_MAD_BASE_VERSION;
	h->mgmt_class = RNIC_MAD_CLASS_CM;
	h->class_version = RNIC_MAD_CM_VERSION;
	h->method = RNIC_MAD_METHOD_SEND;
	h->tid = rte_cpu_to_be_64(m->tid);
	h->attr_id = rte_cpu_to_be_16(m->attr);
	c->enc(mad + RNIC_MAD_HDR_LEN, m);
	return 0;
}

/* The common MAD header checks: @return the cause, RNIC_IBCM_OK if none. */
static enum rnic_ibcm_bad hdr_check(const struct rnic_mad_hdr *h)
{
	if (h->base_version != RNIC_MAD_BASE_VERSION)
		return RNIC_IBCM_BAD_cm_base_version;
	if (h->mgmt_class != RNIC_MAD_CLASS_CM)
		return RNIC_IBCM_BAD_cm_class;
	if (h->class_version != RNIC_MAD_CM_VERSION)
		return RNIC_IBCM_BAD_cm_class_version;
	if (h->method != RNIC_MAD_METHOD_SEND)
		return RNIC_IBCM_BAD_cm_method;
	return RNIC_IBCM_OK;
}

int rnic_ibcm_decode(struct rnic_ibcm_msg *m, const uint8_t *mad, size_t len,
		     enum rnic_ibcm_bad *why)
{
	enum rnic_ibcm_bad bad = RNIC_IBCM_OK;
	const struct rnic_mad_hdr *h = (const struct rnic_mad_hdr *)mad;
	const struct ibcm_codec *c = NULL;
	memset(m, 0, sizeof(*m));
	if (mad == NULL || len != RNIC_MAD_LEN)
		bad = RNIC_IBCM_BAD_cm_mad_len;
	else
		bad = hdr_check(h);
	if (bad == RNIC_IBCM_OK) {
		c = codec_of(rte_be_to_cpu_16(h->attr_id));
		if (c == NULL)
			bad = RNIC_IBCM_BAD_cm_attr;
	}
	if (bad == RNIC_IBCM_OK) {
		m->attr = c->attr;
		m->tid = rte_be_to_cpu_64(h->tid);
		c->dec(m, mad + RNIC_MAD_HDR_LEN);
		/* message codes 3 are reserved; an ARI longer than its field */
		if (((m->attr == RNIC_IBCM_REJ || m->attr == RNIC_IBCM_MRA) && m->msg > 2) ||
		    m->ari_len > RNIC_IBCM_ARI_MAX)
			bad = RNIC_IBCM_BAD_cm_field;
	}
	if (why != NULL)
		*why = bad;
	if (bad == RNIC_IBCM_OK)
		return 0;
	return bad == RNIC_IBCM_BAD_cm_attr ? -EOPNOTSUPP : -EBADMSG;
}

/* --- CMA header ------------------------------------------------------------ */

void rnic_cma_hdr_set(struct rnic_cma_hdr *h, const struct rnic_addr *src,
		      const struct rnic_addr *dst, uint16_t src_port)
{
	memset(h, 0, sizeof(*h));
	h->version = RNIC_CMA_VERSION;
	h->port = rte_cpu_to_be_16(src_port);
	if (src->family == RNIC_AF_INET6) {
		h->ip_version = 6u << 4;
		memcpy(h->src, src->v6, 16);
		memcpy(h->dst, dst->v6, 16);
		return;
	}
	h->ip_version = 4u << 4;
	rte_be32_t s = rte_cpu_to_be_32(src->v4), d = rte_cpu_to_be_32(dst->v4);
	memcpy(h->src + 12, &s, 4);
	memcpy(h->dst + 12, &d, 4);
}

int rnic_cma_hdr_get(const struct rnic_cma_hdr *h, struct rnic_addr *src, struct rnic_addr *dst,
		     uint16_t *src_port)
{
	if (h->version != RNIC_CMA_VERSION)
		return -EPROTONOSUPPORT;
	unsigned ipv = h->ip_version >> 4;
	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	if (ipv == 6) {
		src->family = dst->family = RNIC_AF_INET6;
		memcpy(src->v6, h->src, 16);
		memcpy(dst->v6, h->dst, 16);
	} else if (ipv == 4) {
		rte_be32_t s, d;
		memcpy(&s, h->src + 12, 4);
		memcpy(&d, h->dst + 12, 4);
		src->family = dst->family = RNIC_AF_INET;
		src->v4 = rte_be_to_cpu_32(s);
		dst->v4 = rte_be_to_cpu_32(d);
	} else {
		return -EAFNOSUPPORT;
	}
	*src_port = rte_be_to_cpu_16(h->port);
	return 0;
}
