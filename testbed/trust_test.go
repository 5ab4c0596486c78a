package testbed

import (
	"errors"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/switchd"
)

// TestExperimentTrust: an experiment trusts by topology unless it says
// trust = "all", and the switch and host configs follow.
func TestExperimentTrust(t *testing.T) {
	for _, tc := range []struct {
		name, line        string
		switches, hosts   string
		trustedCPsPerHost int
	}{
		{"default", "", switchd.TrustTopology, hostd.TrustTopology, 1},
		{"topology", "trust = \"topology\"\n", switchd.TrustTopology, hostd.TrustTopology, 1},
		{"all", "trust = \"all\"\n", switchd.TrustAll, hostd.TrustAll, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(small, "sample_us = 500\n", "sample_us = 500\n"+tc.line, 1)
			e, err := Decode("x.toml", text, ".")
			if err != nil {
				t.Fatal(err)
			}
			sc := e.SwitchConfig()
			if sc.Switch.Trust != tc.switches || sc.Ports[0].Faces != switchd.FacesHost {
				t.Errorf("switch trust %q, port 0 faces %q: want %q, %q", sc.Switch.Trust, sc.Ports[0].Faces, tc.switches, switchd.FacesHost)
			}
			for _, hc := range e.HostConfigs() {
				if hc.Trust != tc.hosts || len(hc.TrustedCPs) != tc.trustedCPsPerHost {
					t.Errorf("host %s: trust %q, trusted CPs %v: want %q, %d", hc.Name, hc.Trust, hc.TrustedCPs, tc.hosts, tc.trustedCPsPerHost)
				}
			}
		})
	}
	text := strings.Replace(small, "sample_us = 500\n", "sample_us = 500\ntrust = \"some\"\n", 1)
	_, err := Decode("x.toml", text, ".")
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Key != "experiment.trust" || ce.Line != 6 {
		t.Fatalf("got %v, want x.toml:6: experiment.trust", err)
	}
}
