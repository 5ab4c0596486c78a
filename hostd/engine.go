package hostd

import (
	"math/bits"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/wire"
)

const psnMask = 1<<24 - 1

// signext24 interprets a 24-bit PSN difference as a signed number in
// [-2^23, 2^23).
func signext24(d uint32) int64 { return int64(int32(d<<8) >> 8) }

// Engine is one host's NIC: a sender (QPs paced by a pacer.Scheduler under
// their RPs) and a receiver (in-order check, the scheme's NP, the ACKs, NAKs
// and CNPs it owes), each owned by one goroutine (lcore). The receiver's
// methods (Receive, BuildControl, RxFlows) are the rx side; the sender's
// (Service, NextData, NextDataBurst, CanSend, ChargeControl, NextWake, the
// flow table, every RP and the results) the tx side. The receiver hands ACKs,
// NAKs, CNPs, feedback and PFC pauses to a sender through a lock-free
// single-producer single-consumer event ring (evring.go): the only state the
// two share, besides what construction wrote. Results (Samples, FCTs,
// RxFlows, Counters) are read once the loops have stopped.
type Engine struct {
	// receiver first: its frame scratch stays at 8 mod 16 in the Engine
	// (TestFrameScratchPlace).
	receiver
	sender
	r *resolved // shared by both sides, written only at construction (and SetMAC before a run)
}

// shardPlace is where an engine's QP numbers put its index among its host's
// engines (NewEngines): above the slot bits, below the generation.
type shardPlace struct {
	shard, shards int    // this engine's index among its host's engines, and their number
	slotBits      uint   // bits of a QP number's slot (from MaxQPs)
	genShift      uint   // slotBits plus the bits of the shard index: a QP number's generation starts here
	shardMask     uint32 // the shard index bits of a QP number, above its slot
}

func newShardPlace(maxQPs int, sh shardSpec) shardPlace {
	p := shardPlace{shard: sh.index, shards: sh.count}
	p.slotBits = uint(max(bits.Len(uint(maxQPs-1)), 1))
	p.genShift = p.slotBits + uint(bits.Len(uint(sh.count-1)))
	p.shardMask = 1<<(p.genShift-p.slotBits) - 1
	return p
}

// Controls are the control frames the receive side owes after one data frame:
// an ACK or NAK, and a CNP. The caller owns it and reuses it.
type Controls struct {
	N int
	C [2]Control
}

// ControlKind is the kind of a Control.
type ControlKind uint8

// Control kinds.
const (
	CtlAck ControlKind = iota + 1
	CtlNak
	CtlCNP
)

// Control is one control frame to build with BuildControl.
type Control struct {
	Kind   ControlKind
	Ep     wire.Endpoints
	Spec   wire.AckSpec // DestQP for a CNP too
	Fields ccalgo.AckFields
}

// NewEngine builds an engine from s at time now (ns). s is completed with
// ApplyDefaults; a bad field is a *SpecError.
func NewEngine(s Spec, now int64) (*Engine, error) {
	s.ApplyDefaults()
	r, err := resolve(&s)
	if err != nil {
		return nil, err
	}
	return newEngine(r, now, oneShard(r))
}

// shardSpec is an engine's place among the engines of one host (NewEngines):
// its index of count, and the event rings joining the rx sides to the tx
// sides.
type shardSpec struct {
	index, count int
	in           []*evRing // consumed by this engine's tx side
	out          []*evRing // produced by this engine's rx side, by destination engine
}

// oneShard is the shardSpec of a host run as one engine: one ring from its
// rx side to its tx side.
func oneShard(r *resolved) shardSpec {
	ring := newEvRing(r.cfg.EventRing)
	return shardSpec{index: 0, count: 1, in: []*evRing{ring}, out: []*evRing{ring}}
}

func newEngine(r *resolved, now int64, sh shardSpec) (*Engine, error) {
	e := &Engine{r: r}
	place := newShardPlace(r.cfg.MaxQPs, sh)
	if err := e.sender.init(r, now, sh, place); err != nil {
		return nil, err
	}
	if err := e.receiver.init(r, sh, place); err != nil {
		return nil, err
	}
	if sh.count == 1 && len(sh.in) == 1 && len(sh.out) == 1 && sh.in[0] == sh.out[0] {
		e.evOne[0], e.evOwn = sh.in[0], sh.in[0]
		e.receiver.evOut, e.sender.evIn = e.evOne[:], e.evOne[:]
	}
	return e, nil
}

// useRing makes r the ring joining the rx side to the tx side of an engine
// that is its host's only one (evOwn not nil); nil makes it evOwn again.
// The ring left and r must hold no event: the caller (Node) switches only
// between events.
func (e *Engine) useRing(r *evRing) {
	if r == nil {
		r = e.evOwn
	}
	e.evOne[0] = r
}

// EventsPending reports whether the rx side has handed the tx side events
// (ACKs, CNPs, feedback, pauses) that Service has not applied yet. Either side
// may ask.
func (e *Engine) EventsPending() bool {
	for _, r := range e.sender.evIn {
		if !r.Empty() {
			return true
		}
	}
	return false
}

// LinkBps is the NIC line rate, bits/s.
func (e *Engine) LinkBps() float64 { return e.r.linkBps }

// IP is the host's IPv4 address (host byte order).
func (e *Engine) IP() uint32 { return e.r.ip }

// SetMAC sets the host's MAC (the port's address) before the engine runs.
func (e *Engine) SetMAC(m wire.MAC) { e.r.mac = m }

// LeaveICRC makes the data frames the engine builds leave the 4 bytes of
// their ICRC field as the buffer holds them, as they leave the payload,
// unless the engine computes the ICRC (Spec.ICRC); false (the default) zeroes
// them. For a driver whose frames nobody reads past their headers: the
// virtual-time fabric sets it unless it captures frames, which saves a write
// to each data frame's last cache line. Call it before the engine runs, from
// the tx side.
func (e *Engine) LeaveICRC(leave bool) {
	e.sender.leaveICRC = leave
	for i := range e.sender.tmpls {
		e.sender.tmpls[i].LeaveICRC(leave)
	}
}

// MaxFrameBytes is the largest frame the engine builds: mbufs must hold it.
func (e *Engine) MaxFrameBytes() int { return maxFrame(e.r.mtu) + vlanLen(e.r.tagPCP) }

// initialSlots is the size the receiver's tables and the ring of pending
// flows start at.
const initialSlots = 16

// growRing returns ring (a FIFO of n entries from head) as a ring of size
// entries from index 0, in the same order.
func growRing[T any](ring []T, head, n, size int) []T {
	out := make([]T, size)
	for i := 0; i < n; i++ {
		out[i] = ring[(head+i)%len(ring)]
	}
	return out
}

// Counters returns the engine's counters (read when the loops have stopped, or
// accept a slightly torn snapshot).
func (e *Engine) Counters() (RxCounters, TxCounters) { return e.rc, e.tc }

// Refused is every control frame the engine refused under trust "topology",
// by kind: the receive side's and the send side's (read as Counters).
func (e *Engine) Refused() Refusals {
	r := e.rc.Refused
	r.Add(&e.tc.Refused)
	return r
}
