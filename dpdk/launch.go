package dpdk

/*
#include "shim.h"
*/
import "C"

import (
	"sync"
)

var launches struct {
	sync.Mutex
	next uintptr
	fns  map[uintptr]func() int
}

//export ccbedLcoreEntry
func ccbedLcoreEntry(h C.uintptr_t) C.int {
	launches.Lock()
	fn := launches.fns[uintptr(h)]
	delete(launches.fns, uintptr(h))
	launches.Unlock()
	if fn == nil {
		return -1
	}
	return C.int(fn())
}

// LaunchOnLcore runs fn on worker lcore id (rte_eal_remote_launch of a C
// trampoline that calls back into Go). fn runs on the lcore's own EAL thread,
// pinned to its CPU set, until it returns; WaitLcore collects its result. The
// lcore must be a worker (not the main lcore) and idle.
func LaunchOnLcore(lcore uint, fn func() int) error {
	launches.Lock()
	if launches.fns == nil {
		launches.fns = map[uintptr]func() int{}
	}
	launches.next++
	h := launches.next
	launches.fns[h] = fn
	launches.Unlock()
	if rc := C.ccbed_remote_launch(C.uint(lcore), C.uintptr_t(h)); rc != 0 {
		launches.Lock()
		delete(launches.fns, h)
		launches.Unlock()
		return errFromRC("rte_eal_remote_launch", rc)
	}
	return nil
}

// WaitLcore blocks until the function launched on lcore returns and gives its
// return value (0 when the lcore was idle).
func WaitLcore(lcore uint) int { return int(C.rte_eal_wait_lcore(C.uint(lcore))) }
