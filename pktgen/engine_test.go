package pktgen

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/wire"
)

func newGen(tb testing.TB, p PortConfig, durNs int64) *Generator {
	tb.Helper()
	g, err := NewGenerator(0, &p, durNs)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// TestRateAccuracy drives generators in virtual time with jittered polls and
// checks the achieved line rate (or packet rate) against the target.
func TestRateAccuracy(t *testing.T) {
	cases := []struct {
		name string
		p    PortConfig
	}{
		{"10Mbps-64B", PortConfig{RateGbps: 0.01}},
		{"1Gbps-64B", PortConfig{RateGbps: 1}},
		{"10Gbps-1500B", PortConfig{RateGbps: 10, Size: 1500}},
		{"10Gbps-imix", PortConfig{RateGbps: 10, Mix: "imix"}},
		{"40Gbps-imix-roce", PortConfig{RateGbps: 40, Mix: "imix", Proto: "roce"}},
		{"100Gbps-64B", PortConfig{RateGbps: 100}},
		{"100Gbps-9000B", PortConfig{RateGbps: 100, Size: 9000, Burst: 8}},
		{"1Mpps", PortConfig{RateMpps: 1}},
		{"14.88Mpps", PortConfig{RateMpps: 14.88}},
		{"0.001Mpps", PortConfig{RateMpps: 0.001, Size: 128}},
	}
	buf := make([]byte, MaxFrameLen)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newGen(t, c.p, 0)
			target := c.p.RateGbps * 1e9
			avgCost := 0.0 // bits per packet (gbps) or 1 (pps)
			for _, cl := range g.classes {
				avgCost += float64(cl.cost) / 1e9
			}
			avgCost /= float64(len(g.classes))
			if c.p.RateMpps > 0 {
				target = c.p.RateMpps * 1e6
			}
			// Run long enough for ~200k packets, polling on average 4 times
			// per bucket depth, at random intervals.
			sched := 0.0
			for _, k := range g.sched {
				sched += float64(g.classes[k].cost) / 1e9
			}
			perPkt := sched / float64(len(g.sched)) / target * 1e9 // ns per packet
			dur := int64(math.Min(2e5*perPkt, 2e9))
			// Poll on average every quarter of a 32-packet burst's time, so
			// that neither the burst cap nor the bucket depth binds.
			burst := c.p.Burst
			if burst == 0 {
				burst = DefaultBurst
			}
			pollNs := float64(burst) * perPkt / 4
			rng := rand.New(rand.NewPCG(1, 2))
			var units float64
			now := int64(0)
			for now < dur {
				k := g.Grant(now, burst)
				for i := 0; i < k; i++ {
					sz := g.Build(buf, now)
					if c.p.RateGbps > 0 {
						units += float64(sz+L1Overhead) * 8
					} else {
						units++
					}
				}
				now += 1 + int64(rng.Float64()*2*pollNs)
			}
			got := units / (float64(now) / 1e9)
			if err := math.Abs(got-target) / target; err > 0.005 {
				t.Fatalf("rate %.6g, target %.6g: error %.3f%% > 0.5%%", got, target, err*100)
			}
		})
	}
}

// TestCountAndDuration checks that a stream stops at its count and duration.
func TestCountAndDuration(t *testing.T) {
	buf := make([]byte, 2048)
	cases := []struct {
		name    string
		p       PortConfig
		durNs   int64
		wantPkt uint64
	}{
		{"count unlimited rate", PortConfig{Count: 1000}, 0, 1000},
		{"count 1 Mpps", PortConfig{Count: 777, RateMpps: 1}, 0, 777},
		{"duration 1 Mpps", PortConfig{RateMpps: 1}, 1e6, 1000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newGen(t, c.p, c.durNs)
			for now := int64(0); now < 1e8 && !g.Done(now); now += 100 {
				for k := g.Grant(now, 32); k > 0; k-- {
					g.Build(buf, now)
				}
			}
			// Duration: packets at 0, 1 us, ... up to but excluding 1 ms,
			// plus the first one granted at once.
			if got := g.Stats().Packets; got < c.wantPkt || got > c.wantPkt+1 {
				t.Fatalf("sent %d packets, want %d", got, c.wantPkt)
			}
		})
	}
}

// TestSizeMixProportions checks that every schedule cycle holds the exact mix.
func TestSizeMixProportions(t *testing.T) {
	cases := []struct {
		mix  string
		want map[int]int // size -> weight
	}{
		{"imix", map[int]int{60: 7, 590: 4, 1514: 1}},
		{"100:1,200:3", map[int]int{100: 1, 200: 3}},
		{"64:1, 128:1, 256:1, 512:1, 1024:1", map[int]int{64: 1, 128: 1, 256: 1, 512: 1, 1024: 1}},
	}
	buf := make([]byte, 2048)
	for _, c := range cases {
		t.Run(c.mix, func(t *testing.T) {
			g := newGen(t, PortConfig{Mix: c.mix}, 0)
			total := 0
			for _, w := range c.want {
				total += w
			}
			const cycles = 1000
			got := map[int]int{}
			run, prev, maxRun := 0, 0, 0
			for i := 0; i < cycles*total; i++ {
				if g.Grant(int64(i), 1) != 1 {
					t.Fatal("unlimited stream refused a packet")
				}
				sz := g.Build(buf, int64(i))
				got[sz]++
				if sz == prev {
					run++
				} else {
					run = 1
				}
				prev, maxRun = sz, max(maxRun, run)
			}
			for sz, w := range c.want {
				if got[sz] != cycles*w {
					t.Errorf("size %d sent %d times, want %d", sz, got[sz], cycles*w)
				}
			}
			if len(got) != len(c.want) {
				t.Errorf("sizes %v, want %v", got, c.want)
			}
			// Smooth weighted round robin: imix's 7 small never come 7 in a row.
			if c.mix == "imix" && maxRun > 2 {
				t.Errorf("longest run of one size %d, want <= 2 (spread mix)", maxRun)
			}
		})
	}
}

// TestFlowVariation decodes built frames and checks the varied fields, the IPv4
// checksum, sequence numbers and timestamps.
func TestFlowVariation(t *testing.T) {
	cases := []struct {
		name string
		p    PortConfig
	}{
		{"udp src_port", PortConfig{Flows: 4}},
		{"udp all", PortConfig{Flows: 5, Vary: []string{"src_port", "dst_port", "src_ip", "dst_ip"}, Size: 128}},
		{"udp dst_ip imix", PortConfig{Flows: 3, Vary: []string{"dst_ip"}, Mix: "imix", SrcIP: "192.168.1.10", DstIP: "192.168.2.250"}},
		{"roce qp", PortConfig{Proto: "roce", Size: 100, Flows: 3, Vary: []string{"src_port", "dest_qp"}, DestQP: 0x10}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newGen(t, c.p, 0)
			ep, _ := c.p.endpoints()
			nf := max(c.p.Flows, 1)
			vary := map[string]bool{}
			for _, v := range c.p.Vary {
				vary[v] = true
			}
			if len(c.p.Vary) == 0 {
				vary["src_port"] = true
			}
			buf := make([]byte, 2048)
			var f wire.Frame
			for i := 0; i < 3*nf+1; i++ {
				now := int64(1000 + i)
				g.Grant(now, 1)
				n := g.Build(buf, now)
				frame := buf[:n]
				if err := wire.Decode(frame, &f); err != nil {
					t.Fatalf("packet %d: %v", i, err)
				}
				fl := uint32(i % nf)
				want := func(field string, base uint32) uint32 {
					if vary[field] {
						return base + fl
					}
					return base
				}
				if f.IP.Src() != want("src_ip", ep.SrcIP) || f.IP.Dst() != want("dst_ip", ep.DstIP) {
					t.Fatalf("packet %d: ips %x %x", i, f.IP.Src(), f.IP.Dst())
				}
				if f.UDP.SrcPort() != uint16(want("src_port", uint32(ep.SrcPort))) ||
					f.UDP.DstPort() != uint16(want("dst_port", uint32(ep.DstPort))) {
					t.Fatalf("packet %d: ports %d %d", i, f.UDP.SrcPort(), f.UDP.DstPort())
				}
				if f.IP.TotalLength() != n-wire.EthernetLen {
					t.Fatalf("packet %d: ip length %d, frame %d", i, f.IP.TotalLength(), n)
				}
				off, ok := headerOffset(frame)
				if !ok {
					t.Fatalf("packet %d: no pktgen header", i)
				}
				h := frame[off:]
				if binary.BigEndian.Uint16(h) != Magic || binary.BigEndian.Uint32(h[4:]) != uint32(i) ||
					int64(binary.BigEndian.Uint64(h[8:])) != now {
					t.Fatalf("packet %d: header % x", i, h[:HeaderLen])
				}
				if c.p.Proto == "roce" {
					if f.Kind != wire.KindData || f.BTH.PSN() != uint32(i) || f.Data.SendTS() != now ||
						f.BTH.DestQP() != want("dest_qp", c.p.DestQP) {
						t.Fatalf("packet %d: roce kind %v psn %d ts %d qp %d", i, f.Kind, f.BTH.PSN(), f.Data.SendTS(), f.BTH.DestQP())
					}
				}
			}
		})
	}
}

// TestReceiverLossAccounting feeds a receiver a stream with drops, reordering and
// a 32-bit sequence wrap.
func TestReceiverLossAccounting(t *testing.T) {
	cases := []struct {
		name      string
		startSeq  uint64
		n         int
		drop      map[int]bool
		swap      [][2]int // deliver these pairs of indices in swapped order
		wantLost  uint64
		wantLate  uint64
		wantRecvd uint64
	}{
		{"clean", 0, 100, nil, nil, 0, 0, 100},
		{"drops", 0, 100, map[int]bool{3: true, 4: true, 50: true}, nil, 3, 0, 97},
		{"reorder", 0, 100, nil, [][2]int{{10, 11}, {20, 22}}, 0, 3, 100}, // 11 10 ... 22 21 20: 3 late
		{"reorder and drop", 0, 100, map[int]bool{30: true}, [][2]int{{5, 6}}, 1, 1, 99},
		{"wrap", 1<<32 - 5, 20, map[int]bool{4: true, 5: true}, [][2]int{{7, 8}}, 2, 1, 18},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newGen(t, PortConfig{}, 0)
			g.seq = c.startSeq
			frames := make([][]byte, c.n)
			for i := range frames {
				frames[i] = make([]byte, 64)
				g.Grant(int64(i), 1)
				g.Build(frames[i], int64(i*10))
			}
			for _, s := range c.swap {
				frames[s[0]], frames[s[1]] = frames[s[1]], frames[s[0]]
			}
			r := NewReceiver(DefaultFlowStats)
			r.next[0] = c.startSeq // the receiver joined at the stream's start
			for i, f := range frames {
				if !c.drop[i] {
					r.Packet(f, int64(i*10+500))
				}
			}
			s := r.Stats().Streams[0]
			if s.Lost != c.wantLost || s.Late != c.wantLate || s.Packets != c.wantRecvd {
				t.Fatalf("lost %d late %d received %d, want %d %d %d", s.Lost, s.Late, s.Packets, c.wantLost, c.wantLate, c.wantRecvd)
			}
			if s.Expected != c.startSeq+uint64(c.n) {
				t.Fatalf("expected %d, want %d", s.Expected, c.startSeq+uint64(c.n))
			}
			if r.lost != s.Lost || r.late != s.Late {
				t.Fatalf("totals lost %d late %d, stream %d %d", r.lost, r.late, s.Lost, s.Late)
			}
			if r.Latency.Count != c.wantRecvd {
				t.Fatalf("latency samples %d, want %d", r.Latency.Count, c.wantRecvd)
			}
		})
	}
}

// TestReceiverOther checks that foreign and malformed frames are counted, not
// accounted to a stream, and never panic.
func TestReceiverOther(t *testing.T) {
	buf := make([]byte, 128)
	g := newGen(t, PortConfig{}, 0)
	g.Grant(0, 1)
	good := buf[:g.Build(buf, 0)]
	badMagic := append([]byte(nil), good...)
	badMagic[udpHdrOff] ^= 0xff
	flowID := append([]byte(nil), good...)
	binary.BigEndian.PutUint16(flowID[udpHdrOff+2:], MaxStreams) // stream 0, flow id 1: a pktgen packet
	notIP := append([]byte(nil), good...)
	notIP[12] = 0x86
	roceShort := append([]byte(nil), buf[:70]...)
	binary.BigEndian.PutUint16(roceShort[udpOff+2:], wire.RoCEv2Port)
	cases := []struct {
		name  string
		frame []byte
		other bool
	}{
		{"good", good, false},
		{"empty", nil, true},
		{"short", good[:40], true},
		{"bad magic", badMagic, true},
		{"stream 0 with a flow id", flowID, false},
		{"not ipv4", notIP, true},
		{"roce too short", roceShort, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReceiver(DefaultFlowStats)
			r.Packet(c.frame, 10)
			if got := r.Stats().Other == 1; got != c.other {
				t.Fatalf("other = %v, want %v", got, c.other)
			}
			if got := r.Stats().Streams[0].Packets == 1; got == c.other {
				t.Fatalf("stream packets %d", r.Stats().Streams[0].Packets)
			}
		})
	}
}

// TestReceiverFlows: a receiver tracks the first flowStats (stream, flow)
// pairs it sees by the flow ids of the pktgen header, each with its packets,
// bytes and latencies; packets of the others (and of flows beyond
// MaxFlowStats, which carry no id) count as untracked.
func TestReceiverFlows(t *testing.T) {
	cases := []struct {
		name      string
		flows     int // per stream; two streams
		track     int
		wantTrack int
	}{
		{"all tracked", 4, 64, 8},
		{"bounded", 16, 5, 5},
		{"none", 4, 0, 0},
		{"beyond the ids", MaxFlowStats + 3, MaxFlowStats, MaxFlowStats},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReceiver(c.track)
			buf := make([]byte, 128)
			var gens [2]*Generator
			for s := range gens {
				g, err := NewGenerator(s, &PortConfig{Flows: c.flows}, 0)
				if err != nil {
					t.Fatal(err)
				}
				gens[s] = g
			}
			type key struct{ s, f int }
			want := map[key]int{}
			lat := map[key]int64{}
			rounds := 3
			for i := range rounds * c.flows {
				for s, g := range gens {
					g.Grant(int64(i), 1)
					n := g.Build(buf, int64(i))
					d := int64(100 + 10*(i%c.flows) + s)
					r.Packet(buf[:n], int64(i)+d)
					k := key{s, i % c.flows}
					want[k]++
					lat[k] = d
				}
			}
			fl := r.Flows()
			if len(fl) != c.wantTrack {
				t.Fatalf("%d flows tracked, want %d", len(fl), c.wantTrack)
			}
			tracked := 0
			for _, f := range fl {
				k := key{f.Stream, f.Flow}
				if f.Packets != uint64(want[k]) || f.Packets != uint64(rounds) || f.Bytes != 64*f.Packets ||
					f.Latency.Count != f.Packets || f.Latency.Min != lat[k] || f.Latency.Max != lat[k] {
					t.Fatalf("flow %+v: %d packets (latency %d..%d), want %d of latency %d", k, f.Packets, f.Latency.Min, f.Latency.Max, want[k], lat[k])
				}
				tracked += int(f.Packets)
			}
			if st := r.Stats(); st.FlowsUntracked != st.Packets-uint64(tracked) {
				t.Fatalf("untracked %d, want %d", st.FlowsUntracked, st.Packets-uint64(tracked))
			}
		})
	}
}

// configCase is a config file and the error Validate must give for it
// ("" none; else a part of the message: file, line, key).
type configCase struct {
	name, toml, wantErr string
}

// checkConfigs decodes and validates each case.
func checkConfigs(t *testing.T, cases []configCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var cfg Config
			f, err := config.Decode("x.toml", c.toml, &cfg)
			if err == nil {
				err = cfg.Validate(f)
			}
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}

// burstAllocs is the allocations of one poll round of g in virtual time,
// stepNs after the last: Grant, then Build of every frame granted; it
// fails when nothing was built.
func burstAllocs(t *testing.T, g *Generator, stepNs int64) float64 {
	t.Helper()
	buf := make([]byte, 2048)
	now := int64(0)
	a := testing.AllocsPerRun(1000, func() {
		now += stepNs
		for k := g.Grant(now, 32); k > 0; k-- {
			g.Build(buf, now)
		}
	})
	if g.Stats().Packets == 0 {
		t.Fatal("nothing built")
	}
	return a
}

// TestConfigValidate checks that bad values are refused with their key and line.
func TestConfigValidate(t *testing.T) {
	// port is a config of one port with keys.
	port := func(keys string) string { return "[[ports]]\n" + keys }
	checkConfigs(t, []configCase{
		{"ok", port("name = \"net_null0\"\nrate_gbps = 10\nmix = \"imix\"\n"), ""},
		{"no ports", "duration_s = 1\n", "ports"},
		{"unknown key", port("name = \"a\"\nspeed = 3\n"), ":3: ports.speed: unknown key"},
		{"bad proto", "[[ports]]\nname = \"a\"\n[[ports]]\nproto = \"tcp\"\n", ":4: ports[1].proto"},
		{"small size", port("size = 40\n"), ":2: ports[0].size"},
		{"roce small", port("proto = \"roce\"\nsize = 64\n"), ":3: ports[0].size"},
		{"two rates", port("rate_gbps = 1\nrate_mpps = 1\n"), ":3: ports[0].rate_mpps"},
		{"bad mix", port("mix = \"64:x\"\n"), ":2: ports[0].mix"},
		{"bad vary", port("vary = [\"ttl\"]\n"), ":2: ports[0].vary"},
		{"bad mac", port("src_mac = \"zz\"\n"), ":2: ports[0].src_mac"},
		{"burst", port("burst = 1000\n"), ":2: ports[0].burst"},
	})
}

// TestHotPathAllocs proves that Grant, Build and Receiver.Packet allocate nothing.
func TestHotPathAllocs(t *testing.T) {
	g := newGen(t, PortConfig{RateGbps: 10, Mix: "imix", Flows: 16, Vary: []string{"src_ip", "src_port"}}, 0)
	r := NewReceiver(DefaultFlowStats)
	buf := make([]byte, 2048)
	now := int64(0)
	allocs := testing.AllocsPerRun(1000, func() {
		now += 1000
		for k := g.Grant(now, 32); k > 0; k-- {
			n := g.Build(buf, now)
			r.Packet(buf[:n], now+500)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocs per burst, want 0", allocs)
	}
	if r.Stats().Streams[0].Packets == 0 {
		t.Fatal("nothing built")
	}
}

func BenchmarkBuild64(b *testing.B) {
	g := newGen(b, PortConfig{Flows: 1024}, 0)
	buf := make([]byte, 2048)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		g.Grant(int64(i), 1)
		g.Build(buf, int64(i))
	}
}

func BenchmarkReceive64(b *testing.B) {
	g := newGen(b, PortConfig{}, 0)
	buf := make([]byte, 64)
	g.Grant(0, 1)
	n := g.Build(buf, 0)
	r := NewReceiver(DefaultFlowStats)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint32(buf[udpHdrOff+4:], uint32(i))
		r.Packet(buf[:n], int64(i))
	}
}

// TestExampleConfigs loads every configs/pktgen-*.toml strictly and validates it.
func TestExampleConfigs(t *testing.T) {
	files, err := filepath.Glob("../configs/pktgen-*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example configs: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var cfg Config
			f, err := config.Load(path, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.Validate(f); err != nil {
				t.Fatal(err)
			}
			for i := range cfg.Ports {
				if _, err := NewGenerator(i, &cfg.Ports[i], 0); err != nil {
					t.Fatalf("ports[%d]: %v", i, err)
				}
			}
		})
	}
}
