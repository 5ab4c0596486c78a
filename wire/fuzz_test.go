package wire

import (
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// FuzzDecode checks that Decode never panics, that a nil error comes with views
// that are safe to read, and that a frame it calls ccbed's passes its own checks.
func FuzzDecode(f *testing.F) {
	for _, fr := range builtFrames(f) {
		f.Add(fr.frame)
	}
	f.Add(mustHex(f, cx4CNP))
	f.Add(mustHex(f, scapyUC))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr Frame
		err := Decode(b, &fr)
		if err != nil {
			if fr.Kind != KindOther {
				t.Fatalf("kind %v with error %v", fr.Kind, err)
			}
			return
		}
		readViews(t, &fr)
	})
}

// readViews calls every getter the frame's kind makes valid.
func readViews(t *testing.T, f *Frame) {
	t.Helper()
	switch f.Kind {
	case KindData:
		_ = f.BTH.PSN() + f.BTH.DestQP()
		_ = f.Data.SendTS()
		if f.INT != nil {
			var s ccalgo.INTStack
			f.INT.Stack(&s)
			if int(s.NHops) > ccalgo.MaxINTHops {
				t.Fatal("too many hops")
			}
		}
	case KindAck, KindNak:
		_ = f.AETH.MSN()
		if f.Ext != nil {
			var a ccalgo.AckFields
			f.Ext.Fields(&a)
			if f.INT != nil {
				f.INT.Stack(&a.INT)
			}
		}
	case KindCNP:
		_ = f.BTH.DestQP()
	case KindRoCCRate:
		var fb ccalgo.Feedback
		f.Rate.Feedback(&fb)
		if !f.Rate.VerifyChecksum() {
			t.Fatal("rate message with a bad checksum accepted")
		}
	case KindP4QCN, KindQCN:
		var fb ccalgo.Feedback
		f.Feedback.Feedback(&fb, ccalgo.FeedbackP4QCN, f.BTH.DestQP())
	case KindPFC:
		for p := 0; p < PFCPriorities; p++ {
			_ = f.PFC.PauseQuanta(p)
		}
	}
	if f.IP != nil && !f.IP.VerifyChecksum() {
		t.Fatal("IPv4 header with a bad checksum accepted")
	}
	if f.BTH != nil {
		_ = ComputeICRC(f.IP)
	}
}

// FuzzGopacket checks that the gopacket layers never panic on any input.
func FuzzGopacket(f *testing.F) {
	for _, fr := range builtFrames(f) {
		f.Add(fr.frame)
	}
	f.Add(mustHex(f, cx4CNP))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.DecodeOptions{Lazy: false, NoCopy: true})
		for _, l := range p.Layers() {
			_ = l.LayerContents()
		}
	})
}

// FuzzINT checks the INT view and its conversions on any 42 bytes.
func FuzzINT(f *testing.F) {
	s := INT(make([]byte, INTLen))
	st := testINT()
	s.SetStack(&st, 0x5a5)
	f.Add([]byte(s))
	f.Fuzz(func(t *testing.T, b []byte) {
		v := INT(b)
		if !v.IsValid() {
			return
		}
		var st ccalgo.INTStack
		v.Stack(&st)
		w := INT(make([]byte, INTLen))
		w.SetStack(&st, v.PathID())
		var again ccalgo.INTStack
		w.Stack(&again)
		if again != st {
			t.Fatalf("INT round trip: %+v != %+v", again, st)
		}
	})
}
