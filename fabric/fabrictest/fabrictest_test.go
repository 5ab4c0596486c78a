package fabrictest_test

import (
	"reflect"
	"testing"

	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/fabric/fabrictest"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/switchd"
)

func TestStarDelays(t *testing.T) {
	if got, want := fabrictest.StarDelays(4, 10e9, nil), fabric.Star(4, 10e9, 1000); !reflect.DeepEqual(got, want) {
		t.Errorf("StarDelays without delays:\n%+v\nwant fabric.Star's\n%+v", got, want)
	}
	topo := fabrictest.StarDelays(3, 25e9, []int64{2000, 3000})
	for h, want := range []int64{2000, 3000, 1000} {
		if _, _, out := topo.Peer(h, 0); out.DelayNs != want || out.Bps != 25e9 {
			t.Errorf("host %d's link: %+v, want 25 Gb/s, %d ns", h, out, want)
		}
	}
}

func TestStaggered(t *testing.T) {
	got := fabrictest.Staggered(3, 1, 0, 500)
	want := []fabric.Flow{
		{ID: 1, Src: 1, Dst: 0},
		{ID: 2, Src: 2, Dst: 0, StartNs: 500},
		{ID: 3, Src: 3, Dst: 0, StartNs: 1000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Staggered(3, 1, 0, 500) = %+v, want %+v", got, want)
	}
}

// TestParkingLotTrunks checks that each trunk is the port from its switch to
// the next and that its two flows are the ones whose path crosses it.
func TestParkingLotTrunks(t *testing.T) {
	topo, flows := fabrictest.ParkingLot(10e9, 1000)
	if err := topo.Validate(); err != nil {
		t.Fatal(err)
	}
	sw := len(topo.Hosts) // node number of switch 0
	swOf := func(h int) int { peer, _, _ := topo.Peer(h, 0); return peer - sw }
	for _, tr := range fabrictest.ParkingLotTrunks() {
		if peer, _, _ := topo.Peer(sw+tr.Sw, tr.Port); peer != sw+tr.Sw+1 {
			t.Errorf("trunk %s: switch %d port %d leads to node %d, want switch %d", tr.Name, tr.Sw, tr.Port, peer, tr.Sw+1)
		}
		for i, f := range flows {
			crosses := swOf(f.Src) <= tr.Sw && swOf(f.Dst) > tr.Sw
			if listed := i == tr.Flows[0] || i == tr.Flows[1]; crosses != listed {
				t.Errorf("trunk %s: flow %d crosses it %v, listed %v", tr.Name, f.ID, crosses, listed)
			}
		}
	}
	if got := fabrictest.ParkingLotTrunks()[1].Util([]float64{1, 2, 3}, 8); got != 0.5 {
		t.Errorf("second trunk's Util = %v, want (1 + 3) / 8", got)
	}
}

func TestGoodputUnits(t *testing.T) {
	if got, want := fabrictest.PayloadGoodput(100e9, 1000), 100e9*1000/float64(1000+hostd.DataOverhead+24); got != want {
		t.Errorf("PayloadGoodput(100G, 1000) = %v, want %v", got, want)
	}
	if got, want := fabrictest.FrameGoodput(10e9, 1000, 58), 10e9*1000/1082.0; got != want {
		t.Errorf("FrameGoodput(10G, 1000, 58) = %v, want %v", got, want)
	}
	if got := fabrictest.Sum([]float64{1, 2, 3.5}); got != 6.5 {
		t.Errorf("Sum = %v, want 6.5", got)
	}
	if got, want := fabrictest.Gbps([]float64{9.174e9, 0, 12.5e9}), "[9.17 0.00 12.50]"; got != want {
		t.Errorf("Gbps = %s, want %s", got, want)
	}
	if got, want := fabrictest.Scaled([]float64{1, 3}, 4, 3), "[0.250 0.750]"; got != want {
		t.Errorf("Scaled = %s, want %s", got, want)
	}
	if got := fabrictest.Gbps(nil); got != "[]" {
		t.Errorf("Gbps(nil) = %s, want []", got)
	}
}

func TestQueuePeakAndBelow(t *testing.T) {
	r := &fabric.Result{}
	add := func(sw, port int, tNs, q int64) {
		r.Samples = append(r.Samples, fabric.SwitchSample{Switch: sw, Sample: switchd.Sample{TNs: tNs, Port: port, QueueBytes: q}})
	}
	for i, q := range []int64{0, 500, 900, 900, 400, 50, 700, 20} {
		add(0, 1, int64(i+1)*10, q)
		add(0, 2, int64(i+1)*10, 5000) // another port
		add(1, 1, int64(i+1)*10, 6000) // another switch
	}
	peak, at := fabrictest.QueuePeak(r, 0, 1, 0, 80)
	if peak != 900 || at != 30 {
		t.Errorf("QueuePeak = %d at %d, want 900 at 30 (the first of two)", peak, at)
	}
	if got := fabrictest.QueueBelow(r, 0, 1, at, 80, 0.1*float64(peak)); got != 60 {
		t.Errorf("QueueBelow 10 %% of the peak = %d, want 60", got)
	}
	if got := fabrictest.QueueBelow(r, 0, 1, at, 50, 10); got != -1 {
		t.Errorf("QueueBelow never reached = %d, want -1", got)
	}
	if peak, at := fabrictest.QueuePeak(r, 0, 1, 50, 60); peak != 50 || at != 60 {
		t.Errorf("QueuePeak over (50, 60] = %d at %d, want 50 at 60", peak, at)
	}
	if peak, at := fabrictest.QueuePeak(r, 0, 3, 0, 80); peak != 0 || at != 0 {
		t.Errorf("QueuePeak of a port without samples = %d at %d, want 0 at 0", peak, at)
	}
}
