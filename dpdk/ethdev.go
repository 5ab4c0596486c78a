package dpdk

/*
#include <stdlib.h>
#include <rte_bus_vdev.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"net"
	"sync"
	"unsafe"
)

// EthPort is an ethdev port id.
type EthPort uint16

// MaxEthPorts is the most ethdev ports one process can have
// (RTE_MAX_ETHPORTS of the DPDK build: 32 in Debian's).
const MaxEthPorts = int(C.RTE_MAX_ETHPORTS)

// EthPortCount is the number of available ethdev ports.
func EthPortCount() int { return int(C.rte_eth_dev_count_avail()) }

// EthPortByName finds a port by its device name: a PCI address ("0000:03:00.0")
// or a vdev name ("net_ring0").
func EthPortByName(name string) (EthPort, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var id C.uint16_t
	if rc := C.rte_eth_dev_get_port_by_name(cname, &id); rc != 0 {
		return 0, errFromRC("rte_eth_dev_get_port_by_name "+name, rc)
	}
	return EthPort(id), nil
}

// Name is the port's device name.
func (p EthPort) Name() string {
	var buf [C.RTE_ETH_NAME_MAX_LEN]C.char
	if C.rte_eth_dev_get_name_by_port(C.uint16_t(p), &buf[0]) != 0 {
		return fmt.Sprintf("port%d", p)
	}
	return C.GoString(&buf[0])
}

// Configure sets the number of rx and tx queues and the MTU (0: the driver's
// default), with offloads off. With several rx queues it turns RSS on, on
// the IPv4 addresses and UDP ports as far as the device hashes them (the
// driver's default key), so that every frame of a flow reaches one queue; a
// device without RSS (net_ring, net_null) keeps its own mapping.
func (p EthPort) Configure(nrx, ntx uint16, mtu uint32) error {
	return errFromRC(fmt.Sprintf("rte_eth_dev_configure port %d", p),
		C.ccbed_eth_dev_configure_simple(C.uint16_t(p), C.uint16_t(nrx), C.uint16_t(ntx), C.uint32_t(mtu)))
}

// RxQueueSetup sets up rx queue q with nDesc descriptors, filled from pool.
func (p EthPort) RxQueueSetup(q, nDesc uint16, socket int, pool *Mempool) error {
	return errFromRC(fmt.Sprintf("rte_eth_rx_queue_setup port %d queue %d", p, q),
		C.rte_eth_rx_queue_setup(C.uint16_t(p), C.uint16_t(q), C.uint16_t(nDesc), C.uint(socket), nil, pool.c()))
}

// TxQueueSetup sets up tx queue q with nDesc descriptors.
func (p EthPort) TxQueueSetup(q, nDesc uint16, socket int) error {
	return errFromRC(fmt.Sprintf("rte_eth_tx_queue_setup port %d queue %d", p, q),
		C.rte_eth_tx_queue_setup(C.uint16_t(p), C.uint16_t(q), C.uint16_t(nDesc), C.uint(socket), nil))
}

// Start starts the port.
func (p EthPort) Start() error {
	return errFromRC(fmt.Sprintf("rte_eth_dev_start port %d", p), C.rte_eth_dev_start(C.uint16_t(p)))
}

// Stop stops the port; its queues keep their mbufs until Close.
func (p EthPort) Stop() error {
	return errFromRC(fmt.Sprintf("rte_eth_dev_stop port %d", p), C.rte_eth_dev_stop(C.uint16_t(p)))
}

// Close releases the port (stop it first); the mbufs in its rings return to
// their pools. A device this process plugged in (CreateVdev, NewEthCable,
// NewEthCableQueues) leaves the vdev bus too, and a cable's rings are freed
// when the second of its two ports closes: a device or cable of the same
// name can be made again in the same process.
func (p EthPort) Close() error {
	if err := errFromRC(fmt.Sprintf("rte_eth_dev_close port %d", p), C.rte_eth_dev_close(C.uint16_t(p))); err != nil {
		return err
	}
	return plugged.release(p)
}

// plugged holds the devices this process plugged into the vdev bus after the
// EAL started, and the rte_rings each cable's ports were made from. Closing
// an ethdev leaves its device on the bus, its name taken; the net_ring driver
// frees only the rings it made itself, not those handed to
// rte_eth_from_rings. Each ring is counted once for each of the two ports
// that use it and freed when the last one closes.
var plugged = pluggedDevices{ports: map[EthPort]pluggedDevice{}, users: map[*Ring]int{}}

// pluggedDevice is one plugged port's vdev name and cable rings.
type pluggedDevice struct {
	vdev  string
	rings []*Ring
}

// pluggedDevices counts the ports that use each cable ring.
type pluggedDevices struct {
	mu    sync.Mutex
	ports map[EthPort]pluggedDevice
	users map[*Ring]int
}

// hold records that port p is the vdev named vdev, made from rings.
func (u *pluggedDevices) hold(p EthPort, vdev string, rings []*Ring) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.ports[p] = pluggedDevice{vdev: vdev, rings: rings}
	for _, r := range rings {
		u.users[r]++
	}
}

// release removes closed port p's device from the vdev bus and frees each of
// its rings that no other port uses.
func (u *pluggedDevices) release(p EthPort) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	d, ok := u.ports[p]
	if !ok {
		return nil
	}
	delete(u.ports, p)
	for _, r := range d.rings {
		if u.users[r]--; u.users[r] == 0 {
			delete(u.users, r)
			r.Free()
		}
	}
	cn := C.CString(d.vdev)
	defer C.free(unsafe.Pointer(cn))
	return errFromRC("rte_vdev_uninit "+d.vdev, C.rte_vdev_uninit(cn))
}

// holdPort records the port made as vdev device name.
func holdPort(name string, rings []*Ring) (EthPort, error) {
	p, err := EthPortByName(name)
	if err != nil {
		return 0, err
	}
	plugged.hold(p, name, rings)
	return p, nil
}

// freeRings frees rings no port was made from (a cable whose making failed).
func freeRings(rings []*Ring) {
	for _, r := range rings {
		if r != nil {
			r.Free()
		}
	}
}

// SetPromiscuous turns promiscuous mode on or off.
func (p EthPort) SetPromiscuous(on bool) error {
	if on {
		return errFromRC("rte_eth_promiscuous_enable", C.rte_eth_promiscuous_enable(C.uint16_t(p)))
	}
	return errFromRC("rte_eth_promiscuous_disable", C.rte_eth_promiscuous_disable(C.uint16_t(p)))
}

// MACAddr is the port's MAC address.
func (p EthPort) MACAddr() (net.HardwareAddr, error) {
	var a C.struct_rte_ether_addr
	if rc := C.rte_eth_macaddr_get(C.uint16_t(p), &a); rc != 0 {
		return nil, errFromRC("rte_eth_macaddr_get", rc)
	}
	return C.GoBytes(unsafe.Pointer(&a.addr_bytes[0]), 6), nil
}

// Link is a port's link state.
type Link struct {
	SpeedMbps  uint32
	Up         bool
	FullDuplex bool
}

// Link reads the link state without waiting.
func (p EthPort) Link() (Link, error) {
	var speed C.uint32_t
	var up, duplex C.int
	if rc := C.ccbed_eth_link(C.uint16_t(p), &speed, &up, &duplex); rc != 0 {
		return Link{}, errFromRC("rte_eth_link_get_nowait", rc)
	}
	return Link{SpeedMbps: uint32(speed), Up: up != 0, FullDuplex: duplex != 0}, nil
}

// EthStats are a port's basic counters (struct rte_eth_stats).
type EthStats struct {
	IPackets, OPackets, IBytes, OBytes  uint64
	IMissed, IErrors, OErrors, RxNoMbuf uint64
}

// Stats reads the port's counters.
func (p EthPort) Stats() (EthStats, error) {
	var s C.struct_rte_eth_stats
	if rc := C.rte_eth_stats_get(C.uint16_t(p), &s); rc != 0 {
		return EthStats{}, errFromRC("rte_eth_stats_get", rc)
	}
	return EthStats{
		IPackets: uint64(s.ipackets), OPackets: uint64(s.opackets),
		IBytes: uint64(s.ibytes), OBytes: uint64(s.obytes),
		IMissed: uint64(s.imissed), IErrors: uint64(s.ierrors),
		OErrors: uint64(s.oerrors), RxNoMbuf: uint64(s.rx_nombuf),
	}, nil
}

// ResetStats zeroes the port's counters.
func (p EthPort) ResetStats() error {
	return errFromRC("rte_eth_stats_reset", C.rte_eth_stats_reset(C.uint16_t(p)))
}

// RxBurst receives up to len(pkts) packets from queue q into pkts and returns
// how many. pkts should be a Burst's slice (C memory); the caller owns the
// received mbufs.
func (p EthPort) RxBurst(q uint16, pkts []*Mbuf) int {
	if len(pkts) == 0 {
		return 0
	}
	return int(C.ccbed_rx_burst(C.uint16_t(p), C.uint16_t(q), mbufArray(pkts), C.uint16_t(len(pkts))))
}

// TxBurst queues pkts for transmission on queue q and returns how many the driver
// took; ownership of those passes to the driver, the rest stay the caller's (free
// or retry them).
func (p EthPort) TxBurst(q uint16, pkts []*Mbuf) int {
	if len(pkts) == 0 {
		return 0
	}
	return int(C.ccbed_tx_burst(C.uint16_t(p), C.uint16_t(q), mbufArray(pkts), C.uint16_t(len(pkts))))
}

// RxTxBurst receives up to len(pkts) packets on (p, rxq) and transmits them
// unmodified on (out, txq) in one cgo call, freeing what tx refuses. It returns
// the received and sent counts. It is the C-side io forwarder used as a baseline
// in benchmarks.
func (p EthPort) RxTxBurst(rxq uint16, out EthPort, txq uint16, pkts []*Mbuf) (rx, tx int) {
	var sent C.uint16_t
	n := C.ccbed_rx_tx_burst(C.uint16_t(p), C.uint16_t(rxq), C.uint16_t(out), C.uint16_t(txq),
		mbufArray(pkts), C.uint16_t(len(pkts)), &sent)
	return int(n), int(sent)
}

// CreateVdev probes a virtual device after the EAL started, as --vdev=name,args
// would at start (args may be empty): name begins with its driver's name
// ("net_ring_x", "net_null_y"). Closing its port removes it again.
func CreateVdev(name, args string) error {
	cn, ca := C.CString(name), C.CString(args)
	defer C.free(unsafe.Pointer(cn))
	defer C.free(unsafe.Pointer(ca))
	if err := errFromRC("rte_vdev_init "+name, C.rte_vdev_init(cn, ca)); err != nil {
		return err
	}
	if _, err := holdPort(name, nil); err != nil {
		C.rte_vdev_uninit(cn) // a device, but no ethdev: take it off the bus again
		return err
	}
	return nil
}

// NewEthCable makes two ethdev ports joined back to back by a pair of rte_rings
// (rte_eth_from_rings of the net_ring driver): what one transmits the other
// receives. It is the virtual cable between a host port and a switch port when
// a whole testbed runs in one process. size is each ring's slot count (a power of
// two). The ports still need Configure, queue setup and Start.
func NewEthCable(nameA, nameB string, size uint32, socket int) (a, b EthPort, err error) {
	ab, err := NewRing(nameA+">"+nameB, size, socket, RingSingleProducer|RingSingleConsumer)
	if err != nil {
		return 0, 0, err
	}
	ba, err := NewRing(nameB+">"+nameA, size, socket, RingSingleProducer|RingSingleConsumer)
	if err != nil {
		ab.Free()
		return 0, 0, err
	}
	ca, cb := C.CString(nameA), C.CString(nameB)
	defer C.free(unsafe.Pointer(ca))
	defer C.free(unsafe.Pointer(cb))
	rings := []*Ring{ab, ba}
	pa := C.ccbed_eth_from_ring_pair(ca, ba.c(), ab.c(), C.uint(socketOrZero(socket)))
	if pa < 0 {
		freeRings(rings)
		return 0, 0, errFromRC("rte_eth_from_rings "+nameA, pa)
	}
	pb := C.ccbed_eth_from_ring_pair(cb, ab.c(), ba.c(), C.uint(socketOrZero(socket)))
	return holdCable(nameB, pa, pb, rings)
}

// NewEthCableQueues is NewEthCable with queues rx and tx queues on each
// port, each queue a ring of size slots: what port A transmits on its tx
// queue i, port B receives on its rx queue (i+rotate) mod queues, and the
// other way round. A rotate other than 0 stands in for a NIC's RSS, which
// may put a flow's frames on another queue than the sender's.
func NewEthCableQueues(nameA, nameB string, queues, rotate int, size uint32, socket int) (a, b EthPort, err error) {
	if queues < 1 || queues > 64 {
		return 0, 0, fmt.Errorf("NewEthCableQueues %s: %d queues: want 1..64", nameA, queues)
	}
	// toB[j] feeds B's rx queue j, toA[j] A's.
	toB, toA := make([]*Ring, queues), make([]*Ring, queues)
	for j := 0; j < queues && err == nil; j++ {
		toB[j], err = NewRing(fmt.Sprintf("%s>%d", nameB, j), size, socket, RingSingleProducer|RingSingleConsumer)
		if err == nil {
			toA[j], err = NewRing(fmt.Sprintf("%s>%d", nameA, j), size, socket, RingSingleProducer|RingSingleConsumer)
		}
	}
	rings := append(toA, toB...)
	if err != nil {
		freeRings(rings)
		return 0, 0, err
	}
	arr := func(rings []*Ring, shift int) **C.struct_rte_ring {
		p := (**C.struct_rte_ring)(C.calloc(C.size_t(queues), C.size_t(unsafe.Sizeof(uintptr(0)))))
		s := unsafe.Slice(p, queues)
		for i := range s {
			s[i] = rings[(i+shift)%queues].c()
		}
		return p
	}
	rxA, txA, rxB, txB := arr(toA, 0), arr(toB, rotate%queues), arr(toB, 0), arr(toA, rotate%queues)
	for _, p := range []**C.struct_rte_ring{rxA, txA, rxB, txB} {
		defer C.free(unsafe.Pointer(p))
	}
	ca, cb := C.CString(nameA), C.CString(nameB)
	defer C.free(unsafe.Pointer(ca))
	defer C.free(unsafe.Pointer(cb))
	q := C.uint(queues)
	pa := C.ccbed_eth_from_rings(ca, rxA, q, txA, q, C.uint(socketOrZero(socket)))
	if pa < 0 {
		freeRings(rings)
		return 0, 0, errFromRC("rte_eth_from_rings "+nameA, pa)
	}
	pb := C.ccbed_eth_from_rings(cb, rxB, q, txB, q, C.uint(socketOrZero(socket)))
	return holdCable(nameB, pa, pb, rings)
}

// holdCable records a cable's two ports, pa and pb (rte_eth_from_rings'
// results: a port id, or negative), made from rings; if B was not made, it
// closes A, which frees the rings.
func holdCable(nameB string, pa, pb C.int, rings []*Ring) (a, b EthPort, err error) {
	plugged.hold(EthPort(pa), EthPort(pa).Name(), rings)
	if pb < 0 {
		EthPort(pa).Close()
		return 0, 0, errFromRC("rte_eth_from_rings "+nameB, pb)
	}
	plugged.hold(EthPort(pb), EthPort(pb).Name(), rings)
	return EthPort(pa), EthPort(pb), nil
}

func socketOrZero(s int) int {
	if s < 0 {
		return 0
	}
	return s
}
