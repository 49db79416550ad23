/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic-perf --verify: account for every completion.
 *
 * Each queue of an end (its sends, its receives) keeps a bitmap of the
 * sequence numbers that completed. A completion whose bit is already set
 * is a duplicate; one below the highest sequence seen on its queue is out
 * of order (completions of one queue of one QP must come in posting
 * order, whatever CQ handler the CQ is bound to); a bit never set by the
 * end of the run is a missing completion. Every Send is signaled, so every
 * sequence number is expected.
 *
 * Each Send carries a struct perf_stamp (sending end, sequence) and lands
 * in its own receive slot, so the receiver can check that receive k holds
 * the peer's Send k.
 *
 * Each Write (write_bw) carries a pattern of its end and sequence into a
 * slot of its own at the peer; at the end the last slots must hold the
 * last Writes: compared in place with --loopback, read back with one RDMA
 * Read between processes (--client; the server only lends its slots).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf.h"

#define SEQLOG_MIN_BITS (1ull << 16)

/* Slots per end: one per Send in flight, one per receive posted. */
unsigned perf_verify_slots(const struct perf_opts *o)
{
	return o->verify ? o->tx_depth + perf_rx_depth(o) : 0;
}

static int seqlog_grow(struct perf_seqlog *l, uint64_t seq)
{
	uint64_t cap = l->cap ? l->cap : SEQLOG_MIN_BITS;

	while (cap <= seq)
		cap *= 2;
	uint8_t *bits = realloc(l->bits, cap / 8);
	if (bits == NULL) {
		fprintf(stderr, "rnic-perf: out of memory for the --verify bitmaps\n");
		return -1;
	}
	memset(bits + l->cap / 8, 0, (cap - l->cap) / 8);
	l->bits = bits;
	l->cap = cap;
	return 0;
}

/* Sequence @p seq completed on @p l. @return 0 the first time, 1 for a
 * duplicate, -1 out of memory. */
static int seqlog_note(struct perf_seqlog *l, uint64_t seq, struct perf_result *r)
{
	uint8_t bit = (uint8_t)(1u << (seq & 7));

	if (seq >= l->cap && seqlog_grow(l, seq) != 0)
		return -1;
	r->completions++;
	if (l->bits[seq / 8] & bit) {
		r->duplicates++;
		return 1;
	}
	l->bits[seq / 8] |= bit;
	l->unique++;
	if (seq < l->next)
		r->out_of_order++;      /* a later one of this queue came first */
	else
		l->next = seq + 1;
	return 0;
}

/* The slots follow the end's two regions in its buffer (setup.c sized it
 * with perf_verify_slots()). @return 0 or -1. */
int perf_verify_init(struct perf_end *e, const struct perf_opts *o)
{
	uint64_t bits = o->iters ? o->iters : SEQLOG_MIN_BITS;

	if (!o->verify)
		return 0;
	e->nsend_slots = o->tx_depth;
	e->nrecv_slots = perf_rx_depth(o);
	e->send_slots = e->buf + 2 * e->region;
	e->recv_slots = e->send_slots + (size_t)e->nsend_slots * e->region;
	if (seqlog_grow(&e->sends, bits - 1) != 0 || seqlog_grow(&e->recvs, bits - 1) != 0)
		return -1;
	return 0;
}

/* Where Send @p seq of @p e takes its payload from: its slot under
 * --verify, else the first region (its content does not matter). */
uint8_t *perf_send_buf(struct perf_end *e, uint64_t seq)
{
	if (e->send_slots == NULL)
		return e->buf;
	return e->send_slots + (size_t)(seq % e->nsend_slots) * e->region;
}

uint8_t *perf_recv_buf(struct perf_end *e, uint64_t seq)
{
	if (e->recv_slots == NULL)
		return e->buf;
	return e->recv_slots + (size_t)(seq % e->nrecv_slots) * e->region;
}

/* Write the stamp of Send @p seq into its slot (a no-op without --verify). */
void perf_stamp(struct perf_end *e, uint64_t seq)
{
	struct perf_stamp s = { .end = e->idx, .seq = seq };

	if (e->send_slots != NULL)
		memcpy(perf_send_buf(e, seq), &s, sizeof(s));
}

int perf_verify_send(struct perf_result *r, struct perf_end *e, uint64_t seq)
{
	return seqlog_note(&e->sends, seq, r) < 0 ? -1 : 0;
}

/* Receive @p seq of @p e: the sequence, then its payload, which must be
 * the peer's Send of the same number. @return 0 or -1 (out of memory). */
int perf_verify_recv(struct perf_result *r, struct perf_end *e, uint64_t seq,
		     const struct ibv_wc *wc, uint32_t size)
{
	struct perf_stamp s;
	int rc = seqlog_note(&e->recvs, seq, r);

	if (rc != 0)
		return rc < 0 ? -1 : 0;   /* a duplicate's slot may hold a newer one */
	memcpy(&s, perf_recv_buf(e, seq), sizeof(s));
	if (wc->byte_len != size || e->peer == NULL || s.end != e->peer->idx || s.seq != seq) {
		if (r->bad_payload++ < 5)
			fprintf(stderr, "rnic-perf: QP %u receive %lu holds end %u's Send %lu "
				"(%u bytes)\n", wc->qp_num, (unsigned long)seq, s.end,
				(unsigned long)s.seq, wc->byte_len);
	}
	return 0;
}

/* What the run should have produced: every Send of every requester, and
 * (send_bw) a receive for each at its peer. Missing: the bits never set. */
void perf_verify_finish(struct perf_result *r, const struct perf_opts *o,
			const struct perf_end *ends, unsigned nends)
{
	for (unsigned i = 0; i < nends; i++) {
		const struct perf_end *e = &ends[i];
		uint64_t want;
		const struct perf_seqlog *l;

		if (e->requester) {
			want = e->total;
			l = &e->sends;
		} else if (o->test == PERF_SEND_BW && e->peer != NULL) {
			want = e->peer->total;
			l = &e->recvs;
		} else {
			continue;
		}
		r->expected += want;
		for (uint64_t s = 0; s < want; s++)
			if (s >= l->cap || !(l->bits[s / 8] & (1u << (s & 7))))
				r->missing++;
	}
}

void perf_write_pattern(uint8_t *p, uint32_t size, unsigned end, uint64_t seq)
{
	uint64_t base = (uint64_t)end << 56 ^ seq << 24 ^ 0x5bd1e995u;
	uint32_t i = 0;
	for (; i + 8 <= size; i += 8) {
		uint64_t w = base + i;
		memcpy(p + i, &w, 8);
	}
	for (; i < size; i++)
		p[i] = (uint8_t)(base >> (i & 7));
}

/* The peer's slot Write @p seq of @p e lands in: its send-slot area, which
 * a write_bw responder never sends from. */
uint8_t *perf_write_target(struct perf_end *e, uint64_t seq)
{
	struct perf_end *p = e->peer;
	return p->buf + (2 + (size_t)(seq % p->nsend_slots)) * p->region;
}

uint64_t perf_write_remote_target(const struct perf_end *e, uint64_t seq)
{
	return e->raddr + (1 + seq % e->nsend_slots) * (uint64_t)e->region;
}

/* Between processes: Read the peer's slot area back into our own send
 * slots (the run is over: they are free) with one RDMA Read, which the
 * peer serves after every Write before it on the QP. @return 0 or -1. */
static int read_back(struct perf_end *e)
{
	uint32_t len = (uint32_t)((size_t)e->nsend_slots * e->region);
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->send_slots, .length = len, .lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = UINT64_MAX, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = e->raddr + e->region, .rkey = e->rkey },
	}, *bad = NULL;
	struct ibv_wc wc;
	double until = perf_now() + 10;

	memset(e->send_slots, 0, len);
	if (ibv_post_send(e->qp, &wr, &bad) != 0) {
		fprintf(stderr, "rnic-perf: QP %u: cannot post the read-back\n", e->qp->qp_num);
		return -1;
	}
	while (perf_now() < until) {
		int n = ibv_poll_cq(e->cq, 1, &wc);
		if (n < 0)
			return -1;
		if (n == 0) {
			if (!perf_drive()) {
				struct timespec ts = { 0, 100000 };
				nanosleep(&ts, NULL);
			}
			continue;
		}
		if (wc.wr_id != UINT64_MAX)
			continue;   /* a late completion of the run */
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "rnic-perf: QP %u: the read-back failed: %s\n",
				e->qp->qp_num, rnic_wc_status_str(wc.status));
			return -1;
		}
		return 0;
	}
	fprintf(stderr, "rnic-perf: QP %u: the read-back did not complete in 10 s\n",
		e->qp->qp_num);
	return -1;
}

/* Between processes: each of the last Writes of every requester must be in
 * its slot at the peer, as read back. */
static void verify_writes_remote(struct perf_result *r, const struct perf_opts *o,
				 struct perf_end *e, uint8_t *want)
{
	if (read_back(e) != 0) {
		r->bad_payload++;
		return;
	}
	uint64_t n = e->nsend_slots, first = e->completed > n ? e->completed - n : 0;
	for (uint64_t seq = first; seq < e->completed; seq++) {
		perf_write_pattern(want, o->size, e->idx, seq);
		const uint8_t *got = e->send_slots + (seq % n) * e->region;
		r->written_checked++;
		if (memcmp(got, want, o->size) != 0 && r->bad_payload++ < 5)
			fprintf(stderr, "rnic-perf: QP %u: Write %lu is not in its slot at "
				"the peer\n", e->qp->qp_num, (unsigned long)seq);
	}
}

void perf_verify_writes(struct perf_result *r, const struct perf_opts *o,
			const struct perf_end *ends, unsigned nends)
{
	uint8_t *want = malloc(o->size ? o->size : 1);
	if (want == NULL) {
		r->bad_payload++;
		return;
	}
	for (unsigned i = 0; i < nends; i++) {
		const struct perf_end *e = &ends[i];
		if (e->requester && e->peer == NULL && e->completed != 0 && e->qp != NULL) {
			verify_writes_remote(r, o, (struct perf_end *)e, want);
			continue;
		}
		if (!e->requester || e->peer == NULL || e->completed == 0)
			continue;
		/* a Write completes at the requester once the transport took it
		 * (iWARP: TCP has it): wait until the peer placed every byte */
		struct rnic_qp_stats qs;
		double until = perf_now() + 10;
		do {
			rnic_qp_stats(e->peer->qp, &qs);
			if (qs.bytes_in >= e->completed * (uint64_t)o->size)
				break;
			/* the requester's stack may be ours to run: it may
			 * still have segments to send or resend */
			if (!perf_drive()) {
				struct timespec ts = { 0, 1000000 };
				nanosleep(&ts, NULL);
			}
		} while (perf_now() < until);
		uint64_t n = e->peer->nsend_slots, first = e->completed > n ? e->completed - n : 0;
		for (uint64_t seq = first; seq < e->completed; seq++) {
			perf_write_pattern(want, o->size, e->idx, seq);
			const uint8_t *got = perf_write_target((struct perf_end *)e, seq);
			r->written_checked++;
			if (memcmp(got, want, o->size) != 0 && r->bad_payload++ < 5)
				fprintf(stderr, "rnic-perf: QP %u: Write %lu is not in its slot at "
					"the peer\n", e->qp->qp_num, (unsigned long)seq);
		}
	}
	free(want);
}

bool perf_verified(const struct perf_result *r)
{
	return r->duplicates == 0 && r->missing == 0 && r->out_of_order == 0 &&
	       r->bad_payload == 0 && r->completions == r->expected && !r->stalled;
}
