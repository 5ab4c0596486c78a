package switchd

import (
	"math/bits"

	"github.com/ccbed/ccbed/node"
)

// Node runs an Engine as a node.Node, for a driver that owns the frames
// (node.Frames) and calls it from one goroutine: the virtual-time fabric. A
// frame received is classified and enqueued at once (the run-to-completion
// order of the DPDK adapter); Transmit runs the tx+CC side's service and the
// shapers of the ports that hold frames. Frames the switch generates (CP
// feedback, PFC) are copied into fresh buffers of the store. Nothing here
// allocates.
type Node struct {
	e      *Engine
	frames node.Frames
	meta   Meta
	items  []TxItem
	// NoFrame counts generated frames lost because the store was empty.
	NoFrame uint64
}

// NewNode wraps e for a driver whose frame store is frames.
func NewNode(e *Engine, frames node.Frames) *Node {
	return &Node{e: e, frames: frames, items: make([]TxItem, 64)}
}

// Engine is the switch's engine.
func (n *Node) Engine() *Engine { return n.e }

// NumPorts is the number of switch ports.
func (n *Node) NumPorts() int { return n.e.n }

// Receive classifies and enqueues a frame received on port; a frame the switch
// drops or consumes (PFC) goes back to the store.
func (n *Node) Receive(now int64, port int, h node.Handle, frame []byte) {
	if !n.e.Classify(port, frame, &n.meta) || !n.e.Enqueue(now, &n.meta, frame, h) {
		n.frames.Free(h)
	}
}

// Transmit runs the service due at now and every busy port's shaper, and fills
// out with the frames that leave.
func (n *Node) Transmit(now int64, out []node.Tx) int {
	e := n.e
	e.ServiceIngress(now)
	e.Service(now)
	k := 0
	t := float64(now)
	for a := e.Active(); a != 0 && k < len(out); a &= a - 1 {
		p := bits.TrailingZeros64(a)
		if e.eg[p].sending(t) { // Transmit's own first check, spared its call
			continue
		}
		m := e.transmit(now, p, n.items[:min(len(n.items), len(out)-k)], true)
		for _, it := range n.items[:m] {
			h := it.H
			if h == 0 {
				var b []byte
				if h, b = n.frames.Alloc(); h == 0 {
					n.NoFrame++
					e.CountTxDrop(p, 1)
					continue
				}
				copy(b, it.Frame)
			}
			out[k] = node.Tx{Port: p, H: h, Len: len(it.Frame)}
			k++
		}
	}
	return k
}

// NextWake is the engine's next work (Engine.NextWake).
func (n *Node) NextWake(now int64) int64 { return n.e.NextWake(now) }

var _ node.Node = (*Node)(nil)
