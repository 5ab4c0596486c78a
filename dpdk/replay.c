#include "replay.h"

/* Packet i of the burst is frames[(pos + i) % nframes] with one more
 * reference: the driver's free after transmission (or the caller's) drops
 * that reference, never the frames' own, so the frames are built once and
 * sent as often as asked, with neither an allocation nor a copy. */
static inline void ref_burst(struct rte_mbuf *const *frames, uint32_t nframes, uint32_t pos, struct rte_mbuf **pkts,
			     uint16_t n)
{
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = frames[pos];
		rte_mbuf_refcnt_update(m, 1);
		pkts[i] = m;
		if (++pos == nframes)
			pos = 0;
	}
}

void ccbed_replay_refs(struct rte_mbuf *const *frames, uint32_t nframes, uint32_t pos, struct rte_mbuf **pkts,
		       uint16_t n)
{
	ref_burst(frames, nframes, pos, pkts, n);
}

uint16_t ccbed_replay_tx(struct rte_mbuf *const *frames, uint32_t nframes, uint32_t pos, struct rte_mbuf **pkts,
			 uint16_t n, uint16_t port, uint16_t queue)
{
	ref_burst(frames, nframes, pos, pkts, n);
	return rte_eth_tx_burst(port, queue, pkts, n);
}
