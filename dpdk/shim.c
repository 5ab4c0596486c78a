#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "shim.h"
#include "_cgo_export.h"

int ccbed_eal_init(int argc, char **argv) { return rte_eal_init(argc, argv); }

/* The capture of rte_eal_init's output (ccbed_eal_init_captured). While it is
 * active, file descriptors 1 and 2 are cap_out_fd and cap_err_fd; cap_tty_out
 * and cap_tty_err are the originals. A fatal signal or an exit() during the
 * init (rte_panic aborts; rte_exit exits) would leave what DPDK wrote in the
 * unlinked files, and the process silent: cap_on_signal and cap_at_exit copy
 * it to the original standard error first, the last CAP_KEEP bytes of each
 * stream, and say what ended the init. */
#define CAP_KEEP (64 * 1024)
static int cap_active; /* 1 while the capture is on; taken atomically */
static int cap_out_fd = -1, cap_err_fd = -1, cap_tty_out = -1, cap_tty_err = -1;
static const int cap_sigs[] = {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE};
static const char *const cap_sig_names[] = {"SIGABRT", "SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"};
#define CAP_NSIGS (sizeof cap_sigs / sizeof cap_sigs[0])
static struct sigaction cap_old[CAP_NSIGS];
static char cap_buf[4096];

/* cap_write writes all of p (async-signal-safe). */
static void cap_write(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void cap_puts(int fd, const char *s) { cap_write(fd, s, strlen(s)); }

/* cap_copy copies the last CAP_KEEP bytes of the file from to fd to. */
static void cap_copy(int from, int to)
{
	struct stat st;
	off_t off = 0;
	ssize_t n;

	if (fstat(from, &st) == 0 && st.st_size > CAP_KEEP) {
		off = st.st_size - CAP_KEEP;
		cap_puts(to, "[... earlier output cut]\n");
	}
	while ((n = pread(from, cap_buf, sizeof cap_buf, off)) > 0) {
		cap_write(to, cap_buf, (size_t)n);
		off += n;
	}
}

/* cap_release ends the capture, once: with why, it first copies what DPDK
 * wrote (standard output, then standard error) to the original standard
 * error and says why; then it puts descriptors 1 and 2 back. Async-signal-safe. */
static void cap_release(const char *why)
{
	if (!__atomic_exchange_n(&cap_active, 0, __ATOMIC_SEQ_CST))
		return;
	if (why != NULL) {
		cap_puts(cap_tty_err, "ccbed: rte_eal_init did not return: ");
		cap_puts(cap_tty_err, why);
		cap_puts(cap_tty_err, "; what DPDK wrote:\n");
		cap_copy(cap_out_fd, cap_tty_err);
		cap_copy(cap_err_fd, cap_tty_err);
		cap_puts(cap_tty_err, "ccbed: end of DPDK's output; rte_eal_init: ");
		cap_puts(cap_tty_err, why);
		cap_puts(cap_tty_err, "\n");
	}
	dup2(cap_tty_out, 1);
	dup2(cap_tty_err, 2);
}

/* cap_restore_handlers puts back the handlers cap_on_signal replaced. */
static void cap_restore_handlers(void)
{
	size_t i;

	for (i = 0; i < CAP_NSIGS; i++)
		sigaction(cap_sigs[i], &cap_old[i], NULL);
}

/* cap_on_signal: a fatal signal during the init. It releases the capture
 * (DPDK's text and the signal to the terminal), puts the previous handlers
 * (Go's) back and lets them handle the signal: a fault comes again when the
 * handler returns; a signal sent (abort's raise) is raised again, pending
 * until then. */
static void cap_on_signal(int sig, siginfo_t *info, void *ctx)
{
	const char *name = "a fatal signal";
	size_t i;

	(void)ctx;
	for (i = 0; i < CAP_NSIGS; i++)
		if (cap_sigs[i] == sig)
			name = cap_sig_names[i];
	cap_release(name);
	cap_restore_handlers();
	if (info == NULL || info->si_code <= 0)
		raise(sig);
}

static void cap_at_exit(void) { cap_release("exit() called (rte_exit)"); }

int ccbed_eal_init_captured(int argc, char **argv, int out_fd, int err_fd, int *captured)
{
	static int at_exit_set;
	struct sigaction sa;
	int saved_out, saved_err, rc, err;
	size_t i;

	*captured = 0;
	fflush(stdout);
	fflush(stderr);
	saved_out = dup(1);
	saved_err = dup(2);
	if (saved_out < 0 || saved_err < 0 || dup2(out_fd, 1) < 0) {
		if (saved_out >= 0)
			close(saved_out);
		if (saved_err >= 0)
			close(saved_err);
		return rte_eal_init(argc, argv);
	}
	if (dup2(err_fd, 2) < 0) {
		dup2(saved_out, 1);
		close(saved_out);
		close(saved_err);
		return rte_eal_init(argc, argv);
	}
	cap_out_fd = out_fd;
	cap_err_fd = err_fd;
	cap_tty_out = saved_out;
	cap_tty_err = saved_err;
	if (!at_exit_set)
		at_exit_set = atexit(cap_at_exit) == 0;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = cap_on_signal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < CAP_NSIGS; i++)
		sigaction(cap_sigs[i], &sa, &cap_old[i]);
	__atomic_store_n(&cap_active, 1, __ATOMIC_SEQ_CST);

	rc = rte_eal_init(argc, argv);
	err = rte_errno;
	fflush(stdout);
	fflush(stderr);
	cap_release(NULL);
	cap_restore_handlers();
	close(saved_out);
	close(saved_err);
	rte_errno = err;
	*captured = 1;
	return rc;
}
int ccbed_errno(void) { return rte_errno; }

uint16_t ccbed_rx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(port, queue, pkts, n);
}

uint16_t ccbed_tx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_tx_burst(port, queue, pkts, n);
}

uint16_t ccbed_rx_tx_burst(uint16_t rxport, uint16_t rxq, uint16_t txport, uint16_t txq,
			   struct rte_mbuf **pkts, uint16_t n, uint16_t *sent)
{
	uint16_t nb = rte_eth_rx_burst(rxport, rxq, pkts, n);
	uint16_t nt = 0;
	if (nb > 0) {
		nt = rte_eth_tx_burst(txport, txq, pkts, nb);
		if (nt < nb)
			rte_pktmbuf_free_bulk(pkts + nt, nb - nt);
	}
	*sent = nt;
	return nb;
}

int ccbed_pktmbuf_alloc_bulk(struct rte_mempool *mp, struct rte_mbuf **pkts, unsigned n)
{
	return rte_pktmbuf_alloc_bulk(mp, pkts, n);
}

void ccbed_pktmbuf_free_bulk(struct rte_mbuf **pkts, unsigned n) { rte_pktmbuf_free_bulk(pkts, n); }
unsigned ccbed_mempool_avail(struct rte_mempool *mp) { return rte_mempool_avail_count(mp); }
unsigned ccbed_mempool_in_use(struct rte_mempool *mp) { return rte_mempool_in_use_count(mp); }

unsigned ccbed_ring_enqueue_burst(struct rte_ring *r, struct rte_mbuf **objs, unsigned n, unsigned *free_space)
{
	return rte_ring_enqueue_burst(r, (void *const *)objs, n, free_space);
}

unsigned ccbed_ring_dequeue_burst(struct rte_ring *r, struct rte_mbuf **objs, unsigned n, unsigned *avail)
{
	return rte_ring_dequeue_burst(r, (void **)objs, n, avail);
}

unsigned ccbed_ring_count(const struct rte_ring *r) { return rte_ring_count(r); }

uint64_t ccbed_rdtsc(void) { return rte_rdtsc(); }
uint64_t ccbed_tsc_hz(void) { return rte_get_tsc_hz(); }

static int ccbed_lcore_trampoline(void *arg)
{
	return ccbedLcoreEntry((uintptr_t)arg);
}

int ccbed_remote_launch(unsigned lcore, uintptr_t handle)
{
	return rte_eal_remote_launch(ccbed_lcore_trampoline, (void *)handle, lcore);
}

int ccbed_eth_link(uint16_t port, uint32_t *speed, int *up, int *duplex)
{
	struct rte_eth_link link;
	int rc = rte_eth_link_get_nowait(port, &link);
	if (rc != 0)
		return rc;
	*speed = link.link_speed;
	*up = link.link_status;
	*duplex = link.link_duplex;
	return 0;
}

int ccbed_eth_dev_configure_simple(uint16_t port, uint16_t nrx, uint16_t ntx, uint32_t mtu)
{
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	if (mtu > 0)
		conf.rxmode.mtu = mtu;
	if (nrx > 1) {
		/* Several rx queues: RSS on the IPv4 addresses and UDP ports (the
		 * driver's default key), where the device hashes them; a device
		 * without RSS (net_ring, net_null) keeps its own queue mapping. */
		struct rte_eth_dev_info info;
		int rc = rte_eth_dev_info_get(port, &info);
		if (rc != 0)
			return rc;
		uint64_t hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;
		if (hf != 0) {
			conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
			conf.rx_adv_conf.rss_conf.rss_hf = hf;
		}
	}
	return rte_eth_dev_configure(port, nrx, ntx, &conf);
}

int ccbed_eth_from_rings(const char *name, struct rte_ring **rx, unsigned nrx, struct rte_ring **tx, unsigned ntx,
			 unsigned socket)
{
	return rte_eth_from_rings(name, rx, nrx, tx, ntx, socket);
}

int ccbed_eth_from_ring_pair(const char *name, struct rte_ring *rx, struct rte_ring *tx, unsigned socket)
{
	struct rte_ring *rxq[1] = {rx};
	struct rte_ring *txq[1] = {tx};
	return rte_eth_from_rings(name, rxq, 1, txq, 1, socket);
}

int ccbed_eth_flow_ctrl_set(uint16_t port, int mode)
{
	struct rte_eth_fc_conf fc;
	int rc = rte_eth_dev_flow_ctrl_get(port, &fc);
	if (rc != 0)
		return rc;
	fc.mode = (enum rte_eth_fc_mode)mode;
	return rte_eth_dev_flow_ctrl_set(port, &fc);
}

int ccbed_eth_flow_ctrl_get(uint16_t port, int *mode)
{
	struct rte_eth_fc_conf fc;
	int rc = rte_eth_dev_flow_ctrl_get(port, &fc);
	if (rc == 0)
		*mode = (int)fc.mode;
	return rc;
}

int ccbed_eth_pfc_set(uint16_t port, uint8_t priority, uint32_t high, uint32_t low, uint16_t pause_time)
{
	struct rte_eth_pfc_conf pfc;
	memset(&pfc, 0, sizeof(pfc));
	pfc.fc.mode = RTE_ETH_FC_FULL;
	pfc.fc.high_water = high;
	pfc.fc.low_water = low;
	pfc.fc.pause_time = pause_time;
	pfc.fc.send_xon = 1;
	pfc.priority = priority;
	return rte_eth_dev_priority_flow_ctrl_set(port, &pfc);
}

int ccbed_eth_dev_limits(uint16_t port, uint32_t *max_rx_pktlen, uint16_t *max_mtu, uint16_t *min_mtu,
			 uint16_t *max_rxq, uint16_t *max_txq, uint32_t *speed_capa, char *driver, size_t driver_len)
{
	struct rte_eth_dev_info info;
	int rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0)
		return rc;
	*max_rx_pktlen = info.max_rx_pktlen;
	*max_mtu = info.max_mtu;
	*min_mtu = info.min_mtu;
	*max_rxq = info.max_rx_queues;
	*max_txq = info.max_tx_queues;
	*speed_capa = info.speed_capa;
	if (driver_len > 0) {
		driver[0] = 0;
		if (info.driver_name != NULL) {
			strncpy(driver, info.driver_name, driver_len - 1);
			driver[driver_len - 1] = 0;
		}
	}
	return 0;
}

int ccbed_lcore_is_enabled(unsigned lcore) { return rte_lcore_is_enabled(lcore); }
uint64_t ccbed_physmem_size(void) { return rte_eal_get_physmem_size(); }
