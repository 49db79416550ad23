/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: IB CM MAD decoding (lib/roce/ibcm_wire.c), what the
 * RoCE connection manager runs on every QP1 payload before any state.
 *
 * Input: the MAD bytes as received (any length).
 *
 * Properties:
 *  - rnic_ibcm_decode() returns 0, -EBADMSG or -EOPNOTSUPP, with a cause
 *    that matches (OK exactly on success, cm_attr exactly on -EOPNOTSUPP);
 *  - a decoded message has private data of its attribute's full room and
 *    an ARI length within its field;
 *  - decoding is a fixpoint through the encoder: encode(decode(x)) succeeds
 *    and decodes to the same message (reserved bits are the only loss);
 *  - a REQ's CMA header (IPv4 or IPv6) reads as 0, -EPROTONOSUPPORT or
 *    -EAFNOSUPPORT; one that reads writes back to the same version, IP
 *    version nibble, port and addresses (IPv6: all 16 bytes; IPv4: the
 *    last 4).
 */
#include <errno.h>

#include "roce/ibcm_wire.h"
#include "fuzz_util.h"

static void same_msg(const struct rnic_ibcm_msg *a, const struct rnic_ibcm_msg *b)
{
	FUZZ_CHECK(a->attr == b->attr && a->tid == b->tid && a->local_id == b->local_id &&
		   a->remote_id == b->remote_id && a->service_id == b->service_id &&
		   a->ca_guid == b->ca_guid && a->qkey == b->qkey && a->qpn == b->qpn &&
		   a->psn == b->psn && a->rres == b->rres && a->idepth == b->idepth);
	FUZZ_CHECK(a->remote_cm_timeout == b->remote_cm_timeout &&
		   a->local_cm_timeout == b->local_cm_timeout && a->ts_type == b->ts_type &&
		   a->e2e_flow == b->e2e_flow && a->retry_cnt == b->retry_cnt &&
		   a->rnr_retry == b->rnr_retry && a->path_mtu == b->path_mtu &&
		   a->max_cm_retries == b->max_cm_retries && a->srq == b->srq &&
		   a->pkey == b->pkey);
	FUZZ_CHECK(a->local_lid == b->local_lid && a->remote_lid == b->remote_lid &&
		   memcmp(a->local_gid, b->local_gid, 16) == 0 &&
		   memcmp(a->remote_gid, b->remote_gid, 16) == 0 &&
		   a->flow_label == b->flow_label && a->rate == b->rate &&
		   a->tclass == b->tclass && a->hop_limit == b->hop_limit && a->sl == b->sl &&
		   a->ack_timeout == b->ack_timeout && a->subnet_local == b->subnet_local);
	FUZZ_CHECK(a->target_ack_delay == b->target_ack_delay && a->failover == b->failover &&
		   a->msg == b->msg && a->reason == b->reason && a->ari_len == b->ari_len &&
		   a->service_timeout == b->service_timeout && a->pdata_len == b->pdata_len &&
		   memcmp(a->pdata, b->pdata, a->pdata_len) == 0 &&
		   memcmp(a->ari, b->ari, a->ari_len) == 0);
}

static void cma_roundtrip(const struct rnic_cma_hdr *h)
{
	struct rnic_addr s, d;
	struct rnic_cma_hdr h2;
	uint16_t port;
	int rc = rnic_cma_hdr_get(h, &s, &d, &port);
	FUZZ_CHECK(rc == 0 || rc == -EPROTONOSUPPORT || rc == -EAFNOSUPPORT);
	if (rc != 0)
		return;
	FUZZ_CHECK(s.family == d.family && s.family == (h->ip_version >> 4));
	rnic_cma_hdr_set(&h2, &s, &d, port);
	FUZZ_CHECK(h2.version == h->version && (h2.ip_version >> 4) == (h->ip_version >> 4) &&
		   h2.port == h->port);
	size_t off = s.family == RNIC_AF_INET6 ? 0 : 12;
	FUZZ_CHECK(memcmp(h2.src + off, h->src + off, 16 - off) == 0 &&
		   memcmp(h2.dst + off, h->dst + off, 16 - off) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rnic_ibcm_msg m, m2;
	enum rnic_ibcm_bad why = RNIC_IBCM_BAD_MAX;
	/* a private copy of exactly the input: reads past it are findings */
	uint8_t *buf = malloc(size ? size : 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	int rc = rnic_ibcm_decode(&m, buf, size, &why);
	FUZZ_CHECK(rc == 0 || rc == -EBADMSG || rc == -EOPNOTSUPP);
	FUZZ_CHECK((rc == 0) == (why == RNIC_IBCM_OK));
	FUZZ_CHECK((rc == -EOPNOTSUPP) == (why == RNIC_IBCM_BAD_cm_attr));
	FUZZ_CHECK(why < RNIC_IBCM_BAD_MAX && rnic_ibcm_bad_str(why)[0] != '?');
	if (rc == 0) {
		uint8_t mad[RNIC_MAD_LEN];
		FUZZ_CHECK(m.pdata_len == rnic_ibcm_pdata_room(m.attr) && m.pdata_len > 0);
		FUZZ_CHECK(m.ari_len <= RNIC_IBCM_ARI_MAX);
		FUZZ_CHECK(rnic_ibcm_attr_str(m.attr)[0] != '?');
		FUZZ_CHECK(rnic_ibcm_encode(&m, mad) == 0);
		FUZZ_CHECK(rnic_ibcm_decode(&m2, mad, sizeof(mad), NULL) == 0);
		same_msg(&m, &m2);
		if (m.attr == RNIC_IBCM_REQ)
			cma_roundtrip((const struct rnic_cma_hdr *)m.pdata);
	}
	free(buf);
	return 0;
}
