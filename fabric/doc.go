// Package fabric is an experiment's network: a topology of hosts, switches and
// links (rate and propagation delay per direction), routes computed from it
// (shortest paths by hop count, ECMP groups where paths tie), and each node's
// config (Spec.Plan), with the real switchd and hostd engines as the nodes
// behind node.Node. It has two drivers that run the same Plan: Virtual, a
// discrete-event loop in virtual time (single-threaded, deterministic, exact
// to the nanosecond, no DPDK), here; and the DPDK driver in fabric/dpdkrun
// (lcores, rte_ring cables, real time). docs/fabric.md describes both and how
// their results differ.
//
// Who owns what: a driver owns every frame buffer; a node owns a buffer from
// Receive until it hands it back in a Tx or frees it. Virtual is not safe for
// concurrent use; a Result is read after the run.
package fabric
