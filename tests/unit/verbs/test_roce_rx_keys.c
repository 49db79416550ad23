/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 receive checks, end to end: one stack on one end of a ring pair;
 * the test is the other end and sends hand-built packets (Ethernet, IPv4,
 * UDP 4791, BTH, ..., ICRC).
 * - P_Key: UD SEND ONLY packets to a UD QP that differ only in their
 *   P_Key. A packet rnic may take completes a receive; any other is
 *   dropped and counted in rx_bad_pkey, and completes nothing (issue 19:
 *   rnic took every P_Key).
 * - AETH: an RC QP's Write is answered with an ACK whose syndrome has the
 *   reserved bit 7 set: a bad response (issue 19: rnic read 0x9f as ACK).
 * Waits are on counters, frames and completions, with a hang guard, never
 * on elapsed time.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <rte_arp.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "engine/stack.h"
#include "port/port.h"
#include "rnic/rnic.h"
#include "rnic/rnic_roce.h"
#include "rnic/rnic_verbs.h"
#include "roce/icrc.h"
#include "roce/roce_wire.h"

#define A_IP 0xc0000201u
#define B_IP 0xc0000202u
#define QKEY 0x11111111u
#define PAY 16u
#define SLOT 256u

static struct rnic_stack *st;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t buf[4 * SLOT];
static uint16_t peer;
static struct rte_mempool *pool;

static uint64_t ctr(const char *name)
{
	uint64_t v = 0;
	assert_int_equal(rnic_roce_counter(st, name, &v), 0);
	return v;
}

/* Ethernet + IPv4 + UDP 4791 from B to A around @p tlen transport bytes
 * (BTH on, ICRC included); @return the frame, its BTH at *@p bth. */
static struct rte_mbuf *roce_frame(uint16_t tlen, uint8_t **bth)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	assert_non_null(m);
	uint16_t ip_len = (uint16_t)(20 + 8 + tlen);
	uint8_t *f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(14 + ip_len));
	assert_non_null(f);
	memset(f, 0, 14u + ip_len);
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)f;
	eh->dst_addr = st->ports[0]->mac;
	eh->src_addr = (struct rte_ether_addr){ { 0x02, 0, 0, 0, 0, 0x42 } };
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eh + 1);
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(ip_len);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(B_IP);
	ip->dst_addr = rte_cpu_to_be_32(A_IP);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	struct rte_udp_hdr *uh = (struct rte_udp_hdr *)(ip + 1);
	uh->src_port = rte_cpu_to_be_16(0xc001);
	uh->dst_port = rte_cpu_to_be_16(RNIC_ROCE_UDP_PORT);
	uh->dgram_len = rte_cpu_to_be_16((uint16_t)(ip_len - 20));
	*bth = (uint8_t *)(uh + 1);
	return m;
}

/* Send one UD SEND ONLY to our QP with BTH P_Key @p pkey. */
static void send_ud(uint16_t pkey, uint8_t fill)
{
	const uint16_t tlen = RNIC_ROCE_BTH_LEN + RNIC_ROCE_DETH_LEN + PAY + 4;
	uint8_t *bth;
	struct rte_mbuf *m = roce_frame(tlen, &bth);
	bth[0] = 0x64;                       /* UD SEND ONLY */
	bth[1] = 0;                          /* SE 0, M 0, pad 0, TVer 0 */
	bth[2] = (uint8_t)(pkey >> 8);
	bth[3] = (uint8_t)pkey;
	bth[5] = (uint8_t)(qp->qp_num >> 16);
	bth[6] = (uint8_t)(qp->qp_num >> 8);
	bth[7] = (uint8_t)qp->qp_num;
	bth[11] = 1;                         /* PSN 1 */
	uint8_t *deth = bth + RNIC_ROCE_BTH_LEN;
	deth[0] = (uint8_t)(QKEY >> 24);
	deth[1] = (uint8_t)(QKEY >> 16);
	deth[2] = (uint8_t)(QKEY >> 8);
	deth[3] = (uint8_t)QKEY;
	deth[7] = 0x33;                      /* source QP 0x33 */
	memset(deth + RNIC_ROCE_DETH_LEN, fill, PAY);
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *,
							  sizeof(struct rte_ether_hdr));
	assert_int_equal(rnic_roce_icrc_generate(ip, (uint16_t)(20 + 8 + tlen)), 0);
	assert_int_equal(rte_eth_tx_burst(peer, 0, &m, 1), 1);
}

/* Wait (hang guard only) until @p name passed @p from or a completion came. */
static int wait_counter_or_wc(const char *name, uint64_t from, struct ibv_wc *wc)
{
	for (long spin = 0; spin < 20000; spin++) {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n != 0 || ctr(name) > from)
			return n;
		usleep(500);
	}
	fail_msg("neither a completion nor %s moved (hang guard, 10 s)", name);
	return -1;
}

static void post_recv(uint64_t id)
{
	struct ibv_sge s = { (uintptr_t)buf + (id % 4) * SLOT, SLOT, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1 }, *bad;
	assert_int_equal(ibv_post_recv(qp, &wr, &bad), 0);
}

static void test_pkey(void **state)
{
	(void)state;
	struct ibv_wc wc;
	static const struct { uint16_t pkey; bool taken; } t[] = {
		{ 0xffff, true },    /* the default, full member */
		{ 0x1234, false },   /* another partition, full member */
		{ 0x7fff, true },    /* the default partition, limited member */
		{ 0x0000, false },   /* partition 0 */
		{ 0x8001, false },
		{ 0xffff, true },    /* and still taken after the drops */
	};
	post_recv(1);
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t bad0 = ctr("rx_bad_pkey");
		send_ud(t[i].pkey, (uint8_t)(0x40 + i));
		int n = wait_counter_or_wc("rx_bad_pkey", bad0, &wc);
		print_message("P_Key %#06x: %s, rx_bad_pkey %llu\n", t[i].pkey,
			      n ? "completed" : "dropped", (unsigned long long)ctr("rx_bad_pkey"));
		if (t[i].taken) {
			assert_int_equal(n, 1);
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wc.byte_len, 40 + PAY);
			assert_int_equal(buf[(wc.wr_id % 4) * SLOT + 40], 0x40 + i);
			assert_int_equal(ctr("rx_bad_pkey"), bad0);
			post_recv(wc.wr_id + 1);
		} else {
			assert_int_equal(n, 0);
			assert_int_equal(ctr("rx_bad_pkey"), bad0 + 1);
		}
	}
}


static void roce_send(struct rte_mbuf *m)
{
	void *ip = rte_pktmbuf_mtod_offset(m, void *, 14);
	assert_int_equal(rnic_roce_icrc_generate(ip, rte_pktmbuf_pkt_len(m) - 14), 0);
	assert_int_equal(rte_eth_tx_burst(peer, 0, &m, 1), 1);
}

/* Play B on the wire until A sends a RoCE packet: answer A's ARP request
 * for B, skip anything else. @return the RoCE packet's PSN. */
static uint32_t peer_until_roce(void)
{
	for (long spin = 0; spin < 20000; spin++) {
		struct rte_mbuf *m;
		if (rte_eth_rx_burst(peer, 0, &m, 1) == 0) {
			usleep(500);
			continue;
		}
		struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
		if (eh->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP)) {
			struct rte_arp_hdr *a = (struct rte_arp_hdr *)(eh + 1);
			if (a->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) &&
			    a->arp_data.arp_tip == rte_cpu_to_be_32(B_IP)) {
				struct rte_ether_addr me = { { 0x02, 0, 0, 0, 0, 0x42 } };
				eh->dst_addr = a->arp_data.arp_sha;
				eh->src_addr = me;
				a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
				a->arp_data.arp_tha = a->arp_data.arp_sha;
				a->arp_data.arp_tip = a->arp_data.arp_sip;
				a->arp_data.arp_sha = me;
				a->arp_data.arp_sip = rte_cpu_to_be_32(B_IP);
				assert_int_equal(rte_eth_tx_burst(peer, 0, &m, 1), 1);
				continue;
			}
		} else if (eh->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
			struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eh + 1);
			struct rte_udp_hdr *uh = (struct rte_udp_hdr *)(ip + 1);
			if (ip->next_proto_id == IPPROTO_UDP &&
			    uh->dst_port == rte_cpu_to_be_16(RNIC_ROCE_UDP_PORT)) {
				const uint8_t *b = (const uint8_t *)(uh + 1);
				uint32_t psn = (uint32_t)b[9] << 16 | (uint32_t)b[10] << 8 | b[11];
				rte_pktmbuf_free(m);
				return psn;
			}
		}
		rte_pktmbuf_free(m);
	}
	fail_msg("A sent no RoCE packet (hang guard, 10 s)");
	return 0;
}

/* Answer @p psn with an RC ACKNOWLEDGE whose AETH syndrome is @p syn. */
static void send_ack(uint32_t dqpn, uint32_t psn, uint8_t syn)
{
	uint8_t *bth;
	struct rte_mbuf *m = roce_frame(RNIC_ROCE_BTH_LEN + RNIC_ROCE_AETH_LEN + 4, &bth);
	bth[0] = 0x11;                       /* RC ACKNOWLEDGE */
	bth[2] = 0xff;                       /* P_Key 0xffff */
	bth[3] = 0xff;
	bth[5] = (uint8_t)(dqpn >> 16);
	bth[6] = (uint8_t)(dqpn >> 8);
	bth[7] = (uint8_t)dqpn;
	bth[9] = (uint8_t)(psn >> 16);
	bth[10] = (uint8_t)(psn >> 8);
	bth[11] = (uint8_t)psn;
	uint8_t *aeth = bth + RNIC_ROCE_BTH_LEN;
	aeth[0] = syn;
	aeth[3] = 1;                         /* MSN 1 */
	roce_send(m);
}

/* An RC QP on A whose peer is the test (B_IP, QP 0x77). */
static struct ibv_qp *rc_qp(void)
{
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *q = rnic_create_qp_transport(pd, &qa, RNIC_TRANSPORT_ROCE);
	assert_non_null(q);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				  .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	assert_int_equal(rnic_modify_qp(q, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					IBV_QP_ACCESS_FLAGS), 0);
	union ibv_gid gid = { .raw = { [10] = 0xff, [11] = 0xff, [12] = 0xc0, [13] = 0x00,
				       [14] = 0x02, [15] = 0x02 } };   /* ::ffff:B_IP */
	at = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = 0x77,
		.rq_psn = 0, .max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 64 } } };
	assert_int_equal(rnic_modify_qp(q, &at, RNIC_QP_RTR_MASK), 0);
	at = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
				   .rnr_retry = 1, .sq_psn = 100, .max_rd_atomic = 1 };
	assert_int_equal(rnic_modify_qp(q, &at, RNIC_QP_RTS_MASK), 0);
	return q;
}

static struct ibv_wc rc_write_answered(struct ibv_qp *q, uint64_t id, uint8_t syn)
{
	struct ibv_sge s = { (uintptr_t)buf, 8, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	wr.wr.rdma.remote_addr = 0x1000;
	wr.wr.rdma.rkey = 0x1234;
	assert_int_equal(ibv_post_send(q, &wr, &bad), 0);
	uint32_t psn = peer_until_roce();
	send_ack(q->qp_num, psn, syn);
	struct ibv_wc wc;
	for (long spin = 0; spin < 20000; spin++) {
		if (ibv_poll_cq(cq, 1, &wc) == 1)
			return wc;
		usleep(500);
	}
	fail_msg("no completion for the Write (hang guard, 10 s)");
	return wc;
}

/* An ACK (syndrome 0x1f) completes a Write; one with the reserved bit 7
 * (0x9f: 0x1f plus bit 7) is a bad response that ends the QP, as in rxe. */
static void test_aeth_reserved_bit(void **state)
{
	(void)state;
	struct ibv_qp *q = rc_qp();
	struct ibv_wc wc = rc_write_answered(q, 21, 0x1f);
	assert_int_equal(wc.wr_id, 21);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	uint64_t bad0 = ctr("bad_syndromes");
	wc = rc_write_answered(q, 22, 0x9f);
	print_message("syndrome 0x9f: %s, bad_syndromes +%llu\n", rnic_wc_status_str(wc.status),
		      (unsigned long long)(ctr("bad_syndromes") - bad0));
	assert_int_equal(wc.wr_id, 22);
	assert_int_equal(wc.status, IBV_WC_BAD_RESP_ERR);
	assert_int_equal(ctr("bad_syndromes"), bad0 + 1);
	while (ibv_poll_cq(cq, 1, &wc) == 1)
		;
	assert_int_equal(rnic_destroy_qp(q), 0);
}

static int setup(void **state)
{
	(void)state;
	struct rnic_config c;
	struct rte_eth_conf conf = { 0 };
	rnic_config_init(&c);
	snprintf(c.eal_args[c.n_eal_args++], 128, "--no-huge");
	snprintf(c.eal_args[c.n_eal_args++], 128, "-m");
	snprintf(c.eal_args[c.n_eal_args++], 128, "256");
	if (rnic_eal_init("test_roce_rx_keys", &c, 1) != 0 || rnic_ring_pair("rk", 1) != 0)
		return -1;
	c.n_eal_args = 0;
	c.n_ports = 1;
	rnic_port_cfg_init(&c.ports[0]);
	snprintf(c.ports[0].ring, sizeof(c.ports[0].ring), "rk.a");
	c.ports[0].ip = A_IP;
	c.ports[0].prefix_len = 24;
	st = rnic_stack_create(&c);
	if (st == NULL || rnic_stack_start(st) != 0)
		return -1;
	if (rte_eth_dev_get_port_by_name("net_ring_rk.b", &peer) != 0)
		return -1;
	pool = rte_pktmbuf_pool_create("rk_peer", 1023, 0, 0, 2048, SOCKET_ID_ANY);
	if (pool == NULL || rte_eth_dev_configure(peer, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(peer, 0, 256, SOCKET_ID_ANY, NULL, pool) != 0 ||
	    rte_eth_tx_queue_setup(peer, 0, 256, SOCKET_ID_ANY, NULL) != 0 ||
	    rte_eth_dev_start(peer) != 0)
		return -1;
	ctx = rnic_open_device(st);
	pd = ctx ? rnic_alloc_pd(ctx) : NULL;
	cq = pd ? rnic_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	mr = pd ? rnic_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (cq == NULL || mr == NULL)
		return -1;
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 } };
	qp = rnic_create_qp_transport(pd, &qa, RNIC_TRANSPORT_ROCE);
	if (qp == NULL)
		return -1;
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				  .qkey = QKEY };
	if (rnic_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			   IBV_QP_QKEY) != 0)
		return -1;
	at = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	if (rnic_modify_qp(qp, &at, IBV_QP_STATE) != 0)
		return -1;
	at = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 1 };
	return rnic_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	int rc = rnic_destroy_qp(qp) | rnic_dereg_mr(mr) | rnic_destroy_cq(cq) |
		 rnic_dealloc_pd(pd) | rnic_close_device(ctx);
	/* what the stack sent (its gratuitous ARP) goes back to its pool */
	struct rte_mbuf *m[16];
	uint16_t n;
	while ((n = rte_eth_rx_burst(peer, 0, m, 16)) > 0)
		rte_pktmbuf_free_bulk(m, n);
	rnic_stack_stop(st);
	rnic_stack_destroy(st);
	rte_eth_dev_stop(peer);
	return rc;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pkey),
		cmocka_unit_test(test_aeth_reserved_bit),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
