/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/port: ethdev set-up from config, RX/TX through the fault injector and
 * the optional pcapng capture, link state, telemetry.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/socket.h>

#include <rte_alarm.h>
#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_pcapng.h>
#include <rte_telemetry.h>

#include "common/burst.h"
#include "common/mbuf_cksum.h"
#include "port/port.h"

#define PORT_POOL_CACHE 256

/* "net_tap0,iface=x" -> "net_tap0" */
static void vdev_name(const char *spec, char *name, size_t len)
{
	size_t n = strcspn(spec, ",");
	if (n >= len)
		n = len - 1;
	memcpy(name, spec, n);
	name[n] = '\0';
}

/* Find or create the ethdev the config names; -errno on failure. */
static int port_find_dev(const struct rnic_port_cfg *cfg, uint16_t *port_id)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	int rc;

	if (cfg->ring[0]) {
		/* rte_eth_from_rings() names its ethdev "net_ring_<name>" */
		snprintf(name, sizeof(name), "net_ring_%s", cfg->ring);
		rc = rte_eth_dev_get_port_by_name(name, port_id);
		if (rc != 0)
			fprintf(stderr, "rnic: ring port '%s' does not exist "
				"(rnic_ring_pair() first)\n", cfg->ring);
		return rc ? -ENODEV : 0;
	}
	if (cfg->vdev[0]) {
		vdev_name(cfg->vdev, name, sizeof(name));
		if (rte_eth_dev_get_port_by_name(name, port_id) == 0)
			return 0;
		rc = rte_dev_probe(cfg->vdev);
		if (rc < 0) {
			fprintf(stderr, "rnic: cannot create vdev '%s': %s\n",
				cfg->vdev, strerror(-rc));
			return rc;
		}
		if (rte_eth_dev_get_port_by_name(name, port_id) != 0) {
			fprintf(stderr, "rnic: vdev '%s' is not an ethdev\n",
				cfg->vdev);
			return -ENODEV;
		}
		return 0;
	}
	if (cfg->pci[0]) {
		if (rte_eth_dev_get_port_by_name(cfg->pci, port_id) == 0)
			return 0;
		rc = rte_dev_probe(cfg->pci);
		if (rc == 0 && rte_eth_dev_get_port_by_name(cfg->pci, port_id) == 0)
			return 0;
		fprintf(stderr, "rnic: PCI device '%s' not usable (bound to a "
			"DPDK driver?)\n", cfg->pci);
		return -ENODEV;
	}
	fprintf(stderr, "rnic: port has no vdev, pci or ring\n");
	return -EINVAL;
}

/* Record a link state; a change is timed (down) and told to p->on_link.
 * Several threads may report the same change: only the one that flips the
 * flag counts it and calls the hook. */
static void port_link_changed(struct rnic_port *p, bool up)
{
	bool was = !up;
	if (!__atomic_compare_exchange_n(&p->link_up, &was, up, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	if (!up)
		p->link_down_tsc = rte_rdtsc();
	__atomic_fetch_add(&p->link_changes, 1, __ATOMIC_RELAXED);
	void (*hook)(struct rnic_port *, bool) = p->on_link;
	if (hook != NULL)
		hook(p, up);
}

static int port_lsc_cb(uint16_t port_id, enum rte_eth_event_type ev,
		       void *arg, void *ret)
{
	struct rnic_port *p = arg;
	struct rte_eth_link link;

	(void)ev;
	(void)ret;
	if (rte_eth_link_get_nowait(port_id, &link) != 0)
		return 0;
	bool up = link.link_status == RTE_ETH_LINK_UP, attached;
	/* a tap moved to another namespace: down for the PMD, which can no
	 * longer see it, while frames still flow (lib/port/tap_link.c) */
	bool away = !up && rnic_tap_link_away(p, &attached);
	p->link_away = away;
	port_link_changed(p, away ? attached : up);
	return 0;
}

void rnic_port_poll_link(struct rnic_port *p)
{
	port_lsc_cb(p->port_id, RTE_ETH_EVENT_INTR_LSC, p, NULL);
}

/* Configure RSS with rnic's key and table when the PMD can do it. */
static void port_conf_rss(struct rnic_port *p, const struct rte_eth_dev_info *di,
			  struct rte_eth_conf *conf)
{
	p->rss = false;
	if (p->nb_rxq < 2 || di->flow_type_rss_offloads == 0 ||
	    (di->hash_key_size != 0 && di->hash_key_size != 40))
		return;
	conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	conf->rx_adv_conf.rss_conf.rss_key = (uint8_t *)(uintptr_t)rnic_rss_key;
	conf->rx_adv_conf.rss_conf.rss_key_len = 40;
	conf->rx_adv_conf.rss_conf.rss_hf = di->flow_type_rss_offloads &
		(RTE_ETH_RSS_NONFRAG_IPV4_TCP | RTE_ETH_RSS_NONFRAG_IPV4_UDP |
		 RTE_ETH_RSS_IPV4 |
		 RTE_ETH_RSS_NONFRAG_IPV6_TCP);   /* as rnic_flow_owner6() hashes */
	p->rss = conf->rx_adv_conf.rss_conf.rss_hf != 0;
	if (!p->rss)
		conf->rxmode.mq_mode = RTE_ETH_MQ_RX_NONE;
}

/* Program the indirection table so that the NIC picks the worker
 * rnic_flow_owner() computes: entry i -> worker (i mod 128) mod nworkers,
 * whatever the table size (128, 512, ...). */
static void port_set_reta(struct rnic_port *p, const struct rte_eth_dev_info *di)
{
	uint16_t size = di->reta_size;
	struct rte_eth_rss_reta_entry64 reta[512 / RTE_ETH_RETA_GROUP_SIZE];

	if (!p->rss || size == 0 || size > 512)
		return;
	memset(reta, 0, sizeof(reta));
	for (uint16_t i = 0; i < size; i++) {
		reta[i / RTE_ETH_RETA_GROUP_SIZE].mask |= 1ULL << (i % RTE_ETH_RETA_GROUP_SIZE);
		reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] =
			rnic_reta_entry_worker(i & 127, p->nb_rxq);
	}
	if (rte_eth_dev_rss_reta_update(p->port_id, reta, size) != 0)
		p->rss = false; /* software steering still makes it right */
}

/*
 * net_tap gives the kernel side of the tap the same MAC as the DPDK side.
 * Both ends of the wire with one MAC break two things: enslaved to a Linux
 * bridge, the tap's MAC is a permanent local entry of the bridge, which
 * then never forwards frames for it to the tap; and both sides derive the
 * same IPv6 link-local address from it, so one side's duplicate address
 * detection fails. rnic answers with a MAC of its own instead, the tap's
 * with the last byte changed (locally administered, unicast), and leaves
 * the kernel side alone: that holds whenever the kernel side comes up
 * (giving the kernel side another MAC instead lost a race with a program
 * that set the tap up before rnic started the port: its link-local was
 * already made from rnic's MAC). The tap hands rnic every frame the kernel
 * sends, whatever its destination MAC.
 */
static void port_tap_own_mac(struct rnic_port *p, const char *driver)
{
	if (strcmp(driver, "net_tap") != 0)
		return;
	p->mac.addr_bytes[0] = (uint8_t)((p->mac.addr_bytes[0] | 0x02) & ~0x01);
	p->mac.addr_bytes[5] ^= 0x5a;
}

static int port_open_pcap(struct rnic_port *p)
{
	p->pcap_fd = open(p->cfg.pcap, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (p->pcap_fd < 0) {
		fprintf(stderr, "rnic: pcap '%s': %s\n", p->cfg.pcap, strerror(errno));
		return -errno;
	}
	p->pcap = rte_pcapng_fdopen(p->pcap_fd, NULL, NULL, "rnic", NULL);
	if (p->pcap == NULL) {
		close(p->pcap_fd);
		p->pcap_fd = -1;
		return -rte_errno;
	}
	char name[RTE_MEMPOOL_NAMESIZE];
	snprintf(name, sizeof(name), "rnic_pcap_%u_%u", p->stack_id, p->idx);
	p->pcap_pool = rte_pktmbuf_pool_create_by_ops(name, 1023, 0, 0,
		rte_pcapng_mbuf_size(p->mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN),
		rte_socket_id(), "ring_mp_mc");
	return p->pcap_pool ? 0 : -rte_errno;
}

/* Copy up to @p n frames for the capture (before the PMD owns them).
 * @return copies made, in order; frames past a failed copy are skipped. */
static uint16_t port_capture_copy(struct rnic_port *p, uint16_t q,
				  struct rte_mbuf **pkts, uint16_t n,
				  struct rte_mbuf **copies,
				  enum rte_pcapng_direction dir)
{
	uint64_t now = rte_get_tsc_cycles();
	uint16_t k = 0;

	for (uint16_t i = 0; i < n; i++) {
		copies[k] = rte_pcapng_copy(p->port_id, q, pkts[i], p->pcap_pool,
					    UINT32_MAX, now, dir);
		if (copies[k] == NULL)
			break; /* capture pool empty: the file misses frames */
		k++;
	}
	return k;
}

/* Write the first @p write of @p n copies to the file and free them all.
 * Workers of different queues share the file, hence the lock. */
static void port_capture_write(struct rnic_port *p, struct rte_mbuf **copies,
			       uint16_t n, uint16_t write)
{
	if (n == 0)
		return;
	if (write > n)
		write = n;
	if (write) {
		rte_spinlock_lock(&p->pcap_lock);
		rte_pcapng_write_packets(p->pcap, copies, write);
		rte_spinlock_unlock(&p->pcap_lock);
	}
	rte_pktmbuf_free_bulk(copies, n);
}

/* A port structure for ethdev @p port_id, not yet configured. */
static struct rnic_port *port_alloc(struct rnic_stack *st, unsigned stack_id, unsigned idx,
				    const struct rnic_port_cfg *cfg, uint16_t port_id)
{
	struct rnic_port *p = rte_zmalloc("rnic_port", sizeof(*p), RTE_CACHE_LINE_SIZE);
	if (p == NULL)
		return NULL;
	p->st = st;
	p->stack_id = stack_id;
	p->idx = idx;
	p->port_id = port_id;
	p->cfg = *cfg;
	p->pcap_fd = -1;
	rte_spinlock_init(&p->pcap_lock);
	rte_eth_dev_get_name_by_port(port_id, p->name);
	p->ip = cfg->ip;
	p->netmask = cfg->prefix_len ? ~0u << (32 - cfg->prefix_len) : 0;
	p->mtu = cfg->mtu ? cfg->mtu : 1500;
	return p;
}

/* Queues: one RX/TX pair per worker where the PMD has that many (fewer:
 * RX steered in software, TX queues shared under a lock), and what the
 * driver tells of its link. @return 0 or -ENOTSUP (no queue at all). */
static int port_plan_queues(struct rnic_port *p, const struct rte_eth_dev_info *di,
			    unsigned nb_workers)
{
	p->csum_link = strcmp(di->driver_name, "net_ring") == 0 && !p->cfg.sw_csum;
	p->close_on_intr_thread = strcmp(di->driver_name, "net_memif") == 0;
	p->nb_rxq = RTE_MIN(nb_workers, di->max_rx_queues);
	p->nb_txq = RTE_MIN(nb_workers, di->max_tx_queues);
	p->tx_shared = p->nb_txq < nb_workers;
	for (unsigned q = 0; q < RNIC_MAX_WORKERS; q++)
		rte_spinlock_init(&p->tx_lock[q]);
	return p->nb_rxq == 0 || p->nb_txq == 0 ? -ENOTSUP : 0;
}

/* The bytes of one mbuf of the pool: a frame of the MTU, and for
 * net_af_xdp its UMEM headroom within a page. @return 0 or -EINVAL. */
static int port_mbuf_room(const struct rnic_port *p, const struct rte_eth_dev_info *di,
			  uint32_t *room)
{
	*room = RTE_MAX((uint32_t)RTE_MBUF_DEFAULT_BUF_SIZE,
		(uint32_t)(p->mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN + 8 +
			   RTE_PKTMBUF_HEADROOM));
	/* net_af_xdp receives into the mbufs themselves (the pool is its
	 * UMEM), 256 bytes (XDP_PACKET_HEADROOM) past the mbuf headroom, and
	 * a pool object must not cross a 4 KiB page: without those 256 bytes
	 * the kernel dropped frames longer than about MTU - 230 (imissed) */
	if (strcmp(di->driver_name, "net_af_xdp") != 0)
		return 0;
	size_t max_room = (size_t)getpagesize() - sizeof(struct rte_mbuf) -
		RTE_CACHE_LINE_ROUNDUP(sizeof(struct rte_mempool_objhdr));
	*room += 256;
	if (*room > max_room) {
		fprintf(stderr, "rnic: port %u (%s): MTU %u is more than net_af_xdp "
			"takes in a page (MTU <= %zu)\n", p->idx, p->name, p->mtu,
			p->mtu - (*room - max_room));
		return -EINVAL;
	}
	return 0;
}

/* The port's mbuf pool, sized from cfg->mbufs, checked against what its
 * rings hold. @return 0, -ENOSPC (too small), -EINVAL or the mempool's. */
static int port_create_pool(struct rnic_port *p, const struct rte_eth_dev_info *di,
			    uint16_t rxd, uint16_t txd, unsigned nb_workers)
{
	/* pool: every descriptor, a burst in flight per worker, and margin.
	 * Not counted: a frame received by another stack's worker (net_ring
	 * in one process) is freed into that lcore's cache of this pool, out
	 * of this port's reach until the cache flushes (up to 1.5 x 256 per
	 * lcore); a pool near this minimum can run dry that way
	 * (docs/design.md, "Ports") */
	unsigned need = (p->nb_rxq * rxd) + (p->nb_txq * txd) +
			nb_workers * (PORT_POOL_CACHE + 4 * RNIC_BURST) + 1024;
	unsigned nmbufs = p->cfg.mbufs ? p->cfg.mbufs : 8191;
	if (nmbufs < need) {
		fprintf(stderr, "rnic: port %u (%s): mbufs = %u is too small, "
			"need at least %u for its queues\n", p->idx, p->name, nmbufs, need);
		return -ENOSPC;
	}
	uint32_t room;
	int rc = port_mbuf_room(p, di, &room);
	if (rc != 0)
		return rc;
	char pname[RTE_MEMPOOL_NAMESIZE];
	snprintf(pname, sizeof(pname), "rnic_%u_%u", p->stack_id, p->idx);
	int socket = rte_eth_dev_socket_id(p->port_id);
	p->pool = rte_pktmbuf_pool_create(pname, nmbufs, PORT_POOL_CACHE, 0, room,
					  socket < 0 ? SOCKET_ID_ANY : socket);
	if (p->pool == NULL) {
		fprintf(stderr, "rnic: port %u: mempool of %u mbufs: %s\n", p->idx,
			nmbufs, rte_strerror(rte_errno));
		return -rte_errno;
	}
	/* send queues may hold at most three quarters of what the RX rings
	 * leave: with every mbuf queued for sending, no ACK could come in to
	 * free one (rnic_port_pool_short) */
	p->tx_reserve = (nmbufs - p->nb_rxq * rxd) / 4;
	return 0;
}

/* MTU and offloads into @p conf. @return 0 or -EINVAL (an MTU the PMD
 * cannot take). */
static int port_conf_frames(struct rnic_port *p, const struct rte_eth_dev_info *di,
			    struct rte_eth_conf *conf)
{
	/* DPDK 22.11 takes the MTU at configure time (rxmode.mtu); a frame
	 * larger than one mbuf needs scattered RX where the PMD has it */
	conf->rxmode.mtu = p->mtu;
	if (di->max_rx_pktlen &&
	    (uint32_t)p->mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN > di->max_rx_pktlen) {
		fprintf(stderr, "rnic: port %u (%s, %s): MTU %u is more than the PMD "
			"allows (largest frame %u, so MTU <= %u)\n", p->idx, p->name,
			di->driver_name, p->mtu, di->max_rx_pktlen,
			di->max_rx_pktlen - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN);
		return -EINVAL;
	}
	if (p->mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN > RTE_MBUF_DEFAULT_DATAROOM &&
	    (di->rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER))
		conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
	/* TCP and RoCE chain payloads behind their headers: a PMD that can
	 * send chains is asked to (a NIC's fast TX path may not otherwise);
	 * for one that cannot (net_af_xdp sends the first segment's memory
	 * for the whole length) the port linearises each chain. An in-process
	 * ring passes the chain itself. */
	if (di->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	else
		p->tx_linearize = strcmp(di->driver_name, "net_ring") != 0;
	return 0;
}

/* Configure the ethdev with @p conf, its MTU and its queues. @return 0 or
 * the ethdev's -errno. */
static int port_configure(struct rnic_port *p, const struct rte_eth_dev_info *di,
			  const struct rte_eth_conf *conf, uint16_t rxd, uint16_t txd)
{
	uint16_t port_id = p->port_id;
	int rc = rte_eth_dev_configure(port_id, p->nb_rxq, p->nb_txq, conf);
	if (rc != 0) {
		fprintf(stderr, "rnic: port %u (%s): configure: %s\n", p->idx,
			p->name, strerror(-rc));
		return rc;
	}
	if (p->mtu != 1500 || di->max_mtu >= p->mtu) {
		rc = rte_eth_dev_set_mtu(port_id, p->mtu);
		/* no mtu_set op (net_ring, net_null): rxmode.mtu, which
		 * configure checked against the largest frame, is the MTU */
		if (rc == -ENOTSUP)
			rc = 0;
		if (rc != 0 && p->mtu != 1500) {
			fprintf(stderr, "rnic: port %u (%s, %s): MTU %u refused "
				"(max %u): %s\n", p->idx, p->name, di->driver_name,
				p->mtu, di->max_mtu, strerror(-rc));
			return rc;
		}
	}
	for (uint16_t q = 0; q < p->nb_rxq; q++) {
		rc = rte_eth_rx_queue_setup(port_id, q, rxd,
					    rte_eth_dev_socket_id(port_id), NULL, p->pool);
		if (rc != 0)
			return rc;
	}
	for (uint16_t q = 0; q < p->nb_txq; q++) {
		rc = rte_eth_tx_queue_setup(port_id, q, txd,
					    rte_eth_dev_socket_id(port_id), NULL);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Each queue's fault injectors, seeded apart from one another. */
static void port_faults_init(struct rnic_port *p)
{
	const struct rnic_port_cfg *cfg = &p->cfg;
	for (unsigned q = 0; q < RNIC_MAX_WORKERS; q++) {
		uint64_t s = cfg->fault_seed ^ ((uint64_t)(q + 1) * 0x9E3779B97F4A7C15ULL);
		rnic_fault_init(&p->rx_fault[q], &cfg->rx_fault, s ^ 0x5258);
		rnic_fault_init(&p->tx_fault[q], &cfg->tx_fault, s ^ 0x5458);
	}
}

/* Start the configured port: RSS table, the tap's kernel side, filters,
 * link state. @return 0 or the ethdev's -errno. */
static int port_start(struct rnic_port *p, const struct rte_eth_dev_info *di)
{
	rte_eth_macaddr_get(p->port_id, &p->mac);
	port_tap_own_mac(p, di->driver_name);
	int rc = rte_eth_dev_start(p->port_id);
	if (rc != 0) {
		fprintf(stderr, "rnic: port %u (%s): start: %s%s\n", p->idx, p->name,
			strerror(-rc), p->close_on_intr_thread && strstr(p->cfg.vdev, "role=client") ?
			" (a memif client needs its server listening on the socket first)" : "");
		return rc;
	}
	port_set_reta(p, di);
	rnic_tap_link_init(p, di);
	/* unicast and broadcast only; lib/net joins the IPv6 groups of a
	 * port with IPv6 addresses (nd.c) */
	rte_eth_promiscuous_disable(p->port_id);
	rte_eth_allmulticast_disable(p->port_id);
	rnic_port_poll_link(p);
	return 0;
}

/* Undo a failed rnic_port_open: set rte_errno from @p rc, free @p p. */
static void port_open_unwind(struct rnic_port *p, bool lsc, int rc)
{
	if (lsc)
		rte_eth_dev_callback_unregister(p->port_id, RTE_ETH_EVENT_INTR_LSC,
						port_lsc_cb, p);
	if (p->pcap)
		rte_pcapng_close(p->pcap);
	rte_mempool_free(p->pcap_pool);
	rte_mempool_free(p->pool);
	rte_free(p);
	rte_errno = rc < 0 ? -rc : (rc ? rc : EINVAL);
}

struct rnic_port *rnic_port_open(struct rnic_stack *st, unsigned stack_id, unsigned idx,
				 const struct rnic_port_cfg *cfg,
				 unsigned nb_workers)
{
	struct rte_eth_dev_info di;
	struct rte_eth_conf conf;
	uint16_t port_id;

	int rc = port_find_dev(cfg, &port_id);
	if (rc < 0) {
		rte_errno = -rc;
		return NULL;
	}
	struct rnic_port *p = port_alloc(st, stack_id, idx, cfg, port_id);
	if (p == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	memset(&conf, 0, sizeof(conf)); /* the failure path reads it */
	rc = rte_eth_dev_info_get(port_id, &di);
	rc = rc ? rc : port_plan_queues(p, &di, nb_workers);
	if (rc != 0)
		goto fail;
	port_conf_rss(p, &di, &conf);
	if (*di.dev_flags & RTE_ETH_DEV_INTR_LSC)
		conf.intr_conf.lsc = 1;
	uint16_t rxd = cfg->rx_desc ? cfg->rx_desc : 1024;
	uint16_t txd = cfg->tx_desc ? cfg->tx_desc : 1024;
	rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &rxd, &txd);
	rc = port_create_pool(p, &di, rxd, txd, nb_workers);
	rc = rc ? rc : port_conf_frames(p, &di, &conf);
	rc = rc ? rc : port_configure(p, &di, &conf, rxd, txd);
	if (rc != 0)
		goto fail;
	port_faults_init(p);
	if (conf.intr_conf.lsc)
		rte_eth_dev_callback_register(port_id, RTE_ETH_EVENT_INTR_LSC,
					      port_lsc_cb, p);
	rc = port_start(p, &di);
	if (rc != 0)
		goto fail;
	if (cfg->pcap[0] && (rc = port_open_pcap(p)) != 0) {
		rte_eth_dev_stop(port_id);
		goto fail;
	}
	return p;
fail:
	port_open_unwind(p, conf.intr_conf.lsc, rc);
	return NULL;
}

/*
 * Give the ethdev back. Ring ports stay: their peer may still use the other
 * end. A vdev is unplugged (its driver closes the ethdev), so a later open
 * of the same spec probes it afresh instead of finding a half-gone device.
 */
static void port_release_dev(struct rnic_port *p)
{
	struct rte_eth_dev_info di;

	if (p->cfg.ring[0])
		return;
	if (p->cfg.vdev[0] && rte_eth_dev_info_get(p->port_id, &di) == 0 &&
	    di.device != NULL && rte_dev_remove(di.device) == 0)
		return;
	rte_eth_dev_close(p->port_id);
}

/*
 * net_memif in DPDK 22.11 tears a connection down (memif_disconnect(): the
 * regions and queue rings freed, the control channel unregistered) from
 * two threads: the caller of rte_eth_dev_stop()/close, and the EAL
 * interrupt thread when the peer's disconnect message or the socket's
 * hang-up arrives. When both peers close at once, as two rnic processes do
 * at the end of a run, the two frees race and the process crashed (a
 * SIGSEGV in the interrupt thread, or "EAL: Error: Invalid memory", in
 * about one teardown of eight). Running stop and close on the interrupt
 * thread itself, as an alarm callback, serialises them with memif's own
 * handlers. Other PMDs are stopped and closed by the caller as before.
 */
struct port_intr_call {
	struct rnic_port *p;
	void (*fn)(struct rnic_port *p);
	volatile bool done;
};

static void port_intr_call_cb(void *arg)
{
	struct port_intr_call *c = arg;

	c->fn(c->p);
	__atomic_store_n(&c->done, true, __ATOMIC_RELEASE);
}

/* fn(p) on the EAL interrupt thread for net_memif ports (waits for it),
 * directly otherwise or when the alarm cannot be set */
static void port_call_serialised(struct rnic_port *p, void (*fn)(struct rnic_port *))
{
	struct port_intr_call c = { .p = p, .fn = fn, .done = false };

	if (!p->close_on_intr_thread || rte_eal_alarm_set(1, port_intr_call_cb, &c) != 0) {
		fn(p);
		return;
	}
	while (!__atomic_load_n(&c.done, __ATOMIC_ACQUIRE))
		rte_delay_us_sleep(200);
}

static void port_stop_dev(struct rnic_port *p)
{
	rte_eth_dev_stop(p->port_id);
}

/* Stop, free what the injectors hold, give back the device, then the pool
 * (kept, with a message, while mbufs are still out: freeing it would let
 * their owners write into freed memory). */
void rnic_port_close(struct rnic_port *p)
{
	if (p == NULL)
		return;
	port_call_serialised(p, port_stop_dev);
	for (unsigned q = 0; q < RNIC_MAX_WORKERS; q++) {
		rnic_fault_flush(&p->rx_fault[q]);
		rnic_fault_flush(&p->tx_fault[q]);
	}
	rte_eth_dev_callback_unregister(p->port_id, RTE_ETH_EVENT_INTR_LSC,
					port_lsc_cb, p);
	port_call_serialised(p, port_release_dev);
	if (p->pcap)
		rte_pcapng_close(p->pcap); /* closes the fd */
	rte_mempool_free(p->pcap_pool);
	unsigned out = rte_mempool_in_use_count(p->pool);
	if (out != 0)
		fprintf(stderr, "rnic: port %u (%s): %u mbufs still in use at close\n",
			p->idx, p->name, out);
	else
		rte_mempool_free(p->pool);
	rte_free(p);
}

/* --- checksums on in-process ring links ----------------------------------- */

/* The TCP checksum of @p len bytes of chain @p m from @p off, given the
 * pseudo header's sum @p phdr: not rte_ipv4/6_udptcp_cksum_mbuf(), whose
 * sum of a chain with odd-length pieces (a zero-copy FPDU of a multi-SGE
 * work request, lib/iwarp/iw_tx.c) is wrong (common/mbuf_cksum.h); the
 * receiver dropped such a segment for ever. */
static uint16_t port_tcp_cksum_chain(const struct rte_mbuf *m, uint32_t off, uint32_t len,
				     uint32_t phdr)
{
	uint16_t c = (uint16_t)~rnic_mbuf_cksum(m, off, len, phdr);
	return c == 0 ? 0xffff : c;
}

/* port_csum_finish() (below) for TCP over IPv6 (rnic sends it without
 * extension headers). */
static void port_csum_finish6(struct rte_mbuf *m)
{
	const uint32_t off = sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv6_hdr);
	if (rte_pktmbuf_data_len(m) < off + sizeof(struct rte_tcp_hdr))
		return;
	const struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *,
							        sizeof(struct rte_ether_hdr));
	uint32_t plen = rte_be_to_cpu_16(ip->payload_len);
	if (ip->proto != IPPROTO_TCP || plen < sizeof(struct rte_tcp_hdr) ||
	    off + plen > rte_pktmbuf_pkt_len(m))
		return;
	struct rte_tcp_hdr *th = rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *, off);
	th->cksum = 0;
	th->cksum = port_tcp_cksum_chain(m, off, plen, rte_ipv6_phdr_cksum(ip, 0));
}

/* Write the TCP checksum of a frame whose sender left it to the link
 * (csum_link): before a capture or the fault injector sees it, so that a
 * capture shows the frame as it would be on a wire and a corrupted frame
 * fails the receiver's check. Frames that are not Ethernet/IPv4/TCP in
 * full are left as they are (the receiver drops them anyway). */
static void port_csum_finish(struct rte_mbuf *m)
{
	m->ol_flags &= ~RTE_MBUF_F_TX_TCP_CKSUM;
	if (rte_pktmbuf_data_len(m) >= sizeof(struct rte_ether_hdr) &&
	    rte_pktmbuf_mtod(m, const struct rte_ether_hdr *)->ether_type ==
	    RTE_BE16(RTE_ETHER_TYPE_IPV6)) {
		port_csum_finish6(m);
		return;
	}
	if (rte_pktmbuf_data_len(m) < sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr))
		return;
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eh + 1);
	uint32_t ihl = rte_ipv4_hdr_len(ip);
	uint32_t tot = rte_be_to_cpu_16(ip->total_length);
	uint32_t off = (uint32_t)sizeof(*eh) + ihl;
	if (eh->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4) || ip->next_proto_id != IPPROTO_TCP ||
	    ihl < sizeof(*ip) || tot < ihl + sizeof(struct rte_tcp_hdr) ||
	    off + sizeof(struct rte_tcp_hdr) > rte_pktmbuf_data_len(m) ||
	    sizeof(*eh) + tot > rte_pktmbuf_pkt_len(m))
		return;
	struct rte_tcp_hdr *th = rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *, off);
	th->cksum = 0;
	th->cksum = port_tcp_cksum_chain(m, off, tot - ihl, rte_ipv4_phdr_cksum(ip, 0));
}

/* A burst from the PMD. On a ring link, a frame whose TCP checksum was left
 * to the link is marked good (RTE_MBUF_F_RX_L4_CKSUM_GOOD), or with @p finish
 * (a capture or the RX injector comes next) gets its checksum written; any
 * other frame is checked by TCP as usual (a stale flag from a reused mbuf
 * is cleared). */
static uint16_t port_rx_burst(struct rnic_port *p, uint16_t q, struct rte_mbuf **pkts,
			      uint16_t n, bool finish)
{
	uint16_t got = rte_eth_rx_burst(p->port_id, q, pkts, n);
	if (!p->csum_link)
		return got;
	for (uint16_t k = 0; k < got; k++) {
		struct rte_mbuf *m = pkts[k];
		m->ol_flags &= ~RTE_MBUF_F_RX_L4_CKSUM_MASK;
		if (!(m->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM))
			continue;
		if (finish) {
			port_csum_finish(m);
		} else {
			m->ol_flags &= ~RTE_MBUF_F_TX_TCP_CKSUM;
			m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
		}
	}
	return got;
}

/*
 * RX: burst from the PMD, capture what came off the wire, then the RX fault
 * injector. Frames the injector held (delay, reorder) and whose time has
 * come are returned first.
 */
uint16_t rnic_port_rx(struct rnic_port *p, uint16_t q, struct rte_mbuf **pkts,
		      uint16_t n)
{
	struct rte_mbuf *copies[RNIC_BURST];
	struct rnic_fault *f;
	uint16_t got, k;

	if (q >= p->nb_rxq || n == 0)
		return 0;
	if (unlikely(!p->link_up)) {
		/* the cable is out: nothing arrives. Frames the PMD still
		 * has (a net_ring's peer kept sending) are thrown away;
		 * those the injector holds wait for the link to return. */
		got = rte_eth_rx_burst(p->port_id, q, pkts, n);
		if (got)
			rte_pktmbuf_free_bulk(pkts, got);
		p->link_down_drops[q] += got;
		return 0;
	}
	f = &p->rx_fault[q];
	if (!f->enabled) {
		if (p->pcap == NULL)
			return port_rx_burst(p, q, pkts, n, false);
		got = port_rx_burst(p, q, pkts, RTE_MIN(n, (uint16_t)RNIC_BURST), true);
		if (got)
			port_capture_write(p, copies, port_capture_copy(p, q, pkts, got,
					   copies, RTE_PCAPNG_DIRECTION_IN), got);
		return got;
	}
	struct rte_mbuf *raw[RNIC_BURST];
	uint64_t now = rte_rdtsc();
	k = (uint16_t)rnic_fault_release(f, pkts, n, now);
	/* read at most half the room that is left: duplicates need the rest */
	uint16_t room = (uint16_t)(n - k);
	uint16_t want = RTE_MIN(room > 1 ? room / 2 : room, (uint16_t)RNIC_BURST);
	got = want ? port_rx_burst(p, q, raw, want, true) : 0;
	if (got && p->pcap)
		port_capture_write(p, copies, port_capture_copy(p, q, raw, got,
				   copies, RTE_PCAPNG_DIRECTION_IN), got);
	k += (uint16_t)rnic_fault_apply(f, raw, got, pkts + k, n - k, now);
	return k;
}

/* Send frames the injector produced or released (not the caller's any
 * more): capture what the PMD takes, hold the rest again for the next poll;
 * only when the hold is full are frames freed, counted as hold_full (not
 * as injected drops: the sender believes them sent, and a RoCE probe lost
 * here costs a timeout; docs/design.md). */
static uint16_t port_tx_all(struct rnic_port *p, uint16_t q, struct rte_mbuf **m,
			    uint16_t n, uint64_t now)
{
	struct rte_mbuf *copies[RNIC_TXBUF * 2 + 2];
	struct rnic_fault *f = &p->tx_fault[q];
	uint16_t nc = 0, sent;

	if (n == 0)
		return 0;
	if (p->pcap)
		nc = port_capture_copy(p, q, m, RTE_MIN(n, (uint16_t)RTE_DIM(copies)),
				       copies, RTE_PCAPNG_DIRECTION_OUT);
	sent = rte_eth_tx_burst(p->port_id, q, m, n);
	port_capture_write(p, copies, nc, sent);
	if (sent < n) {
		p->tx_refused[q] += n - sent;
		unsigned kept = rnic_fault_requeue(f, m + sent, n - sent, now);
		if (sent + kept < n) {
			f->stats.hold_full += n - sent - kept;
			rte_pktmbuf_free_bulk(m + sent + kept, n - sent - kept);
		}
	}
	return sent;
}

/*
 * TX: the TX fault injector, then the capture of what the PMD accepts, then
 * the PMD. Without faults, the caller keeps what the PMD refuses. With
 * faults, every frame handed to the injector is consumed (dropped ones count
 * as sent); refused output is held and retried by rnic_port_fault_poll().
 */
/*
 * For a PMD that sends single-segment frames only: copy each chain into its
 * first segment (whose room, from the port's pool, holds a whole frame), or
 * into a fresh mbuf. @return how many frames from the front may go on; a
 * frame that cannot be made whole is freed and counted when it is first
 * (*dropped = 1), so the caller moves past it.
 */
static uint16_t port_linearize(struct rnic_port *p, uint16_t q, struct rte_mbuf **pkts,
			       uint16_t n, uint16_t *dropped)
{
	*dropped = 0;
	for (uint16_t k = 0; k < n; k++) {
		struct rte_mbuf *m = pkts[k];

		if (m->nb_segs == 1)
			continue;
		/* in place only into a first segment of its own */
		if (RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1 &&
		    rte_pktmbuf_linearize(m) == 0)
			continue;
		struct rte_mbuf *c = rte_pktmbuf_copy(m, p->pool, 0, UINT32_MAX);
		if (c != NULL && c->nb_segs == 1) {
			rte_pktmbuf_free(m);
			pkts[k] = c;
			continue;
		}
		rte_pktmbuf_free(c);
		if (k > 0)
			return k;
		rte_pktmbuf_free(m);
		p->tx_unsendable[q]++;
		*dropped = 1;
		return 0;
	}
	return n;
}

static uint16_t port_tx(struct rnic_port *p, uint16_t q, struct rte_mbuf **pkts,
			uint16_t n)
{
	struct rnic_fault *f;

	if (unlikely(p->tx_linearize)) {
		uint16_t dropped;
		n = port_linearize(p, q, pkts, n, &dropped);
		if (dropped)
			return 1;
	}
	if (unlikely(!p->link_up)) {
		rte_pktmbuf_free_bulk(pkts, n);
		p->link_down_drops[q] += n;
		return n;
	}
	f = &p->tx_fault[q];
	if (!f->enabled && p->pcap == NULL)
		return rte_eth_tx_burst(p->port_id, q, pkts, n);
	if (p->csum_link)   /* the capture and the injector see real checksums */
		for (uint16_t k = 0; k < n; k++)
			if (pkts[k]->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM)
				port_csum_finish(pkts[k]);
	if (!f->enabled) {
		struct rte_mbuf *copies[RNIC_TXBUF];
		uint16_t take = RTE_MIN(n, (uint16_t)RNIC_TXBUF), nc, sent;

		nc = port_capture_copy(p, q, pkts, take, copies,
				       RTE_PCAPNG_DIRECTION_OUT);
		sent = rte_eth_tx_burst(p->port_id, q, pkts, take);
		port_capture_write(p, copies, nc, sent);
		return sent;
	}
	/* room: what is due from earlier, then each frame, its duplicate and
	 * one reordered frame released behind it */
	struct rte_mbuf *out[RNIC_TXBUF * 2 + 2];
	uint64_t now = rte_rdtsc();
	uint16_t take = RTE_MIN(n, (uint16_t)RNIC_TXBUF);
	unsigned k = rnic_fault_release(f, out, RTE_DIM(out) - 2u * take - 1u, now);
	k += rnic_fault_apply(f, pkts, take, out + k, RTE_DIM(out) - k, now);
	port_tx_all(p, q, out, (uint16_t)k, now);
	return take;
}

/* A port with fewer TX queues than workers (net_af_xdp on veth has one)
 * shares them: worker w sends on queue w % nb_txq, under that queue's lock
 * (the PMD's queue, its fault injector and its counters). Ports with a
 * queue per worker take no lock. */
uint16_t rnic_port_tx(struct rnic_port *p, uint16_t q, struct rte_mbuf **pkts,
		      uint16_t n)
{
	uint16_t sent;

	if (q >= p->nb_txq || n == 0)
		return 0;
	if (!p->tx_shared)
		return port_tx(p, q, pkts, n);
	rte_spinlock_lock(&p->tx_lock[q]);
	sent = port_tx(p, q, pkts, n);
	rte_spinlock_unlock(&p->tx_lock[q]);
	return sent;
}

static unsigned port_fault_poll(struct rnic_port *p, uint16_t q);

/* Transmit TX frames the injector held whose time has come. RX holds are
 * handed out by the next rnic_port_rx() on the queue. @return frames sent. */
unsigned rnic_port_fault_poll(struct rnic_port *p, uint16_t q)
{
	unsigned sent;

	if (q >= p->nb_txq || !p->tx_fault[q].enabled)
		return 0;
	if (!p->tx_shared)
		return port_fault_poll(p, q);
	rte_spinlock_lock(&p->tx_lock[q]);
	sent = port_fault_poll(p, q);
	rte_spinlock_unlock(&p->tx_lock[q]);
	return sent;
}

static unsigned port_fault_poll(struct rnic_port *p, uint16_t q)
{
	struct rte_mbuf *out[RNIC_BURST];
	uint64_t now;
	unsigned n;

	now = rte_rdtsc();
	n = rnic_fault_release(&p->tx_fault[q], out, RTE_DIM(out), now);
	if (unlikely(!p->link_up)) {
		if (n)
			rte_pktmbuf_free_bulk(out, n);
		p->link_down_drops[q] += n;
		return n;
	}
	return port_tx_all(p, q, out, (uint16_t)n, now);
}

int rnic_port_set_link(struct rnic_port *p, bool up)
{
	int rc = up ? rte_eth_dev_set_link_up(p->port_id) :
		      rte_eth_dev_set_link_down(p->port_id);
	port_link_changed(p, up);
	return rc == -ENOTSUP ? 0 : rc;
}

unsigned rnic_port_mbufs_in_use(const struct rnic_port *p)
{
	return rte_mempool_in_use_count(p->pool);
}

void rnic_port_fault_set_ce(struct rnic_port *p, double rx_pct, double tx_pct)
{
	for (unsigned q = 0; q < p->nb_rxq; q++)
		rnic_fault_set_ce(&p->rx_fault[q], rx_pct);
	for (unsigned q = 0; q < p->nb_txq; q++)
		rnic_fault_set_ce(&p->tx_fault[q], tx_pct);
}

void rnic_port_fault_stats(const struct rnic_port *p, struct rnic_fault_stats *s)
{
	memset(s, 0, sizeof(*s));
	for (unsigned q = 0; q < RNIC_MAX_WORKERS; q++) {
		const struct rnic_fault_stats *d[2] = { &p->rx_fault[q].stats,
							&p->tx_fault[q].stats };
		for (int i = 0; i < 2; i++) {
			s->seen += d[i]->seen;
			s->dropped += d[i]->dropped;
			s->duplicated += d[i]->duplicated;
			s->reordered += d[i]->reordered;
			s->corrupted += d[i]->corrupted;
			s->delayed += d[i]->delayed;
			s->hold_full += d[i]->hold_full;
			s->ce_marked += d[i]->ce_marked;
		}
	}
}

void rnic_port_telemetry(const struct rnic_port *p, struct rte_tel_data *d)
{
	struct rte_eth_stats es;
	struct rnic_fault_stats fs;
	char buf[64];

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", p->name);
	rte_tel_data_add_dict_int(d, "port_id", p->port_id);
	rte_ether_format_addr(buf, sizeof(buf), &p->mac);
	rte_tel_data_add_dict_string(d, "mac", buf);
	snprintf(buf, sizeof(buf), "%u.%u.%u.%u/%u", p->ip >> 24, (p->ip >> 16) & 255,
		 (p->ip >> 8) & 255, p->ip & 255, p->cfg.prefix_len);
	rte_tel_data_add_dict_string(d, "ip", buf);
	/* IPv6: each address with its prefix, "dup" when DAD found it in use */
	char b6[(RNIC_ADDRSTRLEN + 9) * (1 + RNIC_PORT_IP6_MAX)] = "";
	for (unsigned i = 0; i < p->n_ip6; i++) {
		char a[RNIC_ADDRSTRLEN];
		struct rnic_addr ad = rnic_addr_v6(p->ip6[i]);
		size_t l = strlen(b6);
		snprintf(b6 + l, sizeof(b6) - l, "%s%s/%u%s", l ? " " : "",
			 rnic_addr_str(&ad, a, sizeof(a)), p->ip6_prefix[i],
			 p->ip6_state[i] == RNIC_IP6_DUPLICATE ? " dup" : "");
	}
	rte_tel_data_add_dict_string(d, "ip6", b6);
	rte_tel_data_add_dict_int(d, "mtu", p->mtu);
	rte_tel_data_add_dict_int(d, "link_up", p->link_up);
	rte_tel_data_add_dict_u64(d, "link_changes", p->link_changes);
	rte_tel_data_add_dict_int(d, "link_away", p->link_away);
	uint64_t unsendable = 0;
	for (unsigned q = 0; q < RNIC_MAX_WORKERS; q++)
		unsendable += p->tx_unsendable[q];
	rte_tel_data_add_dict_int(d, "tx_linearize", p->tx_linearize);
	rte_tel_data_add_dict_u64(d, "tx_unsendable", unsendable);
	rte_tel_data_add_dict_u64(d, "link_down_drops", rnic_port_link_down_drops(p));
	/* failover: the addresses taken over, the port serving ours */
	buf[0] = '\0';
	for (unsigned i = 0, n = p->n_taken; i < n && i < RNIC_MAX_PORTS; i++) {
		uint32_t a = p->taken_ip[i];
		size_t l = strlen(buf);
		if (a != 0 && l + 17 < sizeof(buf))
			snprintf(buf + l, sizeof(buf) - l, "%s%u.%u.%u.%u", l ? " " : "",
				 a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
	}
	rte_tel_data_add_dict_string(d, "taken_over", buf);
	rte_tel_data_add_dict_int(d, "served_by", p->taken_by ? p->taken_by - 1 : (int)p->idx);
	rte_tel_data_add_dict_int(d, "rx_queues", p->nb_rxq);
	rte_tel_data_add_dict_int(d, "tx_queues", p->nb_txq);
	rte_tel_data_add_dict_int(d, "rss", p->rss);
	rte_tel_data_add_dict_u64(d, "mbufs_in_use", rnic_port_mbufs_in_use(p));
	if (rte_eth_stats_get(p->port_id, &es) == 0) {
		rte_tel_data_add_dict_u64(d, "ipackets", es.ipackets);
		rte_tel_data_add_dict_u64(d, "opackets", es.opackets);
		rte_tel_data_add_dict_u64(d, "ibytes", es.ibytes);
		rte_tel_data_add_dict_u64(d, "obytes", es.obytes);
		rte_tel_data_add_dict_u64(d, "imissed", es.imissed);
		rte_tel_data_add_dict_u64(d, "ierrors", es.ierrors);
		rte_tel_data_add_dict_u64(d, "oerrors", es.oerrors);
		rte_tel_data_add_dict_u64(d, "rx_nombuf", es.rx_nombuf);
	}
	int nx = rte_eth_xstats_get(p->port_id, NULL, 0);
	if (nx > 0 && nx < 512) {
		struct rte_eth_xstat *xs = calloc(nx, sizeof(*xs));
		struct rte_eth_xstat_name *xn = calloc(nx, sizeof(*xn));
		if (xs && xn && rte_eth_xstats_get(p->port_id, xs, nx) == nx &&
		    rte_eth_xstats_get_names(p->port_id, xn, nx) == nx) {
			for (int i = 0; i < nx; i++) {
				/* telemetry keys are at most 63 characters */
				snprintf(buf, sizeof(buf), "x_%.61s", xn[i].name);
				rte_tel_data_add_dict_u64(d, buf, xs[i].value);
			}
		}
		free(xs);
		free(xn);
	}
	rnic_port_fault_stats(p, &fs);
	rte_tel_data_add_dict_u64(d, "fault_seen", fs.seen);
	rte_tel_data_add_dict_u64(d, "fault_dropped", fs.dropped);
	rte_tel_data_add_dict_u64(d, "fault_duplicated", fs.duplicated);
	rte_tel_data_add_dict_u64(d, "fault_reordered", fs.reordered);
	rte_tel_data_add_dict_u64(d, "fault_corrupted", fs.corrupted);
	rte_tel_data_add_dict_u64(d, "fault_ce_marked", fs.ce_marked);
	rte_tel_data_add_dict_u64(d, "fault_delayed", fs.delayed);
	rte_tel_data_add_dict_u64(d, "fault_hold_full", fs.hold_full);
}
