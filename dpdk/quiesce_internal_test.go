package dpdk

import (
	"runtime"
	"sync"
	"testing"
)

// TestQuiesceWaitsForBursts: with the capture guard on (PdumpInit), a free's
// wait (QuiesceBursts) does not return while a burst that began before it
// has not returned, on an EAL lcore's slot and on the slot shared by other
// threads, and returns once it has; with nothing in flight it returns at
// once. The burst stands still between burstBegin and burstEnd, so each
// answer is decided by the counts, not by timing: the short timeout of the
// in-flight case only bounds a wait that cannot succeed.
func TestQuiesceWaitsForBursts(t *testing.T) {
	pool, err := NewPktMbufPool("quiesce", 63, 0, MbufDefaultDataRoom, SocketAny)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Free()
	if err := PdumpInit(pool); err != nil {
		t.Fatal(err)
	}
	uninit := sync.OnceValue(PdumpUninit)
	defer uninit()
	for _, tc := range []struct {
		name  string
		lcore uint // 0: the test's own thread (not an EAL lcore)
	}{
		{"other threads", 0},
		{"lcore 1", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !QuiesceBursts(10_000) {
				t.Fatal("nothing in flight, yet the wait timed out")
			}
			begun, end, ended := make(chan struct{}), make(chan struct{}), make(chan struct{})
			burst := func() {
				s := burstBegin()
				if s == 0 {
					t.Error("the guard is on, yet a burst was not counted")
				}
				close(begun)
				<-end
				burstEnd(s)
				close(ended)
			}
			if tc.lcore == 0 {
				go func() {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					burst()
				}()
			} else if err := LaunchOnLcore(tc.lcore, func() int { burst(); return 0 }); err != nil {
				t.Fatal(err)
			}
			<-begun
			if QuiesceBursts(20) {
				t.Error("the wait returned while a burst that began before it had not returned")
			}
			close(end)
			<-ended
			if !QuiesceBursts(10_000) {
				t.Error("the burst returned, yet the wait timed out")
			}
			if tc.lcore != 0 {
				WaitLcore(tc.lcore)
			}
		})
	}
	if err := uninit(); err != nil {
		t.Fatal(err)
	}
	if s := burstBegin(); s != 0 {
		burstEnd(s)
		t.Error("PdumpUninit left the bursts counted")
	}
}
