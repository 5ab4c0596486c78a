package hostd

import (
	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/node"
	"github.com/ccbed/ccbed/wire"
)

// Node runs an Engine as a node.Node: one port, frames in buffers a driver owns
// (node.Frames). It is the adapter of the virtual-time fabric, as Host is the
// adapter of DPDK, and it drives the engine in the same order: a received frame
// runs the receiver and NP at once and the control frames it owes (ACK / NAK,
// CNP) are built into fresh buffers and leave first at the next Transmit; then
// the tx side's service (events, timers, flow starts) and the data frames the
// pacer allows. Nothing here allocates.
//
// A Node is two cache lines (TestNodeLayout): what every Receive, Transmit
// and NextWake reads is the first.
type Node struct {
	e      *Engine
	frames node.Frames
	ctls   *Controls // in the node's scratch (nodeScratch)
	// shared is the event ring the Nodes of one driver share (NewNodes),
	// nil when the engine keeps to its own: see Receive.
	shared     *evRing
	wake       int64
	head, size int32 // the ring of owed control frames, ctl
	// evs: the engine's rx side has posted events its tx side has not
	// applied (in shared while the engine uses it, else in its own ring).
	// Only Receive posts them and only Transmit applies them, so a Node
	// with a shared ring knows without reading the engine's ring.
	evs bool
	_   [7]byte
	// owed control frames, oldest first (a ring)
	ctl      []node.Tx
	spare    node.Handle // a buffer NextData did not fill, kept for the next try
	spareBuf []byte
	// NoFrame counts frames not built because the driver's store was empty.
	NoFrame uint64
}

// NewNode wraps e for a driver whose frame store is frames; its buffers must
// hold e.MaxFrameBytes().
func NewNode(e *Engine, frames node.Frames) *Node {
	return newNode(e, frames, new(nodeScratch))
}

// NewNodes wraps each of es as NewNode does, for a driver that runs them all
// on one goroutine: they share the scratch a host writes for each frame it
// receives (the decoded frame, the data arrival its NP reads, the control
// frames owed), which then stays in the cache however many hosts the
// driver runs, where a scratch of each host's own (1 KB) is a few cache
// misses a frame once there are hundreds.
//
// They share the event ring from a host's rx side to its tx side too (each
// engine that is its host's only one, with a ring of the first one's size):
// a host's events are applied in the Transmit that the driver calls after
// the Receive that posted them, before any other node's Receive, and then
// the shared ring's slots stay in the cache, where a ring of each host's
// own is a few cache misses an event. A Node falls back to its engine's
// own ring while the shared one holds another node's events (a driver that
// receives at a second node before transmitting at the first).
func NewNodes(es []*Engine, frames node.Frames) []*Node {
	sc := new(nodeScratch)
	ns := make([]*Node, len(es))
	for i, e := range es {
		ns[i] = newNode(e, frames, sc)
		if own := e.evOwn; own != nil {
			if sc.ring == nil {
				sc.ring = newEvRing(own.Cap())
			}
			if sc.ring.Cap() == own.Cap() {
				ns[i].shared = sc.ring
			}
		}
	}
	return ns
}

// nodeScratch is what a Node and its engine's receive side write for each
// frame received and have read back before Receive returns.
type nodeScratch struct {
	_    [8]byte // fr at 8 mod 16, as the engine's own (TestFrameScratchPlace)
	fr   wire.Frame
	da   ccalgo.DataArrival
	ctls Controls
	ring *evRing // the engines' shared event ring (NewNodes), or nil
}

func newNode(e *Engine, frames node.Frames, sc *nodeScratch) *Node {
	e.receiver.frp, e.receiver.dap = &sc.fr, &sc.da
	return &Node{e: e, frames: frames, ctls: &sc.ctls, ctl: make([]node.Tx, ctlSlots)}
}

// ctlSlots is the ring of owed control frames' first size: a received frame
// owes at most two and the driver calls Transmit right after Receive, so it
// holds two at most but under an unusual driver (growCtl). Small, the ring
// is a few lines that stay in the cache; at 256 slots (6 KB a host, swept a
// new line every third ACK) it was 1.5 MB at 256 hosts.
const ctlSlots = 8

// Engine is the host's engine.
func (n *Node) Engine() *Engine { return n.e }

// NumPorts is 1: a host has one NIC port.
func (n *Node) NumPorts() int { return 1 }

// Receive runs the receive side on frame and frees it; control frames owed are
// built now and sent at the next Transmit.
func (n *Node) Receive(now int64, port int, h node.Handle, frame []byte) {
	var k int
	if sh := n.shared; sh != nil && !n.evs {
		// Between events the engine uses its own ring; for this frame's,
		// the shared one if no other node's wait in it. Either way the
		// node knows from now on whether it has events.
		if sh.Empty() {
			n.e.useRing(sh)
			k = n.e.Receive(now, frame, n.ctls)
			if n.evs = !sh.Empty(); !n.evs {
				n.e.useRing(nil)
			}
		} else {
			k = n.e.Receive(now, frame, n.ctls)
			n.evs = !n.e.evOwn.Empty()
		}
	} else {
		k = n.e.Receive(now, frame, n.ctls)
	}
	n.frames.Free(h)
	for j := 0; j < k; j++ {
		ch, b := n.frames.Alloc()
		if ch == 0 {
			n.NoFrame++
			continue
		}
		l := n.e.BuildControl(b, &n.ctls.C[j])
		if l == 0 {
			n.frames.Free(ch)
			continue
		}
		if int(n.size) == len(n.ctl) {
			n.growCtl()
		}
		n.ctl[(int(n.head)+int(n.size))%len(n.ctl)] = node.Tx{H: ch, Len: l}
		n.size++
	}
}

// eventsPending reports whether the engine has events Service has not
// applied: what the node knows with a shared ring, else the engine's ring.
func (n *Node) eventsPending() bool {
	if n.shared != nil {
		return n.evs
	}
	return n.e.EventsPending()
}

// growCtl doubles the ring of owed control frames (a receiver that many
// senders feed at once; rare, amortised).
func (n *Node) growCtl() {
	nc := make([]node.Tx, 2*len(n.ctl))
	for i := 0; i < int(n.size); i++ {
		nc[i] = n.ctl[(int(n.head)+i)%len(n.ctl)]
	}
	n.ctl, n.head = nc, 0
}

// Transmit sends the control frames owed, then, when the tx side has work due,
// runs its service and builds the data frames the pacer allows at now.
func (n *Node) Transmit(now int64, out []node.Tx) int {
	k := 0
	for ; k < len(out) && n.size > 0; k++ {
		c := n.ctl[n.head]
		n.head = int32((int(n.head) + 1) % len(n.ctl))
		n.size--
		n.e.ChargeControl(now, c.Len)
		out[k] = c
	}
	if k == len(out) || (now < n.wake && !n.eventsPending()) {
		return k
	}
	n.e.service(now, n.shared == nil || n.evs)
	if n.evs {
		// Service applies at most 1,024 events of a ring at a call.
		if r := n.e.evOne[0]; r.Empty() {
			n.evs = false
			n.e.useRing(nil)
		}
	}
	for k < len(out) {
		if n.spare == 0 {
			if !n.e.CanSend(now) {
				break
			}
			if n.spare, n.spareBuf = n.frames.Alloc(); n.spare == 0 {
				n.NoFrame++
				break
			}
		}
		l := n.e.NextData(now, n.spareBuf)
		if l == 0 {
			break
		}
		out[k] = node.Tx{H: n.spare, Len: l}
		n.spare, n.spareBuf = 0, nil
		k++
	}
	n.wake = now
	if k < len(out) {
		n.wake = n.e.NextWake(now)
	}
	return k
}

// NextWake is now while control frames are owed or events wait, else the
// engine's next send, timer, flow start, sweep or sample.
func (n *Node) NextWake(now int64) int64 {
	if n.size > 0 || n.eventsPending() {
		return now
	}
	return max(n.wake, now)
}

// Close gives the buffers the node still holds back to the store.
func (n *Node) Close() {
	for ; n.size > 0; n.size-- {
		n.frames.Free(n.ctl[n.head].H)
		n.head = int32((int(n.head) + 1) % len(n.ctl))
	}
	if n.spare != 0 {
		n.frames.Free(n.spare)
		n.spare, n.spareBuf = 0, nil
	}
}

var _ node.Node = (*Node)(nil)
