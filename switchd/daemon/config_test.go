package daemon

import (
	"reflect"
	"strings"
	"testing"

	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/ccalgo/rocc"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/wire"
)

func TestExampleConfigs(t *testing.T) {
	for _, tc := range []struct {
		path    string
		ports   int
		mode    string
		schemes []string
		pci     bool
	}{
		{"../../configs/switch-cloudlab.toml", 4, ModePipeline, []string{"rocc"}, true},
		{"../../configs/switch-vdev.toml", 4, ModeRTC, []string{"dcqcn", "hpcc"}, false},
	} {
		c, err := LoadConfig(tc.path)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if len(c.Ports) != tc.ports || c.Switch.Mode != tc.mode {
			t.Errorf("%s: %d ports mode %s", tc.path, len(c.Ports), c.Switch.Mode)
		}
		if got := strings.Join(c.SchemesInUse(), ","); got != strings.Join(tc.schemes, ",") {
			t.Errorf("%s: schemes %s", tc.path, got)
		}
		if IsPCIAddress(c.Ports[0].Device) != tc.pci {
			t.Errorf("%s: device %q", tc.path, c.Ports[0].Device)
		}
	}
	// The CloudLab config's RoCC parameters reach the CP: T = 100 us.
	c, _ := LoadConfig("../../configs/switch-cloudlab.toml")
	s, err := c.Spec(nil)
	if err != nil {
		t.Fatal(err)
	}
	rp := s.Ports[0].Params.(*rocc.Params)
	if rp.T != 100_000 || rp.QRefBytes != 75_000 || rp.QMaxBytes != 210_000 || rp.DeltaQBytes != 600 {
		t.Errorf("rocc params %+v", rp)
	}
	for i := range s.Ports {
		s.Ports[i].MAC = wire.MAC{2, 0, 0, 0, 0, 1}
	}
	e, err := switchd.New(s)
	if err != nil {
		t.Fatal(err)
	}
	if e.SampleNs() != 100_000 {
		t.Errorf("sample period %d", e.SampleNs())
	}
}

const minimal = `
[switch]
ip = "10.0.0.254"

[[ports]]
name = "p0"
device = "net_ring0"
peer_mac = "02:00:00:00:00:01"
link_gbps = 10

[[ports]]
name = "p1"
device = "0000:03:00.0"
peer_mac = "02:00:00:00:00:02"
link_gbps = 10

[[routes]]
prefix = "10.0.1.0/24"
port = "p1"

[cc]
scheme = "dcqcn"
`

func TestConfigErrors(t *testing.T) {
	if _, err := DecodeConfig("sw.toml", minimal); err != nil {
		t.Fatalf("minimal config: %v", err)
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"unknown key", `link_gbps = 10

[[ports]]`, `link_gbps = 10
colour = "red"

[[ports]]`, "sw.toml:10: ports.colour: unknown key"},
		{"bad link", "link_gbps = 10\n\n[[routes]]", "link_gbps = -1\n\n[[routes]]", "sw.toml:15: ports[1].link_gbps"},
		{"bad mac", `peer_mac = "02:00:00:00:00:02"`, `peer_mac = "02:00:00"`, "sw.toml:14: ports[1].peer_mac"},
		{"bad pci", `device = "0000:03:00.0"`, `device = "0000:03:00.9"`, "sw.toml:13: ports[1].device"},
		{"bad mode", `ip = "10.0.0.254"`, "ip = \"10.0.0.254\"\nmode = \"fast\"", "sw.toml:4: switch.mode"},
		{"bad route port", `port = "p1"`, `port = "p7"`, "sw.toml:19: routes[0].port"},
		{"ecmp unknown port", `port = "p1"`, `ports = ["p0", "p9"]`, "sw.toml:19: routes[0].ports"},
		{"ecmp and port", `port = "p1"`, "port = \"p1\"\nports = [\"p0\", \"p1\"]", "routes[0].ports: give port or ports"},
		{"no route port", `port = "p1"`, `# no port`, "routes[0].port: missing"},
		{"bad prefix", `prefix = "10.0.1.0/24"`, `prefix = "10.0.1.0/33"`, "sw.toml:18: routes[0].prefix"},
		{"no prefix", `prefix = "10.0.1.0/24"`, `# no prefix`, "sw.toml:17: routes[0].prefix: missing"},
		{"no port name", `name = "p1"`, `# no name`, "sw.toml:11: ports[1].name: missing"},
		{"unknown scheme", `scheme = "dcqcn"`, `scheme = "bbr"`, "sw.toml:22: cc.scheme"},
		{"unknown param", `scheme = "dcqcn"`, "scheme = \"dcqcn\"\n[cc.params.dcqcn]\nkmin = 3", "cc.params.dcqcn.kmin: unknown key"},
		{"bad param value", `scheme = "dcqcn"`, "scheme = \"dcqcn\"\n[cc.params.dcqcn]\nkmin_bytes = 300_000", "sw.toml:23: cc.params.dcqcn.kmax_bytes"},
		{"bad param type", `scheme = "dcqcn"`, "scheme = \"dcqcn\"\n[cc.params.dcqcn]\npmax = \"high\"", "cc.params.dcqcn.pmax"},
		{"bad rocc", `scheme = "dcqcn"`, "scheme = \"rocc\"\n[cc.params.rocc]\nq_mid_bytes = 1", "sw.toml:23: cc.params.rocc"},
		{"pfc", `scheme = "dcqcn"`, "scheme = \"dcqcn\"\n[pfc]\nenabled = true\nxoff_bytes = 1000\nxon_offset_bytes = 2000", "sw.toml:26: pfc.xon_offset_bytes"},
		{"lcores", `ip = "10.0.0.254"`, "ip = \"10.0.0.254\"\nmode = \"pipeline\"\nlcores = [1, 2]", "sw.toml:5: switch.lcores"},
		{"sharded one lcore", `ip = "10.0.0.254"`, "ip = \"10.0.0.254\"\nmode = \"sharded\"\nlcores = [1]", "sw.toml:5: switch.lcores: sharded mode needs the rx lcores, then 1 tx+CC lcore(s): got 1"},
		{"sharded rx lcores > ports", `ip = "10.0.0.254"`, "ip = \"10.0.0.254\"\nmode = \"sharded\"\nlcores = [1, 2, 3, 4, 5, 6]", "sw.toml:5: switch.lcores: sharded mode: 5 rx lcores for"},
		{"unknown mode", `ip = "10.0.0.254"`, "ip = \"10.0.0.254\"\nmode = \"fast\"", "switch.mode"},
		{"bad priority_from", `ip = "10.0.0.254"`, "ip = \"10.0.0.254\"\npriority_from = \"vlan\"", "sw.toml:4: switch.priority_from"},
		{"tx lcores in rtc", `ip = "10.0.0.254"`, "ip = \"10.0.0.254\"\ntx_lcores = 2", "sw.toml:4: switch.tx_lcores: 2 in rtc mode"},
		{"tx lcores > ports", `ip = "10.0.0.254"`, "ip = \"10.0.0.254\"\nmode = \"sharded\"\ntx_lcores = 3", "switch.tx_lcores: 3: want 1 to the number of ports"},
		{"sharded lcores <= tx", `ip = "10.0.0.254"`, "ip = \"10.0.0.254\"\nmode = \"sharded\"\ntx_lcores = 2\nlcores = [1, 2]", "switch.lcores: sharded mode needs the rx lcores, then 2"},
	} {
		text := strings.Replace(minimal, tc.old, tc.new, 1)
		if text == minimal {
			t.Fatalf("%s: replacement did not apply", tc.name)
		}
		_, err := DecodeConfig("sw.toml", text)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestTrustConfigErrors(t *testing.T) {
	const trusted = "ip = \"10.0.0.254\"\ntrust = \"topology\""
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"bad trust", `ip = "10.0.0.254"`, "ip = \"10.0.0.254\"\ntrust = \"some\"", `sw.toml:4: switch.trust: "some"`},
		{"faces missing", `ip = "10.0.0.254"`, trusted, "ports[0].faces: missing"},
		{"bad faces", `peer_mac = "02:00:00:00:00:02"`, "peer_mac = \"02:00:00:00:00:02\"\nfaces = \"router\"", `sw.toml:15: ports[1].faces: "router"`},
	} {
		text := strings.Replace(minimal, tc.old, tc.new, 1)
		if text == minimal {
			t.Fatalf("%s: replacement did not apply", tc.name)
		}
		_, err := DecodeConfig("sw.toml", text)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	// Every port saying what it faces: valid.
	text := strings.Replace(minimal, `ip = "10.0.0.254"`, trusted, 1)
	text = strings.ReplaceAll(text, "peer_mac =", "faces = \"host\"\npeer_mac =")
	if _, err := DecodeConfig("sw.toml", text); err != nil {
		t.Errorf("trusted config: %v", err)
	}
}

// TestConfigOfRoundTrip: a spec written as a file (ConfigOf, as testbed
// nodes does) reads back into the same spec.
func TestConfigOfRoundTrip(t *testing.T) {
	text := strings.Replace(minimal, "port = \"p1\"", "port = \"p1\"\n\n[[routes]]\nprefix = \"10.0.0.0/16\"\nports = [\"p0\", \"p1\"]", 1)
	text = strings.Replace(text, "scheme = \"dcqcn\"", "scheme = \"dcqcn\"\n[cc.params.dcqcn]\nkmin_bytes = 4000\n[pfc]\nenabled = true", 1)
	c, err := DecodeConfig("sw.toml", text)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Spec(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Ports {
		s.Ports[i].MAC = wire.MAC{2, 0, 0, 0, 0xff, byte(i)}
		s.Ports[i].DelayNs = 1500
	}
	back := ConfigOf(s)
	back.CC.Params = c.CC.Params
	if back.Routes[1].Port != "" || strings.Join(back.Routes[1].Ports, ",") != "p0,p1" || back.Routes[1].Prefix != "10.0.0.0/16" {
		t.Errorf("ECMP route written as %+v", back.Routes[1])
	}
	s2, err := back.Spec(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, s2) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", s2, s)
	}
}
