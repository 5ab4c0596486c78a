package none_test

import (
	"math"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/none"
)

func TestRegisteredRoles(t *testing.T) {
	s, err := ccalgo.Lookup(none.Name)
	if err != nil {
		t.Fatal(err)
	}
	if s.Roles() != ccalgo.RoleRP {
		t.Errorf("roles %b, want RP only", s.Roles())
	}
}

func TestRate(t *testing.T) {
	env := ccalgo.Env{LinkBps: 25e9, MTU: 1000}
	tests := []struct {
		name    string
		p       *none.Params
		want    float64
		wantErr bool
	}{
		{"default is line rate", none.DefaultParams(env), 25e9, false},
		{"fixed 3 Gb/s", &none.Params{RateGbps: 3}, 3e9, false},
		{"zero", &none.Params{}, 0, true},
		{"negative", &none.Params{RateGbps: -1}, 0, true},
		{"NaN", &none.Params{RateGbps: math.NaN()}, 0, true},
		{"Inf", &none.Params{RateGbps: math.Inf(1)}, 0, true},
	}
	s, _ := ccalgo.Lookup(none.Name)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rp, err := s.NewRP(tc.p, env)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			rp.OnCNP(5)
			rp.OnAck(6, &ccalgo.AckEvent{Fields: ccalgo.AckFields{Mark: ccalgo.MarkCE}})
			if rp.RateBps() != tc.want || rp.WindowBytes() != ccalgo.NoWindow || rp.NextTimer() != ccalgo.Never || rp.HaltUntil() != 0 {
				t.Errorf("rate %g window %d timer %d halt %d", rp.RateBps(), rp.WindowBytes(), rp.NextTimer(), rp.HaltUntil())
			}
		})
	}
	if _, err := s.NewRP(new(int), env); err == nil {
		t.Error("wrong params type accepted")
	}
}

func TestZeroAllocs(t *testing.T) {
	rp, _ := none.NewRP(&none.Params{RateGbps: 10})
	a := ccalgo.AckEvent{}
	if n := testing.AllocsPerRun(1000, func() {
		rp.OnSend(0, 0, 1000)
		rp.OnAck(0, &a)
		_ = rp.RateBps()
	}); n != 0 {
		t.Errorf("%v allocs", n)
	}
}

func BenchmarkRPOnAck(b *testing.B) {
	rp, _ := none.NewRP(&none.Params{RateGbps: 10})
	a := ccalgo.AckEvent{}
	b.ReportAllocs()
	for b.Loop() {
		rp.OnAck(0, &a)
		_ = rp.RateBps()
	}
}
