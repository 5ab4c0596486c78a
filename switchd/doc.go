// Package switchd is the engine of ccbed's software switch (the switch of the
// RoCC paper's DPDK testbed, Menikkumbura et al., "Congestion Control for
// Datacenter Networks: A Control-Theoretic Approach", IEEE TPDS 2023, Section
// VI-B, grown to a fabric's switch): up to 64 ports, static IPv4 routes
// to a port or to an ECMP group (a per-switch 5-tuple hash picks the port), a
// byte-accurate egress queue per port and priority (8, strict priority and
// DWRR among them), a shared buffer with dynamic thresholds or static per-port
// buffers, link-rate shaping, an optional delay line, PFC with per-ingress
// reserve and headroom, and one congestion point (CP) of ccalgo per port
// (docs/switch.md).
//
// The engine is pure Go. It takes frames as byte slices with an integer Handle
// (node.Handle: the adapter's mbuf address, or the virtual-time driver's buffer
// index) and the time in nanoseconds as an argument; it never reads a clock and
// never imports dpdk. The adapter in switchd/dataplane connects it to mbufs,
// ports and lcores; Node (node.go) to the fabric's drivers, with NextWake
// telling a driver when the engine next has work.
//
// A frame goes through two stages, so that the pipeline mode can run them on
// different lcores:
//
//   - Classify (rx / switching lcore): parse at fixed offsets (wire.Classify:
//     Decode's checks without building views), refuse the frames the
//     ingress port may not send (switch.trust "topology": PFC only from the
//     peer, RoCEv2 data, CNPs, ACKs and NAKs from a host only with its own
//     address, CP feedback never from a host), route (longest prefix),
//     decrement the TTL with an incremental checksum update, rewrite the MACs
//     to the egress port's and its peer's, and describe the frame in a Meta
//     (ingress, egress, class, priority, offsets).
//   - Enqueue, Transmit and Service (tx+CC lcore): buffer admission (dynamic
//     thresholds, headroom), ingress accounting for PFC (XOFF / XON frames sent
//     upstream), the scheduler among a port's priority queues, CP hooks
//     (OnEnqueue, OnDequeue, OnTimer; ECN and TCD marks, INT stamping, feedback
//     packets built toward each flow's source), PFC pause frames received
//     (honoured per egress port and priority for their quanta), the shaper
//     releasing bytes at the link rate, control packets ahead of data, the delay
//     line, telemetry samples.
//
// State is split by writer: the ingress side (per-ingress counters and Classify's
// scratch) is written by the lcore that calls Classify; everything else by the
// lcore that calls Enqueue, Transmit and Service. Counters are published with
// atomic stores every millisecond of engine time (and on Publish), so that the
// control plane reads them without locks (Snapshot).
//
// Nothing on the per-packet path allocates, logs, locks or uses channels
// (engine_test.go proves it with testing.AllocsPerRun).
package switchd
