package metrics

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// gateCollector counts its Collects and holds each until gate is closed.
type gateCollector struct {
	desc     *prometheus.Desc
	gate     chan struct{}
	collects atomic.Int64
}

func newGateCollector() *gateCollector {
	return &gateCollector{desc: prometheus.NewDesc("test_gate", "A test gauge.", nil, nil), gate: make(chan struct{})}
}

func (c *gateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *gateCollector) Collect(ch chan<- prometheus.Metric) {
	c.collects.Add(1)
	<-c.gate
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 1)
}

// waitFor waits up to 30 s for cond, failing the test if it never holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("not in 30 s: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// statusCounts counts scrape results by HTTP status (0: a transport error).
type statusCounts struct {
	mu sync.Mutex
	n  map[int]int
}

func (s *statusCounts) add(code int) {
	s.mu.Lock()
	s.n[code]++
	s.mu.Unlock()
}

func (s *statusCounts) get(code int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[code]
}

// get GETs url with client and returns the status (0 on an error).
func get(client *http.Client, url string) int {
	resp, err := client.Get(url)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// noLimits are limits no test meets, for the limit a test looks at alone.
var noLimits = Limits{
	RenderEvery: time.Hour, MaxInFlight: 1 << 20, Rate: 1e9, Burst: 1 << 20,
	MaxConns: 1 << 12, AcceptRate: 1e9, AcceptBurst: 1 << 20, MaxRequestsPerConn: 1 << 20,
}

// TestInFlightLimit: 200 clients scrape at once while the collectors are held
// in their render; exactly MaxInFlight are in flight, the other 196 get 503
// while the render is still held (at once, not after it), and the collectors
// ran once for the 4 served.
func TestInFlightLimit(t *testing.T) {
	const clients = 200
	lim := noLimits
	lim.MaxInFlight = 4
	g := newGateCollector()
	s, err := StartLimited("127.0.0.1:0", false, lim, g)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	res := &statusCounts{n: map[int]int{}}
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.add(get(client, s.URL()))
		}()
	}
	// While the render is held no slot frees: 196 refusals, and then (a
	// holder may still be on its way to its count or the render) 4 in
	// flight and one render running; the others wait for its text.
	waitFor(t, "196 scrapes refused with 503, 4 in flight, 1 render", func() bool {
		return res.get(http.StatusServiceUnavailable) == clients-lim.MaxInFlight &&
			s.ep.cur.Load() == int64(lim.MaxInFlight) && g.collects.Load() == 1
	})
	close(g.gate)
	wg.Wait()
	if ok, busy := res.get(http.StatusOK), res.get(http.StatusServiceUnavailable); ok != lim.MaxInFlight || busy != clients-lim.MaxInFlight {
		t.Errorf("%d served, %d busy, want %d and %d (all: %v)", ok, busy, lim.MaxInFlight, clients-lim.MaxInFlight, res.n)
	}
	if m := s.ep.maxInFlight.Load(); m != int64(lim.MaxInFlight) {
		t.Errorf("at most %d in flight, want %d", m, lim.MaxInFlight)
	}
	if n := g.collects.Load(); n != 1 {
		t.Errorf("collectors ran %d times, want once (render interval 1 h)", n)
	}
}

// TestRateLimit: a bucket of Burst scrapes, refilled at Rate a second, on a
// clock the test moves.
func TestRateLimit(t *testing.T) {
	now := time.Unix(1000, 0)
	b := newBucket(10, 5, func() time.Time { return now })
	for _, step := range []struct {
		advance time.Duration
		tries   int
		want    int
	}{
		{0, 20, 5},                      // the burst
		{0, 3, 0},                       // nothing left
		{100 * time.Millisecond, 3, 1},  // one token in 100 ms at 10/s
		{250 * time.Millisecond, 5, 2},  // 2.5 tokens: 2 whole
		{50 * time.Millisecond, 1, 1},   // the half left plus half another
		{time.Hour, 20, 5},              // never more than the burst
		{-time.Second, 5, 0},            // a clock going back earns nothing
		{1100 * time.Millisecond, 5, 1}, // until it passes the latest time seen: 100 ms later
	} {
		now = now.Add(step.advance)
		got := 0
		for range step.tries {
			if b.take() {
				got++
			}
		}
		if got != step.want {
			t.Fatalf("after +%v: %d of %d taken, want %d", step.advance, got, step.tries, step.want)
		}
	}
}

// TestEndpointRefusals: a scrape over the rate limit gets 429, another path
// 404, another method 405, each closing its connection; a served scrape has
// the text format, and the connection is closed after MaxRequestsPerConn.
func TestEndpointRefusals(t *testing.T) {
	lim := noLimits
	lim.Rate, lim.Burst, lim.MaxRequestsPerConn = 1e-9, 2, 2
	s, err := StartLimited("127.0.0.1:0", false, lim)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	client := &http.Client{Transport: &http.Transport{}, Timeout: time.Minute}
	for i, tc := range []struct {
		method, path string
		code         int
		close        bool
	}{
		{"GET", Path, 200, false},
		{"HEAD", Path, 200, true}, // the second on its connection
		{"GET", Path, 429, true},
		{"GET", "/", 404, true},
		{"POST", Path, 405, true},
	} {
		req, _ := http.NewRequest(tc.method, "http://"+s.Addr()+tc.path, strings.NewReader("x"))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || resp.Close != tc.close {
			t.Errorf("%d: %s %s: %s, close %v; want %d, close %v", i, tc.method, tc.path, resp.Status, resp.Close, tc.code, tc.close)
		}
		if tc.code == 200 && tc.method == "GET" && (!strings.Contains(string(body), "ccbed_metrics_scrapes_total{result=\"served\"} 0") ||
			resp.Header.Get("Content-Type") != contentType) {
			t.Errorf("%d: a scrape without the endpoint's counters or the text format's type %q:\n%s", i, resp.Header.Get("Content-Type"), body)
		}
	}
}

// countCollector counts its Collects.
type countCollector struct {
	desc     *prometheus.Desc
	collects atomic.Int64
}

func (c *countCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *countCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(c.collects.Add(1)))
}

// TestScrapeStorm hammers the endpoint with 200 clients, 10 scrapes each,
// and checks every limit by count: never more than MaxInFlight in flight or
// MaxConns connections open, no more renders than the render interval allows
// in the time the storm took (plus the first), no more served than the rate
// allows in that time, every scrape answered (200, 429 or 503), and no
// goroutine left once the endpoint stops.
func TestScrapeStorm(t *testing.T) {
	const clients, each = 200, 10
	lim := Limits{
		RenderEvery: 20 * time.Millisecond, MaxInFlight: 4, Rate: 200, Burst: 20,
		MaxConns: 32, AcceptRate: 20000, AcceptBurst: 200, MaxRequestsPerConn: 5,
	}
	base := runtime.NumGoroutine()
	c := &countCollector{desc: prometheus.NewDesc("test_collects", "A test counter.", nil, nil)}
	s, err := StartLimited("127.0.0.1:0", false, lim, c)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	res := &statusCounts{n: map[int]int{}}
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				res.add(get(client, s.URL()))
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	tr.CloseIdleConnections()
	s.Stop()

	ok, busy, slow := res.get(200), res.get(503), res.get(429)
	t.Logf("%v: %d served, %d busy, %d rate-limited, %d renders, at most %d in flight, %d connections", el, ok, busy, slow,
		s.ep.renders.Load(), s.ep.maxInFlight.Load(), s.ln.max.Load())
	if ok+busy+slow != clients*each {
		t.Errorf("answers %v, want %d, each 200, 429 or 503", res.n, clients*each)
	}
	if ok == 0 {
		t.Error("no scrape served")
	}
	if m := s.ep.maxInFlight.Load(); m > int64(lim.MaxInFlight) {
		t.Errorf("%d scrapes in flight at once, limit %d", m, lim.MaxInFlight)
	}
	if m := s.ln.max.Load(); m > int64(lim.MaxConns) {
		t.Errorf("%d connections open at once, limit %d", m, lim.MaxConns)
	}
	// Renders end at least RenderEvery apart, from the first.
	if r, most := int64(s.ep.renders.Load()), 1+int64(el/lim.RenderEvery); r > most || r != c.collects.Load() {
		t.Errorf("%d renders (%d collects) in %v, want at most %d", r, c.collects.Load(), el, most)
	}
	if most := lim.Burst + int(el.Seconds()*lim.Rate) + 1; ok > most {
		t.Errorf("%d served in %v, want at most %d (rate %g/s, burst %d)", ok, el, most, lim.Rate, lim.Burst)
	}
	waitFor(t, fmt.Sprintf("goroutines back to %d", base), func() bool { return runtime.NumGoroutine() <= base })
}

// BenchmarkRender is one render of a 4-port switch's endpoint, every
// collector (the switch's, the Go runtime's, the process's, the endpoint's)
// gathered and encoded: what the endpoint spends at most once per
// RenderEvery.
func BenchmarkRender(b *testing.B) {
	lim := noLimits
	lim.RenderEvery = 0
	s, err := StartLimited("127.0.0.1:0", false, lim, Switch(newSwitch(b, 4), nil))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Stop()
	b.ReportAllocs()
	for b.Loop() {
		body, err := s.ep.exposition()
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(body)))
	}
}
