package testbed

import (
	"io"
	"math"
	"sort"

	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/ns3"
)

// GeneratedFlows are the flows the experiment's run posts before its
// duration ends: its static flows (and an ns3 topology's flow file's), its
// incasts' flows and the flows its workloads draw (hostd.Engine.Arrivals on
// fresh host engines: the flows of a virtual-time run, with the same ids,
// sizes and start times), each with its priority resolved (its own, else
// its sender's), in start order (ties by sender, then id).
func (e *Experiment) GeneratedFlows() ([]fabric.Flow, error) {
	p, err := e.Plan()
	if err != nil {
		return nil, err
	}
	spec := p.Spec
	end := int64(math.Round(e.Experiment.DurationMs * 1e6))
	hostPrio := func(h int, pr *int) *int {
		if pr != nil {
			return pr
		}
		v := fabric.DefaultPriority
		if x, ok := spec.HostPriority[h]; ok {
			v = int(x)
		}
		return &v
	}
	var out []fabric.Flow
	add := func(f fabric.Flow) {
		if f.StartNs < end {
			f.Priority = hostPrio(f.Src, f.Priority)
			out = append(out, f)
		}
	}
	for _, f := range spec.Flows {
		add(f)
	}
	for _, in := range spec.Incast {
		per, rounds := max(in.FlowsPerSender, 1), max(in.Repeat, 1)
		for k, snd := range in.Senders {
			id := in.IDBase + k*per*rounds // as hostd numbers an incast group's flows
			for r := 0; r < rounds; r++ {
				for j := 0; j < per; j++ {
					add(fabric.Flow{ID: id, Src: snd, Dst: in.Dst, SizeBytes: in.SizeBytes,
						StartNs: in.StartNs + int64(r)*in.PeriodNs, Priority: in.Priority})
					id++
				}
			}
		}
	}
	byIP := make(map[uint32]int, len(p.Topo.Hosts))
	for i, h := range p.Topo.Hosts {
		byIP[h.IP] = i
	}
	for h := range p.Hosts {
		if len(p.Hosts[h].Workloads) == 0 {
			continue
		}
		c := p.Hosts[h]
		c.GrowResults = true // a throwaway engine: no room reserved for results
		eng, err := hostd.NewEngine(c, 0)
		if err != nil {
			return nil, err
		}
		eng.Arrivals(end, func(a hostd.Arrival) {
			pr := int(a.Priority)
			out = append(out, fabric.Flow{ID: int(a.ID), Src: h, Dst: byIP[a.Dst], SizeBytes: a.Size, StartNs: a.StartNs, Priority: &pr})
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if a.StartNs != b.StartNs {
			return a.StartNs < b.StartNs
		}
		if a.Src != b.Src {
			return a.Src < b.Src
		}
		return a.ID < b.ID
	})
	return out, nil
}

// ExportNS3Flows writes the flows the experiment's run posts
// (GeneratedFlows) to w as an HPCC ns-3 flow.txt (ns3.WriteFlows):
// hosts as ns-3 node ids (an ns3 topology's own; otherwise host i is node
// i, hosts numbered before switches as HPCC's topology generator does),
// start times plus topology.ns3_start_s. It returns how many it wrote.
func (e *Experiment) ExportNS3Flows(w io.Writer) (int, error) {
	flows, err := e.GeneratedFlows()
	if err != nil {
		return 0, err
	}
	node := func(h int) int { return h }
	if ids := e.ns3HostIDs; ids != nil {
		node = func(h int) int { return ids[h] }
	}
	origin := int64(math.Round(e.Topology.NS3StartS * 1e9))
	return len(flows), ns3.WriteFlows(w, flows, node, origin)
}
