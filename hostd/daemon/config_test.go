package daemon

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/ccalgo/dcqcn"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/wire"
)

// host is a [host] table of two flows' worth of every kind of value.
func host() Config {
	one := 1
	return Config{
		Name: "h1", IP: "10.0.0.1", MAC: "02:00:00:00:00:01", GatewayMAC: "02:00:00:00:ff:01",
		Scheme: "dcqcn", CC: map[string]any{"cnp_interval_us": 100},
		Trust: hostd.TrustTopology, TrustedCPs: []string{"10.254.0.0/16", "10.0.0.254-10.0.1.61", "10.0.0.253"},
		Peers:     []Peer{{IP: "10.0.0.9", MAC: "02:00:00:00:00:09"}},
		Flows:     []FlowConfig{{ID: 7, Dst: "10.0.0.2", SizeBytes: 1000, StartUs: 5, RateGbps: 2, Priority: &one}},
		Incast:    []IncastConfig{{IDBase: 10, Dst: "10.0.0.3", Flows: 4, SizeBytes: 100, Repeat: 2, PeriodUs: 10}},
		Workloads: []WorkloadConfig{{IDBase: 100, CDF: "../../configs/workloads/websearch.cdf", Dsts: []string{"10.0.0.2", "10.0.0.3"}, Load: 0.5}},
	}
}

// TestConfigSpec: a [host] table becomes the spec the engine takes (every
// address parsed, the [cc] table decoded over the scheme's defaults, the
// CDF read), and ConfigOf gives the table back.
func TestConfigSpec(t *testing.T) {
	c := host()
	s, err := c.Spec(nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	p, ok := s.Params.(*dcqcn.Params)
	if !ok || p.CNPIntervalUs != 100 || s.IP != 0x0a000001 || s.GatewayMAC != (wire.MAC{2, 0, 0, 0, 0xff, 1}) ||
		s.Flows[0].Dst != 0x0a000002 || s.Incast[0].Dst != 0x0a000003 || s.Peers[0] != (hostd.Peer{IP: 0x0a000009, MAC: wire.MAC{2, 0, 0, 0, 0, 9}}) ||
		len(s.Workloads[0].CDF.Size) == 0 || !reflect.DeepEqual(s.Workloads[0].Dsts, []uint32{0x0a000002, 0x0a000003}) ||
		!reflect.DeepEqual(s.TrustedCPs, []hostd.AddrRange{{Lo: 0x0afe0000, Hi: 0x0afeffff}, {Lo: 0x0a0000fe, Hi: 0x0a00013d}, {Lo: 0x0a0000fd, Hi: 0x0a0000fd}}) {
		t.Fatalf("spec %+v, params %+v", s, s.Params)
	}
	if _, err := hostd.NewEngine(s, 0); err != nil {
		t.Fatal(err)
	}
	back := ConfigOf(s)
	back.CC = c.CC
	back.TrustedCPs = c.TrustedCPs // ranges, not the prefixes and addresses given
	want := c
	want.Workloads = append([]WorkloadConfig(nil), c.Workloads...)
	// ConfigOf writes what the spec holds: the defaults applied.
	d := s
	for _, f := range []struct {
		got  any
		want any
	}{{back.Flows, want.Flows}, {back.Incast, want.Incast}, {back.Workloads, want.Workloads}, {back.Peers, want.Peers},
		{back.IP, want.IP}, {back.MAC, want.MAC}, {back.GatewayMAC, want.GatewayMAC}, {back.MaxQPs, d.MaxQPs}} {
		if !reflect.DeepEqual(f.got, f.want) {
			t.Errorf("ConfigOf: %+v, want %+v", f.got, f.want)
		}
	}
}

// TestConfigSpecErrors: what the spec cannot hold (text that is no address,
// a key the scheme does not know, a CDF file that is not there) is an error
// at the table's key.
func TestConfigSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(c *Config)
		key  string
		want string
	}{
		{"bad ip", func(c *Config) { c.IP = "10.0.0" }, "ip", ""},
		{"bad mac", func(c *Config) { c.MAC = "02:00" }, "mac", ""},
		{"bad scheme", func(c *Config) { c.Scheme = "nope" }, "scheme", ""},
		{"bad cc key", func(c *Config) { c.CC = map[string]any{"no_such_key": 1} }, "cc.no_such_key", "scheme dcqcn"},
		{"bad flow dst", func(c *Config) { c.Flows[0].Dst = "x" }, "flows[0].dst", ""},
		{"bad peer mac", func(c *Config) { c.Peers[0].MAC = "x" }, "peers[0].mac", ""},
		{"bad workload dst", func(c *Config) { c.Workloads[0].Dsts[1] = "10.0.0.300" }, "workloads[0].dsts", ""},
		{"no cdf file", func(c *Config) { c.Workloads[0].CDF = "nope.cdf" }, "workloads[0].cdf", "nope.cdf"},
		{"no cdf", func(c *Config) { c.Workloads[0].CDF = "" }, "workloads[0].cdf", "missing"},
		{"bad prefix", func(c *Config) { c.TrustedCPs = []string{"10.0.0.0/33"} }, "trusted_cps", "entry 0"},
		{"bad address", func(c *Config) { c.TrustedCPs = []string{"10.0.0.254", "switch"} }, "trusted_cps", "entry 1"},
		{"reversed range", func(c *Config) { c.TrustedCPs = []string{"10.0.1.0-10.0.0.1"} }, "trusted_cps", "ends before it starts"},
		// Times: checked in the file's microseconds, named by its keys
		// (the spec's ns keys are for specs built in Go).
		{"negative rto", func(c *Config) { c.RTOUs = -1 }, "rto_us", "got -1: want a time in [0, "},
		{"base rtt below 1 ns", func(c *Config) { c.BaseRTTUs = 0.0004 }, "base_rtt_us", "below half a nanosecond"},
		{"sample nan", func(c *Config) { c.SampleUs = math.NaN() }, "sample_us", "got NaN"},
		{"flow start negative", func(c *Config) { c.Flows[0].StartUs = -3 }, "flows[0].start_us", "got -3"},
		{"incast period 0, repeat 2", func(c *Config) { c.Incast[0].PeriodUs = 0 }, "incast[0].period_us", "must be > 0 with repeat > 1"},
		{"incast period below 1 ns", func(c *Config) { c.Incast[0].PeriodUs = 0.0001 }, "incast[0].period_us", "must be > 0"},
		{"incast last round", func(c *Config) { c.Incast[0].StartUs, c.Incast[0].PeriodUs = 1e15, 2e14 }, "incast[0].repeat", "the last repeat starts at 1.2e+15 us"},
		{"workload stop at start in ns", func(c *Config) { c.Workloads[0].StartUs, c.Workloads[0].StopUs = 10, 10.0001 }, "workloads[0].stop_us", "need start_us < stop_us"},
		{"workload stop inf", func(c *Config) { c.Workloads[0].StopUs = math.Inf(1) }, "workloads[0].stop_us", "0: no end"},
	} {
		c := host()
		c.Workloads[0].Dsts = append([]string(nil), c.Workloads[0].Dsts...)
		tc.mod(&c)
		_, err := c.Spec(nil, "", "")
		var se *hostd.SpecError
		if !errors.As(err, &se) || se.Key != tc.key || !strings.Contains(se.Msg, tc.want) {
			t.Errorf("%s: error %v, want one at %s saying %q", tc.name, err, tc.key, tc.want)
		}
	}
}

// TestConfigTimesRoundTrip: a spec's times in ns, written as a file's
// microseconds by ConfigOf and read back by Spec, come back exactly (they
// did not, truncated: 1001 ns as 1.001 us x 1000 is 1000.9999999999999).
func TestConfigTimesRoundTrip(t *testing.T) {
	c := host()
	s, err := c.Spec(nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	s.BaseRTTNs, s.NakIntervalNs, s.RTONs, s.SampleNs = 12_345, 400_003, 1_000_000_007, 1001
	s.Flows[0].StartNs = 1001
	s.Incast[0].StartNs, s.Incast[0].PeriodNs = 1003, 1_000_000_000_007
	s.Workloads[0].StartNs, s.Workloads[0].StopNs = 1005, 3_000_000_000_001
	back := ConfigOf(s)
	back.CC = c.CC
	back.Workloads[0].CDF = c.Workloads[0].CDF // the path it was read from: relative to this directory
	got, err := back.Spec(nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name      string
		got, want int64
	}{
		{"base_rtt", got.BaseRTTNs, s.BaseRTTNs}, {"nak_interval", got.NakIntervalNs, s.NakIntervalNs},
		{"rto", got.RTONs, s.RTONs}, {"sample", got.SampleNs, s.SampleNs},
		{"flow start", got.Flows[0].StartNs, s.Flows[0].StartNs},
		{"incast start", got.Incast[0].StartNs, s.Incast[0].StartNs}, {"incast period", got.Incast[0].PeriodNs, s.Incast[0].PeriodNs},
		{"workload start", got.Workloads[0].StartNs, s.Workloads[0].StartNs}, {"workload stop", got.Workloads[0].StopNs, s.Workloads[0].StopNs},
	} {
		if f.got != f.want {
			t.Errorf("%s: %d ns back, want %d", f.name, f.got, f.want)
		}
	}
}

func TestParseAddrRange(t *testing.T) {
	for _, tc := range []struct {
		s      string
		lo, hi uint32
		bad    bool
	}{
		{"10.254.1.0/24", 0x0afe0100, 0x0afe01ff, false},
		{"10.254.1.7/24", 0x0afe0100, 0x0afe01ff, false},
		{"10.0.0.254", 0x0a0000fe, 0x0a0000fe, false},
		{"10.254.0.254-10.254.1.3", 0x0afe00fe, 0x0afe0103, false},
		{"0.0.0.0/0", 0, 0xffffffff, false},
		{"10.0.0.0/33", 0, 0, true},
		{"::1/128", 0, 0, true},
		{"switch", 0, 0, true},
		{"10.0.1.0-10.0.0.1", 0, 0, true},
		{"10.0.0.1-", 0, 0, true},
	} {
		lo, hi, err := parseAddrRange(tc.s)
		if (err != nil) != tc.bad || (!tc.bad && (lo != tc.lo || hi != tc.hi)) {
			t.Errorf("%s: %08x-%08x %v", tc.s, lo, hi, err)
		}
	}
}

// FuzzParseAddrRange: any text is a range lo <= hi or an error, never a
// panic; an address or range that parses formats back to itself.
func FuzzParseAddrRange(f *testing.F) {
	for _, s := range []string{"10.254.1.0/24", "10.0.0.254", "10.254.0.254-10.254.1.3", "0.0.0.0/0", "1.2.3.4-", "::/0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lo, hi, err := parseAddrRange(s)
		if err != nil {
			return
		}
		if hi < lo {
			t.Fatalf("%q: %08x-%08x", s, lo, hi)
		}
		if r := (hostd.AddrRange{Lo: lo, Hi: hi}).String(); strings.Contains(s, "-") && r != s {
			if lo2, hi2, err := parseAddrRange(r); err != nil || lo2 != lo || hi2 != hi {
				t.Fatalf("%q: formats as %q, which parses as %08x-%08x %v", s, r, lo2, hi2, err)
			}
		}
	})
}
