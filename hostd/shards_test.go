package hostd

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/wire"
)

// mnet joins two hosts of several engines each (NewEngines) back to back in
// virtual time, as vnet joins two engines: a frame an engine sends arrives
// delay ns later at the engine of the other host that rss picks, as a NIC's
// RSS picks an rx queue (by default a hash of the IPv4 addresses and the UDP
// ports, so that a flow's ACKs often reach another engine than the one that
// sends it).
type mnet struct {
	tb    testing.TB
	hosts [2]Shards
	now   int64
	delay int64
	q     [2][][]vpkt // frames in flight to host h's engine k
	buf   []byte
	ctls  Controls
	fr    wire.Frame
	rss   func(to int, frame []byte) int
	sent  [2][]int // data frames each engine sent
}

func newMnet(tb testing.TB, a, b Spec, na, nb int) *mnet {
	tb.Helper()
	m := &mnet{tb: tb, delay: 2000, buf: make([]byte, 16384)}
	for h, c := range []struct {
		cfg Spec
		n   int
	}{{a, na}, {b, nb}} {
		engs, err := NewEngines(c.cfg, c.n, 0)
		if err != nil {
			tb.Fatal(err)
		}
		m.hosts[h] = engs
		m.q[h] = make([][]vpkt, c.n)
		m.sent[h] = make([]int, c.n)
	}
	m.rss = m.hashRSS
	return m
}

// hashRSS spreads frames over the receiving host's engines by their IPv4
// addresses and UDP ports (engine 0 for frames without them).
func (m *mnet) hashRSS(to int, frame []byte) int {
	if wire.Decode(frame, &m.fr) != nil || m.fr.IP == nil || m.fr.UDP == nil {
		return 0
	}
	h := uint64(m.fr.IP.Src())<<32 | uint64(m.fr.IP.Dst())
	h ^= uint64(m.fr.UDP.SrcPort())<<16 | uint64(m.fr.UDP.DstPort())
	return int(hash64(h) % uint64(len(m.hosts[to])))
}

func (m *mnet) send(from int, b []byte) {
	to := 1 - from
	k := m.rss(to, b)
	m.q[to][k] = append(m.q[to][k], vpkt{at: m.now + m.delay, b: append([]byte(nil), b...)})
}

// inject delivers a frame to engine k of host h now.
func (m *mnet) inject(h, k int, b []byte) {
	m.q[h][k] = append([]vpkt{{at: m.now, b: append([]byte(nil), b...)}}, m.q[h][k]...)
}

// run advances virtual time to until.
func (m *mnet) run(until int64) {
	for iter := 0; m.now < until; iter++ {
		if iter > 50_000_000 {
			m.tb.Fatal("mnet: no progress")
		}
		for h := range m.hosts {
			for k, e := range m.hosts[h] {
				for len(m.q[h][k]) > 0 && m.q[h][k][0].at <= m.now {
					p := m.q[h][k][0]
					m.q[h][k] = m.q[h][k][1:]
					n := e.Receive(m.now, p.b, &m.ctls)
					for j := 0; j < n; j++ {
						l := e.BuildControl(m.buf, &m.ctls.C[j])
						e.ChargeControl(m.now, l)
						m.send(h, m.buf[:l])
					}
				}
			}
		}
		next := until
		for h := range m.hosts {
			for k, e := range m.hosts[h] {
				e.Service(m.now)
				for {
					n := e.NextData(m.now, m.buf)
					if n == 0 {
						break
					}
					m.sent[h][k]++
					m.send(h, m.buf[:n])
				}
			}
		}
		for h := range m.hosts {
			for k, e := range m.hosts[h] {
				next = min(next, e.NextWake(m.now))
				if len(m.q[h][k]) > 0 {
					next = min(next, m.q[h][k][0].at)
				}
			}
		}
		m.now = max(next, m.now+1)
	}
}

// TestOneEngineIsNewEngine: NewEngines with n = 1 builds NewEngine's engine,
// so a host run as one engine keeps its results exactly.
func TestOneEngineIsNewEngine(t *testing.T) {
	for _, scheme := range []string{"none", "dcqcn", "hpcc"} {
		a, b := testConfig("h1", ipA, scheme), testConfig("h2", ipB, scheme)
		a.Incast = []Incast{{IDBase: 10, Dst: ipB, Flows: 5, SizeBytes: 40_000, Repeat: 2, PeriodNs: 300_000}}
		a.Workloads = []Workload{{IDBase: 1000, CDF: mustCDF("../configs/workloads/fb_hadoop.cdf"), Dsts: []uint32{ipB}, Load: 0.3}}
		v := newVnet(t, a, b)
		v.run(2_000_000)
		m := newMnet(t, a, b, 1, 1)
		m.run(2_000_000)
		got := m.hosts[0].Merged()
		if !reflect.DeepEqual(v.eng[0].FCTs(), got.FCTs()) || !reflect.DeepEqual(v.eng[0].Samples(), got.Samples()) {
			t.Errorf("%s: one engine of NewEngines gives other FCTs or samples than NewEngine", scheme)
		}
		if len(got.FCTs()) < 10 {
			t.Errorf("%s: only %d flows completed", scheme, len(got.FCTs()))
		}
	}
}

// TestEnginesShareAHost runs hosts of several engines with frames spread by
// RSS: every flow completes with every byte delivered once, every engine
// sends its share of the flows, ACKs that arrive at another engine than the
// flow's reach its owner, and the merged results count each flow once.
func TestEnginesShareAHost(t *testing.T) {
	tests := []struct {
		name   string
		scheme string
		na, nb int
		flows  int
	}{
		{"1 to 1", "dcqcn", 1, 1, 12},
		{"4 to 1", "dcqcn", 4, 1, 12},
		{"2 to 3", "hpcc", 2, 3, 12},
		{"3 to 4", "none", 3, 4, 13},
		{"16 to 2", "dcqcn", 16, 2, 40},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const size = 64_000
			a, b := testConfig("h1", ipA, tc.scheme), testConfig("h2", ipB, tc.scheme)
			a.MaxQPs = 64
			a.Incast = []Incast{{IDBase: 100, Dst: ipB, Flows: tc.flows, SizeBytes: size}}
			m := newMnet(t, a, b, tc.na, tc.nb)
			m.run(20_000_000)
			sender := m.hosts[0].Merged()
			fcts := sender.FCTs()
			if len(fcts) != tc.flows {
				rc, tx := sender.Counters()
				t.Fatalf("%d of %d flows completed; rx %+v tx %+v", len(fcts), tc.flows, rc, tx)
			}
			ids := map[int64]bool{}
			for _, f := range fcts {
				ids[f.Flow] = true
			}
			if len(ids) != tc.flows {
				t.Errorf("flow ids %v", ids)
			}
			for k, e := range m.hosts[0] {
				_, tx := e.Counters()
				if want := (tc.flows - k + tc.na - 1) / tc.na; int(tx.FlowsCompleted) != want || m.sent[0][k] == 0 {
					t.Errorf("engine %d: %d flows completed (want %d), %d frames sent", k, tx.FlowsCompleted, want, m.sent[0][k])
				}
				if tx.StaleEvents != 0 || tx.BadAcks != 0 {
					t.Errorf("engine %d: %d stale events, %d bad ACKs", k, tx.StaleEvents, tx.BadAcks)
				}
			}
			var bytes uint64
			for _, f := range m.hosts[1].Merged().RxFlows() {
				bytes += f.Bytes
			}
			if bytes != uint64(tc.flows*size) {
				t.Errorf("receiver got %d bytes in order, want %d", bytes, tc.flows*size)
			}
			rxA, _ := sender.Counters()
			if rxA.Acks == 0 || rxA.EventsDropped != 0 {
				t.Errorf("sender: %d ACKs, %d events dropped", rxA.Acks, rxA.EventsDropped)
			}
			if tc.na > 1 && crossed(m.hosts[0]) == 0 {
				t.Error("no ACK reached another engine than its flow's: the test does not test routing")
			}
		})
	}
}

// crossed counts the events engines handed to other engines' tx sides.
func crossed(s Shards) uint64 {
	var n uint64
	for j, e := range s {
		for k, r := range e.evOut {
			if k != j {
				n += r.Produced()
			}
		}
	}
	return n
}

// TestEnginesShareWorkloads: n engines run a workload at 1/n of its load
// each, with distinct flow ids that together are the workload's MaxFlows.
func TestEnginesShareWorkloads(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		a, b := testConfig("h1", ipA, "none"), testConfig("h2", ipB, "none")
		a.MaxQPs = 64
		a.Workloads = []Workload{{IDBase: 1000, CDF: mustCDF("../configs/workloads/fb_hadoop.cdf"), Dsts: []uint32{ipB},
			Load: 0.5, MaxFlows: 17}}
		m := newMnet(t, a, b, n, 2)
		m.run(50_000_000)
		fcts := m.hosts[0].Merged().FCTs()
		ids := map[int64]bool{}
		for _, f := range fcts {
			ids[f.Flow] = true
		}
		for id := int64(1000); id < 1017; id++ {
			if !ids[id] {
				t.Errorf("%d engines: flow %d missing (completed %d: %v)", n, id, len(fcts), ids)
				break
			}
		}
		if len(fcts) != 17 || len(ids) != 17 {
			t.Errorf("%d engines: %d FCTs, %d ids, want 17", n, len(fcts), len(ids))
		}
	}
}

// TestEnginesPFCStopsAll: a PFC pause received by one engine stops every
// engine's data.
func TestEnginesPFCStopsAll(t *testing.T) {
	a, b := testConfig("h1", ipA, "none"), testConfig("h2", ipB, "none")
	a.Incast = []Incast{{Dst: ipB, Flows: 8, SizeBytes: 1 << 40}}
	m := newMnet(t, a, b, 4, 1)
	m.run(100_000)
	var q [wire.PFCPriorities]uint16
	q[3] = 0xffff // 3.355 ms at 10 Gb/s
	frame := make([]byte, 64)
	n, _ := wire.BuildPFC(frame, wire.MAC{2}, 1<<3, &q)
	m.inject(0, 2, frame[:n])
	m.run(100_000 + m.delay)
	at := append([]int(nil), m.sent[0]...)
	m.run(3_000_000)
	for k := range at {
		if d := m.sent[0][k] - at[k]; d > 2 {
			t.Errorf("engine %d sent %d frames during the pause", k, d)
		}
		if _, tx := m.hosts[0][k].Counters(); tx.PauseFrames != 1 {
			t.Errorf("engine %d saw %d pauses, want 1", k, tx.PauseFrames)
		}
	}
	m.run(4_000_000)
	for k := range at {
		if m.sent[0][k]-at[k] < 100 {
			t.Errorf("engine %d did not resume", k)
		}
	}
}

// TestEngineQPNumbers: the QP numbers of n engines carry the engine's index
// above the slot, are unique across the host, and route to their engine.
func TestEngineQPNumbers(t *testing.T) {
	for _, n := range []int{1, 2, 3, 16} {
		c := testConfig("h1", ipA, "none")
		c.MaxQPs = 100
		c.Incast = []Incast{{Dst: ipB, Flows: 100, SizeBytes: 1 << 20}}
		engs, err := NewEngines(c, n, 0)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[uint32]int{}
		for k, e := range engs {
			e.Service(0)
			if len(e.qps) != (100+n-1)/n {
				t.Errorf("%d engines: engine %d has %d QPs", n, k, len(e.qps))
			}
			for _, f := range e.ActiveFlows() {
				if f.QPN == 0 || f.QPN > psnMask {
					t.Errorf("QP number %#x", f.QPN)
				}
				if o, dup := seen[f.QPN]; dup {
					t.Errorf("%d engines: QP number %#x in engines %d and %d", n, f.QPN, o, k)
				}
				seen[f.QPN] = k
				for _, r := range engs {
					if got := r.owner(f.QPN); got != k {
						t.Errorf("%d engines: engine %d routes QP %#x of engine %d to %d", n, r.receiver.shard, f.QPN, k, got)
					}
				}
			}
		}
		if len(seen) != 100 {
			t.Errorf("%d engines: %d flows active, want 100", n, len(seen))
		}
	}
}

func TestNewEnginesErrors(t *testing.T) {
	c := testConfig("h1", ipA, "none")
	tests := []struct {
		name string
		n    int
		qps  int
		want string
	}{
		{"zero", 0, 16, "want 1..16"},
		{"too many", 17, 64, "want 1..16"},
		{"fewer QPs", 8, 4, "max_qps >= 8"},
	}
	for _, tc := range tests {
		c.MaxQPs = tc.qps
		if _, err := NewEngines(c, tc.n, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestShardsWriteResults: the merged engine of several writes the results
// of the host: every flow once in fct.csv, counters summed.
func TestShardsWriteResults(t *testing.T) {
	a, b := testConfig("h1", ipA, "none"), testConfig("h2", ipB, "none")
	a.Incast = []Incast{{IDBase: 1, Dst: ipB, Flows: 6, SizeBytes: 20_000}}
	m := newMnet(t, a, b, 3, 2)
	m.run(2_000_000)
	dir := t.TempDir()
	if err := writeResults(dir, "", m.hosts[0].Merged(), &PortCounter{TxFrames: 9}, 0); err != nil {
		t.Fatal(err)
	}
	fct, _ := os.ReadFile(filepath.Join(dir, "fct.csv"))
	if lines := strings.Split(strings.TrimSpace(string(fct)), "\n"); len(lines) != 7 {
		t.Fatalf("fct.csv:\n%s", fct)
	}
	js, _ := os.ReadFile(filepath.Join(dir, "counters.json"))
	for _, want := range []string{`"host": "h1"`, `"flows_completed": 6`, `"flows_started": 6`, `"tx_frames": 9`} {
		if !strings.Contains(string(js), want) {
			t.Fatalf("counters.json lacks %s:\n%s", want, js)
		}
	}
	// Counters: a sum over every field.
	var one RxCounters
	setAll(reflect.ValueOf(&one).Elem())
	engs := Shards{{receiver: receiver{rc: one}}, {receiver: receiver{rc: one}}, {receiver: receiver{rc: one}}}
	rc, _ := engs.Counters()
	if got := fmt.Sprint(rc); strings.Contains(got, " 1 ") || strings.Contains(got, " 0 ") {
		t.Errorf("summed counters %s: a field not summed", got)
	}
}

// setAll sets every uint64 of v (nested structs included) to 1.
func setAll(v reflect.Value) {
	for i := 0; i < v.NumField(); i++ {
		switch f := v.Field(i); f.Kind() {
		case reflect.Uint64:
			f.SetUint(1)
		case reflect.Struct:
			setAll(f)
		}
	}
}
