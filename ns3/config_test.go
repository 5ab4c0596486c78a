package ns3_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/ns3"
)

// ns3DatacenterConfig is ns3-datacenter's examples/PowerTCP/config.txt,
// unchanged (testdata/ns3-datacenter/README.md).
func ns3DatacenterConfig(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "ns3-datacenter", "examples", "PowerTCP", "config.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// TestNS3ConfigRead reads ns3-datacenter's config.txt: every setting with
// its line, typed by the accessors.
func TestNS3ConfigRead(t *testing.T) {
	c, err := ns3.ReadConfig(strings.NewReader(ns3DatacenterConfig(t)), "config.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Settings) != 47 {
		t.Errorf("%d settings, want 47", len(c.Settings))
	}
	for _, s := range c.Settings {
		if !s.Known {
			t.Errorf("%s (line %d) unknown", s.Key, s.Line)
		}
	}
	if v, ok := c.Uint("CC_MODE"); !ok || v != 3 || c.Where("CC_MODE") != "config.txt:15" {
		t.Errorf("CC_MODE %d %v at %s", v, ok, c.Where("CC_MODE"))
	}
	if v, ok := c.Float("RP_TIMER"); !ok || v != 900 {
		t.Errorf("RP_TIMER %v %v, want 900", v, ok)
	}
	if v, ok := c.RateBps("RATE_AI"); !ok || v != 50e6 {
		t.Errorf("RATE_AI %v %v, want 50e6", v, ok)
	}
	if v, ok := c.Word("TOPOLOGY_FILE"); !ok || v != "examples/PowerTCP/topology.txt" {
		t.Errorf("TOPOLOGY_FILE %q %v", v, ok)
	}
	if at, a, b, ok := c.LinkDown(); !ok || at != 0 || a != 0 || b != 0 {
		t.Errorf("LINK_DOWN %d %d %d %v", at, a, b, ok)
	}
	want := []ns3.RateValue{{Bps: 25e9, Value: 400}, {Bps: 50e9, Value: 800}, {Bps: 100e9, Value: 1600}}
	if m, ok := c.RateMap("KMAX_MAP"); !ok || !reflect.DeepEqual(m, want) {
		t.Errorf("KMAX_MAP %v %v, want %v", m, ok, want)
	}
	if m, ok := c.RateMap("PMAX_MAP"); !ok || len(m) != 3 || m[0].Value != 0.2 {
		t.Errorf("PMAX_MAP %v %v", m, ok)
	}
	if _, ok := c.Uint("NO_SUCH_KEY"); ok || c.Where("NO_SUCH_KEY") != "config.txt" {
		t.Errorf("an absent key found")
	}
}

// TestNS3ConfigLastWins: a key set twice keeps its last value and line, as
// ns-3's reader overwrites; unknown keys are kept, marked.
func TestNS3ConfigLastWins(t *testing.T) {
	c, err := ns3.ReadConfig(strings.NewReader("CC_MODE 1\nMY_KEY a b\n\nCC_MODE 7\n"), "c.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []ns3.Setting{
		{Key: "MY_KEY", Values: []string{"a", "b"}, Line: 2},
		{Key: "CC_MODE", Values: []string{"7"}, Line: 4, Known: true},
	}
	if !reflect.DeepEqual(c.Settings, want) {
		t.Fatalf("settings %+v, want %+v", c.Settings, want)
	}
	if v, _ := c.Uint("CC_MODE"); v != 7 {
		t.Errorf("CC_MODE %d, want the last, 7", v)
	}
}

func TestNS3ConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"uint", "\nCC_MODE one\n", `c.txt:2: CC_MODE: "one" is not a non-negative integer`},
		{"uint negative", "CC_MODE -1\n", `c.txt:1: CC_MODE: "-1" is not a non-negative integer`},
		{"uint too big", "CC_MODE 4294967296\n", "c.txt:1: CC_MODE: 4294967296 is more than 4294967295"},
		{"no value", "CC_MODE\n", "c.txt:1: CC_MODE: 0 values: want 1, an unsigned integer"},
		{"two values", "EWMA_GAIN 0.1 0.2\n", "c.txt:1: EWMA_GAIN: 2 values: want 1, a number"},
		{"double", "EWMA_GAIN 1/16\n", `c.txt:1: EWMA_GAIN: "1/16" is not a number`},
		{"rate", "RATE_AI 50Mbit\n", `c.txt:1: RATE_AI: "50Mbit": unknown unit "Mbit"`},
		{"word", "FLOW_FILE a b\n", "c.txt:1: FLOW_FILE: 2 values: want 1"},
		{"link down", "LINK_DOWN 0 0\n", `c.txt:1: LINK_DOWN: 2 values: want 3, "time_us node node"`},
		{"map empty", "KMAX_MAP\n", `c.txt:1: KMAX_MAP: no values: want "n rate_bps value ..."`},
		{"map count", "KMAX_MAP 2 25000000000 400\n", "c.txt:1: KMAX_MAP: 2 values after the count 2: want 4"},
		{"map too many", "KMAX_MAP 65\n", "c.txt:1: KMAX_MAP: entries: 65 is more than 64"},
		{"map rate", "KMIN_MAP 1 25Gbps 400\n", `c.txt:1: KMIN_MAP: entry 1: rate: "25Gbps" is not a non-negative integer`},
		{"map value", "KMIN_MAP 1 25000000000 0.5\n", `c.txt:1: KMIN_MAP: entry 1: value: "0.5" is not a non-negative integer`},
		{"pmax value", "PMAX_MAP 1 25000000000 high\n", `c.txt:1: PMAX_MAP: entry 1: value: "high" is not a number`},
		{"long line", "CC_MODE " + strings.Repeat("1", 1<<20) + "\n", "c.txt:1: bufio.Scanner: token too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ns3.ReadConfig(strings.NewReader(tc.in), "c.txt")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant an error with %q", err, tc.want)
			}
		})
	}
}

func FuzzReadConfig(f *testing.F) {
	f.Add(ns3DatacenterConfig(f))
	f.Add("CC_MODE 1\nCC_MODE 3\nX 1 2\nKMAX_MAP 1 100 2\nPMAX_MAP 1 100 0.5\nLINK_DOWN 1 2 3\nRATE_AI 5Gb/s\n")
	f.Add("KMIN_MAP 2 100 1 100 2\n# CC_MODE 3\n")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := ns3.ReadConfig(strings.NewReader(in), "fuzz.txt")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.txt:") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for i, s := range c.Settings {
			if seen[s.Key] || s.Line < 1 || (i > 0 && s.Line <= c.Settings[i-1].Line) {
				t.Fatalf("setting %d %+v: keys once, lines increasing", i, s)
			}
			seen[s.Key] = true
			if got, ok := c.Setting(s.Key); !ok || !reflect.DeepEqual(got, s) {
				t.Fatalf("Setting(%q) = %+v, %v", s.Key, got, ok)
			}
			// Every accessor answers without panicking; on a known key of
			// its type it must find the value.
			c.Uint(s.Key)
			c.Float(s.Key)
			c.RateBps(s.Key)
			c.Word(s.Key)
			if m, ok := c.RateMap(s.Key); ok {
				for j := 1; j < len(m); j++ {
					if m[j].Bps <= m[j-1].Bps {
						t.Fatalf("%s: map not in increasing rate order: %v", s.Key, m)
					}
				}
			}
		}
		if s, ok := c.Setting("KMAX_MAP"); ok {
			if _, ok := c.RateMap("KMAX_MAP"); !ok {
				t.Fatalf("KMAX_MAP %v read but not returned", s.Values)
			}
		}
		if s, ok := c.Setting("CC_MODE"); ok {
			if _, ok := c.Uint("CC_MODE"); !ok {
				t.Fatalf("CC_MODE %v read but not returned", s.Values)
			}
		}
		c.LinkDown()
	})
}
