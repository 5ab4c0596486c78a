package fabrictest

import "github.com/ccbed/ccbed/fabric"

// StarDelays is n hosts on one switch, host i on switch port i, every link at
// bps with delays[i] ns each way for host i (1 us for i >= len(delays)).
// With no delays it is fabric.Star(n, bps, 1000).
func StarDelays(n int, bps float64, delays []int64) *fabric.Topology {
	t := &fabric.Topology{}
	for i := 0; i < n; i++ {
		t.AddHost("")
	}
	s := t.AddSwitch("")
	for i := 0; i < n; i++ {
		d := int64(1000)
		if i < len(delays) {
			d = delays[i]
		}
		t.ConnectSym(i, s, bps, d)
	}
	return t
}

// Staggered is n long flows to host dst: flow i+1 from host src+i, starting
// at i x gap (all at 0 when gap is 0), at line rate.
func Staggered(n, src, dst int, gap int64) []fabric.Flow {
	f := make([]fabric.Flow, n)
	for i := range f {
		f[i] = fabric.Flow{ID: i + 1, Src: src + i, Dst: dst, StartNs: int64(i) * gap}
	}
	return f
}

// ParkingLot is two bottlenecks in series: switches s0 - s1 - s2 in a chain
// (fabric.Chain), hosts 0 and 1 on s0, 2 and 3 on s1, 4 and 5 on s2, every
// link at bps with 1 us of delay; and three long flows, A (ID 1, host 0 to
// 4) across both trunks from 0, B (ID 2, host 1 to 2) sharing the first from
// gap, C (ID 3, host 3 to 5) sharing the second from 2 gap.
// ParkingLotTrunks names the two trunks.
func ParkingLot(bps float64, gap int64) (*fabric.Topology, []fabric.Flow) {
	return fabric.Chain([]int{2, 2, 2}, bps, bps, 1000), []fabric.Flow{
		{ID: 1, Src: 0, Dst: 4},
		{ID: 2, Src: 1, Dst: 2, StartNs: gap},
		{ID: 3, Src: 3, Dst: 5, StartNs: 2 * gap},
	}
}

// Trunk is one of ParkingLot's bottlenecks: the egress port of switch Sw
// towards the next switch, and the two flows that cross it, as indices into
// ParkingLot's flows.
type Trunk struct {
	Name     string // "s0->s1"
	Sw, Port int
	Flows    [2]int
}

// Util is the trunk's utilisation given each flow's goodput g (in the order
// of ParkingLot's flows) and the link's payload capacity.
func (tr Trunk) Util(g []float64, capacity float64) float64 {
	return (g[tr.Flows[0]] + g[tr.Flows[1]]) / capacity
}

// ParkingLotTrunks returns ParkingLot's two trunks: s0's port 2 (to s1),
// crossed by A and B, and s1's port 3 (to s2), crossed by A and C.
func ParkingLotTrunks() []Trunk {
	return []Trunk{
		{Name: "s0->s1", Sw: 0, Port: 2, Flows: [2]int{0, 1}},
		{Name: "s1->s2", Sw: 1, Port: 3, Flows: [2]int{0, 2}},
	}
}
