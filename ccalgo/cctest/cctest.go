// Package cctest holds what the ccalgo schemes' tests share: feedback sinks
// that record or count what a congestion point emits, a tolerant float
// comparison, a constructor check and the mark_at contract of a marking
// congestion point.
package cctest

import (
	"math"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

// RecordingSink records every feedback message and its time.
type RecordingSink struct {
	T        []int64
	Feedback []ccalgo.Feedback
}

// Emit records fb at now.
func (s *RecordingSink) Emit(now int64, fb *ccalgo.Feedback) {
	s.T = append(s.T, now)
	s.Feedback = append(s.Feedback, *fb)
}

// Reset forgets what was recorded.
func (s *RecordingSink) Reset() { s.T, s.Feedback = s.T[:0], s.Feedback[:0] }

// CountingSink counts feedback messages without allocating (for
// AllocsPerRun tests and benchmarks).
type CountingSink struct{ N int64 }

// Emit counts one message.
func (s *CountingSink) Emit(int64, *ccalgo.Feedback) { s.N++ }

// Near reports whether a is b within a relative 1e-9 (absolute near 0).
func Near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Must returns a function that returns a constructor's value and fails t on
// its error: cctest.Must[*CP](t)(NewCP(p, env)).
func Must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// MarkCP is a congestion point with a mark_at choice of its marking hook.
type MarkCP interface {
	ccalgo.CongestionPoint
	ccalgo.PacketHooks
}

// MarkHooks runs pkt through the hook of cp that mark_at at names, on a
// queue of q bytes found (enqueue: port.QueueBytes holds pkt too) or left
// behind (dequeue), and through the other hook, and returns their verdicts.
func MarkHooks(cp MarkCP, at string, pkt *ccalgo.DataPacket, q int64) (mark, other ccalgo.Verdict) {
	if at == ccalgo.MarkAtEnqueue {
		port := ccalgo.PortState{QueueBytes: q + int64(pkt.WireBytes)}
		mark = cp.OnEnqueue(0, pkt, &port, nil)
		other = cp.OnDequeue(0, pkt, &port, nil)
		return mark, other
	}
	port := ccalgo.PortState{QueueBytes: q}
	other = cp.OnEnqueue(0, pkt, &port, nil)
	mark = cp.OnDequeue(0, pkt, &port, nil)
	return mark, other
}

// MarkCase is a queue and the mark the marking hook must give at it.
type MarkCase struct {
	Q    int64 // queue found / left behind, bytes
	Want ccalgo.Mark
}

// CheckMarkAt checks cp, built with mark_at at: PacketHooks reports the
// marking hook alone, the marking hook gives each case's mark and the other
// hook never marks.
func CheckMarkAt(t *testing.T, cp MarkCP, at string, pkt *ccalgo.DataPacket, cases []MarkCase) {
	t.Helper()
	enq, deq := cp.PacketHooks()
	if enq != (at == ccalgo.MarkAtEnqueue) || deq != (at == ccalgo.MarkAtDequeue) {
		t.Fatalf("PacketHooks = %v, %v", enq, deq)
	}
	for _, tc := range cases {
		mark, other := MarkHooks(cp, at, pkt, tc.Q)
		if mark.Mark != tc.Want || other.Mark != ccalgo.MarkNone {
			t.Errorf("q=%d: marking hook %v, other hook %v; want %v, none", tc.Q, mark.Mark, other.Mark, tc.Want)
		}
	}
}

// CheckRegistered checks scheme name's registration, for a scheme with a
// CP and an RP: both roles, both built from the defaults (the CP from
// DefaultParams, the RP from nil), the CP refusing badCP (invalid
// parameters of the scheme's own type) and the RP refusing a foreign
// parameters type.
func CheckRegistered(t *testing.T, name string, env ccalgo.Env, badCP any) {
	t.Helper()
	s, err := ccalgo.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if s.Roles() != ccalgo.RoleCP|ccalgo.RoleRP {
		t.Errorf("roles %b, want CP|RP", s.Roles())
	}
	if _, err := s.NewCP(s.DefaultParams(env), env); err != nil {
		t.Error(err)
	}
	if _, err := s.NewRP(nil, env); err != nil {
		t.Error(err)
	}
	if cp, err := s.NewCP(badCP, env); err == nil || cp != nil {
		t.Errorf("NewCP(bad) = %v, %v; want nil, error", cp, err)
	}
	if _, err := s.NewRP(struct{}{}, env); err == nil {
		t.Errorf("NewRP accepted a foreign params type")
	}
}
