/* SPDX-License-Identifier: BSD-3-Clause */
/* CRC32c wrappers over ISA-L; see crc32c.h for the value and byte order. */
#include <errno.h>
#include <limits.h>

#include <isa-l/crc.h>
#include <rte_mbuf.h>

#include "common/mbuf_crc.h"
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

static uint32_t
crc32c_step(uint32_t crc, const uint8_t *p, uint32_t len)
{
	return rnic_crc32c(crc, p, len);
}

int
rnic_crc32c_mbuf(uint32_t crc, const struct rte_mbuf *m, uint32_t off,
		 uint32_t len, uint32_t *out)
{
	int rc = rnic_mbuf_crc(m, off, len, &crc, crc32c_step);
	if (rc == 0)
		*out = crc;
	return rc;
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
