package dpdk

/*
#include "replay.h"
*/
import "C"

import "fmt"

// Replay sends frames built once, as often as asked: a burst is references
// to them (rte_mbuf_refcnt_update), not copies, so it costs neither an
// allocation nor a copy a packet; the driver's free after transmission
// drops the reference, not the frame. The frames must not be written while
// any reference is out: a receiver in the same process must treat them as
// read-only (ccbed's do). Its memory is C memory; Free returns the frames to
// their pool once every reference has come back.
type Replay struct {
	frames *Burst
	n      int
}

// NewReplay allocates one mbuf from pool for each frame and copies it in
// (once). Frames longer than the pool's data room are an error.
func NewReplay(pool *Mempool, frames [][]byte) (*Replay, error) {
	if len(frames) == 0 {
		return nil, fmt.Errorf("dpdk: NewReplay: no frames")
	}
	room := pool.DataRoom() - MbufHeadroom
	for i, f := range frames {
		if len(f) > room || len(f) == 0 {
			return nil, fmt.Errorf("dpdk: NewReplay: frame %d of %d bytes: want 1..%d (the pool's data room)", i, len(f), room)
		}
	}
	r := &Replay{frames: NewBurst(len(frames)), n: len(frames)}
	if err := pool.AllocBulk(r.frames.Pkts); err != nil {
		r.frames.Free()
		return nil, fmt.Errorf("dpdk: NewReplay: %d frames: %w (raise the pool's size)", len(frames), err)
	}
	for i, f := range frames {
		m := r.frames.Pkts[i]
		copy(m.Room(), f)
		m.SetLen(len(f))
	}
	return r, nil
}

// Len is the number of frames.
func (r *Replay) Len() int { return r.n }

// Frame is frame i's mbuf (read only).
func (r *Replay) Frame(i int) *Mbuf { return r.frames.Pkts[i] }

// Refs fills pkts with references to frames pos, pos+1, ... (cycling), one
// cgo call; the caller transmits or frees them. pkts should be a Burst's
// slice (C memory).
func (r *Replay) Refs(pkts []*Mbuf, pos int) {
	if len(pkts) == 0 {
		return
	}
	C.ccbed_replay_refs(mbufArray(r.frames.Pkts), C.uint32_t(r.n), C.uint32_t(pos%r.n), mbufArray(pkts), C.uint16_t(len(pkts)))
}

// Tx is Refs then a transmission on queue q of port p, in one cgo call; it
// returns the packets the driver took, the rest (pkts[sent:]) stay the
// caller's.
func (r *Replay) Tx(p EthPort, q uint16, pkts []*Mbuf, pos int) int {
	if len(pkts) == 0 {
		return 0
	}
	return int(C.ccbed_replay_tx(mbufArray(r.frames.Pkts), C.uint32_t(r.n), C.uint32_t(pos%r.n), mbufArray(pkts),
		C.uint16_t(len(pkts)), C.uint16_t(p), C.uint16_t(q)))
}

// Free drops the frames' own references (each mbuf goes back to its pool
// when its last reference is freed) and the array. Call it after the
// loops have stopped.
func (r *Replay) Free() {
	if r.frames != nil {
		FreeBulk(r.frames.Pkts)
		r.frames.Free()
		r.frames = nil
	}
}
