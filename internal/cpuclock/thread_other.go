//go:build !linux

package cpuclock

import "time"

// Thread is the CPU time the calling OS thread has used; outside Linux it
// is not measured and is 0.
func Thread() time.Duration { return 0 }
