package dpdk

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

var eal struct {
	sync.Mutex
	done  bool
	err   error
	mainQ chan func()
}

// ErrEALInitialised is returned by EALInit after a successful initialisation: the
// EAL initialises once per process.
var ErrEALInitialised = errors.New("dpdk: EAL already initialised in this process")

// EALInit initialises the EAL with args (without the program name; for example
// "--no-huge", "-m", "1024", "--no-pci", "--no-shconf", "--vdev=net_ring0"). It
// returns an error instead of exiting the process; a second call returns
// ErrEALInitialised, or the first call's error if that failed (DPDK cannot retry).
//
// The EAL is initialised on a dedicated, locked OS thread that then becomes the
// main lcore: it keeps the main lcore's affinity and thread-local lcore id and
// runs the functions given to RunOnMainLcore. No other goroutine ever runs on it,
// so the pinning does not leak into the Go runtime's threads.
func EALInit(args []string) error {
	eal.Lock()
	defer eal.Unlock()
	if eal.done {
		if eal.err != nil {
			return eal.err
		}
		return ErrEALInitialised
	}
	if err := CheckEALArgs(args); err != nil {
		return err
	}
	eal.done = true
	// argv and its strings stay allocated for the life of the process: the EAL
	// may keep pointers into them.
	argv := (**C.char)(C.calloc(C.size_t(len(args)+2), C.size_t(unsafe.Sizeof(uintptr(0)))))
	av := unsafe.Slice(argv, len(args)+2)
	av[0] = C.CString("ccbed")
	for i, a := range args {
		av[i+1] = C.CString(a)
	}
	res := make(chan error)
	eal.mainQ = make(chan func())
	go func() {
		runtime.LockOSThread() // never unlocked: this thread is the main lcore
		rc, detail := ealInitCaptured(C.int(len(args)+1), argv)
		if rc < 0 {
			err := errFromRC("rte_eal_init", rc)
			if detail != "" {
				err = fmt.Errorf("%w: %s", err, detail)
			}
			res <- err
			return
		}
		res <- nil
		for fn := range eal.mainQ {
			fn()
		}
	}()
	eal.err = <-res
	return eal.err
}

// EALCleanup releases the EAL's resources (rte_eal_cleanup). Call it once, after
// every port is closed and every lcore has returned; DPDK cannot be used
// afterwards in this process.
func EALCleanup() error {
	return errFromRC("rte_eal_cleanup", C.rte_eal_cleanup())
}

// RunOnMainLcore runs fn on the main lcore's thread and waits for it to return.
// It panics if the EAL is not initialised.
func RunOnMainLcore(fn func()) {
	if eal.mainQ == nil {
		panic("dpdk: RunOnMainLcore before EALInit")
	}
	done := make(chan struct{})
	eal.mainQ <- func() { fn(); close(done) }
	<-done
}

// LcoreCount is the number of lcores the EAL enabled.
func LcoreCount() int { return int(C.rte_lcore_count()) }

// MainLcore is the id of the main lcore.
func MainLcore() uint { return uint(C.rte_get_main_lcore()) }

// Lcores returns the ids of the enabled lcores; withMain says whether to include
// the main lcore.
func Lcores(withMain bool) []uint {
	skip := C.int(1)
	if withMain {
		skip = 0
	}
	var out []uint
	for id := C.rte_get_next_lcore(^C.uint(0), skip, 0); id < C.RTE_MAX_LCORE; id = C.rte_get_next_lcore(id, skip, 0) {
		out = append(out, uint(id))
	}
	return out
}

// LcoreSocket is the NUMA socket of an lcore.
func LcoreSocket(lcore uint) int { return int(C.rte_lcore_to_socket_id(C.uint(lcore))) }

// SocketAny selects any NUMA socket in allocation calls.
const SocketAny = -1

// TSC reads the time-stamp counter (one cgo call: use per burst, not per packet).
func TSC() uint64 { return uint64(C.ccbed_rdtsc()) }

// TSCHz is the TSC frequency.
func TSCHz() uint64 { return uint64(C.ccbed_tsc_hz()) }

// CheckEALArgs checks an EAL argument list before EALInit hands it to
// rte_eal_init: no empty argument or one with a NUL byte (C would cut it
// short), and none of -h, --help, -v, which make the EAL print and exit.
func CheckEALArgs(args []string) error {
	for i, a := range args {
		switch {
		case a == "":
			return fmt.Errorf("dpdk: EAL argument %d is empty", i+1)
		case strings.IndexByte(a, 0) >= 0:
			return fmt.Errorf("dpdk: EAL argument %d %q has a NUL byte", i+1, a)
		case a == "-h" || a == "--help" || a == "-v":
			return fmt.Errorf("dpdk: EALInit: %q would make the EAL print and exit; not allowed", a)
		}
	}
	return nil
}

// ealInitCaptured runs rte_eal_init with the process's standard output and
// error going to temporary files. On success their contents are written out
// as they came (the EAL's log lines, in order per stream). On failure the
// usage text DPDK prints to standard output for a bad argument (87 lines) is
// dropped, and detail is what names the problem, on one line: getopt's
// message from standard error ("unrecognized option '--bogus'") and the EAL's
// own log lines ("EAL: invalid core list syntax"). When the files cannot be
// made, the EAL runs with the descriptors as they are. Should rte_eal_init
// not return (rte_panic's abort, a fault, rte_exit), the C side copies what
// the files hold to the real standard error, with the signal or the exit,
// before the process ends (shim.h, ccbed_eal_init_captured).
func ealInitCaptured(argc C.int, argv **C.char) (C.int, string) {
	outF, err1 := os.CreateTemp("", "ccbed-eal-out-*")
	errF, err2 := os.CreateTemp("", "ccbed-eal-err-*")
	for _, f := range []*os.File{outF, errF} {
		if f != nil {
			os.Remove(f.Name())
			defer f.Close()
		}
	}
	if err1 != nil || err2 != nil {
		return C.ccbed_eal_init(argc, argv), ""
	}
	var captured C.int
	rc := C.ccbed_eal_init_captured(argc, argv, C.int(outF.Fd()), C.int(errF.Fd()), &captured)
	if captured == 0 {
		return rc, ""
	}
	read := func(f *os.File) []byte {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil
		}
		b, _ := io.ReadAll(f)
		return b
	}
	out, errb := read(outF), read(errF)
	if rc >= 0 {
		os.Stdout.Write(out)
		os.Stderr.Write(errb)
		return rc, ""
	}
	return rc, ealFailureDetail(out, errb)
}

// ealFailureDetail is the one line that says why rte_eal_init failed, from
// what it wrote to standard output (log lines "EAL: ...", among the usage
// text) and standard error (getopt's "ccbed: unrecognized option ...").
func ealFailureDetail(out, errb []byte) string {
	var lines, generic []string
	add := func(text []byte, stderr bool) {
		for _, l := range bytes.Split(text, []byte("\n")) {
			s := strings.TrimSpace(strings.TrimPrefix(string(l), "ccbed: "))
			switch {
			case s == "":
			case strings.Contains(s, "Invalid 'command line' arguments"):
				generic = append(generic, s)
			case strings.HasPrefix(s, "EAL: Detected "): // information, not the failure
			case strings.HasPrefix(s, "EAL: "), stderr:
				lines = append(lines, s)
			}
		}
	}
	add(errb, true)
	add(out, false)
	seen := map[string]bool{}
	uniq := lines[:0]
	for _, l := range lines {
		if !seen[l] {
			seen[l] = true
			uniq = append(uniq, l)
		}
	}
	lines = uniq
	if len(lines) == 0 && len(generic) > 0 {
		lines = generic[:1]
	}
	if len(lines) > 3 {
		lines = lines[:3]
	}
	return strings.Join(lines, "; ")
}
