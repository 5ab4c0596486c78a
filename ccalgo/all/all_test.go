package all_test

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	_ "github.com/ccbed/ccbed/ccalgo/all"
)

// TestDesignTable checks the roles of every scheme against the design's table of
// schemes and their CP / NP / RP roles, written out in want below (the papers'
// schemes and their baselines, plus QCN, which P4QCN extends).
func TestDesignTable(t *testing.T) {
	const cp, np, rp = ccalgo.RoleCP, ccalgo.RoleNP, ccalgo.RoleRP
	want := map[string]ccalgo.Roles{
		"rocc":   cp | rp,
		"hpcc":   cp | np | rp,
		"rcc":    np | rp,
		"p4qcn":  cp | rp,
		"acc":    cp | np | rp,
		"dcqcn":  cp | np | rp,
		"timely": np | rp,
		"dctcp":  cp | np | rp,
		"none":   rp,
		"qcn":    cp | rp,
	}
	got := map[string]bool{}
	for _, s := range ccalgo.Schemes() {
		got[s.Name] = true
		if s.Doc == "" {
			t.Errorf("%s: no Doc line", s.Name)
		}
		if r, ok := want[s.Name]; ok && s.Roles() != r {
			t.Errorf("%s: roles %03b, want %03b", s.Name, s.Roles(), r)
		}
	}
	for name := range want {
		if !got[name] {
			t.Errorf("scheme %s not registered", name)
		}
	}
}

// TestEveryRoleBuilds builds each role of each scheme with its defaults at the
// link speeds of the papers' testbeds.
func TestEveryRoleBuilds(t *testing.T) {
	for _, s := range ccalgo.Schemes() {
		for _, gbps := range []float64{10, 40, 100} {
			env := ccalgo.Env{LinkBps: gbps * 1e9, BaseRTT: 8000, MTU: 1000, MaxFlows: 16, ExpectedFlows: 4, ID: 7}
			p := s.DefaultParams(env)
			if s.NewCP != nil {
				if _, err := s.NewCP(p, env); err != nil {
					t.Errorf("%s CP at %v G: %v", s.Name, gbps, err)
				}
			}
			if s.NewNP != nil {
				if _, err := s.NewNP(p, env); err != nil {
					t.Errorf("%s NP at %v G: %v", s.Name, gbps, err)
				}
			}
			if s.NewRP != nil {
				rp, err := s.NewRP(p, env)
				if err != nil {
					t.Errorf("%s RP at %v G: %v", s.Name, gbps, err)
					continue
				}
				if r := rp.RateBps(); r <= 0 || r > env.LinkBps*1.2 {
					t.Errorf("%s RP at %v G: initial rate %v", s.Name, gbps, r)
				}
			}
		}
	}
}
