package pktgen

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/pcapw"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/wire"
)

// ReplayConfig makes a port send a capture's frames instead of its stream
// ([ports.replay], or -replay for every port): a pcap or pcapng file of
// Ethernet frames, loaded once (into C memory, copied into fresh mbufs as
// they are sent, as a stream's templates are), in the capture's order, at its recorded timing, at the port's
// rate or as fast as the port takes them, through the capture loops times.
type ReplayConfig struct {
	// File is the capture (pcap or pcapng; its Ethernet frames, at most
	// MaxReplayFrames, each at most MaxFrameLen bytes and kept whole).
	File string `toml:"file" required:"the capture to replay"`
	// Timing is "recorded" (default: each frame leaves at its recorded time
	// after the first frame's, divided by Speed), "rate" (at the port's
	// rate_gbps or rate_mpps, which it needs, with its shape if any) or
	// "fast" (as fast as the port takes them).
	Timing string `toml:"timing"`
	// Speed divides the recorded gaps (2: twice as fast; default 1).
	Speed float64 `toml:"speed"`
	// Loops is how many times the capture is sent (default 1; < 0: until
	// the duration or SIGINT). At recorded timing a loop lasts the
	// capture's span plus its mean gap. count, when given, stops it
	// first.
	Loops int `toml:"loops"`
	// SrcMAC, DstMAC, SrcIP and DstIP, when given, replace those of every
	// frame (IPv4 addresses: the header checksum is updated; UDP and TCP
	// checksums are left as they are).
	SrcMAC string `toml:"src_mac"`
	DstMAC string `toml:"dst_mac"`
	SrcIP  string `toml:"src_ip"`
	DstIP  string `toml:"dst_ip"`
}

// MaxReplayFrames bounds a replayed capture's frames (held in memory for
// the run; the schedule indexes them in 16 bits).
const MaxReplayFrames = 1 << 16

// timing is Timing with its default.
func (r *ReplayConfig) timing() string {
	if r.Timing == "" {
		return "recorded"
	}
	return r.Timing
}

// validate returns "key: message" errors (keys relative to the port).
func (r *ReplayConfig) validate(p *PortConfig) error {
	if r.File == "" {
		return fmt.Errorf("replay.file: missing: the capture to replay")
	}
	if st, err := os.Stat(r.File); err != nil {
		return fmt.Errorf("replay.file: %v", err)
	} else if !st.Mode().IsRegular() {
		return fmt.Errorf("replay.file: %s is not a regular file", r.File)
	}
	rated := p.RateGbps > 0 || p.RateMpps > 0
	switch r.timing() {
	case "recorded":
		if rated {
			return fmt.Errorf("replay.timing: recorded timing takes no rate: drop rate_gbps and rate_mpps, or give timing = \"rate\"")
		}
	case "rate":
		if !rated {
			return fmt.Errorf("replay.timing: \"rate\" needs the port's rate_gbps or rate_mpps")
		}
	case "fast":
		if rated {
			return fmt.Errorf("replay.timing: \"fast\" takes no rate: give timing = \"rate\"")
		}
	default:
		return fmt.Errorf("replay.timing: %q, want recorded, rate or fast", r.Timing)
	}
	if err := config.Float(r.Speed, 0, 1e6); err != nil || r.Speed == 0 && math.Signbit(r.Speed) {
		return fmt.Errorf("replay.speed: %v; 0: 1", err)
	}
	if r.Speed != 0 && r.timing() != "recorded" {
		return fmt.Errorf("replay.speed: scales recorded timing only")
	}
	for _, k := range []struct {
		key string
		set bool
	}{{"size", p.Size != 0}, {"mix", p.Mix != ""}, {"flows", p.Flows != 0}, {"flow", len(p.Flow) > 0},
		{"vary", len(p.Vary) > 0}, {"field", p.Field != (FieldModes{})}, {"proto", p.Proto != ""}} {
		if k.set {
			return fmt.Errorf("%s: a port that replays sends the capture's frames: drop %s", k.key, k.key)
		}
	}
	if _, err := r.rewrite(); err != nil {
		return err
	}
	return nil
}

// replayRewrite is what a replay rewrites in every frame.
type replayRewrite struct {
	srcMAC, dstMAC *wire.MAC
	srcIP, dstIP   *uint32
}

func (r *ReplayConfig) rewrite() (replayRewrite, error) {
	var w replayRewrite
	for _, m := range []struct {
		key, v string
		dst    **wire.MAC
	}{{"src_mac", r.SrcMAC, &w.srcMAC}, {"dst_mac", r.DstMAC, &w.dstMAC}} {
		if m.v != "" {
			a, err := wire.ParseMAC(m.v)
			if err != nil {
				return w, fmt.Errorf("replay.%s: %v", m.key, err)
			}
			*m.dst = &a
		}
	}
	for _, m := range []struct {
		key, v string
		dst    **uint32
	}{{"src_ip", r.SrcIP, &w.srcIP}, {"dst_ip", r.DstIP, &w.dstIP}} {
		if m.v != "" {
			a, err := wire.ParseIPv4(m.v)
			if err != nil {
				return w, fmt.Errorf("replay.%s: %v", m.key, err)
			}
			*m.dst = &a
		}
	}
	return w, nil
}

// apply rewrites frame f in place.
func (w *replayRewrite) apply(f []byte) {
	if w.dstMAC != nil && len(f) >= 6 {
		copy(f[0:6], w.dstMAC[:])
	}
	if w.srcMAC != nil && len(f) >= 12 {
		copy(f[6:12], w.srcMAC[:])
	}
	if (w.srcIP == nil && w.dstIP == nil) || len(f) < ipOff+wire.IPv4MinLen ||
		binary.BigEndian.Uint16(f[12:]) != wire.EtherTypeIPv4 || f[ipOff]>>4 != 4 {
		return
	}
	ihl := int(f[ipOff]&0xf) * 4
	if ihl < wire.IPv4MinLen || len(f) < ipOff+ihl {
		return
	}
	ip := f[ipOff : ipOff+ihl]
	if w.srcIP != nil {
		binary.BigEndian.PutUint32(ip[12:], *w.srcIP)
	}
	if w.dstIP != nil {
		binary.BigEndian.PutUint32(ip[16:], *w.dstIP)
	}
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:], ^fold(sum16(ip, 0)))
}

// Capture is a capture loaded for replay: its Ethernet frames, rewritten,
// and their recorded times (ns, from the capture's clock).
type Capture struct {
	Frames  [][]byte
	TimesNs []int64
}

// LoadCapture reads r's file and applies its rewrites; frames of other
// link types are an error, as are frames kept short of their length on
// the wire (a snap length below the frame) and frames beyond MaxFrameLen.
func (r *ReplayConfig) LoadCapture() (*Capture, error) {
	recs, err := pcapw.ReadFile(r.File)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no frames", r.File)
	}
	if len(recs) > MaxReplayFrames {
		return nil, fmt.Errorf("%s: %d frames, at most %d", r.File, len(recs), MaxReplayFrames)
	}
	w, err := r.rewrite()
	if err != nil {
		return nil, err
	}
	c := &Capture{}
	for i, rec := range recs {
		switch {
		case rec.LinkType != pcapw.LinkTypeEthernet:
			return nil, fmt.Errorf("%s: frame %d: link type %d, want Ethernet (1)", r.File, i, rec.LinkType)
		case len(rec.Data) < rec.OrigLen:
			return nil, fmt.Errorf("%s: frame %d: %d of its %d bytes kept (a snap length): replay needs whole frames", r.File, i, len(rec.Data), rec.OrigLen)
		case len(rec.Data) > MaxFrameLen || len(rec.Data) < wire.EthernetLen:
			return nil, fmt.Errorf("%s: frame %d: %d bytes, want %d..%d", r.File, i, len(rec.Data), wire.EthernetLen, MaxFrameLen)
		}
		w.apply(rec.Data)
		c.Frames = append(c.Frames, rec.Data)
		c.TimesNs = append(c.TimesNs, rec.TimeNs)
	}
	return c, nil
}

// replayTiming is a replay's recorded timing: frame i leaves due[i] ns
// after its loop's start; loop k starts k x loopNs after the first.
type replayTiming struct {
	due    []int64
	loopNs int64
}

// NewReplayGenerator is the engine of a port that replays c as p.Replay
// says: a Generator whose size classes are the capture's frames, in order
// (Grant paces them by recorded timing, the port's rate and shape, or not
// at all; count and duration stop them), for a caller that sends the
// frames itself (Pos is the next one). durationNs as NewGenerator's.
func NewReplayGenerator(p *PortConfig, c *Capture, durationNs int64) (*Generator, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	rc := p.Replay
	if rc == nil || len(c.Frames) == 0 || len(c.Frames) > MaxReplayFrames {
		return nil, fmt.Errorf("pktgen: a replay of %d frames", len(c.Frames))
	}
	n := len(c.Frames)
	g := &Generator{duration: durationNs, count: p.Count, flows: make([]flowFields, 1)}
	loops := rc.Loops
	if loops == 0 {
		loops = 1
	}
	if g.count == 0 && loops > 0 {
		g.count = uint64(loops) * uint64(n)
	}
	g.setRate(p)
	maxCost := int64(0)
	g.sched = make([]uint16, n)
	for i, f := range c.Frames {
		cost := int64(1e9)
		if p.RateGbps > 0 {
			cost = int64(len(f)+L1Overhead) * 8 * 1e9
		}
		maxCost = max(maxCost, cost)
		g.classes = append(g.classes, sizeClass{size: len(f), cost: cost})
		g.sched[i] = uint16(i)
	}
	bucket := p.BucketPackets
	if bucket == 0 {
		bucket = max(p.Burst, DefaultBurst)
	}
	g.depth = int64(bucket) * maxCost
	if g.limited {
		g.shape = newShaper(&p.Shape, g.perPacket, g.depth, g.rate)
	}
	if rc.timing() == "recorded" {
		speed := rc.Speed
		if speed == 0 {
			speed = 1
		}
		t0 := c.TimesNs[0]
		rt := &replayTiming{due: make([]int64, n)}
		for i, t := range c.TimesNs {
			rt.due[i] = int64(float64(max(t-t0, 0)) / speed)
		}
		span := rt.due[n-1]
		if n > 1 {
			span += span / int64(n-1) // and the mean gap before the next loop
		}
		rt.loopNs = span
		g.replay = rt
	}
	return g, nil
}

// grantRecorded is how many of the next frames (at most max) are due at
// now by the recorded timing.
func (g *Generator) grantRecorded(now int64, max int) int {
	rt, n := g.replay, uint64(len(g.sched))
	k := 0
	for k < max {
		i := g.stats.Packets + uint64(k)
		if g.start+int64(i/n)*rt.loopNs+rt.due[i%n] > now {
			break
		}
		k++
	}
	return k
}

// Pos is the schedule position of the next frame: for a replay, the
// capture's frame that leaves next.
func (g *Generator) Pos() int { return g.pos }

// newReplayPort is the TxPort of a port that replays: the capture loaded
// into C memory once (dpdk.Replay), its engine, and the port.
func newReplayPort(pc *PortConfig, p port.Port, pool *dpdk.Mempool, burst int, durNs int64) (*TxPort, error) {
	c, err := pc.Replay.LoadCapture()
	if err != nil {
		return nil, err
	}
	g, err := NewReplayGenerator(pc, c, durNs)
	if err != nil {
		return nil, err
	}
	var eth dpdk.EthPort
	var q uint16
	eq, isEth := p.(port.EthQueue)
	if isEth {
		eth, q = eq.Port, eq.Queue
	}
	rp, err := dpdk.NewReplay(pool, eth, q, c.Frames, burst)
	if err != nil {
		return nil, err
	}
	return &TxPort{port: p, gen: g, pool: pool, burst: dpdk.NewBurst(burst), lens: rp.Lens, replay: rp, replayEth: isEth}, nil
}

// sendReplay sends copies of the next k frames of the capture and returns
// the number the port took, as Poll does.
func (t *TxPort) sendReplay(k int) int {
	pkts := t.burst.Pkts[:k]
	var n int
	var bytes uint64
	var err error
	if t.replayEth {
		n, bytes, err = t.replay.Send(pkts, t.gen.Pos())
	} else if bytes, err = t.replay.Fill(pkts, t.gen.Pos()); err == nil {
		n = t.port.TxBurst(pkts)
	}
	if err != nil {
		t.noMbuf++
		t.pub.noMbuf.Store(t.noMbuf)
		return 0
	}
	t.gen.advance(k, bytes)
	t.count(t.lens[:n])
	t.keepRefused(n, k)
	return n
}

// DumpPcap writes p's stream to a pcap file at path: its count of frames
// (1000 when none) built in virtual time from 0, each stamped with the
// time its rate lets it leave (to the ns; with a shape, looked for at
// doubling steps of at most 1 us), as fast as possible 1 ns apart;
// what cmd/pktgen's -dump-pcap writes, and what a replay can send back.
// It returns the frames written.
func DumpPcap(path string, p *PortConfig) (uint64, error) {
	if p.Replay != nil {
		return 0, fmt.Errorf("pktgen: -dump-pcap: the port replays a capture already")
	}
	q := *p
	if q.Count == 0 {
		q.Count = 1000
	}
	g, err := NewGenerator(0, &q, 0)
	if err != nil {
		return 0, err
	}
	w, err := pcapw.Create(path, 0)
	if err != nil {
		return 0, err
	}
	buf := make([]byte, g.MaxSize())
	step := int64(1)
	for now := int64(0); !g.Done(now); now += step {
		if k := g.Grant(now, 1); k > 0 {
			if err := w.Append(now, buf[:g.Build(buf, now)]); err != nil {
				w.Close()
				return 0, err
			}
			step = 1
		} else if g.limited && g.shape == nil {
			// A constant rate: the next frame's tokens are due in this many ns.
			step = max(1, (g.classes[g.sched[g.pos]].cost-g.tokens+g.rate-1)/g.rate)
		} else {
			step = min(2*step, 1000) // a shape: look again soon, to the ns at first
		}
	}
	return w.Frames(), w.Close()
}
