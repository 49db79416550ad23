/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/port against real PMDs in one process: ring pairs deliver per queue,
 * net_null ports open and close without leaking, link down/up on a ring
 * port, the TX injector through a port (duplicates, refused frames held and
 * retried), RX delay released by a later rnic_port_rx, pool sizing and MTU
 * checks, and a pcapng file that tshark reads.
 *
 * Built from lib/port and lib/common only; lib/net's ARP table is stubbed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <cmocka.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "engine/stack.h"
#include "port/port.h"


/* ---- helpers ---- */

static struct rnic_stack stack; /* back-pointer only: zeroed */
static unsigned port_seq;       /* distinct pool names per open */

static void cfg_default(struct rnic_port_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->mtu = 1500;
	c->mbufs = 8191;
	c->rx_desc = 1024;
	c->tx_desc = 1024;
	c->ip = 0x0a000001;
	c->prefix_len = 24;
}

static struct rnic_port *open_ring(const char *end, unsigned workers,
				   const struct rnic_port_cfg *base)
{
	struct rnic_port_cfg c;
	if (base)
		c = *base;
	else
		cfg_default(&c);
	snprintf(c.ring, sizeof(c.ring), "%s", end);
	return rnic_port_open(&stack, 0, port_seq++, &c, workers);
}

/* An Ethernet/IPv4 frame of 64 bytes whose payload starts with @p tag. */
static struct rte_mbuf *frame(struct rnic_port *p, uint32_t tag)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	assert_non_null(m);
	assert_non_null(rte_pktmbuf_append(m, 64));
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	memset(d, 0, 64);
	memset(d, 0xff, 6);                      /* broadcast */
	memcpy(d + 6, p->mac.addr_bytes, 6);
	d[12] = 0x08;                            /* IPv4 */
	d[14] = 0x45;
	d[17] = 50;                              /* total length */
	d[22] = 64;                              /* TTL */
	d[23] = 253;                             /* experimental protocol */
	memcpy(d + 40, &tag, sizeof(tag));
	return m;
}

static uint32_t tag_of(struct rte_mbuf *m)
{
	uint32_t t;
	memcpy(&t, rte_pktmbuf_mtod_offset(m, uint8_t *, 40), sizeof(t));
	return t;
}

/* Receive everything queue @p q has (polling for a few ms); free it. */
static unsigned drain(struct rnic_port *p, uint16_t q, uint32_t *tags,
		      unsigned max)
{
	struct rte_mbuf *pk[32];
	unsigned k = 0;
	uint64_t end = rte_rdtsc() + rte_get_tsc_hz() / 100;
	while (rte_rdtsc() < end) {
		uint16_t n = rnic_port_rx(p, q, pk, 32);
		for (uint16_t i = 0; i < n; i++) {
			if (tags && k < max)
				tags[k] = tag_of(pk[i]);
			k++;
			rte_pktmbuf_free(pk[i]);
		}
	}
	return k;
}

/* ---- tests ---- */

static void ring_pair_per_queue(void **state)
{
	(void)state;
	assert_int_equal(rnic_ring_pair("rq", 2), 0);
	assert_true(rnic_ring_pair("rq", 2) < 0); /* name taken */
	struct rnic_port *a = open_ring("rq.a", 2, NULL);
	struct rnic_port *b = open_ring("rq.b", 2, NULL);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->nb_rxq, 2);
	assert_int_equal(a->nb_txq, 2);
	assert_false(a->rss); /* net_ring has no RSS */
	assert_int_equal(a->ip, 0x0a000001);
	assert_int_equal(a->netmask, 0xffffff00);
	assert_true(rnic_port_on_link(a, 0x0a0000fe));
	assert_false(rnic_port_on_link(a, 0x0a0001fe));

	/* a -> b: queue 0 carries tags 0..9, queue 1 tags 100..104 */
	struct rte_mbuf *pk[10];
	for (uint32_t i = 0; i < 10; i++)
		pk[i] = frame(a, i);
	assert_int_equal(rnic_port_tx(a, 0, pk, 10), 10);
	for (uint32_t i = 0; i < 5; i++)
		pk[i] = frame(a, 100 + i);
	assert_int_equal(rnic_port_tx(a, 1, pk, 5), 5);
	/* b -> a on queue 1 */
	for (uint32_t i = 0; i < 3; i++)
		pk[i] = frame(b, 200 + i);
	assert_int_equal(rnic_port_tx(b, 1, pk, 3), 3);
	/* a queue that does not exist takes nothing */
	assert_int_equal(rnic_port_tx(a, 2, pk, 1), 0);

	uint32_t tags[16];
	assert_int_equal(drain(b, 0, tags, 16), 10);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(tags[i], i);
	assert_int_equal(drain(b, 1, tags, 16), 5);
	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(tags[i], 100 + i);
	assert_int_equal(drain(a, 0, tags, 16), 0);
	assert_int_equal(drain(a, 1, tags, 16), 3);
	assert_int_equal(tags[2], 202);

	assert_int_equal(rnic_port_mbufs_in_use(a), 0);
	assert_int_equal(rnic_port_mbufs_in_use(b), 0);
	rnic_port_close(a);
	rnic_port_close(b);
}

static void ring_missing_is_an_error(void **state)
{
	(void)state;
	assert_null(open_ring("nosuch.a", 1, NULL));
	assert_int_equal(rte_errno, ENODEV);
	assert_int_equal(rnic_ring_pair("", 1), -EINVAL);
	assert_int_equal(rnic_ring_pair("x", 0), -EINVAL);
	char longname[80];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(rnic_ring_pair(longname, 1), -ENAMETOOLONG);
}

static void ring_link_down_up(void **state)
{
	(void)state;
	assert_int_equal(rnic_ring_pair("lk", 1), 0);
	struct rnic_port *a = open_ring("lk.a", 1, NULL);
	assert_non_null(a);
	rnic_port_poll_link(a);
	assert_true(a->link_up);
	uint64_t changes = a->link_changes;

	assert_int_equal(rnic_port_set_link(a, false), 0);
	assert_false(a->link_up);
	assert_int_equal(a->link_changes, changes + 1);
	/* the PMD agrees, so polling keeps it down */
	struct rte_eth_link l;
	assert_int_equal(rte_eth_link_get_nowait(a->port_id, &l), 0);
	assert_int_equal(l.link_status, RTE_ETH_LINK_DOWN);
	rnic_port_poll_link(a);
	assert_false(a->link_up);
	assert_int_equal(a->link_changes, changes + 1);

	assert_int_equal(rnic_port_set_link(a, true), 0);
	rnic_port_poll_link(a);
	assert_true(a->link_up);
	assert_int_equal(a->link_changes, changes + 2);
	rnic_port_close(a);
}

static void null_open_close_no_leak(void **state)
{
	struct rnic_port_cfg c;
	(void)state;
	for (int round = 0; round < 2; round++) {
		cfg_default(&c);
		snprintf(c.vdev, sizeof(c.vdev), "net_null_t0,size=80");
		struct rnic_port *p = rnic_port_open(&stack, 0, port_seq++, &c, 1);
		assert_non_null(p); /* round 1: the closed vdev probes again */
		assert_string_equal(p->name, "net_null_t0");
		assert_int_equal(p->mtu, 1500);
		struct rte_mbuf *pk[32];
		uint16_t n = rnic_port_rx(p, 0, pk, 32);
		assert_true(n > 0);   /* net_null makes frames from our pool */
		assert_int_equal(rte_pktmbuf_pkt_len(pk[0]), 80);
		assert_int_equal(rnic_port_mbufs_in_use(p), n);
		assert_int_equal(rnic_port_tx(p, 0, pk, n), n); /* null frees */
		assert_int_equal(rnic_port_mbufs_in_use(p), 0);
		rnic_port_close(p);
	}
}

static void pool_too_small_fails(void **state)
{
	struct rnic_port_cfg c;
	(void)state;
	cfg_default(&c);
	c.mbufs = 1000;
	snprintf(c.vdev, sizeof(c.vdev), "net_null_t1");
	assert_null(rnic_port_open(&stack, 0, port_seq++, &c, 1));
	assert_int_equal(rte_errno, ENOSPC);
}

static void jumbo_mtu_on_ring(void **state)
{
	struct rnic_port_cfg c;
	(void)state;
	assert_int_equal(rnic_ring_pair("jm", 1), 0);
	cfg_default(&c);
	c.mtu = 9000;
	struct rnic_port *a = open_ring("jm.a", 1, &c);
	assert_non_null(a);
	assert_int_equal(a->mtu, 9000);
	/* one mbuf holds a whole jumbo frame */
	assert_true(rte_pktmbuf_data_room_size(a->pool) >=
		    9000 + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN + RTE_PKTMBUF_HEADROOM);
	rnic_port_close(a);
}

static void tx_dup_and_refused_frames(void **state)
{
	struct rnic_port_cfg c;
	struct rnic_fault_stats fs;
	(void)state;
	assert_int_equal(rnic_ring_pair("dp", 1), 0);
	cfg_default(&c);
	c.fault_seed = 77;
	c.tx_fault.dup = 100;
	c.mbufs = 16383;
	struct rnic_port *a = open_ring("dp.a", 1, &c);
	struct rnic_port *b = open_ring("dp.b", 1, NULL);
	assert_non_null(a);
	assert_non_null(b);

	/* 2500 frames become 5000: more than the 4095 the ring holds */
	const unsigned n = 2500;
	for (unsigned i = 0; i < n; i += 50) {
		struct rte_mbuf *pk[50];
		for (unsigned j = 0; j < 50; j++)
			pk[j] = frame(a, i + j);
		assert_int_equal(rnic_port_tx(a, 0, pk, 50), 50);
	}
	unsigned got = 0;
	for (int round = 0; round < 20; round++) {
		got += drain(b, 0, NULL, 0);
		rnic_port_fault_poll(a, 0);
	}
	rnic_port_fault_stats(a, &fs);
	assert_int_equal(fs.seen, n);
	assert_int_equal(fs.duplicated, n);
	/* refused output was held and retried; only a full hold drops, and
	 * that is counted apart from the injected faults (none here) */
	assert_int_equal(fs.dropped, 0);
	assert_true(fs.hold_full > 0);
	assert_int_equal(got + fs.hold_full, 2 * n);
	assert_true(got > 4095);
	assert_int_equal(rnic_port_mbufs_in_use(a), 0);
	rnic_port_close(a);
	rnic_port_close(b);
}

static void rx_delay_released_later(void **state)
{
	struct rnic_port_cfg c;
	(void)state;
	assert_int_equal(rnic_ring_pair("dl", 1), 0);
	cfg_default(&c);
	c.rx_fault.delay = 100;
	c.rx_fault.delay_us = 20000;
	struct rnic_port *a = open_ring("dl.a", 1, NULL);
	struct rnic_port *b = open_ring("dl.b", 1, &c);
	assert_non_null(a);
	assert_non_null(b);
	struct rte_mbuf *pk[8];
	for (uint32_t i = 0; i < 8; i++)
		pk[i] = frame(a, i);
	assert_int_equal(rnic_port_tx(a, 0, pk, 8), 8);
	/* the frames are read into the delay line (each counted once) and
	 * come out of later reads; when they come out is the fault module's
	 * (test_fault.c delay_holds_until_due, on a clock of its own), here
	 * only a hang guard bounds the wait */
	uint64_t t0 = rte_rdtsc();
	uint32_t tags[8];
	unsigned k = 0;
	struct rnic_fault_stats fs;
	while (k < 8 && rte_rdtsc() - t0 < 10 * rte_get_tsc_hz()) {
		uint16_t n = rnic_port_rx(b, 0, pk, 8);
		for (uint16_t i = 0; i < n; i++) {
			tags[k++] = tag_of(pk[i]);
			rte_pktmbuf_free(pk[i]);
		}
	}
	assert_int_equal(k, 8);
	rnic_port_fault_stats(b, &fs);
	assert_int_equal(fs.delayed, 8);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(tags[i], i); /* same delay: order kept */
	/* held frames are freed at close, not leaked */
	for (uint32_t i = 0; i < 4; i++)
		pk[i] = frame(a, i);
	assert_int_equal(rnic_port_tx(a, 0, pk, 4), 4);
	assert_int_equal(rnic_port_rx(b, 0, pk, 8), 0);
	rnic_port_close(b);
	assert_int_equal(rnic_port_mbufs_in_use(a), 0);
	rnic_port_close(a);
}

static void pcapng_capture(void **state)
{
	struct rnic_port_cfg c;
	char path[64], cmd[160];
	(void)state;
	snprintf(path, sizeof(path), "/tmp/rnic-test-port-%d.pcapng", (int)getpid());
	assert_int_equal(rnic_ring_pair("pc", 1), 0);
	cfg_default(&c);
	snprintf(c.pcap, sizeof(c.pcap), "%s", path);
	struct rnic_port *a = open_ring("pc.a", 1, &c);
	struct rnic_port *b = open_ring("pc.b", 1, NULL);
	assert_non_null(a);
	assert_non_null(b);
	struct rte_mbuf *pk[8];
	for (uint32_t i = 0; i < 6; i++)
		pk[i] = frame(a, i);
	assert_int_equal(rnic_port_tx(a, 0, pk, 6), 6);    /* 6 out */
	for (uint32_t i = 0; i < 4; i++)
		pk[i] = frame(b, 50 + i);
	assert_int_equal(rnic_port_tx(b, 0, pk, 4), 4);
	assert_int_equal(drain(a, 0, NULL, 0), 4);          /* 4 in */
	assert_int_equal(drain(b, 0, NULL, 0), 6);
	rnic_port_close(a);
	rnic_port_close(b);

	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	uint8_t hdr[12];
	assert_int_equal(fread(hdr, 1, sizeof(hdr), f), sizeof(hdr));
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fclose(f);
	static const uint8_t shb[4] = { 0x0a, 0x0d, 0x0d, 0x0a };
	static const uint8_t bom[4] = { 0x4d, 0x3c, 0x2b, 0x1a }; /* little-endian */
	assert_memory_equal(hdr, shb, 4);
	assert_memory_equal(hdr + 8, bom, 4);
	assert_true(size > 10 * 64);

	/* when tshark is installed it must read all 10 frames */
	if (access("/usr/bin/tshark", X_OK) == 0) {
		snprintf(cmd, sizeof(cmd), "tshark -r %s 2>/dev/null | wc -l", path);
		FILE *t = popen(cmd, "r");
		assert_non_null(t);
		int lines = -1;
		assert_int_equal(fscanf(t, "%d", &lines), 1);
		pclose(t);
		assert_int_equal(lines, 10);
	} else {
		printf("tshark not installed: pcapng checked by header only\n");
	}
	unlink(path);
}

/* An Ethernet/IPv4/TCP frame, 20-byte header and @p plen bytes of
 * payload, a chain of two mbufs (header, payload: the shape TCP sends),
 * its checksum left to the link as TCP does on a ring port. */
static struct rte_mbuf *tcp_frame(struct rnic_port *p, uint16_t plen)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool), *pl = rte_pktmbuf_alloc(p->pool);
	assert_non_null(m);
	assert_non_null(pl);
	uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, 54);
	uint8_t *q = (uint8_t *)rte_pktmbuf_append(pl, plen);
	if (d == NULL || q == NULL) {
		fail();
		return NULL;
	}
	memset(d, 0, 54);
	memset(d, 0xff, 6);
	memcpy(d + 6, p->mac.addr_bytes, 6);
	d[12] = 0x08;
	d[14] = 0x45;
	d[16] = (uint8_t)((40 + plen) >> 8);
	d[17] = (uint8_t)(40 + plen);
	d[22] = 64;
	d[23] = IPPROTO_TCP;
	memcpy(d + 26, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	d[34] = 0x12; d[35] = 0x34; d[36] = 0x00; d[37] = 0x50;   /* ports */
	d[46] = 0x50;                                            /* 20-byte header */
	d[47] = 0x10;                                            /* ACK */
	d[48] = 0xff;                                            /* window */
	for (uint16_t i = 0; i < plen; i++)
		q[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(rte_pktmbuf_chain(m, pl), 0);
	m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM;
	return m;
}

/* The frame's TCP checksum verifies (pseudo header and chain). */
static bool tcp_csum_ok(const struct rte_mbuf *m)
{
	const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, 14);
	return rte_ipv4_udptcp_cksum_mbuf_verify(m, ip, 34) == 0;
}

/* A TCP frame of @p plen bytes, its checksum left to the link, sent from
 * @p a to @p b, with an injector in the way: it arrives unmarked, with a
 * checksum that verifies. */
static void csum_written_on_the_way(struct rnic_port *a, struct rnic_port *b, uint16_t plen)
{
	struct rte_mbuf *m = tcp_frame(a, plen);
	uint16_t n = 0;

	assert_int_equal(rnic_port_tx(a, 0, &m, 1), 1);
	for (int t = 0; t < 100000 && n == 0; t++) {
		rnic_port_fault_poll(a, 0);
		n = rnic_port_rx(b, 0, &m, 1);
	}
	assert_int_equal(n, 1);
	assert_int_equal(m->ol_flags & (RTE_MBUF_F_RX_L4_CKSUM_MASK | RTE_MBUF_F_TX_TCP_CKSUM), 0);
	assert_true(tcp_csum_ok(m));
	rte_pktmbuf_free(m);
}

/*
 * Ring ports carry TCP frames whose checksum was left to the link: the
 * receiving port marks them good untouched; with a capture or the fault
 * injector in the way the port writes the real checksum first (so a
 * corrupted frame fails TCP's check); sw_csum = on turns the link off; a
 * frame that carries no such flag gets no mark (TCP checks it), even with
 * a stale mark from a reused mbuf.
 */
static void ring_csum_link(void **state)
{
	struct rnic_port_cfg c;
	struct rte_mbuf *pk[4];
	(void)state;
	assert_int_equal(rnic_ring_pair("ck", 1), 0);
	struct rnic_port *a = open_ring("ck.a", 1, NULL);
	struct rnic_port *b = open_ring("ck.b", 1, NULL);
	assert_non_null(a);
	assert_non_null(b);
	assert_true(a->csum_link);
	assert_true(b->csum_link);

	/* untouched: marked good, the field still zero */
	pk[0] = tcp_frame(a, 1001);
	pk[1] = frame(a, 7);
	pk[1]->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;   /* stale */
	assert_int_equal(rnic_port_tx(a, 0, pk, 2), 2);
	uint16_t n = 0;
	for (int t = 0; t < 1000 && n < 2; t++)
		n += rnic_port_rx(b, 0, pk + n, (uint16_t)(2 - n));
	assert_int_equal(n, 2);
	assert_int_equal(pk[0]->ol_flags & (RTE_MBUF_F_RX_L4_CKSUM_MASK | RTE_MBUF_F_TX_TCP_CKSUM),
			 RTE_MBUF_F_RX_L4_CKSUM_GOOD);
	assert_int_equal(rte_pktmbuf_mtod_offset(pk[0], struct rte_tcp_hdr *, 34)->cksum, 0);
	assert_int_equal(pk[1]->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK, 0);
	rte_pktmbuf_free_bulk(pk, 2);

	/* a TX injector in the way (every frame delayed by 1 us): the frame
	 * leaves with its checksum written and arrives unmarked */
	cfg_default(&c);
	c.tx_fault.delay = 100;
	c.tx_fault.delay_us = 1;
	assert_int_equal(rnic_ring_pair("cf", 1), 0);
	struct rnic_port *fa = open_ring("cf.a", 1, &c);
	struct rnic_port *fb = open_ring("cf.b", 1, NULL);
	assert_non_null(fa);
	assert_non_null(fb);
	csum_written_on_the_way(fa, fb, 333);

	/* an RX injector on the receiving port: the checksum written there */
	cfg_default(&c);
	c.rx_fault.delay = 100;
	c.rx_fault.delay_us = 1;
	assert_int_equal(rnic_ring_pair("cr", 1), 0);
	struct rnic_port *ra = open_ring("cr.a", 1, NULL);
	struct rnic_port *rb = open_ring("cr.b", 1, &c);
	assert_non_null(ra);
	assert_non_null(rb);
	csum_written_on_the_way(ra, rb, 64);

	/* sw_csum = on: no link checksum */
	cfg_default(&c);
	c.sw_csum = true;
	assert_int_equal(rnic_ring_pair("cs", 1), 0);
	struct rnic_port *sa = open_ring("cs.a", 1, &c);
	assert_non_null(sa);
	assert_false(sa->csum_link);

	rnic_port_close(a);
	rnic_port_close(b);
	rnic_port_close(fa);
	rnic_port_close(fb);
	rnic_port_close(ra);
	rnic_port_close(rb);
	rnic_port_close(sa);
}

int main(void)
{
	/* --in-memory cannot go with --no-huge (legacy memory) in 22.11 */
	char *argv[] = { "test_port", "--no-huge", "--no-shconf", "--no-pci",
			 "-m", "256", "--file-prefix", "rnic-test-port",
			 "--log-level=*:error", NULL };
	if (rte_eal_init(9, argv) < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ring_pair_per_queue),
		cmocka_unit_test(ring_missing_is_an_error),
		cmocka_unit_test(ring_link_down_up),
		cmocka_unit_test(null_open_close_no_leak),
		cmocka_unit_test(pool_too_small_fails),
		cmocka_unit_test(jumbo_mtu_on_ring),
		cmocka_unit_test(tx_dup_and_refused_frames),
		cmocka_unit_test(rx_delay_released_later),
		cmocka_unit_test(pcapng_capture),
		cmocka_unit_test(ring_csum_link),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rte_eal_cleanup();
	return rc;
}
