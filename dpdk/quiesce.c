/* quiesce.c: the capture guard's wait (shim.h, "The capture guard").
 *
 * rte_pdump (DPDK 22.11) serves a capturing secondary (dpdk-dumpcap) by
 * adding rx and tx callbacks that copy every frame into the secondary's
 * mempool and ring. When the secondary detaches, rte_pdump_disable asks this
 * process to remove the callbacks, and as soon as the answer comes it frees
 * that ring and mempool. rte_eth_remove_rx_callback only unlinks a callback:
 * an lcore that loaded it before is still copying into the pool, and the
 * secondary's free of the pool's pages, which this process's memory
 * subsystem carries out (malloc_mp's free request), unmaps them under it:
 * SIGSEGV inside the burst (seen in cmd/switchd's TestDumpcap). DPDK's
 * rule for removed callbacks is that they stay in use until every data
 * plane thread has passed a quiescent state; rte_pdump waits for none.
 *
 * The memory subsystem announces every free of pages to the handlers
 * rte_mem_event_callback_register registered, on the thread that frees
 * them and before it unmaps them (RTE_MEM_EVENT_FREE). The handler here
 * waits until every burst that had begun when it came has returned: the
 * bursts after it load the callback list after the removal (each burst's
 * count of its entry is a full barrier, and so is the fence below), so none
 * of them can run a removed callback. A burst takes microseconds; an lcore
 * off its CPU may take longer, and the wait is bounded (BURST_QUIESCE_MS)
 * so that a lost thread cannot hold the memory subsystem for ever. */
#include <sched.h>

#include <rte_memory.h>
#include <rte_log.h>
#include <rte_pause.h>

#include "shim.h"

int ccbed_burst_guard;
struct ccbed_burst_slot ccbed_burst_slots[RTE_MAX_LCORE + 1];

#define BURST_QUIESCE_MS 2000
#define BURST_EVENT_NAME "ccbed_burst_guard"

/* done reports whether slot i has returned from every burst it had begun when
 * its count was snap. An EAL lcore's slot has one thread, which returns from
 * its bursts in order: out reaching snap says so. The shared slot of the other
 * threads needs an instant with none of them inside: out read, then in, equal
 * (both only grow, so at the first read in was out too). */
static int done(unsigned i, uint64_t snap)
{
	struct ccbed_burst_slot *s = &ccbed_burst_slots[i];
	uint64_t out = __atomic_load_n(&s->out, __ATOMIC_ACQUIRE);
	if (i < RTE_MAX_LCORE)
		return out >= snap;
	return out >= snap || out == __atomic_load_n(&s->in, __ATOMIC_ACQUIRE);
}

int ccbed_burst_quiesce(unsigned timeout_ms)
{
	uint64_t snap[RTE_MAX_LCORE + 1];
	const uint64_t hz = rte_get_tsc_hz();
	const uint64_t end = rte_get_tsc_cycles() + hz / 1000 * timeout_ms;

	/* Whatever this thread changed before (a callback removed) is seen by
	 * every burst that counts its entry after this fence. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (unsigned i = 0; i <= RTE_MAX_LCORE; i++)
		snap[i] = __atomic_load_n(&ccbed_burst_slots[i].in, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i <= RTE_MAX_LCORE; i++) {
		for (unsigned spins = 0; !done(i, snap[i]); spins++) {
			if (rte_get_tsc_cycles() > end)
				return -1;
			if (spins < 64)
				rte_pause();
			else
				sched_yield(); /* the lcore may need this CPU */
		}
	}
	return 0;
}

static void on_mem_event(enum rte_mem_event type, const void *addr, size_t len, void *arg)
{
	(void)arg;
	if (type != RTE_MEM_EVENT_FREE)
		return;
	if (ccbed_burst_quiesce(BURST_QUIESCE_MS) != 0)
		RTE_LOG(WARNING, EAL, "ccbed: a burst did not return within %d ms of a free of %zu B at %p: a pdump callback may still use it\n",
			BURST_QUIESCE_MS, len, addr);
}

int ccbed_burst_guard_start(void)
{
	if (__atomic_load_n(&ccbed_burst_guard, __ATOMIC_RELAXED))
		return 0;
	/* Legacy memory (--legacy-mem) never frees pages: nothing to wait for. */
	if (rte_mem_event_callback_register(BURST_EVENT_NAME, on_mem_event, NULL) != 0 && rte_errno != ENOTSUP)
		return -rte_errno;
	__atomic_store_n(&ccbed_burst_guard, 1, __ATOMIC_SEQ_CST);
	return 0;
}

void ccbed_burst_guard_stop(void)
{
	if (!__atomic_load_n(&ccbed_burst_guard, __ATOMIC_RELAXED))
		return;
	rte_mem_event_callback_unregister(BURST_EVENT_NAME, NULL);
	__atomic_store_n(&ccbed_burst_guard, 0, __ATOMIC_SEQ_CST);
}
