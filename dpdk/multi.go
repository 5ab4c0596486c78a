package dpdk

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// PortQueue names one queue of an ethdev port for a MultiPort.
type PortQueue struct {
	Port  EthPort
	Queue uint16
}

// MultiPort runs the rx or tx bursts of a fixed set of (port, queue) pairs in
// one cgo call instead of one per pair: a poll loop over n ports pays one cgo
// crossing for its receives and one for its sends. Pair i uses the segment
// [i*Per, (i+1)*Per) of Pkts, a burst array in C memory like Burst's. Its
// count arrays are in C memory too, so that a call passes no Go pointer. A
// MultiPort is for one lcore; Free it after use.
type MultiPort struct {
	// Pkts is the n*Per mbuf pointers, segment i for pair i.
	Pkts []*Mbuf
	// Per is each pair's segment length (its burst size).
	Per int
	// Count: after RxBurst, what pair i received; before TxBurst, what pair
	// i is to send (the first Count[i] of its segment).
	Count []uint16
	// Sent: after TxBurst, what pair i's driver took.
	Sent []uint16

	// data and lens: after RxBurst, the data address and length of each
	// received mbuf, index for index with Pkts (see Frame).
	data []unsafe.Pointer
	lens []uint16

	pq  *C.struct_ccbed_pq
	n   int
	mem unsafe.Pointer
}

// NewMultiPort allocates a MultiPort over pairs with per packets per pair and
// burst.
func NewMultiPort(pairs []PortQueue, per int) (*MultiPort, error) {
	n := len(pairs)
	if n == 0 || n > 1<<15 || per <= 0 || per > 1<<15 {
		return nil, fmt.Errorf("dpdk: NewMultiPort: %d pairs of %d packets", n, per)
	}
	pqSize := C.size_t(n) * C.size_t(unsafe.Sizeof(C.struct_ccbed_pq{}))
	pktSize := C.size_t(n*per) * C.size_t(unsafe.Sizeof(uintptr(0)))
	cntSize := C.size_t(n) * 2
	// One block: mbuf pointers and data addresses first (pointer aligned),
	// then the pairs, the two count arrays and the data lengths.
	mem := C.calloc(1, 2*pktSize+pqSize+2*cntSize+C.size_t(n*per)*2)
	if mem == nil {
		return nil, fmt.Errorf("dpdk: NewMultiPort: out of memory")
	}
	m := &MultiPort{Per: per, n: n, mem: mem}
	m.Pkts = unsafe.Slice((**Mbuf)(mem), n*per)
	m.data = unsafe.Slice((*unsafe.Pointer)(unsafe.Add(mem, pktSize)), n*per)
	mem2 := unsafe.Add(mem, pktSize) // the rest as before, after data
	m.pq = (*C.struct_ccbed_pq)(unsafe.Add(mem2, pktSize))
	pqs := unsafe.Slice(m.pq, n)
	for i, p := range pairs {
		pqs[i].port = C.uint16_t(p.Port)
		pqs[i].queue = C.uint16_t(p.Queue)
	}
	m.Count = unsafe.Slice((*uint16)(unsafe.Add(mem2, pktSize+pqSize)), n)
	m.Sent = unsafe.Slice((*uint16)(unsafe.Add(mem2, pktSize+pqSize+cntSize)), n)
	m.lens = unsafe.Slice((*uint16)(unsafe.Add(mem2, pktSize+pqSize+2*cntSize)), n*per)
	return m, nil
}

// Len is the number of pairs.
func (m *MultiPort) Len() int { return m.n }

// Segment is pair i's part of Pkts.
func (m *MultiPort) Segment(i int) []*Mbuf { return m.Pkts[i*m.Per : (i+1)*m.Per] }

// RxBurst receives up to Per packets on every pair, pair i's into Segment(i),
// and sets Count[i] to how many; it returns the total. The caller owns the
// received mbufs. The first cache line of each packet's data is prefetched,
// and Frame gives its bytes without reading the mbuf.
func (m *MultiPort) RxBurst() int {
	return int(C.ccbed_rx_burst_multi(m.pq, C.uint16_t(m.n), mbufArray(m.Pkts), C.uint16_t(m.Per),
		(*C.uint16_t)(unsafe.Pointer(&m.Count[0])), (*unsafe.Pointer)(unsafe.Pointer(&m.data[0])),
		(*C.uint16_t)(unsafe.Pointer(&m.lens[0]))))
}

// Frame is the data of Pkts[j] as the last RxBurst received it (the first
// segment; the same bytes as Pkts[j].Data(), read from arrays RxBurst filled
// instead of the mbuf's header). j must be a packet RxBurst received.
func (m *MultiPort) Frame(j int) []byte {
	return unsafe.Slice((*byte)(m.data[j]), m.lens[j])
}

// TxBurst transmits the first Count[i] mbufs of Segment(i) on pair i (Count[i]
// above Per counts as Per), sets Sent[i] to how many the driver took and
// returns the total. With freeUnsent the mbufs a driver refused are freed in
// the same call; without, they stay the caller's, at Segment(i)[Sent[i]:Count[i]].
func (m *MultiPort) TxBurst(freeUnsent bool) int {
	f := C.int(0)
	if freeUnsent {
		f = 1
	}
	return int(C.ccbed_tx_burst_multi(m.pq, C.uint16_t(m.n), mbufArray(m.Pkts), C.uint16_t(m.Per),
		(*C.uint16_t)(unsafe.Pointer(&m.Count[0])), (*C.uint16_t)(unsafe.Pointer(&m.Sent[0])), f))
}

// Free releases the arrays (not the mbufs they point to).
func (m *MultiPort) Free() {
	if m.mem != nil {
		C.free(m.mem)
		m.mem, m.Pkts, m.Count, m.Sent, m.pq = nil, nil, nil, nil, nil
		m.data, m.lens = nil, nil
	}
}
