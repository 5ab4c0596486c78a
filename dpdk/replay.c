#include "replay.h"

/* copy64 copies n bytes rounded up to 64 from src (padded to that) into dst
 * (with room for it), in fixed-size moves the compiler vectorizes. */
static inline void copy64(uint8_t *dst, const uint8_t *src, uint32_t n)
{
	for (uint32_t k = 0; k < n; k += 64)
		memcpy(dst + k, src + k, 64);
}

/* Packet i of the burst is a copy of frame (pos + i) % nframes, in a fresh
 * mbuf of mp reset as rte_pktmbuf_alloc_bulk would, in one visit per mbuf
 * (as txgen.c fills its frames). */
int ccbed_replay_burst(struct ccbed_replay *r, struct rte_mbuf **pkts, uint16_t n, uint32_t pos, int tx)
{
	uint64_t built = 0;

	if (n == 0)
		return 0;
	if (rte_mempool_get_bulk(r->mp, (void **)pkts, n) != 0)
		return -1;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint16_t len = r->len[pos];
		rte_pktmbuf_reset(m);
		copy64(rte_pktmbuf_mtod(m, uint8_t *), r->data + r->off[pos], len);
		m->data_len = len;
		m->pkt_len = len;
		r->lens[i] = len;
		built += len;
		if (++pos == r->nframes)
			pos = 0;
	}
	r->built_bytes = built;
	if (!tx)
		return n;
	return rte_eth_tx_burst(r->port, r->queue, pkts, n);
}
