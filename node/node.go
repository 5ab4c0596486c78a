// Package node is the hub between the engines that model a network's stations
// (switchd's switch, hostd's host) and the drivers that run them (the fabric's
// virtual-time driver; DPDK lcores). A driver owns every frame buffer and names
// it by an integer Handle; a node receives frames on its ports at a time the
// driver gives, transmits what is due, and says when it next needs to run. No
// node reads a clock, and no node knows which driver runs it.
//
// The contract, as gVisor's stack/registration.go states its own:
//
//   - Receive hands the node a frame and its buffer: from then on the node owns
//     the handle, and gives it back either in a Tx (transmitted) or to
//     Frames.Free (dropped, consumed).
//   - Transmit hands the driver the frames that start to leave the node's
//     ports at now, at most len(out); the driver owns them from then on. A
//     driver calls it again while it fills out.
//   - NextWake is the earliest time the node needs Transmit to be called
//     again, given that no frame arrives before then; a frame arriving earlier
//     may change it. Never means not before another frame arrives.
package node

import "math"

// Handle names a frame buffer the driver owns: an index into the virtual-time
// driver's frame store, or the address of a DPDK mbuf (C memory, never moved by
// Go's collector). 0 names no frame.
type Handle uintptr

// Never is a NextWake that waits for the next frame.
const Never int64 = math.MaxInt64

// Frames is the driver's store of frame buffers, as a node sees it.
type Frames interface {
	// Alloc returns a free buffer and its handle; the buffer's length is the
	// store's room (the largest frame). It returns 0, nil when the store is
	// empty: the node counts a drop.
	Alloc() (Handle, []byte)
	// Free gives a buffer back.
	Free(Handle)
}

// Tx is a frame leaving a node: the first Len bytes of buffer H, on Port.
type Tx struct {
	Port int
	H    Handle
	Len  int
}

// Node is a station of the network: a switch or a host.
type Node interface {
	// NumPorts is the number of ports, numbered from 0.
	NumPorts() int
	// Receive takes frame (the bytes of buffer h) arrived on port at now.
	Receive(now int64, port int, h Handle, frame []byte)
	// Transmit does the node's work due at now and fills out with the frames
	// that leave at now; it returns how many.
	Transmit(now int64, out []Tx) int
	// NextWake is when the node next needs Transmit, or Never.
	NextWake(now int64) int64
}
