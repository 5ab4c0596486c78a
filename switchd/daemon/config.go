package daemon

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/wire"
)

// Lcore modes.
const (
	ModeRTC      = "rtc"      // one lcore: rx, switching, tx+CC
	ModePipeline = "pipeline" // three lcores over rte_rings: rx, switching, tx+CC
	// ModeSharded: the ports dealt over several rx lcores that receive and
	// classify, feeding one tx+CC lcore over rte_rings.
	ModeSharded = "sharded"
)

// Config is a switch: what cmd/switchd's TOML file decodes into, and what a Go
// caller (testbed) fills to build an Engine. Fill it with DefaultConfig first:
// keys absent from the file keep their defaults.
type Config struct {
	Switch    SwitchConfig         `toml:"switch"`
	Ports     []PortConfig         `toml:"ports"`
	Routes    []RouteConfig        `toml:"routes"`
	CC        CCConfig             `toml:"cc"`
	PFC       switchd.PFCConfig    `toml:"pfc"`
	Buffer    switchd.BufferConfig `toml:"buffer"`
	Queues    switchd.QueuesConfig `toml:"queues"`
	Telemetry TelemetryConfig      `toml:"telemetry"`
}

// SwitchConfig holds the switch-wide settings.
type SwitchConfig struct {
	// ID is the 12-bit switch id XORed into HPCC INT stacks' pathID.
	ID uint16 `toml:"id"`
	// IP is the switch's IPv4 address: the source of the feedback packets its
	// CPs send, and the base of the CP ids.
	IP string `toml:"ip"`
	// Mode is "rtc" (one lcore), "pipeline" (rx, switching, tx+CC lcores) or
	// "sharded" (rx lcores, each receiving and classifying for a share of the
	// ports, and a tx+CC lcore).
	Mode string `toml:"mode"`
	// Lcores are the lcore ids the loops run on: 1 for rtc, 3 for pipeline
	// (rx, switching, tx+CC), 2 or more for sharded (the rx lcores, one per
	// port at most, then the TxLcores tx+CC lcores). Empty: 0 (rtc), 0, 1, 2
	// (pipeline) or one rx lcore then the tx+CC lcores from 0 up (sharded).
	Lcores []uint `toml:"lcores"`
	// TxLcores is the sharded mode's number of tx+CC lcores, egress port i
	// served by the (i mod TxLcores)-th: 1 by default, at most one per port.
	// With PFC on, at most switchd.MaxPFCShards (8) (switchd.Engine.ShardTx).
	TxLcores int `toml:"tx_lcores"`
	// EALArgs are extra EAL arguments of cmd/switchd (e.g. "--no-huge", "-m",
	// "512"). The daemon adds --vdev for vdev ports and -a for PCI ports.
	EALArgs []string `toml:"eal_args"`
	// Mbufs is the mempool's size; RingSize the descriptors / ring slots per port.
	Mbufs    uint32 `toml:"mbufs"`
	RingSize uint32 `toml:"ring_size"`
	// Burst is the rx / tx burst size.
	Burst int `toml:"burst"`
	// DecrementTTL: routers decrement the IPv4 TTL; benchmarks that loop
	// packets through the switch forever turn it off.
	DecrementTTL bool `toml:"decrement_ttl"`
	// FrameOverheadBytes is added to each frame's length (mbuf data, no FCS)
	// for the shaper: preamble and SFD 8, FCS 4, inter-frame gap 12.
	FrameOverheadBytes int `toml:"frame_overhead_bytes"`
	// BurstBytes is the shaper's token-bucket depth: how far the link may
	// catch up after a late poll. 0 shapes exactly (the virtual-time fabric,
	// which never polls late).
	BurstBytes int `toml:"burst_bytes"`
	// PriorityFrom says where a frame's priority (0-7: its egress queue and
	// PFC class) comes from: "pcp", the 802.1Q tag's PCP, untagged frames
	// taking pfc.priority; or "dscp", the IPv4 DSCP's class selector bits
	// (DSCP >> 3, so CS3 = DSCP 24 is priority 3), tagged or not.
	PriorityFrom string `toml:"priority_from"`
	// Trust says where the switch takes control frames from (docs/switch.md,
	// "Trust"): "all" (the default) from every port, as a lab that trusts
	// every station does; "topology" only from where each port's Faces says
	// they can come, refusing (dropping and counting by kind) the others.
	Trust string `toml:"trust"`
}

// PortConfig is one switch port.
type PortConfig struct {
	// Name is how routes refer to the port ("p0").
	Name string `toml:"name" required:"the port's name, as routes name it (p0)"`
	// Device is a PCI address ("0000:03:00.0") or a DPDK vdev string
	// ("net_ring0", "net_af_packet0,iface=veth0"); empty when a Go caller hands
	// the engine already-started ports.
	Device string `toml:"device"`
	// MAC is the port's own address (source of forwarded frames); empty: the
	// device's address.
	MAC string `toml:"mac"`
	// PeerMAC is the address of the station on the other end of the link: the
	// destination of every frame sent out of this port.
	PeerMAC string `toml:"peer_mac"`
	// LinkGbps is the emulated line rate the egress shaper enforces.
	LinkGbps float64 `toml:"link_gbps"`
	// DelayUs is an optional propagation delay added after the shaper.
	DelayUs float64 `toml:"delay_us"`
	// BufferBytes caps the port's egress data queues together: frames that
	// do not fit are dropped at the tail. With buffer.mode "static" it is the
	// port's whole buffer (0: 1 MiB); with "shared" an
	// optional cap on the lossy priorities, on top of the shared buffer's
	// dynamic thresholds (0: none).
	BufferBytes int64 `toml:"buffer_bytes"`
	// HeadroomBytes is the PFC headroom of each lossless priority of this
	// ingress port (buffer.mode "shared"); 0: buffer.headroom_bytes, or when
	// that is 0 too, derived (switchd.Spec.Headroom): switchd.HeadroomBytes(link,
	// delay_us, a full frame, the peer's burst) plus, for an af_packet
	// device, its kernel receive ring (KernelRxFrames full frames).
	HeadroomBytes int64 `toml:"headroom_bytes"`
	// Scheme overrides cc.scheme for this port's CP.
	Scheme string `toml:"scheme"`
	// CPID overrides the id carried in this port's feedback (default: switch
	// IP + port index).
	CPID uint32 `toml:"cp_id"`
	// Faces is what the port's link leads to, "host", "switch" or "any": with
	// switch.trust "topology", which control frames the port accepts (see
	// switchd.FacesHost, switchd.FacesSwitch, switchd.FacesAny). Every port must say it then; with
	// trust "all" it is not read.
	Faces string `toml:"faces"`
	// IgnorePFC makes the port refuse the PFC frames it receives (counted as
	// refused_pfc): its egress is never paused. With pfc.honor off, no port
	// obeys them but they count as received.
	IgnorePFC bool `toml:"ignore_pfc"`
}

// RouteConfig is a static route: destinations in Prefix leave through Port,
// or through one of Ports (an ECMP group: each flow's 5-tuple hash picks one).
type RouteConfig struct {
	Prefix string   `toml:"prefix" required:"the destinations, an IPv4 prefix (10.0.1.0/24)"`
	Port   string   `toml:"port"`  // a ports[].name
	Ports  []string `toml:"ports"` // ECMP: several ports[].name, instead of port
}

// portNames is the route's port, or its ECMP group.
func (r *RouteConfig) portNames() []string {
	if len(r.Ports) > 0 {
		return r.Ports
	}
	return []string{r.Port}
}

// CCConfig chooses the CP of each port and its parameters.
type CCConfig struct {
	// Scheme is the ccalgo scheme of every port without its own ("none",
	// "rocc", "dcqcn", "dctcp", "hpcc", "p4qcn", "qcn", "acc", ...). Schemes
	// without a CP role (none, rcc, timely) leave the port a plain FIFO.
	Scheme string `toml:"scheme"`
	// BaseRTTUs, MTU and ExpectedFlows describe the network to the schemes'
	// defaults (ccalgo.Env).
	BaseRTTUs     float64 `toml:"base_rtt_us"`
	MTU           int     `toml:"mtu"`
	ExpectedFlows int     `toml:"expected_flows"`
	// Params holds per-scheme parameter tables ([cc.params.rocc] ...), decoded
	// strictly into the scheme's parameter struct over its paper defaults for
	// each port's link (switchd.Spec.Ports[i].Params).
	Params map[string]map[string]any `toml:"params"`
}

// TelemetryConfig says what the switch records.
type TelemetryConfig struct {
	// SampleUs is the sampling period of queue length and fair rate; 0: the
	// RoCC T of port 0 when it runs RoCC, else 100 us.
	SampleUs float64 `toml:"sample_us"`
	// CSV is the time-series file (t_us,port,queue_bytes,fair_rate_gbps);
	// JSON the counters written at exit. Empty: not written.
	CSV  string `toml:"csv"`
	JSON string `toml:"json"`
	// Console prints a one-line summary every second.
	Console bool `toml:"console"`
	// SampleBuffer is the number of samples buffered between the tx lcore and
	// the CSV writer.
	SampleBuffer int `toml:"sample_buffer"`
}

// DefaultConfig returns the defaults every key falls back to: those of
// switchd.DefaultSpec, with the daemon's own (one rtc lcore, its mempool and rings,
// a console summary).
func DefaultConfig() Config {
	d := switchd.DefaultSpec()
	return Config{
		Switch: SwitchConfig{
			ID: d.ID, IP: wire.FormatIPv4(d.IP), Mode: ModeRTC, TxLcores: 1, Mbufs: 16383, RingSize: 1024, Burst: 32,
			DecrementTTL: d.DecrementTTL, FrameOverheadBytes: d.FrameOverheadBytes, BurstBytes: d.BurstBytes,
			PriorityFrom: "pcp", Trust: d.Trust,
		},
		CC:        CCConfig{Scheme: d.CC.Scheme, BaseRTTUs: float64(d.CC.BaseRTTNs) / 1e3, MTU: d.CC.MTU, ExpectedFlows: d.CC.ExpectedFlows},
		PFC:       d.PFC,
		Buffer:    d.Buffer,
		Queues:    d.Queues,
		Telemetry: TelemetryConfig{Console: true, SampleBuffer: d.SampleBuffer},
	}
}

// LoadConfig reads a switch TOML file over DefaultConfig and validates it; every
// error names the file, line and key.
func LoadConfig(path string) (*Config, error) {
	c := DefaultConfig()
	f, err := config.Load(path, &c)
	return checked(&c, f, err)
}

// DecodeConfig is LoadConfig on text already read; name is used in errors.
func DecodeConfig(name, text string) (*Config, error) {
	c := DefaultConfig()
	f, err := config.Decode(name, text, &c)
	return checked(&c, f, err)
}

// checked finishes reading c from f (err is the decoder's): every required
// key given, every value valid.
func checked(c *Config, f *config.File, err error) (*Config, error) {
	if err != nil {
		return nil, err
	}
	if err := f.Require(c); err != nil {
		return nil, err
	}
	if err := c.Validate(f); err != nil {
		return nil, err
	}
	return c, nil
}

var (
	pciRe  = regexp.MustCompile(`^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$`)
	vdevRe = regexp.MustCompile(`^net_[a-z_]+[0-9]*(,[A-Za-z0-9_]+=[^,\s]+)*$`)
	nameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,31}$`)
)

// IsPCIAddress reports whether dev is a PCI address (a real NIC).
func IsPCIAddress(dev string) bool { return pciRe.MatchString(dev) }

// DeviceName is the ethdev name of a device string: the PCI address, or the vdev
// string up to its first comma.
func DeviceName(dev string) string {
	if i := strings.IndexByte(dev, ','); i >= 0 {
		return dev[:i]
	}
	return dev
}

// afPacketFrames is the af_packet PMD's default framecnt: the frames of each
// PACKET_MMAP ring.
const afPacketFrames = 512

// KernelRxFrames is the number of frames a port's device holds in the kernel,
// received on the link but not yet read by the switch: for an af_packet vdev
// (a veth or a kernel interface), its PACKET_MMAP receive rings, framecnt
// frames each (512 by default), one per queue pair; 0 for other devices,
// whose receive ring a polling lcore drains within a burst. The switch counts
// a frame against its ingress only once it has read it, so every frame in
// that ring when XOFF goes out still arrives after it: the derived headroom
// of an af_packet port holds a full ring (KernelRxFrames x a full frame).
func KernelRxFrames(dev string) int {
	name := DeviceName(dev)
	if !strings.HasPrefix(name, "net_af_packet") && !strings.HasPrefix(name, "eth_af_packet") {
		return 0
	}
	frames, qpairs := afPacketFrames, 1
	for _, kv := range strings.Split(dev, ",")[1:] {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			continue // DPDK refuses it when it probes the device
		}
		switch k {
		case "framecnt":
			frames = n
		case "qpairs":
			qpairs = n
		}
	}
	return frames * qpairs
}
