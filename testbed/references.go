package testbed

import (
	"fmt"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/dcqcn"
	"github.com/ccbed/ccbed/ccalgo/dctcp"
	"github.com/ccbed/ccbed/ccalgo/rocc"
	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/testbed/report"
)

// addReferences draws the experiment's reference lines on its plots: the
// scheme's target queue or marking thresholds on the queue plot (RoCC's
// Q_ref, DCQCN's Kmin and Kmax, DCTCP's K, for the host links' parameters),
// and, when every flow is a static flow to one destination, that
// destination's fair share C/N in payload goodput on the rate plot.
func (e *Experiment) addReferences(rec *report.Recorder) {
	t := &e.Topology
	sch, err := ccalgo.Lookup(e.CC.Scheme)
	if err == nil {
		env := ccalgo.Env{LinkBps: t.LinkGbps * 1e9, BaseRTT: max(config.UsToNs(t.BaseRTTUs), 1), MTU: t.MTUBytes,
			MaxFlows: 1024, ExpectedFlows: e.CC.ExpectedFlows, ID: 1}
		params := sch.DefaultParams(env)
		if e.CC.overrides.Apply(params) == nil {
			kb := func(b int64) string { return fmt.Sprintf("%.0f KB", float64(b)/1e3) }
			switch p := params.(type) {
			case *rocc.Params:
				rec.AddReference(report.QueuePlotFile, report.RefLine{Label: "Q_ref " + kb(p.QRefBytes), Y: float64(p.QRefBytes)})
			case *dcqcn.Params:
				rec.AddReference(report.QueuePlotFile, report.RefLine{Label: "Kmin " + kb(p.KminBytes), Y: float64(p.KminBytes)})
				rec.AddReference(report.QueuePlotFile, report.RefLine{Label: "Kmax " + kb(p.KmaxBytes), Y: float64(p.KmaxBytes)})
			case *dctcp.Params:
				rec.AddReference(report.QueuePlotFile, report.RefLine{Label: "K " + kb(p.KBytes), Y: float64(p.KBytes)})
			}
		}
	}
	if len(e.Flows) == 0 || len(e.Incast)+len(e.Workloads)+len(e.ns3Flows) > 0 {
		return
	}
	dst := e.Flows[0].Dst
	_, _, in := e.topo.Peer(dst, 0)
	for _, f := range e.Flows {
		if f.Dst != dst || (f.RateGbps != 0 && f.RateGbps*1e9 < in.Bps) {
			return // several bottlenecks, or flows capped below the link: no single C/N
		}
	}
	frame := float64(t.MTUBytes + hostd.DataOverhead + 24) // preamble, FCS and gap on the wire
	share := in.Bps / 1e9 * float64(t.MTUBytes) / frame / float64(len(e.Flows))
	rec.AddReference(report.RatePlotFile, report.RefLine{Label: fmt.Sprintf("C/%d (payload) %.3g Gb/s", len(e.Flows), share), Y: share})
}
