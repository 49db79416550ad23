/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: TCP options (lib/tcp/tcp_opts.c).
 *
 * Input: flags byte (bit 0: options of a SYN), then an option list (at
 * most 40 bytes are used, as in a header with data offset 15; a longer
 * list is also parsed on its own to stress the bounds).
 *
 * Properties: the list, held in a buffer of exactly its length, parses to
 * 0 or -EINVAL (never reads past it: ASan); what parses is in range
 * (window scale clamped to 14, at most 4 SACK blocks, SYN-only options
 * only on a SYN); building the parsed options gives at most 40 bytes, a
 * multiple of 4, that parse back to the same values (SACK blocks cut to
 * what fits beside timestamps); options built from fuzz-chosen values
 * round-trip the same way.
 *
 * TCP segments as a whole (header checks, state machine, RFC 5961) are
 * fuzzed through the stack by fuzz_net, which registers a listener.
 */
#include <errno.h>

#include "tcp/tcp_opts.h"
#include "fuzz_util.h"

/* Parse @p b, the output of tcp_opts_build() for @p o, and compare. */
static void
tcp_opts_round_trip(const struct tcp_opts *o, bool syn)
{
	uint8_t buf[64];
	struct tcp_opts back;
	size_t n = tcp_opts_build(buf, o, syn);
	unsigned want_sack, i;

	FUZZ_CHECK(n <= 40 && n % 4 == 0);
	FUZZ_CHECK(tcp_opts_parse(buf, n, syn, &back) == 0);
	FUZZ_CHECK(back.ts_ok == o->ts_ok);
	if (o->ts_ok)
		FUZZ_CHECK(back.tsval == o->tsval && back.tsecr == o->tsecr);
	if (syn) {
		FUZZ_CHECK(back.mss_ok == o->mss_ok && back.ws_ok == o->ws_ok &&
			   back.sack_ok == o->sack_ok);
		if (o->mss_ok)
			FUZZ_CHECK(back.mss == o->mss);
		if (o->ws_ok)
			FUZZ_CHECK(back.ws == o->ws);
		FUZZ_CHECK(back.n_sack == 0);
	} else {
		want_sack = o->n_sack;
		if (want_sack > (o->ts_ok ? 3u : 4u))
			want_sack = o->ts_ok ? 3u : 4u;
		FUZZ_CHECK(!back.mss_ok && !back.ws_ok && !back.sack_ok);
		FUZZ_CHECK(back.n_sack == want_sack);
		for (i = 0; i < want_sack; i++)
			FUZZ_CHECK(back.sack[i].start == o->sack[i].start &&
				   back.sack[i].end == o->sack[i].end);
	}
}

static void
tcp_opts_check(const struct tcp_opts *o, bool syn)
{
	FUZZ_CHECK(o->n_sack <= TCP_MAX_SACK_BLOCKS);
	FUZZ_CHECK(!o->ws_ok || o->ws <= TCP_MAX_WSCALE);
	if (!syn)
		FUZZ_CHECK(!o->mss_ok && !o->ws_ok && !o->sack_ok);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tcp_opts o, chosen;
	struct fuzz_in in;
	uint8_t flags, *copy;
	size_t len, i;
	bool syn;
	int rc;

	fuzz_in_init(&in, data, size);
	flags = fuzz_u8(&in);
	syn = flags & 1;
	len = fuzz_in_left(&in);

	/* The whole rest, however long, in an exact-size buffer. */
	copy = malloc(len > 0 ? len : 1);
	FUZZ_CHECK(copy != NULL);
	memcpy(copy, data + in.off, len);
	rc = tcp_opts_parse(copy, len, syn, &o);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	if (rc == 0)
		tcp_opts_check(&o, syn);
	/* As a real header carries it: at most 40 bytes. */
	rc = tcp_opts_parse(copy, len > 40 ? 40 : len, syn, &o);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	if (rc == 0) {
		tcp_opts_check(&o, syn);
		tcp_opts_round_trip(&o, syn);
	}
	free(copy);

	/* Values chosen by the input, built and parsed back. */
	memset(&chosen, 0, sizeof(chosen));
	chosen.mss_ok = flags & 2;
	chosen.ws_ok = flags & 4;
	chosen.sack_ok = flags & 8;
	chosen.ts_ok = flags & 16;
	chosen.mss = fuzz_u16(&in);
	chosen.ws = fuzz_u8(&in) % (TCP_MAX_WSCALE + 1);
	chosen.tsval = fuzz_u32(&in);
	chosen.tsecr = fuzz_u32(&in);
	chosen.n_sack = (flags >> 5) % (TCP_MAX_SACK_BLOCKS + 1);
	for (i = 0; i < chosen.n_sack; i++) {
		chosen.sack[i].start = fuzz_u32(&in);
		chosen.sack[i].end = fuzz_u32(&in);
	}
	tcp_opts_round_trip(&chosen, syn);
	return 0;
}
