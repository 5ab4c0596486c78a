package fabric

import "github.com/ccbed/ccbed/node"

// frameChunkShift is log2 of the buffers the serial driver's store adds at a
// time (4,096); partitionChunkShift a partition's (256): a fabric cut into
// hundreds of partitions would otherwise hold 4,096 buffers in each, where
// a partition's frames in flight are a few hundred.
const (
	frameChunkShift     = 12
	partitionChunkShift = 8
)

// lineBytes is the cache line the frame store aligns its buffers to.
const lineBytes = 64

// frameStore is the virtual-time driver's frame buffers: fixed-room buffers in
// chunks that never move (engines keep slices of them while frames wait in
// queues), named by handles 1, 2, ..., recycled through a free list. The store
// grows to the most frames ever in flight at once and stays there, so memory is
// flat in the number of frames simulated.
//
// Buffers start on a cache line (stride: room rounded up to lineBytes; a
// chunk is a large allocation, which starts on a page): a frame's headers
// up to its BTH and DataHeader (62 bytes untagged) are one line, not two.
// Those lines are what the virtual-time path touches of a data frame (the
// payload is never written or read there, nor the ICRC field but by a
// capture: hostd.Engine.LeaveICRC), and by the time a frame reaches its
// next hop they have usually left the core's caches.
type frameStore struct {
	room   int
	stride int  // bytes from one buffer to the next: room rounded up to lineBytes
	shift  uint // log2 of the buffers per chunk
	chunks [][]byte
	free   []node.Handle
	inUse  int
}

func newFrameStore(room int) *frameStore { return newFrameStoreChunks(room, frameChunkShift) }

// newFrameStoreChunks is a store that grows by 1 << shift buffers at a time.
func newFrameStoreChunks(room int, shift uint) *frameStore {
	return &frameStore{room: room, stride: (room + lineBytes - 1) &^ (lineBytes - 1), shift: shift}
}

// Alloc returns a free buffer, adding a chunk when none is left.
func (s *frameStore) Alloc() (node.Handle, []byte) {
	if len(s.free) == 0 {
		s.grow()
	}
	h := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	s.inUse++
	return h, s.bytes(h)
}

// Free gives a buffer back.
func (s *frameStore) Free(h node.Handle) {
	s.free = append(s.free, h)
	s.inUse--
}

// bytes is buffer h's whole room.
func (s *frameStore) bytes(h node.Handle) []byte {
	i := int(h - 1)
	c := s.chunks[i>>s.shift]
	o := (i & (1<<s.shift - 1)) * s.stride
	return c[o : o+s.room : o+s.room]
}

func (s *frameStore) grow() {
	n := 1 << s.shift
	base := len(s.chunks) * n
	s.chunks = append(s.chunks, make([]byte, n*s.stride))
	for i := n - 1; i >= 0; i-- {
		s.free = append(s.free, node.Handle(base+i+1))
	}
}

// Buffers is the number of buffers the store holds (the most ever in use).
func (s *frameStore) Buffers() int { return len(s.chunks) << s.shift }

var _ node.Frames = (*frameStore)(nil)
