/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Burst sizes the ports (lib/port) and the workers (lib/engine) agree on.
 */
#ifndef RNIC_COMMON_BURST_H
#define RNIC_COMMON_BURST_H

#define RNIC_BURST       32   /* frames per RX poll and per TX burst */
#define RNIC_TXBUF       64   /* frames a worker buffers per port before a flush */

#endif
