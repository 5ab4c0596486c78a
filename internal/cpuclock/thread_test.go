package cpuclock

import (
	"runtime"
	"testing"
	"time"
)

// TestThread: a thread that spins for 50 ms of wall time has used some CPU
// time and no more than the wall time (plus the rusage granularity).
func TestThread(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Thread measures on Linux only")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, w0 := Thread(), time.Now()
	for time.Since(w0) < 50*time.Millisecond {
	}
	c, w := Thread()-c0, time.Since(w0)
	if c <= 0 || c > w+10*time.Millisecond {
		t.Errorf("spinning %v of wall time used %v of CPU time", w, c)
	}
}
