package config

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/ccbed/ccbed/config/bounds"
)

// Range checks for numeric fields (the pure ones in config/bounds). Each returns nil or an error that gives
// the value and the allowed range (and, for derived bounds, where the bound
// comes from); a caller puts it at its key with File.Errorf. NaN and the
// infinities are never in range: TOML can spell them (nan, inf), and a NaN
// passes every "v < 0" test, so checks written as "reject if out of range"
// let it through.

// MaxTimeNs is bounds.MaxTimeNs: every time a file gives is at most 2^60 ns.
const MaxTimeNs = bounds.MaxTimeNs

// Float is bounds.Float: nil when v is a finite number in [lo, hi].
func Float(v, lo, hi float64) error { return bounds.Float(v, lo, hi) }

// Positive is bounds.Positive: nil when v is a finite number in (0, hi].
func Positive(v, hi float64) error { return bounds.Positive(v, hi) }

// Int is bounds.Int: nil when lo <= v <= hi.
func Int(v, lo, hi int64) error { return bounds.Int(v, lo, hi) }

// MaxTime is bounds.MaxTime: MaxTimeNs in unit ("s", "ms", "us" or "ns").
func MaxTime(unit string) float64 { return bounds.MaxTime(unit) }

// Time is bounds.Time: nil when v, a time in unit, is in [0, MaxTime(unit)].
func Time(v float64, unit string) error { return bounds.Time(v, unit) }

// PositiveTime is bounds.PositiveTime: Time for a time above 0.
func PositiveTime(v float64, unit string) error { return bounds.PositiveTime(v, unit) }

// Entries returns nil when lo <= n <= MaxEntries(entryBytes): the bound of a
// count a program allocates entryBytes for each of (a table, a ring, a
// list of records). The error says the bound and how it was derived.
func Entries(n, lo int64, entryBytes uintptr) error {
	if hi := MaxEntries(entryBytes); n < lo || n > hi {
		return fmt.Errorf("got %d: want %d..%d (%d B each, at most a quarter of this machine's %.1f GiB of memory)",
			n, lo, hi, entryBytes, float64(MemTotal())/(1<<30))
	}
	return nil
}

// MaxEntries is how many entries of entryBytes fit in a quarter of
// MemTotal: the most a single config field may make a program allocate.
func MaxEntries(entryBytes uintptr) int64 {
	return MemTotal() / 4 / int64(max(entryBytes, 1))
}

// fallbackMemTotal is MemTotal where the machine's memory cannot be read.
const fallbackMemTotal = 16 << 30

// MemTotal is the memory this process may use, bytes: the machine's
// (/proc/meminfo MemTotal), or the cgroup's limit when that is lower
// (/sys/fs/cgroup/memory.max, cgroup v2); 16 GiB where neither can be read.
func MemTotal() int64 { return memTotal() }

var memTotal = sync.OnceValue(func() int64 {
	total := int64(0)
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64); err == nil {
					total = kb << 10
				}
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if lim, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && lim > 0 && (total == 0 || lim < total) {
			total = lim
		}
	}
	if total <= 0 {
		total = fallbackMemTotal
	}
	return total
})

// UsToNs is us, a time a file gives in microseconds (finite and in range:
// Time), in whole nanoseconds, rounded to the nearest. It inverts NsToUs
// exactly for every time below 2^51 ns (26 days): a spec written to a file
// and read back keeps its times.
func UsToNs(us float64) int64 { return int64(math.Round(us * 1e3)) }

// NsToUs is ns in microseconds, the unit files give times in.
func NsToUs(ns int64) float64 { return float64(ns) / 1e3 }
