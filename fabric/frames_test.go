package fabric

import (
	"testing"
	"unsafe"
)

// TestFrameStoreLayout allocates three chunks' worth of buffers from stores
// of the rooms the fabric uses (a switch-only fabric's 256 bytes, a 1,000-byte
// MTU's 1,108 with a tag, a jumbo frame's) in both chunk sizes, and checks
// that every buffer has its room, starts on a cache line, and overlaps no
// other: a byte written at each end of every buffer is still there after
// all are written.
func TestFrameStoreLayout(t *testing.T) {
	for _, tc := range []struct {
		room  int
		shift uint
	}{
		{256, frameChunkShift}, {1108, frameChunkShift}, {1108, partitionChunkShift},
		{1130, partitionChunkShift}, {9126, partitionChunkShift},
	} {
		s := newFrameStoreChunks(tc.room, tc.shift)
		n := 3 << tc.shift
		bufs := make([][]byte, n+1)
		for i := 1; i <= n; i++ {
			h, b := s.Alloc()
			if int(h) < 1 || int(h) > n || bufs[h] != nil {
				t.Fatalf("room %d: handle %d", tc.room, h)
			}
			if len(b) != tc.room || cap(b) != tc.room {
				t.Fatalf("room %d: buffer %d has len %d cap %d", tc.room, h, len(b), cap(b))
			}
			if a := uintptr(unsafe.Pointer(&b[0])); a%lineBytes != 0 {
				t.Fatalf("room %d: buffer %d at %#x, not on a %d-byte line", tc.room, h, a, lineBytes)
			}
			b[0], b[len(b)-1] = byte(h), byte(h>>8)
			bufs[h] = b
		}
		for h := 1; h <= n; h++ {
			if b := bufs[h]; b[0] != byte(h) || b[len(b)-1] != byte(h>>8) {
				t.Fatalf("room %d: buffer %d overwritten", tc.room, h)
			}
		}
		if s.Buffers() != n || s.inUse != n {
			t.Fatalf("room %d: %d buffers, %d in use; want %d", tc.room, s.Buffers(), s.inUse, n)
		}
	}
}
