package daemontest

import (
	"path/filepath"
	"testing"

	_ "github.com/ccbed/ccbed/ccalgo/all"
	swdaemon "github.com/ccbed/ccbed/switchd/daemon"
)

// TestSwitchFile: the file SwitchFile writes is one switchd loads, with
// every value where the daemon reads it: ports without a MAC or a route,
// extra lines in [switch] and [cc], extra tables, telemetry left out.
func TestSwitchFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		f    SwitchFile
	}{
		{"full", SwitchFile{IP: "10.0.255.254", Mode: "rtc", Lcores: []int{2}, EALArgs: `["--no-huge", "-m", "256"]`, Mbufs: 4095,
			Switch: "burst = 16\n", Scheme: "dcqcn", CC: "mtu = 8192\n", Tables: "[pfc]\nenabled = true\n",
			CSV: "/tmp/q.csv", JSON: "/tmp/s.json", Ports: []SwitchPort{
				{Name: "p0", Device: "net_ring0", MAC: "02:00:00:00:ff:00", PeerMAC: "02:00:00:00:00:00", LinkGbps: 10, Route: "10.0.0.0/24"},
				{Name: "p1", Device: "net_ring1", MAC: "02:00:00:00:ff:01", PeerMAC: "02:00:00:00:00:01", LinkGbps: 0.05, Route: "10.0.1.0/24"},
			}}},
		{"bare", SwitchFile{IP: "10.79.0.254", Lcores: []int{1}, EALArgs: `["-m", "64"]`, Mbufs: 8191, Scheme: "none", Quiet: true, Ports: []SwitchPort{
			{Name: "p0", Device: "net_af_packet0,iface=v0,framecnt=4096", PeerMAC: "02:00:00:00:00:00", LinkGbps: 0.1},
			{Name: "p1", Device: "net_null0", PeerMAC: "02:00:00:00:00:01", LinkGbps: 1, Route: "10.79.2.0/24"},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			c, err := swdaemon.LoadConfig(f.Write(t, filepath.Join(dir, tc.name+".toml")))
			if err != nil {
				t.Fatalf("%v\n%s", err, f.Text())
			}
			sw := c.Switch
			if sw.IP != f.IP || (f.Mode != "" && sw.Mode != f.Mode) || len(sw.Lcores) != len(f.Lcores) || sw.Mbufs != uint32(f.Mbufs) || sw.RingSize != 512 ||
				len(sw.EALArgs) < 2 || c.CC.Scheme != f.Scheme || c.Telemetry.CSV != f.CSV || c.Telemetry.JSON != f.JSON || c.Telemetry.Console == f.Quiet {
				t.Errorf("loaded %+v, cc %+v, telemetry %+v from\n%s", sw, c.CC, c.Telemetry, f.Text())
			}
			if (f.Switch != "") != (sw.Burst == 16) || (f.CC != "") != (c.CC.MTU == 8192) || (f.Tables != "") != c.PFC.Enabled {
				t.Errorf("extra lines lost: burst %d, mtu %d, pfc %v from\n%s", sw.Burst, c.CC.MTU, c.PFC.Enabled, f.Text())
			}
			var routes []SwitchPort
			for i, p := range f.Ports {
				got := c.Ports[i]
				if got.Name != p.Name || got.Device != p.Device || got.MAC != p.MAC || got.PeerMAC != p.PeerMAC || got.LinkGbps != p.LinkGbps {
					t.Errorf("port %d: %+v, want %+v", i, got, p)
				}
				if p.Route != "" {
					routes = append(routes, p)
				}
			}
			if len(c.Ports) != len(f.Ports) || len(c.Routes) != len(routes) {
				t.Fatalf("%d ports, %d routes; want %d, %d", len(c.Ports), len(c.Routes), len(f.Ports), len(routes))
			}
			for i, p := range routes {
				if r := c.Routes[i]; r.Prefix != p.Route || r.Port != p.Name {
					t.Errorf("route %d: %+v, want %s to %s", i, r, p.Route, p.Name)
				}
			}
		})
	}
}
