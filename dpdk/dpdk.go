// Package dpdk is ccbed's own small cgo binding to DPDK 22.11: EAL, lcores,
// mempools and mbufs, ethdev ports, rte_rings and the TSC. It is the only package
// of the project that imports "C"; everything else speaks Go (scripts/test.sh
// enforces it). The API is modelled on github.com/yerden/go-dpdk, which the
// project's build environment cannot fetch from the Go module proxy.
//
// Cost model: one cgo call per burst, never per packet. A cgo call has a fixed
// cost of tens of ns (docs/perf.md, "dpdk/: the cgo binding"), and cgo checks
// every piece of Go memory a call's arguments point to. The measurement that
// fixed this design (one lcore, mac swap in Go over 4 net_null ports, 64 B,
// DPDK 22.11) gave about 39 Mpps with burst arrays in C memory, against about
// 41 Mpps for dpdk-testpmd --forward-mode=mac in the same run (0.93x); 23 Mpps
// with the arrays in Go memory; and 10.5 Mpps with one cgo call per packet for
// its data pointer. So burst arrays live in C memory (NewBurst), where cgo's
// pointer checks have nothing to inspect, and packet bytes are reached from Go
// through Mbuf.Data, a byte-slice view of the mbuf's buffer built from the C
// struct's field offsets without a call into C.
package dpdk

/*
#cgo pkg-config: libdpdk
#cgo LDFLAGS: -lrte_net_ring -lrte_bus_vdev
#cgo CFLAGS: -O2 -Wno-deprecated-declarations
#include "shim.h"
*/
import "C"

import (
	"fmt"
)

// Error is a DPDK failure: the operation and the (positive) errno DPDK reported.
type Error struct {
	Op   string
	Code int
}

// Error names the operation and DPDK's message for the errno.
func (e *Error) Error() string {
	return fmt.Sprintf("dpdk: %s: %s (errno %d)", e.Op, C.GoString(C.rte_strerror(C.int(e.Code))), e.Code)
}

// errFromRC turns a DPDK return code (negative errno, or -1 with rte_errno) into an
// error, nil for rc >= 0.
func errFromRC(op string, rc C.int) error {
	if rc >= 0 {
		return nil
	}
	code := int(-rc)
	if rc == -1 {
		if e := int(C.ccbed_errno()); e != 0 {
			code = e
		}
	}
	return &Error{Op: op, Code: code}
}

// errFromNil reports rte_errno after a constructor returned NULL.
func errFromNil(op string) error {
	return &Error{Op: op, Code: int(C.ccbed_errno())}
}
