package pktgen

import (
	"testing"

	"github.com/ccbed/ccbed/wire"
)

// TestFieldModes decodes the frames a stream builds and checks each varied
// field's sequence over the packets against its mode's definition: inc
// (base + i), range (start + (i mod n) x step, flows defaulting to n) and
// random (the masked bits drawn, the others the base value; the same draws
// for the same seed); on the Go path and in the flows' table the C builder
// copies. The IPv4 checksum must verify on every frame.
func TestFieldModes(t *testing.T) {
	rangeOf := func(a ...any) *FieldMode { return &FieldMode{Mode: "range", Range: a} }
	cases := []struct {
		name    string
		p       PortConfig
		flows   int
		field   string   // the field checked
		want    []uint64 // its value in packets 0, 1, ... (nil: random, checked below)
		mask    uint64   // random: the bits drawn
		distinc int      // random: at least this many distinct values in 2 x flows packets
	}{
		{"inc src_port", PortConfig{Flows: 3}, 3, "src_port", []uint64{1024, 1025, 1026, 1024, 1025}, 0, 0},
		{"inc wraps at 16 bits", PortConfig{Flows: 3, SrcPort: 65535}, 3, "src_port", []uint64{65535, 0, 1, 65535}, 0, 0},
		{"range dst_port", PortConfig{Field: FieldModes{DstPort: rangeOf(int64(100), int64(110), int64(4))}}, 3, "dst_port",
			[]uint64{100, 104, 108, 100, 104, 108, 100}, 0, 0},
		{"range shorter than flows", PortConfig{Flows: 5, Field: FieldModes{SrcPort: rangeOf(int64(7), int64(8), int64(1))}}, 5, "src_port",
			[]uint64{7, 8, 7, 8, 7, 7, 8}, 0, 0},
		{"range of addresses", PortConfig{Field: FieldModes{DstIP: rangeOf("10.0.0.250", "10.0.1.4", int64(3))}}, 4, "dst_ip",
			[]uint64{0x0a0000fa, 0x0a0000fd, 0x0a000100, 0x0a000103, 0x0a0000fa}, 0, 0},
		{"range beside inc", PortConfig{Vary: []string{"src_ip"}, Field: FieldModes{SrcPort: rangeOf(int64(1), int64(2), int64(1))}}, 2, "src_ip",
			[]uint64{0x0a000001, 0x0a000002, 0x0a000001}, 0, 0},
		{"range dest_qp", PortConfig{Proto: "roce", Field: FieldModes{DestQP: rangeOf(int64(0xfffffe), int64(0xffffff), int64(1))}}, 2, "dest_qp",
			[]uint64{0xfffffe, 0xffffff, 0xfffffe}, 0, 0},
		{"random src_port low byte", PortConfig{Flows: 256, Field: FieldModes{SrcPort: &FieldMode{Mode: "random", Mask: int64(0xff)}}}, 256, "src_port",
			nil, 0xff, 120},
		{"random dst_ip mask", PortConfig{Flows: 64, Field: FieldModes{DstIP: &FieldMode{Mode: "random", Mask: "0.0.255.255", Seed: 9}}}, 64, "dst_ip",
			nil, 0xffff, 60},
		{"random whole field", PortConfig{Flows: 32, Field: FieldModes{SrcIP: &FieldMode{Mode: "random"}}}, 32, "src_ip",
			nil, 0xffffffff, 32},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if n := c.p.NumFlows(); n != c.flows {
				t.Fatalf("%d flows, want %d", n, c.flows)
			}
			g := newGen(t, c.p, 0)
			ep, _ := c.p.endpoints()
			base := map[string]uint64{"src_port": uint64(ep.SrcPort), "dst_port": uint64(ep.DstPort),
				"src_ip": uint64(ep.SrcIP), "dst_ip": uint64(ep.DstIP), "dest_qp": 1}
			n := max(len(c.want), 2*c.flows)
			got := make([]uint64, n)
			buf := make([]byte, 2048)
			var f wire.Frame
			for i := range got {
				g.Grant(int64(i), 1)
				frame := buf[:g.Build(buf, int64(i))]
				if err := wire.Decode(frame, &f); err != nil {
					t.Fatalf("packet %d: %v", i, err)
				}
				if s := sum16(frame[ipOff:ipOff+wire.IPv4MinLen], 0); fold(s) != 0xffff {
					t.Fatalf("packet %d: IPv4 checksum does not verify", i)
				}
				switch c.field {
				case "src_port":
					got[i] = uint64(f.UDP.SrcPort())
				case "dst_port":
					got[i] = uint64(f.UDP.DstPort())
				case "src_ip":
					got[i] = uint64(f.IP.Src())
				case "dst_ip":
					got[i] = uint64(f.IP.Dst())
				case "dest_qp":
					got[i] = uint64(f.BTH.DestQP())
				}
			}
			if c.want != nil {
				for i, w := range c.want {
					if got[i] != w {
						t.Fatalf("%s: packets %v, want %v", c.field, got[:len(c.want)], c.want)
					}
				}
				return
			}
			seen := map[uint64]bool{}
			for i, v := range got {
				if v&^c.mask != base[c.field]&^c.mask {
					t.Fatalf("packet %d: %s %#x changes bits outside the mask %#x (base %#x)", i, c.field, v, c.mask, base[c.field])
				}
				if i >= c.flows && v != got[i-c.flows] {
					t.Fatalf("packet %d: %#x, but flow %d had %#x", i, v, i%c.flows, got[i-c.flows])
				}
				seen[v] = true
			}
			if len(seen) < c.distinc {
				t.Fatalf("%d distinct values in %d flows, want at least %d", len(seen), c.flows, c.distinc)
			}
			// The same seed draws the same values; another seed others.
			again := newGen(t, c.p, 0)
			other := c.p
			fm := *c.p.Field.mode(fieldIndex(c.field))
			fm.Seed += 1000
			switch c.field {
			case "src_port":
				other.Field.SrcPort = &fm
			case "src_ip":
				other.Field.SrcIP = &fm
			case "dst_ip":
				other.Field.DstIP = &fm
			}
			o := newGen(t, other, 0)
			same := 0
			for i := range g.flows {
				if again.flows[i] != g.flows[i] {
					t.Fatalf("flow %d: a second generator with the same seed differs", i)
				}
				if o.flows[i] == g.flows[i] {
					same++
				}
			}
			if same == len(g.flows) {
				t.Fatal("another seed draws the same values")
			}
		})
	}
}

// TestFieldModeConfig: field tables are checked with the key and line.
func TestFieldModeConfig(t *testing.T) {
	// field is a port with a [ports.field.NAME] table of keys.
	field := func(name, keys string) string { return "[[ports]]\n[ports.field." + name + "]\n" + keys }
	checkConfigs(t, []configCase{
		{"ok range", field("src_port", "mode = \"range\"\nrange = [1, 9, 2]\n"), ""},
		{"ok random ip", field("dst_ip", "mode = \"random\"\nmask = \"0.0.0.255\"\nseed = 3\n"), ""},
		{"ok ip range", field("src_ip", "mode = \"range\"\nrange = [\"10.0.0.1\", \"10.0.0.9\", 1]\n"), ""},
		{"bad mode", field("src_port", "mode = \"walk\"\n"), ":3: ports[0].field.src_port.mode"},
		{"range without mode", field("src_port", "range = [1, 2, 1]\n"), ":3: ports[0].field.src_port.range: give mode"},
		{"mask without mode", field("src_port", "mask = 3\n"), ":3: ports[0].field.src_port.mask"},
		{"short range", field("src_port", "mode = \"range\"\nrange = [1, 2]\n"), ":4: ports[0].field.src_port.range: 2 values"},
		{"stop below start", field("dst_port", "mode = \"range\"\nrange = [9, 2, 1]\n"), ":4: ports[0].field.dst_port.range: stop 2 is below start 9"},
		{"step 0", field("dst_port", "mode = \"range\"\nrange = [1, 2, 0]\n"), ":4: ports[0].field.dst_port.range: step 0"},
		{"port too big", field("src_port", "mode = \"range\"\nrange = [1, 70000, 1]\n"), "stop: 70000 does not fit"},
		{"ip in a port", field("src_port", "mode = \"range\"\nrange = [\"10.0.0.1\", 2, 1]\n"), "start: \"10.0.0.1\" is not a number"},
		{"bad ip", field("dst_ip", "mode = \"random\"\nmask = \"300.0.0.1\"\n"), ":4: ports[0].field.dst_ip.mask"},
		{"zero mask", field("dst_ip", "mode = \"random\"\nmask = 0\n"), "0 draws no bit"},
		{"qp on udp", field("dest_qp", "mode = \"random\"\n"), "dest_qp needs proto"},
		{"float", field("src_port", "mode = \"range\"\nrange = [1.5, 2, 1]\n"), "want a number"},
		{"unknown field", field("ttl", "mode = \"inc\"\n"), "unknown key"},
	})
}

// TestFieldModesAllocs: building frames of random and range flows
// allocates nothing (the values are in the flows' table).
func TestFieldModesAllocs(t *testing.T) {
	g := newGen(t, PortConfig{Flows: 1000, Mix: "imix", Field: FieldModes{
		SrcPort: &FieldMode{Mode: "random", Mask: int64(0xfff)},
		DstIP:   &FieldMode{Mode: "range", Range: []any{"10.1.0.0", "10.1.255.255", int64(7)}}}}, 0)
	if a := burstAllocs(t, g, 1000); a != 0 {
		t.Fatalf("%.1f allocs per burst, want 0", a)
	}
}
