#include "shim.h"

/* Receive up to per packets from each of the n (port, queue) pairs, pair i
 * into pkts[i * per ...]; counts[i] is what pair i received. Returns the total. */
uint32_t ccbed_rx_burst_multi(const struct ccbed_pq *pq, uint16_t n, struct rte_mbuf **pkts, uint16_t per,
			      uint16_t *counts)
{
	uint32_t total = 0;
	for (uint16_t i = 0; i < n; i++) {
		counts[i] = rte_eth_rx_burst(pq[i].port, pq[i].queue, pkts + (size_t)i * per, per);
		total += counts[i];
	}
	return total;
}

/* Transmit want[i] packets of pkts[i * per ...] on pair i; sent[i] is what the
 * driver took. With free_unsent the rest are freed, else they stay the
 * caller's. Returns the total sent. */
uint32_t ccbed_tx_burst_multi(const struct ccbed_pq *pq, uint16_t n, struct rte_mbuf **pkts, uint16_t per,
			      const uint16_t *want, uint16_t *sent, int free_unsent)
{
	uint32_t total = 0;
	for (uint16_t i = 0; i < n; i++) {
		uint16_t w = want[i] < per ? want[i] : per;
		struct rte_mbuf **p = pkts + (size_t)i * per;
		uint16_t s = 0;
		if (w > 0)
			s = rte_eth_tx_burst(pq[i].port, pq[i].queue, p, w);
		if (free_unsent && s < w)
			rte_pktmbuf_free_bulk(p + s, w - s);
		sent[i] = s;
		total += s;
	}
	return total;
}
