package dpdk

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"unsafe"
)

// Mbuf is a DPDK packet buffer (struct rte_mbuf). Go code reads and writes its
// data through Data and SetLen, which touch the C struct directly (no cgo call).
// Only single-segment mbufs are supported by these accessors.
type Mbuf C.struct_rte_mbuf

const (
	offBufAddr = C.ccbed_mbuf_off_buf_addr
	offDataOff = C.ccbed_mbuf_off_data_off
	offPort    = C.ccbed_mbuf_off_port
	offPktLen  = C.ccbed_mbuf_off_pkt_len
	offDataLen = C.ccbed_mbuf_off_data_len
	offBufLen  = C.ccbed_mbuf_off_buf_len
)

func (m *Mbuf) field(off uintptr) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(m), off) }

func (m *Mbuf) dataStart() unsafe.Pointer {
	base := *(*unsafe.Pointer)(m.field(offBufAddr))
	return unsafe.Add(base, *(*uint16)(m.field(offDataOff)))
}

// Data returns the packet bytes of the mbuf's first segment as a slice that
// aliases the mbuf's buffer (no copy). It is valid until the mbuf is freed or
// transmitted.
func (m *Mbuf) Data() []byte {
	return unsafe.Slice((*byte)(m.dataStart()), *(*uint16)(m.field(offDataLen)))
}

// Room returns the whole writable area from the start of the data to the end
// of the buffer (aliasing the mbuf), for building a packet in place; follow with
// SetLen.
func (m *Mbuf) Room() []byte {
	n := *(*uint16)(m.field(offBufLen)) - *(*uint16)(m.field(offDataOff))
	return unsafe.Slice((*byte)(m.dataStart()), n)
}

// SetLen sets the data and packet length of a single-segment mbuf. n must not
// exceed len(m.Room()).
func (m *Mbuf) SetLen(n int) {
	*(*uint16)(m.field(offDataLen)) = uint16(n)
	*(*uint32)(m.field(offPktLen)) = uint32(n)
}

// Len is the packet length.
func (m *Mbuf) Len() int { return int(*(*uint32)(m.field(offPktLen))) }

// Port is the input port the mbuf was received on.
func (m *Mbuf) Port() uint16 { return *(*uint16)(m.field(offPort)) }

// Burst is an array of mbuf pointers in C memory, allocated once per lcore and
// reused for every burst. Pkts is a Go view of it.
type Burst struct {
	Pkts []*Mbuf
}

// NewBurst allocates a burst array of n entries in C memory.
func NewBurst(n int) *Burst {
	p := C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(uintptr(0))))
	return &Burst{Pkts: unsafe.Slice((**Mbuf)(p), n)}
}

// Free releases the array (not the mbufs it points to).
func (b *Burst) Free() {
	if b.Pkts != nil {
		C.free(unsafe.Pointer(&b.Pkts[0]))
		b.Pkts = nil
	}
}

// mbufArray converts a slice of mbuf pointers to the C array DPDK expects.
func mbufArray(pkts []*Mbuf) **C.struct_rte_mbuf {
	return (**C.struct_rte_mbuf)(unsafe.Pointer(&pkts[0]))
}

// MbufAddr is m's address as an integer: a frame handle (node.Handle) that a
// pure-Go engine stores without holding a Go pointer. Mbufs live in C memory,
// which Go's collector neither moves nor frees, so the address stays valid
// until the mbuf is freed.
func MbufAddr(m *Mbuf) uintptr { return uintptr(unsafe.Pointer(m)) }

// MbufAt is the mbuf at address a (from MbufAddr).
func MbufAt(a uintptr) *Mbuf { return *(**Mbuf)(unsafe.Pointer(&a)) }
