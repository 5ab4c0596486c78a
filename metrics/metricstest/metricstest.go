// Package metricstest helps tests scrape the daemons' /metrics endpoint
// (package metrics): a free loopback address to serve on, a scrape, and one
// sample's value out of the text format.
package metricstest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FreeLoopbackAddr is a 127.0.0.1 address with a port that was free a moment
// ago.
func FreeLoopbackAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Scrape GETs http://addr/metrics and returns the body; a status other than
// 200 is an error.
func Scrape(addr string) (string, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return string(b), err
}

// Value is the value of the sample name{labels} in a scrape (labels as the
// text format writes them, sorted by name; "" for a sample without labels);
// false when there is none.
func Value(text, name, labels string) (float64, bool) {
	prefix := name + " "
	if labels != "" {
		prefix = name + "{" + labels + "} "
	}
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}
