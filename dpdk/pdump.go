package dpdk

/*
#include <string.h>
#include <rte_pdump.h>
#include <rte_pcapng.h>
#include "shim.h"

// ccbed_pdump_init is rte_pdump_init, then one rte_pcapng_copy of a frame of
// mp with a timestamp a second ahead, so that rte_pcapng's clock is set before
// a capture starts. DPDK 22.11 sets that clock lazily, inside the first
// rte_pcapng_copy, after rte_pdump has read the TSC of the burst: the first
// frame's TSC then lies before the clock's origin, the unsigned difference
// wraps, and every timestamp of the capture lands centuries off. A primed
// clock never sees a TSC before its origin (a second ahead keeps the priming
// conversion from moving the origin). Returns 0 or a negative errno.
static int ccbed_pdump_init(struct rte_mempool *mp) {
	int rc = rte_pdump_init();
	if (rc < 0)
		return rc == -1 ? -rte_errno : rc;
	if (mp == NULL)
		return 0;
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	if (m == NULL)
		return -ENOBUFS;
	char *p = rte_pktmbuf_append(m, 64);
	if (p != NULL)
		memset(p, 0, 64);
	struct rte_mbuf *c = rte_pcapng_copy(0, 0, m, mp, 64,
		rte_get_tsc_cycles() + rte_get_tsc_hz(), RTE_PCAPNG_DIRECTION_UNKNOWN);
	rte_pktmbuf_free(c);
	rte_pktmbuf_free(m);
	return 0;
}

static int ccbed_mempool_ops_count(void) { return (int)rte_mempool_ops_table.num_ops; }
static const char *ccbed_mempool_ops_name(int i) { return rte_mempool_ops_table.ops[i].name; }
*/
import "C"

import (
	"fmt"
	"slices"
	"strings"
)

// PdumpInit serves DPDK's packet capture framework (rte_pdump_init) so that
// dpdk-dumpcap or dpdk-pdump, run as secondary processes, can capture what
// this process's ports receive and send. Call it after EALInit, once; the EAL
// must run as a multi-process primary on hugepages (no --no-huge, --no-shconf
// or --in-memory). pool, when not nil, is used once to set rte_pcapng's clock
// (see docs/capture.md, "dpdk-dumpcap"). Until a capture is enabled it costs
// nothing per frame: the rx and tx callbacks are registered only while a
// secondary captures.
func PdumpInit(pool *Mempool) error {
	if rc := C.ccbed_pdump_init(pool.c()); rc < 0 {
		return &Error{Op: "rte_pdump_init", Code: int(-rc)}
	}
	return nil
}

// PdumpUninit stops serving captures (rte_pdump_uninit). Call it before
// EALCleanup, after the ports stopped.
func PdumpUninit() error {
	return errFromRC("rte_pdump_uninit", C.rte_pdump_uninit())
}

// MempoolOps lists the mempool drivers this process registered, in the order
// of their index. A secondary process's mempool is used by the primary with
// the secondary's index into this table: dpdk-dumpcap captures nothing (every
// frame counted as dropped) when its table's order differs from the primary's
// (docs/capture.md, "dpdk-dumpcap").
func MempoolOps() []string {
	n := int(C.ccbed_mempool_ops_count())
	out := make([]string, n)
	for i := range out {
		out[i] = C.GoString(C.ccbed_mempool_ops_name(C.int(i)))
	}
	return out
}

// CheckPdumpEAL checks that EAL arguments leave a primary that secondary
// processes can join, as PdumpInit needs: --no-huge (memory a secondary
// cannot map), --no-shconf and --in-memory (no shared configuration, no
// multi-process channel) and --huge-unlink (files unlinked before a secondary
// could map them; =existing and =never keep them) are errors that say so.
func CheckPdumpEAL(args []string) error {
	for _, a := range args {
		name, val, _ := strings.Cut(a, "=")
		switch {
		case name == "--no-huge", name == "--no-shconf", name == "--in-memory",
			name == "--huge-unlink" && val != "existing" && val != "never":
			return fmt.Errorf("pdump (dpdk-dumpcap) needs a multi-process primary on hugepages: drop %s from the EAL arguments", name)
		}
	}
	return nil
}

// PdumpLcoreClash returns a warning when lcore 0 is among lcores (the lcores
// whose loops receive and send), "" otherwise. dpdk-dumpcap's own lcore is
// the first CPU it may run on, 0 unless it is pinned; rte_pdump copies each
// frame into dumpcap's mempool from the capturing lcore and dumpcap frees
// them from its own, and two threads of one lcore id share the pool's cache
// of that lcore without a lock: mbufs are lost or handed out twice, and the
// capture drops nearly every frame or stops with "pcapng file write failed"
// (docs/capture.md, "dpdk-dumpcap").
func PdumpLcoreClash(lcores []uint) string {
	if !slices.Contains(lcores, 0) {
		return ""
	}
	return "pdump: a loop runs on lcore 0, which is dpdk-dumpcap's own lcore unless it is pinned: run it as taskset -c N dpdk-dumpcap ..., N a CPU that is not one of the loops' lcore ids, or give the loops lcore ids from 1 (--lcores)"
}
