package hostd

import (
	"fmt"

	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/config/bounds"
	"github.com/ccbed/ccbed/wire"
)

// Spec is one host as the engine takes it: typed values only, no file
// format. A driver that holds the values (fabric.Plan) builds it directly;
// hostd/daemon builds it from a hostd TOML file (its [host] table, whose
// keys name the fields below in snake case, addresses as text). Zero values
// of optional fields take the defaults named in their comments
// (ApplyDefaults). Times and durations are int64 nanoseconds (a file gives
// them in microseconds: hostd/daemon converts). Errors name a field by its
// key (SpecError).
type Spec struct {
	Name string
	IP   uint32   // IPv4 address of the host's NIC, host byte order
	MAC  wire.MAC // NIC MAC; zero: the port's own (the adapter's caller sets it, SetMAC)
	// GatewayMAC is the destination MAC of every frame to a peer not listed in
	// Peers: the switch port's MAC, or a peer's in a back-to-back setup.
	// Zero: ff:ff:ff:ff:ff:ff.
	GatewayMAC wire.MAC
	LinkGbps   float64 // NIC line rate: the pacing ceiling (default 10)
	// MTUBytes is the application payload of a full data packet (default 1024;
	// the frame adds 58 bytes of headers, 100 with HPCC's INT stack).
	MTUBytes  int
	BaseRTTNs int64  // expected base RTT: Env.BaseRTT and the ideal FCT (default 10 us)
	Scheme    string // ccalgo scheme name (default "none")
	// Params is the scheme's parameter struct, as its DefaultParams returns
	// it (a pointer), possibly modified; nil: DefaultParams(Env()). Every RP
	// and the NP read it when they are built, and none writes it.
	Params any
	// ExpectedFlows is Env.ExpectedFlows (HPCC's N); default 100.
	ExpectedFlows int

	AckEvery      int   // receiver ACKs every k-th in-order packet and every last one (default 1)
	NakIntervalNs int64 // repeat a NAK for the same gap after this (default 4 x base RTT, at least 100 us)
	RTONs         int64 // go back to snd_una after this long without progress (default 1 ms)
	MaxQPs        int   // concurrent sender QPs (default 1024)
	MaxRxFlows    int   // receiver flow table size (default 65536)
	MaxPending    int   // flows waiting for a free QP (default 65536)
	// EventRing is the size of the ring of events (ACKs, CNPs, feedback,
	// pauses) from the receive side to the send side (default 8192: a burst
	// of controls while the tx lcore is busy). A driver that serves both
	// sides after every frame (the virtual-time fabric) needs a few.
	EventRing int
	// BurstBytes is each QP's token-bucket burst: the lateness of the tx loop it
	// absorbs (default 16 full frames).
	BurstBytes int64
	// NICBurstFrames is the depth of the NIC's line-rate bucket in full frames:
	// how many frames leave back to back after an idle spell, to absorb a late
	// tx poll (default 32, one tx burst). The virtual-time fabric, which never
	// polls late, uses 1.
	NICBurstFrames int
	// PacingJitter spreads the packet spacing of each QP paced below the line
	// rate uniformly over [1 - j, 1 + j] times its paced gap (mean 1: the rate
	// is unchanged), as real NICs' rate limiters do; 0 (the default) paces
	// exactly. Senders paced exactly and alike release in lock step, a
	// synchrony no testbed has. Seeded by Seed.
	PacingJitter float64
	// PFCPriority is the priority of the data of flows that set none
	// (default 3): PFC frames pausing it stop them. A flow, incast or
	// workload with its own priority is paused by its own priority's pauses
	// only, as a NIC's per-priority transmit queues are.
	PFCPriority int
	// TagPriority writes each flow's priority (its own, or PFCPriority)
	// into its data frames' IPv4 DSCP as the class selector (DSCP =
	// priority << 3; ACKs, NAKs and CNPs echo the data's DSCP, so a flow's
	// control frames carry its class), for switches that take priorities
	// from the DSCP.
	TagPriority bool
	// TagPCP puts an 802.1Q priority tag (VLAN id 0, PCP the flow's
	// priority) in front of each data frame's IPv4 header, for switches that
	// take priorities from the PCP; ACKs, NAKs and CNPs echo the data's tag.
	// Frames grow by 4 bytes.
	TagPCP bool
	// ICRC computes the RoCEv2 invariant CRC of every frame the host builds
	// (a CRC-32 over the frame, about 0.1 ns a byte) instead of leaving the
	// trailer zero: what a real RoCE NIC receiving them checks, and what
	// Wireshark verifies in a capture. Off by default: ccbed's own hosts and
	// switches do not check it.
	ICRC bool
	// SampleNs is the period of the per-flow rate time series (default 100 us);
	// MaxSamples bounds it (default 1,000,000 rows, further samples are counted;
	// rows taken by Engine.TakeResults no longer count).
	SampleNs   int64
	MaxSamples int
	MaxFCTs    int // FCT records kept (default 1,000,000; until TakeResults)
	// GrowResults starts the rate-sample and FCT slices small (16 rows),
	// for a Go caller running hundreds of hosts in one process (the
	// virtual-time fabric). Off, the engine reserves room for the first 65536
	// samples and 16384 FCTs, so that an lcore rarely allocates for results
	// (beyond, the slices double, up to MaxSamples and MaxFCTs).
	GrowResults bool
	Seed        uint64 // workload generator seed (default 1)
	// MemBytes is the memory that bounds the tables the spec sizes
	// (MaxPending, MaxSamples, MaxFCTs, the incast starts): each at most a
	// quarter of it. 0: no bound but the field's own. A daemon fills in the
	// machine's (config.MemTotal), so that a file cannot make the engine
	// allocate more than the machine has.
	MemBytes int64

	// Trust says where the host takes control frames from: TrustAll (the
	// default) from anywhere, as a lab that trusts every station does; or
	// TrustTopology, only from where they can come:
	//
	//   - PFC frames only from GatewayMAC (the switch port the link leads
	//     to; none when it is not set);
	//   - CNPs, ACKs and NAKs only from the destination of the flow whose QP
	//     they name, and ACKs and NAKs only for packets sent and not yet
	//     acknowledged: an ACK's PSN + 1 within [snd_una, snd_max], a NAK's
	//     PSN within [snd_una, snd_max) (snd_max is RFC 793's SND.NXT, the
	//     next new packet; the engine's snd_nxt goes back after a NAK or a
	//     timeout);
	//   - at most one go-back per PSN and base RTT (BaseRTTNs): a second
	//     NAK for the PSN a QP went back to less than a base RTT before is
	//     refused (Refusals.NakRepeat);
	//   - RoCC rate messages and P4QCN / QCN feedback only when their source
	//     address and the CP id they carry both lie in TrustedCPs.
	//
	// The host counts each refusal by kind (RxCounters.Refused,
	// TxCounters.Refused; Engine.Refused sums them).
	Trust string
	// TrustedCPs are the congestion points whose feedback the host takes
	// with trust "topology": the switches' addresses (the source of their
	// feedback) and their CP ids (a switch port's is the switch's address +
	// the port's index, unless the switch's config sets cp_id).
	TrustedCPs []AddrRange

	Peers     []Peer
	Flows     []Flow
	Incast    []Incast
	Workloads []Workload
}

// AddrRange is the IPv4 addresses Lo..Hi (host byte order), both included.
type AddrRange struct{ Lo, Hi uint32 }

// String is "lo-hi" (a range as hostd's trusted_cps takes it).
func (r AddrRange) String() string { return wire.FormatIPv4(r.Lo) + "-" + wire.FormatIPv4(r.Hi) }

// Peer gives the MAC frames to one IPv4 address go to.
type Peer struct {
	IP  uint32
	MAC wire.MAC
}

// Flow is one static flow: a single message of SizeBytes (0: unlimited, a
// long-lived flow) to Dst, starting StartNs after the run's start, paced at
// most at RateGbps
// (the application's offered rate; 0: no cap besides the RP and the line
// rate).
type Flow struct {
	ID        int // flow id in results
	Dst       uint32
	SizeBytes int64
	StartNs   int64
	RateGbps  float64
	// Priority is the flow's priority (0-7): the class it is tagged with
	// (TagPriority) and whose PFC pauses stop it; nil: PFCPriority.
	Priority *int
}

// Incast is an incast group: Flows flows of SizeBytes each to Dst,
// starting together at StartNs, the whole group repeated Repeat times
// (default 1) every PeriodNs (round k starts at StartNs + k x PeriodNs). Flow ids are IDBase, IDBase+1, ... in start
// order. Several hosts with groups of the same start time and destination
// make an N-to-1 incast.
type Incast struct {
	IDBase    int
	Dst       uint32
	Flows     int
	SizeBytes int64
	StartNs   int64
	Repeat    int
	PeriodNs  int64
	RateGbps  float64
	// Priority is the group's flows' priority (0-7), as Flow.Priority;
	// nil: PFCPriority.
	Priority *int
}

// Workload generates flows with sizes drawn from CDF and Poisson arrivals
// whose mean offered load is Load x the host's line rate, from StartNs to
// StopNs (0: no end), each to a destination drawn uniformly from Dsts. Flow
// ids are IDBase, IDBase+1, ... in arrival order; MaxFlows (0: no limit)
// bounds their number. The engine keeps CDF and Dsts (it never writes
// them), so that the hosts of a fabric share one of each.
type Workload struct {
	IDBase   int
	CDF      *CDF
	Dsts     []uint32
	Load     float64
	StartNs  int64
	StopNs   int64
	MaxFlows int
	RateGbps float64
	// Priority is the generated flows' priority (0-7), as Flow.Priority;
	// nil: PFCPriority.
	Priority *int
}

// SpecError is a bad field of a Spec: Key is the field's key in a hostd
// file's [host] table ("flows[2].size_bytes"), so that hostd/daemon can put
// the error at its line. The times, which a file gives in microseconds,
// are named by the spec's unit ("base_rtt_ns", "flows[2].start_ns"):
// hostd/daemon checks a file's times in its own units, so that these
// errors come from specs built in Go (fabric.Plan).
type SpecError struct {
	Key string
	Msg string
}

// Error is "hostd: key: message".
func (e *SpecError) Error() string { return "hostd: " + e.Key + ": " + e.Msg }

// specErr builds a *SpecError.
func specErr(key, format string, args ...any) error {
	return &SpecError{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// ApplyDefaults fills the zero optional fields with their defaults.
func (s *Spec) ApplyDefaults() {
	orDefault(&s.LinkGbps, 10)
	orDefault(&s.MTUBytes, 1024)
	orDefault(&s.BaseRTTNs, 10_000)
	orDefault(&s.Scheme, "none")
	orDefault(&s.ExpectedFlows, 100)
	orDefault(&s.AckEvery, 1)
	// 4 x base RTT, at least 100 us, within the times' bound (and no
	// overflow for a base RTT out of range, which resolve refuses).
	orDefault(&s.NakIntervalNs, min(max(4*min(s.BaseRTTNs, bounds.MaxTimeNs), 100_000), bounds.MaxTimeNs))
	orDefault(&s.RTONs, 1_000_000)
	orDefault(&s.MaxQPs, 1024)
	orDefault(&s.MaxRxFlows, 65536)
	orDefault(&s.MaxPending, 65536)
	orDefault(&s.EventRing, 8192)
	orDefault(&s.BurstBytes, 16*int64(s.MTUBytes+dataOverhead+wire.INTLen))
	orDefault(&s.NICBurstFrames, 32)
	orDefault(&s.PFCPriority, 3)
	orDefault(&s.SampleNs, 100_000)
	orDefault(&s.MaxSamples, 1_000_000)
	orDefault(&s.MaxFCTs, 1_000_000)
	orDefault(&s.Seed, 1)
	orDefault(&s.Trust, TrustAll)
	for i := range s.Incast {
		orDefault(&s.Incast[i].Repeat, 1)
	}
}

// orDefault sets *p to v when *p is its type's zero value.
func orDefault[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

// Env is the ccalgo.Env the host's RPs and NP are built with (after
// ApplyDefaults): a daemon decoding a file's scheme parameters over the
// scheme's defaults (DefaultParams) needs it first.
func (s *Spec) Env() ccalgo.Env {
	return ccalgo.Env{
		LinkBps:       s.LinkGbps * 1e9,
		BaseRTT:       s.BaseRTTNs,
		MTU:           s.MTUBytes,
		MaxFlows:      s.MaxRxFlows,
		ExpectedFlows: s.ExpectedFlows,
		ID:            s.IP,
	}
}

// MaxFrameBytes is the largest frame the spec's host builds (after
// ApplyDefaults): its MTU with headers and an INT stack, and a VLAN tag
// with TagPCP. The mbufs of its pool must hold it.
func (s *Spec) MaxFrameBytes() int { return maxFrame(s.MTUBytes) + vlanLen(s.TagPCP) }

// CheckSpec checks s as NewEngine does (defaults applied, every field's
// range) without building the engine, which allocates the tables the spec
// sizes: a validator (testbed validate, -check) can run exactly the checks
// a run would.
func CheckSpec(s Spec) error {
	s.ApplyDefaults()
	_, err := resolve(&s)
	return err
}
