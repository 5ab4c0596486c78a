package switchd

import (
	"math"

	"github.com/ccbed/ccbed/wire"
)

// sharedBuffer is a shared-memory switch's buffer accounting (BufferConfig,
// mode "shared"), after the HPCC simulator's switch MMU: every data byte in
// the switch is in a lossless priority's reserve or headroom of its ingress
// port, or in the shared pool (used). The per-(ingress, priority) counts are
// an ingressAcct: the ingress port's (in its egress struct, next to its XOFF
// state) with one tx shard, each shard's own with several. tx+CC lcore only.
type sharedBuffer struct {
	on bool
	// pool is the buffer less every port's headroom and reserve.
	pool         int64
	used         int64 // shared-pool bytes in use (lossless beyond reserve, and lossy)
	alpha        float64
	reserve      int64
	resumeOffset int64
	// alphaNum / 2^alphaShift is alpha when alpha is dyadic (1/8, 1/2, 2,
	// ...: the usual values), with alphaShift -1 otherwise: threshold is
	// then an integer multiply and shift, exactly floor(alpha x free), the
	// float product's value, without the conversions on every packet.
	alphaNum   int64
	alphaShift int8
	// exactBelow is 2^40 when alpha is dyadic, else 0: a free pool under it
	// takes the integer form (one compare for the two conditions).
	exactBelow int64
	// minFree is the least free shared pool whose threshold is above 0:
	// while pool - used >= minFree, a priority within its reserve with no
	// headroom in use does not call for XOFF (ingressAdd's fast path).
	minFree int64
}

// ingressAcct is PFC's count of one ingress port's lossless bytes inside the
// switch, per priority.
type ingressAcct [wire.PFCPriorities]prioAcct

// prioAcct is one priority's count of an ingress port: static buffer, all of
// its bytes in in; shared buffer, those outside the headroom in in (reserve
// first, then the shared pool), those inside it in hdrm, up to headroom. A
// priority's counts and the port's headroom (the same in each priority)
// share 32 bytes, so that a frame's admission and release touch one cache
// line of the ingress port's state, where separate arrays of the counts and
// the headroom made three (an ingressAcct starts on a line: egress.acct, and
// the shards' slices of 256-byte elements).
type prioAcct struct {
	in, hdrm int64
	headroom int64
	_        int64 // to 32 bytes
}

// setHeadroom sets the port's headroom, in every priority.
func (a *ingressAcct) setHeadroom(h int64) {
	for p := range a {
		a[p].headroom = h
	}
}

// clear empties the counts, keeping the headroom.
func (a *ingressAcct) clear() {
	for p := range a {
		a[p].in, a[p].hdrm = 0, 0
	}
}

// maxAlphaShift bounds the dyadic form of alpha: alphaNum < 2^20 and free
// bytes < 2^40 keep the product in an int64, and both exact in a float64.
const maxAlphaShift = 20

// dyadic returns n, k with a = n / 2^k, or k = -1 when a has no such form.
func dyadic(a float64) (int64, int8) {
	for k := 0; k <= maxAlphaShift; k++ {
		v := a * float64(int64(1)<<k)
		if v == math.Trunc(v) && v > 0 && v < 1<<maxAlphaShift {
			return int64(v), int8(k)
		}
	}
	return 0, -1
}

func newSharedBuffer(sp *Spec) sharedBuffer {
	b := &sp.Buffer
	s := sharedBuffer{on: true, pool: b.SizeBytes, alpha: b.Alpha, reserve: b.ReserveBytes, resumeOffset: b.ResumeOffsetBytes}
	s.setAlpha(b.Alpha)
	s.minFree = s.leastFreeAbove0()
	if sp.PFC.Enabled {
		hdrm, rsrv := sp.reserved()
		s.pool -= hdrm + rsrv
	}
	return s
}

// setAlpha sets alpha and its dyadic form.
func (s *sharedBuffer) setAlpha(a float64) {
	s.alpha = a
	s.alphaNum, s.alphaShift = dyadic(a)
	s.exactBelow = 0
	if s.alphaShift >= 0 {
		s.exactBelow = 1 << 40
	}
}

// threshold is the dynamic threshold: alpha x the free shared pool.
func (s *sharedBuffer) threshold() int64 {
	return s.thresholdOf(max(s.pool-s.used, 0))
}

// thresholdOf is threshold with free bytes free.
func (s *sharedBuffer) thresholdOf(free int64) int64 {
	if free < s.exactBelow {
		// The mask (alphaShift <= maxAlphaShift) spares the shift's checks
		// for a negative or too large count.
		return free * s.alphaNum >> (uint(s.alphaShift) & 63)
	}
	return int64(s.alpha * float64(free))
}

// leastFreeAbove0 is the least free pool whose threshold is above 0 (the
// threshold grows with the free pool), or MaxInt64 when none is.
func (s *sharedBuffer) leastFreeAbove0() int64 {
	if !(s.alpha > 0) {
		return math.MaxInt64
	}
	lo, hi := int64(0), int64(1)
	for s.thresholdOf(hi) <= 0 { // thresholdOf(lo) <= 0 < thresholdOf(hi)
		if hi >= 1<<60 {
			return math.MaxInt64
		}
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		if mid := lo + (hi-lo)/2; s.thresholdOf(mid) > 0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// admitLossy reports whether a lossy frame of l bytes fits its egress queue,
// holding q bytes, under the dynamic threshold.
func (s *sharedBuffer) admitLossy(q, l int64) bool {
	return l <= s.pool-s.used && q+l <= s.threshold()
}

// sharedOf is the shared-pool bytes of lossless priority p of ingress g.
func (s *sharedBuffer) sharedOf(g *ingressAcct, p uint8) int64 {
	return max(g[p].in-s.reserve, 0)
}

// admitLossless reports whether a lossless frame of l bytes from ingress g
// fits: under the threshold, or in the headroom. A refusal means the headroom
// was too small for the link's round trip.
func (s *sharedBuffer) admitLossless(g *ingressAcct, p uint8, l int64) bool {
	return l+g[p].hdrm <= g[p].headroom || l+s.sharedOf(g, p) <= s.threshold()
}

// admitAdd is admitLossless, then add when it admits, in one pass over
// ingress g's counts (the shard's own with several tx shards): it
// reports whether the lossless frame of l bytes of priority p was admitted,
// and whether p then calls for XOFF (shouldPause). The threshold is computed
// only where admitLossless or add would read it, and shouldPause's at most
// once (a frame within the reserve compares the free pool with minFree).
func (s *sharedBuffer) admitAdd(g *ingressAcct, p uint8, l int64) (ok, pause bool) {
	p &= wire.PFCPriorities - 1
	hdrm, in := g[p].hdrm, g[p].in
	var thr int64
	haveThr := false
	if l+hdrm > g[p].headroom {
		thr, haveThr = s.threshold(), true
		if l+max(in-s.reserve, 0) > thr {
			return false, false
		}
	}
	nb := in + l
	if nb <= s.reserve {
		// sharedOf stays 0: shouldPause is headroom in use or a threshold
		// of 0 or less, that is a free pool under minFree.
		g[p].in = nb
		return true, hdrm > 0 || s.pool-s.used < s.minFree
	}
	if !haveThr {
		thr = s.threshold()
	}
	if nb-s.reserve > thr {
		g[p].hdrm = hdrm + l
		return true, true
	}
	g[p].in = nb
	s.used += min(l, nb-s.reserve)
	return true, hdrm > 0 || nb-s.reserve >= s.threshold()
}

// add counts an admitted lossless frame: into the reserve while it lasts,
// then the shared pool under the threshold, then the headroom.
func (s *sharedBuffer) add(g *ingressAcct, p uint8, l int64) {
	nb := g[p].in + l
	switch {
	case nb <= s.reserve:
		g[p].in = nb
	case nb-s.reserve > s.threshold():
		g[p].hdrm += l
	default:
		g[p].in = nb
		s.used += min(l, nb-s.reserve)
	}
}

// remove releases a lossless frame: from the headroom first, then the shared
// pool, then the reserve.
func (s *sharedBuffer) remove(g *ingressAcct, p uint8, l int64) {
	fromHdrm := min(g[p].hdrm, l)
	fromShared := min(l-fromHdrm, s.sharedOf(g, p))
	g[p].hdrm -= fromHdrm
	g[p].in -= l - fromHdrm
	s.used -= fromShared
}

// shouldPause: the priority uses headroom or reached the threshold.
func (s *sharedBuffer) shouldPause(g *ingressAcct, p uint8) bool {
	return g[p].hdrm > 0 || s.sharedOf(g, p) >= s.threshold()
}

// shouldResume: no headroom in use, and nothing shared or the resume offset
// under the threshold.
func (s *sharedBuffer) shouldResume(g *ingressAcct, p uint8) bool {
	if g[p].hdrm > 0 {
		return false
	}
	sh := s.sharedOf(g, p)
	return sh == 0 || sh+s.resumeOffset <= s.threshold()
}
