/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RoCEv2 opcode table against a second, independently written list
 * taken from IBTA vol. 1 tables 35 and 36 (header layout per opcode): every
 * length and offset below is a literal typed from the spec, not computed
 * from header sizes, so a wrong flag or a wrong order in the table shows.
 * Also the responder's and completer's opcode sequence checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "roce/opcode.h"

enum pos { FIRST, MIDDLE, LAST, ONLY };
enum kind { SEND, WRITE, READ, ATOMIC, ACK, CNP };
enum dir { REQ, RESP, NODIR };

/* One expected opcode. Offsets count from the first byte of the BTH;
 * 0 = header absent. */
struct expect {
	uint8_t op;
	const char *name;
	enum dir dir;
	enum kind kind;
	enum pos pos;
	int payload;          /* may carry payload */
	int recv_wqe;         /* consumes a receive WQE */
	int ud;               /* UD service (else RC, or CNP) */
	unsigned int len;     /* BTH + extended headers */
	unsigned int deth, reth, atmeth, aeth, atmack, immdt, ieth;
};

static const struct expect expected[] = {
	/* op    name                   dir  kind   pos  pl rw ud len deth reth atm aeth ack imm ieth */
	{ 0x00, "RC_SEND_FIRST",           REQ, SEND, FIRST,  1, 1, 0, 12, 0, 0, 0, 0, 0, 0, 0 },
	{ 0x01, "RC_SEND_MIDDLE",          REQ, SEND, MIDDLE, 1, 1, 0, 12, 0, 0, 0, 0, 0, 0, 0 },
	{ 0x02, "RC_SEND_LAST",            REQ, SEND, LAST,   1, 1, 0, 12, 0, 0, 0, 0, 0, 0, 0 },
	{ 0x03, "RC_SEND_LAST_IMM",        REQ, SEND, LAST,   1, 1, 0, 16, 0, 0, 0, 0, 0, 12, 0 },
	{ 0x04, "RC_SEND_ONLY",            REQ, SEND, ONLY,   1, 1, 0, 12, 0, 0, 0, 0, 0, 0, 0 },
	{ 0x05, "RC_SEND_ONLY_IMM",        REQ, SEND, ONLY,   1, 1, 0, 16, 0, 0, 0, 0, 0, 12, 0 },
	{ 0x06, "RC_WRITE_FIRST",          REQ, WRITE, FIRST, 1, 0, 0, 28, 0, 12, 0, 0, 0, 0, 0 },
	{ 0x07, "RC_WRITE_MIDDLE",         REQ, WRITE, MIDDLE, 1, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0 },
	{ 0x08, "RC_WRITE_LAST",           REQ, WRITE, LAST,  1, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0 },
	{ 0x09, "RC_WRITE_LAST_IMM",       REQ, WRITE, LAST,  1, 1, 0, 16, 0, 0, 0, 0, 0, 12, 0 },
	{ 0x0a, "RC_WRITE_ONLY",           REQ, WRITE, ONLY,  1, 0, 0, 28, 0, 12, 0, 0, 0, 0, 0 },
	{ 0x0b, "RC_WRITE_ONLY_IMM",       REQ, WRITE, ONLY,  1, 1, 0, 32, 0, 12, 0, 0, 0, 28, 0 },
	{ 0x0c, "RC_READ_REQUEST",         REQ, READ, ONLY,   0, 0, 0, 28, 0, 12, 0, 0, 0, 0, 0 },
	{ 0x0d, "RC_READ_RESPONSE_FIRST",  RESP, READ, FIRST, 1, 0, 0, 16, 0, 0, 0, 12, 0, 0, 0 },
	{ 0x0e, "RC_READ_RESPONSE_MIDDLE", RESP, READ, MIDDLE, 1, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0 },
	{ 0x0f, "RC_READ_RESPONSE_LAST",   RESP, READ, LAST,  1, 0, 0, 16, 0, 0, 0, 12, 0, 0, 0 },
	{ 0x10, "RC_READ_RESPONSE_ONLY",   RESP, READ, ONLY,  1, 0, 0, 16, 0, 0, 0, 12, 0, 0, 0 },
	{ 0x11, "RC_ACKNOWLEDGE",          RESP, ACK, ONLY,   0, 0, 0, 16, 0, 0, 0, 12, 0, 0, 0 },
	{ 0x12, "RC_ATOMIC_ACKNOWLEDGE",   RESP, ACK, ONLY,   0, 0, 0, 24, 0, 0, 0, 12, 16, 0, 0 },
	{ 0x13, "RC_CMP_SWAP",             REQ, ATOMIC, ONLY, 0, 0, 0, 40, 0, 0, 12, 0, 0, 0, 0 },
	{ 0x14, "RC_FETCH_ADD",            REQ, ATOMIC, ONLY, 0, 0, 0, 40, 0, 0, 12, 0, 0, 0, 0 },
	{ 0x16, "RC_SEND_LAST_INV",        REQ, SEND, LAST,   1, 1, 0, 16, 0, 0, 0, 0, 0, 0, 12 },
	{ 0x17, "RC_SEND_ONLY_INV",        REQ, SEND, ONLY,   1, 1, 0, 16, 0, 0, 0, 0, 0, 0, 12 },
	{ 0x64, "UD_SEND_ONLY",            REQ, SEND, ONLY,   1, 1, 1, 20, 12, 0, 0, 0, 0, 0, 0 },
	{ 0x65, "UD_SEND_ONLY_IMM",        REQ, SEND, ONLY,   1, 1, 1, 24, 12, 0, 0, 0, 0, 20, 0 },
	{ 0x81, "CNP",                     NODIR, CNP, ONLY,  0, 0, 0, 28, 0, 0, 0, 0, 0, 0, 0 },
};

static const struct expect *
find_expect(unsigned int op)
{
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
		if (expected[i].op == op)
			return &expected[i];
	return NULL;
}

static int
has(uint8_t op, uint32_t f)
{
	return (rnic_roce_op(op)->flags & f) != 0;
}

/* One defined opcode against its expectation. */
static void
check_one(const struct expect *e)
{
	const struct rnic_roce_opinfo *o = rnic_roce_op(e->op);
	static const uint32_t posf[] = {
		[FIRST] = RNIC_ROCE_OPF_FIRST, [MIDDLE] = RNIC_ROCE_OPF_MIDDLE,
		[LAST] = RNIC_ROCE_OPF_LAST, [ONLY] = RNIC_ROCE_OPF_ONLY,
	};
	static const uint32_t kindf[] = {
		[SEND] = RNIC_ROCE_OPF_SEND, [WRITE] = RNIC_ROCE_OPF_WRITE,
		[READ] = RNIC_ROCE_OPF_READ, [ATOMIC] = RNIC_ROCE_OPF_ATOMIC,
		[ACK] = RNIC_ROCE_OPF_ACK, [CNP] = RNIC_ROCE_OPF_CNP,
	};
	uint32_t positions = RNIC_ROCE_OPF_FIRST | RNIC_ROCE_OPF_MIDDLE |
			     RNIC_ROCE_OPF_LAST | RNIC_ROCE_OPF_ONLY;

	assert_true(rnic_roce_op_known(e->op));
	assert_string_equal(o->name, e->name);
	assert_string_equal(rnic_roce_op_name(e->op), e->name);
	assert_int_equal(o->length, e->len);
	assert_int_equal(o->offset[RNIC_ROCE_HDR_PAYLOAD], e->len);

	/* exactly one position */
	assert_int_equal(o->flags & positions, posf[e->pos]);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_REQ), e->dir == REQ);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_RESP), e->dir == RESP);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_PAYLOAD), e->payload);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_RECV_WQE), e->recv_wqe);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_UD), e->ud);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_RC),
			 !e->ud && e->kind != CNP);
	/* its kind is set; an atomic ack is both ACK and ATOMIC */
	assert_true(has(e->op, kindf[e->kind]));
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_SEND), e->kind == SEND);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_WRITE), e->kind == WRITE);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_READ), e->kind == READ);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_ATOMIC),
			 e->kind == ATOMIC || e->op == 0x12);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_CNP), e->kind == CNP);

	/* header offsets and the matching presence flags */
	assert_int_equal(o->offset[RNIC_ROCE_HDR_DETH], e->deth);
	assert_int_equal(o->offset[RNIC_ROCE_HDR_RETH], e->reth);
	assert_int_equal(o->offset[RNIC_ROCE_HDR_ATMETH], e->atmeth);
	assert_int_equal(o->offset[RNIC_ROCE_HDR_AETH], e->aeth);
	assert_int_equal(o->offset[RNIC_ROCE_HDR_ATMACK], e->atmack);
	assert_int_equal(o->offset[RNIC_ROCE_HDR_IMMDT], e->immdt);
	assert_int_equal(o->offset[RNIC_ROCE_HDR_IETH], e->ieth);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_DETH), e->deth != 0);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_RETH), e->reth != 0);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_ATMETH), e->atmeth != 0);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_AETH), e->aeth != 0);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_ATMACK), e->atmack != 0);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_IMMDT), e->immdt != 0);
	assert_int_equal(has(e->op, RNIC_ROCE_OPF_IETH), e->ieth != 0);
	/* the transport service is in the top 3 opcode bits */
	if (e->ud)
		assert_int_equal(e->op & RNIC_ROCE_TRANSPORT_MASK,
				 RNIC_ROCE_TRANSPORT_UD);
}

static void
test_defined_opcodes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
		check_one(&expected[i]);
}

/* Everything not in the list is an empty entry. */
static void
test_unknown_opcodes(void **state)
{
	unsigned int known = 0;

	(void)state;
	for (unsigned int op = 0; op < 256; op++) {
		const struct rnic_roce_opinfo *o = rnic_roce_op((uint8_t)op);

		if (find_expect(op) != NULL) {
			known++;
			continue;
		}
		assert_false(rnic_roce_op_known((uint8_t)op));
		assert_int_equal(o->flags, 0);
		assert_null(o->name);
		assert_int_equal(o->length, 0);
		assert_string_equal(rnic_roce_op_name((uint8_t)op), "UNKNOWN");
	}
	assert_int_equal(known, sizeof(expected) / sizeof(expected[0]));
	/* spot checks of reserved values next to defined ones */
	assert_false(rnic_roce_op_known(0x15));
	assert_false(rnic_roce_op_known(0x18));
	assert_false(rnic_roce_op_known(0x24)); /* UC is not supported */
	assert_false(rnic_roce_op_known(0x66));
}

/* Enum values come from the same list as the table. */
static void
test_enum_values(void **state)
{
	(void)state;
	assert_int_equal(RNIC_ROCE_OP_RC_SEND_FIRST, 0x00);
	assert_int_equal(RNIC_ROCE_OP_RC_WRITE_ONLY_IMM, 0x0b);
	assert_int_equal(RNIC_ROCE_OP_RC_ACKNOWLEDGE, 0x11);
	assert_int_equal(RNIC_ROCE_OP_RC_SEND_ONLY_INV, 0x17);
	assert_int_equal(RNIC_ROCE_OP_UD_SEND_ONLY_IMM, 0x65);
	assert_true(rnic_roce_op_has(RNIC_ROCE_OP_RC_WRITE_ONLY_IMM,
				     RNIC_ROCE_OPF_RETH | RNIC_ROCE_OPF_IMMDT));
	assert_false(rnic_roce_op_has(RNIC_ROCE_OP_RC_WRITE_ONLY,
				      RNIC_ROCE_OPF_RETH | RNIC_ROCE_OPF_IMMDT));
}

/*
 * Responder sequence: the expected answer for every (prev, next) pair of
 * defined opcodes is derived here from names alone, then compared.
 */
static int
name_has(const char *name, const char *part)
{
	return strstr(name, part) != NULL;
}

static int
expect_seq(int prev, uint8_t next)
{
	const struct expect *n = find_expect(next);
	const char *pn = prev < 0 ? "" : find_expect((unsigned int)prev)->name;
	int send_open = !strcmp(pn, "RC_SEND_FIRST") ||
			!strcmp(pn, "RC_SEND_MIDDLE");
	int write_open = !strcmp(pn, "RC_WRITE_FIRST") ||
			 !strcmp(pn, "RC_WRITE_MIDDLE");

	if (n == NULL || n->dir != REQ || n->ud)
		return 0;
	if (send_open)
		return !strcmp(n->name, "RC_SEND_MIDDLE") ||
		       name_has(n->name, "RC_SEND_LAST");
	if (write_open)
		return !strcmp(n->name, "RC_WRITE_MIDDLE") ||
		       name_has(n->name, "RC_WRITE_LAST");
	return n->pos == FIRST || n->pos == ONLY;
}

static void
test_seq_all_pairs(void **state)
{
	unsigned int ok = 0;

	(void)state;
	for (int p = -1; p < (int)(sizeof(expected) / sizeof(expected[0])); p++) {
		int prev = p < 0 ? -1 : expected[p].op;
		enum rnic_roce_opcode pe = p < 0 ? RNIC_ROCE_OP_NONE :
					   (enum rnic_roce_opcode)prev;

		for (unsigned int next = 0; next < 256; next++) {
			int want = expect_seq(prev, (uint8_t)next);

			if (rnic_roce_op_seq_ok(pe, (uint8_t)next) != want)
				fail_msg("prev %d next 0x%02x: want %d", prev,
					 next, want);
			ok += (unsigned int)want;
		}
	}
	assert_true(ok > 100);
}

/* A few pairs written out, in case the derivation above is wrong too. */
static void
test_seq_examples(void **state)
{
	(void)state;
	assert_true(rnic_roce_op_seq_ok(RNIC_ROCE_OP_NONE, 0x00));
	assert_false(rnic_roce_op_seq_ok(RNIC_ROCE_OP_NONE, 0x01));
	assert_false(rnic_roce_op_seq_ok(RNIC_ROCE_OP_NONE, 0x02));
	assert_true(rnic_roce_op_seq_ok(RNIC_ROCE_OP_RC_SEND_FIRST, 0x01));
	assert_true(rnic_roce_op_seq_ok(RNIC_ROCE_OP_RC_SEND_MIDDLE, 0x16));
	assert_false(rnic_roce_op_seq_ok(RNIC_ROCE_OP_RC_SEND_MIDDLE, 0x04));
	assert_false(rnic_roce_op_seq_ok(RNIC_ROCE_OP_RC_SEND_FIRST, 0x08));
	assert_false(rnic_roce_op_seq_ok(RNIC_ROCE_OP_RC_SEND_FIRST, 0x0c));
	assert_true(rnic_roce_op_seq_ok(RNIC_ROCE_OP_RC_WRITE_MIDDLE, 0x09));
	assert_false(rnic_roce_op_seq_ok(RNIC_ROCE_OP_RC_WRITE_FIRST, 0x02));
	assert_true(rnic_roce_op_seq_ok(RNIC_ROCE_OP_RC_SEND_LAST, 0x13));
	assert_false(rnic_roce_op_seq_ok(RNIC_ROCE_OP_RC_SEND_LAST, 0x07));
	assert_false(rnic_roce_op_seq_ok(RNIC_ROCE_OP_NONE, 0x11));
	assert_false(rnic_roce_op_seq_ok(RNIC_ROCE_OP_NONE, 0x64));
	assert_false(rnic_roce_op_seq_ok(RNIC_ROCE_OP_NONE, 0x15));
}

static void
test_read_resp_seq(void **state)
{
	(void)state;
	assert_true(rnic_roce_read_resp_seq_ok(RNIC_ROCE_OP_NONE, 0x0d));
	assert_true(rnic_roce_read_resp_seq_ok(RNIC_ROCE_OP_NONE, 0x10));
	assert_false(rnic_roce_read_resp_seq_ok(RNIC_ROCE_OP_NONE, 0x0e));
	assert_false(rnic_roce_read_resp_seq_ok(RNIC_ROCE_OP_NONE, 0x0f));
	assert_true(rnic_roce_read_resp_seq_ok(RNIC_ROCE_OP_RC_READ_RESPONSE_FIRST,
					       0x0e));
	assert_true(rnic_roce_read_resp_seq_ok(RNIC_ROCE_OP_RC_READ_RESPONSE_MIDDLE,
					       0x0f));
	assert_false(rnic_roce_read_resp_seq_ok(RNIC_ROCE_OP_RC_READ_RESPONSE_MIDDLE,
						0x0d));
	assert_false(rnic_roce_read_resp_seq_ok(RNIC_ROCE_OP_RC_READ_RESPONSE_FIRST,
						0x10));
	assert_true(rnic_roce_read_resp_seq_ok(RNIC_ROCE_OP_RC_READ_RESPONSE_LAST,
					       0x0d));
	assert_false(rnic_roce_read_resp_seq_ok(RNIC_ROCE_OP_NONE, 0x11));
	assert_false(rnic_roce_read_resp_seq_ok(RNIC_ROCE_OP_NONE, 0x0c));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defined_opcodes),
		cmocka_unit_test(test_unknown_opcodes),
		cmocka_unit_test(test_enum_values),
		cmocka_unit_test(test_seq_all_pairs),
		cmocka_unit_test(test_seq_examples),
		cmocka_unit_test(test_read_resp_seq),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
