package testbed

import (
	"fmt"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/testbed/report"
)

// LinkFailure is a link taken down during a run (virtual time): every link
// between the nodes A and B, named as the topology names them (h0, h1, ...
// for hosts; s0, s1, ... or an explicit topology's switch names), is down
// from DownUs and, when UpUs is later, up again from UpUs. A frame that meets
// the link down is lost; routes do not move around it.
type LinkFailure struct {
	A      string  `toml:"a" required:"the node at one end (h0, s1, ...)"`
	B      string  `toml:"b" required:"the node at the other end"`
	DownUs float64 `toml:"down_us" required:"when the link goes down"`
	UpUs   float64 `toml:"up_us"` // when it comes back up; 0: it stays down
}

// failures checks the experiment's injected failures against its topology
// and returns them as the fabric takes them.
func (e *Experiment) failures() (fabric.Failures, error) {
	f := fabric.Failures{LossRate: e.Topology.LossRate}
	if !(f.LossRate >= 0 && f.LossRate < 1) {
		return f, e.errorf("topology.loss_rate", "%g: want a probability in [0, 1)", f.LossRate)
	}
	if (f.LossRate > 0 || len(e.LinkFailures) > 0) && e.Experiment.Clock != ClockVirtual {
		key := "topology.loss_rate"
		if len(e.LinkFailures) > 0 {
			key = "link_failures"
		}
		return f, e.errorf(key, "link loss and link failures are injected in virtual time only (experiment.clock = %q)", ClockVirtual)
	}
	byName := map[string]int{}
	for n := 0; n < e.topo.NumNodes(); n++ {
		byName[e.topo.NodeName(n)] = n
	}
	for i, lf := range e.LinkFailures {
		at := func(k string) string { return fmt.Sprintf("link_failures[%d].%s", i, k) }
		a, okA := byName[lf.A]
		b, okB := byName[lf.B]
		switch {
		case !okA:
			return f, e.errorf(at("a"), "%q: no such node", lf.A)
		case !okB:
			return f, e.errorf(at("b"), "%q: no such node", lf.B)
		case !(lf.DownUs >= 0):
			return f, e.errorf(at("down_us"), "%g: want >= 0", lf.DownUs)
		case lf.UpUs != 0 && !(lf.UpUs > lf.DownUs):
			return f, e.errorf(at("up_us"), "%g: want after down_us (%g), or 0 to stay down", lf.UpUs, lf.DownUs)
		}
		f.LinkDown = append(f.LinkDown, fabric.LinkDown{A: a, B: b, DownNs: config.UsToNs(lf.DownUs), UpNs: config.UsToNs(lf.UpUs)})
	}
	if err := (&fabric.Spec{Topo: e.topo, Failures: f}).CheckFailures(); err != nil {
		return f, e.errorf("link_failures", "%v", err)
	}
	return f, nil
}

// linkLosses names the fabric's link losses for summary.json.
func (e *Experiment) linkLosses(ls []fabric.LinkLoss) []report.LinkLossSummary {
	t := e.topo
	var out []report.LinkLossSummary
	for _, l := range ls {
		from := t.NodeName(l.From)
		if !t.IsHost(l.From) {
			from = fmt.Sprintf("%s.p%d", from, l.FromPort)
		}
		out = append(out, report.LinkLossSummary{From: from, To: t.NodeName(l.To), Frames: l.Frames, Lost: l.Lost, DownLost: l.DownLost})
	}
	return out
}
