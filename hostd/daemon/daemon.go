// Package daemon is hostd's side that meets the machine, for cmd/hostd:
// the wall clock (a start instant, waiting for it), the clock offset that
// chrony or linuxptp reports (running chronyc and pmc), the results
// directory and the files written into it (rate.csv, fct.csv,
// counters.json, run.json). Package hostd, the engine, takes values and
// never files (docs/architecture.md); this package turns one into the
// other.
package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ccbed/ccbed/hostd"
)

// MaxStartLead bounds how far in the future a start instant may lie: a
// multi-node run computes one a few seconds ahead; an instant hours away is
// a mistake (a wrong unit, a wrong date), not a plan.
const MaxStartLead = 10 * time.Minute

// ParseStartAt reads a start instant given as an RFC 3339 time
// ("2026-11-23T10:00:00.5Z") or as a Unix time in nanoseconds.
func ParseStartAt(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n <= 0 {
			return time.Time{}, fmt.Errorf("start instant %q: want a positive Unix time in ns", s)
		}
		return time.Unix(0, n), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("start instant %q: want RFC 3339 (2026-11-23T10:00:00.5Z) or Unix time in ns", s)
	}
	return t, nil
}

// CheckStartAt reports why at cannot be a start instant at wall-clock time
// now: it has passed, or it lies more than MaxStartLead ahead.
func CheckStartAt(at, now time.Time) error {
	if d := at.Sub(now); d <= 0 {
		return fmt.Errorf("start instant %s is %v in the past: give every host an instant a few seconds ahead (after DPDK and the port are up)",
			at.UTC().Format(time.RFC3339Nano), (-d).Round(time.Microsecond))
	} else if d > MaxStartLead {
		return fmt.Errorf("start instant %s is %v ahead, more than %v: wrong unit or date?",
			at.UTC().Format(time.RFC3339Nano), d.Round(time.Second), MaxStartLead)
	}
	return nil
}

// WaitUntil blocks until the wall clock reads at or ctx ends (then it returns
// ctx's error): it sleeps to within 500 us of at, then polls the clock, so
// that it returns within a few microseconds of at on a CPU of its own.
func WaitUntil(ctx context.Context, at time.Time) error {
	if d := time.Until(at) - 500*time.Microsecond; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	for time.Now().Before(at) {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// ParseChronyTracking reads the "System time" line of `chronyc tracking`
// ("System time     : 0.000001234 seconds fast of NTP time") as an offset in
// ns, positive when the clock is fast. It fails when the line is missing or
// chrony says it is not synchronised ("Leap status : Not synchronised").
func ParseChronyTracking(out string) (int64, error) {
	var off *int64
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "Leap status":
			if strings.Contains(strings.ToLower(v), "not synchronised") {
				return 0, errors.New("chrony is not synchronised")
			}
		case "System time":
			f := strings.Fields(v)
			if len(f) < 3 {
				return 0, fmt.Errorf("chronyc tracking: System time %q", strings.TrimSpace(v))
			}
			sec, err := strconv.ParseFloat(f[0], 64)
			if err != nil || math.IsNaN(sec) || math.IsInf(sec, 0) {
				return 0, fmt.Errorf("chronyc tracking: System time %q", strings.TrimSpace(v))
			}
			ns := int64(math.Round(sec * 1e9))
			switch f[2] {
			case "fast":
			case "slow":
				ns = -ns
			default:
				return 0, fmt.Errorf("chronyc tracking: System time %q: want fast or slow", strings.TrimSpace(v))
			}
			off = &ns
		}
	}
	if off == nil {
		return 0, errors.New("chronyc tracking: no System time line")
	}
	return *off, nil
}

// ParsePMCTimeStatus reads master_offset (ns) from `pmc -u -b 0 'GET
// TIME_STATUS_NP'` (linuxptp); it fails when there is no grandmaster
// (gmPresent false) or no offset.
func ParsePMCTimeStatus(out string) (int64, error) {
	var off *int64
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "gmPresent":
			if f[1] != "true" {
				return 0, errors.New("ptp4l has no grandmaster")
			}
		case "master_offset":
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("pmc: master_offset %q", f[1])
			}
			off = &n
		}
	}
	if off == nil {
		return 0, errors.New("pmc: no master_offset")
	}
	return *off, nil
}

// ReadClockOffset asks the node's synchronisation daemon for the clock
// offset: chrony (`chronyc -n tracking`) if installed, else linuxptp's pmc.
// The offset is unknown, never 0, when neither answers.
func ReadClockOffset(ctx context.Context) hostd.ClockOffset {
	ask := func(name string, args ...string) (string, error) {
		if _, err := exec.LookPath(name); err != nil {
			return "", err
		}
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%s: %v: %s", name, err, strings.TrimSpace(string(out)))
		}
		return string(out), nil
	}
	var why []string
	if out, err := ask("chronyc", "-n", "tracking"); err == nil {
		if ns, err := ParseChronyTracking(out); err == nil {
			return hostd.ClockOffset{OffsetNs: &ns, Source: "chronyc tracking"}
		} else {
			why = append(why, err.Error())
		}
	} else if !errors.Is(err, exec.ErrNotFound) {
		why = append(why, err.Error())
	}
	if out, err := ask("pmc", "-u", "-b", "0", "GET TIME_STATUS_NP"); err == nil {
		if ns, err := ParsePMCTimeStatus(out); err == nil {
			return hostd.ClockOffset{OffsetNs: &ns, Source: "pmc TIME_STATUS_NP"}
		} else {
			why = append(why, err.Error())
		}
	} else if !errors.Is(err, exec.ErrNotFound) {
		why = append(why, err.Error())
	}
	if len(why) == 0 {
		why = append(why, "neither chronyc nor pmc is installed")
	}
	return hostd.ClockOffset{Source: strings.Join(why, "; ")}
}

// CheckResultsDir makes dir (and its parents) and checks that it takes new
// files, before a run, so that a run never ends with results it cannot
// write. It leaves no file behind.
func CheckResultsDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results_dir: %w", err)
	}
	f, err := os.CreateTemp(dir, ".check*")
	if err != nil {
		return fmt.Errorf("results_dir: %w", err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// WriteRunInfo writes info as dir/run.json (dir is created if needed).
func WriteRunInfo(dir string, info hostd.RunInfo) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, hostd.RunInfoFile), append(b, '\n'), 0o644)
}

// ReadRunInfo reads a run.json written by WriteRunInfo.
func ReadRunInfo(path string) (hostd.RunInfo, error) {
	var info hostd.RunInfo
	b, err := os.ReadFile(path)
	if err != nil {
		return info, err
	}
	r := json.NewDecoder(bytes.NewReader(b))
	r.DisallowUnknownFields()
	if err := r.Decode(&info); err != nil {
		return info, fmt.Errorf("%s: %w", path, err)
	}
	return info, nil
}

// WriteResults writes rate.csv, fct.csv and counters.json of e into dir
// (created if needed), with file names prefixed by prefix (e.g. "h1-"; may be
// empty); times in rate.csv and fct.csv are relative to origin (ns). Call it
// once the loops have stopped.
func WriteResults(dir, prefix string, e *hostd.Engine, port *hostd.PortCounter, origin int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return hostd.WriteResultFiles(func(name string) (io.WriteCloser, error) {
		return os.Create(filepath.Join(dir, prefix+name))
	}, e, port, origin)
}
