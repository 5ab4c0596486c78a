// Package wire holds every packet format ccbed puts on the wire: Ethernet (with an optional 802.1Q tag), IPv4 (ECN), UDP, the RoCEv2
// base transport header (BTH) and ACK extended transport header (AETH), CNPs, the
// ccbed data header (send timestamp) and ACK extension (echo fields), HPCC's INT
// stack, RoCC's rate message (ICMP type 253), P4QCN and QCN-like feedback packets,
// and 802.1Qbb PFC pause frames, plus the optional RoCEv2 invariant CRC (ICRC).
//
// Where it sits: switchd and hostd receive frames as byte slices (mbuf data reached
// from Go) and call Decode to classify them with fixed offsets; they build the
// packets they send (data, ACK/NAK, CNP, feedback, PFC) with the Build* functions
// straight into the mbuf's buffer. Neither path allocates: headers are typed views
// over the caller's bytes in the style of gVisor's netstack (`type IPv4 []byte`),
// with getters and setters at fixed offsets. A view's validity check (IsValid, or
// the length check Decode does) must come first; getters and setters then assume
// the slice is long enough and panic otherwise, as a slice index does.
//
// Byte order is network order everywhere. IPv4 addresses are uint32 in host byte
// order, as in ccalgo.FlowKey.
//
// Off the hot path, the gopacket layers of layers.go let gopacket, pcap tools and
// tests decode ccbed captures. Their init registers layer types 1900-1908, BTH
// on UDP port 4791, PFC on EtherType 0x8808, and replaces gopacket's ICMPv4
// decoder by one that adds a RoCC rate layer to type 253 messages and decodes
// the others as before. Wireshark/tshark decode the standard parts (BTH, AETH,
// CNP, ICMP, MAC control) natively, and ccbed's own with the Lua plugin
// deploy/wireshark/ccbed.lua (fields ccbed.*; wireshark_test.go checks it
// against Decode).
//
// Formats that are ccbed's own (not in RoCEv2) are documented on their types:
// DataHeader, AckExt, INT (placement after the BTH), RoCCRate, FeedbackMsg. Two
// reserved bits of BTH byte 8 flag what follows the BTH (FlagINT, FlagAckExt).
package wire

import "errors"

// Errors returned by decoders and builders. They are built once, so returning one
// allocates nothing.
var (
	// ErrTruncated: the frame is shorter than its headers or length fields say.
	ErrTruncated = errors.New("wire: truncated packet")
	// ErrShortBuffer: the buffer given to a builder cannot hold the packet.
	ErrShortBuffer = errors.New("wire: buffer too short for packet")
	// ErrBadIPv4: IPv4 version, header length or total length is invalid.
	ErrBadIPv4 = errors.New("wire: malformed IPv4 header")
	// ErrIPv4Checksum: the IPv4 header checksum does not verify.
	ErrIPv4Checksum = errors.New("wire: bad IPv4 header checksum")
	// ErrFragment: the IPv4 packet is a fragment (ccbed never fragments).
	ErrFragment = errors.New("wire: IPv4 fragment")
	// ErrBadUDP: the UDP length field disagrees with the IPv4 length.
	ErrBadUDP = errors.New("wire: malformed UDP header")
	// ErrBadBTH: the BTH, or what its opcode and flags say follows it, does not fit.
	ErrBadBTH = errors.New("wire: malformed RoCEv2 packet")
	// ErrBadINT: the INT stack's hop count exceeds ccalgo.MaxINTHops.
	ErrBadINT = errors.New("wire: malformed INT stack")
	// ErrICMPChecksum: the ICMP checksum of a rate message does not verify.
	ErrICMPChecksum = errors.New("wire: bad ICMP checksum")
	// ErrBadRoCCRate: an ICMP type 253 message has the wrong code, version or length.
	ErrBadRoCCRate = errors.New("wire: malformed RoCC rate message")
	// ErrBadPFC: a MAC control frame with the PFC opcode is too short.
	ErrBadPFC = errors.New("wire: malformed PFC frame")
	// ErrPayloadLen: a builder was asked for a payload it cannot carry.
	ErrPayloadLen = errors.New("wire: bad payload length")
	// ErrUnknownFeedback: BuildFeedback got a ccalgo.FeedbackKind it has no format for.
	ErrUnknownFeedback = errors.New("wire: unknown feedback kind")
)
