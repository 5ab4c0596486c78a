package pktgen

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/ccbed/ccbed/wire"
)

// FieldModes say, per varied field, how flow i's value is made
// ([ports.field.NAME] tables). A field with a table is varied whether or
// not vary names it; a field vary names without a table is "inc".
type FieldModes struct {
	SrcPort *FieldMode `toml:"src_port"`
	DstPort *FieldMode `toml:"dst_port"`
	SrcIP   *FieldMode `toml:"src_ip"`
	DstIP   *FieldMode `toml:"dst_ip"`
	DestQP  *FieldMode `toml:"dest_qp"`
}

// FieldMode is how one field varies over the flows (the flows take turns,
// one packet each, so flow i's value is also packet i's, repeating every
// flows packets). Values are computed once, at start, into the flows' table:
// the per-packet work is the same patch as for "inc", and allocates nothing.
type FieldMode struct {
	// Mode is "inc" (default: flow i adds i to the base value, wrapping at
	// the field's width), "range" (Range) or "random" (Mask).
	Mode string `toml:"mode"`
	// Range is [start, stop, step] for mode "range": flow i gets start +
	// (i mod n) x step, the n = (stop - start) / step + 1 values from start
	// up to stop. Numbers, or dotted IPv4 addresses for src_ip and dst_ip
	// (start and stop; the step is a number). When flows is not given it
	// defaults to the longest range's n (at most MaxFlows).
	Range []any `toml:"range"`
	// Mask is the bits mode "random" draws for each flow (default: every
	// bit of the field); the others keep the base value. A number, or a
	// dotted IPv4 mask for src_ip and dst_ip. The draws are seeded (Seed,
	// and the field's name), so a run repeats; a stream of N flows has N
	// random values, repeating every N packets (TRex's cache_size):
	// raise flows for more.
	Mask any `toml:"mask"`
	// Seed seeds mode "random" (default 1).
	Seed uint64 `toml:"seed"`
}

// fieldSpec is one field that flows may vary: its name, width in bits and
// the protocol it needs ("" any).
type fieldSpec struct {
	name  string
	bits  uint
	ip    bool
	proto string // "roce", "udp" or "" (either)
}

var fieldSpecs = [...]fieldSpec{
	{"src_port", 16, false, ""}, {"dst_port", 16, false, "udp"},
	{"src_ip", 32, true, ""}, {"dst_ip", 32, true, ""}, {"dest_qp", 24, false, "roce"},
}

// mode returns the table of field k of fieldSpecs (nil: none).
func (m *FieldModes) mode(k int) *FieldMode {
	return [...]*FieldMode{m.SrcPort, m.DstPort, m.SrcIP, m.DstIP, m.DestQP}[k]
}

// fieldValues is a validated FieldMode: what flow i's value is.
type fieldValues struct {
	mode              string
	start, step, n    uint64 // range: n values from start by step
	mask, seed, width uint64 // random; width: the field's all-ones
}

// at is flow i's value of a field whose base value is base; rnd is the
// field's random draw for flow i (mode random only).
func (v *fieldValues) at(base uint64, i int, rnd uint64) uint64 {
	switch v.mode {
	case "range":
		return v.start + uint64(i)%v.n*v.step
	case "random":
		return base&^v.mask | rnd&v.mask
	}
	return (base + uint64(i)) & v.width
}

// parseFieldNumber reads a range bound, step or mask: an integer, or for an
// IP field a dotted IPv4 address.
func parseFieldNumber(x any, ip bool, max uint64) (uint64, error) {
	var v uint64
	switch t := x.(type) {
	case int64:
		if t < 0 {
			return 0, fmt.Errorf("%d is negative", t)
		}
		v = uint64(t)
	case string:
		if ip && strings.Count(t, ".") == 3 {
			a, err := wire.ParseIPv4(t)
			if err != nil {
				return 0, err
			}
			return uint64(a), nil
		}
		n, err := strconv.ParseUint(t, 0, 64)
		if err != nil {
			what := "a number"
			if ip {
				what = "a number or a dotted IPv4 address"
			}
			return 0, fmt.Errorf("%q is not %s", t, what)
		}
		v = n
	default:
		return 0, fmt.Errorf("%v (%T): want a number", x, x)
	}
	if v > max {
		return 0, fmt.Errorf("%d does not fit the field (at most %d)", v, max)
	}
	return v, nil
}

// values validates field k's table f; errors are "key: message" with the
// key relative to the port.
func (f *FieldMode) values(k int) (fieldValues, error) {
	s := &fieldSpecs[k]
	width := uint64(1)<<s.bits - 1
	key := "field." + s.name
	v := fieldValues{mode: f.Mode, width: width}
	if v.mode == "" {
		v.mode = "inc"
	}
	if len(f.Range) > 0 && v.mode != "range" {
		return v, fmt.Errorf("%s.range: give mode = \"range\" with it (mode is %q)", key, v.mode)
	}
	if f.Mask != nil && v.mode != "random" {
		return v, fmt.Errorf("%s.mask: give mode = \"random\" with it (mode is %q)", key, v.mode)
	}
	switch v.mode {
	case "inc":
	case "range":
		if len(f.Range) != 3 {
			return v, fmt.Errorf("%s.range: %d values, want [start, stop, step]", key, len(f.Range))
		}
		var b [3]uint64
		for j, x := range f.Range {
			n, err := parseFieldNumber(x, s.ip && j < 2, width)
			if err != nil {
				return v, fmt.Errorf("%s.range: %s: %v", key, [3]string{"start", "stop", "step"}[j], err)
			}
			b[j] = n
		}
		if b[1] < b[0] {
			return v, fmt.Errorf("%s.range: stop %d is below start %d", key, b[1], b[0])
		}
		if b[2] == 0 {
			return v, fmt.Errorf("%s.range: step 0: want at least 1", key)
		}
		v.start, v.step, v.n = b[0], b[2], (b[1]-b[0])/b[2]+1
	case "random":
		v.mask, v.seed = width, f.Seed
		if v.seed == 0 {
			v.seed = 1
		}
		if f.Mask != nil {
			m, err := parseFieldNumber(f.Mask, s.ip, width)
			if err != nil {
				return v, fmt.Errorf("%s.mask: %v", key, err)
			}
			if m == 0 {
				return v, fmt.Errorf("%s.mask: 0 draws no bit", key)
			}
			v.mask = m
		}
	default:
		return v, fmt.Errorf("%s.mode: %q, want inc, range or random", key, f.Mode)
	}
	return v, nil
}

// fieldPlan is how each field of fieldSpecs varies over the flows: nil
// for a field that does not.
type fieldPlan [len(fieldSpecs)]*fieldValues

// plan validates vary and the field tables; errors are "key: message".
func (p *PortConfig) plan() (fieldPlan, error) {
	var pl fieldPlan
	roce := p.Proto == "roce"
	for _, name := range p.Vary {
		k := fieldIndex(name)
		if k < 0 {
			return pl, fmt.Errorf("vary: unknown field %q", name)
		}
		pl[k] = &fieldValues{mode: "inc", width: uint64(1)<<fieldSpecs[k].bits - 1}
	}
	for k := range fieldSpecs {
		f := p.Field.mode(k)
		if f == nil {
			continue
		}
		v, err := f.values(k)
		if err != nil {
			return pl, err
		}
		pl[k] = &v
	}
	if pl == (fieldPlan{}) {
		pl[0] = &fieldValues{mode: "inc", width: 0xffff} // src_port by default
	}
	for k, v := range pl {
		s := &fieldSpecs[k]
		switch {
		case v == nil:
		case s.proto == "udp" && roce:
			return pl, fmt.Errorf("vary: %s is %d for roce", s.name, 4791)
		case s.proto == "roce" && !roce:
			return pl, fmt.Errorf("vary: %s needs proto = \"roce\"", s.name)
		}
	}
	return pl, nil
}

func fieldIndex(name string) int {
	for k := range fieldSpecs {
		if fieldSpecs[k].name == name {
			return k
		}
	}
	return -1
}

// longestRange is the number of values of the port's longest range (0:
// none), for flows' default; at most MaxFlows.
func (p *PortConfig) longestRange() int {
	n := uint64(0)
	for k := range fieldSpecs {
		if f := p.Field.mode(k); f != nil {
			if v, err := f.values(k); err == nil && v.mode == "range" {
				n = max(n, v.n)
			}
		}
	}
	return int(min(n, MaxFlows))
}

// fill computes field k of every flow: base is the field's base value,
// set writes flow i's value.
func (v *fieldValues) fill(k int, base uint64, n int, set func(i int, x uint64)) {
	var rng *rand.Rand
	if v.mode == "random" {
		h := fnv.New64a()
		h.Write([]byte(fieldSpecs[k].name))
		rng = rand.New(rand.NewPCG(v.seed, h.Sum64()))
	}
	for i := range n {
		var r uint64
		if rng != nil {
			r = rng.Uint64()
		}
		set(i, v.at(base, i, r))
	}
}
