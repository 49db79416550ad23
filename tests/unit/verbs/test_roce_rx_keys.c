/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 receive checks of the BTH P_Key, end to end: one stack with a UD
 * QP on one end of a ring pair; the test is the other end and sends
 * hand-built UD SEND ONLY packets (Ethernet, IPv4, UDP 4791, BTH, DETH,
 * 16 bytes, ICRC) that differ only in their P_Key. A packet rnic may take
 * completes a receive; any other is dropped and counted in rx_bad_pkey,
 * and completes nothing (issue 19: rnic took every P_Key). Waits are on
 * counters and completions, with a hang guard, never on elapsed time.
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

#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "engine/stack.h"
#include "port/port.h"
#include "rnic/rnic.h"
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

/* Send one UD SEND ONLY to our QP with BTH P_Key @p pkey. */
static void send_ud(uint16_t pkey, uint8_t fill)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	assert_non_null(m);
	uint16_t ip_len = 20 + 8 + RNIC_ROCE_BTH_LEN + RNIC_ROCE_DETH_LEN + PAY + 4;
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
	uint8_t *bth = (uint8_t *)(uh + 1);
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
	assert_int_equal(rnic_roce_icrc_generate(ip, ip_len), 0);
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
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
