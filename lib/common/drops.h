/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Drop causes of the generic receive and transmit paths (port, net, engine).
 * One X-macro list gives the enum and the telemetry names, so a cause can
 * never lack a name. Transport layers (tcp, iwarp, roce) keep their own
 * counter structs next to their code.
 */
#ifndef RNIC_COMMON_DROPS_H
#define RNIC_COMMON_DROPS_H

#define RNIC_DROP_CAUSES(X)                                   \
	X(ETH_SHORT,          "eth_short")                    \
	X(ETH_NOT_FOR_US,     "eth_not_for_us")               \
	X(ETH_TYPE,           "eth_type_unknown")             \
	X(ARP_MALFORMED,      "arp_malformed")                \
	X(ARP_NOT_FOR_US,     "arp_not_for_us")               \
	X(ARP_SHA_MISMATCH,   "arp_sha_mismatch")             \
	X(ARP_PENDING_FULL,   "arp_pending_full")             \
	X(ARP_UNRESOLVED,     "arp_unresolved")               \
	X(ARP_RATE_LIMITED,   "arp_rate_limited")             \
	X(IP_SHORT,           "ip_short")                     \
	X(IP_VERSION,         "ip_version")                   \
	X(IP_HDR_LEN,         "ip_hdr_len")                   \
	X(IP_TOTAL_LEN,       "ip_total_len")                 \
	X(IP_CHECKSUM,        "ip_checksum")                  \
	X(IP_FRAGMENT,        "ip_fragment")                  \
	X(IP_TTL,             "ip_ttl_expired")               \
	X(IP_BAD_SRC,         "ip_bad_src")                   \
	X(IP_NOT_FOR_US,      "ip_not_for_us")                \
	X(IP_PROTO,           "ip_proto_unknown")             \
	X(IP_NO_ROUTE,        "ip_no_route")                  \
	X(ICMP_SHORT,         "icmp_short")                   \
	X(ICMP_CHECKSUM,      "icmp_checksum")                \
	X(ICMP_TYPE,          "icmp_type_ignored")            \
	X(UDP_SHORT,          "udp_short")                    \
	X(UDP_LEN,            "udp_len")                      \
	X(UDP_CHECKSUM,       "udp_checksum")                 \
	X(UDP_NO_LISTENER,    "udp_no_listener")              \
	X(REDIRECT_FULL,      "redirect_ring_full")           \
	X(TX_FULL,            "tx_queue_full")                \
	X(NO_MBUF,            "no_mbuf")                      \
	X(LINK_DOWN,          "link_down")                    \
	X(IP6_SHORT,          "ip6_short")                    \
	X(IP6_VERSION,        "ip6_version")                  \
	X(IP6_PAYLOAD_LEN,    "ip6_payload_len")              \
	X(IP6_BAD_SRC,        "ip6_bad_src")                  \
	X(IP6_NOT_FOR_US,     "ip6_not_for_us")               \
	X(IP6_EXT_HDR,        "ip6_ext_hdr")                  \
	X(IP6_EXT_CHAIN,      "ip6_ext_chain_long")           \
	X(IP6_FRAGMENT,       "ip6_fragment")                 \
	X(IP6_PROTO,          "ip6_proto_unknown")            \
	X(IP6_NO_ROUTE,       "ip6_no_route")                 \
	X(ICMP6_SHORT,        "icmp6_short")                  \
	X(ICMP6_CHECKSUM,     "icmp6_checksum")               \
	X(ICMP6_TYPE,         "icmp6_type_ignored")           \
	X(ND_MALFORMED,       "nd_malformed")                 \
	X(ND_NOT_FOR_US,      "nd_not_for_us")                \
	X(ND_PENDING_FULL,    "nd_pending_full")              \
	X(ND_UNRESOLVED,      "nd_unresolved")                \
	X(ND_RATE_LIMITED,    "nd_rate_limited")              \
	X(ND_FRAGMENT,        "nd_in_fragment")               \
	X(ND_LOOPED,          "nd_looped_back")

enum rnic_drop_cause {
#define RNIC_DROP_ENUM(sym, name) RNIC_DROP_##sym,
	RNIC_DROP_CAUSES(RNIC_DROP_ENUM)
#undef RNIC_DROP_ENUM
	RNIC_DROP_MAX
};

/** Telemetry name of a drop cause. */
const char *rnic_drop_name(enum rnic_drop_cause c);

#endif
