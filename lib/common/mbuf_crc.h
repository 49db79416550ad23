/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Run a CRC over a byte range of an mbuf chain, one segment run at a time.
 * Shared by MPA's CRC32c (lib/iwarp) and RoCE's ICRC (lib/roce).
 */
#ifndef RNIC_COMMON_MBUF_CRC_H
#define RNIC_COMMON_MBUF_CRC_H

#include <errno.h>
#include <stdint.h>

#include <rte_mbuf.h>

/** A CRC step: continue @p crc over @p len bytes at @p p. */
typedef uint32_t (*rnic_crc_step)(uint32_t crc, const uint8_t *p, uint32_t len);

/**
 * Continue *@p crc over @p len bytes of @p m from @p off bytes into the
 * chain. @return 0, or -EINVAL when the chain is shorter than that.
 */
static inline int rnic_mbuf_crc(const struct rte_mbuf *m, uint32_t off,
				uint32_t len, uint32_t *crc, rnic_crc_step step)
{
	while (m != NULL && off >= m->data_len) {   /* whole segments before */
		off -= m->data_len;
		m = m->next;
	}
	while (len > 0) {
		if (m == NULL)
			return -EINVAL;
		uint32_t run = (uint32_t)m->data_len - off;
		if (run > len)
			run = len;
		*crc = step(*crc, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), run);
		len -= run;
		off = 0;
		m = m->next;
	}
	return 0;
}

#endif
