package metrics

import (
	"flag"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestCheckAddr: loopback addresses pass as they are, any address passes
// with -metrics-any, and the rest is refused with a message that says why.
func TestCheckAddr(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:9100", "127.0.0.1:0", "127.1.2.3:9100", "localhost:9100", "[::1]:9100", "[::ffff:127.0.0.1]:9100"} {
		if err := CheckAddr(addr, false); err != nil {
			t.Errorf("CheckAddr(%q, false) = %v, want nil (loopback)", addr, err)
		}
	}
	for _, addr := range []string{"0.0.0.0:9100", ":9100", "10.0.0.1:9100"} {
		if err := CheckAddr(addr, true); err != nil {
			t.Errorf("CheckAddr(%q, true) = %v, want nil", addr, err)
		}
	}
	for _, tc := range []struct {
		addr    string
		any     bool
		wantErr string // a part of the error
	}{
		{addr: "0.0.0.0:9100", wantErr: "not a loopback address"},
		{addr: ":9100", wantErr: "every interface"},
		{addr: "[::]:9100", wantErr: "not a loopback address"},
		{addr: "10.0.0.1:9100", wantErr: "-metrics-any"},
		{addr: "[fe80::1%lo]:9100", wantErr: "not a loopback address"},
		{addr: "example.com:9100", wantErr: "not a loopback address"},
		{addr: "localhost.example.com:9100", wantErr: "not a loopback address"},
		{addr: "127.0.0.1", wantErr: "want host:port"},
		{addr: "127.0.0.1:", wantErr: "not a number"},
		{addr: "127.0.0.1:http", wantErr: "not a number"},
		{addr: "127.0.0.1:65536", wantErr: "not a number"},
		{addr: "127.0.0.1:-1", wantErr: "not a number"},
		{addr: "::1:9100", wantErr: "want host:port"},
		{addr: "", wantErr: "want host:port"},
		{addr: "10.0.0.1:99999", any: true, wantErr: "not a number"},
	} {
		if err := CheckAddr(tc.addr, tc.any); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("CheckAddr(%q, %v) = %v, want an error with %q", tc.addr, tc.any, err, tc.wantErr)
		}
	}
}

// TestFlags: the flags parse, a non-loopback address is refused without
// -metrics-any, and no -metrics starts nothing.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{args: nil},
		{args: []string{"-metrics", "127.0.0.1:9100"}},
		{args: []string{"-metrics", "0.0.0.0:9100"}, wantErr: "-metrics: \"0.0.0.0:9100\": not a loopback address"},
		{args: []string{"-metrics", "0.0.0.0:9100", "-metrics-any"}},
		{args: []string{"-metrics-any", "-metrics", "[::]:9100"}},
		{args: []string{"-metrics", "9100"}, wantErr: "want host:port"},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		f := AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := f.Check()
		if (err != nil) != (tc.wantErr != "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%q: Check() = %v, want an error with %q", tc.args, err, tc.wantErr)
		}
	}
	var off Flags
	stop, err := off.Serve(BuildInfo())
	if err != nil || stop == nil {
		t.Fatalf("Serve without -metrics: stop nil %v, error %v; want a no-op stop", stop == nil, err)
	}
	stop()
}

// scrape GETs url and returns the body; it fails the test on an error or a
// status other than 200.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("GET %s: Content-Type %q, want the text format", url, ct)
	}
	return string(b)
}

// TestServeScrape serves a switch collector on a loopback port and scrapes
// it over HTTP, as Prometheus would.
func TestServeScrape(t *testing.T) {
	e := testSwitch(t)
	s, err := Start("127.0.0.1:0", false, Switch(e, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	body := scrape(t, s.URL())
	for _, want := range []string{
		"# TYPE ccbed_build_info gauge\nccbed_build_info{",
		"# TYPE ccbed_switch_rx_packets_total counter\n",
		`ccbed_switch_rx_packets_total{port="p0"} 0`,
		`ccbed_switch_queue_priority_bytes{port="p1",priority="7"} 0`,
		"# TYPE go_goroutines gauge",
		"# TYPE process_cpu_seconds_total counter",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if resp, err := http.Get("http://" + s.Addr() + "/"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET /: %s, want 404", resp.Status)
		}
	}
	s.Stop()
	if resp, err := http.Get(s.URL()); err == nil {
		resp.Body.Close()
		t.Error("scrape after Stop succeeded")
	}
	s.Stop() // a second Stop is harmless
}

func TestStartRefuses(t *testing.T) {
	if s, err := Start("0.0.0.0:0", false); err == nil {
		s.Stop()
		t.Fatal("Start on 0.0.0.0 without allowAny: want an error")
	}
	// Two collectors with the same metrics: an error, not a panic.
	e := testSwitch(t)
	if s, err := Start("127.0.0.1:0", false, Switch(e, nil), Switch(e, nil)); err == nil {
		s.Stop()
		t.Fatal("duplicate collectors: want an error")
	}
	// A port in use.
	s, err := Start("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if s2, err := Start(s.Addr(), false); err == nil {
		s2.Stop()
		t.Fatal("address in use: want an error")
	}
}

func TestBuildInfo(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(BuildInfo())
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 1 || mfs[0].GetName() != "ccbed_build_info" || len(mfs[0].Metric) != 1 {
		t.Fatalf("gathered %v", mfs)
	}
	m := mfs[0].Metric[0]
	labels := map[string]string{}
	for _, l := range m.Label {
		labels[l.GetName()] = l.GetValue()
	}
	for _, k := range []string{"module", "version", "revision", "modified", "go_version"} {
		if _, ok := labels[k]; !ok {
			t.Errorf("no label %s in %v", k, labels)
		}
	}
	if labels["version"] == "" || !strings.HasPrefix(labels["go_version"], "go") || m.GetGauge().GetValue() != 1 {
		t.Errorf("build info %v = %v", labels, m.GetGauge().GetValue())
	}
}
