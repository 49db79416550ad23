/* SPDX-License-Identifier: BSD-3-Clause */
/* CRC32c wrappers over ISA-L; see crc32c.h for the value and byte order. */
#include <errno.h>
#include <limits.h>

#include <isa-l/crc.h>
#include <rte_mbuf.h>

#include "iwarp/crc32c.h"

uint32_t
rnic_crc32c(uint32_t crc, const void *buf, size_t len)
{
	/* crc32_iscsi neither inverts in nor out: do both here so the
	 * running value is always a finished CRC. It takes an int length. */
	uint32_t c = ~crc;
	const uint8_t *p = buf;

	while (len > 0) {
		int n = len > (size_t)INT_MAX ? INT_MAX : (int)len;

		c = crc32_iscsi((unsigned char *)(uintptr_t)p, n, c);
		p += n;
		len -= (size_t)n;
	}
	return ~c;
}

int
rnic_crc32c_mbuf(uint32_t crc, const struct rte_mbuf *m, uint32_t off,
		 uint32_t len, uint32_t *out)
{
	/* Skip whole segments before @off, then feed segment runs. */
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	while (len > 0) {
		uint32_t run;

		if (m == NULL)
			return -EINVAL;
		run = m->data_len - off;
		if (run > len)
			run = len;
		crc = rnic_crc32c(crc, rte_pktmbuf_mtod_offset(m, const uint8_t *,
							       off), run);
		len -= run;
		off = 0;
		m = m->next;
	}
	*out = crc;
	return 0;
}

void
rnic_crc32c_put(uint8_t out[4], uint32_t crc)
{
	out[0] = (uint8_t)crc;
	out[1] = (uint8_t)(crc >> 8);
	out[2] = (uint8_t)(crc >> 16);
	out[3] = (uint8_t)(crc >> 24);
}

uint32_t
rnic_crc32c_get(const uint8_t in[4])
{
	return (uint32_t)in[0] | ((uint32_t)in[1] << 8) |
	       ((uint32_t)in[2] << 16) | ((uint32_t)in[3] << 24);
}
