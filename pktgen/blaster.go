package pktgen

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/port"
)

// Blaster is the DPDK adapter: one TxPort (stream) and one RxPort per configured
// port, over already-started ports and one mempool. The testbed (or cmd/pktgen)
// calls TxPort.Poll and RxPort.Poll from its lcore loops, each port's polls from
// one lcore, reads Snapshot from any goroutine, and calls Close after the loops
// have stopped.
type Blaster struct {
	cfg  Config
	pool *dpdk.Mempool
	// Tx[i] sends port i's stream (nil when tx = false); Rx[i] receives on port
	// i (nil when rx = false).
	Tx []*TxPort
	Rx []*RxPort

	liveMu  sync.Mutex  // ReadLive's callers take turns
	stopped atomic.Bool // LoopsStopped: ReadLive reads the engines directly
}

// NewBlaster builds the streams of cfg.Ports over ports (ports[i] is the started
// port of cfg.Ports[i]) with mbufs from pool. It opens no device.
func NewBlaster(cfg *Config, ports []port.Port, pool *dpdk.Mempool) (*Blaster, error) {
	if err := cfg.Validate(nil); err != nil {
		return nil, err
	}
	if len(ports) != len(cfg.Ports) {
		return nil, fmt.Errorf("pktgen: %d ports for %d port configs", len(ports), len(cfg.Ports))
	}
	if pool == nil {
		return nil, fmt.Errorf("pktgen: no mempool")
	}
	room := pool.DataRoom() - dpdk.MbufHeadroom
	b := &Blaster{cfg: *cfg, pool: pool, Tx: make([]*TxPort, len(ports)), Rx: make([]*RxPort, len(ports))}
	dur := int64(cfg.DurationS * 1e9)
	for i := range cfg.Ports {
		pc := &cfg.Ports[i]
		burst := pc.Burst
		if burst == 0 {
			burst = DefaultBurst
		}
		if pc.TxEnabled() && pc.Replay != nil {
			t, err := newReplayPort(pc, ports[i], pool, burst, dur)
			if err != nil {
				b.Close()
				return nil, fmt.Errorf("pktgen: ports[%d]: %w", i, err)
			}
			b.Tx[i] = t
		} else if pc.TxEnabled() {
			g, err := NewGenerator(i, pc, dur)
			if err != nil {
				b.Close()
				return nil, fmt.Errorf("pktgen: ports[%d]: %w", i, err)
			}
			if g.MaxSize() > room {
				b.Close()
				return nil, fmt.Errorf("pktgen: ports[%d]: %d-byte frames do not fit the pool's %d-byte mbufs", i, g.MaxSize(), room)
			}
			b.Tx[i] = &TxPort{port: ports[i], gen: g, pool: pool, burst: dpdk.NewBurst(burst), lens: make([]uint16, burst),
				flowPub: make([]atomic.Uint64, 2*min(pc.TrackedFlows(), g.NumFlows()))}
			if eq, ok := ports[i].(port.EthQueue); ok {
				fast, err := dpdk.NewTxGen(pool, eq.Port, eq.Queue, g.txGenSpec(), burst)
				if err != nil {
					b.Close()
					return nil, fmt.Errorf("pktgen: ports[%d]: %w", i, err)
				}
				b.Tx[i].fast, b.Tx[i].lens = fast, fast.Lens
			}
		}
		if pc.Rx {
			n := pc.TrackedFlows()
			b.Rx[i] = &RxPort{port: ports[i], recv: NewReceiver(n), burst: dpdk.NewBurst(burst), flowsCopy: make([]FlowRx, 0, n)}
		}
	}
	return b, nil
}

// Pollers returns the Poll functions of port i's rx and tx sides that exist,
// rx first: in a loop that polls everything with one time per iteration, a
// packet sent in one iteration is then received in a later one, and its latency
// counts at least that iteration's time instead of 0.
func (b *Blaster) Pollers(i int) []func(now int64) int {
	var out []func(now int64) int
	if b.Rx[i] != nil {
		out = append(out, b.Rx[i].Poll)
	}
	if b.Tx[i] != nil {
		out = append(out, b.Tx[i].Poll)
	}
	return out
}

// TxDone reports whether every stream has reached its count or duration.
func (b *Blaster) TxDone() bool {
	for _, t := range b.Tx {
		if t != nil && !t.done.Load() {
			return false
		}
	}
	return true
}

// Close frees the mbufs still pending on every TxPort, drains every receiving
// port, and frees the burst arrays. Call it after the loops have stopped.
func (b *Blaster) Close() {
	for _, t := range b.Tx {
		if t != nil && t.burst != nil {
			dpdk.FreeBulk(t.burst.Pkts[t.off:t.pend])
			t.off, t.pend = 0, 0
			t.burst.Free()
			t.burst = nil
		}
		if t != nil && t.fast != nil {
			t.fast.Free()
			t.fast, t.lens = nil, nil
		}
		if t != nil && t.replay != nil {
			t.replay.Free()
			t.replay, t.lens = nil, nil
		}
	}
	for _, r := range b.Rx {
		if r != nil && r.burst != nil {
			port.Drain(r.port, r.burst.Pkts)
			r.burst.Free()
			r.burst = nil
		}
	}
}

// TxPort sends one stream on one port. A burst the port does not take whole is
// kept and retried first on the next polls (as pktgen-dpdk does), so that
// sequence numbers only go missing in the network; TxFull counts the packets
// refused on their first try.
type TxPort struct {
	port  port.Port
	gen   *Generator
	pool  *dpdk.Mempool
	burst *dpdk.Burst
	off   int // burst.Pkts[off:pend] are built and not yet taken by the port
	pend  int
	lens  []uint16    // frame lengths of the burst, so counting sent bytes reads no mbuf
	fast  *dpdk.TxGen // on an ethdev queue: builds and sends in C (txfast.go); nil: Build in Go
	// replay holds a replayed capture's frames (replay.go; nil: none);
	// replayEth: the port is an ethdev queue, which Replay.Send transmits
	// on in the same cgo call.
	replay    *dpdk.Replay
	replayEth bool

	packets, bytes, txFull, noMbuf uint64 // written by the polling lcore only
	pub                            txCounters
	done                           atomic.Bool
	// flowPub holds the tracked flows' frames and bytes built (two words a
	// flow), stored every FlowPublishNs of the loop's time.
	flowPub     []atomic.Uint64
	nextFlowPub int64
}

// FlowPublishNs is how often (in the loops' time) a TxPort publishes its
// tracked flows' counters: a live read of them is at most this old.
const FlowPublishNs = 1_000_000

// publishFlows stores the tracked flows' counters (the polling lcore).
func (t *TxPort) publishFlows(now int64) {
	t.nextFlowPub = now + FlowPublishNs
	for f := range len(t.flowPub) / 2 {
		c := t.gen.FlowCount(f)
		t.flowPub[2*f].Store(c.Packets)
		t.flowPub[2*f+1].Store(c.Bytes)
	}
}

type txCounters struct {
	packets, bytes, txFull, noMbuf atomic.Uint64
}

// Generator is the stream's engine (read its Stats only when the loops are stopped).
func (t *TxPort) Generator() *Generator { return t.gen }

// Poll transmits what is pending, else builds and transmits the next granted
// burst; it returns the number of packets the port took.
func (t *TxPort) Poll(now int64) int {
	if now >= t.nextFlowPub && len(t.flowPub) > 0 {
		t.publishFlows(now)
	}
	pkts := t.burst.Pkts
	if t.off < t.pend {
		n := t.port.TxBurst(pkts[t.off:t.pend])
		t.count(t.lens[t.off : t.off+n])
		t.off += n
		if t.off < t.pend {
			return n
		}
		t.off, t.pend = 0, 0
	}
	k := t.gen.Grant(now, len(pkts))
	if k == 0 {
		if t.gen.Done(now) && !t.done.Load() {
			t.done.Store(true)
		}
		return 0
	}
	if t.replay != nil {
		return t.sendReplay(k)
	}
	if t.fast != nil {
		return t.sendFast(now, k)
	}
	if t.pool.AllocBulk(pkts[:k]) != nil {
		t.noMbuf++
		t.pub.noMbuf.Store(t.noMbuf)
		return 0
	}
	lens := t.lens[:k]
	for i, m := range pkts[:k] {
		n := t.gen.Build(m.Room(), now)
		m.SetLen(n)
		lens[i] = uint16(n)
	}
	n := t.port.TxBurst(pkts[:k])
	t.count(lens[:n])
	t.keepRefused(n, k)
	return n
}

// keepRefused keeps the packets n..k of a burst of k the port did not
// take, to retry first at the next polls, and counts them as tx-full.
func (t *TxPort) keepRefused(n, k int) {
	if n < k {
		t.off, t.pend = n, k
		t.txFull += uint64(k - n)
		t.pub.txFull.Store(t.txFull)
	}
}

func (t *TxPort) count(sent []uint16) {
	if len(sent) == 0 {
		return
	}
	for _, l := range sent {
		t.bytes += uint64(l)
	}
	t.packets += uint64(len(sent))
	t.pub.packets.Store(t.packets)
	t.pub.bytes.Store(t.bytes)
}

// RxPort receives on one port and accounts pktgen packets.
type RxPort struct {
	port  port.Port
	recv  *Receiver
	burst *dpdk.Burst
	pub   struct {
		packets, bytes, other, lost, late, latCount, latSum atomic.Uint64
	}
	// Live hand-off (ReadLive): the reader bumps want; the polling lcore
	// copies the histograms at its next poll and stores want into done.
	want, done atomic.Uint64
	latCopy    Histogram
	flowsCopy  []FlowRx
}

// copyLive copies the latency histograms for ReadLive (the polling lcore,
// or the reader once the loops have stopped); it allocates nothing.
func (r *RxPort) copyLive() {
	r.latCopy.CopyFrom(&r.recv.Latency)
	r.flowsCopy = copyFlows(r.flowsCopy, r.recv.flows)
}

// copyFlows copies src into dst's memory (growing it only when it is too
// short) and returns it.
func copyFlows(dst, src []FlowRx) []FlowRx {
	if cap(dst) < len(src) {
		dst = append(dst[:cap(dst)], make([]FlowRx, len(src)-cap(dst))...)
	}
	dst = dst[:len(src)]
	for i := range src {
		d, s := &dst[i], &src[i]
		d.Stream, d.Flow, d.Packets, d.Bytes = s.Stream, s.Flow, s.Packets, s.Bytes
		d.Latency.CopyFrom(&s.Latency)
	}
	return dst
}

// Receiver is the port's engine (read it only when the loops are stopped).
func (r *RxPort) Receiver() *Receiver { return r.recv }

// Poll receives one burst, accounts and frees it, and returns its size.
func (r *RxPort) Poll(now int64) int {
	if w := r.want.Load(); w != r.done.Load() {
		r.copyLive()
		r.done.Store(w)
	}
	pkts := r.burst.Pkts
	n := r.port.RxBurst(pkts)
	if n == 0 {
		return 0
	}
	for _, m := range pkts[:n] {
		r.recv.Packet(m.Data(), now)
	}
	dpdk.FreeBulk(pkts[:n])
	s := &r.recv.stats
	r.pub.packets.Store(s.Packets)
	r.pub.bytes.Store(s.Bytes)
	r.pub.other.Store(s.Other)
	r.pub.lost.Store(r.recv.lost)
	r.pub.late.Store(r.recv.late)
	r.pub.latCount.Store(r.recv.Latency.Count)
	r.pub.latSum.Store(r.recv.Latency.Sum)
	return n
}

// PortStats is a snapshot of one port's counters.
type PortStats struct {
	TxPackets, TxBytes uint64
	TxFull             uint64 // packets the port refused on their first try (retried)
	NoMbuf             uint64 // bursts not built because the mempool was empty
	RxPackets, RxBytes uint64
	RxOther            uint64 // received frames that are not pktgen packets
	Lost, Late         uint64 // sequence gaps and late arrivals, over every stream
	LatCount, LatSumNs uint64 // latency samples and their sum
}

// Snapshot reads every port's counters; safe while the loops run.
func (b *Blaster) Snapshot() []PortStats {
	out := make([]PortStats, len(b.Tx))
	for i := range out {
		if t := b.Tx[i]; t != nil {
			out[i].TxPackets, out[i].TxBytes = t.pub.packets.Load(), t.pub.bytes.Load()
			out[i].TxFull, out[i].NoMbuf = t.pub.txFull.Load(), t.pub.noMbuf.Load()
		}
		if r := b.Rx[i]; r != nil {
			out[i].RxPackets, out[i].RxBytes, out[i].RxOther = r.pub.packets.Load(), r.pub.bytes.Load(), r.pub.other.Load()
			out[i].Lost, out[i].Late = r.pub.lost.Load(), r.pub.late.Load()
			out[i].LatCount, out[i].LatSumNs = r.pub.latCount.Load(), r.pub.latSum.Load()
		}
	}
	return out
}

// gbps is the rate of packets frames of bytes frame bytes (no FCS) over dt
// seconds, in Gb/s of L2 bytes (the frames) and of L1 bytes (each frame plus
// L1Overhead: FCS, preamble, gap).
func gbps(packets, bytes uint64, dt float64) (l2, l1 float64) {
	if dt <= 0 {
		return 0, 0
	}
	return float64(bytes) * 8 / dt / 1e9, (float64(bytes) + float64(packets)*L1Overhead) * 8 / dt / 1e9
}

// Summary is the final report of a run (JSON).
type Summary struct {
	DurationS float64       `json:"duration_s"`
	Ports     []PortSummary `json:"ports"`
}

// PortSummary is one port's totals.
type PortSummary struct {
	Port      int     `json:"port"`
	Name      string  `json:"name"`
	TxPackets uint64  `json:"tx_packets"`
	TxBytes   uint64  `json:"tx_bytes"`
	TxMpps    float64 `json:"tx_mpps"`
	// TxGbps counts L2 bytes (frame bytes, no FCS); TxL1Gbps L1 bytes (plus
	// FCS, preamble and inter-frame gap: 24 B a frame, what rate_gbps caps).
	TxGbps    float64 `json:"tx_gbps"`
	TxL1Gbps  float64 `json:"tx_l1_gbps"`
	TxFull    uint64  `json:"tx_full"`
	NoMbuf    uint64  `json:"no_mbuf"`
	RxPackets uint64  `json:"rx_packets,omitempty"`
	RxBytes   uint64  `json:"rx_bytes,omitempty"`
	RxMpps    float64 `json:"rx_mpps,omitempty"`
	RxGbps    float64 `json:"rx_gbps,omitempty"`    // L2, as TxGbps
	RxL1Gbps  float64 `json:"rx_l1_gbps,omitempty"` // L1, as TxL1Gbps
	RxOther   uint64  `json:"rx_other,omitempty"`
	// Streams received on this port.
	Streams []StreamSummary `json:"streams,omitempty"`
	// Flows: what each flow sent; every flow when they have rates of their
	// own, else the first flow_stats of a stream of several flows.
	Flows   []FlowSummary   `json:"flows,omitempty"`
	Latency *LatencySummary `json:"latency,omitempty"`
	// RxFlows: what the port received of each tracked (stream, flow) pair,
	// in the order first seen.
	RxFlows []RxFlowSummary `json:"rx_flows,omitempty"`
	// RxFlowsUntracked counts pktgen packets of flows beyond the tracked ones.
	RxFlowsUntracked uint64 `json:"rx_flows_untracked,omitempty"`
}

// RxFlowSummary is what a receiving port got of one flow of one stream.
type RxFlowSummary struct {
	Stream  int            `json:"stream"`
	Flow    int            `json:"flow"`
	Packets uint64         `json:"rx_packets"`
	Bytes   uint64         `json:"rx_bytes"`
	Mpps    float64        `json:"rx_mpps"`
	Latency LatencySummary `json:"latency"`
}

// StreamSummary is what one receiving port got of one stream. Lost is sent
// minus received (it includes a lost tail, which sequence gaps cannot see) when
// the stream's whole output goes to this port; SeqGaps and Late come from the
// sequence numbers.
type StreamSummary struct {
	Stream   int    `json:"stream"`
	Sent     uint64 `json:"sent"`
	Received uint64 `json:"received"`
	Lost     int64  `json:"lost"`
	SeqGaps  uint64 `json:"seq_gaps"`
	Late     uint64 `json:"late"`
}

// Summary totals the run over elapsedNs. Call it after the loops have stopped.
func (b *Blaster) Summary(elapsedNs int64) Summary {
	dt := float64(elapsedNs) / 1e9
	snap := b.Snapshot()
	s := Summary{DurationS: dt}
	for i, c := range snap {
		ps := PortSummary{Port: i, Name: b.cfg.Ports[i].Name,
			TxPackets: c.TxPackets, TxBytes: c.TxBytes, TxFull: c.TxFull, NoMbuf: c.NoMbuf}
		if dt > 0 {
			ps.TxMpps = float64(c.TxPackets) / dt / 1e6
			ps.TxGbps, ps.TxL1Gbps = gbps(c.TxPackets, c.TxBytes, dt)
		}
		if t := b.Tx[i]; t != nil {
			ps.Flows = flowSummaries(t.gen, &b.cfg.Ports[i], dt)
		}
		if r := b.Rx[i]; r != nil {
			st := r.recv.Stats()
			ps.RxPackets, ps.RxBytes, ps.RxOther = st.Packets, st.Bytes, st.Other
			if dt > 0 {
				ps.RxMpps = float64(st.Packets) / dt / 1e6
				ps.RxGbps, ps.RxL1Gbps = gbps(st.Packets, st.Bytes, dt)
			}
			for k := range st.Streams {
				sr := &st.Streams[k]
				if sr.Packets == 0 {
					continue
				}
				ss := StreamSummary{Stream: k, Received: sr.Packets, SeqGaps: sr.Lost, Late: sr.Late}
				if k < len(b.Tx) && b.Tx[k] != nil {
					ss.Sent = snap[k].TxPackets
					ss.Lost = int64(ss.Sent) - int64(sr.Packets)
				}
				ps.Streams = append(ps.Streams, ss)
			}
			ls := r.recv.Latency.Summary()
			ps.Latency = &ls
			ps.RxFlowsUntracked = st.FlowsUntracked
			for _, f := range r.recv.Flows() {
				fs := RxFlowSummary{Stream: f.Stream, Flow: f.Flow, Packets: f.Packets, Bytes: f.Bytes, Latency: f.Latency.Summary()}
				if dt > 0 {
					fs.Mpps = float64(f.Packets) / dt / 1e6
				}
				ps.RxFlows = append(ps.RxFlows, fs)
			}
		}
		s.Ports = append(s.Ports, ps)
	}
	return s
}

// WriteSummary writes s as indented JSON to path ("-": standard output).
func WriteSummary(path string, s Summary) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if path == "-" {
		_, err = os.Stdout.Write(data)
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// WriteText writes s as a human summary table.
func WriteText(w io.Writer, s Summary) {
	fmt.Fprintf(w, "pktgen summary over %.3f s (Gb/s L2: frame bytes without FCS; L1: plus FCS, preamble and gap, %d B a frame)\n",
		s.DurationS, L1Overhead)
	for _, p := range s.Ports {
		fmt.Fprintf(w, "port %d %-12s tx %d pkts %.3f Mpps %.3f Gb/s L2 %.3f Gb/s L1 full %d nombuf %d\n",
			p.Port, p.Name, p.TxPackets, p.TxMpps, p.TxGbps, p.TxL1Gbps, p.TxFull, p.NoMbuf)
		writeFlows(w, p.Flows)
		if p.Latency == nil {
			continue
		}
		fmt.Fprintf(w, "        rx %d pkts %.3f Mpps %.3f Gb/s L2 %.3f Gb/s L1 other %d\n", p.RxPackets, p.RxMpps, p.RxGbps, p.RxL1Gbps, p.RxOther)
		for _, st := range p.Streams {
			fmt.Fprintf(w, "        stream %d: sent %d received %d lost %d (seq gaps %d, late %d)\n",
				st.Stream, st.Sent, st.Received, st.Lost, st.SeqGaps, st.Late)
		}
		l := p.Latency
		fmt.Fprintf(w, "        latency us: min %.2f avg %.2f p50 %.2f p90 %.2f p99 %.2f p99.9 %.2f max %.2f (%d samples)\n",
			l.MinUs, l.AvgUs, l.P50Us, l.P90Us, l.P99Us, l.P999Us, l.MaxUs, l.Count)
		for _, f := range p.RxFlows {
			l := &f.Latency
			fmt.Fprintf(w, "        rx stream %d flow %d: %d pkts %.3f Mpps latency us p50 %.2f p99 %.2f p99.9 %.2f max %.2f\n",
				f.Stream, f.Flow, f.Packets, f.Mpps, l.P50Us, l.P99Us, l.P999Us, l.MaxUs)
		}
	}
}
