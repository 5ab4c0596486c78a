package all_test

import (
	"errors"
	"reflect"
	"strings"
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

// TestMarkAtRejected: every scheme whose parameters have a mark_at (the ECN
// marking CPs: DCQCN, DCTCP, ACC's TCD) refuses a value other than "enqueue"
// or "dequeue" in its CP with a ParamError naming mark_at and the values it
// takes; its RP and NP do not read it.
func TestMarkAtRejected(t *testing.T) {
	env := ccalgo.Env{LinkBps: 40e9, BaseRTT: 10_000, MTU: 1000, MaxFlows: 16, ExpectedFlows: 4, ID: 1}
	var with []string
	for _, s := range ccalgo.Schemes() {
		if s.NewCP == nil {
			continue
		}
		f := reflect.ValueOf(s.DefaultParams(env)).Elem().FieldByName("MarkAt")
		if !f.IsValid() {
			continue
		}
		with = append(with, s.Name)
		for _, bad := range []string{"", "both", "ENQUEUE", "Dequeue"} {
			p := s.DefaultParams(env)
			reflect.ValueOf(p).Elem().FieldByName("MarkAt").SetString(bad)
			_, err := s.NewCP(p, env)
			var pe *ccalgo.ParamError
			if !errors.As(err, &pe) || pe.Param != "mark_at" || !strings.Contains(err.Error(), `"enqueue" or "dequeue"`) {
				t.Errorf("%s: mark_at %q: err = %v, want a ParamError naming mark_at", s.Name, bad, err)
			}
			if s.NewRP != nil {
				if _, err := s.NewRP(p, env); err != nil {
					t.Errorf("%s: mark_at %q: NewRP: %v", s.Name, bad, err)
				}
			}
			if s.NewNP != nil {
				if _, err := s.NewNP(p, env); err != nil {
					t.Errorf("%s: mark_at %q: NewNP: %v", s.Name, bad, err)
				}
			}
		}
	}
	if want := []string{"acc", "dcqcn", "dctcp"}; strings.Join(with, ",") != strings.Join(want, ",") {
		t.Errorf("schemes with mark_at: %v, want %v", with, want)
	}
}
