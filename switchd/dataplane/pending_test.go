package dataplane

import (
	"testing"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/wire"
)

// TestGeneratedFrameWaitsForFullTx: a PFC pause the engine generates while
// its port's tx ring is full is kept, not dropped, and goes out once the
// ring has room. Port 0's cable holds 63 frames, and the test fills it
// through the switch's own port; then host 0 sends to host 3 (0.2 Gb/s)
// until its ingress count passes XOFF. The pause toward host 0 finds the
// ring full: no drop_tx may be counted, host 0 first takes what filled the
// ring, no pause among it, and the next polls bring the pause. Each mode
// transmits generated frames through its tx+CC role; rtc also with one tx
// call per port (plainPort) instead of the batched call. The test polls the
// switch itself, with a clock it advances by 1 us a poll: port 3 drains
// about 25 B a poll, so its queue, and the count, only grow.
func TestGeneratedFrameWaitsForFullTx(t *testing.T) {
	for _, tc := range []struct {
		name  string
		c     Config
		plain bool
	}{
		{"rtc", Config{Name: "gp"}, false},
		{"rtc-per-port", Config{Name: "gpp"}, true},
		{"pipeline", Config{Name: "gpl", Pipeline: true}, false},
		{"sharded-1rx-2tx", Config{Name: "gps", RxLcores: 1, TxLcores: 2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mp := newPool(t, "genpend_"+tc.c.Name, 4095)
			hosts, sw := cablesOf(t, tc.c.Name, mp, 64)
			if tc.plain {
				for i := range sw {
					sw[i] = plainPort{sw[i]}
				}
			}
			cfg := switchConfig("none", []float64{10, 10, 10, 0.2})
			cfg.PFC.Enabled = true
			cfg.PFC.XOFFBytes = 20_000
			cfg.Buffer.Mode = switchd.BufferStatic
			eng, err := switchd.New(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(eng, sw, mp, tc.c)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			now := int64(1_000_000_000)
			poll := func() {
				switch {
				case tc.c.RxLcores > 0:
					s.PollShard(0, now)
					for k := range tc.c.TxLcores {
						s.PollTxShard(k, now)
					}
				case tc.c.Pipeline:
					s.PollRx(now)
					s.PollSwitch(now)
					s.PollTx(now)
				default:
					s.PollRTC(now)
				}
				now += 1000
			}
			port0 := func() switchd.PortCounters {
				eng.PublishEgress()
				eng.PublishIngress()
				return eng.Snapshot().Ports[0]
			}
			b := dpdk.NewBurst(64)
			defer b.Free()
			drain := func(h port.Port) (data, pauses int) {
				var f wire.Frame
				for n := h.RxBurst(b.Pkts); n > 0; n = h.RxBurst(b.Pkts) {
					for _, m := range b.Pkts[:n] {
						if err := wire.Decode(m.Data(), &f); err != nil {
							t.Errorf("bad frame: %v", err)
							continue
						}
						switch f.Kind {
						case wire.KindData:
							data++
						case wire.KindPFC:
							for p := range wire.PFCPriorities {
								if f.PFC.Enabled(p) && f.PFC.PauseQuanta(p) > 0 {
									pauses++
								}
							}
						}
					}
					dpdk.FreeBulk(b.Pkts[:n])
				}
				return data, pauses
			}

			filled := fillTx(t, mp, sw[0])
			for sent := 0; port0().PausesSent == 0; sent += 8 {
				if sent >= 400 {
					t.Fatalf("host 0 sent %d frames toward port 3 and port 0 sent no pause: %+v", sent, port0())
				}
				send(t, mp, hosts[0], 0, 3, 8, 1000)
				poll()
				drain(hosts[3])
			}
			if pc := port0(); pc.DropTx != 0 {
				t.Fatalf("port 0 dropped %d frames at tx (its pause among them?): %+v", pc.DropTx, pc)
			}
			if data, pauses := drain(hosts[0]); data != filled || pauses != 0 {
				t.Fatalf("host 0 took %d data frames and %d pauses from its full ring, want the %d that filled it and no pause",
					data, pauses, filled)
			}
			got := 0
			for i := 0; i < 4 && got == 0; i++ {
				poll()
				_, got = drain(hosts[0])
			}
			if got == 0 {
				t.Errorf("the pause never reached host 0 once its ring had room: %+v", port0())
			}
			if pc := port0(); pc.DropTx != 0 {
				t.Errorf("port 0 dropped %d frames at tx", pc.DropTx)
			}
		})
	}
}

// fillTx has port p send frames until its tx refuses one, and returns how
// many it took.
func fillTx(tb testing.TB, mp *dpdk.Mempool, p port.Port) int {
	tb.Helper()
	b := dpdk.NewBurst(1)
	defer b.Free()
	ep := wire.Endpoints{DstMAC: hostMAC(0), SrcMAC: portMAC(0), SrcIP: hostIP(3), DstIP: hostIP(0), SrcPort: 49155}
	for n := 0; ; n++ {
		if err := mp.AllocBulk(b.Pkts); err != nil {
			tb.Fatal(err)
		}
		l, err := wire.BuildData(b.Pkts[0].Room(), &ep, &wire.DataSpec{Opcode: wire.OpSendOnly, DestQP: 1, PSN: uint32(n), PayloadLen: 100})
		if err != nil {
			tb.Fatal(err)
		}
		b.Pkts[0].SetLen(l)
		if p.TxBurst(b.Pkts) == 0 {
			dpdk.FreeBulk(b.Pkts)
			if n == 0 {
				tb.Fatal("the port took no frame")
			}
			return n
		}
	}
}
