/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protection attacks (issue 8 item 4): a hostile peer, stack A, sends
 * tagged Writes, Reads and (RoCE) atomics to a victim, stack B, with
 *
 *   (a) random STags, a real index with a wrong key, offsets out of the
 *       region's bounds, offsets whose end wraps 2^64;
 *   (b) the right STag of an MR in another PD, an MR without the right
 *       the operation needs (no REMOTE_WRITE, no REMOTE_READ, no
 *       REMOTE_ATOMIC, none at all), and (RoCE) a victim QP without it;
 *   (c) the STag of a type 2 window invalidated by the victim
 *       (IBV_WR_LOCAL_INV) or by the attacker's Send with Invalidate, and
 *       the STag of an MR after rnic_dereg_mr;
 *
 * interleaved with legal Writes, Reads and atomics (right STag, in bounds,
 * rights present, through MRs and through windows), whose data must land
 * exactly where asked. Lengths are 1 B .. 64 KiB.
 *
 * Topology: A's port is ring "atk0.a", B's is "atk1.b"; nothing uses the
 * other two ends. A thread of this test (the "tap") moves frames from the
 * ring A transmits into to the ring B receives from, and back, and reads
 * every frame B sends: each RoCE NAK (BTH ACKNOWLEDGE with an AETH NAK
 * syndrome: its code) and each iWARP Terminate (untagged DDP, RDMAP
 * opcode 7, QN 2: its layer, error type and code), as the attacker
 * receives them. So every refusal is checked on the wire, by cause.
 *
 * Victim memory: per pair of QPs a "kit" of regions, each between 4 KiB
 * canaries (a fixed pattern): RW (all rights), WO (no REMOTE_READ), RO (no
 * REMOTE_WRITE), NONE (local only), OPD (all rights, another PD), MWP (the
 * parent of a type 2 window: local and bind only), DEAD (registered and
 * deregistered again for case (c)). A shadow copy of B's whole buffer is
 * kept: legal Writes and atomics update it, nothing else may change B.
 * After every round all of B is compared with the shadow (canaries, the
 * regions nobody may write, the legal Writes), every legal Read's sink is
 * compared with what the shadow held, and every refused Read's sink must
 * be untouched.
 *
 * RoCE: every refusal moves both QPs to ERR, so each pair is reset and
 * connected again out of band (RESET, INIT, RTR, RTS, fresh PSNs) after
 * its attack; P pairs attack in parallel per round. Expected: one NAK per
 * attack, remote access error (2) for every STag fault, invalid request
 * (1) when the victim QP lacks the right; the attacker's WR completes with
 * REM_ACCESS_ERR / REM_INV_REQ_ERR; B's naks_access_out and naks_inv_out
 * move by exactly the counts.
 * iWARP: each attack needs a new CM connection (the Terminate closes it).
 * Expected Terminate causes (RFC 5040 section 7, RFC 5041 section 7):
 *   Write (tagged DDP):  invalid STag 1/1/0, base or bounds 1/1/1,
 *                        STag not associated (PD) 1/1/2, TO wrap 1/1/3,
 *                        access rights RDMAP 0/1/2 (DDP has no code)
 *   Read Request source: invalid STag 0/1/0, base or bounds 0/1/1, access
 *                        rights 0/1/2, not associated 0/1/3, TO wrap 0/1/4
 * and B's terminates_out moves by one per attack.
 *
 *   test_attack [roce|iwarp]
 *   RNIC_ATTACK_SEED   the seed (printed at start); default fixed
 *   RNIC_ATTACK_N      RoCE attacks (default 30000)
 *   RNIC_ATTACK_N_IWARP iWARP attacks (default 1500)
 *   RNIC_ATTACK_TIME_S stop a transport's run after this many seconds
 *                      (default 10 RoCE, 8 iWARP: CI time; unless RNIC_ATTACK_N /
 *                      RNIC_ATTACK_N_IWARP is set: then 0, no cap)
 *   RNIC_ATTACK_PAIRS, RNIC_ATTACK_PAIRS_IWARP  QP pairs per round (32, 8)
 *   RNIC_ATTACK_INFLIGHT  orderings mixed in (bit mask, below; default all)
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"
#include "rnic/rnic_roce.h"
#include "rnic/rnic_verbs.h"

#define KiB 1024u
#define A_IP 0xc0000201u
#define B_IP 0xc0000202u
#define GUARD 0xee
#define CANARY 4096u
#define MAXLEN (64u * KiB)
#define HANG_S 20
#define P_MAX 64
#define SLOTS 6                 /* WRs of one pair in one round, at most */
#define ALL_R (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define LW IBV_ACCESS_LOCAL_WRITE

/* --- harness ------------------------------------------------------------------ */

static jmp_buf case_jmp;
static const char *case_name;
static int n_pass, n_fail, n_skip;
static char failed[256], skipped[256];
enum { R_PASS = 0, R_FAIL = 1, R_SKIP = 2 };

#define CHECK_FILE "test_attack.c"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "../common/check.h"
#pragma GCC diagnostic pop
#include "../common/pair.h"

static uint64_t rng_s;
static uint64_t rnd(void)
{
	uint64_t z = (rng_s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
static uint32_t rndn(uint32_t n) { return (uint32_t)(rnd() % n); }
/* 1 .. 64 KiB, spread over the sizes (log-uniform-ish) */
static uint32_t rnd_len(uint32_t max)
{
	uint32_t l = 1 + rndn(1u << rndn(17));
	if (l > MAXLEN)
		l = MAXLEN;
	return l > max ? 1 + rndn(max) : l;
}

/* --- the tap: frames between the two ring pairs ------------------------------- */

struct tap_ev {
	uint8_t term;           /* 1 Terminate, 0 NAK */
	uint8_t layer, etype, code;
	uint32_t key;           /* NAK: destination QPN; Terminate: TCP dst port */
	uint32_t seq;           /* NAK: PSN; Terminate: its TCP stream position */
};
#define TAP_LOG 65536u
static struct tap_ev tap_log[TAP_LOG];
static uint64_t tap_w;                    /* written by the tap */
static uint64_t tap_r;                    /* read by the main thread */
static volatile int tap_stop;
static uint64_t tap_inflight, tap_frames, tap_naks, tap_terms, tap_overflow;
/* A on atk0.a, B on atk1.b: the tap thread carries every frame between */
static struct tpair K = { .ring = { "atk0", "atk1" }, .tapped = true, .workers = 1,
			  .mbufs = 16383, .ip = { { A_IP }, { B_IP } } };

/* The B->A byte stream of one connection (by A's port): where its next
 * FPDU starts, and the start of an FPDU header cut by a segment end. */
struct flow {
	bool valid;
	uint32_t nseq;          /* next in-order sequence number */
	uint32_t fstart;        /* stream position of the next FPDU */
	uint8_t carry[24];      /* bytes from fstart to nseq, when fewer than 24 */
	unsigned carry_n;
};
static struct flow flows[65536];
static uint8_t tap_term[24];

/* Byte @p k of the stream view: carry, then the segment. */
static const uint8_t *tap_hdr(const struct rte_mbuf *m, unsigned at, const struct flow *fl,
			      unsigned k, uint8_t *out)
{
	for (unsigned j = 0; j < 24; j++, k++) {
		if (k < fl->carry_n) {
			out[j] = fl->carry[k];
		} else {
			const uint8_t *b = rte_pktmbuf_read(m, at + k - fl->carry_n, 1, out + j);
			out[j] = *b;
		}
	}
	return out;
}

static bool is_term(const uint8_t *g)
{
	return (g[2] & 0xc3) == 0x41 && g[3] == 0x47 && g[8] == 0 && g[9] == 0 && g[10] == 0 &&
	       g[11] == 2;
}

/* Walk the FPDUs of a TCP segment in stream order; @return the first
 * Terminate's 24 header bytes, or NULL. A segment out of order (a
 * retransmission) is read alone from its start. */
static const uint8_t *tap_tcp(struct rte_mbuf *m, unsigned at, unsigned pay, uint32_t seq,
			      struct flow *fl, uint32_t *tpos)
{
	uint8_t key[16];
	const uint8_t *k = rte_pktmbuf_read(m, at, pay < 16 ? pay : 16, key);
	if (pay >= 20 && memcmp(k, "MPA ID Rep Frame", 16) == 0) {
		uint8_t h[20];
		const uint8_t *r = rte_pktmbuf_read(m, at, 20, h);
		fl->valid = true;
		fl->nseq = seq + pay;
		fl->fstart = seq + 20 + ((unsigned)r[18] << 8 | r[19]);
		fl->carry_n = 0;
		if (fl->fstart - seq >= pay)
			return NULL;
		/* FPDUs right behind the reply: walk from there */
		fl->nseq = fl->fstart;
		pay -= fl->fstart - seq;
		at += fl->fstart - seq;
		seq = fl->fstart;
	}
	if (!fl->valid || seq != fl->nseq) {
		/* out of order: try FPDUs from the segment's start */
		unsigned off = 0;
		while (off + 24 <= pay) {
			const uint8_t *g = rte_pktmbuf_read(m, at + off, 24, tap_term);
			if (is_term(g)) {
				*tpos = seq + off;
				return g;
			}
			off += ((2u + ((unsigned)g[0] << 8 | g[1]) + 3u) & ~3u) + 4u;
		}
		return NULL;
	}
	/* in order: the view is carry (from fstart) + the segment */
	unsigned total = fl->carry_n + pay;
	unsigned pos = fl->fstart - (fl->nseq - fl->carry_n);   /* offset of fstart in the view */
	const uint8_t *found = NULL;
	while (pos + 24 <= total) {
		const uint8_t *g = tap_hdr(m, at, fl, pos, tap_term);
		if (is_term(g) && found == NULL) {
			found = g;
			*tpos = fl->nseq - fl->carry_n + pos;
		}
		pos += ((2u + ((unsigned)g[0] << 8 | g[1]) + 3u) & ~3u) + 4u;
	}
	/* keep what is left of a cut header */
	uint8_t nc[24];
	unsigned ncn = 0;
	if (pos < total) {
		ncn = total - pos;
		for (unsigned j = 0; j < ncn; j++) {
			unsigned q = pos + j;
			if (q < fl->carry_n) {
				nc[j] = fl->carry[q];
			} else {
				const uint8_t *b = rte_pktmbuf_read(m, at + q - fl->carry_n, 1, nc + j);
				nc[j] = *b;
			}
		}
	}
	fl->fstart = fl->nseq - fl->carry_n + pos;
	fl->nseq = seq + pay;
	memcpy(fl->carry, nc, ncn);
	fl->carry_n = ncn;
	return found;
}

static void tap_inspect(struct rte_mbuf *m)
{
	uint8_t b[128];
	uint32_t n = rte_pktmbuf_pkt_len(m) < sizeof(b) ? rte_pktmbuf_pkt_len(m) : sizeof(b);
	const uint8_t *p = rte_pktmbuf_read(m, 0, n, b);
	if (p == NULL || n < 14 + 20 || p[12] != 0x08 || p[13] != 0x00)
		return;
	const uint8_t *ip = p + 14;
	unsigned ihl = (ip[0] & 0xf) * 4u;
	unsigned tot = (unsigned)ip[2] << 8 | ip[3];
	const uint8_t *l4 = ip + ihl;
	if (14 + ihl + 8 > n)
		return;
	struct tap_ev e = { 0 };
	if (ip[9] == 17 && (l4[2] << 8 | l4[3]) == 4791) {
		const uint8_t *bth = l4 + 8;
		if (14 + ihl + 8 + 16 > n || bth[0] != 0x11)   /* RC ACKNOWLEDGE */
			return;
		uint8_t syn = bth[12];
		if (((syn >> 5) & 3) != 3)
			return;                                 /* ACK or RNR NAK */
		e.term = 0;
		e.code = syn & 0x1f;
		e.key = (uint32_t)bth[5] << 16 | (uint32_t)bth[6] << 8 | bth[7];
		e.seq = (uint32_t)bth[9] << 16 | (uint32_t)bth[10] << 8 | bth[11];
		__atomic_fetch_add(&tap_naks, 1, __ATOMIC_RELAXED);
	} else if (ip[9] == 6) {
		unsigned doff = (l4[12] >> 4) * 4u;
		unsigned pay = tot - ihl - doff, at = 14 + ihl + doff;
		uint32_t seq = (uint32_t)l4[4] << 24 | (uint32_t)l4[5] << 16 |
			       (uint32_t)l4[6] << 8 | l4[7];
		uint16_t port = (uint16_t)(l4[2] << 8 | l4[3]);
		if (pay == 0 || tot > rte_pktmbuf_pkt_len(m) - 14)
			return;
		uint32_t tpos = 0;
		const uint8_t *f = tap_tcp(m, at, pay, seq, &flows[port], &tpos);
		if (f == NULL)
			return;
		e.term = 1;
		e.layer = f[20] >> 4;
		e.etype = f[20] & 0xf;
		e.code = f[21];
		e.key = (uint32_t)l4[2] << 8 | l4[3];
		e.seq = tpos;   /* the Terminate's stream position: retransmissions repeat it */
		__atomic_fetch_add(&tap_terms, 1, __ATOMIC_RELAXED);
	} else {
		return;
	}
	uint64_t w = __atomic_load_n(&tap_w, __ATOMIC_RELAXED);
	if (w - __atomic_load_n(&tap_r, __ATOMIC_ACQUIRE) >= TAP_LOG) {
		tap_overflow++;
		return;
	}
	tap_log[w % TAP_LOG] = e;
	__atomic_store_n(&tap_w, w + 1, __ATOMIC_RELEASE);
}

static unsigned tap_move(struct rte_ring *from, struct rte_ring *to, bool inspect)
{
	struct rte_mbuf *m[64];
	unsigned n = rte_ring_dequeue_burst(from, (void **)m, 64, NULL);
	if (n == 0)
		return 0;
	__atomic_fetch_add(&tap_inflight, n, __ATOMIC_ACQ_REL);
	if (inspect)
		for (unsigned i = 0; i < n; i++)
			tap_inspect(m[i]);
	unsigned done = 0;
	while (done < n)
		done += rte_ring_enqueue_burst(to, (void **)(m + done), n - done, NULL);
	tap_frames += n;
	__atomic_fetch_sub(&tap_inflight, n, __ATOMIC_ACQ_REL);
	return n;
}

static void *tap_main(void *arg)
{
	(void)arg;
	unsigned idle = 0;
	while (!tap_stop) {
		unsigned n = tap_move(K.a_tx, K.b_rx, false) + tap_move(K.b_tx, K.a_rx, true);
		if (n) {
			idle = 0;
		} else if (++idle > 256) {
			struct timespec ts = { 0, 20000 };
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

/* --- stacks and objects -------------------------------------------------------- */


enum tr { IW, ROCE };
static enum tr tr;

static void noop(struct rnic_worker *w, void *arg) { (void)w; (void)arg; }

static bool rings_empty(void)
{
	return rte_ring_count(K.a_tx) == 0 && rte_ring_count(K.b_rx) == 0 &&
	       rte_ring_count(K.b_tx) == 0 && rte_ring_count(K.a_rx) == 0 &&
	       __atomic_load_n(&tap_inflight, __ATOMIC_ACQUIRE) == 0;
}

/* Nothing in flight between the stacks, and both workers have handled
 * what they received. */
static void drain(void)
{
	double t0 = now_s();
	for (int stable = 0; stable < 2;) {
		CHECK(now_s() - t0 < HANG_S, "the link does not go quiet (hang guard)");
		if (!rings_empty()) {
			stable = 0;
			usleep(20);
			continue;
		}
		rnic_worker_call_sync(rnic_stack_worker(K.st[1], 0), noop, NULL);
		rnic_worker_call_sync(rnic_stack_worker(K.st[0], 0), noop, NULL);
		stable = rings_empty() ? stable + 1 : 0;
	}
}

/* Victim regions of one kit. */
enum reg { G_RW, G_WO, G_RO, G_NONE, G_OPD, G_MWP, G_DEAD, G_N };
static const char *const reg_name[G_N] = { "RW", "WO", "RO", "NONE", "OPD", "MWP", "DEAD" };
static const uint32_t reg_len[G_N] = { 128 * KiB, 96 * KiB, 80 * KiB, 64 * KiB, 80 * KiB,
				       96 * KiB, 64 * KiB };
static const int reg_acc[G_N] = {
	LW | ALL_R, LW | IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_READ, LW, LW | ALL_R,
	LW | IBV_ACCESS_MW_BIND, 0 };

struct region {
	uint8_t *p;
	uint32_t len;
	struct ibv_mr *mr;
};

struct pair {
	struct ibv_qp *qa, *qb;
	struct region r[G_N];
	struct ibv_mw *mw;
	uint32_t mw_rkey;         /* the window's current STag */
	uint64_t mw_va;
	uint32_t mw_len;
	bool mw_valid;
	uint32_t dead_stag;       /* last deregistered STag */
	bool connected;
	int qp_access;            /* B's QP rights on this connection */
	/* iWARP */
	struct rnic_cm_id *ida, *idb;
	uint16_t a_port;          /* A's TCP port of this connection */
	bool disc_a, disc_b;
	/* A's memory */
	uint8_t *src, *sink;      /* SLOTS x 64 KiB each; sinks have guards */
};

static struct pair pr[P_MAX];
static unsigned P;
static uint8_t *bufA, *bufB, *shadow, *bufR;
static size_t lenA, lenB;
static struct ibv_pd *pdA, *pdB, *pdB2;
static struct ibv_cq *cqA, *cqB;
static struct ibv_mr *mrA, *mrR;
static struct rnic_cm_channel *cmA, *cmB;
static struct rnic_cm_id *listener;
static uint16_t listen_port = 9400;
static uint8_t canary_pat[CANARY];

#define SINK_STRIDE (MAXLEN + 2 * 4096u)

static uint8_t *sink_of(struct pair *p, int slot)
{
	return p->sink + (size_t)slot * SINK_STRIDE + 4096;
}

/* --- attempts ----------------------------------------------------------------------- */

enum op { OP_WRITE, OP_READ, OP_FADD, OP_CSWP, OP_SEND_INV };
static const char *const op_name[] = { "Write", "Read", "FetchAdd", "CmpSwap", "SendInv" };

enum kind {
	K_LEGAL, K_RAND_STAG, K_WRONG_KEY, K_BOUNDS, K_WRAP,   /* (a) */
	K_WRONG_PD, K_NO_RIGHT, K_QP_RIGHT,                   /* (b) */
	K_MW_LINV, K_MW_SINV, K_DEREG,                        /* (c) */
	K_N
};
static const char *const kind_name[K_N] = {
	"legal", "rand_stag", "wrong_key", "bounds", "wrap", "wrong_pd", "no_right", "qp_right",
	"mw_local_inv", "mw_send_inv", "dereg" };

enum fault { FT_OK, FT_INVALID, FT_BOUNDS, FT_ACCESS, FT_PD, FT_WRAP, FT_QP_ACCESS, FT_N };
static const char *const fault_name[FT_N] = { "ok", "invalid", "bounds", "access", "pd", "wrap",
					     "qp_access" };

struct att {
	enum op op;
	enum kind kind;
	enum fault fault;
	uint32_t rkey;
	uint64_t va;
	uint32_t len;
	int slot;
	uint64_t add, cmp;        /* atomics */
	uint64_t expect_atom;     /* legal atomics: the original value */
	enum reg reg;             /* target region (shadow bookkeeping), or -1 */
	bool window;
	bool late;                /* legal: posted with the attack, in flight before it */
	bool fence;               /* behind a Read or atomic of the same phase */
};

struct round_pair {
	int n;
	struct att a[SLOTS];
	bool attack;              /* the last entry is the attack */
	bool bind, linv, sinv, dereg;
};
static struct round_pair rp[P_MAX];

/* Totals of one transport's run. */
struct totals {
	uint64_t kind[K_N];
	uint64_t fault[FT_N];
	uint64_t legal_ops[5], legal_bytes;
	uint64_t codes[3][16][256];   /* iWARP: layer, etype, code; RoCE: [0][0][nak code] */
	uint64_t status[32];          /* the attacker's WC status of its attacks */
	uint64_t partial_bytes;       /* iWARP: in-bounds prefix of an out-of-bounds Write */
	uint64_t rounds, reconnects;
};
static struct totals T;

/* iWARP: the Terminate cause expected for a fault. */
static void iw_expect(enum op op, enum fault f, uint8_t *l, uint8_t *t, uint8_t *c)
{
	if (op == OP_WRITE) {
		static const uint8_t code[FT_N] = { [FT_INVALID] = 0, [FT_BOUNDS] = 1, [FT_PD] = 2,
						   [FT_WRAP] = 3 };
		if (f == FT_ACCESS) {
			*l = 0; *t = 1; *c = 2;
		} else {
			*l = 1; *t = 1; *c = code[f];
		}
	} else {
		static const uint8_t code[FT_N] = { [FT_INVALID] = 0, [FT_BOUNDS] = 1, [FT_ACCESS] = 2,
						   [FT_PD] = 3, [FT_WRAP] = 4 };
		*l = 0; *t = 1; *c = code[f];
	}
}

static int roce_expect_nak(enum fault f)
{
	return f == FT_QP_ACCESS ? 1 : 2;
}

static bool stag_live(uint32_t stag)
{
	for (unsigned i = 0; i < P; i++) {
		for (int g = 0; g < G_N; g++)
			if (pr[i].r[g].mr && pr[i].r[g].mr->rkey == stag)
				return true;
		if (pr[i].mw_valid && pr[i].mw_rkey == stag)
			return true;
	}
	return mrR->rkey == stag;
}

/* A legal op of pair @p i in slot @p s. */
static void gen_legal(unsigned i, struct att *a, int s, bool via_window)
{
	struct pair *p = &pr[i];
	memset(a, 0, sizeof(*a));
	a->kind = K_LEGAL;
	a->fault = FT_OK;
	a->slot = s;
	unsigned r = rndn(tr == ROCE ? 10 : 8);
	a->op = r < 4 ? OP_WRITE : r < 8 ? OP_READ : r == 8 ? OP_FADD : OP_CSWP;
	if (via_window) {
		a->window = true;
		a->reg = G_MWP;
		a->op = rndn(2) ? OP_WRITE : OP_READ;
		a->len = rnd_len(p->mw_len);
		a->va = p->mw_va + rndn(p->mw_len - a->len + 1);
		a->rkey = p->mw_rkey;
		return;
	}
	enum reg g = a->op == OP_WRITE ? (rndn(2) ? G_RW : G_WO) :
		     a->op == OP_READ ? (rndn(2) ? G_RW : G_RO) : G_RW;
	struct region *rg = &p->r[g];
	a->reg = g;
	a->rkey = rg->mr->rkey;
	if (a->op == OP_FADD || a->op == OP_CSWP) {
		a->len = 8;
		a->va = (uintptr_t)rg->p + 8 * rndn(rg->len / 8);
		a->add = rnd();
		a->cmp = rndn(2) ? rnd() : 0;   /* set from the shadow when generated */
		return;
	}
	a->len = rnd_len(rg->len);
	a->va = (uintptr_t)rg->p + rndn(rg->len - a->len + 1);
}

/* The attack of pair @p i: kind @p k. */
static void gen_attack(unsigned i, struct att *a, int s, enum kind k)
{
	struct pair *p = &pr[i];
	memset(a, 0, sizeof(*a));
	a->kind = k;
	a->slot = s;
	a->reg = (enum reg)-1;
	unsigned ops = tr == ROCE ? 5 : 2;
	unsigned r = rndn(ops);
	a->op = r == 0 ? OP_WRITE : r == 1 ? OP_READ : r == 2 ? OP_WRITE : r == 3 ? OP_READ :
		(rndn(2) ? OP_FADD : OP_CSWP);
	bool atomic = a->op == OP_FADD || a->op == OP_CSWP;
	a->len = atomic ? 8 : rnd_len(MAXLEN);
	if (atomic) {
		a->add = rnd();
		a->cmp = rnd();
	}
	struct region *rg;
	switch (k) {
	case K_RAND_STAG:
		do
			a->rkey = (uint32_t)rnd();
		while (stag_live(a->rkey));
		rg = &p->r[rndn(G_N)];
		a->va = rndn(2) ? rnd() : (uintptr_t)rg->p + rndn(rg->len);
		if (atomic)
			a->va &= ~7ull;
		a->fault = FT_INVALID;
		break;
	case K_WRONG_KEY: {
		enum reg g = (enum reg)rndn(G_DEAD);   /* any live MR of the kit */
		rg = &p->r[g];
		uint32_t real = rg->mr->rkey;
		do
			a->rkey = (real & ~0xffu) | (uint32_t)rndn(256);
		while (a->rkey == real);
		a->va = (uintptr_t)rg->p + (atomic ? 8 * rndn(rg->len / 8) : rndn(rg->len));
		if (!atomic && a->len > rg->len - (a->va - (uintptr_t)rg->p))
			a->len = (uint32_t)(rg->len - (a->va - (uintptr_t)rg->p));
		a->fault = FT_INVALID;
		break;
	}
	case K_BOUNDS: {
		enum reg g = a->op == OP_WRITE ? (rndn(2) ? G_RW : G_WO) :
			     a->op == OP_READ ? (rndn(2) ? G_RW : G_RO) : G_RW;
		rg = &p->r[g];
		a->rkey = rg->mr->rkey;
		a->reg = g;
		uint64_t base = (uintptr_t)rg->p, end = base + rg->len;
		if (atomic) {
			a->va = rndn(2) ? base - 8 * (1 + rndn(512)) : end + 8 * rndn(512);
		} else {
			switch (rndn(4)) {
			case 0:   /* starts below */
				a->va = base - 1 - rndn(4096);
				break;
			case 1:   /* crosses the end */
				if (a->len < 2)
					a->len = 2 + rndn(MAXLEN - 1);
				a->va = end - rndn(a->len - 1) - 1;
				break;
			case 2:   /* past the end */
				a->va = end + rndn(1u << 20);
				break;
			default:  /* anywhere, no wrap */
				do
					a->va = rnd() & ~(1ull << 63);
				while (a->va + a->len > base && a->va < end);
			}
		}
		a->fault = FT_BOUNDS;
		break;
	}
	case K_WRAP: {
		if (atomic) {   /* an aligned 8-byte range cannot wrap */
			a->op = rndn(2) ? OP_WRITE : OP_READ;
			a->len = rnd_len(MAXLEN);
			atomic = false;
		}
		enum reg g = a->op == OP_READ ? G_RW : a->op == OP_WRITE ? G_WO : G_RW;
		rg = &p->r[g];
		a->rkey = rg->mr->rkey;
		if (a->len < 2)
			a->len = 2 + rndn(MAXLEN - 1);
		/* the first segment (at least 512 bytes, or all of it) wraps */
		uint32_t lim = a->len < 512 ? a->len : 512;
		a->va = 0 - (uint64_t)(1 + rndn(lim - 1));
		a->fault = FT_WRAP;
		break;
	}
	case K_WRONG_PD:
		rg = &p->r[G_OPD];
		a->rkey = rg->mr->rkey;
		a->va = (uintptr_t)rg->p + (atomic ? 8 * rndn(rg->len / 8) : rndn(rg->len - a->len + 1));
		if (!atomic && a->len > rg->len)
			a->len = rg->len;
		a->fault = FT_PD;
		break;
	case K_NO_RIGHT: {
		enum reg g;
		if (a->op == OP_WRITE)
			g = (enum reg[]){ G_RO, G_NONE, G_MWP }[rndn(3)];
		else if (a->op == OP_READ)
			g = (enum reg[]){ G_WO, G_NONE, G_MWP }[rndn(3)];
		else
			g = (enum reg[]){ G_RO, G_WO, G_NONE, G_MWP }[rndn(4)];
		rg = &p->r[g];
		a->rkey = rg->mr->rkey;
		if (!atomic && a->len > rg->len)
			a->len = rg->len;
		a->va = (uintptr_t)rg->p + (atomic ? 8 * rndn(rg->len / 8) : rndn(rg->len - a->len + 1));
		a->fault = FT_ACCESS;
		break;
	}
	case K_QP_RIGHT:
		rg = &p->r[G_RW];
		a->rkey = rg->mr->rkey;
		a->reg = G_RW;
		if (!atomic && a->len > rg->len)
			a->len = rg->len;
		a->va = (uintptr_t)rg->p + (atomic ? 8 * rndn(rg->len / 8) : rndn(rg->len - a->len + 1));
		a->fault = FT_QP_ACCESS;
		break;
	case K_MW_LINV:
	case K_MW_SINV:
		/* the window's STag, in bounds of what the window was; set once
		 * the window is bound (fix_window_attack) */
		if (atomic) {
			a->op = OP_WRITE;
			a->len = rnd_len(MAXLEN);
		}
		a->fault = FT_INVALID;
		break;
	case K_DEREG:
		a->fault = FT_INVALID;
		rg = &p->r[G_DEAD];
		if (!atomic && a->len > rg->len)
			a->len = rg->len;
		a->va = (uintptr_t)rg->p + (atomic ? 8 * rndn(rg->len / 8) : rndn(rg->len - a->len + 1));
		break;
	default:
		break;
	}
}

static enum kind pick_kind(void)
{
	for (;;) {
		enum kind k = (enum kind)(1 + rndn(K_N - 1));
		if (k == K_QP_RIGHT)
			continue;   /* chosen with the connection (run_round) */
		return k;
	}
}

/* --- posting ---------------------------------------------------------------------- */

static uint64_t round_no;
/* RNIC_ATTACK_INFLIGHT, a bit mask of the orderings the run mixes in (all
 * by default; they found three RoCE responder/requester bugs, since fixed:
 * NAKs overtaking earlier responses, Send with Invalidate cutting off an
 * earlier Read, Fence ignored on Writes). 0 avoids them:
 *   1  legal Reads and atomics in flight right before an attack
 *   2  a Send with Invalidate right behind a Read through the window
 *   4  a fenced Write overlapping an earlier Read of the same batch */
static unsigned inflight;
#define INFL_READS 1u
#define INFL_SINV 2u
#define INFL_FENCE 4u

static uint64_t wr_id_of(unsigned i, int slot)
{
	return round_no << 16 | (uint64_t)i << 8 | (uint64_t)slot;
}

static void post_att(unsigned i, struct att *a)
{
	struct pair *p = &pr[i];
	struct ibv_sge sg;
	struct ibv_send_wr wr = { .wr_id = wr_id_of(i, a->slot), .sg_list = &sg, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED | (a->fence ? IBV_SEND_FENCE : 0) },
			   *bad;
	switch (a->op) {
	case OP_WRITE:
		sg = (struct ibv_sge){ (uintptr_t)(p->src + (size_t)a->slot * MAXLEN), a->len, mrA->lkey };
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = a->va;
		wr.wr.rdma.rkey = a->rkey;
		break;
	case OP_READ:
		sg = (struct ibv_sge){ (uintptr_t)sink_of(p, a->slot), a->len, mrA->lkey };
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = a->va;
		wr.wr.rdma.rkey = a->rkey;
		break;
	case OP_FADD:
	case OP_CSWP:
		*(uint64_t *)(void *)sink_of(p, a->slot) = 0x5a5a5a5a5a5a5a5aull;
		sg = (struct ibv_sge){ (uintptr_t)&*(uint64_t *)(void *)sink_of(p, a->slot), 8, mrA->lkey };
		wr.opcode = a->op == OP_FADD ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.remote_addr = a->va;
		wr.wr.atomic.rkey = a->rkey;
		wr.wr.atomic.compare_add = a->op == OP_FADD ? a->add : a->cmp;
		wr.wr.atomic.swap = a->add;
		break;
	case OP_SEND_INV:
		sg = (struct ibv_sge){ (uintptr_t)(p->src + (size_t)a->slot * MAXLEN), 8, mrA->lkey };
		wr.opcode = IBV_WR_SEND_WITH_INV;
		wr.invalidate_rkey = a->rkey;
		break;
	}
	int rc = ibv_post_send(p->qa, &wr, &bad);
	CHECK(rc == 0, "pair %u: post %s (%s) rkey %#x va %#" PRIx64 " len %u: %d", i,
	      op_name[a->op], kind_name[a->kind], a->rkey, a->va, a->len, rc);
}

/* Wait for @p n completions on @p cq. */
static void wait_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, const char *what)
{
	int got = 0;
	double t0 = now_s();
	unsigned idle = 0;
	while (got < n) {
		int k = ibv_poll_cq(cq, n - got, wc + got);
		CHECK(k >= 0, "%s: poll_cq %d", what, k);
		got += k;
		if (k == 0) {
			if (++idle > 64)
				usleep(5);
			if ((idle & 1023) == 0)
				CHECK(now_s() - t0 < HANG_S, "%s: %d of %d completions in %d s "
				      "(hang guard)", what, got, n, HANG_S);
		} else {
			idle = 0;
		}
	}
}

/* B's receives (Sends with Invalidate) seen while waiting for other things */
static struct ibv_wc b_recv[P_MAX];
static int n_b_recv;

/* B's own work request (bind, local invalidate) on pair @p i; waits. */
static void b_post_wait(unsigned i, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad;
	wr->wr_id = 0xb000000000000000ull | wr_id_of(i, 0);
	wr->send_flags = IBV_SEND_SIGNALED;
	CHECK_RC(ibv_post_send(pr[i].qb, wr, &bad), 0);
	struct ibv_wc wc;
	for (;;) {
		wait_n(cqB, &wc, 1, what);
		if ((wc.wr_id & 0xff) != 63)
			break;
		CHECK(n_b_recv < P_MAX, "B: too many receives");
		b_recv[n_b_recv++] = wc;
	}
	CHECK(wc.wr_id == wr->wr_id && wc.status == IBV_WC_SUCCESS, "pair %u: B's %s: wr_id %#"
	      PRIx64 " status %s", i, what, wc.wr_id, rnic_wc_status_str(wc.status));
}

static void bind_window(unsigned i)
{
	struct pair *p = &pr[i];
	struct region *rg = &p->r[G_MWP];
	uint32_t len = 1 + rndn(rg->len);
	uint64_t off = rndn(rg->len - len + 1);
	struct ibv_send_wr bw = { .opcode = IBV_WR_BIND_MW };
	bw.bind_mw.mw = p->mw;
	bw.bind_mw.rkey = ibv_inc_rkey(p->mw->rkey);
	bw.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = rg->mr,
		.addr = (uintptr_t)rg->p + off, .length = len,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };
	b_post_wait(i, &bw, "bind");
	p->mw_rkey = bw.bind_mw.rkey;
	p->mw_va = (uintptr_t)rg->p + off;
	p->mw_len = len;
	p->mw_valid = true;
}

static void dump_pair(unsigned i);

/* --- connecting --------------------------------------------------------------------- */

static uint32_t rnd_psn(void) { return (uint32_t)rnd() & 0xffffffu; }

static void roce_connect(unsigned i)
{
	struct pair *p = &pr[i];
	struct ibv_qp *q[2] = { p->qa, p->qb };
	struct ibv_context *c[2] = { K.ctx[0], K.ctx[1] };
	uint32_t psn[2] = { rnd_psn(), rnd_psn() };
	int acc[2] = { 0, p->qp_access };
	for (int k = 0; k < 2; k++) {
		if (q[k]->state != IBV_QPS_RESET) {
			struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };
			CHECK_RC(rnic_modify_qp(q[k], &at, IBV_QP_STATE), 0);
		}
		struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					  .qp_access_flags = (unsigned)acc[k] };
		CHECK_RC(rnic_modify_qp(q[k], &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					IBV_QP_ACCESS_FLAGS), 0);
	}
	check_roce_rtr_rts(q, c, psn, 1);
	p->connected = true;
	T.reconnects++;
}

static void cm_event(struct rnic_cm_channel *ch, struct rnic_cm_event *ev, const char *who)
{
	int rc = rnic_cm_get_event(ch, ev, HANG_S * 1000);
	CHECK(rc == 0, "%s: no CM event in %d s (rc %d)", who, HANG_S, rc);
}

static unsigned pair_of_id(struct rnic_cm_id *id, bool a_side)
{
	for (unsigned i = 0; i < P; i++)
		if ((a_side ? pr[i].ida : pr[i].idb) == id)
			return i;
	return ~0u;
}

/* iWARP: connect every pair of @p want that is not connected, in parallel. */
static void iw_connect_all(const bool *want)
{
	unsigned n = 0;
	for (unsigned i = 0; i < P; i++) {
		struct pair *p = &pr[i];
		if (!want[i] || p->connected)
			continue;
		for (int k = 0; k < 2; k++) {
			struct ibv_qp *q = k ? p->qb : p->qa;
			if (q->state != IBV_QPS_RESET) {
				struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };
				CHECK_RC(rnic_modify_qp(q, &at, IBV_QP_STATE), 0);
			}
		}
		static uint8_t pd[P_MAX][4];
		memcpy(pd[i], "atk", 3);
		pd[i][3] = (uint8_t)i;
		struct rnic_cm_conn_param cp = { .responder_resources = 16, .initiator_depth = 16,
						 .private_data = pd[i], .private_data_len = 4 };
		CHECK_RC(rnic_cm_create_id(cmA, NULL, &p->ida), 0);
		CHECK_RC(rnic_cm_connect(p->ida, p->qa, B_IP, listen_port, &cp), 0);
		p->disc_a = p->disc_b = false;
		n++;
	}
	/* B: requests and ESTABLISHED; A: ESTABLISHED */
	unsigned est_a = 0, est_b = 0, req = 0;
	while (req < n || est_b < n) {
		struct rnic_cm_event ev;
		cm_event(cmB, &ev, "B");
		if (ev.type == RNIC_CM_EVENT_CONNECT_REQUEST) {
			CHECK(ev.private_data_len >= 4 && memcmp(ev.private_data, "atk", 3) == 0 &&
			      ev.private_data[3] < P, "B: a CONNECT_REQUEST without our private data");
			unsigned i = ev.private_data[3];
			pr[i].idb = ev.id;
			pr[i].a_port = ev.peer_port;
			struct rnic_cm_conn_param cp = { .responder_resources = 16, .initiator_depth = 16 };
			CHECK_RC(rnic_cm_accept(ev.id, pr[i].qb, &cp), 0);
			req++;
		} else {
			CHECK(ev.type == RNIC_CM_EVENT_ESTABLISHED, "B: CM event %s (status %d) while "
			      "connecting", rnic_cm_event_str(ev.type), ev.status);
			est_b++;
		}
	}
	while (est_a < n) {
		struct rnic_cm_event ev;
		cm_event(cmA, &ev, "A");
		CHECK(ev.type == RNIC_CM_EVENT_ESTABLISHED, "A: CM event %s (status %d) while "
		      "connecting", rnic_cm_event_str(ev.type), ev.status);
		unsigned i = pair_of_id(ev.id, true);
		CHECK(i < P, "A: ESTABLISHED for an unknown id");
		pr[i].connected = true;
		est_a++;
	}
	T.reconnects += n;
}

/* iWARP: both ends of every attacked pair DISCONNECTED (-EPROTO: a
 * Terminate either way), ids destroyed. */
static void iw_teardown(void)
{
	unsigned n = 0, got = 0;
	for (unsigned i = 0; i < P; i++)
		if (rp[i].attack)
			n += 2;
	double t0 = now_s();
	while (got < n) {
		if (now_s() - t0 > HANG_S) {
			for (unsigned i = 0; i < P; i++)
				if (rp[i].attack && (!pr[i].disc_a || !pr[i].disc_b)) {
					fprintf(stderr, "  pair %u: DISCONNECTED A %d B %d; QPs A %d B %d\n",
						i, pr[i].disc_a, pr[i].disc_b, pr[i].qa->state,
						pr[i].qb->state);
					dump_pair(i);
				}
			CHECK(false, "%u of %u DISCONNECTED events in %d s (hang guard)", got, n, HANG_S);
		}
		for (int side = 0; side < 2 && got < n; side++) {
			struct rnic_cm_event ev;
			int rc = rnic_cm_get_event(side ? cmB : cmA, &ev, 0);
			if (rc == -EAGAIN) {
				usleep(10);
				continue;
			}
			CHECK_RC(rc, 0);
			unsigned i = pair_of_id(ev.id, side == 0);
			CHECK(i < P && rp[i].attack, "%s: CM event %s for %s", side ? "B" : "A",
			      rnic_cm_event_str(ev.type), i < P ? "a pair not attacked" : "an unknown id");
			CHECK(ev.type == RNIC_CM_EVENT_DISCONNECTED && ev.status == -EPROTO,
			      "pair %u %s: CM event %s status %d, expected DISCONNECTED -EPROTO", i,
			      side ? "B" : "A", rnic_cm_event_str(ev.type), ev.status);
			bool *d = side ? &pr[i].disc_b : &pr[i].disc_a;
			CHECK(!*d, "pair %u: two DISCONNECTED on %s", i, side ? "B" : "A");
			*d = true;
			got++;
		}
	}
	for (unsigned i = 0; i < P; i++) {
		if (!rp[i].attack)
			continue;
		CHECK_RC(rnic_cm_destroy_id(pr[i].ida), 0);
		CHECK_RC(rnic_cm_destroy_id(pr[i].idb), 0);
		pr[i].ida = pr[i].idb = NULL;
		pr[i].connected = false;
	}
}

/* --- one round ------------------------------------------------------------------------ */

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* Generate pair @p i's work for this round; apply legal effects to the
 * shadow in order (a legal Read's expected data is copied to its sink's
 * twin, kept in expect[]). */
static uint8_t *expect_buf;   /* P x SLOTS x 64 KiB */

static uint8_t *expect_of(unsigned i, int slot)
{
	return expect_buf + ((size_t)i * SLOTS + (size_t)slot) * MAXLEN;
}

static void apply_legal(unsigned i, struct att *a)
{
	struct pair *p = &pr[i];
	uint8_t *dst = shadow + (a->va - (uintptr_t)bufB);
	switch (a->op) {
	case OP_WRITE: {
		uint8_t *src = p->src + (size_t)a->slot * MAXLEN;
		fill(src, a->len, rnd());
		memcpy(dst, src, a->len);
		break;
	}
	case OP_READ:
		memcpy(expect_of(i, a->slot), dst, a->len);
		break;
	case OP_FADD: {
		uint64_t v = rd64(dst);
		a->expect_atom = v;
		v += a->add;
		memcpy(dst, &v, 8);
		break;
	}
	case OP_CSWP: {
		uint64_t v = rd64(dst);
		a->expect_atom = v;
		if (rndn(2))
			a->cmp = v;   /* a swap that happens */
		if (v == a->cmp)
			memcpy(dst, &a->add, 8);
		break;
	}
	default:
		break;
	}
	T.legal_ops[a->op]++;
	T.legal_bytes += a->len;
}

/* A Write or atomic in slot @p s overlapping an earlier Read of the same
 * phase: only a working IBV_SEND_FENCE keeps it behind the Read, and
 * rnic's RoCE requester ignores the Fence on Writes (report); avoided
 * unless RNIC_ATTACK_INFLIGHT=1. */
static bool behind_read(const struct round_pair *r, int s)
{
	const struct att *b = &r->a[s];
	if (b->op == OP_READ)
		return false;
	for (int j = 0; j < s; j++) {
		const struct att *a = &r->a[j];
		if (a->op == OP_READ && a->kind == K_LEGAL && !a->late &&
		    a->va < b->va + b->len && b->va < a->va + a->len)
			return true;
	}
	return false;
}

static void plan_pair(unsigned i, uint64_t *attacks_left)
{
	struct round_pair *r = &rp[i];
	struct pair *p = &pr[i];
	memset(r, 0, sizeof(*r));
	r->attack = *attacks_left > 0 && rndn(16) != 0;
	enum kind k = r->attack ? pick_kind() : K_LEGAL;
	if (r->attack)
		(*attacks_left)--;
	int s = 0;
	struct att atk;
	if (r->attack)
		gen_attack(i, &atk, 0, k);
	if (k == K_MW_LINV || k == K_MW_SINV) {
		r->bind = true;
		r->linv = k == K_MW_LINV;
		r->sinv = k == K_MW_SINV;
	}
	if (k == K_DEREG)
		r->dereg = true;
	/* window rounds: a legal op through the window first */
	if (r->bind) {
		bind_window(i);
		gen_legal(i, &r->a[s], s, true);
		apply_legal(i, &r->a[s]);
		s++;
		if (r->sinv) {
			/* after the window op completed (with RNIC_ATTACK_INFLIGHT
			 * right behind it: an earlier Read through the window
			 * must still be answered) */
			r->a[s] = (struct att){ .op = OP_SEND_INV, .kind = K_LEGAL, .rkey = p->mw_rkey,
						.slot = s, .reg = (enum reg)-1, .late = !(inflight & INFL_SINV) };
			s++;
		}
	}
	/* early legal ops complete before the attack is posted; late ones
	 * (Writes; any op with RNIC_ATTACK_INFLIGHT=1) are posted right
	 * before it on the same QP and are in flight when it is refused */
	int ne = (int)rndn(3), nlate = r->attack ? (int)rndn(3) : 0;
	if (s + ne + nlate + 1 > SLOTS)
		nlate = SLOTS - 1 - s - ne;
	for (int j = 0; j < ne; j++, s++) {
		for (int tries = 0;; tries++) {
			gen_legal(i, &r->a[s], s, false);
			if ((inflight & INFL_FENCE) || !behind_read(r, s))
				break;
			if (tries == 8) {   /* give up: a Read */
				r->a[s].op = OP_READ;
				break;
			}
		}
		apply_legal(i, &r->a[s]);
	}
	for (int j = 0; j < nlate; j++, s++) {
		gen_legal(i, &r->a[s], s, false);
		if (!(inflight & INFL_READS) && r->a[s].op != OP_WRITE) {
			/* a Write instead, same region kind */
			struct region *rg = &pr[i].r[rndn(2) ? G_RW : G_WO];
			r->a[s].op = OP_WRITE;
			r->a[s].reg = rg == &pr[i].r[G_RW] ? G_RW : G_WO;
			r->a[s].rkey = rg->mr->rkey;
			r->a[s].len = rnd_len(rg->len);
			r->a[s].va = (uintptr_t)rg->p + rndn(rg->len - r->a[s].len + 1);
		}
		r->a[s].late = true;
		apply_legal(i, &r->a[s]);
	}
	if (r->attack) {
		atk.slot = s;
		if (k == K_MW_LINV || k == K_MW_SINV) {
			atk.rkey = p->mw_rkey;
			if (atk.len > p->mw_len)
				atk.len = p->mw_len;
			atk.va = p->mw_va + rndn(p->mw_len - atk.len + 1);
		}
		r->a[s++] = atk;
		if (atk.op == OP_WRITE)
			fill(p->src + (size_t)atk.slot * MAXLEN, atk.len, rnd());
	}
	r->n = s;
	/* a Write or atomic behind a Read or atomic of the same phase may
	 * overtake it at the responder (IBA: that is what the Fence is for) */
	bool rd[2] = { false, false };
	for (int j = 0; j < r->n; j++) {
		struct att *a = &r->a[j];
		int ph = a->kind != K_LEGAL || a->late;
		if (a->op != OP_READ && rd[ph])
			a->fence = true;
		if (a->op == OP_READ || a->op == OP_FADD || a->op == OP_CSWP)
			rd[ph] = true;
	}
}

static void dump_pair(unsigned i)
{
	for (int j = 0; j < rp[i].n; j++) {
		struct att *a = &rp[i].a[j];
		int g = -1;
		for (int k = 0; k < G_N; k++)
			if (a->va >= (uintptr_t)pr[i].r[k].p &&
			    a->va < (uintptr_t)pr[i].r[k].p + pr[i].r[k].len)
				g = k;
		fprintf(stderr, "    round %" PRIu64 " pair %u slot %d: %s %s%s%s rkey %#x va %#" PRIx64
			" (%s+%ld) len %u\n", round_no, i, j, kind_name[a->kind], op_name[a->op],
			a->late ? " late" : "", a->fence ? " fence" : "", a->rkey, a->va,
			g >= 0 ? reg_name[g] : "-", g >= 0 ? (long)(a->va - (uintptr_t)pr[i].r[g].p) : 0L,
			a->len);
	}
}

/* Everything the round expects in memory, after it. */
static void check_memory(void)
{
	/* iWARP: the in-bounds prefix of an out-of-bounds Write may be placed
	 * (each DDP segment is checked alone); take it into the shadow after
	 * checking it is a prefix of the Write's data */
	for (unsigned i = 0; i < P; i++) {
		struct round_pair *r = &rp[i];
		if (!r->attack)
			continue;
		struct att *a = &r->a[r->n - 1];
		if (a->op != OP_WRITE || a->fault != FT_BOUNDS)
			continue;
		struct region *rg = &pr[i].r[a->reg];
		uint64_t base = (uintptr_t)rg->p, end = base + rg->len;
		if (a->va < base || a->va >= end)
			continue;
		uint64_t oe = a->va + a->len < end ? a->va + a->len : end;
		size_t off = a->va - (uintptr_t)bufB, n = oe - a->va;
		const uint8_t *src = pr[i].src + (size_t)a->slot * MAXLEN;
		long last = -1;
		for (size_t j = n; j-- > 0;)
			if (bufB[off + j] != shadow[off + j]) {
				last = (long)j;
				break;
			}
		if (last < 0)
			continue;
		CHECK(tr == IW, "pair %u: a refused Write (bounds, va %#" PRIx64 " len %u) placed "
		      "bytes in region %s (byte %ld changed)", i, a->va, a->len, reg_name[a->reg], last);
		CHECK_DATA(bufB + off, src, (size_t)last + 1, "in-bounds prefix of a refused Write");
		memcpy(shadow + off, src, (size_t)last + 1);
		T.partial_bytes += (uint64_t)last + 1;
	}
	if (memcmp(bufB, shadow, lenB) != 0) {
		long d = first_diff(bufB, shadow, lenB);
		/* name where it is */
		const char *where = "outside every kit";
		unsigned wi = 0;
		int wg = -1;
		for (unsigned i = 0; i < P; i++)
			for (int g = 0; g < G_N; g++) {
				uint8_t *q = bufB + d;
				if (q >= pr[i].r[g].p - CANARY && q < pr[i].r[g].p + pr[i].r[g].len + CANARY) {
					wi = i;
					wg = g;
				}
			}
		if (wg >= 0) {
			uint8_t *q = bufB + d;
			where = q < pr[wi].r[wg].p ? "the canary below" :
				q >= pr[wi].r[wg].p + pr[wi].r[wg].len ? "the canary above" : "inside";
		}
		fprintf(stderr, "  round %" PRIu64 ": pair %u region %s: %s, offset %ld, byte 0x%02x "
			"expected 0x%02x\n", round_no, wi, wg >= 0 ? reg_name[wg] : "-", where,
			wg >= 0 ? (long)(bufB + d - pr[wi].r[wg].p) : d, bufB[d], shadow[d]);
		for (unsigned i = 0; i < P; i++)
			for (int j = 0; j < rp[i].n; j++) {
				struct att *a = &rp[i].a[j];
				fprintf(stderr, "    pair %u slot %d: %s %s rkey %#x va %#" PRIx64
					" len %u\n", i, j, kind_name[a->kind], op_name[a->op], a->rkey,
					a->va, a->len);
			}
		CHECK(false, "B's memory differs from what the legal operations wrote");
	}
	/* sinks: legal Reads exact, refused ones untouched; atomics */
	for (unsigned i = 0; i < P; i++) {
		struct round_pair *r = &rp[i];
		for (int j = 0; j < r->n; j++) {
			struct att *a = &r->a[j];
			uint8_t *sk = sink_of(&pr[i], a->slot);
			if (a->op == OP_READ) {
				bool ok = a->kind == K_LEGAL ?
					  memcmp(sk, expect_of(i, a->slot), a->len) == 0 :
					  first_not(sk, a->len, GUARD) < 0;
				if (!ok && a->kind == K_LEGAL) {
					dump_pair(i);
					CHECK_DATA(sk, expect_of(i, a->slot), a->len, "a legal Read's sink");
				} else if (!ok) {
					dump_pair(i);
					CHECK_UNTOUCHED(sk, a->len, GUARD, "a refused Read's sink");
				}
				CHECK_UNTOUCHED(sk - 4096, 4096, GUARD, "below a Read sink");
				CHECK_UNTOUCHED(sk + a->len, 4096, GUARD, "above a Read sink");
				memset(sk, GUARD, a->len);
			} else if (a->op == OP_FADD || a->op == OP_CSWP) {
				if (a->kind == K_LEGAL)
					CHECK(*(uint64_t *)(void *)sink_of(&pr[i], a->slot) == a->expect_atom, "pair %u: %s returned "
					      "%#" PRIx64 ", expected %#" PRIx64, i, op_name[a->op],
					      *(uint64_t *)(void *)sink_of(&pr[i], a->slot), a->expect_atom);
				else
					CHECK(*(uint64_t *)(void *)sink_of(&pr[i], a->slot) == 0x5a5a5a5a5a5a5a5aull, "pair %u: a "
					      "refused %s wrote its result buffer", i, op_name[a->op]);
				memset(sk, GUARD, 8);
			}
		}
	}
}

/* The tap's events of the round, matched to the attacks. */
static void check_wire(void)
{
	uint64_t w = __atomic_load_n(&tap_w, __ATOMIC_ACQUIRE);
	bool seen[P_MAX] = { false };
	uint32_t seen_seq[P_MAX] = { 0 };
	for (; tap_r < w; __atomic_store_n(&tap_r, tap_r + 1, __ATOMIC_RELEASE)) {
		struct tap_ev e = tap_log[tap_r % TAP_LOG];
		unsigned i;
		for (i = 0; i < P; i++)
			if (tr == ROCE ? e.key == pr[i].qa->qp_num : e.key == pr[i].a_port)
				break;
		CHECK(i < P && rp[i].attack && e.term == (tr == IW), "round %" PRIu64 ": a %s "
		      "(%u/%u/%#x) to %u, which made no attack", round_no, e.term ? "Terminate" : "NAK",
		      e.layer, e.etype, e.code, e.key);
		if (seen[i] && e.term && e.seq == seen_seq[i])
			continue;   /* a TCP retransmission of the same Terminate */
		struct att *a = &rp[i].a[rp[i].n - 1];
		CHECK(!seen[i], "pair %u: two %ss for one attack (%s %s)", i,
		      e.term ? "Terminate" : "NAK", kind_name[a->kind], op_name[a->op]);
		seen[i] = true;
		seen_seq[i] = e.seq;
		if (tr == ROCE) {
			int want = roce_expect_nak(a->fault);
			if (e.code != want)
				dump_pair(i);
			CHECK(e.code == want, "pair %u: %s %s (%s): NAK code %u, expected %d (rkey %#x "
			      "va %#" PRIx64 " len %u)", i, kind_name[a->kind], op_name[a->op],
			      fault_name[a->fault], e.code, want, a->rkey, a->va, a->len);
			T.codes[0][0][e.code]++;
		} else {
			uint8_t l, t, c;
			iw_expect(a->op, a->fault, &l, &t, &c);
			if (!(e.layer == l && e.etype == t && e.code == c))
				dump_pair(i);
			CHECK(e.layer == l && e.etype == t && e.code == c, "pair %u: %s %s (%s): "
			      "Terminate layer %u etype %u code %#x, expected %u/%u/%#x (rkey %#x va %#"
			      PRIx64 " len %u)", i, kind_name[a->kind], op_name[a->op],
			      fault_name[a->fault], e.layer, e.etype, e.code, l, t, c, a->rkey, a->va,
			      a->len);
			T.codes[e.layer & 3][e.etype & 15][e.code]++;
		}
	}
	for (unsigned i = 0; i < P; i++)
		if (rp[i].attack) {
			struct att *a = &rp[i].a[rp[i].n - 1];
			CHECK(seen[i], "pair %u: no %s on the wire for %s %s (%s) rkey %#x va %#" PRIx64
			      " len %u", i, tr == ROCE ? "NAK" : "Terminate", kind_name[a->kind],
			      op_name[a->op], fault_name[a->fault], a->rkey, a->va, a->len);
		}
}

static void run_round(uint64_t *attacks_left)
{
	const int full = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	round_no++;
	T.rounds++;
	double ph[16];
	int nph = 0;
	ph[nph++] = now_s();
	/* connections: iWARP through the CM; RoCE out of band, and a new RoCE
	 * connection may lack one right on B's QP (its attack then uses it) */
	if (tr == IW) {
		bool want[P_MAX];
		for (unsigned i = 0; i < P; i++)
			want[i] = true;
		iw_connect_all(want);
		ph[nph++] = now_s();
	} else {
		for (unsigned i = 0; i < P; i++) {
			struct pair *p = &pr[i];
			if (p->connected)
				continue;
			p->qp_access = full;
			if (*attacks_left > 0 && rndn(10) == 0) {
				static const int drop[3] = { IBV_ACCESS_REMOTE_WRITE,
							     IBV_ACCESS_REMOTE_READ,
							     IBV_ACCESS_REMOTE_ATOMIC };
				p->qp_access &= ~drop[rndn(3)];
			}
			roce_connect(i);
		}
	}
	for (unsigned i = 0; i < P; i++) {
		struct pair *p = &pr[i];
		struct round_pair *r = &rp[i];
		if (tr == ROCE && p->qp_access != full) {
			memset(r, 0, sizeof(*r));
			if (*attacks_left == 0)
				continue;   /* nothing on this connection */
			r->attack = true;
			(*attacks_left)--;
			struct att *a = &r->a[0];
			gen_attack(i, a, 0, K_QP_RIGHT);
			int missing = full & ~p->qp_access;
			a->op = missing == IBV_ACCESS_REMOTE_WRITE ? OP_WRITE :
				missing == IBV_ACCESS_REMOTE_READ ? OP_READ : (rndn(2) ? OP_FADD : OP_CSWP);
			struct region *rg = &p->r[G_RW];
			if (a->op == OP_FADD || a->op == OP_CSWP) {
				a->len = 8;
				a->va = (uintptr_t)rg->p + 8 * rndn(rg->len / 8);
			} else {
				a->len = rnd_len(rg->len);
				a->va = (uintptr_t)rg->p + rndn(rg->len - a->len + 1);
				if (a->op == OP_WRITE)
					fill(p->src, a->len, rnd());
			}
			r->n = 1;
			continue;
		}
		plan_pair(i, attacks_left);
	}
	ph[nph++] = now_s();
	/* B: dead STags, LOCAL_INV of the windows (after their legal op),
	 * receives for Send with Invalidate */
	for (unsigned i = 0; i < P; i++) {
		struct round_pair *r = &rp[i];
		struct pair *p = &pr[i];
		if (r->dereg) {
			struct region *rg = &p->r[G_DEAD];
			struct ibv_mr *mr = rnic_reg_mr(pdB, rg->p, rg->len, LW | ALL_R);
			CHECK(mr != NULL, "reg_mr(DEAD): %s", strerror(errno));
			p->dead_stag = mr->rkey;
			CHECK_RC(rnic_dereg_mr(mr), 0);
			r->a[r->n - 1].rkey = p->dead_stag;
		}
		if (r->sinv) {
			struct ibv_sge s = { (uintptr_t)(bufR + i * 64), 64, mrR->lkey };
			struct ibv_recv_wr rw = { .wr_id = wr_id_of(i, 63), .sg_list = &s, .num_sge = 1 },
					   *bad;
			CHECK_RC(ibv_post_recv(p->qb, &rw, &bad), 0);
		}
	}
	ph[nph++] = now_s();
	/* phase 1: the early legal ops (window ops, Sends with Invalidate
	 * included), completed; then B invalidates the LOCAL_INV windows */
	int n1 = 0;
	for (unsigned i = 0; i < P; i++)
		for (int j = 0; j < rp[i].n; j++)
			if (rp[i].a[j].kind == K_LEGAL && !rp[i].a[j].late) {
				post_att(i, &rp[i].a[j]);
				n1++;
			}
	if (n1) {
		struct ibv_wc wc[P_MAX * SLOTS];
		wait_n(cqA, wc, n1, "A's early legal ops");
		for (int k = 0; k < n1; k++) {
			unsigned i = (unsigned)(wc[k].wr_id >> 8) & 0xff;
			struct att *a = &rp[i].a[wc[k].wr_id & 0xff];
			CHECK(wc[k].status == IBV_WC_SUCCESS, "pair %u: legal %s (rkey %#x va %#" PRIx64
			      " len %u%s) completed with %s", i, op_name[a->op], a->rkey, a->va, a->len,
			      a->window ? ", window" : "", rnic_wc_status_str(wc[k].status));
		}
	}
	ph[nph++] = now_s();
	{
		/* iWARP: a Write completes when sent; placed once B has
		 * handled everything on the link */
		if (tr == IW && n1)
			drain();
		for (unsigned i = 0; i < P; i++)
			if (rp[i].linv) {
				struct ibv_send_wr li = { .opcode = IBV_WR_LOCAL_INV,
							  .invalidate_rkey = pr[i].mw_rkey };
				b_post_wait(i, &li, "local invalidate");
				pr[i].mw_valid = false;
			}
	}
	ph[nph++] = now_s();
	/* the attacker's work */
	int na = 0, nb = 0;
	for (unsigned i = 0; i < P; i++) {
		struct round_pair *r = &rp[i];
		for (int j = 0; j < r->n; j++) {
			if (r->a[j].kind == K_LEGAL && !r->a[j].late)
				continue;
			post_att(i, &r->a[j]);
			na++;
		}
		if (r->sinv)
			nb++;
		if (r->attack)
			T.kind[r->a[r->n - 1].kind]++, T.fault[r->a[r->n - 1].fault]++;
	}
	struct ibv_wc wca[P_MAX * SLOTS], *wcb = b_recv;
	double tw0 = now_s();
	wait_n(cqA, wca, na, "A's completions");
	if (now_s() - tw0 > 0.5 && getenv("RNIC_ATTACK_SLOW"))
		for (int k = 0; k < na; k++) {
			unsigned i = (unsigned)(wca[k].wr_id >> 8) & 0xff;
			struct att *a = &rp[i].a[wca[k].wr_id & 0xff];
			fprintf(stderr, "  completion %d: pair %u %s %s len %u %s\n", k, i,
				kind_name[a->kind], op_name[a->op], a->len,
				rnic_wc_status_str(wca[k].status));
		}
	if (nb > n_b_recv)
		wait_n(cqB, b_recv + n_b_recv, nb - n_b_recv, "B's receives");
	n_b_recv = 0;
	for (int k = 0; k < nb; k++) {
		unsigned i = (unsigned)(wcb[k].wr_id >> 8) & 0xff;
		CHECK(i < P && rp[i].sinv && wcb[k].status == IBV_WC_SUCCESS &&
		      (wcb[k].wc_flags & IBV_WC_WITH_INV) && wcb[k].invalidated_rkey == pr[i].mw_rkey,
		      "B's receive of a Send with Invalidate: pair %u status %s flags %#x rkey %#x "
		      "(window %#x)", i, rnic_wc_status_str(wcb[k].status), wcb[k].wc_flags,
		      wcb[k].invalidated_rkey, i < P ? pr[i].mw_rkey : 0);
		pr[i].mw_valid = false;
	}
	for (int k = 0; k < na; k++) {
		struct ibv_wc *w = &wca[k];
		CHECK((w->wr_id >> 16) == round_no, "A: a completion of round %" PRIu64 " in round %"
		      PRIu64, w->wr_id >> 16, round_no);
		unsigned i = (unsigned)(w->wr_id >> 8) & 0xff;
		int j = (int)(w->wr_id & 0xff);
		struct att *a = &rp[i].a[j];
		if (a->kind == K_LEGAL) {
			CHECK(w->status == IBV_WC_SUCCESS, "pair %u: legal %s (rkey %#x va %#" PRIx64
			      " len %u%s) completed with %s", i, op_name[a->op], a->rkey, a->va, a->len,
			      a->window ? ", window" : "", rnic_wc_status_str(w->status));
			continue;
		}
		T.status[w->status & 31]++;
		if (tr == ROCE) {
			enum ibv_wc_status want = a->fault == FT_QP_ACCESS ? IBV_WC_REM_INV_REQ_ERR
									 : IBV_WC_REM_ACCESS_ERR;
			CHECK(w->status == want, "pair %u: %s %s (%s) completed with %s, expected %s", i,
			      kind_name[a->kind], op_name[a->op], fault_name[a->fault],
			      rnic_wc_status_str(w->status), rnic_wc_status_str(want));
		} else {
			CHECK(a->op == OP_WRITE ? (w->status == IBV_WC_SUCCESS ||
						   w->status == IBV_WC_WR_FLUSH_ERR)
						: w->status != IBV_WC_SUCCESS,
			      "pair %u: %s %s (%s) completed with %s", i, kind_name[a->kind],
			      op_name[a->op], fault_name[a->fault], rnic_wc_status_str(w->status));
		}
	}
	ph[nph++] = now_s();
	if (tr == IW)
		iw_teardown();
	ph[nph++] = now_s();
	drain();
	ph[nph++] = now_s();
	if (ph[nph - 1] - ph[0] > 0.5 && getenv("RNIC_ATTACK_SLOW")) {
		fprintf(stderr, "  slow round %" PRIu64 ":", round_no);
		for (int k = 1; k < nph; k++)
			fprintf(stderr, " %.3f", ph[k] - ph[k - 1]);
		fprintf(stderr, "\n");
	}
	check_wire();
	check_memory();
	for (unsigned i = 0; i < P; i++)
		if (rp[i].attack && tr == ROCE)
			pr[i].connected = false;
	struct ibv_wc extra;
	CHECK(ibv_poll_cq(cqA, 1, &extra) == 0, "A: an extra completion (wr_id %#" PRIx64 " %s)",
	      extra.wr_id, rnic_wc_status_str(extra.status));
	CHECK(ibv_poll_cq(cqB, 1, &extra) == 0, "B: an extra completion (wr_id %#" PRIx64 " %s)",
	      extra.wr_id, rnic_wc_status_str(extra.status));
}

/* --- set-up and the two runs ------------------------------------------------------ */

static void kits_init(void)
{
	uint8_t *q = bufB;
	for (unsigned i = 0; i < P; i++) {
		struct pair *p = &pr[i];
		memcpy(q, canary_pat, CANARY);
		q += CANARY;
		for (int g = 0; g < G_N; g++) {
			struct region *rg = &p->r[g];
			rg->p = q;
			rg->len = reg_len[g];
			fill(q, rg->len, 0xb0b0000ull + i * 16 + (unsigned)g);
			q += rg->len;
			memcpy(q, canary_pat, CANARY);
			q += CANARY;
		}
	}
	CHECK((size_t)(q - bufB) <= lenB, "kits overflow B's buffer");
	memcpy(shadow, bufB, lenB);
	for (unsigned i = 0; i < P; i++) {
		struct pair *p = &pr[i];
		for (int g = 0; g < G_N; g++) {
			if (g == G_DEAD)
				continue;
			struct region *rg = &p->r[g];
			rg->mr = rnic_reg_mr(g == G_OPD ? pdB2 : pdB, rg->p, rg->len, reg_acc[g]);
			CHECK(rg->mr != NULL, "reg_mr(%s): %s", reg_name[g], strerror(errno));
		}
		p->mw = ibv_alloc_mw(pdB, IBV_MW_TYPE_2);
		CHECK(p->mw != NULL, "ibv_alloc_mw(type 2): %s", strerror(errno));
		p->src = bufA + (size_t)i * (SLOTS * MAXLEN + SLOTS * SINK_STRIDE);
		p->sink = p->src + SLOTS * MAXLEN;
		memset(p->sink, GUARD, SLOTS * SINK_STRIDE);
	}
}

static void pairs_create(void)
{
	for (unsigned i = 0; i < P; i++) {
		struct ibv_qp_init_attr qa = {
			.send_cq = cqA, .recv_cq = cqA, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 32, .max_recv_wr = 4, .max_send_sge = 1,
				 .max_recv_sge = 1 } };
		struct ibv_qp_init_attr qb = qa;
		qb.send_cq = qb.recv_cq = cqB;
		pr[i].qa = tr == ROCE ? rnic_create_qp_transport(pdA, &qa, RNIC_TRANSPORT_ROCE)
				      : rnic_create_qp_transport(pdA, &qa, RNIC_TRANSPORT_IWARP);
		pr[i].qb = tr == ROCE ? rnic_create_qp_transport(pdB, &qb, RNIC_TRANSPORT_ROCE)
				      : rnic_create_qp_transport(pdB, &qb, RNIC_TRANSPORT_IWARP);
		if ((pr[i].qa == NULL || pr[i].qb == NULL) && errno == EOPNOTSUPP)
			skip_case("QPs of this transport cannot be created (EOPNOTSUPP)");
		CHECK(pr[i].qa && pr[i].qb, "create_qp: %s", strerror(errno));
		pr[i].connected = false;
	}
}

/* Free the pairs' QPs and ids (kits stay). @return false on a failure. */
static bool pairs_destroy(void)
{
	bool ok = true;
	for (unsigned i = 0; i < P; i++) {
		struct pair *p = &pr[i];
		if (p->ida)
			ok &= rnic_cm_destroy_id(p->ida) == 0;
		if (p->idb)
			ok &= rnic_cm_destroy_id(p->idb) == 0;
		p->ida = p->idb = NULL;
		if (p->qa)
			ok &= rnic_destroy_qp(p->qa) == 0;
		if (p->qb)
			ok &= rnic_destroy_qp(p->qb) == 0;
		p->qa = p->qb = NULL;
		p->connected = false;
		p->mw_valid = false;
	}
	struct ibv_wc wc[64];
	while (ibv_poll_cq(cqA, 64, wc) > 0)
		;
	while (ibv_poll_cq(cqB, 64, wc) > 0)
		;
	return ok;
}

static uint64_t roce_ctr(const char *name)
{
	uint64_t v = 0;
	CHECK_RC(rnic_roce_counter(K.st[1], name, &v), 0);
	return v;
}

static const char *const roce_ctrs[] = { "naks_access_out", "naks_inv_out", "naks_op_out",
					 "naks_seq_out", "rnr_naks_out", "naks_in", "retransmits" };
#define N_RCTR RTE_DIM(roce_ctrs)

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);
	return s && *s ? strtoull(s, NULL, 0) : def;
}

static void print_summary(const char *name, uint64_t attacks, double secs)
{
	uint64_t legal = 0;
	for (int o = 0; o < 5; o++)
		legal += T.legal_ops[o];
	printf("%s: %" PRIu64 " attacks + %" PRIu64 " legal ops in %.2f s (%.1f us per attack, "
	       "%" PRIu64 " rounds, %" PRIu64 " connections)\n", name, attacks, legal, secs,
	       attacks ? secs * 1e6 / (double)attacks : 0.0, T.rounds, T.reconnects);
	printf("  (a)");
	for (int k = K_RAND_STAG; k <= K_WRAP; k++)
		printf(" %s %" PRIu64, kind_name[k], T.kind[k]);
	printf("\n  (b)");
	for (int k = K_WRONG_PD; k <= K_QP_RIGHT; k++)
		printf(" %s %" PRIu64, kind_name[k], T.kind[k]);
	printf("\n  (c)");
	for (int k = K_MW_LINV; k <= K_DEREG; k++)
		printf(" %s %" PRIu64, kind_name[k], T.kind[k]);
	printf("\n  faults:");
	for (int f = 1; f < FT_N; f++)
		printf(" %s %" PRIu64, fault_name[f], T.fault[f]);
	T.legal_ops[OP_SEND_INV] = T.kind[K_MW_SINV];
	printf("\n  legal: Write %" PRIu64 " Read %" PRIu64 " FetchAdd %" PRIu64 " CmpSwap %"
	       PRIu64 " SendInv %" PRIu64 ", %" PRIu64 " bytes\n", T.legal_ops[0], T.legal_ops[1],
	       T.legal_ops[2], T.legal_ops[3], T.legal_ops[4], T.legal_bytes);
	printf("  %s seen by the attacker:", tr == ROCE ? "NAK codes" : "Terminates (layer/etype/code)");
	for (int l = 0; l < 3; l++)
		for (int t = 0; t < 16; t++)
			for (int c = 0; c < 256; c++)
				if (T.codes[l][t][c]) {
					if (tr == ROCE)
						printf(" %s(%d) %" PRIu64, c == 1 ? "invalid_request" :
						       c == 2 ? "remote_access" : "other", c, T.codes[l][t][c]);
					else
						printf(" %s/%d/%#x %" PRIu64, l == 0 ? "RDMAP" : l == 1 ?
						       "DDP" : "MPA", t, c, T.codes[l][t][c]);
				}
	printf("\n  attacker's WC status:");
	for (int s = 0; s < 32; s++)
		if (T.status[s])
			printf(" %s %" PRIu64, rnic_wc_status_str((enum ibv_wc_status)s), T.status[s]);
	printf("\n");
	if (tr == IW)
		printf("  in-bounds prefixes of out-of-bounds Writes placed: %" PRIu64 " bytes\n",
		       T.partial_bytes);
}

static uint64_t n_attacks(void)
{
	return tr == ROCE ? env_u64("RNIC_ATTACK_N", 30000) : env_u64("RNIC_ATTACK_N_IWARP", 1500);
}

static void run_transport(void)
{
	memset(&T, 0, sizeof(T));
	P = tr == ROCE ? (unsigned)env_u64("RNIC_ATTACK_PAIRS", 32)
		       : (unsigned)env_u64("RNIC_ATTACK_PAIRS_IWARP", 8);
	if (P < 1 || P > P_MAX)
		P = P_MAX;
	pairs_create();
	if (tr == IW) {
		CHECK_RC(rnic_cm_create_id(cmB, NULL, &listener), 0);
		CHECK_RC(rnic_cm_listen(listener, ++listen_port, 64), 0);
	}
	uint64_t want = n_attacks(), left = want;
	uint64_t c0[N_RCTR], c1[N_RCTR];
	struct rnic_qp_stats qs;
	uint64_t tout0 = 0, tin0 = 0;
	if (tr == ROCE)
		for (unsigned k = 0; k < N_RCTR; k++)
			c0[k] = roce_ctr(roce_ctrs[k]);
	uint64_t naks0 = tap_naks, terms0 = tap_terms;
	double t0 = now_s(), tp = t0;
	/* iWARP: B's terminates_out, summed over the QPs (they keep counting
	 * across connections) */
	for (unsigned i = 0; i < P; i++) {
		rnic_qp_stats(pr[i].qb, &qs);
		tout0 += qs.terminates_out;
		rnic_qp_stats(pr[i].qa, &qs);
		tin0 += qs.terminates_in;
	}
	/* the CI default stops early on a slow (shared) machine; an explicit
	 * RNIC_ATTACK_N / RNIC_ATTACK_N_IWARP runs every attack */
	const char *nv = getenv(tr == ROCE ? "RNIC_ATTACK_N" : "RNIC_ATTACK_N_IWARP");
	double cap = env_u64("RNIC_ATTACK_TIME_S", nv && *nv ? 0 : tr == ROCE ? 10 : 8);
	bool capped = false;
	while (left > 0) {
		if (cap > 0 && now_s() - t0 > cap) {
			capped = true;
			printf("  time cap %.0f s (RNIC_ATTACK_TIME_S) reached after %" PRIu64 " of %"
			       PRIu64 " attacks\n", cap, want - left, want);
			want -= left;
			left = 0;
			break;
		}
		run_round(&left);
		if (now_s() - tp > 10) {
			tp = now_s();
			printf("  ... %" PRIu64 " of %" PRIu64 " attacks, %.0f s\n", want - left, want,
			       tp - t0);
		}
	}
	/* the last legal-only connections: nothing outstanding */
	drain();
	double secs = now_s() - t0;
	uint64_t attacks = 0;
	for (int k = 1; k < K_N; k++)
		attacks += T.kind[k];
	CHECK(attacks == want, "%" PRIu64 " attacks made, %" PRIu64 " asked", attacks, want);
	uint64_t by_nak[3] = { 0 };
	for (int f = 1; f < FT_N; f++)
		by_nak[f == FT_QP_ACCESS ? 1 : 2] += T.fault[f];
	if (tr == ROCE) {
		for (unsigned k = 0; k < N_RCTR; k++)
			c1[k] = roce_ctr(roce_ctrs[k]) - c0[k];
		printf("  B's counters:");
		for (unsigned k = 0; k < N_RCTR; k++)
			printf(" %s +%" PRIu64, roce_ctrs[k], c1[k]);
		printf("\n");
		CHECK(c1[0] == by_nak[2], "naks_access_out +%" PRIu64 ", %" PRIu64 " attacks with "
		      "STag faults", c1[0], by_nak[2]);
		CHECK(c1[1] == by_nak[1], "naks_inv_out +%" PRIu64 ", %" PRIu64 " attacks on the "
		      "QP's rights", c1[1], by_nak[1]);
		CHECK(c1[2] == 0 && c1[3] == 0 && c1[4] == 0, "other NAKs sent: op %" PRIu64 " seq %"
		      PRIu64 " rnr %" PRIu64, c1[2], c1[3], c1[4]);
		CHECK(tap_naks - naks0 == attacks, "%" PRIu64 " NAKs on the wire for %" PRIu64
		      " attacks", tap_naks - naks0, attacks);
	} else {
		uint64_t tout = 0, tin = 0;
		for (unsigned i = 0; i < P; i++) {
			rnic_qp_stats(pr[i].qb, &qs);
			tout += qs.terminates_out;
			rnic_qp_stats(pr[i].qa, &qs);
			tin += qs.terminates_in;
		}
		printf("  B's terminates_out +%" PRIu64 ", A's terminates_in +%" PRIu64 ", Terminate "
		       "segments on the wire %" PRIu64 "\n", tout - tout0, tin - tin0, tap_terms - terms0);
		CHECK(tout - tout0 == attacks, "B's terminates_out +%" PRIu64 " for %" PRIu64
		      " attacks", tout - tout0, attacks);
		CHECK(tin - tin0 == attacks, "A's terminates_in +%" PRIu64 " for %" PRIu64
		      " attacks", tin - tin0, attacks);
	}
	print_summary(tr == ROCE ? "roce" : "iwarp", attacks, secs);
	if (capped)
		printf("  (stopped by the time cap)\n");
}

static bool case_cleanup(void)
{
	if (listener) {
		rnic_cm_destroy_id(listener);
		listener = NULL;
	}
	/* ids first (they hold QPs), then QPs */
	return pairs_destroy();
}

static bool kits_fini(void)
{
	bool ok = true;
	for (unsigned i = 0; i < P_MAX; i++) {
		struct pair *p = &pr[i];
		if (p->mw)
			ok &= ibv_dealloc_mw(p->mw) == 0;
		p->mw = NULL;
		for (int g = 0; g < G_N; g++)
			if (p->r[g].mr) {
				ok &= rnic_dereg_mr(p->r[g].mr) == 0;
				p->r[g].mr = NULL;
			}
	}
	return ok;
}

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	setvbuf(stdout, NULL, _IOLBF, 0);
	uint64_t seed = env_u64("RNIC_ATTACK_SEED", 0x8a77ac4ull);
	inflight = (unsigned)env_u64("RNIC_ATTACK_INFLIGHT", 7);
	rng_s = seed;
	printf("seed %#" PRIx64 " (RNIC_ATTACK_SEED), RoCE attacks %" PRIu64 " (RNIC_ATTACK_N), "
	       "iWARP attacks %" PRIu64 " (RNIC_ATTACK_N_IWARP)\n", seed,
	       env_u64("RNIC_ATTACK_N", 30000), env_u64("RNIC_ATTACK_N_IWARP", 1500));
	struct rnic_config c;
	struct tpair *pairs[] = { &K };
	if (tpair_init(argv[0], &c, 2, pairs, 1) != 0)
		return 1;
	if (tpair_up(&K, &c) != 0) {
		fprintf(stderr, "stacks: %s\n", K.why);
		return 1;
	}
	pthread_t tap;
	if (pthread_create(&tap, NULL, tap_main, NULL) != 0) {
		fprintf(stderr, "tap thread\n");
		return 1;
	}
	lenB = (size_t)P_MAX * (G_N + 1) * CANARY;
	for (int g = 0; g < G_N; g++)
		lenB += (size_t)P_MAX * reg_len[g];
	lenA = (size_t)P_MAX * (SLOTS * MAXLEN + SLOTS * SINK_STRIDE);
	bufA = aligned_alloc(4096, lenA);
	bufB = aligned_alloc(4096, lenB);
	shadow = malloc(lenB);
	bufR = aligned_alloc(4096, 64 * P_MAX);
	expect_buf = malloc((size_t)P_MAX * SLOTS * MAXLEN);
	if (!K.ctx[0] || !K.ctx[1] || !bufA || !bufB || !shadow || !bufR || !expect_buf) {
		fprintf(stderr, "devices/buffers\n");
		return 1;
	}
	for (unsigned k = 0; k < CANARY; k++)
		canary_pat[k] = (uint8_t)(0xc5 ^ (k * 29u) ^ (k >> 8));
	struct rnic_stack_stats ss;
	uint64_t base_a = 0, base_b = 0;
	/* objects shared by both runs */
	case_name = "setup";
	int r = setjmp(case_jmp);
	if (r == 0) {
		pdA = rnic_alloc_pd(K.ctx[0]);
		pdB = rnic_alloc_pd(K.ctx[1]);
		pdB2 = rnic_alloc_pd(K.ctx[1]);
		CHECK(pdA && pdB && pdB2, "alloc_pd: %s", strerror(errno));
		cqA = rnic_create_cq(K.ctx[0], 4096, NULL, NULL, 0);
		cqB = rnic_create_cq(K.ctx[1], 4096, NULL, NULL, 0);
		CHECK(cqA && cqB, "create_cq: %s", strerror(errno));
		mrA = rnic_reg_mr(pdA, bufA, lenA, LW);
		mrR = rnic_reg_mr(pdB, bufR, 64 * P_MAX, LW);
		CHECK(mrA && mrR, "reg_mr: %s", strerror(errno));
		cmA = rnic_cm_create_channel(K.ctx[0]);
		cmB = rnic_cm_create_channel(K.ctx[1]);
		CHECK(cmA && cmB, "cm channels: %s", strerror(errno));
		P = P_MAX;
		kits_init();
		usleep(100000);
		drain();
		rnic_stack_stats(K.st[0], &ss);
		base_a = ss.mbufs_in_use;
		rnic_stack_stats(K.st[1], &ss);
		base_b = ss.mbufs_in_use;
	} else {
		n_fail++;
	}
	double t0 = now_s();
	if (r == 0) {
		static const struct { const char *name; enum tr t; } cases[] = {
			{ "roce_attack", ROCE }, { "iwarp_attack", IW } };
		for (unsigned k = 0; k < RTE_DIM(cases); k++) {
			if (only && !strstr(cases[k].name, only))
				continue;
			tr = cases[k].t;
			case_run(cases[k].name, run_transport, case_cleanup);
		}
	}
	/* the end: every canary and no-rights region (the shadow), pools */
	case_name = "teardown";
	if (setjmp(case_jmp) == 0) {
		if (r == 0) {
			P = P_MAX;
			CHECK(memcmp(bufB, shadow, lenB) == 0, "B's memory at the end differs from the "
			      "shadow (byte %ld)", first_diff(bufB, shadow, lenB));
		}
		bool ok = kits_fini();
		if (mrA) ok &= rnic_dereg_mr(mrA) == 0;
		if (mrR) ok &= rnic_dereg_mr(mrR) == 0;
		if (cqA) ok &= rnic_destroy_cq(cqA) == 0;
		if (cqB) ok &= rnic_destroy_cq(cqB) == 0;
		if (cmA) ok &= rnic_cm_destroy_channel(cmA) == 0;
		if (cmB) ok &= rnic_cm_destroy_channel(cmB) == 0;
		if (pdA) ok &= rnic_dealloc_pd(pdA) == 0;
		if (pdB) ok &= rnic_dealloc_pd(pdB) == 0;
		if (pdB2) ok &= rnic_dealloc_pd(pdB2) == 0;
		CHECK(ok, "objects could not be freed");
		for (int i = 0; i < 2; i++) {
			CHECK_RC(rnic_close_device(K.ctx[i]), 0);
			K.ctx[i] = NULL;
		}
		/* pools back to their baseline (TCP may still be closing) */
		double tw = now_s();
		uint64_t ua, ub;
		for (;;) {
			drain();
			rnic_stack_stats(K.st[0], &ss);
			ua = ss.mbufs_in_use;
			rnic_stack_stats(K.st[1], &ss);
			ub = ss.mbufs_in_use;
			if ((ua == base_a && ub == base_b) || now_s() - tw > 5)
				break;
			usleep(10000);
		}
		printf("mbufs in use: A %" PRIu64 " (baseline %" PRIu64 "), B %" PRIu64 " (baseline %"
		       PRIu64 "); tap moved %" PRIu64 " frames\n", ua, base_a, ub, base_b, tap_frames);
		CHECK(ua == base_a && ub == base_b, "mbuf pools not back to their baseline");
	} else {
		n_fail++;
	}
	tap_stop = 1;
	pthread_join(tap, NULL);
	tpair_down(&K);
	free(bufA);
	free(bufB);
	free(shadow);
	free(bufR);
	free(expect_buf);
	return case_summary("attack", now_s() - t0);
}
