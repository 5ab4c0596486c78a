package switchd

import "github.com/ccbed/ccbed/ccalgo"

// cpHooks reports whether cp's OnEnqueue and OnDequeue do work, from its
// ccalgo.PacketHooks when it has one (both otherwise). It runs once per port in
// New; the engine then skips a no-op hook per packet.
func cpHooks(cp ccalgo.CongestionPoint) (enq, deq bool) {
	if h, ok := cp.(ccalgo.PacketHooks); ok {
		return h.PacketHooks()
	}
	return true, true
}
