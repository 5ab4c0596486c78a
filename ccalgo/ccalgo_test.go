package ccalgo

import (
	"errors"
	"strings"
	"testing"
)

type testParams struct{ X int }

func testDefaults(env Env) *testParams { return &testParams{X: int(env.LinkBps)} }

type testRP struct{ RPBase }

func (testRP) RateBps() float64 { return 1 }

func TestParamsAs(t *testing.T) {
	env := Env{LinkBps: 7}
	mine := &testParams{X: 3}
	var nilP *testParams
	for _, tc := range []struct {
		name string
		v    any
		want int
		bad  bool
	}{
		{"nil means defaults", nil, 7, false},
		{"typed nil means defaults", nilP, 7, false},
		{"own params", mine, 3, false},
		{"wrong type", &struct{}{}, 0, true},
		{"value not pointer", testParams{}, 0, true},
	} {
		p, err := ParamsAs("t", tc.v, env, testDefaults)
		var pe *ParamError
		switch {
		case tc.bad && (!errors.As(err, &pe) || pe.Scheme != "t"):
			t.Errorf("%s: err %v, want a ParamError of scheme t", tc.name, err)
		case !tc.bad && (err != nil || p.X != tc.want):
			t.Errorf("%s: got %+v, %v; want X = %d", tc.name, p, err, tc.want)
		}
	}
}

func TestFactories(t *testing.T) {
	boom := errors.New("boom")
	ok := RPFactory("t", testDefaults, func(p *testParams, _ Env) (testRP, error) { return testRP{}, nil })
	if rp, err := ok(nil, Env{}); err != nil || rp.RateBps() != 1 {
		t.Fatalf("RPFactory: %v %v", rp, err)
	}
	failing := RPFactory("t", testDefaults, func(*testParams, Env) (*testRP, error) { return nil, boom })
	if rp, err := failing(nil, Env{}); err != boom || rp != nil {
		t.Fatalf("failing constructor: rp %v (a typed nil must not leak), err %v", rp, err)
	}
	if _, err := ok("wrong", Env{}); err == nil {
		t.Fatal("wrong params type accepted")
	}
}

func TestDefine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		roles []Role[testParams]
		want  Roles
	}{
		{"rp", []Role[testParams]{WithRP(func(*testParams, Env) (testRP, error) { return testRP{}, nil })}, RoleRP},
		{"np rp", []Role[testParams]{
			WithNP(func(*testParams, Env) (NotificationPoint, error) { return nil, nil }),
			WithRP(func(*testParams, Env) (testRP, error) { return testRP{}, nil }),
		}, RoleNP | RoleRP},
		{"cp rp", []Role[testParams]{
			WithCP(func(*testParams, Env) (CongestionPoint, error) { return nil, nil }),
			WithRP(func(*testParams, Env) (testRP, error) { return testRP{}, nil }),
		}, RoleCP | RoleRP},
	} {
		s := Define("t-"+tc.name, "doc", testDefaults, tc.roles...)
		if s.Name != "t-"+tc.name || s.Doc != "doc" || s.Roles() != tc.want {
			t.Errorf("%s: got %q %q roles %v, want roles %v", tc.name, s.Name, s.Doc, s.Roles(), tc.want)
		}
		if p, ok := s.DefaultParams(Env{}).(*testParams); !ok || p.X != testDefaults(Env{}).X {
			t.Errorf("%s: DefaultParams gave %#v", tc.name, s.DefaultParams(Env{}))
		}
		if _, err := s.NewRP("wrong", Env{}); err == nil || !strings.Contains(err.Error(), "t-"+tc.name) {
			t.Errorf("%s: wrong params: err %v, want a ParamError naming the scheme", tc.name, err)
		}
	}
}
