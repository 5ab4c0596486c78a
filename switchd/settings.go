package switchd

// The settings of a switch that are plain numbers and names, the same in a
// Spec and in a switchd file's tables ([pfc], [buffer], [queues]; testbed's
// experiment files embed the last two): their toml tags name the file's
// keys.

// MaxPorts is the most ports a switch has (a fabric's leaf or a k = 64
// fat-tree's switch; Meta carries port numbers in a byte, and the engine keeps
// its busy ports in a 64-bit set).
const MaxPorts = 64

// Trust settings (Spec.Trust, the file's switch.trust).
const (
	// TrustAll accepts every control frame from every port.
	TrustAll = "all"
	// TrustTopology accepts control frames only from where the port's
	// PortSpec.Faces says they can come.
	TrustTopology = "topology"
)

// What a port faces (PortSpec.Faces), for Spec.Trust TrustTopology.
const (
	// FacesHost: a host, which sends its own ACKs, NAKs and CNPs (from its
	// own address: the switch's route to their source address leads back
	// to this port) and no CP feedback; PFC only from PeerMAC.
	FacesHost = "host"
	// FacesSwitch: a switch, which forwards what its own host ports
	// accepted and what its CPs build; PFC only from PeerMAC.
	FacesSwitch = "switch"
	// FacesAny: a station the switch knows nothing of: every control frame
	// is accepted, as with trust "all".
	FacesAny = "any"
)

// PFCConfig is priority flow control (IEEE 802.1Qbb): which priorities are
// lossless, and with buffer.mode "static" their fixed thresholds (with
// "shared" the thresholds are dynamic, see BufferConfig).
type PFCConfig struct {
	// Enabled turns on ingress accounting and pause generation for the
	// lossless priorities.
	Enabled bool `toml:"enabled"`
	// Priorities are the lossless priorities: paused upstream, never dropped
	// while headroom lasts. Empty: [priority].
	Priorities []uint8 `toml:"priorities"`
	// Honor makes egress ports obey pause frames they receive (on by default,
	// even with Enabled off).
	Honor bool `toml:"honor"`
	// XOFFBytes (buffer.mode "static"): a pause goes upstream when an
	// ingress port's bytes of one lossless priority in the switch exceed this.
	XOFFBytes int64 `toml:"xoff_bytes"`
	// XONOffsetBytes (buffer.mode "static"): resume once they fall below
	// XOFFBytes - XONOffsetBytes.
	XONOffsetBytes int64 `toml:"xon_offset_bytes"`
	// PauseQuanta is the pause time sent, in quanta of 512 bit times.
	PauseQuanta uint16 `toml:"pause_quanta"`
	// Priority is the priority of frames that carry none (untagged frames
	// with switch.priority_from "pcp").
	Priority uint8 `toml:"priority"`
}

// Buffer modes.
const (
	// BufferShared is a shared-memory switch: one buffer of SizeBytes for
	// every port, lossy queues admitted under a dynamic threshold (alpha x
	// the free buffer, Choudhury and Hahne), lossless priorities accounted
	// per ingress port with a reserve, a dynamic XOFF threshold and headroom
	// (the HPCC simulator's switch MMU).
	BufferShared = "shared"
	// BufferStatic gives every port its own buffer_bytes and PFC fixed
	// per-ingress XOFF / XON thresholds.
	BufferStatic = "static"
)

// BufferConfig is the switch's packet buffer. With Mode "shared", a packet of
// lossless priority p entering on port i is counted against (i, p): its first
// ReserveBytes are guaranteed, then it takes from the shared pool while its
// shared bytes stay under the threshold alpha x (SizeBytes - all headroom -
// all reserves - shared bytes in use); beyond the threshold it goes into the
// (i, p) headroom, and with the headroom full it is dropped (counted, a
// misconfiguration). XOFF goes upstream when (i, p) uses headroom or reaches
// the threshold, XON when its headroom is empty and its shared bytes are 0 or
// ResumeOffsetBytes under the threshold. A lossy packet is admitted while its
// egress queue stays under alpha x the free buffer.
type BufferConfig struct {
	// Mode is "shared" (default) or "static".
	Mode string `toml:"mode"`
	// SizeBytes is the shared buffer (default 12 MiB, the HPCC simulator's).
	SizeBytes int64 `toml:"size_bytes"`
	// Alpha is the dynamic threshold's factor (default 1/8).
	Alpha float64 `toml:"alpha"`
	// ReserveBytes is each ingress port's guaranteed buffer per lossless
	// priority (default 4 KiB).
	ReserveBytes int64 `toml:"reserve_bytes"`
	// ResumeOffsetBytes is the XON hysteresis (default 3 KiB).
	ResumeOffsetBytes int64 `toml:"resume_offset_bytes"`
	// HeadroomBytes is every ingress port's headroom per lossless priority,
	// unless the port sets its own; 0: derived per port (HeadroomBytes).
	HeadroomBytes int64 `toml:"headroom_bytes"`
}

// QueuesConfig is the scheduling among a port's 8 data queues (one per
// priority). Control frames the switch forwards or builds (CNPs, rate
// messages, feedback, PFC) go before every data queue.
type QueuesConfig struct {
	// Strict are the priorities served before the others, the highest
	// priority first; a paused one is skipped.
	Strict []uint8 `toml:"strict"`
	// Weights are the deficit-weighted round-robin weights of priorities 0-7
	// (default 1 each); a priority in Strict ignores its weight.
	Weights []int `toml:"weights"`
	// QuantumBytes is the DWRR quantum of weight 1 (default 1518).
	QuantumBytes int `toml:"quantum_bytes"`
}
