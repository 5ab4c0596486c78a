package wire

import (
	"math/rand/v2"
	"testing"
)

// TestEncodeIPv4Checksum checks the checksum encodeIPv4 computes from the
// field values against ComputeChecksum over the header it wrote (sum16 of
// the bytes), for edge values and random ones.
func TestEncodeIPv4Checksum(t *testing.T) {
	type hdr struct {
		tos        uint8
		id         uint16
		ttl, proto uint8
		src, dst   uint32
		payload    int
	}
	cases := []hdr{
		{},
		{tos: 0xff, id: 0xffff, ttl: 0xff, proto: 0xff, src: 0xffffffff, dst: 0xffffffff, payload: 0xffff - IPv4MinLen},
		{tos: 0x60, id: 1, ttl: 64, proto: IPProtoUDP, src: 0x0a000001, dst: 0x0a000102, payload: 1048},
		{ttl: 1, proto: IPProtoICMP, src: 0xbaff0000, dst: 0x0000ffba, payload: 0},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		cases = append(cases, hdr{uint8(r.Uint32()), uint16(r.Uint32()), uint8(r.Uint32()), uint8(r.Uint32()),
			r.Uint32(), r.Uint32(), r.IntN(0xffff - IPv4MinLen + 1)})
	}
	b := make([]byte, IPv4MinLen)
	for _, c := range cases {
		encodeIPv4(b, c.tos, c.id, c.ttl, c.proto, c.src, c.dst, c.payload)
		ip := IPv4(b)
		if got, want := ip.Checksum(), ip.ComputeChecksum(); got != want {
			t.Fatalf("%+v: checksum %#04x, want %#04x", c, got, want)
		}
		if !ip.VerifyChecksum() {
			t.Fatalf("%+v: header does not verify", c)
		}
	}
}
