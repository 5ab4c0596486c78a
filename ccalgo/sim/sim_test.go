package sim_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	_ "github.com/ccbed/ccbed/ccalgo/none"
	"github.com/ccbed/ccbed/ccalgo/sim"
)

const (
	gbps   = 1e9
	us     = int64(1000)
	ms     = int64(1_000_000)
	wire   = sim.DefaultMTU + sim.DefaultHeaderBytes
	effPay = float64(sim.DefaultMTU) / float64(wire) // payload share of the wire
)

func run(tb testing.TB, cfg sim.Config) *sim.Result {
	tb.Helper()
	r, err := sim.Run(cfg)
	if err != nil {
		tb.Fatalf("Run: %v", err)
	}
	return r
}

func within(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

// TestLineRate: unlimited flows at line rate (or capped) get exactly that rate in
// payload goodput, with no standing queue when the offered load fits.
func TestLineRate(t *testing.T) {
	tests := []struct {
		name    string
		link    float64
		host    float64
		flows   []sim.Flow
		want    []float64 // goodput per flow, bits/s
		maxQ    int64     // queue bound over the measured half
		wantSum float64
	}{
		{name: "one flow 10G", link: 10 * gbps,
			flows: []sim.Flow{{}}, want: []float64{10 * gbps * effPay}, maxQ: wire},
		{name: "one flow 100G", link: 100 * gbps,
			flows: []sim.Flow{{}}, want: []float64{100 * gbps * effPay}, maxQ: wire},
		{name: "capped at 3G", link: 10 * gbps,
			flows: []sim.Flow{{MaxRateBps: 3 * gbps}}, want: []float64{3 * gbps * effPay}, maxQ: wire},
		{name: "two flows share one NIC", link: 10 * gbps,
			flows: []sim.Flow{{Src: 0}, {Src: 0}}, want: []float64{5 * gbps * effPay, 5 * gbps * effPay}, maxQ: wire},
		{name: "fast NIC slow link, 3+7 capped", link: 10 * gbps, host: 40 * gbps,
			flows: []sim.Flow{{Src: 0, MaxRateBps: 3 * gbps}, {Src: 1, MaxRateBps: 7 * gbps}},
			want:  []float64{3 * gbps * effPay, 7 * gbps * effPay}, maxQ: 4 * wire},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := 2 * ms
			r := run(t, sim.Config{Scheme: "none", LinkBps: tc.link, HostBps: tc.host, Flows: tc.flows, Duration: d})
			for i, w := range tc.want {
				if g := r.MeanGoodput(i, d/2, d); !within(g, w, 0.005) {
					t.Errorf("flow %d goodput %.4g, want %.4g", i, g, w)
				}
			}
			if q := r.MaxQueueIn(d/2, d); q > tc.maxQ {
				t.Errorf("max queue %d > %d", q, tc.maxQ)
			}
			if r.Drops != 0 || r.NAKs != 0 {
				t.Errorf("drops %d naks %d, want 0", r.Drops, r.NAKs)
			}
		})
	}
}

// TestOverloadGrowsQueue: 3 unlimited senders at 10 Gb/s into a 10 Gb/s link
// without congestion control: the queue grows by 2 * C every second, the link
// stays busy and shares equally.
func TestOverloadGrowsQueue(t *testing.T) {
	const c = 10 * gbps
	d := 2 * ms
	r := run(t, sim.Config{Scheme: "none", LinkBps: c,
		Flows: []sim.Flow{{Src: 0}, {Src: 1}, {Src: 2}}, Duration: d})
	for k := 1; k < len(r.Queue); k++ {
		if r.Queue[k] < r.Queue[k-1] {
			t.Fatalf("queue shrank at %d ns: %d -> %d", r.T[k], r.Queue[k-1], r.Queue[k])
		}
	}
	// Excess arrival rate is 3C - C = 2C (wire bytes), after the first packets arrive.
	wantQ := 2 * c / 8 * float64(d-r.BaseRTT) / 1e9
	if q := float64(r.Queue[len(r.Queue)-1]); !within(q, wantQ, 0.01) {
		t.Errorf("final queue %.0f B, want about %.0f B", q, wantQ)
	}
	var sum float64
	rates := make([]float64, 3)
	for i := range rates {
		rates[i] = r.MeanGoodput(i, d/2, d)
		sum += rates[i]
	}
	if !within(sum, c*effPay, 0.002) {
		t.Errorf("aggregate goodput %.4g, want %.4g", sum, c*effPay)
	}
	if j := sim.Jain(rates); j < 0.999 {
		t.Errorf("Jain %.4f, rates %v", j, rates)
	}
}

// TestFCT: a single finite flow finishes in its serialization at the bottleneck
// rate plus one base RTT, within one packet time. Exactly, store and forward makes
// it size/rate + BaseRTT - one packet time (BaseRTT counts the first packet's
// serialization on the bottleneck, which size/rate counts already).
func TestFCT(t *testing.T) {
	tests := []struct {
		name      string
		link      float64
		host      float64
		bytes     int64
		ackEvery  int
		linkDelay int64
	}{
		{"one packet", 10 * gbps, 0, 1000, 1, 0},
		{"100 KB", 10 * gbps, 0, 100_000, 1, 0},
		{"1 MB + partial", 10 * gbps, 0, 1_000_123, 1, 0},
		{"100 KB ack every 4", 10 * gbps, 0, 100_000, 4, 0},
		{"fast NIC", 10 * gbps, 40 * gbps, 200_500, 1, 0},
		{"100G long wire", 100 * gbps, 0, 1_000_000, 1, 5 * us},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := 3 * us
			r := run(t, sim.Config{Scheme: "none", LinkBps: tc.link, HostBps: tc.host, AckEvery: tc.ackEvery,
				LinkDelay: tc.linkDelay, Flows: []sim.Flow{{Start: start, Bytes: tc.bytes}}, Duration: 5 * ms})
			npk := (tc.bytes + sim.DefaultMTU - 1) / sim.DefaultMTU
			wireBytes := tc.bytes + npk*sim.DefaultHeaderBytes
			rate := tc.link // the bottleneck: host >= link in every case
			want := float64(wireBytes*8)/rate*1e9 + float64(r.BaseRTT)
			pktTime := float64(wire*8) / rate * 1e9
			got := float64(r.FCT[0])
			if math.Abs(got-want) > pktTime+2 {
				t.Errorf("FCT %.0f ns, want %.0f +- %.0f", got, want, pktTime)
			}
			if exact := want - pktTime; math.Abs(got-exact) > 2 {
				t.Errorf("FCT %.0f ns, want exactly %.0f", got, exact)
			}
			if r.Delivered[0] != tc.bytes {
				t.Errorf("delivered %d, want %d", r.Delivered[0], tc.bytes)
			}
		})
	}
}

// TestGoBackN: with a small buffer, three line-rate senders lose packets; go-back-N
// recovers and every byte reaches the receiver exactly once (in-order delivery
// counts each byte once, so Delivered == Bytes means no byte missing or doubled).
func TestGoBackN(t *testing.T) {
	tests := []struct {
		name     string
		buffer   int64
		ackEvery int
		bytes    []int64
	}{
		{"20 KB buffer", 20_000, 1, []int64{300_000, 300_000, 300_000}},
		{"5 KB buffer ack every 8", 5_000, 8, []int64{200_000, 150_333, 250_000}},
		{"3 KB buffer", 3 * wire, 1, []int64{100_000, 100_000, 100_000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			flows := make([]sim.Flow, len(tc.bytes))
			for i, b := range tc.bytes {
				flows[i] = sim.Flow{Src: i, Bytes: b}
			}
			r := run(t, sim.Config{Scheme: "none", LinkBps: 10 * gbps, BufferBytes: tc.buffer,
				AckEvery: tc.ackEvery, Flows: flows, Duration: 50 * ms})
			if r.Drops == 0 {
				t.Fatal("no drops: the test does not exercise recovery")
			}
			if r.MaxQueue > tc.buffer {
				t.Errorf("max queue %d above buffer %d", r.MaxQueue, tc.buffer)
			}
			var retx int64
			for i, b := range tc.bytes {
				if r.Delivered[i] != b {
					t.Errorf("flow %d delivered %d of %d", i, r.Delivered[i], b)
				}
				if r.FCT[i] < 0 {
					t.Errorf("flow %d unfinished", i)
				}
				retx += r.Retransmitted[i]
			}
			// With perfectly synchronised senders one may lose every packet
			// (tail-drop lockout) and recover by timeout alone, without a NAK.
			if retx == 0 || r.NAKs+r.Timeouts == 0 {
				t.Errorf("retransmitted %d, NAKs %d, timeouts %d: want retransmissions", retx, r.NAKs, r.Timeouts)
			}
			t.Logf("drops %d NAKs %d timeouts %d retransmitted %d FCT %v", r.Drops, r.NAKs, r.Timeouts, retx, r.FCT)
		})
	}
}

func TestDeterministic(t *testing.T) {
	cfg := sim.Config{Scheme: "none", LinkBps: 10 * gbps, BufferBytes: 30_000,
		Flows: []sim.Flow{{Src: 0}, {Src: 1, Start: 7 * us}, {Src: 1, Bytes: 500_000}}, Duration: ms}
	a, b := run(t, cfg), run(t, cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs of the same config differ")
	}
}

func TestConfigErrors(t *testing.T) {
	ok := sim.Config{Scheme: "none", LinkBps: gbps, Flows: []sim.Flow{{}}, Duration: ms}
	tests := []struct {
		name string
		mod  func(*sim.Config)
	}{
		{"unknown scheme", func(c *sim.Config) { c.Scheme = "no-such-scheme" }},
		{"no flows", func(c *sim.Config) { c.Flows = nil }},
		{"zero link", func(c *sim.Config) { c.LinkBps = 0 }},
		{"zero duration", func(c *sim.Config) { c.Duration = 0 }},
		{"negative src", func(c *sim.Config) { c.Flows = []sim.Flow{{Src: -1}} }},
		{"wrong params type", func(c *sim.Config) { c.Params = new(int) }},
	}
	if _, err := sim.Run(ok); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mod(&c)
			if _, err := sim.Run(c); err == nil {
				t.Error("want an error")
			}
		})
	}
}

func TestSettlingTime(t *testing.T) {
	ts := []int64{10, 20, 30, 40, 50}
	tests := []struct {
		name   string
		series []float64
		want   int64
	}{
		{"always in band", []float64{100, 101, 99, 100, 100}, 10},
		{"settles at 30", []float64{0, 50, 98, 102, 100}, 30},
		{"leaves again", []float64{100, 100, 50, 100, 100}, 40},
		{"never", []float64{100, 100, 100, 100, 0}, -1},
		{"empty", nil, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sim.SettlingTime(ts, tc.series, 100, 0.05); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestJain(t *testing.T) {
	tests := []struct {
		x    []float64
		want float64
	}{
		{[]float64{1, 1, 1}, 1},
		{[]float64{1, 0, 0, 0}, 0.25},
		{[]float64{3, 1}, 16.0 / 20},
		{[]float64{0, 0}, 0},
		{nil, 0},
	}
	for _, tc := range tests {
		if got := sim.Jain(tc.x); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Jain(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
}

// probe is a test scheme exercising INT stamping, CP feedback, NP echo, CNPs and
// RP timers through the simulator.
type probeCP struct {
	ccalgo.CPBase
	next     int64
	timers   int
	lastPort ccalgo.PortState
}

func (c *probeCP) OnEnqueue(now int64, p *ccalgo.DataPacket, port *ccalgo.PortState, out ccalgo.FeedbackSink) ccalgo.Verdict {
	if port.QueueBytes > 5*wire {
		out.Emit(now, &ccalgo.Feedback{Kind: ccalgo.FeedbackQCN, Flow: p.Flow, Fb: 1})
		return ccalgo.Verdict{Mark: ccalgo.MarkUE}
	}
	return ccalgo.Verdict{}
}

func (c *probeCP) OnDequeue(now int64, p *ccalgo.DataPacket, port *ccalgo.PortState, out ccalgo.FeedbackSink) ccalgo.Verdict {
	c.lastPort = *port
	return ccalgo.Verdict{StampINT: true}
}
func (c *probeCP) NextTimer() int64 { return c.next }
func (c *probeCP) OnTimer(now int64, port *ccalgo.PortState, out ccalgo.FeedbackSink) {
	c.timers++
	c.next = now + 100*us
}

type probeNP struct{ ints []ccalgo.INTStack }

func (n *probeNP) OnData(now int64, d *ccalgo.DataArrival, ack *ccalgo.AckFields) bool {
	ack.EchoTS = d.SendTS
	ack.INT = d.INT
	ack.Mark = d.Mark
	if len(n.ints) < cap(n.ints) {
		n.ints = append(n.ints, d.INT)
	}
	return d.Mark == ccalgo.MarkUE
}

type probeRP struct {
	ccalgo.RPBase
	rate                          float64
	acks, cnps, fbs, timers, sent int
	minRTT                        int64
	next                          int64
}

var probeNPs []*probeNP
var probeRPs []*probeRP
var probeCPs []*probeCP

func (r *probeRP) RateBps() float64 { return r.rate }
func (r *probeRP) OnAck(now int64, a *ccalgo.AckEvent) {
	r.acks++
	if a.RTT > 0 && (r.minRTT == 0 || a.RTT < r.minRTT) {
		r.minRTT = a.RTT
	}
}
func (r *probeRP) OnCNP(int64)                        { r.cnps++ }
func (r *probeRP) OnFeedback(int64, *ccalgo.Feedback) { r.fbs++ }
func (r *probeRP) OnSend(int64, uint64, int)          { r.sent++ }
func (r *probeRP) NextTimer() int64                   { return r.next }
func (r *probeRP) OnTimer(now int64)                  { r.timers++; r.next = now + 50*us }
func (r *probeRP) WindowBytes() int64                 { return ccalgo.NoWindow }

func init() {
	ccalgo.Register(ccalgo.Scheme{
		Name:          "simtest-probe",
		DefaultParams: func(env ccalgo.Env) any { return &env },
		NewCP: func(p any, env ccalgo.Env) (ccalgo.CongestionPoint, error) {
			c := &probeCP{next: 100 * us}
			probeCPs = append(probeCPs, c)
			return c, nil
		},
		NewNP: func(p any, env ccalgo.Env) (ccalgo.NotificationPoint, error) {
			n := &probeNP{ints: make([]ccalgo.INTStack, 0, 1<<16)}
			probeNPs = append(probeNPs, n)
			return n, nil
		},
		NewRP: func(p any, env ccalgo.Env) (ccalgo.ReactionPoint, error) {
			r := &probeRP{rate: env.LinkBps, next: 10 * us}
			probeRPs = append(probeRPs, r)
			return r, nil
		},
	})
}

// TestRolesWiring checks INT records, feedback, CNPs, RTT and timers against the
// simulator's timing.
func TestRolesWiring(t *testing.T) {
	probeNPs, probeRPs, probeCPs = nil, nil, nil
	const c = 10 * gbps
	d := ms
	r := run(t, sim.Config{Scheme: "simtest-probe", LinkBps: c,
		Flows: []sim.Flow{{Src: 0}, {Src: 1}}, Duration: d})
	if len(probeCPs) != 1 || len(probeNPs) != 1 || len(probeRPs) != 2 {
		t.Fatalf("roles built: %d CP, %d NP, %d RP", len(probeCPs), len(probeNPs), len(probeRPs))
	}
	cp, np := probeCPs[0], probeNPs[0]
	if cp.timers != int(d/(100*us)) {
		t.Errorf("CP timers %d, want %d", cp.timers, d/(100*us))
	}
	if r.MarkedUE == 0 || r.Feedbacks != r.MarkedUE || r.CNPs == 0 {
		t.Errorf("UE %d feedbacks %d CNPs %d", r.MarkedUE, r.Feedbacks, r.CNPs)
	}
	var fbs, cnps, sent int
	for i, rp := range probeRPs {
		fbs += rp.fbs
		cnps += rp.cnps
		sent += rp.sent
		if rp.timers < int(d/(50*us))-1 {
			t.Errorf("RP %d timers %d", i, rp.timers)
		}
		// Both flows start together at line rate; the first packets (SendTS 0,
		// RTT unknown) are not measured, the next wait behind at most two.
		if ser := int64(wire * 8 / 10); rp.minRTT < r.BaseRTT-1 || rp.minRTT > r.BaseRTT+2*ser+2 {
			t.Errorf("RP %d min RTT %d, want base RTT %d + at most %d", i, rp.minRTT, r.BaseRTT, 2*ser)
		}
	}
	// Control messages still in flight at the end are not delivered.
	if int64(fbs) > r.Feedbacks || int64(fbs) < r.Feedbacks-20 || int64(cnps) > r.CNPs || int64(cnps) < r.CNPs-20 {
		t.Errorf("RPs got %d feedbacks of %d, %d CNPs of %d", fbs, r.Feedbacks, cnps, r.CNPs)
	}
	if int64(sent) < r.Dequeued {
		t.Errorf("sent %d < dequeued %d", sent, r.Dequeued)
	}
	// INT: one hop per packet; consecutive packets leave C apart in time and
	// wire bytes apart in txBytes, with the queue in 80 B units.
	var prev ccalgo.INTHop
	for k, s := range np.ints {
		if s.NHops != 1 {
			t.Fatalf("packet %d: %d INT hops", k, s.NHops)
		}
		h := s.Hops[0]
		if h.LinkBps != c || h.QLen%ccalgo.INTQLenUnit != 0 || h.TxBytes%ccalgo.INTTxBytesUnit != 0 {
			t.Fatalf("packet %d: bad hop %+v", k, h)
		}
		if k > 0 && h.QLen > 0 && prev.QLen > 0 {
			dt := (h.TS - prev.TS) % ccalgo.INTTSWrap
			if wantDT := uint32(wire * 8 / 10); dt < wantDT || dt > wantDT+1 {
				t.Fatalf("packet %d: dequeue gap %d ns, want %d", k, dt, wantDT)
			}
			db := (h.TxBytes - prev.TxBytes) % ccalgo.INTTxBytesWrap
			if db < wire-ccalgo.INTTxBytesUnit || db > wire+ccalgo.INTTxBytesUnit {
				t.Fatalf("packet %d: txBytes step %d, want about %d", k, db, wire)
			}
		}
		prev = h
	}
	if len(np.ints) == 0 {
		t.Fatal("no INT seen")
	}
}

func TestLargeRun(t *testing.T) {
	r := run(t, bigConfig())
	var sum float64
	for i := range 16 {
		sum += r.MeanGoodput(i, 5*ms, 10*ms)
	}
	if !within(sum, 100*gbps*effPay, 0.002) {
		t.Errorf("aggregate goodput %.4g", sum)
	}
	t.Logf("events %d, dequeued %d", r.Events, r.Dequeued)
}

func bigConfig() sim.Config {
	flows := make([]sim.Flow, 16)
	for i := range flows {
		flows[i] = sim.Flow{Src: i, MaxRateBps: 100 * gbps / 16}
	}
	return sim.Config{Scheme: "none", LinkBps: 100 * gbps, Flows: flows, Duration: 10 * ms}
}

// BenchmarkRun16x100G: 16 flows at 100 Gb/s for 10 ms of virtual time.
func BenchmarkRun16x100G(b *testing.B) {
	b.ReportAllocs()
	cfg := bigConfig()
	var ev int64
	for b.Loop() {
		r, err := sim.Run(cfg)
		if err != nil {
			b.Fatal(err)
		}
		ev = r.Events
	}
	b.ReportMetric(float64(ev), "events/run")
}

// TestDelayedAckUnblocksSmallWindow: a window of 2 packets with AckEvery = 4 would
// stall without the delayed-ACK timer; with it the flow completes.
func TestDelayedAckUnblocksSmallWindow(t *testing.T) {
	res, err := sim.Run(sim.Config{
		Scheme: "sim-fixed-window", LinkBps: 10e9, AckEvery: 4,
		Flows: []sim.Flow{{Bytes: 100_000}}, Duration: 5_000_000,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.FCT[0] < 0 || res.Delivered[0] != 100_000 {
		t.Fatalf("flow did not complete: FCT %d delivered %d", res.FCT[0], res.Delivered[0])
	}
	// 100 packets in windows of 2, each window waiting up to one delayed-ACK
	// period (the base RTT) plus a round trip: well under 5 ms, well over the
	// 80 us it would take unwindowed.
	if res.FCT[0] < 4*int64(res.BaseRTT) {
		t.Fatalf("FCT %d ns too short for a 2-packet window", res.FCT[0])
	}
}

type fixedWindowRP struct{ ccalgo.RPBase }

func (fixedWindowRP) RateBps() float64   { return 10e9 }
func (fixedWindowRP) WindowBytes() int64 { return 2000 }

func init() {
	ccalgo.Register(ccalgo.Scheme{
		Name: "sim-fixed-window", Doc: "test only: line rate, 2-packet window",
		DefaultParams: func(ccalgo.Env) any { return nil },
		NewRP:         func(any, ccalgo.Env) (ccalgo.ReactionPoint, error) { return fixedWindowRP{}, nil },
	})
}

// TestPacingJitter: jitter spreads the gaps but keeps the mean rate, and the
// same seed gives the same run.
func TestPacingJitter(t *testing.T) {
	cfg := sim.Config{Scheme: "none", LinkBps: 10e9, Flows: []sim.Flow{{MaxRateBps: 2e9}},
		Duration: 5_000_000, PacingJitter: 0.2, Seed: 3}
	a, err := sim.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := sim.Run(cfg)
	if !reflect.DeepEqual(a.Delivered, b.Delivered) || !reflect.DeepEqual(a.Goodput, b.Goodput) {
		t.Fatal("same seed, different runs")
	}
	want := 2e9 * 1000 / 1062 // payload share of the capped wire rate
	if got := a.MeanGoodput(0, 1_000_000, 5_000_000); math.Abs(got-want)/want > 0.01 {
		t.Fatalf("goodput %.4g with 20 %% jitter, want %.4g", got, want)
	}
	exact := cfg
	exact.PacingJitter = 0
	c, _ := sim.Run(exact)
	if reflect.DeepEqual(a.Goodput, c.Goodput) {
		t.Fatal("the jittered run is the exact run")
	}
	cfg.PacingJitter = 1
	if _, err := sim.Run(cfg); err == nil {
		t.Fatal("PacingJitter 1 accepted")
	}
}
