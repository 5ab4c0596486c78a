package metrics

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// Limits bound what scrapes may cost the daemon, however many clients scrape
// and however fast: the collectors run at most once per RenderEvery, whatever
// the number of scrapes; at most MaxInFlight scrapes are served at once and
// at most Rate a second; at most MaxConns connections are open, accepted at
// most AcceptRate a second. A scrape over a limit is answered at once (503 or
// 429) and its connection closed, so a client that retries at once waits for
// the next accept: a scrape storm costs a bounded amount of CPU time and
// memory, not a share of the machine.
type Limits struct {
	// RenderEvery: the exposition is rendered (every collector run) at most
	// once per this interval; scrapes in between get the same text.
	RenderEvery time.Duration
	// MaxInFlight is how many scrapes are served at once; a scrape beyond
	// gets 503 Service Unavailable at once, its body unread.
	MaxInFlight int
	// Rate is how many scrapes a second are served on average, Burst how many
	// at once after a quiet spell; a scrape beyond gets 429 Too Many Requests.
	Rate  float64
	Burst int
	// MaxConns is how many connections are open at once; further clients
	// wait in the kernel's accept queue, costing the daemon nothing.
	MaxConns int
	// AcceptRate is how many connections a second are accepted on average,
	// AcceptBurst how many at once after a quiet spell.
	AcceptRate  float64
	AcceptBurst int
	// MaxRequestsPerConn: a kept-alive connection is closed after serving
	// this many scrapes, so that waiting clients get their turn.
	MaxRequestsPerConn int
}

// DefaultLimits are the daemons' limits: a render every 100 ms at most, 4
// scrapes in flight, 20 a second (burst 20), 32 connections, 50 accepts a
// second (burst 20), 100 scrapes a connection. A Prometheus scraping every
// second or slower never meets them. The accept rate bounds what refusals
// cost: each closes its connection, and a client's next try waits for an
// accept (a refusal and its new connection cost the two ends some 0.4 ms of
// CPU time together, mostly the kernel's, on the 2-core development VM).
var DefaultLimits = Limits{
	RenderEvery: 100 * time.Millisecond,
	MaxInFlight: 4,
	Rate:        20, Burst: 20,
	MaxConns:   32,
	AcceptRate: 50, AcceptBurst: 20,
	MaxRequestsPerConn: 100,
}

// The endpoint's HTTP timeouts and header size: a slow or idle client holds
// a connection (one of MaxConns) a few seconds at most.
const (
	readHeaderTimeout = 2 * time.Second
	readTimeout       = 5 * time.Second
	writeTimeout      = 10 * time.Second
	idleTimeout       = 5 * time.Second
	maxHeaderBytes    = 4 << 10
)

// contentType is the Prometheus text exposition format's.
const contentType = string(expfmt.FmtText)

// bucket is a token bucket: rate tokens a second, at most burst saved.
type bucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
	now    func() time.Time
}

func newBucket(rate float64, burst int, now func() time.Time) *bucket {
	b := float64(max(burst, 1))
	return &bucket{rate: rate, burst: b, tokens: b, last: now(), now: now}
}

// refill adds the tokens earned since the latest time it saw (a clock going
// back earns nothing until it passes that time again); b.mu is held.
func (b *bucket) refill() {
	t := b.now()
	if d := t.Sub(b.last); d > 0 {
		b.tokens = min(b.burst, b.tokens+d.Seconds()*b.rate)
		b.last = t
	}
}

// take takes a token if there is one.
func (b *bucket) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// wait takes a token, sleeping until there is one; false when done closes
// first.
func (b *bucket) wait(done <-chan struct{}) bool {
	for {
		b.mu.Lock()
		b.refill()
		if b.tokens >= 1 {
			b.tokens--
			b.mu.Unlock()
			return true
		}
		d := time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
		b.mu.Unlock()
		t := time.NewTimer(max(d, time.Millisecond))
		select {
		case <-t.C:
		case <-done:
			t.Stop()
			return false
		}
	}
}

// limitListener accepts at most cap(slots) open connections, at most
// accept's rate: Accept waits for both, so the clients beyond wait in the
// kernel's accept queue.
type limitListener struct {
	net.Listener
	slots     chan struct{} // one per open connection
	accept    *bucket
	done      chan struct{} // closed by Close
	closeOnce sync.Once
	open, max atomic.Int64 // connections open now, and most ever
}

func newLimitListener(ln net.Listener, lim Limits) *limitListener {
	return &limitListener{
		Listener: ln, slots: make(chan struct{}, max(lim.MaxConns, 1)),
		accept: newBucket(lim.AcceptRate, lim.AcceptBurst, time.Now), done: make(chan struct{}),
	}
}

// Accept waits for a free connection slot and an accept token, then accepts.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	if !l.accept.wait(l.done) {
		<-l.slots
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	n := l.open.Add(1)
	for m := l.max.Load(); n > m && !l.max.CompareAndSwap(m, n); m = l.max.Load() {
	}
	return &limitConn{Conn: c, l: l}, nil
}

// Close closes the listener and ends the Accepts waiting.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn frees its listener's slot when closed.
type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.open.Add(-1)
		<-c.l.slots
	})
	return err
}

// connScrapes is the context key of a connection's count of scrapes served.
type connScrapes struct{}

// endpoint is the HTTP handler: the limits, and the exposition rendered at
// most once per RenderEvery.
type endpoint struct {
	lim      Limits
	gatherer prometheus.Gatherer
	inFlight chan struct{} // one per scrape being served
	rate     *bucket
	now      func() time.Time

	renderMu   sync.Mutex
	body       []byte // the last exposition; never written once published
	renderErr  error
	renderedAt time.Time // when the last render ended; zero: none yet

	// Counts, for ccbed_metrics_* and the tests.
	cur, maxInFlight            atomic.Int64
	renders, served, busy, slow atomic.Uint64
}

func newEndpoint(g prometheus.Gatherer, lim Limits) *endpoint {
	return &endpoint{
		lim: lim, gatherer: g, inFlight: make(chan struct{}, max(lim.MaxInFlight, 1)),
		rate: newBucket(lim.Rate, lim.Burst, time.Now), now: time.Now,
	}
}

// refuse answers a request with code at once and closes its connection
// (unread: a body it may have, keep-alive).
func refuse(w http.ResponseWriter, code int) {
	h := w.Header()
	h.Set("Connection", "close")
	h.Set("Retry-After", "1")
	http.Error(w, http.StatusText(code), code)
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path != Path:
		refuse(w, http.StatusNotFound)
		return
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		refuse(w, http.StatusMethodNotAllowed)
		return
	}
	select {
	case e.inFlight <- struct{}{}:
	default:
		e.busy.Add(1)
		refuse(w, http.StatusServiceUnavailable)
		return
	}
	defer func() { <-e.inFlight }()
	n := e.cur.Add(1)
	defer e.cur.Add(-1)
	for m := e.maxInFlight.Load(); n > m && !e.maxInFlight.CompareAndSwap(m, n); m = e.maxInFlight.Load() {
	}
	if !e.rate.take() {
		e.slow.Add(1)
		refuse(w, http.StatusTooManyRequests)
		return
	}
	body, err := e.exposition()
	if err != nil {
		refuse(w, http.StatusInternalServerError)
		return
	}
	e.served.Add(1)
	h := w.Header()
	if k, ok := r.Context().Value(connScrapes{}).(*int); ok {
		if *k++; *k >= e.lim.MaxRequestsPerConn {
			h.Set("Connection", "close")
		}
	}
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodGet {
		w.Write(body) // a client gone is its own business
	}
}

// exposition is the text of the last render, rendering anew when it is
// RenderEvery old or older: the collectors run at most once per RenderEvery,
// and scrapes that come while they run wait for their text.
func (e *endpoint) exposition() ([]byte, error) {
	e.renderMu.Lock()
	defer e.renderMu.Unlock()
	if !e.renderedAt.IsZero() && e.now().Sub(e.renderedAt) < e.lim.RenderEvery {
		return e.body, e.renderErr
	}
	mfs, err := e.gatherer.Gather()
	var buf bytes.Buffer
	buf.Grow(len(e.body))
	for _, mf := range mfs {
		if _, werr := expfmt.MetricFamilyToText(&buf, mf); werr != nil && err == nil {
			err = werr
		}
	}
	e.body, e.renderErr = buf.Bytes(), err
	e.renders.Add(1)
	e.renderedAt = e.now()
	return e.body, e.renderErr
}

// newHTTPServer is the endpoint's server: short timeouts, a small header, a
// count of the scrapes each connection served.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, connScrapes{}, new(int))
		},
	}
}

// endpointCollector is the endpoint's own counters.
type endpointCollector struct {
	e                       *endpoint
	ln                      *limitListener
	fs                      families
	scrapes, renders, conns *family
}

func newEndpointCollector(e *endpoint, ln *limitListener) *endpointCollector {
	c := &endpointCollector{e: e, ln: ln}
	fs := &c.fs
	c.scrapes = fs.counter("ccbed_metrics_scrapes_total", "Scrapes of this endpoint, by result: served, busy (503: too many in flight), rate_limited (429).", "result")
	c.renders = fs.counter("ccbed_metrics_renders_total", "Times the collectors ran (at most once per render interval, however many scrapes).")
	c.conns = fs.gauge("ccbed_metrics_connections_open", "Connections open to this endpoint.")
	return c
}

// Describe sends the Desc of every family.
func (c *endpointCollector) Describe(ch chan<- *prometheus.Desc) { c.fs.describe(ch) }

// Collect sends the counts.
func (c *endpointCollector) Collect(ch chan<- prometheus.Metric) {
	c.scrapes.emit(ch, float64(c.e.served.Load()), "served")
	c.scrapes.emit(ch, float64(c.e.busy.Load()), "busy")
	c.scrapes.emit(ch, float64(c.e.slow.Load()), "rate_limited")
	c.renders.emit(ch, float64(c.e.renders.Load()))
	c.conns.emit(ch, float64(c.ln.open.Load()))
}
