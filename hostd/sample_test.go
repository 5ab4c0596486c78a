package hostd

import (
	"math"
	"testing"
)

// TestRateSamplesBounded runs one flow per case and checks its rate
// samples: together they count every byte of the flow, each one's rate is
// its bytes over the time since the previous sample, none exceeds the
// payload rate of the link by more than one frame a period (a period
// counts a frame when its ACK arrives), and in virtual time every one ends
// a period of the sampling grid (the engine's start, then every
// SampleNs), a completing flow's last one included.
func TestRateSamplesBounded(t *testing.T) {
	const periodNs = 10_000 // testConfig's SampleNs
	tests := []struct {
		name    string
		size    int64
		startNs int64
		poll    int64 // the engines run only at multiples of it (ns), 0: on every event
		rows    int   // rows of the flow; 0: not checked
	}{
		{"starts and ends inside one period", 1000, 1000, 0, 1},
		{"starts before a sample, ends just after it", 1000, 6100, 0, 2},
		{"spans several periods", 100_000, 3000, 0, 0},
		{"samples off the grid", 100_000, 3000, 7_000, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := oneFlow("none", 0, 0)
			a.Flows[0].SizeBytes, a.Flows[0].StartNs = tc.size, tc.startNs
			v := newVnet(t, a, b)
			v.poll = tc.poll
			v.run(1_000_000)
			f := v.eng[0].FCTs()
			if len(f) != 1 {
				t.Fatalf("%d FCTs, want 1", len(f))
			}
			end := f[0].StartNs + f[0].FCTNs
			// The pacer's ceiling at the line rate counts preamble, FCS and gap.
			payload := a.LinkGbps * 1024 / float64(1024+dataOverhead+phyOverhead)
			var bits float64
			var bytes int64
			var rows int
			prev := int64(0) // the previous sample of the host: the flow's only
			for _, s := range v.eng[0].Samples() {
				rows++
				if tc.poll == 0 && s.T%periodNs != 0 {
					t.Errorf("sample at %d ns: off the %d ns grid", s.T, periodNs)
				}
				if most := payload + 1024*8/float64(periodNs); s.Gbps > most {
					t.Errorf("sample at %d ns: %.3f Gb/s, above the link's %.3f Gb/s of payload and a frame a period", s.T, s.Gbps, payload)
				}
				if want := float64(s.Bytes) * 8 / float64(s.T-prev); math.Abs(s.Gbps-want) > 1e-9*want {
					t.Errorf("sample at %d ns: %.6f Gb/s, but %d bytes since %d ns is %.6f Gb/s", s.T, s.Gbps, s.Bytes, prev, want)
				}
				bits += s.Gbps * float64(s.T-prev)
				bytes += s.Bytes
				prev = s.T
			}
			if got := bits / 8; math.Abs(got-float64(tc.size)) > 1e-6*float64(tc.size) || bytes != tc.size {
				t.Errorf("samples count %d bytes (their rates %.1f), want %d", bytes, got, tc.size)
			}
			if prev < end {
				t.Errorf("last sample at %d ns, before the flow completed at %d ns", prev, end)
			}
			if tc.rows > 0 && rows != tc.rows {
				t.Errorf("%d rows, want %d", rows, tc.rows)
			}
			if tc.name == "starts before a sample, ends just after it" && (end%periodNs == 0 || end%periodNs > 800) {
				t.Errorf("completed at %d ns: not within a frame's time after a sample; retune startNs", end)
			}
			t.Logf("completed at %d ns, %d rows", end, rows)
		})
	}
}
