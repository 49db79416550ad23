/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/net as a protocol module of the engine: per stack, each port's ARP
 * table, and the hooks the engine's loop calls (struct rnic_net_hooks:
 * input, steered input at L4, gratuitous ARP, ARP and ND ageing, counters). The
 * engine names nothing in lib/net; this file is the only place that ties
 * them together.
 */
#include <errno.h>
#include <stdint.h>

#include <rte_telemetry.h>

#include "engine/stack.h"
#include "net/ipv6.h"
#include "net/net.h"
#include "port/port.h"

static void net_counts(const struct rnic_stack *st, uint64_t *requests, uint64_t *replies)
{
	struct rnic_arp_stats as;
	rnic_arp_stats(st, &as);
	*requests = as.requests_in + as.requests_out;
	*replies = as.replies_in + as.replies_out;
}

static void net_telemetry(const struct rnic_stack *st, struct rte_tel_data *d)
{
	struct rnic_nd_stats ns;   /* IPv6 neighbour discovery */
	rnic_nd_stats(st, &ns);
#define TEL_ND(f) rte_tel_data_add_dict_u64(d, "nd_" #f, ns.f)
	TEL_ND(ns_in); TEL_ND(na_in); TEL_ND(ns_out); TEL_ND(na_out);
	TEL_ND(unsolicited_na_out); TEL_ND(dad_ns_out); TEL_ND(dad_conflicts);
	TEL_ND(entries); TEL_ND(timeouts); TEL_ND(probes_out); TEL_ND(ptb_in);
	TEL_ND(create_refused);
#undef TEL_ND
	struct rnic_arp_stats as;
	rnic_arp_stats(st, &as);
	rte_tel_data_add_dict_u64(d, "arp_create_refused", as.create_refused);
	rte_tel_data_add_dict_u64(d, "arp_gratuitous_in", as.gratuitous_in);
	rte_tel_data_add_dict_u64(d, "arp_override_refused", as.override_refused);
	rte_tel_data_add_dict_u64(d, "arp_override_taken", as.override_taken);
}

static const struct rnic_net_hooks net_hooks = {
	.input = rnic_net_input,
	.input_l4 = rnic_net_input_l4,
	.announce = rnic_arp_announce,
	.poll = rnic_arp_poll,
	.counts = net_counts,
	.telemetry = net_telemetry,
};

static void net_stack_fini(struct rnic_stack *st)
{
	for (unsigned i = 0; i < st->n_ports; i++)
		rnic_arp_table_free(st->ports[i]);   /* and the frames they hold */
}

static int net_stack_init(struct rnic_stack *st)
{
	for (unsigned i = 0; i < st->n_ports; i++) {
		int rc = rnic_arp_table_create(st->ports[i]);
		if (rc != 0) {
			net_stack_fini(st);
			return rc;
		}
	}
	return rnic_stack_set_net(st, &net_hooks);
}

const struct rnic_proto_ops rnic_net_proto = {
	.name = "net",
	.stack_init = net_stack_init,
	.stack_fini = net_stack_fini,
};
