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

// TestSendHookHonest checks every RP that reports through ccalgo.SendHook
// that its OnSend does nothing: driven through ACKs (marked, with INT, RCC's
// fields), NAKs, CNPs, feedback of every kind and its timers, the RP is the
// same value after OnSend as before, in every state it passes. A host skips
// such an RP's OnSend, and re-reading its rate, window, halt and timer after
// it, on every data packet.
func TestSendHookHonest(t *testing.T) {
	env := ccalgo.Env{LinkBps: 100e9, BaseRTT: 8000, MTU: 1000, MaxFlows: 16, ExpectedFlows: 4, ID: 7}
	checked := 0
	for _, s := range ccalgo.Schemes() {
		if s.NewRP == nil {
			continue
		}
		rp, err := s.NewRP(s.DefaultParams(env), env)
		if err != nil {
			t.Fatal(err)
		}
		h, ok := rp.(ccalgo.SendHook)
		if !ok || h.SendHook() {
			continue
		}
		checked++
		v := reflect.ValueOf(rp)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			t.Errorf("%s: RP is a %v, not a pointer to a struct: cannot check", s.Name, v.Type())
			continue
		}
		now, seq := int64(0), uint64(0)
		for step := range 300 {
			now, seq = driveRP(rp, step, now, seq)
			before := reflect.New(v.Elem().Type()).Elem()
			before.Set(v.Elem())
			rp.OnSend(now, seq+10_000, 1000)
			rp.OnSend(now+1, seq+11_000, 1)
			if !reflect.DeepEqual(before.Interface(), v.Elem().Interface()) {
				t.Errorf("%s: SendHook says OnSend does nothing, but it changed the RP at step %d", s.Name, step)
				break
			}
		}
	}
	if checked == 0 {
		t.Error("no RP reports SendHook false: nothing checked")
	}
}

// driveRP gives rp the step-th of a cycle of events at about now (ACKs,
// marked, with INT and RCC's fields; NAKs; a CNP; feedback of every kind;
// its timer) and returns the new time and acknowledged sequence.
func driveRP(rp ccalgo.ReactionPoint, step int, now int64, seq uint64) (int64, uint64) {
	now += 1000
	switch step % 6 {
	case 0, 1, 2:
		var f ccalgo.AckFields
		f.EchoTS = now - 9000
		if step%4 == 0 {
			f.Mark = ccalgo.MarkCE
		}
		f.INT.Push(ccalgo.INTHop{LinkBps: 100e9, TS: uint32(now), TxBytes: uint32(step) * 1000, QLen: uint32(step%5) * 10_000})
		f.Window, f.ActiveFlows, f.RecvBytes = 50_000, 3, 20_000
		seq += 1000
		a := ccalgo.AckEvent{AckedSeq: seq, NewlyAcked: 1000, SndNxt: seq + 20_000, RTT: 9000 + int64(step%7)*1000, Fields: f}
		if step%30 == 1 {
			rp.OnNak(now, &a)
		} else {
			rp.OnAck(now, &a)
		}
	case 3:
		rp.OnCNP(now)
	case 4:
		for _, k := range []ccalgo.FeedbackKind{ccalgo.FeedbackRoCCRate, ccalgo.FeedbackP4QCN, ccalgo.FeedbackQCN} {
			rp.OnFeedback(now, &ccalgo.Feedback{Kind: k, RateUnits: 100, DeltaFBps: 1e8, RateBps: 10e9, Fb: 20, QOff: 5000, QDelta: 100})
		}
	case 5:
		if tt := rp.NextTimer(); tt != ccalgo.Never {
			now = max(now, tt)
			rp.OnTimer(now)
		}
	}
	return now, seq
}

// TestRPResetContract checks ccalgo's reset contract for every scheme's RP
// at the papers' link speeds: it is a pointer to a struct of plain data (no
// pointers, slices, maps, interfaces, strings, channels or functions, at
// any depth), it implements ccalgo.Resetter, it refuses a template of
// another type, and an RP driven through every kind of event and then reset
// from a pristine template equals a freshly built one, while the template
// stays pristine.
func TestRPResetContract(t *testing.T) {
	checked := 0
	for _, s := range ccalgo.Schemes() {
		if s.NewRP == nil {
			continue
		}
		for _, gbps := range []float64{10, 40, 100} {
			env := ccalgo.Env{LinkBps: gbps * 1e9, BaseRTT: 8000, MTU: 1000, MaxFlows: 16, ExpectedFlows: 4, ID: 7}
			p := s.DefaultParams(env)
			build := func() ccalgo.ReactionPoint {
				rp, err := s.NewRP(p, env)
				if err != nil {
					t.Fatalf("%s at %v G: %v", s.Name, gbps, err)
				}
				return rp
			}
			tmpl, rp, fresh := build(), build(), build()
			v := reflect.ValueOf(rp)
			if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
				t.Errorf("%s: RP is a %v, not a pointer to a struct", s.Name, v.Type())
				continue
			}
			if path := notPlain(v.Elem().Type(), "RP"); path != "" {
				t.Errorf("%s: RP is not plain data: %s", s.Name, path)
			}
			r, ok := rp.(ccalgo.Resetter)
			if !ok {
				t.Errorf("%s: RP does not implement ccalgo.Resetter", s.Name)
				continue
			}
			now, seq := int64(0), uint64(0)
			for step := range 300 {
				now, seq = driveRP(rp, step, now, seq)
			}
			if reflect.DeepEqual(rp, fresh) && s.Name != "none" { // none's RP sends at line rate whatever comes
				t.Errorf("%s: 300 events left the RP as built: the check proves nothing", s.Name)
			}
			if r.ResetFrom(wrappedRP{tmpl}) {
				t.Errorf("%s: ResetFrom took a template of another type", s.Name)
			}
			if !r.ResetFrom(tmpl) {
				t.Errorf("%s: ResetFrom refused its own scheme's template", s.Name)
			}
			if !reflect.DeepEqual(rp, fresh) {
				t.Errorf("%s at %v G: reset RP differs from a fresh one", s.Name, gbps)
			}
			for step := range 30 {
				now, seq = driveRP(rp, step, now, seq)
			}
			if !reflect.DeepEqual(tmpl, fresh) {
				t.Errorf("%s at %v G: using a reset RP changed its template", s.Name, gbps)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Error("no RP checked")
	}
}

// wrappedRP is an RP of another type around a scheme's, as a test's tracing
// wrapper is: ResetFrom must refuse it as a template.
type wrappedRP struct{ ccalgo.ReactionPoint }

// notPlain returns the path to the first field of t that holds a reference,
// or "" when t is plain data.
func notPlain(t reflect.Type, path string) string {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return ""
	case reflect.Array:
		return notPlain(t.Elem(), path+"[]")
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if p := notPlain(t.Field(i).Type, path+"."+t.Field(i).Name); p != "" {
				return p
			}
		}
		return ""
	}
	return path + " (" + t.Kind().String() + ")"
}

// feedbackLog records what a CP emits.
type feedbackLog struct{ fbs []ccalgo.Feedback }

func (l *feedbackLog) Emit(_ int64, fb *ccalgo.Feedback) { l.fbs = append(l.fbs, *fb) }

// TestFlowBlindHonest checks every CP that reports ccalgo.FlowBlind: two
// instances fed the same packets, one with their flow keys and tags and one
// with both zero, give the same verdicts, timers and feedback. A switch leaves
// the key unset for such a CP, so a CP that read it would change behaviour
// there.
func TestFlowBlindHonest(t *testing.T) {
	env := ccalgo.Env{LinkBps: 40e9, BaseRTT: 10_000, MTU: 1000, MaxFlows: 16, ExpectedFlows: 4, ID: 1}
	blind := eachClaimant(t, env, func(cp ccalgo.CongestionPoint) bool {
		fb, ok := cp.(ccalgo.FlowBlind)
		return ok && fb.FlowBlind()
	}, func(name string, cps [2]ccalgo.CongestionPoint) {
		var logs [2]feedbackLog
		var ports [2]ccalgo.PortState
		q, now := int64(0), int64(0)
		for i := 0; i < 20000; i++ {
			now += int64(i%7) * 100
			size := 64 + (i*37)%1400
			enq := i%5 != 4 || q < int64(size)
			if enq {
				q += int64(size)
			} else {
				q -= int64(size)
			}
			var v [2]ccalgo.Verdict
			for k := range cps {
				ports[k].QueueBytes, ports[k].LinkBps = q, env.LinkBps
				pkt := ccalgo.DataPacket{WireBytes: size, Mark: ccalgo.Mark(i % 3)}
				if k == 0 {
					pkt.Flow = ccalgo.FlowKey{SrcIP: uint32(i % 13), DstIP: 9, SrcPort: uint16(i), DstPort: 4791, DestQP: uint32(i % 5)}
					pkt.Tag = uint32(i)
				}
				v[k] = callHook(cps[k], enq, now, &pkt, &ports[k], &logs[k])
				if i%50 == 0 {
					cps[k].OnTimer(now, &ports[k], &logs[k])
				}
			}
			if v[0] != v[1] || cps[0].NextTimer() != cps[1].NextTimer() || !reflect.DeepEqual(logs[0], logs[1]) {
				t.Fatalf("%s: packet %d: verdicts %+v / %+v differ with and without the flow key", name, i, v[0], v[1])
			}
		}
	})
	if want := []string{"acc", "dcqcn", "dctcp", "hpcc"}; strings.Join(blind, ",") != strings.Join(want, ",") {
		t.Errorf("flow-blind CPs: %v, want %v", blind, want)
	}
}
