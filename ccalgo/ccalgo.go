// Package ccalgo holds every congestion-control algorithm of ccbed, shared by the
// switch (switchd) and the hosts (hostd), in pure Go: no cgo, no DPDK types, no
// clock reads. Time is always an argument, in nanoseconds.
//
// An algorithm has up to three roles:
//
//   - CongestionPoint (CP): one per switch egress port. It sees every data packet
//     entering and leaving the port's queue and may mark it (ECN CE, TCD UE), ask
//     for an INT record, or emit feedback (RoCC rate messages, QCN/P4QCN feedback)
//     through a FeedbackSink. It may also run a periodic timer.
//   - NotificationPoint (NP): one per receiving host. It sees every data packet the
//     host receives, fills the echo fields of the acknowledgement, and decides
//     whether a CNP goes back to the sender (DCQCN).
//   - ReactionPoint (RP): one per sending queue pair (QP). It reacts to ACKs, NAKs,
//     CNPs, rate messages and feedback, and to its own timers, and exposes the
//     pacing rate (bits/s) and the window (bytes in flight) the sender must obey.
//
// Each scheme lives in its own subpackage (ccalgo/rocc, ccalgo/hpcc, ...) and
// registers a Scheme in its init function; ccalgo/all imports them all. Schemes
// are built from a TOML-decodable parameter struct whose defaults are the papers'
// values (Scheme.DefaultParams).
//
// Contract for every implementation: no allocation, no map with string keys, no
// interface boxing and no logging in any per-packet or per-event method. State
// sized by the number of flows is allocated by the constructor (Env.MaxFlows).
//
// A ReactionPoint is plain data: its struct holds no pointers, slices, maps,
// interfaces, strings or functions (its parameters are copied in by value), so
// that a struct copy is an independent RP. A host reuses one RP per QP slot for
// flow after flow and resets it by copying a pristine template of the same
// scheme, params and env (Resetter), allocating nothing per flow; ccalgo/all
// checks that every registered RP implements Resetter and is plain data.
package ccalgo

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"
)

// Never is the value of NextTimer when no timer is pending.
const Never int64 = math.MaxInt64

// NoWindow is the value of WindowBytes of an RP that does not limit bytes in flight.
const NoWindow int64 = math.MaxInt64

// Mark is the congestion mark a packet carries in its IPv4 ECN field. Data packets
// leave the sender ECN-capable (ECT(0), ECN = 10) and carry MarkNone. MarkCE is ECN
// = 11 (DCQCN, DCTCP, TCD congestion). MarkUE is ECN = 01, TCD's "undetermined"
// (TCD: Zhang et al., "Congestion Detection in Lossless Networks", SIGCOMM 2021,
// as the ACC paper, NSDI 2024, Section 2.2 summarises it; ccbed's definition of
// the port states is in ccalgo/acc/tcd.go). Marks only go up: CE > UE > none.
type Mark uint8

// Marks in increasing order of severity.
const (
	MarkNone Mark = iota
	MarkUE
	MarkCE
)

// Max returns the more severe of m and o.
func (m Mark) Max(o Mark) Mark {
	if o > m {
		return o
	}
	return m
}

// String names the mark.
func (m Mark) String() string {
	switch m {
	case MarkNone:
		return "none"
	case MarkUE:
		return "UE"
	case MarkCE:
		return "CE"
	}
	return fmt.Sprintf("Mark(%d)", uint8(m))
}

// FlowKey identifies a flow at a switch: the IPv4 5-tuple of a RoCEv2 flow (the
// protocol is always UDP) plus the destination QP of its BTH. It is comparable and
// small enough to copy.
type FlowKey struct {
	SrcIP, DstIP     uint32 // IPv4 addresses, host byte order
	SrcPort, DstPort uint16 // UDP ports
	DestQP           uint32 // BTH destination QP (24 bits)
}

// Hash returns a well-mixed 32-bit hash of k for fixed-size flow tables.
func (k FlowKey) Hash() uint32 {
	h := uint64(k.SrcIP)<<32 | uint64(k.DstIP)
	h ^= (uint64(k.SrcPort)<<16 | uint64(k.DstPort)) * 0x9e3779b97f4a7c15
	h ^= uint64(k.DestQP) * 0xc2b2ae3d27d4eb4f
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return uint32(h)
}

// INT field widths and units (HPCC: Li et al., "HPCC: High Precision Congestion
// Control", SIGCOMM 2019, Section 4.1, Figure 7; TS counted in ns is ccbed's
// choice, as in the HPCC authors' ns-3 simulator).
// Values in an INTHop are already in bytes and nanoseconds but wrap (TS, TxBytes)
// or saturate (QLen) as their wire fields do; receivers of INT compute deltas
// modulo the wrap.
const (
	MaxINTHops     = 5                // hops an INT stack can hold
	INTTSWrap      = 1 << 24          // TS wraps at 2^24 ns
	INTTxBytesUnit = 128              // txBytes is carried in 128 B units
	INTTxBytesWrap = 128 << 20        // 20-bit field of 128 B units
	INTQLenUnit    = 80               // qLen is carried in 80 B units
	INTQLenMax     = 80 * (1<<16 - 1) // 16-bit field of 80 B units, saturated
)

// INTHop is one hop's in-band telemetry record, stamped by the switch at dequeue.
type INTHop struct {
	LinkBps float64 // B: line rate of the egress port, bits/s
	TS      uint32  // dequeue time, ns modulo INTTSWrap
	TxBytes uint32  // bytes sent by the port before this packet, modulo INTTxBytesWrap
	QLen    uint32  // bytes in the port's queue after this dequeue, at most INTQLenMax
}

// INTStack is the INT records of a packet, hop 0 first.
type INTStack struct {
	NHops uint8
	Hops  [MaxINTHops]INTHop
}

// Push appends a hop record; it reports false (and records nothing) when the stack
// is full.
func (s *INTStack) Push(h INTHop) bool {
	if int(s.NHops) >= MaxINTHops {
		return false
	}
	s.Hops[s.NHops] = h
	s.NHops++
	return true
}

// PortState is what a CP may read of its egress port. The switch engine owns it
// and updates it before each CP call.
type PortState struct {
	QueueBytes int64   // bytes in the egress queue: after the enqueue / dequeue in progress
	TxBytes    uint64  // cumulative bytes transmitted by the port
	LinkBps    float64 // configured line rate, bits/s
	Paused     bool    // the port is paused by PFC from downstream (TCD "OFF")
	LastOff    int64   // last time (ns) the port was paused; math.MinInt64 if never
}

// DataPacket is what a CP sees of a data packet in its queue.
type DataPacket struct {
	Flow      FlowKey
	WireBytes int  // frame bytes on the wire
	Mark      Mark // mark the packet carries now
	// Tag: at OnDequeue, the Verdict.Tag OnEnqueue returned for this packet
	// (0 at OnEnqueue, and for a packet OnEnqueue did not see).
	Tag uint32
}

// Verdict is a CP's decision on one data packet.
type Verdict struct {
	Mark     Mark // mark to apply; the engine applies Mark.Max, never lowering a mark
	StampINT bool // append an INT record for this hop (HPCC), at dequeue
	// Tag (OnEnqueue only) is a word the engine keeps with the packet and
	// gives back in DataPacket.Tag at its OnDequeue: the CP's handle on its
	// own per-packet state (RoCC's flow-table entry), saving a lookup. The
	// CP must not trust it blindly: check it still names the packet's flow.
	Tag uint32
}

// FeedbackKind says what a Feedback message is.
type FeedbackKind uint8

// Feedback kinds.
const (
	FeedbackRoCCRate FeedbackKind = iota + 1 // RoCC rate message (ICMP type 253)
	FeedbackQCN                              // 802.1Qau congestion notification
	FeedbackP4QCN                            // P4QCN feedback packet (ECN = 11)
)

// Feedback is a control message from a CP to a flow's source (RP), or its content
// as received by the RP.
type Feedback struct {
	Kind FeedbackKind
	Flow FlowKey // the flow the message is about; it goes to Flow.SrcIP
	CPID uint32  // the sending CP: switch IPv4 address and port, as configured
	// RoCC: fair rate in units of DeltaFBps (RateUnits * DeltaFBps = RateBps).
	RateUnits uint32
	DeltaFBps float64
	RateBps   float64
	// QCN / P4QCN: quantised feedback |Fb| (6 bits in QCN), and the queue offset
	// and delta it was computed from, in bytes.
	Fb     uint8
	QOff   int32
	QDelta int32
}

// FeedbackSink receives the control messages a CP emits. The engine copies *fb
// before returning; the CP keeps ownership of fb.
type FeedbackSink interface {
	Emit(now int64, fb *Feedback)
}

// CongestionPoint is the switch-side role, one instance per egress port. Calls come
// from one goroutine (the port's tx+CC lcore).
type CongestionPoint interface {
	// OnEnqueue is called after a data packet entered the queue (port.QueueBytes
	// includes it). Packets dropped at the tail are not seen.
	OnEnqueue(now int64, pkt *DataPacket, port *PortState, out FeedbackSink) Verdict
	// OnDequeue is called when a data packet leaves the queue for the wire
	// (port.QueueBytes excludes it; port.TxBytes does not yet count it).
	OnDequeue(now int64, pkt *DataPacket, port *PortState, out FeedbackSink) Verdict
	// NextTimer is the absolute time of the next OnTimer call, or Never.
	NextTimer() int64
	// OnTimer runs the periodic work due at now (e.g. RoCC's fair-rate update).
	OnTimer(now int64, port *PortState, out FeedbackSink)
}

// PacketHooks is implemented by a CongestionPoint that does no work in one of
// its per-packet hooks (it keeps CPBase's no-op): a switch may skip the hook it
// reports false for, saving a call per packet. A CP without PacketHooks gets
// both hooks called.
type PacketHooks interface {
	PacketHooks() (enqueue, dequeue bool)
}

// FlowBlind is implemented by a CongestionPoint whose per-packet hooks never
// read DataPacket.Flow or Tag: they decide from the queue, the packet's size
// and its mark (RED-style marking, INT stamping). When FlowBlind reports true
// a switch may leave Flow unset, sparing every packet the parse of its flow
// key; ccalgo/all checks the claim.
type FlowBlind interface {
	FlowBlind() bool
}

// QuietQueue is implemented by a CongestionPoint whose per-packet hooks do
// nothing while its queue is short (RED below Kmin): for a packet whose
// PortState.QueueBytes is at most QuietBytes(), OnEnqueue and OnDequeue
// return a zero Verdict, change no state (NextTimer's answer included) and
// emit nothing. A switch may then skip the hook for such a packet, and with
// it the packet's DataPacket and the Verdict's handling; ccalgo/all checks
// the claim.
type QuietQueue interface {
	QuietBytes() int64
}

// INTOnly is implemented by a CongestionPoint whose only per-packet work is
// asking for an INT record on every data packet at dequeue (HPCC): when
// INTOnly reports true, OnEnqueue does nothing, OnDequeue does nothing but
// return Verdict{StampINT: true}, and neither changes state or emits. A
// switch may then stamp every data packet as it leaves without calling
// either hook; ccalgo/all checks the claim.
type INTOnly interface {
	INTOnly() bool
}

// FairRateReporter is implemented by CPs that compute a fair rate (RoCC), for
// telemetry.
type FairRateReporter interface {
	FairRateBps() float64
}

// DataArrival is what an NP sees of a received data packet.
type DataArrival struct {
	QP             int32  // receiver-local flow index, 0 <= QP < Env.MaxFlows
	Seq            uint64 // byte offset of the payload's first byte in the flow
	PayloadBytes   int
	WireBytes      int
	SendTS         int64 // sender's timestamp carried in the packet, ns
	Mark           Mark
	FirstOfMessage bool // BTH opcode SEND First / Only
	LastOfMessage  bool // BTH opcode SEND Last / Only
	INT            INTStack
}

// AckFields are the echo fields an ACK carries back to the sender (ccbed's ACK
// extension after the AETH, not part of RoCEv2; package wire encodes it). The
// NP fills the fields its scheme uses. The INT stack (HPCC's alone, 128
// bytes) comes last, so that the fields every scheme's ACK carries are the
// struct's first 26 bytes: a host's event that holds them touches one cache
// line for them, not three.
type AckFields struct {
	EchoTS int64 // the data packet's SendTS
	// RCC: window assigned by the receiver in bytes (0: none); the number of
	// active messages N and the bytes received in the last round B_R, for the
	// sender-side variant (RCC Section III-G).
	Window      int64
	ActiveFlows uint32
	RecvBytes   uint32
	Mark        Mark     // echoed ECN / TCD mark
	INT         INTStack // echoed INT records (HPCC)
}

// NotificationPoint is the receiver-side role, one instance per receiving host,
// called from that host's rx goroutine.
type NotificationPoint interface {
	// OnData handles one received data packet. It fills ack (which the caller
	// zeroes first) and reports whether a CNP must be sent to the packet's
	// sender now.
	OnData(now int64, d *DataArrival, ack *AckFields) (sendCNP bool)
}

// AckEvent is an acknowledgement as the RP sees it.
type AckEvent struct {
	AckedSeq   uint64 // cumulative: every byte below AckedSeq is acknowledged (snd_una)
	NewlyAcked int64  // bytes acknowledged for the first time by this ACK
	SndNxt     uint64 // bytes the sender has sent so far (snd_nxt) when the ACK arrived
	RTT        int64  // now - Fields.EchoTS, ns; 0 when unknown
	Fields     AckFields
}

// ReactionPoint is the sender-side role, one instance per QP, called from the
// host's tx goroutine. The sender may transmit when the pacer allows RateBps,
// bytes in flight stay below WindowBytes, and now >= HaltUntil.
type ReactionPoint interface {
	OnSend(now int64, seq uint64, bytes int) // a data packet of bytes payload left at seq
	OnAck(now int64, a *AckEvent)
	OnNak(now int64, a *AckEvent) // go-back-N NAK; AckedSeq is where resending starts
	OnCNP(now int64)              // DCQCN congestion notification packet
	OnFeedback(now int64, fb *Feedback)
	NextTimer() int64 // absolute time of the next OnTimer call, or Never
	OnTimer(now int64)
	RateBps() float64   // current pacing rate, bits/s
	WindowBytes() int64 // current window, bytes in flight; NoWindow when unlimited
	HaltUntil() int64   // the sender must not send before this time (ACC halt); 0 if none
}

// SendHook is implemented by a ReactionPoint that says whether its OnSend
// does any work. A host calls OnSend for every data packet and then reads
// the RP's RateBps, WindowBytes, HaltUntil and NextTimer again; for an RP
// whose SendHook reports false (it keeps RPBase's no-op OnSend) it may skip
// both, saving the calls on its tx path. An RP without SendHook gets OnSend
// called. The answer is the same for every RP of a scheme and never changes
// (a host asks once); ccalgo/all checks that an RP reporting false is left
// unchanged by OnSend.
type SendHook interface {
	SendHook() bool
}

// Resetter is implemented by every ReactionPoint of ccbed. ResetFrom(tmpl)
// returns the RP to the state of tmpl: an RP of the same scheme built by the
// same constructor call (params and env) and never used since, which the
// caller keeps as the template. It allocates nothing; being plain data, a
// scheme's RP implements it as one struct copy, *r = *tmpl.(*RP). It
// reports false, changing nothing, when tmpl is not of the RP's own type:
// a type that embeds a scheme's RP (a test's tracing wrapper) gets its
// ResetFrom promoted, and the caller must then build a fresh RP instead. A
// host calls it when a QP slot starts a new flow.
type Resetter interface {
	ResetFrom(tmpl ReactionPoint) bool
}

// ResetCopy is ResetFrom of a scheme whose RP, a T, is plain data: it makes
// *r a copy of tmpl, so a fresh RP, when tmpl is a *T, and otherwise
// reports false and leaves r alone.
func ResetCopy[T any, P interface {
	*T
	ReactionPoint
}](r P, tmpl ReactionPoint) bool {
	t, ok := tmpl.(P)
	if ok {
		*r = *t
	}
	return ok
}

// RPBase gives a ReactionPoint the no-op defaults of every hook; schemes embed it
// and override what they use.
type RPBase struct{}

// OnSend does nothing.
func (RPBase) OnSend(int64, uint64, int) {}

// OnAck does nothing.
func (RPBase) OnAck(int64, *AckEvent) {}

// OnNak does nothing.
func (RPBase) OnNak(int64, *AckEvent) {}

// OnCNP does nothing.
func (RPBase) OnCNP(int64) {}

// OnFeedback does nothing.
func (RPBase) OnFeedback(int64, *Feedback) {}

// NextTimer returns Never.
func (RPBase) NextTimer() int64 { return Never }

// OnTimer does nothing.
func (RPBase) OnTimer(int64) {}

// WindowBytes returns NoWindow.
func (RPBase) WindowBytes() int64 { return NoWindow }

// HaltUntil returns 0.
func (RPBase) HaltUntil() int64 { return 0 }

// CPBase gives a CongestionPoint no-op defaults; schemes embed it.
type CPBase struct{}

// OnEnqueue does nothing.
func (CPBase) OnEnqueue(int64, *DataPacket, *PortState, FeedbackSink) Verdict { return Verdict{} }

// OnDequeue does nothing.
func (CPBase) OnDequeue(int64, *DataPacket, *PortState, FeedbackSink) Verdict { return Verdict{} }

// NextTimer returns Never.
func (CPBase) NextTimer() int64 { return Never }

// OnTimer does nothing.
func (CPBase) OnTimer(int64, *PortState, FeedbackSink) {}

// ControlPeriod is implemented by the parameter struct of a scheme that acts
// on a period of its own besides each ACK or feedback frame (RoCC's fair-rate
// update interval, DCQCN's rate-increase and alpha timers, HPCC's T, ACC's
// control period, QCN's and P4QCN's timer cycles). The testbed bounds the
// lcore stalls a run may suffer by the shorter of it and the base RTT.
type ControlPeriod interface {
	// ControlPeriodNs returns the period in ns (0 or less: none configured)
	// and what it is, with its parameter key.
	ControlPeriodNs() (ns int64, what string)
}

// Env is where an algorithm instance runs: the facts its defaults and state
// depend on.
type Env struct {
	LinkBps       float64 // line rate of the port (CP) or NIC (NP, RP), bits/s
	BaseRTT       int64   // expected base round-trip time, ns
	MTU           int     // payload bytes of a full data packet
	MaxFlows      int     // NP: QP indexes are below this
	ExpectedFlows int     // expected concurrent flows (HPCC's N for W_AI)
	ID            uint32  // CP: identity carried in feedback (CPID)
}

// Roles is a set of the three roles.
type Roles uint8

// The roles.
const (
	RoleCP Roles = 1 << iota
	RoleNP
	RoleRP
)

// String is the roles as "CP NP RP", with "-" for a role not in r.
func (r Roles) String() string {
	role := func(has Roles, name string) string {
		if r&has != 0 {
			return name
		}
		return "-"
	}
	return role(RoleCP, "CP") + " " + role(RoleNP, "NP") + " " + role(RoleRP, "RP")
}

// Scheme is one registered algorithm. Params values are pointers to the scheme's
// own parameter struct (TOML-decodable, `toml` tags), as returned by
// DefaultParams; constructors validate them and return an error naming the bad
// parameter. A nil constructor means the scheme lacks that role.
type Scheme struct {
	Name string // lower case, as in configs: "rocc", "hpcc", ...
	Doc  string // one line: what it is and where it comes from
	// DefaultParams returns a new parameter struct holding the paper's defaults
	// for env (some defaults scale with the link rate).
	DefaultParams func(env Env) any
	NewCP         func(params any, env Env) (CongestionPoint, error)
	NewNP         func(params any, env Env) (NotificationPoint, error)
	NewRP         func(params any, env Env) (ReactionPoint, error)
}

// Roles reports which roles s has.
func (s Scheme) Roles() Roles {
	var r Roles
	if s.NewCP != nil {
		r |= RoleCP
	}
	if s.NewNP != nil {
		r |= RoleNP
	}
	if s.NewRP != nil {
		r |= RoleRP
	}
	return r
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Scheme{}
)

// Register adds a scheme. It panics on an empty or duplicate name or a missing
// DefaultParams: registration happens in init functions, where that is a
// programming error.
func Register(s Scheme) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if s.Name == "" || s.DefaultParams == nil {
		panic("ccalgo: Register: scheme needs a name and DefaultParams")
	}
	if _, dup := registry[s.Name]; dup {
		panic("ccalgo: Register: duplicate scheme " + s.Name)
	}
	registry[s.Name] = s
}

// Lookup returns the scheme registered under name.
func Lookup(name string) (Scheme, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	s, ok := registry[name]
	if !ok {
		names := make([]string, 0, len(registry))
		for n := range registry {
			names = append(names, n)
		}
		sort.Strings(names)
		return Scheme{}, fmt.Errorf("ccalgo: unknown scheme %q (known: %v)", name, names)
	}
	return s, nil
}

// Schemes returns every registered scheme, sorted by name.
func Schemes() []Scheme {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]Scheme, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Where a congestion point that marks ECN marks (its parameter mark_at).
const (
	// MarkAtEnqueue marks a packet as it joins the egress queue, on the queue
	// it finds there (the packet itself excluded).
	MarkAtEnqueue = "enqueue"
	// MarkAtDequeue marks a packet as it leaves for the wire, on the queue it
	// leaves behind.
	MarkAtDequeue = "dequeue"
)

// CheckMarkAt returns scheme's ParamError for parameter mark_at unless v is
// MarkAtEnqueue or MarkAtDequeue.
func CheckMarkAt(scheme, v string) error {
	if v == MarkAtEnqueue || v == MarkAtDequeue {
		return nil
	}
	return &ParamError{Scheme: scheme, Param: "mark_at", Value: strconv.Quote(v), Reason: `must be "enqueue" or "dequeue"`}
}

// ParamError reports a bad parameter value.
type ParamError struct {
	Scheme, Param string
	Value         any
	Reason        string
}

// Error names the scheme, the parameter, its value and what is wrong.
func (e *ParamError) Error() string {
	return fmt.Sprintf("ccalgo: %s: parameter %s = %v: %s", e.Scheme, e.Param, e.Value, e.Reason)
}

// ParamsAs converts the params argument of a Scheme constructor to the scheme's
// own *P: nil (or a nil *P) means defaults(env); any other type is a ParamError
// naming the scheme.
func ParamsAs[P any](scheme string, v any, env Env, defaults func(Env) *P) (*P, error) {
	switch p := v.(type) {
	case nil:
		return defaults(env), nil
	case *P:
		if p == nil {
			return defaults(env), nil
		}
		return p, nil
	}
	var want *P
	return nil, &ParamError{Scheme: scheme, Param: "params", Value: v, Reason: fmt.Sprintf("want %T", want)}
}

// CPFactory adapts a scheme's typed CP constructor to Scheme.NewCP.
func CPFactory[P any, C CongestionPoint](scheme string, defaults func(Env) *P, newCP func(*P, Env) (C, error)) func(any, Env) (CongestionPoint, error) {
	return func(v any, env Env) (CongestionPoint, error) {
		p, err := ParamsAs(scheme, v, env, defaults)
		if err != nil {
			return nil, err
		}
		c, err := newCP(p, env)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// NPFactory adapts a scheme's typed NP constructor to Scheme.NewNP.
func NPFactory[P any, N NotificationPoint](scheme string, defaults func(Env) *P, newNP func(*P, Env) (N, error)) func(any, Env) (NotificationPoint, error) {
	return func(v any, env Env) (NotificationPoint, error) {
		p, err := ParamsAs(scheme, v, env, defaults)
		if err != nil {
			return nil, err
		}
		n, err := newNP(p, env)
		if err != nil {
			return nil, err
		}
		return n, nil
	}
}

// RPFactory adapts a scheme's typed RP constructor to Scheme.NewRP.
func RPFactory[P any, R ReactionPoint](scheme string, defaults func(Env) *P, newRP func(*P, Env) (R, error)) func(any, Env) (ReactionPoint, error) {
	return func(v any, env Env) (ReactionPoint, error) {
		p, err := ParamsAs(scheme, v, env, defaults)
		if err != nil {
			return nil, err
		}
		r, err := newRP(p, env)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
}

// A Role adds one of its roles to the Scheme that Define builds, bound to
// the scheme's parameter type P (WithCP, WithNP, WithRP).
type Role[P any] func(s *Scheme, defaults func(Env) *P)

// Define builds a scheme's registration from its typed parts: its name, its
// one-line doc, its defaults and the constructors of the roles it has. The
// name and the defaults are written once, and the compiler checks that every
// constructor takes the parameter type the defaults return.
func Define[P any](name, doc string, defaults func(Env) *P, roles ...Role[P]) Scheme {
	s := Scheme{Name: name, Doc: doc, DefaultParams: func(env Env) any { return defaults(env) }}
	for _, r := range roles {
		r(&s, defaults)
	}
	return s
}

// WithCP gives a scheme Define builds a congestion point (CPFactory).
func WithCP[P any, C CongestionPoint](newCP func(*P, Env) (C, error)) Role[P] {
	return func(s *Scheme, defaults func(Env) *P) { s.NewCP = CPFactory(s.Name, defaults, newCP) }
}

// WithNP gives a scheme Define builds a notification point (NPFactory).
func WithNP[P any, N NotificationPoint](newNP func(*P, Env) (N, error)) Role[P] {
	return func(s *Scheme, defaults func(Env) *P) { s.NewNP = NPFactory(s.Name, defaults, newNP) }
}

// WithRP gives a scheme Define builds a reaction point (RPFactory).
func WithRP[P any, R ReactionPoint](newRP func(*P, Env) (R, error)) Role[P] {
	return func(s *Scheme, defaults func(Env) *P) { s.NewRP = RPFactory(s.Name, defaults, newRP) }
}
