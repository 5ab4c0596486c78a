package dataplane_test

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccbed/ccbed/metrics"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/switchd/dataplane"
)

// stormClients is how many clients scrape at once in a storm: the outside
// test that found metrics starving the dataplane ran 200.
const stormClients = 200

func init() { dataplane.ScrapeStorm = scrapeStorm }

// scrapeStorm serves eng's and s's metrics on a loopback port, as switchd
// -metrics does (metrics.Start, its default limits), and starts
// stormClients goroutines that scrape it over kept-alive connections as
// fast as it answers, whatever the answer. stop ends them and the endpoint
// and returns the scrapes answered (any status) and those served (200 OK).
func scrapeStorm(tb testing.TB, eng *switchd.Engine, s *dataplane.Switch) func() (uint64, uint64) {
	srv, err := metrics.Start("127.0.0.1:0", false, metrics.Switch(eng, s))
	if err != nil {
		tb.Fatal(err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: stormClients}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	var made, served atomic.Uint64
	var wg sync.WaitGroup
	for range stormClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL(), nil)
				if err != nil {
					return
				}
				resp, err := client.Do(req)
				if err != nil {
					continue // the storm's end cancelled it, or a timeout
				}
				made.Add(1)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					served.Add(1)
				}
			}
		}()
	}
	return func() (uint64, uint64) {
		cancel()
		wg.Wait()
		tr.CloseIdleConnections()
		srv.Stop()
		return made.Load(), served.Load()
	}
}
