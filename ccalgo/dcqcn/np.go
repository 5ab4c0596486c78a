package dcqcn

import "github.com/ccbed/ccbed/ccalgo"

// NP is DCQCN's notification point (paper Section 3.1, Figure 6): a CNP to a QP
// when a CE-marked packet arrives and none went to that QP in the last N us.
type NP struct {
	interval int64
	// lastCNP is, per QP, the time of the last CNP plus 1; 0 if none. Zero
	// as "none" leaves the table as make returns it: a host's NP is sized
	// for every receiver slot it may have (hostd max_rx_flows, 65,536 in
	// a fabric: 512 KB), and its pages are only touched for the slots in
	// use (1,024 hosts of a fat-tree held 527 MB when every entry was
	// written at start).
	lastCNP []int64
}

var _ ccalgo.NotificationPoint = (*NP)(nil)

// NewNP returns an NP for env.MaxFlows QPs.
func NewNP(p *Params, env ccalgo.Env) (*NP, error) {
	if err := p.validateNP(); err != nil {
		return nil, err
	}
	if env.MaxFlows < 1 {
		return nil, bad("MaxFlows", env.MaxFlows, "env must allow at least one QP")
	}
	return &NP{interval: int64(p.CNPIntervalUs * 1000), lastCNP: make([]int64, env.MaxFlows)}, nil
}

// OnData echoes the send timestamp and mark in the ACK and reports whether a CNP
// is due. A QP index outside [0, MaxFlows) never gets a CNP.
func (n *NP) OnData(now int64, d *ccalgo.DataArrival, ack *ccalgo.AckFields) bool {
	ack.EchoTS = d.SendTS
	ack.Mark = d.Mark
	if d.Mark != ccalgo.MarkCE || d.QP < 0 || int(d.QP) >= len(n.lastCNP) {
		return false
	}
	if last := n.lastCNP[d.QP]; last != 0 && now-(last-1) < n.interval {
		return false
	}
	n.lastCNP[d.QP] = now + 1 // times are >= 0: never 0
	return true
}
