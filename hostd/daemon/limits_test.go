package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbed/ccbed/config"
)

// notRegular returns paths that are not regular files: devices that never
// end, a FIFO nobody writes and a directory.
func notRegular(tb testing.TB) map[string]string {
	tb.Helper()
	dir := tb.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		tb.Fatal(err)
	}
	return map[string]string{
		"/dev/zero": "a character device", "/dev/urandom": "a character device",
		fifo: "a FIFO", dir: "a directory",
	}
}

// loadWithin is LoadFile that fails the test when it does not return in 5 s.
func loadWithin(tb testing.TB, path string) error {
	tb.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := LoadFile(path)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		tb.Fatalf("LoadFile(%s) still reading after 5 s", path)
		return nil
	}
}

// TestLoadFileRefusesNonRegularFiles: the hostd file and its CDFs must be
// regular files (before: hostd -c /dev/zero ran out of memory, /dev/urandom
// and a FIFO never returned).
func TestLoadFileRefusesNonRegularFiles(t *testing.T) {
	for path, kind := range notRegular(t) {
		t.Run("config "+path, func(t *testing.T) {
			err := loadWithin(t, path)
			if err == nil || err.Error() != path+": not a regular file ("+kind+")" {
				t.Fatalf("got %v", err)
			}
		})
		t.Run("cdf "+path, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "h.toml")
			text := hostFile + "[[host.workloads]]\ncdf = \"" + path + "\"\ndsts = [\"10.0.0.2\"]\nload = 0.5\n"
			if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			err := loadWithin(t, p)
			want := ":7: host.workloads[0].cdf: " + path + ": not a regular file (" + kind + ")"
			if err == nil || !strings.HasSuffix(err.Error(), want) {
				t.Fatalf("got %v, want ...%s", err, want)
			}
		})
	}
}

const hostFile = "port = \"net_null0\"\nlcores = [1]\n[host]\nname = \"h1\"\nip = \"10.0.0.1\"\n"

// TestLoadFileRanges: every numeric field is range-checked, NaN and the
// infinities included, and the bounds of the tables hostd allocates derive
// from the entry size and the machine's memory (before: each case below
// loaded, and max_fcts, max_samples, max_pending and incast flows turned
// into an out-of-memory crash at run time; duration_s = nan ran forever).
func TestLoadFileRanges(t *testing.T) {
	cdf, err := filepath.Abs("../../configs/workloads/websearch.cdf")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, top, host, more string
		key, want             string
	}{
		{"max_fcts", "", "max_fcts = 1_000_000_000_000", "", "host.max_fcts", "B each, at most a quarter of this machine's"},
		{"max_samples", "", "max_samples = 1_000_000_000_000", "", "host.max_samples", "B each, at most a quarter"},
		{"max_pending", "", "max_pending = 2_000_000_000_000", "", "host.max_pending", "B each, at most a quarter"},
		{"max_pending negative", "", "max_pending = -1", "", "host.max_pending", "got -1: want 1.."},
		{"incast flows", "", "", "[[host.incast]]\ndst = \"10.0.0.2\"\nflows = 1_000_000_000_000\nsize_bytes = 1000\n", "host.incast[0].flows", "want 1.."},
		{"incast flows x repeat", "", "", "[[host.incast]]\ndst = \"10.0.0.2\"\nflows = 1_000_000\nsize_bytes = 1000\nrepeat = 1_000_000\nperiod_us = 1\n", "host.incast[0].flows", "flows x repeat = 1e+12 starts"},
		{"duration nan", "duration_s = nan", "", "", "duration_s", "got NaN: want a time in [0, 1.153e+09] s"},
		{"duration inf", "duration_s = inf", "", "", "duration_s", "got +Inf"},
		{"duration huge", "duration_s = 1e15", "", "", "duration_s", "got 1e+15"},
		{"mbufs", "mbufs = 4_000_000_000", "", "", "mbufs", "2432 B each"},
		{"lcore", "lcores = [500]", "", "", "lcores", "lcore 500 (entry 0): want 0..127"},
		{"link inf", "", "link_gbps = inf", "", "host.link_gbps", "got +Inf: want a finite number in (0, 1600]"},
		{"base rtt inf", "", "base_rtt_us = inf", "", "host.base_rtt_us", "got +Inf"},
		{"rto inf", "", "rto_us = inf", "", "host.rto_us", "got +Inf"},
		{"sample inf", "", "sample_us = inf", "", "host.sample_us", "got +Inf"},
		{"jitter nan", "", "pacing_jitter = nan", "", "host.pacing_jitter", "got NaN"},
		{"expected flows", "", "expected_flows = -5", "", "host.expected_flows", "got -5"},
		{"burst", "", "burst_bytes = 1_000_000_000_000", "", "host.burst_bytes", "want 0..1073741824"},
		{"nic burst", "", "nic_burst_frames = 1_000_000_000", "", "host.nic_burst_frames", "got 1000000000"},
		{"flow start nan", "", "", "[[host.flows]]\nid = 1\ndst = \"10.0.0.2\"\nstart_us = nan\n", "host.flows[0].start_us", "got NaN"},
		{"flow rate inf", "", "", "[[host.flows]]\nid = 1\ndst = \"10.0.0.2\"\nrate_gbps = inf\n", "host.flows[0].rate_gbps", "got +Inf"},
		{"flow size", "", "", "[[host.flows]]\nid = 1\ndst = \"10.0.0.2\"\nsize_bytes = 9_007_199_254_740_993\n", "host.flows[0].size_bytes", "want 0..9007199254740992"},
		{"incast period nan", "", "", "[[host.incast]]\ndst = \"10.0.0.2\"\nflows = 1\nsize_bytes = 1\nrepeat = 2\nperiod_us = nan\n", "host.incast[0].period_us", "got NaN"},
		{"incast last start", "", "", "[[host.incast]]\ndst = \"10.0.0.2\"\nflows = 1\nsize_bytes = 1\nrepeat = 1000\nperiod_us = 1e13\n", "host.incast[0].repeat", "the last repeat starts at 9.99e+15 us"},
		{"workload stop nan", "", "", "[[host.workloads]]\ncdf = \"CDF\"\ndsts = [\"10.0.0.2\"]\nload = 0.5\nstop_us = nan\n", "host.workloads[0].stop_us", "got NaN"},
		{"workload load nan", "", "", "[[host.workloads]]\ncdf = \"CDF\"\ndsts = [\"10.0.0.2\"]\nload = nan\n", "host.workloads[0].load", "got NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.top + "\n" + hostFile + tc.host + "\n" + strings.ReplaceAll(tc.more, "CDF", cdf)
			text = strings.Replace(text, "lcores = [1]\n", "", strings.Count(tc.top, "lcores"))
			p := filepath.Join(t.TempDir(), "h.toml")
			if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			// The engine is not built: LoadFile checks without allocating.
			_, err := LoadFile(p)
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Key != tc.key || ce.Line == 0 || !strings.Contains(ce.Msg, tc.want) {
				t.Fatalf("got %v, want an error at key %s saying %q", err, tc.key, tc.want)
			}
		})
	}
}

func TestLoadFileStartAt(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "h.toml")
	body := "port = \"net_null0\"\nlcores = [0]\nstart_at_unix_ns = %s\n[host]\nname = \"h0\"\nip = \"10.0.0.1\"\ngateway_mac = \"02:00:00:00:00:02\"\n"
	os.WriteFile(p, []byte(strings.Replace(body, "%s", "1795428000500000000", 1)), 0o644)
	f, err := LoadFile(p)
	if err != nil || f.StartAtUnixNs != 1795428000500000000 {
		t.Fatalf("%+v, %v", f, err)
	}
	os.WriteFile(p, []byte(strings.Replace(body, "%s", "-1", 1)), 0o644)
	if _, err := LoadFile(p); err == nil || !strings.Contains(err.Error(), "start_at_unix_ns") {
		t.Errorf("negative start_at_unix_ns: %v", err)
	}
}
