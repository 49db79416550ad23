/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Terminates rnic sends, read back from the wire: A's port writes a
 * pcapng capture (in /dev/shm), and each case makes A send one Terminate
 * and checks its bytes (RFC 5040 section 7). Kept apart from verbs_api so
 * the capture does not slow the cases that do not need it.
 */
#include <rte_byteorder.h>
#include <unistd.h>

#include "verbs_pair.h"

static char pcap_path[64];   /* A's port writes every frame here (pcapng) */

/* Is @p g (24 bytes of a TCP payload) an FPDU that carries a Terminate:
 * untagged, last, DDP version 1, RDMAP version 1, opcode 7, QN 2? */
static bool is_terminate(const uint8_t *g)
{
	return (g[2] & 0xc3) == 0x41 && g[3] == 0x47 && g[8] == 0 && g[9] == 0 && g[10] == 0 &&
	       g[11] == 2;
}

/* The last Terminate FPDU that A sent, from A's capture: up to @p cap
 * bytes from its ULPDU_Length on. @return the bytes copied, 0 if none. */
static size_t last_terminate_from_a(uint8_t *out, size_t cap)
{
	FILE *f = fopen(pcap_path, "rb");
	assert_non_null(f);
	static uint8_t blk[65536 + 64];
	size_t got = 0;
	uint32_t h[2];
	while (fread(h, 4, 2, f) == 2) {
		uint32_t len = h[1];
		assert_true(len >= 12 && len - 8 <= sizeof(blk));
		assert_int_equal(fread(blk, 1, len - 8, f), len - 8);
		if (h[0] != 6)   /* Enhanced Packet Block only */
			continue;
		uint32_t caplen;
		memcpy(&caplen, blk + 12, 4);
		const uint8_t *fr = blk + 20;
		if (caplen < 14 + 20 + 20 || fr[12] != 0x08 || fr[13] != 0x00)
			continue;
		const uint8_t *ip = fr + 14;
		uint32_t ihl = (ip[0] & 0x0fu) * 4, src;
		memcpy(&src, ip + 12, 4);
		if (ip[9] != 6 || src != rte_cpu_to_be_32(A_IP))
			continue;
		const uint8_t *tcp = ip + ihl;
		uint32_t doff = (uint32_t)(tcp[12] >> 4) * 4;
		uint32_t iplen = (uint32_t)ip[2] << 8 | ip[3];
		const uint8_t *pay = tcp + doff;
		size_t plen = iplen - ihl - doff;
		for (size_t k = 0; k + 24 <= plen; k++)
			if (is_terminate(pay + k)) {
				got = plen - k < cap ? plen - k : cap;
				memcpy(out, pay + k, got);
			}
	}
	fclose(f);
	return got;
}

/* A Read Request whose source A refuses (past the end of A's region): A's
 * Terminate names RDMAP / Remote Protection / Base or Bounds and carries
 * the DDP Segment Length, the Read Request's DDP header (M, D) and its
 * 28-byte RDMA header (R), as RFC 5040 section 7.4 says for a Read
 * Request. rnic used to leave R and the RDMA header out (issue 19). */
static void test_read_terminate_quotes_request(void **state)
{
	(void)state;
	struct ibv_wc wc[4];
	connect_pair();
	uint64_t src = (uintptr_t)a.buf + BUF - 100;
	assert_int_equal(post1(&b, IBV_WR_RDMA_READ, 7, 256, 4096, src, a.mr->rkey,
			       IBV_SEND_SIGNALED), 0);
	struct rnic_cm_event ev;
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev);
	assert_int_equal(ev.status, -EPROTO);
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, NULL);
	wait_wc(&b, wc, 1);
	assert_int_equal(wc[0].wr_id, 7);
	assert_int_not_equal(wc[0].status, IBV_WC_SUCCESS);

	uint8_t t[128];
	size_t n = last_terminate_from_a(t, sizeof(t));
	/* ULPDU_Length, DDP header 18, control 4, DDP segment length 2,
	 * quoted DDP header 18, Read Request header 28 (then the CRC) */
	assert_true(n >= 2 + 18 + 4 + 2 + 18 + 28);
	assert_int_equal((t[0] << 8) | t[1], 18 + 4 + 2 + 18 + 28);
	const uint8_t *c = t + 2 + 18;
	assert_int_equal(c[0], 0x01);          /* layer RDMAP 0, Remote Protection 1 */
	assert_int_equal(c[1], 0x01);          /* Base or Bounds violation */
	assert_int_equal(c[2] & 0xe0, 0xe0);   /* M, D and R */
	const uint8_t *q = c + 4;
	assert_int_equal((q[0] << 8) | q[1], 18 + 28);  /* the request's ULPDU_Length */
	const uint8_t *dh = q + 2, *rr = dh + 18;
	assert_int_equal(dh[1] & 0x0f, 1);     /* opcode Read Request */
	assert_int_equal(dh[9], 1);            /* QN 1 */
	uint32_t sink_stag, sz, src_stag;
	uint64_t sink_to, src_to;
	memcpy(&sink_stag, rr, 4);
	memcpy(&sink_to, rr + 4, 8);
	memcpy(&sz, rr + 12, 4);
	memcpy(&src_stag, rr + 16, 4);
	memcpy(&src_to, rr + 20, 8);
	assert_int_equal(rte_be_to_cpu_32(sz), 4096);
	assert_int_equal(rte_be_to_cpu_32(src_stag), a.mr->rkey);
	assert_true(rte_be_to_cpu_64(src_to) == src);
	assert_int_not_equal(rte_be_to_cpu_32(sink_stag), 0);
	(void)sink_to;
	teardown_pair();
}

/* A Send with Invalidate naming A's memory region (an MR is not
 * invalidated by a remote peer): RDMAP / Remote Protection / 0x09, as
 * Linux siw sends when the STag's rights or PD forbid it, and the receive
 * completes with REM_INV_REQ_ERR. rnic used to send Remote Operation
 * (issue 19). */
static void test_send_inv_protection(void **state)
{
	(void)state;
	struct ibv_wc wc[4];
	struct ibv_send_wr *bad;
	connect_pair();
	post_recv(&a, 70, 0, 64);
	struct ibv_sge s = { (uintptr_t)b.buf, 16, b.mr->lkey };
	struct ibv_send_wr sw = { .wr_id = 8, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = a.mr->rkey };
	assert_int_equal(ibv_post_send(b.qp, &sw, &bad), 0);
	wait_wc(&a, wc, 1);
	assert_int_equal(wc[0].wr_id, 70);
	assert_int_equal(wc[0].status, IBV_WC_REM_INV_REQ_ERR);
	struct rnic_cm_event ev;
	expect_event(a.cm, RNIC_CM_EVENT_DISCONNECTED, &ev);
	expect_event(b.cm, RNIC_CM_EVENT_DISCONNECTED, NULL);
	uint8_t t[64];
	size_t n = last_terminate_from_a(t, sizeof(t));
	assert_true(n >= 2 + 18 + 4);
	const uint8_t *c = t + 2 + 18;
	assert_int_equal(c[0], 0x01);   /* layer RDMAP 0, Remote Protection 1 */
	assert_int_equal(c[1], 0x09);   /* STag cannot be invalidated */
	teardown_pair();
}

static int setup(void **state)
{
	(void)state;
	snprintf(pcap_path, sizeof(pcap_path), "/dev/shm/rnic_verbs_terminate_%d.pcapng",
		 (int)getpid());
	return pair_setup("test_verbs_terminate", pcap_path);
}

static int teardown(void **state)
{
	(void)state;
	int rc = pair_teardown();
	unlink(pcap_path);
	return rc;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_terminate_quotes_request),
		cmocka_unit_test(test_send_inv_protection),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
