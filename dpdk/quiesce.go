package dpdk

/*
#include "shim.h"

static uintptr_t ccbed_burst_begin(void) { return (uintptr_t)ccbed_burst_enter(); }
static void ccbed_burst_end(uintptr_t s) { ccbed_burst_leave((struct ccbed_burst_slot *)s); }
*/
import "C"

// QuiesceBursts waits until every rx and tx burst of this package that had
// begun when it was called has returned, as a free of pages does while
// PdumpInit's capture guard is on (quiesce.c); it returns false when one had
// not after timeoutMs. Without the guard no burst is counted, and it returns
// true at once.
func QuiesceBursts(timeoutMs uint) bool {
	return C.ccbed_burst_quiesce(C.uint(timeoutMs)) == 0
}

// burstBegin counts the entry of a burst on this thread's lcore as the
// package's bursts do, and returns what burstEnd needs to count its return
// (its tests stand for a burst that has not returned with them).
func burstBegin() uintptr { return uintptr(C.ccbed_burst_begin()) }

// burstEnd counts the return of the burst burstBegin began.
func burstEnd(s uintptr) { C.ccbed_burst_end(C.uintptr_t(s)) }
