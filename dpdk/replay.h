/* replay.h: sending frames loaded once (replay.c). Only dpdk/ includes this
 * file. */
#ifndef CCBED_REPLAY_H
#define CCBED_REPLAY_H

#include <string.h>
#include "shim.h"

/* Frames loaded once: frame i is len[i] bytes at data + off[i], each at a
 * 64-byte boundary and padded to the next. */
struct ccbed_replay {
	struct rte_mempool *mp;
	const uint8_t *data;
	const uint32_t *off;
	const uint16_t *len;
	uint16_t *lens; /* out: frame length of each packet of the last burst */
	uint32_t nframes;
	uint16_t port, queue;
	uint64_t built_bytes; /* out: the last burst's bytes */
};

/* Take n mbufs from r->mp (all or none: -1 when the pool has too few), fill
 * pkts[i] with a copy of frame (pos + i) % nframes and, with tx, transmit
 * them on (r->port, r->queue). Returns the packets the driver took (n
 * without tx); the rest stay in pkts, the caller's. */
int ccbed_replay_burst(struct ccbed_replay *r, struct rte_mbuf **pkts, uint16_t n, uint32_t pos, int tx);

#endif
