/* replay.h: sending frames built once (replay.c). Only dpdk/ includes this
 * file. */
#ifndef CCBED_REPLAY_H
#define CCBED_REPLAY_H

#include "shim.h"

/* Fill pkts[0..n) with frames[(pos + i) % nframes], each with one more
 * reference. */
void ccbed_replay_refs(struct rte_mbuf *const *frames, uint32_t nframes, uint32_t pos, struct rte_mbuf **pkts,
		       uint16_t n);

/* ccbed_replay_refs, then transmit pkts on (port, queue); returns the
 * packets the driver took (the rest stay in pkts, the caller's). */
uint16_t ccbed_replay_tx(struct rte_mbuf *const *frames, uint32_t nframes, uint32_t pos, struct rte_mbuf **pkts,
			 uint16_t n, uint16_t port, uint16_t queue);

#endif
