package testbed

import (
	"strings"
	"testing"
)

// TestValidateListsAll: every error the checks find is listed, each at its
// file:line, in the file's order, a misspelt key with the nearest known key.
func TestValidateListsAll(t *testing.T) {
	const text = `[experiment]
name = "x"
duration_ms = 10
clock = "sundial"

[topology]
hosts = 3
link_gbs = 10

[cc]
scheme = "dcqcn"
sheme = "x"

[[flows]]
id = 1
src = 0
dst = 7

[[flows]]
id = 1
src = 1
dst = 2
`
	_, err := DecodeWith("x.toml", text, ".", nil)
	if err == nil {
		t.Fatal("no error")
	}
	got := err.Error()
	for _, want := range []string{
		"x.toml:4: experiment.clock:",
		"x.toml:8: topology.link_gbs: unknown key (did you mean topology.link_gbps?)",
		"x.toml:12: cc.sheme: unknown key (did you mean cc.scheme?)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors:\n%s\nwant a line %q", got, want)
		}
	}
	if i, j := strings.Index(got, ":4:"), strings.Index(got, ":8:"); i < 0 || j < 0 || i > j {
		t.Errorf("errors not in the file's order:\n%s", got)
	}
	// With the topology's keys right the later checks run too: a host out
	// of range and a duplicate flow id, both listed.
	fixed := strings.Replace(strings.Replace(strings.Replace(text, "link_gbs", "link_gbps", 1), "sundial", "virtual", 1), "sheme = \"x\"\n", "", 1)
	_, err = DecodeWith("x.toml", fixed, ".", nil)
	if err == nil || !strings.Contains(err.Error(), "flows[0].dst: host 7 out of range") || !strings.Contains(err.Error(), "flow id 1 already used") {
		t.Errorf("errors: %v; want the host out of range and the duplicate id", err)
	}
}
