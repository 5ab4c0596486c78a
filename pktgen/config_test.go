package pktgen

import (
	"errors"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/config"
)

// TestConfigRanges: every numeric field is range-checked, NaN and the
// infinities included (before: duration_s = nan ran until SIGINT, and each
// case below but "burst" passed Validate).
func TestConfigRanges(t *testing.T) {
	for _, tc := range []struct {
		name, toml string
		line       int
		key, want  string
	}{
		{"duration nan", "duration_s = nan\n[[ports]]\n", 1, "duration_s", "got NaN: want a time in [0, 1.153e+09] s"},
		{"duration inf", "duration_s = inf\n[[ports]]\n", 1, "duration_s", "got +Inf"},
		{"duration huge", "duration_s = 1e300\n[[ports]]\n", 1, "duration_s", "got 1e+300"},
		{"stats nan", "stats_interval_s = nan\n[[ports]]\n", 1, "stats_interval_s", "got NaN"},
		{"stats inf", "stats_interval_s = inf\n[[ports]]\n", 1, "stats_interval_s", "got +Inf"},
		{"stats -inf", "stats_interval_s = -inf\n[[ports]]\n", 1, "stats_interval_s", "got -Inf"},
		{"lcore", "lcores = [1, 4000]\n[[ports]]\n", 1, "lcores", "lcore 4000 (entry 1): want 0..127"},
		{"pool", "pool_mbufs = 4_000_000_000\n[[ports]]\n", 1, "pool_mbufs", "2432 B each, at most a quarter of this machine's"},
		{"pool jumbo", "pool_mbufs = 4_000_000_000\n[[ports]]\nsize = 9000\n", 1, "pool_mbufs", "9526 B each"},
		{"rate nan", "[[ports]]\nrate_gbps = nan\n", 2, "ports[0].rate_gbps", "got NaN: want a finite number in [0, 1600]"},
		{"rate inf", "[[ports]]\nrate_gbps = inf\n", 2, "ports[0].rate_gbps", "got +Inf"},
		{"mpps nan", "[[ports]]\nrate_mpps = nan\n", 2, "ports[0].rate_mpps", "got NaN"},
		{"mpps huge", "[[ports]]\nrate_mpps = 1e9\n", 2, "ports[0].rate_mpps", "want a finite number in [0, 2380.95"},
		{"bucket", "[[ports]]\nbucket_packets = 1_000_000_000\n", 2, "ports[0].bucket_packets", "want 0..65536"},
		{"dscp", "[[ports]]\ndscp = 64\n", 2, "ports[0].dscp", "got 64: want 0..63"},
		{"dest qp", "[[ports]]\nproto = \"roce\"\ndest_qp = 16777216\n", 3, "ports[0].dest_qp", "want 0..16777215"},
		{"mix weight", "[[ports]]\nmix = \"64:9223372036854775807,128:1\"\n", 2, "ports[0].mix", "weight 9223372036854775807: want 1..1048576"},
		{"burst", "[[ports]]\nburst = 1000\n", 2, "ports[0].burst", "want 1..512"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkValidateError(t, tc.toml, tc.line, tc.key, tc.want) })
	}
	ok := Config{DurationS: 1, StatsIntervalS: -1, PoolMbufs: 16383, Lcores: []uint{127},
		Ports: []PortConfig{{RateMpps: MaxRateMpps, BucketPackets: MaxBucketPackets, DSCP: 63}}}
	if err := ok.Validate(nil); err != nil {
		t.Fatalf("values at their bounds refused: %v", err)
	}
}

// checkValidateError decodes text as x.toml and fails unless Validate
// refuses it with a config.Error at line and key whose message holds want.
func checkValidateError(t *testing.T, text string, line int, key, want string) {
	t.Helper()
	var cfg Config
	f, err := config.Decode("x.toml", text, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.Validate(f)
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Line != line || ce.Key != key || !strings.Contains(ce.Msg, want) {
		t.Fatalf("got %v, want x.toml:%d: %s: ...%s", err, line, key, want)
	}
}
