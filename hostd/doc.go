// Package hostd is ccbed's traffic-generator host: a
// software RoCEv2-like NIC that sends flows on queue pairs (QPs), each paced by
// its own token bucket (pacer.Scheduler) at the rate and window its reaction
// point (RP) sets, receives and acknowledges data with the scheme's notification
// point (NP), and records flow completion times and rates.
//
// Where it sits: one Engine per host, or one per tx lcore of a host that
// needs several (NewEngines: the engines partition the flows and QPs, and
// join their rx sides to their tx sides by event rings; shards.go). The
// engine is pure Go and never reads a clock: every entry point takes the
// time in ns (a lcore.TSCClock on DPDK, virtual time in the fabric).
// hostd/dataplane adapts it to a port.Port and a mempool with two Poll
// functions (rx, tx) or one (both), per the testbed's composition contract,
// and a host's engines to the queue pairs of its port (dataplane.Shards);
// Node (node.go) adapts it to the fabric's drivers (node.Node), with buffers
// the driver owns.
//
// The tx path is built for 1,000 active QPs at 10 Mpps per lcore:
// NextDataBurst fills a burst of frames per call, each copied from its QP's
// header template (wire.DataTemplate) with only the per-packet fields
// patched, the pacer picks QPs in O(1) when they wait alike (pacer's run),
// and an RP without an OnSend (ccalgo.SendHook) is not called per packet
// (BenchmarkTxPath, docs/perf.md).
//
// What the engine implements, and the sources it follows:
//
//   - QP state per sender flow: PSN (24-bit on the wire, 64-bit packet numbers
//     inside), snd_una, snd_nxt, snd_max, message boundaries (BTH SEND First /
//     Middle / Last / Only), go-back-N on NAK and on a retransmission timeout,
//     as a RoCEv2 RC QP does (InfiniBand Architecture Specification Vol. 1,
//     Chapter 9, reliable connected service, carried over UDP/IP per its
//     Annex A17, RoCEv2). With trust "topology" (Spec.Trust) a NAK counts
//     only from the flow's destination, for a PSN sent and not yet
//     acknowledged, and at most once per PSN and base RTT.
//   - Receiver: in-order check per (source, QP); an ACK every AckEvery packets,
//     on the last packet of a message and on AckReq; a PSN-sequence-error NAK on
//     a gap, repeated after NakInterval; duplicates are re-acknowledged. ACKs
//     carry ccbed's extension: the send timestamp echo, the ECN / TCD mark echo,
//     the INT echo (HPCC Section 4.2: the receiver copies the INT stack into the
//     ACK) and RCC's assigned window, active flows and B_R, as filled by the NP.
//   - NP duties: the scheme's NotificationPoint sees every data packet; a CNP
//     goes back when it asks (DCQCN: at most one per 50 us per QP, enforced by
//     ccalgo/dcqcn's NP).
//   - RP hooks for every scheme, driven by real packets: OnSend per data packet,
//     OnAck / OnNak per ACK / NAK (AckEvent with snd_una, snd_nxt, RTT from the
//     echoed timestamp and the echo fields), OnCNP per CNP, OnFeedback per RoCC
//     rate message and P4QCN / QCN feedback packet, OnTimer at NextTimer; the
//     RP's RateBps, WindowBytes and HaltUntil go to the pacer after each call.
//   - Pacing: per-QP rate = min(RP rate, the flow's offered-rate cap, line
//     rate); a NIC-level token bucket at the line rate (frame + 24 bytes of
//     preamble, FCS and gap per frame) is the host's ceiling; HPCC Section 4.2
//     describes the same NIC scheduler shape (per-QP rate and window).
//   - PFC: a received pause frame for the data priority stops data until its
//     quanta (at the line rate) expire; 0 quanta resumes. Flows may carry
//     priorities of their own (Flow.Priority): a pause then stops only
//     the QPs of the priorities it names, as a NIC's per-priority queues.
//   - Traffic: static flows, incast groups, and Poisson workloads with sizes from
//     a flow-size CDF at a target load (HPCC Section 5.1 and RoCC Section VI use
//     this generator with the web-search and FB-Hadoop distributions).
//   - Results: per-flow goodput time series (rate.csv), FCT with slowdown
//     (fct.csv, slowdown = FCT / ideal FCT, ideal = base RTT + the message's
//     frames at line rate), counters (counters.json).
//
// Deviations and choices:
//
//   - One message per flow; a flow occupies a QP slot from its start to its last
//     ACK, then the slot is reused with a new QP number (generation in the high
//     bits), so late packets of the old flow are recognised as stale.
//   - Sequence numbers given to RPs are byte offsets (packet number x MTU), as
//     ccalgo expects; every packet but the last of a message is full.
//   - The receiver never frees its per-flow state during a run (up to
//     MaxRxFlows entries, the tables doubling from 16 as flows arrive); a new
//     message on a reused (source, QP) restarts it.
//   - An RP is reset for a new flow from a pristine instance of its scheme
//     through ccalgo.Resetter (a struct copy: ccalgo's RPs are plain data);
//     an RP that does not implement it, or refuses the template (a wrapper
//     around a scheme's RP, as closed-loop tests use), is rebuilt, which
//     allocates once per flow start (counted as rp_rebuilds).
//   - Rates sampled in rate.csv are goodput at the sender (newly acknowledged
//     payload per sample period), not the RP's rate. Every row covers a whole
//     period: a completing flow's last row is at the end of the period it
//     completed in (RateSample).
//   - A workload draws each flow's destination uniformly from its dsts less
//     the host's own address, as the HPCC simulator's traffic generator does
//     (ns-3's flow.txt cannot hold a flow to its source); a workload whose
//     only destination is the host itself is a configuration error.
//   - A QP's UDP source port is the one Linux's RoCE stack would give it
//     (rdma_get_udp_sport: rdma_calc_flow_label over the local and remote
//     QP numbers, then rdma_flow_label_to_udp_sport, 0xc000-0xffff), so that
//     ECMP, which hashes on it, spreads QPs over paths. ccbed numbers a
//     flow's QP alike at both ends and on every host, so the numbers hashed
//     are NICQPN's: the QP number plus a 24-bit hash of the end's address,
//     the sender's as local, the receiver's as remote (QPSrcPort). The
//     flow label is symmetric, and the receiver echoes the port on its ACKs.
//     Both clocks run this code: virtual time and DPDK use the same ports.
package hostd
