package port_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/port"
)

// TestWaitLinkUp: a configured but stopped port stays down and WaitLinkUp
// times out with an error that says what to check; once started, a virtual
// device reports its link up at once.
func TestWaitLinkUp(t *testing.T) {
	mp, err := dpdk.NewPktMbufPool("link_pool", 511, 0, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Free()
	dev := ringVdev(t)
	p, err := dpdk.EthPortByName(dev)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Configure(1, 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := p.RxQueueSetup(0, 128, dpdk.SocketAny, mp); err != nil {
		t.Fatal(err)
	}
	if err := p.TxQueueSetup(0, 128, dpdk.SocketAny); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	_, err = port.WaitLinkUp(p, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "link still down") || !strings.Contains(err.Error(), dev) {
		t.Fatalf("a stopped port: WaitLinkUp = %v, want a link-down error naming the port", err)
	}
	// It gave up (it returned), and not before its timeout; how long after
	// is the scheduler's call.
	if d := time.Since(begin); d < 200*time.Millisecond {
		t.Errorf("WaitLinkUp gave up after %v, before its 200 ms", d)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	l, err := port.WaitLinkUp(p, time.Second)
	if err != nil || !l.Up {
		t.Fatalf("a started net_ring: link %+v, %v", l, err)
	}
	t.Logf("%s link: %+v; flow control %s", dev, l, port.FlowControlState(p))
	scratch := dpdk.NewBurst(8)
	defer scratch.Free()
	if err := port.Shutdown(p, scratch.Pkts); err != nil {
		t.Fatal(err)
	}
	if in := mp.InUse(); in != 0 {
		t.Fatalf("%d mbufs not returned", in)
	}
}

func TestSpeedMismatch(t *testing.T) {
	for _, tc := range []struct {
		mbps uint32
		gbps float64
		want string // a substring; "" for no warning
	}{
		{10000, 10, ""},
		{25000, 25, ""},
		{0, 10, ""},                  // the driver does not know
		{dpdk.SpeedUnknown, 100, ""}, // the same
		{10000, 1, "below"},
		{10000, 25, "above"},
	} {
		got := port.SpeedMismatch("p0", dpdk.Link{SpeedMbps: tc.mbps, Up: true}, tc.gbps)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("NIC %d Mb/s, link_gbps %g: %q, want %q", tc.mbps, tc.gbps, got, tc.want)
		}
	}
}

// TestFlowControl: "off" on a driver without flow control is no error (it is
// off already); asking a virtual device for the NIC's PFC or pause fails and
// says why.
func TestFlowControl(t *testing.T) {
	for _, s := range []string{"", "off", "OFF", "driver", "pause", "pfc"} {
		if _, err := port.ParseFlowControl(s); err != nil {
			t.Errorf("ParseFlowControl(%q): %v", s, err)
		}
	}
	if _, err := port.ParseFlowControl("on"); err == nil {
		t.Error("ParseFlowControl(on) accepted")
	}
	mp, err := dpdk.NewPktMbufPool("fc_pool", 511, 0, dpdk.MbufDefaultDataRoom, dpdk.SocketAny)
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Free()
	dev := ringVdev(t)
	for _, fc := range []port.FlowControl{port.FlowControlPFC, port.FlowControlPause} {
		_, err := port.StartEth(port.EthConfig{Name: dev, Pool: mp, RxDesc: 128, TxDesc: 128, FlowControl: fc})
		if err == nil || !strings.Contains(err.Error(), string(fc)) {
			t.Errorf("flow control %s on net_ring: %v, want an error naming it", fc, err)
		}
	}
	if in := mp.InUse(); in != 0 {
		t.Fatalf("%d mbufs not returned after the refused starts", in)
	}
}

// TestJumboFrames: a pool sized by DataRoomFor carries a 9000-byte MTU frame
// through a port configured for it, in one segment; the default 2 KB mbuf
// cannot hold it (the reason MTUs above ~2000 failed).
func TestJumboFrames(t *testing.T) {
	const frame = 9000 + 14
	if room := int(dpdk.MbufDefaultDataRoom) - dpdk.MbufHeadroom; room >= frame {
		t.Fatalf("the default data room %d holds a %d-byte frame?", room, frame)
	}
	mp, err := dpdk.NewPktMbufPool("jumbo_pool", 255, 0, dpdk.DataRoomFor(frame), dpdk.SocketAny)
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Free()
	dev := ringVdev(t)
	var s port.Started
	defer s.Close()
	p, err := s.Start(port.EthConfig{Name: dev, Pool: mp, RxDesc: 128, TxDesc: 128, MTU: 9000})
	if err != nil {
		t.Fatal(err)
	}
	b := dpdk.NewBurst(2)
	defer b.Free()
	if err := mp.AllocBulk(b.Pkts); err != nil {
		t.Fatal(err)
	}
	for i, m := range b.Pkts {
		r := m.Room()
		if len(r) < frame {
			dpdk.FreeBulk(b.Pkts)
			t.Fatalf("room %d < %d", len(r), frame)
		}
		for j := 0; j < frame; j++ {
			r[j] = byte(i + j)
		}
		m.SetLen(frame)
	}
	if n := p.TxBurst(0, b.Pkts); n != 2 {
		dpdk.FreeBulk(b.Pkts[n:])
		t.Fatalf("TxBurst took %d of 2", n)
	}
	n := p.RxBurst(0, b.Pkts)
	for i, m := range b.Pkts[:n] {
		if d := m.Data(); len(d) != frame || d[0] != byte(i) || d[frame-1] != byte(i+frame-1) {
			t.Errorf("jumbo frame %d: %d bytes, corrupted or cut", i, len(d))
		}
	}
	dpdk.FreeBulk(b.Pkts[:n])
	if n != 2 {
		t.Fatalf("received %d of 2", n)
	}
}
