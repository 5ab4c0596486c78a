#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "shim.h"
#include "_cgo_export.h"

int ccbed_eal_init(int argc, char **argv) { return rte_eal_init(argc, argv); }

int ccbed_eal_init_captured(int argc, char **argv, int out_fd, int err_fd, int *captured)
{
	int saved_out, saved_err, rc, err;

	*captured = 0;
	fflush(stdout);
	fflush(stderr);
	saved_out = dup(1);
	saved_err = dup(2);
	if (saved_out < 0 || saved_err < 0 || dup2(out_fd, 1) < 0) {
		if (saved_out >= 0)
			close(saved_out);
		if (saved_err >= 0)
			close(saved_err);
		return rte_eal_init(argc, argv);
	}
	if (dup2(err_fd, 2) < 0) {
		dup2(saved_out, 1);
		close(saved_out);
		close(saved_err);
		return rte_eal_init(argc, argv);
	}
	rc = rte_eal_init(argc, argv);
	err = rte_errno;
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	rte_errno = err;
	*captured = 1;
	return rc;
}
int ccbed_errno(void) { return rte_errno; }

uint16_t ccbed_rx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(port, queue, pkts, n);
}

uint16_t ccbed_tx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_tx_burst(port, queue, pkts, n);
}

uint16_t ccbed_rx_tx_burst(uint16_t rxport, uint16_t rxq, uint16_t txport, uint16_t txq,
			   struct rte_mbuf **pkts, uint16_t n, uint16_t *sent)
{
	uint16_t nb = rte_eth_rx_burst(rxport, rxq, pkts, n);
	uint16_t nt = 0;
	if (nb > 0) {
		nt = rte_eth_tx_burst(txport, txq, pkts, nb);
		if (nt < nb)
			rte_pktmbuf_free_bulk(pkts + nt, nb - nt);
	}
	*sent = nt;
	return nb;
}

int ccbed_pktmbuf_alloc_bulk(struct rte_mempool *mp, struct rte_mbuf **pkts, unsigned n)
{
	return rte_pktmbuf_alloc_bulk(mp, pkts, n);
}

void ccbed_pktmbuf_free_bulk(struct rte_mbuf **pkts, unsigned n) { rte_pktmbuf_free_bulk(pkts, n); }
unsigned ccbed_mempool_avail(struct rte_mempool *mp) { return rte_mempool_avail_count(mp); }
unsigned ccbed_mempool_in_use(struct rte_mempool *mp) { return rte_mempool_in_use_count(mp); }

unsigned ccbed_ring_enqueue_burst(struct rte_ring *r, struct rte_mbuf **objs, unsigned n, unsigned *free_space)
{
	return rte_ring_enqueue_burst(r, (void *const *)objs, n, free_space);
}

unsigned ccbed_ring_dequeue_burst(struct rte_ring *r, struct rte_mbuf **objs, unsigned n, unsigned *avail)
{
	return rte_ring_dequeue_burst(r, (void **)objs, n, avail);
}

unsigned ccbed_ring_count(const struct rte_ring *r) { return rte_ring_count(r); }

uint64_t ccbed_rdtsc(void) { return rte_rdtsc(); }
uint64_t ccbed_tsc_hz(void) { return rte_get_tsc_hz(); }

static int ccbed_lcore_trampoline(void *arg)
{
	return ccbedLcoreEntry((uintptr_t)arg);
}

int ccbed_remote_launch(unsigned lcore, uintptr_t handle)
{
	return rte_eal_remote_launch(ccbed_lcore_trampoline, (void *)handle, lcore);
}

int ccbed_eth_link(uint16_t port, uint32_t *speed, int *up, int *duplex)
{
	struct rte_eth_link link;
	int rc = rte_eth_link_get_nowait(port, &link);
	if (rc != 0)
		return rc;
	*speed = link.link_speed;
	*up = link.link_status;
	*duplex = link.link_duplex;
	return 0;
}

int ccbed_eth_dev_configure_simple(uint16_t port, uint16_t nrx, uint16_t ntx, uint32_t mtu)
{
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	if (mtu > 0)
		conf.rxmode.mtu = mtu;
	if (nrx > 1) {
		/* Several rx queues: RSS on the IPv4 addresses and UDP ports (the
		 * driver's default key), where the device hashes them; a device
		 * without RSS (net_ring, net_null) keeps its own queue mapping. */
		struct rte_eth_dev_info info;
		int rc = rte_eth_dev_info_get(port, &info);
		if (rc != 0)
			return rc;
		uint64_t hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;
		if (hf != 0) {
			conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
			conf.rx_adv_conf.rss_conf.rss_hf = hf;
		}
	}
	return rte_eth_dev_configure(port, nrx, ntx, &conf);
}

int ccbed_eth_from_rings(const char *name, struct rte_ring **rx, unsigned nrx, struct rte_ring **tx, unsigned ntx,
			 unsigned socket)
{
	return rte_eth_from_rings(name, rx, nrx, tx, ntx, socket);
}

int ccbed_eth_from_ring_pair(const char *name, struct rte_ring *rx, struct rte_ring *tx, unsigned socket)
{
	struct rte_ring *rxq[1] = {rx};
	struct rte_ring *txq[1] = {tx};
	return rte_eth_from_rings(name, rxq, 1, txq, 1, socket);
}

int ccbed_eth_flow_ctrl_set(uint16_t port, int mode)
{
	struct rte_eth_fc_conf fc;
	int rc = rte_eth_dev_flow_ctrl_get(port, &fc);
	if (rc != 0)
		return rc;
	fc.mode = (enum rte_eth_fc_mode)mode;
	return rte_eth_dev_flow_ctrl_set(port, &fc);
}

int ccbed_eth_flow_ctrl_get(uint16_t port, int *mode)
{
	struct rte_eth_fc_conf fc;
	int rc = rte_eth_dev_flow_ctrl_get(port, &fc);
	if (rc == 0)
		*mode = (int)fc.mode;
	return rc;
}

int ccbed_eth_pfc_set(uint16_t port, uint8_t priority, uint32_t high, uint32_t low, uint16_t pause_time)
{
	struct rte_eth_pfc_conf pfc;
	memset(&pfc, 0, sizeof(pfc));
	pfc.fc.mode = RTE_ETH_FC_FULL;
	pfc.fc.high_water = high;
	pfc.fc.low_water = low;
	pfc.fc.pause_time = pause_time;
	pfc.fc.send_xon = 1;
	pfc.priority = priority;
	return rte_eth_dev_priority_flow_ctrl_set(port, &pfc);
}

int ccbed_eth_dev_limits(uint16_t port, uint32_t *max_rx_pktlen, uint16_t *max_mtu, uint16_t *min_mtu,
			 uint16_t *max_rxq, uint16_t *max_txq, uint32_t *speed_capa, char *driver, size_t driver_len)
{
	struct rte_eth_dev_info info;
	int rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0)
		return rc;
	*max_rx_pktlen = info.max_rx_pktlen;
	*max_mtu = info.max_mtu;
	*min_mtu = info.min_mtu;
	*max_rxq = info.max_rx_queues;
	*max_txq = info.max_tx_queues;
	*speed_capa = info.speed_capa;
	if (driver_len > 0) {
		driver[0] = 0;
		if (info.driver_name != NULL) {
			strncpy(driver, info.driver_name, driver_len - 1);
			driver[driver_len - 1] = 0;
		}
	}
	return 0;
}

int ccbed_lcore_is_enabled(unsigned lcore) { return rte_lcore_is_enabled(lcore); }
uint64_t ccbed_physmem_size(void) { return rte_eal_get_physmem_size(); }
