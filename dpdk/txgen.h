/* txgen.h: a burst generator in C (txgen.c) for template-built frames: one
 * call allocates a burst, fills every mbuf from a header template with its
 * per-packet patches, and transmits it. Only dpdk/ includes this file. */
#ifndef CCBED_TXGEN_H
#define CCBED_TXGEN_H

#include "shim.h"

/* Bytes of a template copied into every frame: the header, rounded up so
 * that the copy is a few fixed-size vector moves (payload bytes after the
 * header get the template's zeros; bytes past a frame's end are mbuf room,
 * not frame). */
#define CCBED_TXGEN_HDR_MAX 128

/* One frame size: its length and its header template. */
struct ccbed_txgen_class {
	uint8_t hdr[CCBED_TXGEN_HDR_MAX];
	uint32_t ip_sum; /* ones' complement sum of the IPv4 header without addresses and checksum */
	uint16_t size;   /* frame length without FCS */
	uint16_t pad;
};

/* One flow: the fields patched into the template, host byte order. */
struct ccbed_txgen_flow {
	uint32_t src_ip, dst_ip;
	uint16_t src_port, dst_port;
	uint32_t qp;     /* 24 bits */
	uint32_t ip_sum; /* ones' complement sum of the four address words */
	uint16_t tag;    /* a 16-bit field of the flow's own (pktgen: stream and flow id) */
	uint16_t pad;
};

/* Offsets of the patched fields; -1: absent. */
struct ccbed_txgen_offsets {
	int16_t ipv4;     /* IPv4 header: checksum at +10, addresses at +12 and +16 */
	int16_t udp;      /* UDP header: ports at +0 and +2 */
	int16_t seq32;    /* sequence number, low 32 bits */
	int16_t time64;   /* send time, ns */
	int16_t time64b;  /* a second copy of the send time */
	int16_t qp24;     /* flow's 24-bit QP number */
	int16_t psn24;    /* sequence number, low 24 bits */
	int16_t zero_tail; /* bytes cleared at the frame's end */
	int16_t tag16;    /* the flow's tag, 16 bits */
};

struct ccbed_txgen {
	struct rte_mempool *mp;
	const struct ccbed_txgen_class *classes;
	const uint16_t *sched;            /* class of each packet, cycling */
	const struct ccbed_txgen_flow *flows;
	uint16_t *picks;                  /* flow of each packet of a burst, when use_picks */
	uint16_t *lens;                   /* out: frame length of each packet of the last burst */
	uint32_t nsched, nflows;
	uint16_t copy;                    /* template bytes copied: 64, 80, 96 or 128 */
	uint16_t port, queue;
	struct ccbed_txgen_offsets off;
	/* out, after ccbed_txgen_burst */
	uint64_t built_bytes, sent_bytes;
};

/* Take n mbufs from g->mp (all or none: -1 when the pool has too few), reset
 * and fill each as txgen.c describes from schedule position pos, flow flow
 * (or g->picks[i] for packet i when use_picks; a pick outside the flows is
 * flow 0) and sequence number seq, all stamped now, and with tx transmit them
 * on (g->port, g->queue). Returns the packets the driver took (n without tx);
 * the rest stay in pkts[sent..n) for the caller. g->lens, g->built_bytes and
 * g->sent_bytes are set. */
int ccbed_txgen_burst(struct ccbed_txgen *g, struct rte_mbuf **pkts, uint16_t n, uint64_t now, uint32_t pos,
		      uint32_t flow, uint64_t seq, int use_picks, int tx);

#endif
