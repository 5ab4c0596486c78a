#include <string.h>
#include "txgen.h"

/* Big-endian stores at any alignment. */
static inline void put16(uint8_t *p, uint16_t v)
{
	v = rte_cpu_to_be_16(v);
	memcpy(p, &v, 2);
}

static inline void put32(uint8_t *p, uint32_t v)
{
	v = rte_cpu_to_be_32(v);
	memcpy(p, &v, 4);
}

static inline void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline uint16_t fold(uint32_t s)
{
	s = (s >> 16) + (s & 0xffff);
	s = (s >> 16) + (s & 0xffff);
	return (uint16_t)s;
}

static inline void copy_hdr(uint8_t *dst, const uint8_t *src, uint16_t n)
{
	/* Constant sizes: the compiler emits a few vector moves, no call. */
	switch (n) {
	case 64:
		memcpy(dst, src, 64);
		break;
	case 80:
		memcpy(dst, src, 80);
		break;
	case 96:
		memcpy(dst, src, 96);
		break;
	default:
		memcpy(dst, src, CCBED_TXGEN_HDR_MAX);
		break;
	}
}

/* fill_one writes one frame into m, fresh from the pool: the reset
 * rte_pktmbuf_alloc_bulk would do, the template copy and the patches. It is
 * inlined with o constant for the common UDP layout, so that the absent
 * fields' tests fold away. */
static inline __attribute__((always_inline)) uint16_t fill_one(struct rte_mbuf *m, const struct ccbed_txgen_class *c,
							      const struct ccbed_txgen_flow *f,
							      const struct ccbed_txgen_offsets o, uint16_t copy,
							      uint64_t seq, uint64_t now_be)
{
	rte_pktmbuf_reset(m);
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	copy_hdr(p, c->hdr, copy);
	if (o.ipv4 >= 0) {
		put16(p + o.ipv4 + 10, (uint16_t)~fold(c->ip_sum + f->ip_sum));
		put32(p + o.ipv4 + 12, f->src_ip);
		put32(p + o.ipv4 + 16, f->dst_ip);
	}
	if (o.udp >= 0) {
		put16(p + o.udp, f->src_port);
		put16(p + o.udp + 2, f->dst_port);
	}
	if (o.qp24 >= 0)
		put24(p + o.qp24, f->qp);
	if (o.tag16 >= 0)
		put16(p + o.tag16, f->tag);
	if (o.psn24 >= 0)
		put24(p + o.psn24, (uint32_t)seq);
	if (o.seq32 >= 0)
		put32(p + o.seq32, (uint32_t)seq);
	if (o.time64 >= 0)
		memcpy(p + o.time64, &now_be, 8);
	if (o.time64b >= 0)
		memcpy(p + o.time64b, &now_be, 8);
	if (o.zero_tail > 0)
		memset(p + c->size - o.zero_tail, 0, o.zero_tail);
	m->data_len = c->size;
	m->pkt_len = c->size;
	return c->size;
}

/* The offsets of pktgen's UDP frames: Ethernet, IPv4, UDP, then its header
 * (magic, stream and flow tag, sequence number, send time). */
static const struct ccbed_txgen_offsets udp_layout = {
	.ipv4 = 14, .udp = 34, .seq32 = 46, .time64 = 50, .time64b = -1, .qp24 = -1, .psn24 = -1, .zero_tail = 0,
	.tag16 = 44,
};

static inline __attribute__((always_inline)) uint64_t fill_burst(struct ccbed_txgen *g, struct rte_mbuf **pkts,
								uint16_t n, uint64_t now_be, uint32_t pos,
								uint32_t flow, uint64_t seq, int use_picks,
								const struct ccbed_txgen_offsets o, uint16_t copy)
{
	uint64_t built = 0;
	for (uint16_t i = 0; i < n; i++) {
		const struct ccbed_txgen_class *c = &g->classes[g->sched[pos]];
		uint32_t fi = use_picks ? g->picks[i] : flow;
		const struct ccbed_txgen_flow *f = &g->flows[fi < g->nflows ? fi : 0];
		uint16_t len = fill_one(pkts[i], c, f, o, copy, seq, now_be);
		g->lens[i] = len;
		built += len;
		seq++;
		if (++pos == g->nsched)
			pos = 0;
		if (!use_picks && ++flow == g->nflows)
			flow = 0;
	}
	return built;
}

/* Each packet i, as pktgen's Generator.Build writes it (dpdk/txgen.go):
 * class c = classes[sched[pos]], flow f (flows[flow], or flows[picks[i]]; a
 * pick outside the flows is flow 0); reset the mbuf as
 * rte_pktmbuf_alloc_bulk does, copy c's template, patch f's addresses, ports
 * and QP and tag, the IPv4 checksum ~fold(c.ip_sum + f.ip_sum), the sequence number
 * (32 and 24 bits), the send time (twice), clear the tail; set the mbuf's
 * lengths to c.size. Then pos, flow (when cycling) and seq advance by one.
 * The mbufs come from rte_mempool_get_bulk and are reset in the same pass
 * that fills them, as dpdk-testpmd's txonly does: one visit per mbuf. */
int ccbed_txgen_burst(struct ccbed_txgen *g, struct rte_mbuf **pkts, uint16_t n, uint64_t now, uint32_t pos,
		      uint32_t flow, uint64_t seq, int use_picks, int tx)
{
	uint64_t built;
	uint16_t i, sent;

	if (n == 0)
		return 0;
	if (rte_mempool_get_bulk(g->mp, (void **)pkts, n) != 0)
		return -1;
	const uint64_t now_be = rte_cpu_to_be_64(now);
	if (memcmp(&g->off, &udp_layout, sizeof(udp_layout)) == 0 && g->copy == 64)
		built = fill_burst(g, pkts, n, now_be, pos, flow, seq, use_picks, udp_layout, 64);
	else
		built = fill_burst(g, pkts, n, now_be, pos, flow, seq, use_picks, g->off, g->copy);
	g->built_bytes = built;
	if (!tx) {
		g->sent_bytes = 0;
		return n;
	}
	sent = rte_eth_tx_burst(g->port, g->queue, pkts, n);
	if (sent == n) {
		g->sent_bytes = built;
	} else {
		uint64_t b = 0;
		for (i = 0; i < sent; i++)
			b += g->lens[i];
		g->sent_bytes = b;
	}
	return sent;
}
