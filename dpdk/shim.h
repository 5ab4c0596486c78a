/* shim.h: C wrappers for DPDK's static-inline API, so that Go reaches each with one
 * cgo call per burst. Only dpdk/ includes this file. */
#ifndef CCBED_SHIM_H
#define CCBED_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <rte_config.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_launch.h>
#include <rte_mempool.h>
#include <rte_mbuf.h>
#include <rte_ethdev.h>
#include <rte_ring.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_eth_ring.h>

/* Offsets of the rte_mbuf fields Go reads and writes without a cgo call. */
enum {
	ccbed_mbuf_off_buf_addr = offsetof(struct rte_mbuf, buf_addr),
	ccbed_mbuf_off_data_off = offsetof(struct rte_mbuf, data_off),
	ccbed_mbuf_off_nb_segs = offsetof(struct rte_mbuf, nb_segs),
	ccbed_mbuf_off_port = offsetof(struct rte_mbuf, port),
	ccbed_mbuf_off_pkt_len = offsetof(struct rte_mbuf, pkt_len),
	ccbed_mbuf_off_data_len = offsetof(struct rte_mbuf, data_len),
	ccbed_mbuf_off_buf_len = offsetof(struct rte_mbuf, buf_len),
	ccbed_mbuf_off_pool = offsetof(struct rte_mbuf, pool),
	ccbed_mbuf_size = sizeof(struct rte_mbuf),
};

int ccbed_eal_init(int argc, char **argv);
int ccbed_errno(void);

uint16_t ccbed_rx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n);
uint16_t ccbed_tx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n);
/* rx then tx of what was received, freeing what tx refused; returns received count,
 * *sent gets the number transmitted. One call per loop iteration of a forwarder. */
uint16_t ccbed_rx_tx_burst(uint16_t rxport, uint16_t rxq, uint16_t txport, uint16_t txq,
			   struct rte_mbuf **pkts, uint16_t n, uint16_t *sent);

int ccbed_pktmbuf_alloc_bulk(struct rte_mempool *mp, struct rte_mbuf **pkts, unsigned n);
void ccbed_pktmbuf_free_bulk(struct rte_mbuf **pkts, unsigned n);
unsigned ccbed_mempool_avail(struct rte_mempool *mp);
unsigned ccbed_mempool_in_use(struct rte_mempool *mp);

unsigned ccbed_ring_enqueue_burst(struct rte_ring *r, struct rte_mbuf **objs, unsigned n, unsigned *free_space);
unsigned ccbed_ring_dequeue_burst(struct rte_ring *r, struct rte_mbuf **objs, unsigned n, unsigned *avail);
unsigned ccbed_ring_count(const struct rte_ring *r);

uint64_t ccbed_rdtsc(void);
uint64_t ccbed_tsc_hz(void);

int ccbed_remote_launch(unsigned lcore, uintptr_t handle);
int ccbed_eth_link(uint16_t port, uint32_t *speed, int *up, int *duplex);
int ccbed_eth_from_ring_pair(const char *name, struct rte_ring *rx, struct rte_ring *tx, unsigned socket);
int ccbed_eth_dev_configure_simple(uint16_t port, uint16_t nrx, uint16_t ntx, uint32_t mtu);
int ccbed_eth_from_rings(const char *name, struct rte_ring **rx, unsigned nrx, struct rte_ring **tx, unsigned ntx,
			 unsigned socket);
/* Link flow control (802.3x pause): get, and set the mode keeping the driver's
 * other parameters; priority flow control (802.1Qbb) of one priority. */
int ccbed_eth_flow_ctrl_get(uint16_t port, int *mode);
int ccbed_eth_flow_ctrl_set(uint16_t port, int mode);
int ccbed_eth_pfc_set(uint16_t port, uint8_t priority, uint32_t high, uint32_t low, uint16_t pause_time);
/* The fields of rte_eth_dev_info that bring-up checks read. */
int ccbed_eth_dev_limits(uint16_t port, uint32_t *max_rx_pktlen, uint16_t *max_mtu, uint16_t *min_mtu,
			 uint16_t *max_rxq, uint16_t *max_txq, uint32_t *speed_capa, char *driver, size_t driver_len);
int ccbed_lcore_is_enabled(unsigned lcore);
uint64_t ccbed_physmem_size(void);

/* multi.c: rx / tx bursts of several (port, queue) pairs in one call. */
struct ccbed_pq {
	uint16_t port;
	uint16_t queue;
};
uint32_t ccbed_rx_burst_multi(const struct ccbed_pq *pq, uint16_t n, struct rte_mbuf **pkts, uint16_t per,
			      uint16_t *counts, void **data, uint16_t *lens);
uint32_t ccbed_tx_burst_multi(const struct ccbed_pq *pq, uint16_t n, struct rte_mbuf **pkts, uint16_t per,
			      const uint16_t *want, uint16_t *sent, int free_unsent);

/* ccbed_eal_init_captured is rte_eal_init with file descriptors 1 and 2
 * redirected to out_fd and err_fd (stdio flushed on both sides), so that a bad
 * argument's usage dump (printed to stdout) reaches the caller's files instead
 * of the terminal; *captured is 1 when the redirection happened (0: the EAL
 * ran with the original descriptors). Should the init not return (rte_panic
 * aborts, a fault, rte_exit), what DPDK wrote (the last 64 KiB of each
 * stream) is copied to the original standard error first, with the signal
 * or the exit that ended it; the signal then goes to the handler that was
 * there before (Go's, which prints its own report and exits 2). */
int ccbed_eal_init_captured(int argc, char **argv, int out_fd, int err_fd, int *captured);

#endif
