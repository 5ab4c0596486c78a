// Package metrics is the daemons' optional Prometheus endpoint: switchd,
// hostd and pktgen serve their counters in the Prometheus text exposition
// format at http://ADDR/metrics when given -metrics ADDR (docs/metrics.md).
//
// Where it sits: beside the dataplane, never in it. Its collectors read what
// the loops already publish for the control plane: a switch's engine
// Snapshot (switchd.Engine.Snapshot, counters published every millisecond of
// engine time) and adapter Stats, a host's Progress hand-off
// (hostd/dataplane.Host.Progress), pktgen's Blaster.Snapshot. They run when
// the exposition is rendered, at most once per Limits.RenderEvery however
// many clients scrape; every scrape in between gets the same text. Nothing
// here runs per packet, and a daemon without -metrics runs no server at all.
//
// A scrape storm costs a bounded amount (Limits): a few scrapes in flight,
// a rate of them, a rate of accepted connections and a cap on open ones,
// short timeouts; a scrape beyond a limit is refused at once (503, 429).
//
// The endpoint has no authentication, so it listens on a loopback address
// only (127.0.0.0/8, ::1, localhost) unless the daemon is given -metrics-any
// as well (CheckAddr).
//
// A main adds the flags, checks them after parsing, and serves once its
// counters exist, before its lcore loops start:
//
//	mf := metrics.AddFlags(c.Flags)
//	...
//	stop, err := mf.Serve(metrics.Switch(eng, sw))
//	...
//	defer stop()
package metrics

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Path is where the endpoint serves the metrics.
const Path = "/metrics"

// stopTimeout bounds how long Stop waits for scrapes in progress.
const stopTimeout = 2 * time.Second

// Flags are a daemon's -metrics and -metrics-any flags.
type Flags struct {
	// Addr is -metrics: the host:port to serve on; empty: no endpoint.
	Addr string
	// Any is -metrics-any: allow an Addr that is not a loopback address.
	Any bool
}

// AddFlags declares -metrics and -metrics-any on fs and returns where their
// values go.
func AddFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.StringVar(&f.Addr, "metrics", "", "serve Prometheus metrics at http://`ADDR`/metrics, a loopback host:port such as 127.0.0.1:9100 (default off; docs/metrics.md)")
	fs.BoolVar(&f.Any, "metrics-any", false, "allow -metrics on an address that is not loopback (the endpoint has no authentication)")
	return f
}

// Check reports what is wrong with the flags (nil when -metrics is not
// given, or f is nil), before anything is started.
func (f *Flags) Check() error {
	if f == nil || f.Addr == "" {
		return nil
	}
	if err := CheckAddr(f.Addr, f.Any); err != nil {
		return fmt.Errorf("-metrics: %w", err)
	}
	return nil
}

// Serve starts the endpoint with cs (see Start) when -metrics was given, and
// returns the function that stops it; without -metrics (or with a nil f) it
// starts nothing and stop does nothing.
func (f *Flags) Serve(cs ...prometheus.Collector) (stop func(), err error) {
	if f == nil || f.Addr == "" {
		return func() {}, nil
	}
	s, err := Start(f.Addr, f.Any, cs...)
	if err != nil {
		return nil, fmt.Errorf("-metrics: %w", err)
	}
	return s.Stop, nil
}

// CheckAddr checks a -metrics address: host:port with a numeric port (0
// picks a free one) and a host that is a loopback IP address or "localhost".
// Any other host (an empty one, which means every interface, included) is
// refused unless allowAny is set.
func CheckAddr(addr string, allowAny bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port, such as 127.0.0.1:9100: %v", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%q: port %q is not a number from 0 to 65535", addr, port)
	}
	if allowAny || IsLoopback(host) {
		return nil
	}
	what := "not a loopback address"
	if host == "" {
		what = "no host means every interface"
	}
	return fmt.Errorf("%q: %s: the endpoint has no authentication, so it serves on loopback only "+
		"(127.0.0.1, ::1, localhost); give -metrics-any as well to serve on %q anyway", addr, what, host)
}

// IsLoopback reports whether host (an IP address without brackets, or a
// name) is "localhost" or a loopback address: 127.0.0.0/8 (IPv4-mapped too)
// or ::1.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Zone() == "" && a.Unmap().IsLoopback()
}

// NodeLabel is the label that tells nodes apart when one process serves
// several (testbed run -clock dpdk: every switch and host of the fabric).
const NodeLabel = "node"

// OfNode is a node's collector, served with the label NodeLabel = Node on
// every metric it sends (StartLimited wraps it). Registered elsewhere, it
// is its Collector alone, without the label.
type OfNode struct {
	Node string
	prometheus.Collector
}

// Server is a running endpoint.
type Server struct {
	srv  *http.Server
	ln   *limitListener
	ep   *endpoint
	done chan struct{}
}

// Start is StartLimited with DefaultLimits.
func Start(addr string, allowAny bool, cs ...prometheus.Collector) (*Server, error) {
	return StartLimited(addr, allowAny, DefaultLimits, cs...)
}

// StartLimited listens on addr (CheckAddr's rules; the listening address is
// checked again, so that "localhost" resolving elsewhere is refused too) and
// serves the Prometheus text format at Path within lim: ccbed_build_info,
// the endpoint's own ccbed_metrics_* counters, the Go runtime's and the
// process's standard metrics, and cs. It returns once the socket listens: a
// scrape may come at once.
func StartLimited(addr string, allowAny bool, lim Limits, cs ...prometheus.Collector) (*Server, error) {
	if err := CheckAddr(addr, allowAny); err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(BuildInfo(), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, c := range cs {
		var r prometheus.Registerer = reg
		if n, ok := c.(OfNode); ok {
			r, c = prometheus.WrapRegistererWith(prometheus.Labels{NodeLabel: n.Node}, reg), n.Collector
		}
		if err := r.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); ok && !allowAny && !ta.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("%q listens on %s, not a loopback address; give -metrics-any to allow it", addr, ta.IP)
	}
	s := &Server{ln: newLimitListener(ln, lim), ep: newEndpoint(reg, lim), done: make(chan struct{})}
	reg.MustRegister(newEndpointCollector(s.ep, s.ln))
	s.srv = newHTTPServer(s.ep)
	go func() {
		defer close(s.done)
		s.srv.Serve(s.ln) // http.ErrServerClosed after Stop; nothing else can end it
	}()
	return s, nil
}

// Addr is the address the server listens on (with the port it picked for
// port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the endpoint's URL: http://Addr/metrics.
func (s *Server) URL() string { return "http://" + s.Addr() + Path }

// Stop stops accepting scrapes, waits up to 2 s for those in progress, then
// closes the server. It may be called more than once.
func (s *Server) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
	}
	<-s.done
}
