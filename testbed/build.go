package testbed

import (
	"fmt"
	"path/filepath"

	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/switchd"
)

// SwitchConfig is the switch of the experiment: port i faces host i, with a /32
// route to it, the experiment's link rate, delay and buffer, and the scheme's CP
// on every port.
func (e *Experiment) SwitchConfig() switchd.Config {
	t := &e.Topology
	c := switchd.DefaultConfig()
	c.Switch.Mode = switchd.ModeRTC
	c.Switch.Lcores = []uint{e.Lcores.Switch}
	c.Telemetry.Console = false
	c.Telemetry.SampleUs = e.Experiment.SampleUs
	for i := 0; i < t.Hosts; i++ {
		name := fmt.Sprintf("p%d", i)
		c.Ports = append(c.Ports, switchd.PortConfig{
			Name: name, MAC: macString(SwitchPortMAC(i)), PeerMAC: macString(HostMAC(i)),
			LinkGbps: t.LinkGbps, DelayUs: t.DelayUs, BufferBytes: t.BufferBytes,
		})
		c.Routes = append(c.Routes, switchd.RouteConfig{Prefix: ipString(HostIP(i)) + "/32", Port: name})
	}
	c.CC.Scheme = e.CC.Scheme
	c.CC.BaseRTTUs = t.BaseRTTUs
	c.CC.MTU = t.MTUBytes
	c.CC.ExpectedFlows = e.CC.ExpectedFlows
	if len(e.CC.Params) > 0 {
		c.CC.Params = map[string]map[string]any{e.CC.Scheme: e.CC.Params}
	}
	c.PFC.Enabled = e.PFC.Enabled
	c.PFC.XOFFBytes = e.PFC.XOFFBytes
	c.PFC.XONOffsetBytes = e.PFC.XONOffsetBytes
	return c
}

// HostConfigs are the experiment's hosts: host i has HostIP(i), sends every
// frame to its switch port, and offers the flows, incasts and workloads whose
// sender it is.
func (e *Experiment) HostConfigs() []hostd.Config {
	t := &e.Topology
	hosts := make([]hostd.Config, t.Hosts)
	for i := range hosts {
		h := &hosts[i]
		h.Name = fmt.Sprintf("h%d", i)
		h.IP = ipString(HostIP(i))
		h.MAC = macString(HostMAC(i))
		h.GatewayMAC = macString(SwitchPortMAC(i))
		h.LinkGbps = t.LinkGbps
		h.MTUBytes = t.MTUBytes
		h.BaseRTTUs = t.BaseRTTUs
		h.Scheme = e.CC.Scheme
		h.CC = e.CC.Params
		h.ExpectedFlows = e.CC.ExpectedFlows
		h.AckEvery = t.AckEvery
		h.RTOUs, h.NakIntervalUs = t.RTOUs, t.NakIntervalUs
		if h.RTOUs == 0 {
			h.RTOUs = t.worstRTTUs()
		}
		if h.NakIntervalUs == 0 {
			h.NakIntervalUs = t.worstRTTUs()
		}
		h.SampleUs = e.Experiment.SampleUs
	}
	for _, f := range e.Flows {
		hosts[f.Src].Flows = append(hosts[f.Src].Flows, hostd.FlowConfig{
			ID: f.ID, Dst: ipString(HostIP(f.Dst)), SizeBytes: f.SizeBytes, StartUs: f.StartUs, RateGbps: f.RateGbps,
		})
	}
	for _, in := range e.Incast {
		per := max(in.FlowsPerSender, 1)
		for k, s := range in.Senders {
			hosts[s].Incast = append(hosts[s].Incast, hostd.IncastConfig{
				IDBase: in.IDBase + k*per*max(in.Repeat, 1), Dst: ipString(HostIP(in.Dst)),
				Flows: per, SizeBytes: in.SizeBytes, StartUs: in.StartUs, Repeat: in.Repeat, PeriodUs: in.PeriodUs,
			})
		}
	}
	for wi, w := range e.Workloads {
		dsts := make([]string, len(w.Dsts))
		for j, d := range w.Dsts {
			dsts[j] = ipString(HostIP(d))
		}
		cdf := w.CDF
		if !filepath.IsAbs(cdf) {
			cdf = filepath.Join(e.dir, cdf)
		}
		for k, s := range w.Senders {
			hosts[s].Workloads = append(hosts[s].Workloads, hostd.WorkloadConfig{
				// Each sender of each workload gets its own id range.
				IDBase: w.IDBase + (wi*len(w.Senders)+k)*1_000_000, CDF: cdf, Dsts: dsts,
				Load: w.Load, StartUs: w.StartUs, StopUs: w.StopUs, MaxFlows: w.MaxFlows,
			})
		}
	}
	return hosts
}
