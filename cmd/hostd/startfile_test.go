package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWaitStartFile: the instant is read once the file holds one, whenever
// it appears, and a partial write is read again; a file that never appears
// or never parses, and a cancelled wait, are errors that say so.
func TestWaitStartFile(t *testing.T) {
	dir := t.TempDir()
	at := time.Unix(0, 1_795_000_000_123_456_789)
	path := filepath.Join(dir, "start.ns")

	// Written while the host waits: first a partial line, then the whole.
	done := make(chan struct{})
	go func() {
		defer close(done)
		os.WriteFile(path+".tmp", []byte("2026-11-"), 0o644)
		os.Rename(path+".tmp", path)  // a partial instant: read again
		time.Sleep(3 * startFilePoll) // (whether the host reads the partial one or not, it must end on the whole)
		os.WriteFile(path+".tmp", []byte("1795000000123456789\n"), 0o644)
		os.Rename(path+".tmp", path)
	}()
	got, err := waitStartFile(context.Background(), path, time.Hour)
	<-done
	if err != nil || !got.Equal(at) {
		t.Fatalf("waitStartFile = %v, %v; want %v", got, err, at)
	}

	// A file that never parses is quoted when the wait is up; one that never
	// appears says so.
	os.WriteFile(path, []byte("soon"), 0o644)
	if _, err := waitStartFile(context.Background(), path, 0); err == nil || !strings.Contains(err.Error(), `"soon"`) {
		t.Errorf("unparsable file: %v", err)
	}
	if _, err := waitStartFile(context.Background(), filepath.Join(dir, "none"), 0); err == nil || !strings.Contains(err.Error(), "never appeared") {
		t.Errorf("missing file: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := waitStartFile(ctx, filepath.Join(dir, "none"), time.Hour); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("cancelled wait: %v", err)
	}
}
