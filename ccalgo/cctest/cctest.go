// Package cctest holds what the ccalgo schemes' tests share: feedback sinks
// that record or count what a congestion point emits.
package cctest

import "github.com/ccbed/ccbed/ccalgo"

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
