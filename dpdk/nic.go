package dpdk

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"
)

// IsNotSupported reports whether err is a DPDK call that the driver does not
// implement (ENOTSUP): virtual devices have no flow control, for example.
func IsNotSupported(err error) bool {
	var e *Error
	return errors.As(err, &e) && (syscall.Errno(e.Code) == syscall.ENOTSUP || syscall.Errno(e.Code) == syscall.ENOSYS)
}

// FlowControlMode is a port's link-level (802.3x pause) flow control mode
// (enum rte_eth_fc_mode).
type FlowControlMode int

// The link flow control modes.
const (
	FlowControlNone    FlowControlMode = C.RTE_ETH_FC_NONE     // neither honour nor send pause frames
	FlowControlRxPause FlowControlMode = C.RTE_ETH_FC_RX_PAUSE // honour received pause frames
	FlowControlTxPause FlowControlMode = C.RTE_ETH_FC_TX_PAUSE // send pause frames when the rx side fills
	FlowControlFull    FlowControlMode = C.RTE_ETH_FC_FULL     // both
)

// String names the mode as ethtool -a would.
func (m FlowControlMode) String() string {
	switch m {
	case FlowControlNone:
		return "off"
	case FlowControlRxPause:
		return "rx"
	case FlowControlTxPause:
		return "tx"
	case FlowControlFull:
		return "rx+tx"
	}
	return fmt.Sprintf("mode%d", int(m))
}

// FlowControl reads the port's link flow control mode.
func (p EthPort) FlowControl() (FlowControlMode, error) {
	var mode C.int
	if rc := C.ccbed_eth_flow_ctrl_get(C.uint16_t(p), &mode); rc != 0 {
		return 0, errFromRC(fmt.Sprintf("rte_eth_dev_flow_ctrl_get port %d", p), rc)
	}
	return FlowControlMode(mode), nil
}

// SetFlowControl sets the port's link flow control mode, keeping the driver's
// thresholds and pause time. IsNotSupported(err) for a driver without it.
func (p EthPort) SetFlowControl(m FlowControlMode) error {
	return errFromRC(fmt.Sprintf("rte_eth_dev_flow_ctrl_set port %d", p),
		C.ccbed_eth_flow_ctrl_set(C.uint16_t(p), C.int(m)))
}

// SetPriorityFlowControl turns on the NIC's own priority flow control
// (802.1Qbb) for one priority: it sends PAUSE for it when its rx buffer passes
// highWater (bytes, driver-specific units; 0: the driver's choice), resumes
// below lowWater, and honours received pauses. Needs a NIC with DCB.
func (p EthPort) SetPriorityFlowControl(priority uint8, highWater, lowWater uint32, pauseQuanta uint16) error {
	return errFromRC(fmt.Sprintf("rte_eth_dev_priority_flow_ctrl_set port %d priority %d", p, priority),
		C.ccbed_eth_pfc_set(C.uint16_t(p), C.uint8_t(priority), C.uint32_t(highWater), C.uint32_t(lowWater), C.uint16_t(pauseQuanta)))
}

// DevInfo is what a bring-up check needs of rte_eth_dev_info.
type DevInfo struct {
	Driver       string
	MaxRxPktLen  uint32 // the largest frame the port receives
	MinMTU       uint16
	MaxMTU       uint16
	MaxRxQueues  uint16
	MaxTxQueues  uint16
	SpeedCapa    uint32 // RTE_ETH_LINK_SPEED_* bits
	SpeedsMbps   []uint32
	MaxSpeedMbps uint32 // the fastest speed in SpeedCapa; 0 when it says none
}

// speedBits maps RTE_ETH_LINK_SPEED_* bits to Mb/s.
var speedBits = []struct {
	bit  uint32
	mbps uint32
}{
	{C.RTE_ETH_LINK_SPEED_10M_HD, 10}, {C.RTE_ETH_LINK_SPEED_10M, 10}, {C.RTE_ETH_LINK_SPEED_100M_HD, 100},
	{C.RTE_ETH_LINK_SPEED_100M, 100}, {C.RTE_ETH_LINK_SPEED_1G, 1000}, {C.RTE_ETH_LINK_SPEED_2_5G, 2500},
	{C.RTE_ETH_LINK_SPEED_5G, 5000}, {C.RTE_ETH_LINK_SPEED_10G, 10000}, {C.RTE_ETH_LINK_SPEED_20G, 20000},
	{C.RTE_ETH_LINK_SPEED_25G, 25000}, {C.RTE_ETH_LINK_SPEED_40G, 40000}, {C.RTE_ETH_LINK_SPEED_50G, 50000},
	{C.RTE_ETH_LINK_SPEED_56G, 56000}, {C.RTE_ETH_LINK_SPEED_100G, 100000}, {C.RTE_ETH_LINK_SPEED_200G, 200000},
}

// Info reads the port's driver name and limits.
func (p EthPort) Info() (DevInfo, error) {
	var d DevInfo
	var maxPkt, capa C.uint32_t
	var maxMTU, minMTU, maxRxq, maxTxq C.uint16_t
	var drv [64]C.char
	rc := C.ccbed_eth_dev_limits(C.uint16_t(p), &maxPkt, &maxMTU, &minMTU, &maxRxq, &maxTxq, &capa, &drv[0], C.size_t(len(drv)))
	if rc != 0 {
		return d, errFromRC(fmt.Sprintf("rte_eth_dev_info_get port %d", p), rc)
	}
	d = DevInfo{Driver: C.GoString((*C.char)(unsafe.Pointer(&drv[0]))), MaxRxPktLen: uint32(maxPkt), MinMTU: uint16(minMTU),
		MaxMTU: uint16(maxMTU), MaxRxQueues: uint16(maxRxq), MaxTxQueues: uint16(maxTxq), SpeedCapa: uint32(capa)}
	for _, s := range speedBits {
		if d.SpeedCapa&s.bit != 0 && (len(d.SpeedsMbps) == 0 || d.SpeedsMbps[len(d.SpeedsMbps)-1] != s.mbps) {
			d.SpeedsMbps = append(d.SpeedsMbps, s.mbps)
			d.MaxSpeedMbps = s.mbps
		}
	}
	return d, nil
}

// SpeedUnknown is the link speed a driver reports when it does not know it
// (RTE_ETH_SPEED_NUM_UNKNOWN); 0 (RTE_ETH_SPEED_NUM_NONE) means the same.
const SpeedUnknown = uint32(C.RTE_ETH_SPEED_NUM_UNKNOWN)

// LcoreEnabled reports whether the EAL enabled lcore id (it was in -l or
// --lcores).
func LcoreEnabled(id uint) bool { return C.ccbed_lcore_is_enabled(C.uint(id)) != 0 }

// PhysMemBytes is the memory the EAL reserved (hugepages, or -m with
// --no-huge).
func PhysMemBytes() uint64 { return uint64(C.ccbed_physmem_size()) }

// MbufOverheadBytes is what one mbuf costs in a pool besides its data room:
// the rte_mbuf header plus the mempool's per-object header and trailer (an
// estimate for sizing pools: 64-byte aligned).
const MbufOverheadBytes = int(C.sizeof_struct_rte_mbuf) + 64

// DataRoomFor is the data room (headroom included) an mbuf needs to hold a
// frame of frameBytes in one segment: at least MbufDefaultDataRoom, rounded
// up to 1 KiB so that pools of nearby MTUs share a size.
func DataRoomFor(frameBytes int) uint16 {
	room := frameBytes + MbufHeadroom
	if room < MbufDefaultDataRoom {
		return MbufDefaultDataRoom
	}
	room = (room + 1023) &^ 1023
	if room > 65535 {
		room = 65535
	}
	return uint16(room)
}
