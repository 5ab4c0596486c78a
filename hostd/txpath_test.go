package hostd

import (
	"runtime"
	"testing"

	"github.com/ccbed/ccbed/internal/cpuclock"
)

// The tx-path benchmark measures what issue 14's target names: one host
// engine (one tx lcore) with txBenchQPs active QPs, each paced by its token
// bucket at an equal share of a 100 Gb/s line rate (the shares sum to the
// line rate), full 1 KB-payload frames, no ACKs (the ACK path is
// BenchmarkAckPath). Each op is one data frame: choosing the next eligible
// QP, building the frame into a caller's buffer, the RP's OnSend and the
// pacer's update, plus the loop's share of Service and NextWake, as the DPDK
// adapter runs them (hostd/dataplane's txSide). Virtual time advances as the
// NIC's line-rate bucket allows, so the engine runs at line rate.
const (
	txBenchQPs   = 1000
	txBenchGbps  = 100
	txBenchBurst = 32
)

// txBenchConfig is the sender of the tx-path benchmark.
func txBenchConfig(scheme string, share float64) Spec {
	c := testConfig("h1", ipA, scheme)
	c.LinkGbps = txBenchGbps
	c.MaxQPs = txBenchQPs
	c.Incast = []Incast{{Dst: ipB, Flows: txBenchQPs, SizeBytes: 1 << 50,
		RateGbps: share * txBenchGbps / float64(txBenchQPs)}}
	// No ACKs come back: no retransmission timeout may rewind the QPs.
	c.RTONs = 1e12
	// One rate sample per flow per ms, within the rows reserved up front (no
	// allocation while the benchmark runs).
	c.SampleNs = 1_000_000
	c.MaxSamples = 1 << 16
	return c
}

// txBench is one tx lcore's loop over an engine in virtual time.
type txBench struct {
	e    *Engine
	now  int64
	wake int64
	bufs [txBenchBurst][]byte
	lens [txBenchBurst]int
	sent int
}

func newTxBench(tb testing.TB, scheme string, share float64) *txBench {
	tb.Helper()
	e, err := NewEngine(txBenchConfig(scheme, share), 0)
	if err != nil {
		tb.Fatal(err)
	}
	t := &txBench{e: e}
	for i := range t.bufs {
		t.bufs[i] = make([]byte, 2048)
	}
	// Start the flows and let every QP send its first frames.
	for t.sent < 4*txBenchQPs {
		t.poll()
	}
	return t
}

// poll is one iteration of the tx loop: service when due, a burst of data
// frames, and the time of the next wake; then virtual time moves to it.
func (t *txBench) poll() int {
	e := t.e
	if t.now >= t.wake || e.EventsPending() {
		e.Service(t.now)
	}
	k := e.NextDataBurst(t.now, t.bufs[:], t.lens[:])
	t.wake = t.now
	if k < txBenchBurst {
		t.wake = e.NextWake(t.now)
	}
	t.now = max(t.wake, t.now+1)
	t.sent += k
	return k
}

// txBenchCases are the tx-path benchmark's schemes and loads: QP rates
// summing to the line rate (the NIC's bucket is the bottleneck, as the
// frame's 24 bytes of preamble and gap count there only; QPs keep credit and
// are served round robin) and to 90% of it (every QP waits for its own
// bucket after each frame: the scheduler's heap on every packet).
var txBenchCases = []struct {
	name   string
	scheme string
	share  float64
}{
	{"none/sum=100G", "none", 1},
	{"dcqcn/sum=100G", "dcqcn", 1},
	{"none/sum=90G", "none", 0.9},
	{"dcqcn/sum=90G", "dcqcn", 0.9},
}

func BenchmarkTxPath(b *testing.B) {
	for _, c := range txBenchCases {
		b.Run(c.name, func(b *testing.B) {
			t := newTxBench(b, c.scheme, c.share)
			start, t0 := t.sent, t.now
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuclock.Thread().Nanoseconds()
			for t.sent-start < b.N {
				t.poll()
			}
			cpu := cpuclock.Thread().Nanoseconds() - cpu0
			b.StopTimer()
			n := t.sent - start
			b.ReportMetric(float64(n)/b.Elapsed().Seconds()/1e6, "Mpps")
			if cpu0 > 0 {
				reportCPU(b, cpu, n)
			}
			// The engine sent at the line rate of virtual time.
			if n > 10*txBenchQPs {
				frame := float64(1024 + DataOverhead + phyOverhead)
				gbps := float64(n) * frame * 8 / float64(t.now-t0)
				b.ReportMetric(gbps, "Gb/s-virtual")
			}
		})
	}
}

// reportCPU reports the thread's CPU time per frame (cpu-ns/op) and the
// frame rate it gives (cpu-Mpps): on a shared machine, steadier than the
// wall time.
func reportCPU(b *testing.B, cpuNs int64, frames int) {
	b.ReportMetric(float64(cpuNs)/float64(frames), "cpu-ns/op")
	b.ReportMetric(float64(frames)/float64(cpuNs)*1e3, "cpu-Mpps")
}

func TestTxPathAllocatesNothing(t *testing.T) {
	for _, c := range txBenchCases {
		tb := newTxBench(t, c.scheme, c.share)
		if n := testing.AllocsPerRun(1000, func() { tb.poll() }); n != 0 {
			t.Errorf("%s: a tx poll allocates %.2f times", c.name, n)
		}
	}
}
