package switchd

import (
	"errors"
	"fmt"
	"math"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/wire"
)

// Spec is one switch as the engine takes it: typed values only, no file
// format. A driver that holds the values (fabric.Plan) builds it directly;
// switchd/daemon builds it from a switchd TOML file, whose tables ([switch],
// [[ports]], [[routes]], [cc], [pfc], [buffer], [queues], [telemetry]) hold
// the same settings with addresses as text, ports by name, times in
// microseconds and the schemes' parameters as tables. Errors name a field by
// its file key (SpecError), so that the daemon can put them at their lines.
// Start from DefaultSpec: its zero fields are not defaults.
type Spec struct {
	// ID is the 12-bit switch id XORed into HPCC INT stacks' pathID.
	ID uint16
	// IP is the switch's IPv4 address (host byte order): the source of the
	// feedback packets its CPs send, and the base of the CP ids.
	IP uint32
	// DecrementTTL: routers decrement the IPv4 TTL; benchmarks that loop
	// packets through the switch forever turn it off.
	DecrementTTL bool
	// FrameOverheadBytes is added to each frame's length (no FCS) for the
	// shaper: preamble and SFD 8, FCS 4, inter-frame gap 12.
	FrameOverheadBytes int
	// BurstBytes is the shaper's token-bucket depth: how far the link may
	// catch up after a late poll. 0 shapes exactly (the virtual-time fabric,
	// which never polls late).
	BurstBytes int
	// PriorityFromDSCP takes a frame's priority (0-7: its egress queue and
	// PFC class) from the IPv4 DSCP's class selector bits (DSCP >> 3),
	// tagged or not; off, from the 802.1Q tag's PCP, untagged frames taking
	// PFC.Priority.
	PriorityFromDSCP bool
	// Trust says where the switch takes control frames from (docs/switch.md,
	// "Trust"): TrustAll from every port; TrustTopology only from where each
	// port's Faces says they can come, refusing (dropping and counting by
	// kind) the others.
	Trust string

	Ports  []PortSpec
	Routes []Route
	CC     CCSpec
	PFC    PFCConfig
	Buffer BufferConfig
	Queues QueuesConfig

	// SampleNs is the sampling period of queue length and fair rate; 0: the
	// RoCC T of port 0 when it runs RoCC, else 100 us.
	SampleNs int64
	// SampleBuffer is the number of samples buffered between the tx+CC
	// lcore and their reader (Engine.DrainSamples).
	SampleBuffer int
}

// PortSpec is one switch port.
type PortSpec struct {
	// Name names the port in counters and logs ("p0").
	Name string
	// MAC is the port's own address (source of forwarded frames); PeerMAC
	// the address of the station on the other end of the link, the
	// destination of every frame sent out of this port.
	MAC, PeerMAC wire.MAC
	// LinkBps is the emulated line rate the egress shaper enforces.
	LinkBps float64
	// DelayNs is an optional propagation delay added after the shaper.
	DelayNs int64
	// BufferBytes caps the port's egress data queues together: frames that
	// do not fit are dropped at the tail. With Buffer.Mode BufferStatic it
	// is the port's whole buffer (0: 1 MiB); with BufferShared an optional
	// cap on the lossy priorities, on top of the shared buffer's dynamic
	// thresholds (0: none).
	BufferBytes int64
	// HeadroomBytes is the PFC headroom of each lossless priority of this
	// ingress port (shared buffer); 0: Buffer.HeadroomBytes, or when that is
	// 0 too, derived (Spec.Headroom).
	HeadroomBytes int64
	// Scheme overrides CC.Scheme for this port's CP.
	Scheme string
	// Params is the port's scheme's parameter struct, as its DefaultParams
	// returns it (a pointer), possibly modified; nil: DefaultParams(Env(i)).
	// The CP reads it when it is built.
	Params any
	// CPID overrides the id carried in this port's feedback (0: IP + the
	// port's index).
	CPID uint32
	// Faces is what the port's link leads to, FacesHost, FacesSwitch or
	// FacesAny: with Trust TrustTopology, which control frames the port
	// accepts. Every port must say it then.
	Faces string
	// IgnorePFC makes the port refuse the PFC frames it receives (counted as
	// refused_pfc): its egress is never paused. With PFC.Honor off, no port
	// obeys them but they count as received.
	IgnorePFC bool
}

// Route is a static route: destinations in Addr/Len (host bits clear) leave
// through Ports[0], or with several ports (an ECMP group) through the one
// each flow's 5-tuple hash picks. Ports are port indices.
type Route struct {
	Addr  uint32
	Len   int
	Ports []int
}

// CCSpec describes the network to the schemes' defaults (ccalgo.Env) and
// names the scheme of every port without its own.
type CCSpec struct {
	// Scheme is the ccalgo scheme of every port without its own ("none",
	// "rocc", "dcqcn", ...). Schemes without a CP role (none, rcc, timely)
	// leave the port a plain FIFO.
	Scheme        string
	BaseRTTNs     int64
	MTU           int
	ExpectedFlows int
}

// DefaultSpec returns a spec with every setting at its default and no ports
// or routes.
func DefaultSpec() Spec {
	return Spec{
		ID: 1, IP: 0x0a0000fe, DecrementTTL: true, FrameOverheadBytes: 24, BurstBytes: 16384, Trust: TrustAll,
		CC:           CCSpec{Scheme: "none", BaseRTTNs: 10_000, MTU: 1024, ExpectedFlows: 16},
		PFC:          DefaultPFC(),
		Buffer:       DefaultBuffer(),
		Queues:       QueuesConfig{QuantumBytes: 1518},
		SampleBuffer: 1 << 16,
	}
}

// DefaultPFC is PFC's defaults: off, honoured, a static XOFF of 500 KB
// with 3 KB of hysteresis, the longest pause, priority 3.
func DefaultPFC() PFCConfig {
	return PFCConfig{Honor: true, XOFFBytes: 500_000, XONOffsetBytes: 3_000, PauseQuanta: wire.PFCMaxQuanta, Priority: 3}
}

// DefaultBuffer is the buffer's defaults: the HPCC simulator's 12 MiB shared
// buffer, alpha 1/8, 4 KiB reserve and 3 KiB resume offset.
func DefaultBuffer() BufferConfig {
	return BufferConfig{Mode: BufferShared, SizeBytes: 12 << 20, Alpha: 0.125, ReserveBytes: 4 << 10, ResumeOffsetBytes: 3 << 10}
}

// SpecError is an error in a Spec's field, named by its file key
// ("ports[2].link_gbps").
type SpecError struct {
	Key string
	Msg string
}

// Error is "switchd: key: message".
func (e *SpecError) Error() string { return "switchd: " + e.Key + ": " + e.Msg }

// specErr builds a *SpecError; it is the errf of the checks shared with
// switchd/daemon, which builds file:line errors instead.
func specErr(key, format string, args ...any) error {
	return &SpecError{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// SchemeOf returns the scheme name port i runs.
func (s *Spec) SchemeOf(i int) string {
	if sc := s.Ports[i].Scheme; sc != "" {
		return sc
	}
	return s.CC.Scheme
}

// CPID is the id port i's CP puts in its feedback.
func (s *Spec) CPID(i int) uint32 {
	if id := s.Ports[i].CPID; id != 0 {
		return id
	}
	return s.IP + uint32(i)
}

// Env is what port i's scheme is told of the network.
func (s *Spec) Env(i int) ccalgo.Env {
	return ccalgo.Env{
		LinkBps:       s.Ports[i].LinkBps,
		BaseRTT:       s.CC.BaseRTTNs,
		MTU:           s.CC.MTU,
		MaxFlows:      1024,
		ExpectedFlows: s.CC.ExpectedFlows,
		ID:            s.CPID(i),
	}
}

// Lossless is the list of PFC's lossless priorities (Priorities, or
// Priority alone).
func (p *PFCConfig) Lossless() []uint8 {
	if len(p.Priorities) > 0 {
		return p.Priorities
	}
	return []uint8{p.Priority}
}

// Headroom is port i's PFC headroom per lossless priority (shared buffer):
// the port's HeadroomBytes, else Buffer.HeadroomBytes, else derived from the
// link (HeadroomBytes, with the larger of BurstBytes and PeerBurstFrames
// full frames for the peer's burst). A daemon adds what its device holds
// (switchd/daemon: an af_packet port's kernel ring) into the port's
// HeadroomBytes.
func (s *Spec) Headroom(i int) int64 {
	if h := s.Ports[i].HeadroomBytes; h > 0 {
		return h
	}
	if h := s.Buffer.HeadroomBytes; h > 0 {
		return h
	}
	frame := s.FullFrame()
	return HeadroomBytes(s.Ports[i].LinkBps, s.Ports[i].DelayNs, frame, max(s.BurstBytes, PeerBurstFrames*frame))
}

// FullFrame is the bytes on the wire of a full data frame: CC.MTU with the
// headers, an INT stack and the Ethernet overhead.
func (s *Spec) FullFrame() int { return s.CC.MTU + 100 }

// PeerBurstFrames is the burst, in full frames, that a DPDK peer sends back
// to back after a late poll: one tx burst of 32, as deep as hostd's NIC bucket
// (nic_burst_frames). The derived headroom takes it or the switch's own
// shaper burst (BurstBytes, a switchd peer's), whichever is larger.
const PeerBurstFrames = 32

// HeadroomBytes is the PFC headroom a lossless priority of an ingress port
// needs so that no frame is dropped after its XOFF: what the upstream sends
// while the pause travels to it and what is already on the wire (2 x the
// link's bytes in flight over delayNs), the frame being received when XOFF
// triggered, the frame the pause waits behind at this port's egress, and the
// frame upstream is serialising when the pause arrives (3 frames of mtuFrame
// bytes), and the upstream shaper's burst (a late poll's catch-up).
func HeadroomBytes(linkBps float64, delayNs int64, mtuFrame, burstBytes int) int64 {
	return int64(math.Ceil(2*float64(delayNs)*linkBps/8e9)) + 3*int64(mtuFrame) + int64(burstBytes)
}

// reserved is the buffer set aside for PFC in shared mode: headroom and
// reserve for every port and lossless priority.
func (s *Spec) reserved() (hdrm, rsrv int64) {
	n := int64(len(s.PFC.Lossless()))
	for i := range s.Ports {
		hdrm += n * s.Headroom(i)
		rsrv += n * s.Buffer.ReserveBytes
	}
	return hdrm, rsrv
}

// bufLimit is port i's cap on its egress data queues: its BufferBytes, and
// with a static buffer 1 MiB when it gives none.
func (s *Spec) bufLimit(i int) int64 {
	if b := s.Ports[i].BufferBytes; b != 0 || s.Buffer.Mode != BufferStatic {
		return b
	}
	return 1 << 20
}

// params is port i's scheme and its parameter struct: Params, or the
// scheme's defaults for the port.
func (s *Spec) params(i int) (ccalgo.Scheme, any, error) {
	sch, err := ccalgo.Lookup(s.SchemeOf(i))
	if err != nil {
		return ccalgo.Scheme{}, nil, err
	}
	if p := s.Ports[i].Params; p != nil {
		return sch, p, nil
	}
	return sch, sch.DefaultParams(s.Env(i)), nil
}

// newCP builds port i's congestion point (nil for schemes without one).
func (s *Spec) newCP(i int) (ccalgo.CongestionPoint, error) {
	sch, params, err := s.params(i)
	if err != nil {
		return nil, err
	}
	if sch.NewCP == nil {
		return nil, nil
	}
	cp, err := sch.NewCP(params, s.Env(i))
	if err != nil {
		var pe *ccalgo.ParamError
		if errors.As(err, &pe) {
			return nil, specErr("cc.params."+sch.Name+"."+pe.Param, "%v: %s (port %s)", pe.Value, pe.Reason, s.Ports[i].Name)
		}
		return nil, fmt.Errorf("switchd: port %s: %w", s.Ports[i].Name, err)
	}
	return cp, nil
}

// CheckCPs builds each port's congestion point once, to check its
// parameters: a parameter the scheme refuses is a *SpecError at
// "cc.params.<scheme>.<param>".
func (s *Spec) CheckCPs() error {
	for i := range s.Ports {
		if _, err := s.newCP(i); err != nil {
			return err
		}
	}
	return nil
}

// RouteTable builds the longest-prefix table of the routes.
func (s *Spec) RouteTable() (*RouteTable, error) {
	rt := &RouteTable{}
	if err := rt.addAll(s.Routes); err != nil {
		return nil, err
	}
	return rt, nil
}
