/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * /rnic/tcp telemetry: the SYN stage and connection counters of every stack
 * (seed 004's "SYNs received, cookies sent, valid ACKs, invalid ACKs").
 */
#include <stdio.h>

#include <rte_telemetry.h>

#include "engine/engine_internal.h"
#include "tcp/tcp_internal.h"

static void tel_one(struct rnic_stack *st, void *arg)
{
	struct rte_tel_data *d = arg;
	struct rnic_tcp_stats s;
	char key[32];

	if (tcp_s(st) == NULL)
		return;
	rnic_tcp_stats(st, &s);
	struct rte_tel_data *c = rte_tel_data_alloc();
	if (c == NULL)
		return;
	rte_tel_data_start_dict(c);
#define T(f) rte_tel_data_add_dict_u64(c, #f, s.f)
	T(syns); T(cookies_sent); T(cookie_valid); T(cookie_invalid);
	T(established); T(active_opens); T(passive_opens); T(resets_in); T(resets_out);
	T(tcbs); T(segs_in); T(segs_out); T(retransmits); T(fast_retransmits); T(rtos);
	T(bad_csum); T(bad_hdr); T(bad_opts); T(out_of_window); T(paws_drops);
	T(challenge_acks); T(no_listener); T(backlog_full); T(dup_segs);
	T(spurious_rtos); T(tail_probes); T(pool_short); T(failover_moves);
	T(user_timeouts); T(keepalive_timeouts); T(retry_timeouts); T(handshake_acks);
	T(tcbs_cached); T(tcb_reuses); T(sack_reneging); T(pmtu_reductions);
	T(ooo_nomem); T(undo_nomem); T(tw_reused);
	T(mss_clamped); T(wscale_clamped); T(sack_bogus); T(ts_missing);
	T(challenge_acks_limited); T(oow_acks_limited); T(ooo_refused); T(ooo_pruned);
	T(ooo_mbufs); T(syn_sent_bad_ack); T(hold_refused);
#undef T
	snprintf(key, sizeof(key), "stack%u", st->id);
	rte_tel_data_add_dict_container(d, key, c, 0);
}

static int tel_tcp(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rnic_registry_foreach(tel_one, d);
	return 0;
}

void tcp_telemetry_init(void)
{
	static bool done;
	if (done)
		return;
	done = true;
	rte_telemetry_register_cmd("/rnic/tcp", tel_tcp,
				   "TCP: SYN stage (syns, cookies), connections, segments, drops by cause");
}
