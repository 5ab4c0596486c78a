#include "shim.h"

#include <rte_prefetch.h>

/* Receive up to per packets from each of the n (port, queue) pairs, pair i
 * into pkts[i * per ...]; counts[i] is what pair i received. For each packet
 * j, data[j] and lens[j] are its first segment's data address and length, and
 * its first data cache line is prefetched: the caller's per-packet loop then
 * reads neither the mbuf header nor a cold header line (the loads of a burst's
 * headers overlap here, l3fwd's prefetch). Returns the total. */
uint32_t ccbed_rx_burst_multi(const struct ccbed_pq *pq, uint16_t n, struct rte_mbuf **pkts, uint16_t per,
			      uint16_t *counts, void **data, uint16_t *lens)
{
	uint32_t total = 0;
	for (uint16_t i = 0; i < n; i++) {
		size_t base = (size_t)i * per;
		uint16_t c = rte_eth_rx_burst(pq[i].port, pq[i].queue, pkts + base, per);
		for (uint16_t k = 0; k < c; k++) {
			struct rte_mbuf *m = pkts[base + k];
			void *d = rte_pktmbuf_mtod(m, void *);
			rte_prefetch0(d);
			data[base + k] = d;
			lens[base + k] = m->data_len;
		}
		counts[i] = c;
		total += c;
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
