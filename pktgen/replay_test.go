package pktgen

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/pcapw"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/wire"
)

// writeCapture writes n frames of a pktgen stream (p) to a pcap in dir,
// frame i at times[i], and returns its path and the frames.
func writeCapture(t testing.TB, dir string, p PortConfig, times []int64) (string, [][]byte) {
	t.Helper()
	g := newGen(t, p, 0)
	path := filepath.Join(dir, "cap.pcap")
	w, err := pcapw.Create(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	var frames [][]byte
	buf := make([]byte, 2048)
	for _, tm := range times {
		g.Grant(tm, 1)
		n := g.Build(buf, tm)
		frames = append(frames, append([]byte(nil), buf[:n]...))
		if err := w.Append(tm, buf[:n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, frames
}

// replayDepartures runs a replay generator in virtual time, polling every
// step ns until end or done, and returns each frame's departure time and
// capture index.
func replayDepartures(g *Generator, step, end int64) (times []int64, idx []int) {
	for now := int64(0); now < end && !g.Done(now); now += step {
		k := g.Grant(now, 32)
		for range k {
			times = append(times, now)
			idx = append(idx, g.Pos())
			g.advance(1, uint64(g.classes[g.Pos()].size))
		}
	}
	return times, idx
}

// TestReplayTiming: a replay sends the capture's frames in order, loops
// times; at recorded timing frame i of loop k leaves at k x (span + mean
// gap) + (t_i - t_0) / speed (to the poll after it), at a rate as the
// token bucket spaces them, fast all at once.
func TestReplayTiming(t *testing.T) {
	capTimes := []int64{5000, 7000, 7500, 20000, 21000} // span 16 us, mean gap 4 us
	cases := []struct {
		name  string
		rc    ReplayConfig
		p     PortConfig
		loops int
		due   func(k, i int) int64 // departure of frame i of loop k (-1: not checked)
	}{
		{"recorded", ReplayConfig{Loops: 3}, PortConfig{}, 3, func(k, i int) int64 { return int64(k)*20000 + capTimes[i] - 5000 }},
		{"recorded twice as fast", ReplayConfig{Loops: 2, Speed: 2}, PortConfig{}, 2, func(k, i int) int64 { return int64(k)*10000 + (capTimes[i]-5000)/2 }},
		{"rate 1 Mpps", ReplayConfig{Loops: 2, Timing: "rate"}, PortConfig{RateMpps: 1, BucketPackets: 1}, 2, func(k, i int) int64 { return int64(k*5+i) * 1000 }},
		{"fast", ReplayConfig{Loops: 4, Timing: "fast"}, PortConfig{}, 4, func(k, i int) int64 { return 0 }},
	}
	dir := t.TempDir()
	path, frames := writeCapture(t, dir, PortConfig{Size: 100}, capTimes)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := c.rc
			rc.File = path
			p := c.p
			p.Replay = &rc
			capt, err := rc.LoadCapture()
			if err != nil {
				t.Fatal(err)
			}
			g, err := NewReplayGenerator(&p, capt, 0)
			if err != nil {
				t.Fatal(err)
			}
			const step = 10
			times, idx := replayDepartures(g, step, 1e9)
			if len(times) != c.loops*len(frames) {
				t.Fatalf("%d frames sent, want %d", len(times), c.loops*len(frames))
			}
			for j, tm := range times {
				k, i := j/len(frames), j%len(frames)
				if idx[j] != i {
					t.Fatalf("departure %d is frame %d, want %d", j, idx[j], i)
				}
				if d := c.due(k, i); tm < d || tm >= d+step {
					t.Fatalf("loop %d frame %d leaves at %d ns, due at %d", k, i, tm, d)
				}
			}
		})
	}
}

// TestReplayLoad: a capture loads whole with its rewrites (addresses and a
// checksum that verifies); pcapng loads too; a capture cut by a snap
// length, or of another link type, is refused.
func TestReplayLoad(t *testing.T) {
	dir := t.TempDir()
	path, frames := writeCapture(t, dir, PortConfig{Size: 80}, []int64{1, 2, 3})
	rc := ReplayConfig{File: path, SrcMAC: "02:aa:00:00:00:01", DstIP: "192.168.7.9"}
	c, err := rc.LoadCapture()
	if err != nil {
		t.Fatal(err)
	}
	var f wire.Frame
	for i, fr := range c.Frames {
		if err := wire.Decode(fr, &f); err != nil {
			t.Fatal(err)
		}
		if string(fr[6:12]) != "\x02\xaa\x00\x00\x00\x01" || f.IP.Dst() != 0xc0a80709 || f.IP.Src() != 0x0a000001 ||
			fold(sum16(fr[ipOff:ipOff+wire.IPv4MinLen], 0)) != 0xffff || string(fr[0:6]) != string(frames[i][0:6]) ||
			string(fr[udpOff:]) != string(frames[i][udpOff:]) {
			t.Fatalf("frame %d: % x", i, fr[:udpOff])
		}
	}
	// Cut frames: a capture with a snap length of 60.
	cut := filepath.Join(dir, "cut.pcap")
	w, _ := pcapw.Create(cut, 60)
	w.Append(1, frames[0])
	w.Close()
	if _, err := (&ReplayConfig{File: cut}).LoadCapture(); err == nil || !strings.Contains(err.Error(), "whole frames") {
		t.Fatalf("cut capture: %v", err)
	}
	// Another link type: patch the file header's.
	other := filepath.Join(dir, "other.pcap")
	b, _ := os.ReadFile(path)
	binary.LittleEndian.PutUint32(b[20:], 113)
	os.WriteFile(other, b, 0o644)
	if _, err := (&ReplayConfig{File: other}).LoadCapture(); err == nil || !strings.Contains(err.Error(), "link type 113") {
		t.Fatalf("link type: %v", err)
	}
}

// TestReplayConfig: replay keys are checked with the key and line.
func TestReplayConfig(t *testing.T) {
	dir := t.TempDir()
	path, _ := writeCapture(t, dir, PortConfig{}, []int64{1})
	head := "[[ports]]\n"
	rp := "[ports.replay]\nfile = \"" + path + "\"\n"
	checkConfigs(t, []configCase{
		{"ok", head + rp, ""},
		{"ok rate", head + "rate_gbps = 1\n" + rp + "timing = \"rate\"\nloops = -1\n", ""},
		{"ok speed", head + rp + "speed = 10\n", ""},
		{"missing file", head + "[ports.replay]\nfile = \"" + filepath.Join(dir, "none.pcap") + "\"\n", ":3: ports[0].replay.file"},
		{"bad timing", head + rp + "timing = \"now\"\n", ":4: ports[0].replay.timing"},
		{"rate without rate", head + rp + "timing = \"rate\"\n", ":4: ports[0].replay.timing: \"rate\" needs"},
		{"recorded with rate", head + "rate_mpps = 1\n" + rp, "recorded timing takes no rate"},
		{"speed with fast", head + rp + "timing = \"fast\"\nspeed = 2\n", ":5: ports[0].replay.speed"},
		{"negative speed", head + rp + "speed = -1\n", ":4: ports[0].replay.speed"},
		{"size", head + "size = 100\n" + rp, ":2: ports[0].size: a port that replays"},
		{"flows", head + "flows = 3\n" + rp, ":2: ports[0].flows"},
		{"bad mac", head + rp + "dst_mac = \"x\"\n", ":4: ports[0].replay.dst_mac"},
	})
}

// TestReplayOverCable replays a 1000-frame capture of a pktgen stream over a
// virtual cable (net_ring) at its recorded timing, twice, on the fast path
// (one cgo call a burst) and the Go path, polling both ends from one thread
// with the TSC clock: every frame arrives byte for byte in the capture's
// order, the gaps between arrivals that no stall of the polling thread
// surrounds are the capture's within 1 us (mean and median), and every mbuf (the frames' and their references) is back in
// the pool after Close.
func TestReplayOverCable(t *testing.T) {
	const n, loops = 1000, 2
	times := make([]int64, n)
	for i := range times {
		times[i] = int64(i)*20_000 + int64(i%7)*1_500 // 20 us apart, give or take
	}
	path, frames := writeCapture(t, t.TempDir(), PortConfig{Mix: "imix", Flows: 4}, times)
	for _, goPath := range []bool{false, true} {
		name := "fast"
		if goPath {
			name = "go"
		}
		t.Run(name, func(t *testing.T) {
			pool := newPool(t, "pg_replay_"+name, 4095)
			a, b := newCable(t, pool)
			off := false
			cfg := Config{Ports: []PortConfig{
				{Name: "a", Replay: &ReplayConfig{File: path, Loops: loops}},
				{Name: "b", Tx: &off, Rx: true},
			}}
			var pa port.Port = port.EthQueue{Port: a}
			if goPath {
				pa = goPort{pa}
			}
			pb := &samplingPort{Port: port.EthQueue{Port: b}, keep: true}
			bl, err := NewBlaster(&cfg, []port.Port{pa, pb}, pool)
			if err != nil {
				t.Fatal(err)
			}
			if bl.Tx[0].replayEth == goPath {
				t.Fatalf("ethdev path %v, want %v", bl.Tx[0].replayEth, !goPath)
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			clock := lcore.NewTSCClock(dpdk.TSCHz())
			polls := append(bl.Pollers(0), bl.Pollers(1)...)
			// stalls are the spans between two passes of this loop longer
			// than stallNs: the thread was off its CPU (a shared machine),
			// and whatever was due then left late.
			const stallNs = 5_000
			var stalls [][2]int64
			prev := clock.Now()
			for deadline := clock.Now() + 10e9; clock.Now() < deadline; {
				now := clock.Now()
				if now-prev > stallNs {
					stalls = append(stalls, [2]int64{prev, now})
				}
				prev = now
				pb.now = now
				for _, p := range polls {
					p(now)
				}
				if bl.TxDone() && bl.Snapshot()[1].RxPackets >= n*loops {
					break
				}
			}
			sum := bl.Summary(clock.Now())
			bl.Close()
			if pool.InUse() != 0 {
				t.Errorf("%d mbufs still in use after Close", pool.InUse())
			}
			if sum.Ports[0].TxPackets != n*loops || len(pb.frames) != n*loops {
				t.Fatalf("sent %d, received %d, want %d", sum.Ports[0].TxPackets, len(pb.frames), n*loops)
			}
			// The gaps between arrivals against the capture's. A gap is
			// judged only when this loop ran without a stall from a capture
			// gap before the earlier frame's arrival (its send, and its due
			// time) to the later one's: a stall there measures the machine,
			// not the replay. The judged gaps' mean and median must be
			// within 1 us. A machine that stalled the loop around all but a
			// few gaps (two busy pollers on two shared CPUs) leaves nothing
			// to judge: the test says so and skips the timing, after
			// checking every frame.
			var maxGap int64
			for i := 1; i < n; i++ {
				maxGap = max(maxGap, times[i]-times[i-1])
			}
			stalled := func(from, to int64) bool {
				for _, st := range stalls {
					if st[1] > from && st[0] < to {
						return true
					}
				}
				return false
			}
			var errs, judged []int64
			for j, f := range pb.frames {
				if string(f) != string(frames[j%n]) {
					t.Fatalf("arrival %d is not frame %d of the capture", j, j%n)
				}
				if j%n == 0 {
					continue
				}
				got, want := pb.at[j]-pb.at[j-1], times[j%n]-times[j%n-1]
				e := max(got-want, want-got)
				errs = append(errs, e)
				if !stalled(pb.at[j-1]-maxGap, pb.at[j]) {
					judged = append(judged, e)
				}
			}
			slices.Sort(errs)
			t.Logf("gap errors over %d gaps: median %d ns, p90 %d, max %d; %d stalls of the loop over %d us",
				len(errs), errs[len(errs)/2], errs[len(errs)*9/10], errs[len(errs)-1], len(stalls), stallNs/1000)
			const minJudged = 200
			if len(judged) < minJudged {
				t.Skipf("the loop stalled around all but %d of %d gaps (want %d to judge): this machine gave the replay no quiet stretch", len(judged), len(errs), minJudged)
			}
			var errSum float64
			for _, e := range judged {
				errSum += float64(e)
			}
			slices.Sort(judged)
			mean, median := errSum/float64(len(judged)), judged[len(judged)/2]
			t.Logf("%d gaps judged (no stall around them): mean error %.0f ns, median %d, p99 %d", len(judged), mean, median, judged[len(judged)*99/100])
			if mean > 1000 || median > 1000 {
				t.Errorf("gaps off the capture's by %.0f ns on average, %d ns at the median: want at most 1 us", mean, median)
			}
		})
	}
}
