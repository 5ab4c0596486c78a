package dcqcn

import (
	"math"

	"github.com/ccbed/ccbed/ccalgo"
)

// NP is DCQCN's notification point (paper Section 3.1, Figure 6): a CNP to a QP
// when a CE-marked packet arrives and none went to that QP in the last N us.
type NP struct {
	interval int64
	lastCNP  []int64 // per QP, time of the last CNP; math.MinInt64 if none
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
	n := &NP{interval: int64(p.CNPIntervalUs * 1000), lastCNP: make([]int64, env.MaxFlows)}
	for i := range n.lastCNP {
		n.lastCNP[i] = math.MinInt64
	}
	return n, nil
}

// OnData echoes the send timestamp and mark in the ACK and reports whether a CNP
// is due. A QP index outside [0, MaxFlows) never gets a CNP.
func (n *NP) OnData(now int64, d *ccalgo.DataArrival, ack *ccalgo.AckFields) bool {
	ack.EchoTS = d.SendTS
	ack.Mark = d.Mark
	if d.Mark != ccalgo.MarkCE || d.QP < 0 || int(d.QP) >= len(n.lastCNP) {
		return false
	}
	last := n.lastCNP[d.QP]
	if last != math.MinInt64 && now-last < n.interval {
		return false
	}
	n.lastCNP[d.QP] = now
	return true
}
