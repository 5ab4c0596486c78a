package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Outputs shaped as the benchmarks print them, with round figures: rtc 50
// ns a packet here; every stage 20 ns on the rx side and 30 on the tx side
// (40 for HPCC); the 1 + 1 run 40 / 50 ns busy a packet.
const (
	rtcOut = "BenchmarkForwardRTC/none/64B-2 \t 1000 \t 5 ns/op \t 20.0 Mpps \t 50.0 cpu-ns/pkt\n" +
		"BenchmarkForwardRTC/none/64B-2 \t 1000 \t 5 ns/op \t 18.0 Mpps \t 55.0 cpu-ns/pkt\n"
	shOut = "BenchmarkForwardSharded/none/64B/1rx-2 \t 1000000 \t 1000 ns/op \t 19.0 Mpps \t 40.0 rx-busy-ns/pkt \t 50.0 tx-busy-ns/pkt\n" +
		"BenchmarkForwardSharded/dcqcn/64B/1rx-2 \t 1000000 \t 1000 ns/op \t 18.0 Mpps \t 40.0 rx-busy-ns/pkt \t 90.0 tx-busy-ns/pkt \t 52.0 tx-cpu-ns/pkt\n"
)

func stagesOut() string {
	var b strings.Builder
	for _, s := range []string{"none", "rocc", "dcqcn", "hpcc", "none+pfc", "dcqcn+pfc"} {
		tx := "30.0"
		if s == "hpcc" {
			tx = "40.0"
		}
		b.WriteString("BenchmarkEngineStages/" + s + "/classify-2 \t 100 \t 9 ns/op \t 20.0 cpu-ns/op\n")
		b.WriteString("BenchmarkEngineStages/" + s + "/queue-2 \t 100 \t 9 ns/op \t " + tx + " cpu-ns/op\n")
		b.WriteString("BenchmarkEngineStages/" + s + "/queue1500-2 \t 100 \t 9 ns/op \t " + tx + " cpu-ns/op\n")
	}
	return b.String()
}

func files(t *testing.T) (rtc, st, sh string) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []struct {
		path       *string
		name, text string
	}{
		{&rtc, "rtc.txt", rtcOut}, {&st, "st.txt", stagesOut()}, {&sh, "sh.txt", shOut},
	} {
		*f.path = filepath.Join(dir, f.name)
		if err := os.WriteFile(*f.path, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return rtc, st, sh
}

func TestRun(t *testing.T) {
	rtc, st, sh := files(t)
	var out strings.Builder
	err := run([]string{"-rtc", rtc, "-stages", st, "-sharded", sh, "-nic-rx", "1", "-nic-tx", "1",
		"-line-nic-rx", "10", "-line-nic-tx", "10", "-cgo", "32", "-ref-rtc", "60"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	o := out.String()
	for _, want := range []string{
		// rx: 40 busy - 20 - 1 - 64/128 = 18.5; tx: 50 - 30 - 1 - 64/128 = 18.5.
		"none           40.0     50.0        18.5        18.5",
		// Scale 60 / 50 (the least rtc run).
		"costs x 1.200 (60.00 / 50.00 ns)",
		"contention fitted on the reference's 6 rx + 8 tx",
		"hpcc+pfc",
		"4 x 100 GbE",
	} {
		if !strings.Contains(o, want) {
			t.Errorf("output lacks %q:\n%s", want, o)
		}
	}
	out.Reset()
	err = run([]string{"-rtc", rtc, "-stages", st, "-sharded", sh, "-nic-rx", "1", "-nic-tx", "1",
		"-line-nic-rx", "10", "-line-nic-tx", "10", "-cgo", "32", "-line-run", "200", "-line-ref", "50"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "50.0 / 200.0 ns: no CC rx 4.6, tx 4.6 ns a packet"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	out.Reset()
	err = run([]string{"-rtc", rtc, "-stages", st, "-sharded", sh, "-nic-rx", "1", "-nic-tx", "1",
		"-line-nic-rx", "10", "-line-nic-tx", "10", "-cgo", "32", "-ref-rtc", "60"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	o = out.String()
	// The 1 + 1 check: none's tx side is the busy time it was fitted on,
	// 50 ns a packet, 20 Mpps against the run's 19; dcqcn's tx side with
	// none's hand-off is 50 against its CPU time (52, not its TSC time,
	// 90), 20 Mpps against 18.
	for _, want := range []string{
		"none                 50.0        50.0   +0 %         20.00       19.00   +5 %",
		"dcqcn                50.0        52.0   -4 %         20.00       18.00  +11 %",
	} {
		if !strings.Contains(o, want) {
			t.Errorf("output lacks %q:\n%s", want, o)
		}
	}
}

func TestRunErrors(t *testing.T) {
	rtc, st, sh := files(t)
	bad := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(bad, []byte("BenchmarkX-2 10 five ns/op\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := []string{"-nic-rx", "1", "-nic-tx", "1", "-line-nic-rx", "1", "-line-nic-tx", "1", "-cgo", "1"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no files", ok, "want -rtc and -stages"},
		{"no cgo", []string{"-rtc", rtc, "-stages", st, "-nic-rx", "1", "-nic-tx", "1", "-line-nic-rx", "1", "-line-nic-tx", "1"}, "-cgo"},
		{"bad file", append([]string{"-rtc", bad, "-stages", st}, ok...), "not a number"},
		{"missing file", append([]string{"-rtc", rtc, "-stages", bad + "x"}, ok...), "no such file"},
		{"stages missing", append([]string{"-rtc", rtc, "-stages", sh}, ok...), "no BenchmarkEngineStages/none/classify"},
		{"no rtc", append([]string{"-rtc", st, "-stages", st}, ok...), "no BenchmarkForwardRTC/none/64B"},
		{"ports", append([]string{"-rtc", rtc, "-stages", st, "-ports", "0"}, ok...), "-ports 0"},
		{"line-run alone", append([]string{"-rtc", rtc, "-stages", st, "-line-run", "300"}, ok...), "want both > 0"},
	} {
		var out strings.Builder
		err := run(c.args, &out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}
