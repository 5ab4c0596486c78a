package costmodel

import (
	"runtime"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// pin locks the calling goroutine to its thread and the thread to cpu; the
// returned function undoes both. It skips tb when the CPU is not there.
func pin(tb testing.TB, cpu int) func() {
	tb.Helper()
	runtime.LockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		tb.Skipf("sched_getaffinity: %v", err)
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		tb.Skipf("CPU %d: %v", cpu, err)
	}
	return func() {
		_ = unix.SchedSetaffinity(0, &old)
		runtime.UnlockOSThread()
	}
}

// BenchmarkLineTransfer is the cost of moving one cache line between two
// CPUs (0 and 1): two threads take turns writing a counter on a line of its
// own, each waiting (spinning) for the other's write; ns/op is one hand-over,
// half a round trip. It is the unit of the sharded mode's hand-off: an rx
// lcore writes a frame's header and Meta, its tx+CC lcore reads the Meta,
// and the next time round the rx lcore must take the lines back. Needs two
// CPUs to itself for a meaningful figure (run it under the CPU lock).
func BenchmarkLineTransfer(b *testing.B) {
	if runtime.NumCPU() < 2 {
		b.Skip("one CPU")
	}
	var line struct {
		_ [64]byte
		n atomic.Int64
		_ [56]byte
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer pin(b, 1)()
		for i := int64(1); i < int64(2*b.N); i += 2 {
			for line.n.Load() != i {
			}
			line.n.Store(i + 1)
		}
	}()
	defer pin(b, 0)()
	b.ResetTimer()
	for i := int64(0); i < int64(2*b.N); i += 2 {
		for line.n.Load() != i {
		}
		line.n.Store(i + 1)
	}
	<-done
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/transfer")
}
