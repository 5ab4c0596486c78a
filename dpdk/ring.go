package dpdk

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import "unsafe"

// Ring is an rte_ring of mbuf pointers, the channel between lcores.
type Ring C.struct_rte_ring

// Ring creation flags.
const (
	RingSingleProducer = C.RING_F_SP_ENQ // one enqueueing lcore only
	RingSingleConsumer = C.RING_F_SC_DEQ // one dequeueing lcore only
	RingExactSize      = C.RING_F_EXACT_SZ
)

// NewRing creates a ring of count slots (a power of two unless RingExactSize).
func NewRing(name string, count uint32, socket int, flags uint) (*Ring, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	r := C.rte_ring_create(cname, C.uint(count), C.int(socket), C.uint(flags))
	if r == nil {
		return nil, errFromNil("rte_ring_create " + name)
	}
	return (*Ring)(r), nil
}

func (r *Ring) c() *C.struct_rte_ring { return (*C.struct_rte_ring)(r) }

// Free releases the ring (not the mbufs still in it: drain it first).
func (r *Ring) Free() { C.rte_ring_free(r.c()) }

// EnqueueBurst enqueues as many of pkts as fit and returns how many; those now
// belong to the consumer, the rest stay the caller's.
func (r *Ring) EnqueueBurst(pkts []*Mbuf) int {
	if len(pkts) == 0 {
		return 0
	}
	return int(C.ccbed_ring_enqueue_burst(r.c(), mbufArray(pkts), C.uint(len(pkts)), nil))
}

// DequeueBurst dequeues up to len(pkts) mbufs and returns how many.
func (r *Ring) DequeueBurst(pkts []*Mbuf) int {
	if len(pkts) == 0 {
		return 0
	}
	return int(C.ccbed_ring_dequeue_burst(r.c(), mbufArray(pkts), C.uint(len(pkts)), nil))
}

// Count is the number of entries in the ring.
func (r *Ring) Count() int { return int(C.ccbed_ring_count(r.c())) }
