package wire

import (
	"encoding/binary"
	"hash/crc32"
)

// icrcSeed is the CRC-32 state after the 8 bytes of 0xFF that stand for the masked
// InfiniBand LRH (the raw state 0xDEBB20E3 of the Linux rxe driver, expressed in
// hash/crc32's pre/post-inverted convention).
var icrcSeed = crc32.Update(0, crc32.IEEETable, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})

// ComputeICRC returns the RoCEv2 invariant CRC of an IPv4 RoCEv2 packet ip (from
// the IPv4 header to the end of the ICRC trailer, which is not covered): CRC-32
// (IEEE 802.3) over 8 bytes of 0xFF, the IPv4 header with TOS, TTL and checksum
// set to ones, the UDP header with its checksum set to ones, the BTH with byte 4
// (FECN, BECN, reserved) set to ones, and the rest of the packet (InfiniBand
// Architecture Specification Vol. 1, Annex A17, ICRC; as in Linux drivers/infiniband/sw/rxe/rxe_icrc.c). ip must be a valid IPv4
// packet holding UDP and a BTH; the result goes on the wire little-endian
// (SetICRC). Checked against an ICRC captured from a ConnectX-4 Lx (icrc_test.go).
//
// To stay allocation-free it sets the variant fields to ones in ip itself and
// restores them before returning: the caller must own ip (no concurrent reader).
func ComputeICRC(ip []byte) uint32 {
	hl := IPv4(ip).HeaderLen()
	n := IPv4(ip).TotalLength()
	u := hl
	bth := hl + UDPLen
	tos, ttl, c0, c1 := ip[1], ip[8], ip[10], ip[11]
	u0, u1, f := ip[u+6], ip[u+7], ip[bth+4]
	ip[1], ip[8], ip[10], ip[11] = 0xff, 0xff, 0xff, 0xff
	ip[u+6], ip[u+7], ip[bth+4] = 0xff, 0xff, 0xff
	c := crc32.Update(icrcSeed, crc32.IEEETable, ip[:n-ICRCLen])
	ip[1], ip[8], ip[10], ip[11] = tos, ttl, c0, c1
	ip[u+6], ip[u+7], ip[bth+4] = u0, u1, f
	return c
}

// SetICRC computes the ICRC of ip (see ComputeICRC) and stores it in the last 4
// bytes of the IPv4 packet.
func SetICRC(ip []byte) {
	n := IPv4(ip).TotalLength()
	binary.LittleEndian.PutUint32(ip[n-ICRCLen:], ComputeICRC(ip))
}

// VerifyICRC reports whether the ICRC trailer of ip is correct.
func VerifyICRC(ip []byte) bool {
	n := IPv4(ip).TotalLength()
	return binary.LittleEndian.Uint32(ip[n-ICRCLen:]) == ComputeICRC(ip)
}
