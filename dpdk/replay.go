package dpdk

/*
#include <stdlib.h>
#include "replay.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Replay sends frames loaded once into C memory (each at a 64-byte
// boundary, padded): a burst takes fresh mbufs from the pool and copies the
// frames in, in 64-byte moves (replay.c), one cgo call a burst that on an
// ethdev queue also transmits: the work of dpdk-testpmd's txonly, with the
// frames for templates. (Holding the frames in mbufs and sending those by
// reference saves the copy but costs an atomic increment a packet and an
// atomic decrement in the driver's free: 0.81x txonly on net_null for
// 64-byte frames; copying from mbufs held for the run, 0.69x: each frame's
// header and data are two more cache lines, away from the others; this
// layout, 1.0-1.1x: docs/perf.md.) Send and Fill allocate nothing.
// A Replay is for one lcore; Free it after use.
type Replay struct {
	r *C.struct_ccbed_replay
	// Lens is the frame length of each packet of the last burst (C memory).
	Lens     []uint16
	mem      unsafe.Pointer
	maxBurst int
}

// NewReplay copies frames into C memory for bursts of up to maxBurst
// packets with mbufs from pool, sent on queue q of port p (Send) or not
// (Fill). Frames longer than the pool's data room (less the 64-byte
// rounding of the copy) are an error.
func NewReplay(pool *Mempool, p EthPort, q uint16, frames [][]byte, maxBurst int) (*Replay, error) {
	n := len(frames)
	switch {
	case pool == nil:
		return nil, fmt.Errorf("dpdk: NewReplay: no mempool")
	case n == 0 || n > 1<<24:
		return nil, fmt.Errorf("dpdk: NewReplay: %d frames, want 1..%d", n, 1<<24)
	case maxBurst <= 0 || maxBurst > 1<<15:
		return nil, fmt.Errorf("dpdk: NewReplay: burst %d out of range 1..%d", maxBurst, 1<<15)
	}
	room := pool.DataRoom() - MbufHeadroom
	data := 0
	for i, f := range frames {
		padded := (len(f) + 63) &^ 63
		if len(f) == 0 || len(f) > 0xffff || padded > room {
			return nil, fmt.Errorf("dpdk: NewReplay: frame %d of %d bytes: want 1..%d (the pool's data room, less the copy's rounding up to 64 bytes)",
				i, len(f), room&^63)
		}
		data += padded
	}
	// One block: the struct, the data, the offsets, the lengths, the burst's lengths.
	sSize := (C.size_t(unsafe.Sizeof(C.struct_ccbed_replay{})) + 63) &^ 63
	total := sSize + C.size_t(data) + C.size_t(n)*4 + C.size_t(n)*2 + C.size_t(maxBurst)*2
	var mem unsafe.Pointer
	if C.posix_memalign(&mem, 64, total) != 0 {
		return nil, fmt.Errorf("dpdk: NewReplay: out of memory (%d bytes)", total)
	}
	C.memset(mem, 0, total)
	r := &Replay{r: (*C.struct_ccbed_replay)(mem), mem: mem, maxBurst: maxBurst}
	buf := unsafe.Slice((*byte)(unsafe.Add(mem, sSize)), data)
	offs := unsafe.Slice((*uint32)(unsafe.Add(mem, sSize+C.size_t(data))), n)
	lens := unsafe.Slice((*uint16)(unsafe.Add(mem, sSize+C.size_t(data)+C.size_t(n)*4)), n)
	r.Lens = unsafe.Slice((*uint16)(unsafe.Add(mem, sSize+C.size_t(data)+C.size_t(n)*6)), maxBurst)
	at := 0
	for i, f := range frames {
		copy(buf[at:], f)
		offs[i], lens[i] = uint32(at), uint16(len(f))
		at += (len(f) + 63) &^ 63
	}
	c := r.r
	c.mp = pool.c()
	c.data = (*C.uint8_t)(unsafe.Pointer(&buf[0]))
	c.off = (*C.uint32_t)(unsafe.Pointer(&offs[0]))
	c.len = (*C.uint16_t)(unsafe.Pointer(&lens[0]))
	c.lens = (*C.uint16_t)(unsafe.Pointer(&r.Lens[0]))
	c.nframes = C.uint32_t(n)
	c.port, c.queue = C.uint16_t(p), C.uint16_t(q)
	return r, nil
}

// Len is the number of frames.
func (r *Replay) Len() int { return int(r.r.nframes) }

// Fill takes len(pkts) mbufs from the pool (all or none: ErrNoMbufs) and
// fills them with copies of frames pos, pos+1, ... (cycling); the caller
// transmits or frees them. It returns their bytes. pkts should be a Burst's
// slice (C memory) of at most the burst given to NewReplay.
func (r *Replay) Fill(pkts []*Mbuf, pos int) (builtBytes uint64, err error) {
	_, err = r.burst(pkts, pos, false)
	return uint64(r.r.built_bytes), err
}

// Send is Fill then a transmission, in one cgo call; it returns the packets
// the driver took and the bytes of all built; the rest (pkts[sent:]) stay
// the caller's, their lengths in Lens.
func (r *Replay) Send(pkts []*Mbuf, pos int) (sent int, builtBytes uint64, err error) {
	n, err := r.burst(pkts, pos, true)
	return n, uint64(r.r.built_bytes), err
}

func (r *Replay) burst(pkts []*Mbuf, pos int, tx bool) (int, error) {
	r.r.built_bytes = 0
	if len(pkts) == 0 {
		return 0, nil
	}
	if len(pkts) > r.maxBurst {
		pkts = pkts[:r.maxBurst]
	}
	if uint(pos) >= uint(r.r.nframes) {
		pos %= int(r.r.nframes)
	}
	txi := C.int(0)
	if tx {
		txi = 1
	}
	n := C.ccbed_replay_burst(r.r, mbufArray(pkts), C.uint16_t(len(pkts)), C.uint32_t(pos), txi)
	if n < 0 {
		return 0, ErrNoMbufs
	}
	return int(n), nil
}

// Free releases the C memory (not any mbuf).
func (r *Replay) Free() {
	if r.mem != nil {
		C.free(r.mem)
		r.mem, r.r, r.Lens = nil, nil, nil
	}
}
