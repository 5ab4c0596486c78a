package wire

import (
	"encoding/binary"
	"math/rand"
	"testing"
)

// decodeSummary is the Summary that Decode's result implies: the reference
// Classify must match.
func decodeSummary(frame []byte) (Summary, error) {
	var f Frame
	err := Decode(frame, &f)
	s := Summary{Kind: f.Kind}
	off := func(v []byte) uint16 { return uint16(cap(frame) - cap(v)) }
	if f.Eth != nil && f.Eth.EtherType() == EtherTypeIPv4 {
		s.IPOff = uint16(f.Eth.HeaderLen())
	}
	if f.UDP != nil {
		s.L4Off = off(f.UDP)
	}
	if f.INT != nil {
		s.INTOff = off(f.INT)
	}
	return s, err
}

// checkSame fails when Classify and Decode disagree on frame: the same error
// and kind always, the same offsets where the frame is accepted.
func checkSame(t *testing.T, name string, frame []byte) {
	t.Helper()
	want, werr := decodeSummary(frame)
	var got Summary
	gerr := Classify(frame, &got)
	if gerr != werr || got.Kind != want.Kind {
		t.Fatalf("%s: Classify = %v, %v; Decode = %v, %v (frame % x)", name, got.Kind, gerr, want.Kind, werr, frame)
	}
	// ClassifyData takes exactly the data packets of an untagged frame
	// without IPv4 options, with Classify's INT offset.
	intOff, ok := ClassifyData(frame)
	data := gerr == nil && got.Kind == KindData && got.IPOff == EthernetLen && got.L4Off == EthernetLen+IPv4MinLen
	if ok != data || ok && intOff != got.INTOff {
		t.Fatalf("%s: ClassifyData = %d, %v; Classify %+v, %v (frame % x)", name, intOff, ok, got, gerr, frame)
	}
	if gerr != nil && gerr != ErrFragment {
		if got.Kind != KindOther {
			t.Fatalf("%s: kind %v with error %v", name, got.Kind, gerr)
		}
		return
	}
	if gerr == ErrFragment {
		want.L4Off, want.INTOff = 0, 0
	}
	if got != want {
		t.Fatalf("%s: Classify summary %+v, Decode's %+v", name, got, want)
	}
}

// fixIPv4 recomputes the IPv4 header checksum when the header is long enough
// to hold one, so that mutations reach the layers behind it.
func fixIPv4(b []byte) {
	e := Ethernet(b)
	if !e.IsValid() || e.EtherType() != EtherTypeIPv4 {
		return
	}
	ip := IPv4(e.Payload())
	if len(ip) < IPv4MinLen || ip.HeaderLen() < IPv4MinLen || ip.HeaderLen() > len(ip) {
		return
	}
	ip.SetChecksum(ip.ComputeChecksum())
}

func TestClassifyMatchesDecode(t *testing.T) {
	for _, fr := range builtFrames(t) {
		t.Run(fr.name, func(t *testing.T) {
			var s Summary
			if err := Classify(fr.frame, &s); err != nil || s.Kind != fr.kind {
				t.Fatalf("built frame: %v, %v; want %v", s.Kind, err, fr.kind)
			}
			checkSame(t, "built", fr.frame)
			// Every truncation.
			for n := 0; n < len(fr.frame); n++ {
				checkSame(t, "truncated", fr.frame[:n])
			}
			// Every byte of the headers (and a bit beyond) changed, with and
			// without a repaired IPv4 checksum.
			b := make([]byte, len(fr.frame))
			for i := 0; i < min(len(fr.frame), 160); i++ {
				for _, x := range []byte{0x01, 0x10, 0x80, 0xff} {
					copy(b, fr.frame)
					b[i] ^= x
					checkSame(t, "flipped", b)
					fixIPv4(b)
					checkSame(t, "flipped+fixed", b)
				}
			}
		})
	}
}

func TestClassifyCases(t *testing.T) {
	frames := map[string][]byte{}
	for _, fr := range builtFrames(t) {
		frames[fr.name] = fr.frame
	}
	mod := func(name string, f func(b []byte)) []byte {
		b := append([]byte(nil), frames[name]...)
		f(b)
		return b
	}
	udpOff := uint16(EthernetLen + IPv4MinLen)
	for _, tc := range []struct {
		name  string
		frame []byte
		want  Summary
		err   error
	}{
		{"data", frames["data"], Summary{Kind: KindData, IPOff: 14, L4Off: udpOff}, nil},
		{"data+INT", frames["data+INT"], Summary{Kind: KindData, IPOff: 14, L4Off: udpOff, INTOff: udpOff + UDPLen + BTHLen}, nil},
		{"data VLAN", frames["data VLAN"], Summary{Kind: KindData, IPOff: 18, L4Off: udpOff + 4}, nil},
		{"ack+INT", frames["ack+INT"], Summary{Kind: KindAck, IPOff: 14, L4Off: udpOff, INTOff: udpOff + UDPLen + BTHLen + AETHLen + AckExtLen}, nil},
		{"nak", frames["nak"], Summary{Kind: KindNak, IPOff: 14, L4Off: udpOff}, nil},
		{"cnp", frames["cnp"], Summary{Kind: KindCNP, IPOff: 14, L4Off: udpOff}, nil},
		{"rocc rate", frames["rocc rate"], Summary{Kind: KindRoCCRate, IPOff: 14}, nil},
		{"p4qcn", frames["p4qcn"], Summary{Kind: KindP4QCN, IPOff: 14, L4Off: udpOff}, nil},
		{"qcn", frames["qcn"], Summary{Kind: KindQCN, IPOff: 14, L4Off: udpOff}, nil},
		{"pfc", frames["pfc"], Summary{Kind: KindPFC}, nil},
		{"empty", nil, Summary{}, ErrTruncated},
		{"short VLAN", mod("data VLAN", func(b []byte) {})[:16], Summary{}, ErrTruncated},
		{"ip checksum", mod("data", func(b []byte) { b[EthernetLen+10] ^= 1 }), Summary{IPOff: 14}, ErrIPv4Checksum},
		{"ip version", mod("data", func(b []byte) { b[EthernetLen] = 0x65; fixIPv4(b) }), Summary{IPOff: 14}, ErrBadIPv4},
		{"fragment", mod("data", func(b []byte) { b[EthernetLen+6] |= 0x20; fixIPv4(b) }), Summary{IPOff: 14}, ErrFragment},
		{"rate checksum", mod("rocc rate", func(b []byte) { b[EthernetLen+IPv4MinLen+9] ^= 1 }), Summary{IPOff: 14}, ErrICMPChecksum},
		{"int hops", mod("data+INT", func(b []byte) { b[udpOff+UDPLen+BTHLen] = 6 << 4 }), Summary{IPOff: 14, L4Off: udpOff}, ErrBadINT},
		{"udp length", mod("cnp", func(b []byte) { b[udpOff+5]++ }), Summary{IPOff: 14}, ErrBadUDP},
		{"other udp", mod("data", func(b []byte) { binary.BigEndian.PutUint16(b[udpOff+2:], 5201) }), Summary{IPOff: 14, L4Off: udpOff}, nil},
		{"arp", mod("data", func(b []byte) { binary.BigEndian.PutUint16(b[12:], 0x0806) }), Summary{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Summary
			err := Classify(tc.frame, &s)
			if err != tc.err {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if tc.err == nil && s != tc.want || tc.err != nil && (s.Kind != KindOther || s.IPOff != tc.want.IPOff) {
				t.Fatalf("summary %+v, want %+v", s, tc.want)
			}
			checkSame(t, tc.name, tc.frame)
		})
	}
}

// TestChecksumOK compares the word-wide check with the 16-bit reference on
// random buffers, correct and corrupted, of every length up to 64.
func TestChecksumOK(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for n := 0; n <= 64; n++ {
		for k := 0; k < 200; k++ {
			b := make([]byte, n)
			switch k % 4 {
			case 0: // random
				rng.Read(b)
			case 1: // all ones: the sum is 0xffff
				for i := range b {
					b[i] = 0xff
				}
			case 2: // zeros
			case 3: // random with a correct checksum in the first word
				rng.Read(b)
				if n >= 2 {
					b[0], b[1] = 0, 0
					binary.BigEndian.PutUint16(b, ^fold(sum16(b, 0)))
				}
			}
			want := fold(sum16(b, 0)) == 0xffff
			if got := checksumOK(b); got != want {
				t.Fatalf("len %d case %d: checksumOK %v, reference %v (% x)", n, k%4, got, want, b)
			}
			if k%4 == 3 && n >= 2 && !want {
				t.Fatalf("len %d: a correct checksum is rejected", n)
			}
		}
	}
}

func TestClassifyAllocs(t *testing.T) {
	var s Summary
	for _, fr := range builtFrames(t) {
		if a := testing.AllocsPerRun(100, func() { _ = Classify(fr.frame, &s); _, _ = ClassifyData(fr.frame) }); a != 0 {
			t.Errorf("%s: %v allocations", fr.name, a)
		}
	}
}

// FuzzClassifyMatchesDecode checks that Classify never panics and always
// agrees with Decode, and ClassifyData with Classify.
func FuzzClassifyMatchesDecode(f *testing.F) {
	for _, fr := range builtFrames(f) {
		f.Add(fr.frame)
	}
	f.Add(mustHex(f, cx4CNP))
	f.Add(mustHex(f, scapyUC))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkSame(t, "fuzz", b)
		fixIPv4(b)
		checkSame(t, "fuzz+fixed", b)
	})
}

// BenchmarkClassify compares Classify with Decode on the frames a switch
// forwards.
func BenchmarkClassify(b *testing.B) {
	for _, fr := range builtFrames(b) {
		switch fr.name {
		case "data", "data+INT", "rocc rate", "ack":
		default:
			continue
		}
		b.Run("Classify/"+fr.name, func(b *testing.B) {
			var s Summary
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = Classify(fr.frame, &s)
			}
		})
		b.Run("Decode/"+fr.name, func(b *testing.B) {
			var f Frame
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = Decode(fr.frame, &f)
			}
		})
	}
}
