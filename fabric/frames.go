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

// frameStore is the virtual-time driver's frame buffers: fixed-room buffers in
// chunks that never move (engines keep slices of them while frames wait in
// queues), named by handles 1, 2, ..., recycled through a free list. The store
// grows to the most frames ever in flight at once and stays there, so memory is
// flat in the number of frames simulated.
type frameStore struct {
	room   int
	shift  uint // log2 of the buffers per chunk
	chunks [][]byte
	free   []node.Handle
	inUse  int
}

func newFrameStore(room int) *frameStore { return newFrameStoreChunks(room, frameChunkShift) }

// newFrameStoreChunks is a store that grows by 1 << shift buffers at a time.
func newFrameStoreChunks(room int, shift uint) *frameStore {
	return &frameStore{room: room, shift: shift}
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
	o := (i & (1<<s.shift - 1)) * s.room
	return c[o : o+s.room : o+s.room]
}

func (s *frameStore) grow() {
	n := 1 << s.shift
	base := len(s.chunks) * n
	s.chunks = append(s.chunks, make([]byte, n*s.room))
	for i := n - 1; i >= 0; i-- {
		s.free = append(s.free, node.Handle(base+i+1))
	}
}

// Buffers is the number of buffers the store holds (the most ever in use).
func (s *frameStore) Buffers() int { return len(s.chunks) << s.shift }

var _ node.Frames = (*frameStore)(nil)
