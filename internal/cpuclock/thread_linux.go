// Package cpuclock reads the CPU time of the calling thread, for benchmarks
// that must report a per-packet cost on a shared machine.
package cpuclock

import (
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTimeID is Linux's CLOCK_THREAD_CPUTIME_ID (clock_gettime(2)).
const clockThreadCPUTimeID = 3

// Thread is the CPU time (user plus system) the calling OS thread has used,
// in nanoseconds (CLOCK_THREAD_CPUTIME_ID). A benchmark that locks its
// goroutine to its thread (runtime.LockOSThread) divides the difference of
// two readings by its packets to get a per-packet cost that leaves out the
// time other processes held the core: on a shared, noisy machine that is
// steadier than wall time, though caches shared with those processes still
// disturb it. It returns 0 when the clock cannot be read.
func Thread() time.Duration {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
