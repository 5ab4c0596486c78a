package dpdk

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"unsafe"
)

// Mempool is a DPDK memory pool of packet mbufs.
type Mempool C.struct_rte_mempool

// MbufDefaultDataRoom is DPDK's default data room: 2048 bytes plus headroom.
const MbufDefaultDataRoom = C.RTE_MBUF_DEFAULT_BUF_SIZE

// MbufHeadroom is the headroom reserved in front of the packet data.
const MbufHeadroom = C.RTE_PKTMBUF_HEADROOM

// ErrNoMbufs is returned by AllocBulk when the pool cannot supply the burst; it
// is built once so that hot paths can compare against it without allocating.
var ErrNoMbufs = errors.New("dpdk: mempool empty")

// NewPktMbufPool creates a pool of n packet mbufs (rte_pktmbuf_pool_create) with
// a per-lcore cache of cache mbufs and dataRoom bytes of buffer each (headroom
// included: MbufDefaultDataRoom for standard frames, 9216 + MbufHeadroom for jumbo
// frames).
func NewPktMbufPool(name string, n, cache uint32, dataRoom uint16, socket int) (*Mempool, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	mp := C.rte_pktmbuf_pool_create(cname, C.uint(n), C.uint(cache), 0, C.uint16_t(dataRoom), C.int(socket))
	if mp == nil {
		return nil, errFromNil("rte_pktmbuf_pool_create " + name)
	}
	return (*Mempool)(mp), nil
}

func (mp *Mempool) c() *C.struct_rte_mempool { return (*C.struct_rte_mempool)(mp) }

// Free releases the pool. Every mbuf must have been returned first.
func (mp *Mempool) Free() { C.rte_mempool_free(mp.c()) }

// Avail is the number of free mbufs (in the pool and the lcore caches).
func (mp *Mempool) Avail() int { return int(C.ccbed_mempool_avail(mp.c())) }

// InUse is the number of mbufs taken from the pool and not yet returned.
func (mp *Mempool) InUse() int { return int(C.ccbed_mempool_in_use(mp.c())) }

// DataRoom is the data room of the pool's mbufs, headroom included.
func (mp *Mempool) DataRoom() int { return int(C.rte_pktmbuf_data_room_size(mp.c())) }

// AllocBulk fills pkts with freshly reset mbufs, all or none; it returns
// ErrNoMbufs when the pool has too few. pkts should be a Burst's slice (C memory).
func (mp *Mempool) AllocBulk(pkts []*Mbuf) error {
	if len(pkts) == 0 {
		return nil
	}
	if C.ccbed_pktmbuf_alloc_bulk(mp.c(), mbufArray(pkts), C.uint(len(pkts))) != 0 {
		return ErrNoMbufs
	}
	return nil
}

// FreeBulk returns every mbuf of pkts to its pool (nil entries are skipped).
func FreeBulk(pkts []*Mbuf) {
	if len(pkts) == 0 {
		return
	}
	C.ccbed_pktmbuf_free_bulk(mbufArray(pkts), C.uint(len(pkts)))
}
