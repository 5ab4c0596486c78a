package fabric

import (
	"fmt"
	"math/rand/v2"
)

// Failures are faults the virtual-time driver injects into the links, as the
// HPCC-lineage ns-3 simulator's ERROR_RATE_PER_LINK and LINK_DOWN do. The
// zero value injects none (and draws no random number: a run without
// failures is the run it was before they existed).
type Failures struct {
	// LossRate is the probability that a frame is lost on a link, in each
	// direction of every link, each frame independently. The draws come
	// from a PCG generator per link direction seeded by Spec.Seed and the
	// direction, so a run loses the same frames every time.
	LossRate float64
	// LinkDown takes links down (and up again).
	LinkDown []LinkDown
}

// LinkDown is a link failure: every link between nodes A and B (topology
// node indexes) is down from DownNs and, when UpNs > DownNs, up again from
// UpNs; UpNs 0 leaves it down. A frame on the link at any moment it is down
// (entering it, or in flight) is lost. Routes do not move around the
// failure (ccbed runs no routing protocol): the traffic routed over the link
// is lost while it is down, as in a failure shorter than routing takes to
// converge.
type LinkDown struct {
	A, B         int
	DownNs, UpNs int64
}

// LinkLoss is what one direction of a link lost to Failures.
type LinkLoss struct {
	// From and FromPort are the sending node and port, To the receiving
	// node (topology indexes).
	From, FromPort, To int
	// Frames is every frame the sender put on the link direction, lost or
	// not.
	Frames uint64
	// Lost counts frames lost at random (LossRate), DownLost frames lost
	// while the link was down.
	Lost, DownLost uint64
}

// CheckFailures reports what is wrong with s.Failures on s.Topo.
func (s *Spec) CheckFailures() error { return s.Failures.check(s.Topo) }

// check reports what is wrong with f on topology t.
func (f *Failures) check(t *Topology) error {
	if !(f.LossRate >= 0 && f.LossRate < 1) {
		return fmt.Errorf("fabric: loss rate %g: want a probability in [0, 1)", f.LossRate)
	}
	n := t.NumNodes()
	for i, d := range f.LinkDown {
		switch {
		case d.A < 0 || d.A >= n || d.B < 0 || d.B >= n:
			return fmt.Errorf("fabric: link failure %d: nodes %d and %d: want 0..%d", i, d.A, d.B, n-1)
		case d.DownNs < 0 || d.UpNs < 0 || (d.UpNs != 0 && d.UpNs <= d.DownNs):
			return fmt.Errorf("fabric: link failure %d: down at %d ns, up at %d ns: want 0 <= down < up (up 0: stays down)", i, d.DownNs, d.UpNs)
		}
		if len(t.linksBetween(d.A, d.B)) == 0 {
			return fmt.Errorf("fabric: link failure %d: no link between %s and %s", i, t.NodeName(d.A), t.NodeName(d.B))
		}
	}
	return nil
}

// linksBetween are the ports of a that link it to b.
func (t *Topology) linksBetween(a, b int) []int {
	var ports []int
	for p := 0; p < t.NumPorts(a); p++ {
		if peer, _, _ := t.Peer(a, p); peer == b {
			ports = append(ports, p)
		}
	}
	return ports
}

// downSpan is a time a wire is down: [from, until); until 0: from on.
type downSpan struct{ from, until int64 }

// wireFaults is one wire direction's share of Failures.
type wireFaults struct {
	loss     float64
	rng      *rand.PCG
	down     []downSpan
	lost     uint64
	downLost uint64
}

// setFailures gives every wire its share of f (seeded by seed).
func (v *Virtual) setFailures(f *Failures, seed uint64) {
	if f.LossRate == 0 && len(f.LinkDown) == 0 {
		return
	}
	t := v.plan.Topo
	v.faults = make([]wireFaults, len(v.wires))
	for i := range v.faults {
		v.faults[i] = wireFaults{loss: f.LossRate, rng: rand.NewPCG(seed, uint64(i))}
	}
	for _, d := range f.LinkDown {
		for _, ends := range [2][2]int{{d.A, d.B}, {d.B, d.A}} {
			for _, p := range t.linksBetween(ends[0], ends[1]) {
				wf := &v.faults[v.portBase[ends[0]]+p]
				wf.down = append(wf.down, downSpan{d.DownNs, d.UpNs})
			}
		}
	}
}

// lose reports whether a frame on wire wi from enter to arrive is lost, and
// counts it.
func (p *lp) lose(wi int, enter, arrive int64) bool {
	wf := &p.faults[wi]
	for _, s := range wf.down {
		if s.from < arrive && (s.until == 0 || s.until > enter) {
			wf.downLost++
			return true
		}
	}
	if wf.loss > 0 && float64(wf.rng.Uint64()>>11)/(1<<53) < wf.loss {
		wf.lost++
		return true
	}
	return false
}

// linkLosses are the wires that lost frames to failures, by sending node and
// port.
func (v *Virtual) linkLosses() []LinkLoss {
	var out []LinkLoss
	for n := range v.portBase {
		end := len(v.wires)
		if n+1 < len(v.portBase) {
			end = v.portBase[n+1]
		}
		for wi := v.portBase[n]; wi < end && wi < len(v.faults); wi++ {
			if wf := &v.faults[wi]; wf.lost+wf.downLost > 0 {
				out = append(out, LinkLoss{From: n, FromPort: wi - v.portBase[n], To: int(v.wires[wi].to),
					Frames: v.wires[wi].frames, Lost: wf.lost, DownLost: wf.downLost})
			}
		}
	}
	return out
}
