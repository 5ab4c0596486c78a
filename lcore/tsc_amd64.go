package lcore

// rdtsc reads the time-stamp counter without a cgo call.
func rdtsc() uint64
