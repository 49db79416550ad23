/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic's RSS key, programmed into every RSS-capable port (port.c) and used
 * by the engine's software steering (rnic_flow_owner), so that both agree.
 *
 * The symmetric key of Woo and Park ("Scalable TCP session monitoring with
 * symmetric receive-side scaling", 2012): 0x6d5a repeated. Its 16-bit
 * period makes the Toeplitz hash of (a, b, pa, pb) equal that of (b, a,
 * pb, pa), so both directions of a flow name the same indirection entry.
 * Two rnic processes with the same worker count then agree on a flow's
 * owner: the worker that owns it on one end sends it on its own TX queue,
 * which a link that maps a TX queue to the peer's RX queue of the same
 * index (net_memif, veth) delivers to the owner on the other end, and an
 * active open's source port chosen for its own worker is right for the
 * peer too. The paper reports an even spread over real traces;
 * tests/unit/engine checks the spread over 2 and 4 workers.
 */
#include <stdint.h>

#include "port/port.h"

const uint8_t rnic_rss_key[40] = {
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
};
