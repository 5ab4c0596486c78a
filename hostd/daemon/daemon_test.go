package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbed/ccbed/hostd"
)

func TestParseStartAt(t *testing.T) {
	want := time.Date(2026, 11, 23, 10, 0, 0, 500_000_000, time.UTC)
	for _, s := range []string{"2026-11-23T10:00:00.5Z", "2026-11-23T11:00:00.5+01:00", "1795428000500000000"} {
		got, err := ParseStartAt(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseStartAt(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0", "-5", "tomorrow", "2026-11-23 10:00"} {
		if _, err := ParseStartAt(s); err == nil {
			t.Errorf("ParseStartAt(%q) accepted", s)
		}
	}
}

func TestCheckStartAt(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	if err := CheckStartAt(now.Add(5*time.Second), now); err != nil {
		t.Errorf("5 s ahead: %v", err)
	}
	if err := CheckStartAt(now.Add(-time.Millisecond), now); err == nil || !strings.Contains(err.Error(), "in the past") {
		t.Errorf("1 ms ago: %v, want 'in the past'", err)
	}
	if err := CheckStartAt(now, now); err == nil {
		t.Error("now accepted: it has passed by the time DPDK is up")
	}
	if err := CheckStartAt(now.Add(MaxStartLead+time.Second), now); err == nil || !strings.Contains(err.Error(), "ahead") {
		t.Errorf("too far ahead: %v", err)
	}
}

func TestWaitUntil(t *testing.T) {
	at := time.Now().Add(30 * time.Millisecond)
	if err := WaitUntil(context.Background(), at); err != nil {
		t.Fatal(err)
	}
	// Never before the instant; how long after is the scheduler's call.
	if late := time.Since(at); late < 0 {
		t.Errorf("WaitUntil returned %v before the instant", -late)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WaitUntil(ctx, time.Now().Add(time.Hour)); err == nil {
		t.Error("WaitUntil ignored a cancelled context")
	}
}

func TestParseChronyTracking(t *testing.T) {
	const out = `Reference ID    : A9FEA97B (169.254.169.123)
Stratum         : 4
Ref time (UTC)  : Mon Nov 23 10:00:00 2026
System time     : 0.000012345 seconds slow of NTP time
Last offset     : -0.000001000 seconds
Leap status     : Normal
`
	ns, err := ParseChronyTracking(out)
	if err != nil || ns != -12345 {
		t.Errorf("slow: %d, %v; want -12345", ns, err)
	}
	ns, err = ParseChronyTracking(strings.Replace(out, "slow", "fast", 1))
	if err != nil || ns != 12345 {
		t.Errorf("fast: %d, %v; want 12345", ns, err)
	}
	if _, err := ParseChronyTracking(strings.Replace(out, "Normal", "Not synchronised", 1)); err == nil {
		t.Error("unsynchronised chrony gave an offset")
	}
	if _, err := ParseChronyTracking("506 Cannot talk to daemon\n"); err == nil {
		t.Error("no System time line gave an offset")
	}
}

func TestParsePMCTimeStatus(t *testing.T) {
	const out = `sending: GET TIME_STATUS_NP
	90e2ba.fffe.0a0b0c-0 seq 0 RESPONSE MANAGEMENT TIME_STATUS_NP
		master_offset              -87
		ingress_time               1795428000500000000
		gmPresent                  true
`
	if ns, err := ParsePMCTimeStatus(out); err != nil || ns != -87 {
		t.Errorf("%d, %v; want -87", ns, err)
	}
	if _, err := ParsePMCTimeStatus(strings.Replace(out, "true", "false", 1)); err == nil {
		t.Error("no grandmaster gave an offset")
	}
}

func TestClockOffsetUnknownIsNotZero(t *testing.T) {
	var c hostd.ClockOffset
	c.Source = "neither chronyc nor pmc is installed"
	if c.Exceeds(hostd.ClockOffsetBoundNs) || !strings.HasPrefix(c.String(), "unknown") {
		t.Errorf("unknown offset: %s, exceeds %v", c, c.Exceeds(hostd.ClockOffsetBoundNs))
	}
	big := int64(-2 * hostd.ClockOffsetBoundNs)
	if c := (hostd.ClockOffset{OffsetNs: &big, Source: "x"}); !c.Exceeds(hostd.ClockOffsetBoundNs) {
		t.Errorf("%s does not exceed the bound", c)
	}
	dir := t.TempDir()
	info := hostd.RunInfo{Host: "h0", ClockOffset: c, ClockOffsetBoundNs: hostd.ClockOffsetBoundNs}
	if err := WriteRunInfo(dir, info); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, hostd.RunInfoFile))
	if !strings.Contains(string(b), `"offset_ns": null`) {
		t.Errorf("unknown offset not written as null:\n%s", b)
	}
	back, err := ReadRunInfo(filepath.Join(dir, hostd.RunInfoFile))
	if err != nil || back.ClockOffset.OffsetNs != nil || back.Host != "h0" {
		t.Errorf("read back %+v, %v", back, err)
	}
}
