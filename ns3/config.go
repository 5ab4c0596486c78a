package ns3

// A reader for the config.txt of the ns-3 RDMA simulators (HPCC's
// simulation/mix/config.txt and ns3-datacenter's examples/*/config*.txt):
// one setting a line, a key and its values,
//
//	CC_MODE 1
//	RATE_AI 50Mb/s
//	KMAX_MAP 3 25000000000 400 50000000000 800 100000000000 1600
//	LINK_DOWN 0 0 0
//
// The simulators read it word by word with operator>> and take each key's
// values by the key's type; a key they do not know is skipped and a key set
// twice keeps its last value. ReadConfig checks every known key's values
// against those types (unsigned integers, doubles, ns-3 DataRate strings,
// paths, the three-number LINK_DOWN, the per-link-speed maps "n rate value
// ..."), keeps unknown keys for the caller to name, and names the file and
// line in every error. What each key means, and what ccbed makes of it, is
// the caller's (testbed's ns3_config).

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/ccbed/ccbed/config"
)

// ns3ConfigKind is the type of a config.txt key's values.
type ns3ConfigKind uint8

const (
	ns3Uint      ns3ConfigKind = iota + 1 // one unsigned integer (uint32 in ns-3)
	ns3Uint64                             // one unsigned 64-bit integer
	ns3Double                             // one double
	ns3DataRate                           // one ns-3 DataRate string ("50Mb/s")
	ns3Word                               // one word (a path, a name)
	ns3LinkDown                           // three unsigned integers: time, node, node
	ns3UintMap                            // n, then n pairs "rate_bps uint"
	ns3DoubleMap                          // n, then n pairs "rate_bps double"
)

// ns3ConfigKeys are the keys the simulators' readers know, with their
// types: HPCC's third.cc and ns3-datacenter's powertcp-evaluation-*.cc.
var ns3ConfigKeys = map[string]ns3ConfigKind{
	"ENABLE_QCN": ns3Uint, "USE_DYNAMIC_PFC_THRESHOLD": ns3Uint, "CLAMP_TARGET_RATE": ns3Uint,
	"PAUSE_TIME": ns3Double, "DATA_RATE": ns3Word, "LINK_DELAY": ns3Word,
	"PACKET_PAYLOAD_SIZE": ns3Uint, "L2_CHUNK_SIZE": ns3Uint, "L2_ACK_INTERVAL": ns3Uint,
	"L2_BACK_TO_ZERO": ns3Uint, "TOPOLOGY_FILE": ns3Word, "FLOW_FILE": ns3Word, "TRACE_FILE": ns3Word,
	"TRACE_OUTPUT_FILE": ns3Word, "FCT_OUTPUT_FILE": ns3Word, "PFC_OUTPUT_FILE": ns3Word,
	"QLEN_MON_FILE": ns3Word, "SIMULATOR_STOP_TIME": ns3Double, "ALPHA_RESUME_INTERVAL": ns3Double,
	"RP_TIMER": ns3Double, "EWMA_GAIN": ns3Double, "FAST_RECOVERY_TIMES": ns3Uint,
	"RATE_AI": ns3DataRate, "RATE_HAI": ns3DataRate, "MIN_RATE": ns3DataRate, "DCTCP_RATE_AI": ns3DataRate,
	"ERROR_RATE_PER_LINK": ns3Double, "CC_MODE": ns3Uint, "RATE_DECREASE_INTERVAL": ns3Double,
	"HAS_WIN": ns3Uint, "GLOBAL_T": ns3Uint, "MI_THRESH": ns3Uint, "VAR_WIN": ns3Uint, "FAST_REACT": ns3Uint,
	"U_TARGET": ns3Double, "INT_MULTI": ns3Uint, "RATE_BOUND": ns3Uint, "ACK_HIGH_PRIO": ns3Uint,
	"LINK_DOWN": ns3LinkDown, "ENABLE_TRACE": ns3Uint, "KMAX_MAP": ns3UintMap, "KMIN_MAP": ns3UintMap,
	"PMAX_MAP": ns3DoubleMap, "BUFFER_SIZE": ns3Uint, "QLEN_MON_START": ns3Uint64, "QLEN_MON_END": ns3Uint64,
	"MULTI_RATE": ns3Uint, "SAMPLE_FEEDBACK": ns3Uint, "PINT_LOG_BASE": ns3Double, "PINT_PROB": ns3Double,
}

// maxNS3MapEntries bounds a per-link-speed map: more link speeds than any
// topology has.
const maxNS3MapEntries = 64

// Config is a config.txt as read: its settings in file order, the last of
// a key set twice winning (as in ns-3).
type Config struct {
	// Name names the file in errors and in Where.
	Name string
	// Settings are the file's settings in file order, each key once (at the
	// place and with the values of its last line), unknown keys included.
	Settings []Setting
	index    map[string]int
}

// Setting is one setting of a config.txt: its key, its values as written,
// the line it is on, and whether the simulators' readers know the key.
type Setting struct {
	Key    string
	Values []string
	Line   int
	Known  bool
}

// ReadConfigFile is ReadConfig on the file at path, a regular file of
// at most config.MaxNS3Bytes (config.Open); name names it in errors.
func ReadConfigFile(path, name string) (*Config, error) {
	r, err := config.Open(path, config.MaxNS3Bytes)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return ReadConfig(r, name)
}

// ReadConfig reads a config.txt from r; name names the file in errors
// ("config.txt:12: RATE_AI: ..."). A known key must have the number and the
// types of values its simulator reads; an unknown key is kept (Known false)
// with whatever follows it.
func ReadConfig(r io.Reader, name string) (*Config, error) {
	c := &Config{Name: name, index: map[string]int{}}
	l := newNS3Lines(r, name)
	var all []Setting
	last := map[string]int{} // key -> index in all of its last line
	for {
		f, err := l.next("")
		if f == nil {
			if l.sc.Err() != nil {
				return nil, err
			}
			break
		}
		s := Setting{Key: f[0], Values: f[1:], Line: l.line}
		kind, known := ns3ConfigKeys[s.Key]
		s.Known = known
		if known {
			if err := checkNS3Values(kind, s.Values); err != nil {
				return nil, l.errorf("%s: %v", s.Key, err)
			}
		}
		last[s.Key] = len(all)
		all = append(all, s)
	}
	// A key set twice keeps its last line only.
	for i, s := range all {
		if last[s.Key] == i {
			c.index[s.Key] = len(c.Settings)
			c.Settings = append(c.Settings, s)
		}
	}
	return c, nil
}

// checkNS3Values checks a known key's values against its type.
func checkNS3Values(kind ns3ConfigKind, v []string) error {
	want := func(n int, what string) error {
		if len(v) != n {
			return fmt.Errorf("%d values: want %s", len(v), what)
		}
		return nil
	}
	switch kind {
	case ns3Uint, ns3Uint64:
		if err := want(1, "1, an unsigned integer"); err != nil {
			return err
		}
		most := math.MaxUint32
		if kind == ns3Uint64 {
			most = math.MaxInt64
		}
		_, err := ns3Count(v[0], most)
		return err
	case ns3Double:
		if err := want(1, "1, a number"); err != nil {
			return err
		}
		_, err := ns3Float(v[0])
		return err
	case ns3DataRate:
		if err := want(1, `1, a rate such as "50Mb/s"`); err != nil {
			return err
		}
		_, err := ns3Rate(v[0])
		return err
	case ns3Word:
		return want(1, "1")
	case ns3LinkDown:
		if err := want(3, `3, "time_us node node"`); err != nil {
			return err
		}
		for _, s := range v {
			if _, err := ns3Count(s, math.MaxInt64); err != nil {
				return err
			}
		}
		return nil
	}
	// A per-link-speed map: n, then n pairs.
	if len(v) == 0 {
		return fmt.Errorf(`no values: want "n rate_bps value ..."`)
	}
	n, err := ns3Count(v[0], maxNS3MapEntries)
	if err != nil {
		return fmt.Errorf("entries: %v", err)
	}
	if len(v) != 1+2*n {
		return fmt.Errorf("%d values after the count %d: want %d, a link rate (bits/s) and a value each", len(v)-1, n, 2*n)
	}
	for i := 0; i < n; i++ {
		if _, err := ns3Count(v[1+2*i], int(maxNS3Bps)); err != nil {
			return fmt.Errorf("entry %d: rate: %v", i+1, err)
		}
		if kind == ns3UintMap {
			_, err = ns3Count(v[2+2*i], math.MaxUint32)
		} else {
			_, err = ns3Float(v[2+2*i])
		}
		if err != nil {
			return fmt.Errorf("entry %d: value: %v", i+1, err)
		}
	}
	return nil
}

// Setting returns the setting of key and whether the file sets it.
func (c *Config) Setting(key string) (Setting, bool) {
	if i, ok := c.index[key]; ok {
		return c.Settings[i], true
	}
	return Setting{}, false
}

// Where is "name:line" of key's setting, or the file's name when it has none.
func (c *Config) Where(key string) string {
	if s, ok := c.Setting(key); ok {
		return fmt.Sprintf("%s:%d", c.Name, s.Line)
	}
	return c.Name
}

// one returns the single value of a known key, and whether the file sets it.
func (c *Config) one(key string) (string, bool) {
	s, ok := c.Setting(key)
	if !ok || !s.Known || len(s.Values) != 1 {
		return "", false
	}
	return s.Values[0], true
}

// Uint returns the value of an integer key (a flag: non-zero is true), and
// whether the file sets it.
func (c *Config) Uint(key string) (uint64, bool) {
	w, ok := c.one(key)
	v, err := strconv.ParseUint(w, 10, 64)
	return v, ok && err == nil
}

// Float returns the value of a double key, and whether the file sets it.
func (c *Config) Float(key string) (float64, bool) {
	w, ok := c.one(key)
	v, err := ns3Float(w)
	return v, ok && err == nil
}

// RateBps returns the value of a DataRate key in bits/s, and whether the
// file sets it.
func (c *Config) RateBps(key string) (float64, bool) {
	w, ok := c.one(key)
	v, err := ns3Rate(w)
	return v, ok && err == nil
}

// Word returns the value of a one-word key (a path), and whether the file
// sets it.
func (c *Config) Word(key string) (string, bool) { return c.one(key) }

// RateValue is one entry of a per-link-speed map (KMAX_MAP, KMIN_MAP,
// PMAX_MAP): the link rate in bits/s and its value.
type RateValue struct {
	Bps   float64
	Value float64
}

// RateMap returns a per-link-speed map's entries in increasing rate order
// (a rate given twice keeps its last value, as in ns-3), and whether the file
// sets it.
func (c *Config) RateMap(key string) ([]RateValue, bool) {
	s, ok := c.Setting(key)
	if !ok || !s.Known || len(s.Values) == 0 {
		return nil, false
	}
	byRate := map[float64]float64{}
	for i := 1; i+1 < len(s.Values); i += 2 {
		r, err1 := strconv.ParseUint(s.Values[i], 10, 64)
		v, err2 := ns3Float(s.Values[i+1])
		if err1 != nil || err2 != nil {
			return nil, false
		}
		byRate[float64(r)] = v
	}
	out := make([]RateValue, 0, len(byRate))
	for r, v := range byRate {
		out = append(out, RateValue{Bps: r, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Bps < out[j].Bps })
	return out, true
}

// LinkDown returns LINK_DOWN's time (us) and two node ids, and whether the
// file sets it.
func (c *Config) LinkDown() (timeUs, a, b uint64, ok bool) {
	s, ok := c.Setting("LINK_DOWN")
	if !ok || !s.Known || len(s.Values) != 3 {
		return 0, 0, 0, false
	}
	var v [3]uint64
	for i, w := range s.Values {
		x, err := strconv.ParseUint(w, 10, 64)
		if err != nil {
			return 0, 0, 0, false
		}
		v[i] = x
	}
	return v[0], v[1], v[2], true
}
