package hostd

import (
	"testing"

	"github.com/ccbed/ccbed/wire"
)

// PFC at a host: a pause received holds the priorities it names, and the
// host tags its flows' priorities (DSCP or an 802.1Q PCP) for the switch.

func TestPFCPause(t *testing.T) {
	a, b := oneFlow("none", 0, 0)
	v := newVnet(t, a, b)
	v.run(100_000)
	before := v.sent[0]
	var q [wire.PFCPriorities]uint16
	q[3] = 0xffff // 65535 quanta x 512 bits at 10 Gb/s = 3.355 ms
	frame := make([]byte, 64)
	n, _ := wire.BuildPFC(frame, wire.MAC{2}, 1<<3, &q)
	v.inject(0, frame[:n])
	v.run(100_000 + v.delay) // frames in flight still arrive; none leaves
	sentAtPause := v.sent[0]
	v.run(3_000_000)
	if d := v.sent[0] - sentAtPause; d > 2 {
		t.Fatalf("%d frames sent during the pause", d)
	}
	if sentAtPause-before > 40 {
		t.Fatalf("%d frames sent after the pause frame arrived", sentAtPause-before)
	}
	v.run(4_000_000)
	if v.sent[0]-sentAtPause < 500 {
		t.Fatalf("did not resume after the pause: %d frames", v.sent[0]-sentAtPause)
	}
	// A pause for another priority changes nothing.
	q = [wire.PFCPriorities]uint16{5: 0xffff}
	n, _ = wire.BuildPFC(frame, wire.MAC{2}, 1<<5, &q)
	s0 := v.sent[0]
	v.inject(0, frame[:n])
	v.run(4_500_000)
	if v.sent[0]-s0 < 500 {
		t.Fatal("a pause for another priority stopped data")
	}
}

// TestPFCPausePerFlowPriority: flows of one host in two priorities are tagged
// each with its own DSCP, and a PFC pause stops only the flows of the
// priorities it names, until it ends or an XON (0 quanta) releases it.
func TestPFCPausePerFlowPriority(t *testing.T) {
	one := 1
	a, b := oneFlow("none", 0, 0) // flow 7: the host's priority, 3
	a.TagPriority = true
	a.Flows = append(a.Flows, Flow{ID: 8, Dst: ipB, Priority: &one})
	v := newVnet(t, a, b)
	var sent [8]int // data frames from host A, by the priority in their DSCP
	v.onFrame = func(from int, fr *wire.Frame, _ []byte) bool {
		if from == 0 && fr.Kind == wire.KindData {
			sent[fr.IP.DSCP()>>3]++
		}
		return true
	}
	pfc := func(prios uint8, quanta uint16) []byte {
		var q [wire.PFCPriorities]uint16
		for p := range q {
			if prios&(1<<p) != 0 {
				q[p] = quanta
			}
		}
		frame := make([]byte, 64)
		n, _ := wire.BuildPFC(frame, wire.MAC{2}, prios, &q)
		return frame[:n]
	}
	// at runs the network to now and returns the frames of each priority sent
	// since the previous call.
	last := sent
	now := int64(0)
	at := func(until int64) (p3, p1 int) {
		v.run(until)
		now = until
		p3, p1 = sent[3]-last[3], sent[1]-last[1]
		last = sent
		return
	}
	if p3, p1 := at(200_000); p3 < 50 || p1 < 50 {
		t.Fatalf("before any pause: %d frames in priority 3, %d in 1: want both sending", p3, p1)
	}
	steps := []struct {
		name       string
		inject     []byte
		until      int64
		min3, max3 int // frames of priority 3 sent in the step
		min1, max1 int
	}{
		// 65535 quanta at 10 Gb/s: 3.355 ms. The first step allows the
		// frames already in flight towards the wire.
		{"pause 3", pfc(1<<3, 0xffff), 1_200_000, 0, 40, 200, 1 << 30},
		{"3 still paused", nil, 2_000_000, 0, 2, 200, 1 << 30},
		{"XON 3", pfc(1<<3, 0), 3_000_000, 200, 1 << 30, 200, 1 << 30},
		{"pause 1", pfc(1<<1, 0xffff), 3_500_000, 200, 1 << 30, 0, 40},
		{"pause both", pfc(1<<1|1<<3, 0xffff), 4_000_000, 0, 40, 0, 2},
		{"both still paused", nil, 5_000_000, 0, 2, 0, 2},
		{"XON both", pfc(1<<1|1<<3, 0), 6_000_000, 200, 1 << 30, 200, 1 << 30},
		{"a pause of priority 5 changes nothing", pfc(1<<5, 0xffff), 7_000_000, 200, 1 << 30, 200, 1 << 30},
	}
	for _, st := range steps {
		if st.inject != nil {
			v.inject(0, st.inject)
		}
		p3, p1 := at(st.until)
		if p3 < st.min3 || p3 > st.max3 || p1 < st.min1 || p1 > st.max1 {
			t.Fatalf("%s (to %d us): %d frames in priority 3 (want %d..%d), %d in priority 1 (want %d..%d)",
				st.name, now/1000, p3, st.min3, st.max3, p1, st.min1, st.max1)
		}
	}
}

// TestTagPCP: a host with tag_pcp sends each flow's data behind an 802.1Q
// tag whose PCP is the flow's priority (DSCP 0), the receiver's ACKs echo
// the tag, and the message completes.
func TestTagPCP(t *testing.T) {
	one := 1
	a, b := oneFlow("none", 200_000, 0)
	a.TagPCP = true
	a.Flows[0].Priority = &one
	v := newVnet(t, a, b)
	var data, acks int
	v.onFrame = func(from int, fr *wire.Frame, _ []byte) bool {
		switch {
		case from == 0 && fr.Kind == wire.KindData:
			if !fr.Eth.HasVLAN() || fr.Eth.PCP() != 1 || fr.Eth.VLANID() != 0 || fr.IP.DSCP() != 0 {
				t.Fatalf("data frame: VLAN %v PCP %d id %d DSCP %d: want a priority tag of PCP 1, DSCP 0",
					fr.Eth.HasVLAN(), fr.Eth.PCP(), fr.Eth.VLANID(), fr.IP.DSCP())
			}
			data++
		case from == 1 && fr.Kind == wire.KindAck:
			if !fr.Eth.HasVLAN() || fr.Eth.PCP() != 1 {
				t.Fatalf("ACK: VLAN %v PCP %d: want the data's tag echoed", fr.Eth.HasVLAN(), fr.Eth.PCP())
			}
			acks++
		}
		return true
	}
	v.run(2_000_000)
	if f := v.eng[0].FCTs(); len(f) != 1 || data < 196 || acks == 0 {
		t.Fatalf("%d FCTs, %d data frames, %d ACKs: want the message sent and acknowledged", len(f), data, acks)
	}
	if got, want := v.eng[0].MaxFrameBytes(), 1024+dataOverhead+wire.INTLen+wire.VLANTagLen; got != want {
		t.Fatalf("MaxFrameBytes %d, want %d (the tag's 4 bytes included)", got, want)
	}
}
