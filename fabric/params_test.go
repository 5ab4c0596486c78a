package fabric_test

import (
	"reflect"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/ccalgo/rocc"
	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/fabric"
)

// roccQueues are RoCC's Q_ref, Q_mid and Q_max of the 3-to-1 cases at
// 10 Gb/s: 75, 150 and 210 KB.
func roccQueues() ccalgo.Overrides {
	o, err := ccalgo.NewOverrides("rocc", func(p any) error {
		q := p.(*rocc.Params)
		q.QRefBytes, q.QMidBytes, q.QMaxBytes = 75_000, 150_000, 210_000
		return nil
	})
	if err != nil {
		panic(err)
	}
	return o
}

// TestPlanParams: Plan lays a Spec's Params over each host's and switch
// port's own defaults (they scale with the link: DCQCN's Kmin and Kmax,
// RoCC's F_max), which is what the [cc.params] table decoded over those
// defaults holds; a Typed struct goes to every node as it is.
func TestPlanParams(t *testing.T) {
	for _, tc := range []struct {
		scheme string
		tbl    map[string]any
	}{
		{"dcqcn", map[string]any{"g": 0.125, "kmin_bytes": int64(8_000), "ecn_by_link": []map[string]any{{"gbps": 40.0, "kmax_bytes": int64(90_000)}}}},
		{"rocc", map[string]any{"q_ref_bytes": int64(75_000), "q_mid_bytes": int64(150_000), "q_max_bytes": int64(210_000)}},
		{"hpcc", map[string]any{"eta": 0.9}},
		{"hpcc", nil},
	} {
		t.Run(tc.scheme, func(t *testing.T) {
			o, err := config.DecodeOverrides(tc.scheme, tc.tbl)
			if err != nil {
				t.Fatal(err)
			}
			sch, err := ccalgo.Lookup(tc.scheme)
			if err != nil {
				t.Fatal(err)
			}
			// 10 Gb/s hosts under 40 Gb/s uplinks: the defaults differ.
			s := &fabric.Spec{Topo: fabric.LeafSpine(2, 2, 2, 10e9, 40e9, 1000), Scheme: tc.scheme, Params: o,
				Flows: []fabric.Flow{{ID: 1, Src: 0, Dst: 3}}}
			p, err := s.Plan()
			if err != nil {
				t.Fatal(err)
			}
			want := func(env ccalgo.Env) any {
				w := sch.DefaultParams(env)
				if err := config.DecodeTable(tc.tbl, w); err != nil {
					t.Fatal(err)
				}
				return w
			}
			rates := map[float64]bool{}
			for _, h := range p.Hosts {
				h.ApplyDefaults()
				if w := want(h.Env()); !reflect.DeepEqual(h.Params, w) {
					t.Errorf("host %s: params\n%+v\nwant\n%+v", h.Name, h.Params, w)
				}
			}
			for si := range p.Switches {
				sw := &p.Switches[si]
				for i := range sw.Ports {
					rates[sw.Env(i).LinkBps] = true
					if w := want(sw.Env(i)); !reflect.DeepEqual(sw.Ports[i].Params, w) {
						t.Errorf("switch %d port %d: params\n%+v\nwant\n%+v", si, i, sw.Ports[i].Params, w)
					}
				}
			}
			if len(rates) < 2 {
				t.Fatalf("port rates %v: the topology should mix links", rates)
			}
		})
	}
	typed := rocc.DefaultParams(ccalgo.Env{LinkBps: 10e9, BaseRTT: 10_000, MTU: 1000})
	p, err := (&fabric.Spec{Topo: fabric.Star(3, 10e9, 1000), Scheme: "rocc", Params: roccQueues(), Typed: typed,
		Flows: []fabric.Flow{{ID: 1, Src: 0, Dst: 2}}}).Plan()
	if err != nil {
		t.Fatal(err)
	}
	if p.Hosts[0].Params != any(typed) || p.Switches[0].Ports[1].Params != any(typed) {
		t.Errorf("Typed did not win: %v", p.Hosts[0].Params)
	}
	if _, err := (&fabric.Spec{Topo: fabric.Star(3, 10e9, 1000), Scheme: "dcqcn", Params: roccQueues(),
		Flows: []fabric.Flow{{ID: 1, Src: 0, Dst: 2}}}).Plan(); err == nil {
		t.Error("RoCC's overrides planned for DCQCN")
	}
}
