package testbed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/ccbed/ccbed/config"
	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/hostd"
	hostdaemon "github.com/ccbed/ccbed/hostd/daemon"
	switchdaemon "github.com/ccbed/ccbed/switchd/daemon"
	"github.com/ccbed/ccbed/wire"
)

// The files NodeFiles writes into its directory, besides switch.toml,
// host-<name>.toml and check-<node>.sh.
const (
	InventoryFile = "inventory.ini"
	PlaybookFile  = "playbook.yml"
	ManifestFile  = "nodes.json"
	// ResultsSubdir is where the playbook fetches each node's results
	// (ResultsSubdir/<node>/) and where testbed collect reads them.
	ResultsSubdir = "results"
)

// Switch-node result files, as switch.toml names them (relative to the
// node's work directory) and as the playbook fetches them.
const (
	SwitchCSVFile  = "switch.csv"
	SwitchJSONFile = "switch.json"
	// SwitchLogFile is switchd's output, each line prefixed by the wall
	// clock (Unix seconds with microseconds, bash's $EPOCHREALTIME) when the
	// playbook's wrapper read it: the line "switchd: running" dates the
	// switch's time 0.
	SwitchLogFile = "switchd.log"
	// CheckFile is the output of a node's check-<node>.sh (devices,
	// hugepages, clock offset as "clock_offset_ns=N" or
	// "clock_offset=unknown (why)").
	CheckFile = "check.txt"
	// HostLogFile is hostd's output on a host node.
	HostLogFile = "hostd.log"
)

// NodesManifest is nodes.json: what testbed collect needs to know about the
// experiment and its nodes to merge their results without the experiment
// file.
type NodesManifest struct {
	Experiment string  `json:"experiment"`
	Scheme     string  `json:"scheme"`
	Seed       uint64  `json:"seed"`
	DurationS  float64 `json:"duration_s"`
	WarmupS    float64 `json:"warmup_s"`
	SampleUs   float64 `json:"sample_us"`
	Scaling    string  `json:"scaling,omitempty"`
	Mirrors    string  `json:"mirrors,omitempty"`
	Topology   string  `json:"topology"`
	LinkGbps   float64 `json:"link_gbps"`
	MTUBytes   int     `json:"mtu_bytes"`
	// Switch is the switch node's inventory name.
	Switch string `json:"switch"`
	// Hosts are the host nodes in experiment order.
	Hosts []ManifestHost `json:"hosts"`
	// Flows name the destination of the flow ids each host sends
	// (static flows and incasts; workload flows are drawn at random).
	Flows []ManifestFlows `json:"flows"`
	// ClockOffsetBoundNs is hostd.ClockOffsetBoundNs.
	ClockOffsetBoundNs int64 `json:"clock_offset_bound_ns"`
	// StallBound is the experiment's lcore stall bound (Experiment.StallBound);
	// nil in a manifest written before it was added.
	StallBound *StallBound `json:"stall_bound,omitempty"`
}

// ManifestHost is one host node: its name (the inventory's and the
// experiment's), address and the switch port it hangs on.
type ManifestHost struct {
	Name       string `json:"name"`
	IP         string `json:"ip"`
	SwitchPort int    `json:"switch_port"`
}

// ManifestFlows are flow ids FirstID..LastID sent by host Src to host Dst.
type ManifestFlows struct {
	Src     string `json:"src"`
	Dst     string `json:"dst"`
	FirstID int64  `json:"first_id"`
	LastID  int64  `json:"last_id"`
}

// ReadManifest reads dir/nodes.json.
func ReadManifest(dir string) (*NodesManifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	var m NodesManifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	// The node names become paths (results/<node>/, counters-<node>.json).
	if err := config.Name(m.Switch); err != nil {
		return nil, fmt.Errorf("%s: switch: node name %v", filepath.Join(dir, ManifestFile), err)
	}
	for i, h := range m.Hosts {
		if err := config.Name(h.Name); err != nil {
			return nil, fmt.Errorf("%s: hosts[%d]: node name %v", filepath.Join(dir, ManifestFile), i, err)
		}
	}
	return &m, nil
}

// nodeVals are one node's values from the inventory (or placeholders).
type nodeVals struct {
	name   string
	eal    []string
	lcores []uint
	// txLcores (switch, ccbed_tx_lcores): the sharded mode's tx+CC lcores,
	// the last txLcores of lcores; 0: rtc or pipeline by len(lcores).
	txLcores int
	// hostTx, hostRx (host, ccbed_tx_lcores and ccbed_rx_lcores): one
	// engine per tx lcore, each on its own queue pair of the NIC (RSS on
	// rx), as hostd's tx_lcores and rx_lcores; none: one engine on lcores.
	hostTx, hostRx []uint
	devices        []string // switch: one per port; host: one
	macs           []string // same
}

// NodeFiles writes, for the experiment on real nodes (one switch node with
// one NIC port per host, one node per host), everything Ansible needs to run
// it and testbed collect needs to merge it: switch.toml, host-<name>.toml per
// host, check-<node>.sh per node, inventory.ini, playbook.yml and nodes.json
// (docs/real-nodes.md). With inv nil, inventory.ini is a template whose
// FILL_IN_ placeholders (node addresses, PCI addresses, MACs) the user fills
// in, and the configs carry the same placeholders, which both daemons reject;
// with inv, the configs are filled from it and inventory.ini is a copy of it.
// It returns the paths written.
func (e *Experiment) NodeFiles(dir string, inv *Inventory) ([]string, error) {
	t := e.topo
	if n := len(t.Switches); n != 1 {
		return nil, fmt.Errorf("testbed: nodes: the experiment has %d switches; real-node files are written for one switch node (a star) only", n)
	}
	plan, err := e.Plan()
	if err != nil {
		return nil, err
	}
	swNode := len(t.Hosts)
	// portOf[h] is the switch port that faces host h.
	portOf := make([]int, len(t.Hosts))
	for p := 0; p < t.NumPorts(swNode); p++ {
		peer, _, _ := t.Peer(swNode, p)
		if !t.IsHost(peer) {
			return nil, fmt.Errorf("testbed: nodes: switch port %d faces a switch; real nodes are a star", p)
		}
		portOf[peer] = p
	}
	sw, hosts, err := e.nodeValues(inv, portOf)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	writeFile := func(name string, mode os.FileMode, b []byte) error {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, b, mode); err != nil {
			return err
		}
		written = append(written, path)
		return nil
	}
	writeTOML := func(name, header string, v any) error {
		var b bytes.Buffer
		b.WriteString(header)
		if err := toml.NewEncoder(&b).Encode(v); err != nil {
			return err
		}
		return writeFile(name, 0o644, b.Bytes())
	}
	fill := ""
	if inv == nil {
		fill = "# Fill in the FILL_IN_ values in inventory.ini and run testbed nodes -inventory again.\n"
	}

	// The switch.
	sc := e.switchConfig(plan)
	switch {
	case sw.txLcores > 0: // rx lcores, then the tx+CC lcores
		sc.Switch.Mode, sc.Switch.TxLcores = switchdaemon.ModeSharded, sw.txLcores
	case len(sw.lcores) == 3:
		sc.Switch.Mode = switchdaemon.ModePipeline // rx, switching, tx+CC lcores
	case len(sw.lcores) == 1:
		sc.Switch.Mode = switchdaemon.ModeRTC
	default:
		return nil, fmt.Errorf("testbed: nodes: switch %s: ccbed_lcores %v: want 1 (rtc) or 3 (pipeline), or set ccbed_tx_lcores (sharded)", sw.name, sw.lcores)
	}
	sc.Switch.Lcores = sw.lcores
	if err := sc.Validate(nil); err != nil {
		return nil, fmt.Errorf("testbed: nodes: switch %s: ccbed_lcores %v, ccbed_tx_lcores %d: %v", sw.name, sw.lcores, sw.txLcores, err)
	}
	sc.Switch.EALArgs = sw.eal
	sc.Telemetry.Console = true
	sc.Telemetry.CSV = filepath.Join(ResultsSubdir, SwitchCSVFile)
	sc.Telemetry.JSON = filepath.Join(ResultsSubdir, SwitchJSONFile)
	for i := range sc.Ports {
		peer, _, _ := t.Peer(swNode, i)
		sc.Ports[i].Device = sw.devices[i]
		sc.Ports[i].MAC = sw.macs[i]
		sc.Ports[i].PeerMAC = hosts[peer].macs[0]
	}
	header := fmt.Sprintf("# switchd on node %s for experiment %s (generated by testbed nodes).\n%s\n", sw.name, e.Experiment.Name, fill)
	if err := writeTOML("switch.toml", header, sc); err != nil {
		return nil, err
	}
	if err := writeFile("check-"+sw.name+".sh", 0o755, checkScript(sw.name, e.Experiment.Name, sw.eal, sw.devices)); err != nil {
		return nil, err
	}

	// The hosts.
	cdfs := map[string]string{} // source path -> name under files/
	for i, spec := range plan.Hosts {
		h := &hosts[i]
		hc := hostdaemon.ConfigOf(spec)
		hc.CC = e.CC.Params // the table the experiment gave: the host's daemon decodes it
		hc.MAC = ""         // the NIC's own
		hc.GatewayMAC = sw.macs[portOf[i]]
		for k := range hc.Workloads {
			src := hc.Workloads[k].CDF
			name, ok := cdfs[src]
			if !ok {
				name = filepath.Join("files", fmt.Sprintf("%d-%s", len(cdfs), filepath.Base(src)))
				b, err := os.ReadFile(src)
				if err != nil {
					return nil, fmt.Errorf("testbed: nodes: host %s: workload CDF: %w", hc.Name, err)
				}
				if err := writeFile(name, 0o644, b); err != nil {
					return nil, err
				}
				cdfs[src] = name
			}
			hc.Workloads[k].CDF = name // relative to the host file's directory
		}
		eal, port := hostDevice(h.eal, h.devices[0])
		hf := hostdaemon.File{
			EALArgs: eal, Port: port, Lcores: h.lcores, Mbufs: 16383,
			DurationS: e.Experiment.DurationMs / 1e3, ResultsDir: ResultsSubdir, Host: hc,
		}
		if len(h.hostTx) > 0 { // one engine per tx lcore
			hf.Lcores, hf.TxLcores, hf.RxLcores = nil, h.hostTx, h.hostRx
		}
		header := fmt.Sprintf("# hostd %s (%s) for experiment %s (generated by testbed nodes).\n"+
			"# The playbook gives every host one start instant (hostd -start-at).\n%s\n", hc.Name, hc.IP, e.Experiment.Name, fill)
		if err := writeTOML("host-"+hc.Name+".toml", header, hf); err != nil {
			return nil, err
		}
		if inv != nil {
			// hostd's own checks, now, naming the inventory's node (a
			// template's placeholders fail them by design).
			if _, err := hostdaemon.LoadFile(filepath.Join(dir, "host-"+hc.Name+".toml")); err != nil {
				return nil, inv.errorf(hc.Name, "the host file from ccbed_lcores / ccbed_tx_lcores / ccbed_rx_lcores: %v", err)
			}
		}
		if err := writeFile("check-"+hc.Name+".sh", 0o755, checkScript(hc.Name, e.Experiment.Name, eal, h.devices)); err != nil {
			return nil, err
		}
	}

	// The inventory: the user's, or the template.
	var invText []byte
	if inv != nil {
		invText, err = os.ReadFile(inv.Path)
		if err != nil {
			return nil, err
		}
	} else {
		invText = e.inventoryTemplate(sw, hosts)
	}
	invPath := filepath.Join(dir, InventoryFile)
	if inv == nil || !sameFile(inv.Path, invPath) {
		if err := writeFile(InventoryFile, 0o644, invText); err != nil {
			return nil, err
		}
	}

	// The playbook.
	pb, err := e.playbook(len(cdfs) > 0)
	if err != nil {
		return nil, err
	}
	if err := writeFile(PlaybookFile, 0o644, pb); err != nil {
		return nil, err
	}

	// The manifest.
	m := NodesManifest{
		Experiment: e.Experiment.Name, Scheme: e.CC.Scheme, Seed: e.Experiment.Seed,
		DurationS: e.Experiment.DurationMs / 1e3, WarmupS: e.Experiment.WarmupMs / 1e3, SampleUs: e.Experiment.SampleUs,
		Scaling: e.Experiment.Scaling, Mirrors: e.Experiment.Mirrors,
		Topology: e.topologyString() + " on real nodes", LinkGbps: hostLinkGbps(t), MTUBytes: e.Topology.MTUBytes,
		Switch: sw.name, ClockOffsetBoundNs: hostd.ClockOffsetBoundNs,
	}
	bound := e.StallBound(plan.BaseRTTNs)
	m.StallBound = &bound
	for i, h := range t.Hosts {
		m.Hosts = append(m.Hosts, ManifestHost{Name: h.Name, IP: wire.FormatIPv4(plan.Hosts[i].IP), SwitchPort: portOf[i]})
	}
	spec := e.Spec()
	for _, f := range spec.Flows {
		m.Flows = append(m.Flows, ManifestFlows{Src: t.Hosts[f.Src].Name, Dst: t.Hosts[f.Dst].Name, FirstID: int64(f.ID), LastID: int64(f.ID)})
	}
	for _, in := range spec.Incast {
		per := max(in.FlowsPerSender, 1) * max(in.Repeat, 1)
		for k, snd := range in.Senders {
			base := int64(in.IDBase + k*per)
			m.Flows = append(m.Flows, ManifestFlows{Src: t.Hosts[snd].Name, Dst: t.Hosts[in.Dst].Name, FirstID: base, LastID: base + int64(per) - 1})
		}
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFile(ManifestFile, 0o644, append(mb, '\n')); err != nil {
		return nil, err
	}
	return written, nil
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// nodeValues are the switch's and every host's values: from inv, or
// placeholders when inv is nil. portOf[h] is the switch port facing host h.
func (e *Experiment) nodeValues(inv *Inventory, portOf []int) (nodeVals, []nodeVals, error) {
	t := e.topo
	nports := len(portOf)
	sw := nodeVals{name: "switch", eal: []string{"-l", "0-3"}, lcores: []uint{1, 2, 3}}
	hosts := make([]nodeVals, len(t.Hosts))
	if inv == nil {
		for p := 0; p < nports; p++ {
			sw.devices = append(sw.devices, fmt.Sprintf("%sPCI_ADDRESS_OF_SWITCH_PORT_%d", Placeholder, p))
			sw.macs = append(sw.macs, fmt.Sprintf("%sMAC_OF_SWITCH_PORT_%d", Placeholder, p))
		}
		for i, h := range t.Hosts {
			u := strings.ToUpper(h.Name)
			hosts[i] = nodeVals{name: h.Name, eal: []string{"-l", "0-2"}, lcores: []uint{1, 2},
				devices: []string{Placeholder + "PCI_ADDRESS_OF_" + u + "_NIC"}, macs: []string{Placeholder + "MAC_OF_" + u + "_NIC"}}
		}
		return sw, hosts, nil
	}
	switch g := inv.Groups["switch"]; len(g) {
	case 1:
		sw.name = g[0]
		// The name becomes file names (check-<node>.sh, results/<node>/).
		if err := config.Name(sw.name); err != nil {
			return sw, nil, inv.errorf(sw.name, "node name %v", err)
		}
	default:
		return sw, nil, fmt.Errorf("%s: group [switch]: want one node, got %d %v", inv.Path, len(g), g)
	}
	get := func(node, group, key string, required bool) (string, error) {
		v, ok := inv.Var(node, group, key)
		switch {
		case !ok && required:
			return "", inv.errorf(node, "%s is not set", key)
		case strings.HasPrefix(v, Placeholder):
			return "", inv.errorf(node, "%s is still the placeholder %s", key, v)
		}
		return v, nil
	}
	common := func(n *nodeVals, group string) error {
		if v, err := get(n.name, group, "ansible_host", true); err != nil {
			return err
		} else if v == "" {
			return inv.errorf(n.name, "ansible_host is empty")
		}
		if v, err := get(n.name, group, "ccbed_eal_args", false); err != nil {
			return err
		} else if v != "" {
			if n.eal, err = splitWords(v); err != nil {
				return inv.errorf(n.name, "ccbed_eal_args: %v", err)
			}
		}
		if v, err := get(n.name, group, "ccbed_lcores", false); err != nil {
			return err
		} else if v != "" {
			if n.lcores, err = lcoreList(v); err != nil {
				return inv.errorf(n.name, "ccbed_lcores %q: %v", v, err)
			}
		}
		return nil
	}
	if err := common(&sw, "switch"); err != nil {
		return sw, nil, err
	}
	if v, err := get(sw.name, "switch", "ccbed_tx_lcores", false); err != nil {
		return sw, nil, err
	} else if v != "" {
		t, err := strconv.Atoi(v)
		if err != nil || t < 1 {
			return sw, nil, inv.errorf(sw.name, "ccbed_tx_lcores %q: want a count of 1 or more", v)
		}
		sw.txLcores = t
	}
	for p := 0; p < nports; p++ {
		dev, err := get(sw.name, "switch", fmt.Sprintf("ccbed_port%d_device", p), true)
		if err != nil {
			return sw, nil, err
		}
		mac, err := get(sw.name, "switch", fmt.Sprintf("ccbed_port%d_mac", p), true)
		if err != nil {
			return sw, nil, err
		}
		sw.devices, sw.macs = append(sw.devices, dev), append(sw.macs, mac)
	}
	known := map[string]bool{}
	for i, h := range t.Hosts {
		known[h.Name] = true
		found := false
		for _, n := range inv.Groups["hosts"] {
			found = found || n == h.Name
		}
		if !found {
			return sw, nil, fmt.Errorf("%s: group [hosts] has no node %s: name each host node as the experiment names its host (%s)",
				inv.Path, h.Name, hostNames(t.Hosts))
		}
		n := nodeVals{name: h.Name, eal: []string{"-l", "0-2"}, lcores: []uint{1, 2}}
		if err := common(&n, "hosts"); err != nil {
			return sw, nil, err
		}
		for _, k := range []struct {
			key string
			to  *[]uint
		}{{"ccbed_tx_lcores", &n.hostTx}, {"ccbed_rx_lcores", &n.hostRx}} {
			if v, err := get(h.Name, "hosts", k.key, false); err != nil {
				return sw, nil, err
			} else if v != "" {
				if *k.to, err = lcoreList(v); err != nil {
					return sw, nil, inv.errorf(h.Name, "%s %q: %v", k.key, v, err)
				}
			}
		}
		if len(n.hostRx) > 0 && len(n.hostTx) == 0 {
			return sw, nil, inv.errorf(h.Name, "ccbed_rx_lcores needs ccbed_tx_lcores (it polls their engines' rx queues)")
		}
		dev, err := get(h.Name, "hosts", "ccbed_device", true)
		if err != nil {
			return sw, nil, err
		}
		mac, err := get(h.Name, "hosts", "ccbed_mac", true)
		if err != nil {
			return sw, nil, err
		}
		n.devices, n.macs = []string{dev}, []string{mac}
		hosts[i] = n
	}
	for _, n := range inv.Groups["hosts"] {
		if !known[n] {
			return sw, nil, inv.errorf(n, "not a host of experiment %s (%s)", e.Experiment.Name, hostNames(t.Hosts))
		}
	}
	return sw, hosts, nil
}

// lcoreList parses an inventory's lcore list: ids, comma-separated.
func lcoreList(v string) ([]uint, error) {
	var ls []uint
	for _, f := range strings.Split(v, ",") {
		l, err := strconv.ParseUint(strings.TrimSpace(f), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("want lcore ids, comma-separated")
		}
		ls = append(ls, uint(l))
	}
	return ls, nil
}

// hostNames lists the hosts' names.
func hostNames(hs []fabric.Host) string {
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.Name
	}
	return strings.Join(names, " ")
}

// hostDevice is a host's EAL arguments and port name for device: a PCI
// address is allowed with -a, a vdev ("net_af_packet0,iface=eth1") created
// with --vdev; a placeholder adds nothing.
func hostDevice(eal []string, device string) ([]string, string) {
	eal = append([]string(nil), eal...)
	switch {
	case strings.HasPrefix(device, Placeholder):
		return eal, device
	case switchdaemon.IsPCIAddress(device):
		return append(eal, "-a", device), device
	default:
		name, _, _ := strings.Cut(device, ",")
		return append(eal, "--vdev="+device), name
	}
}

// checkScript is check-<node>.sh: it checks on the node that each DPDK
// device is there (a PCI function bound to a driver DPDK can use, or the
// interface under a net_af_packet vdev), that hugepages are there unless
// the EAL runs with --no-huge, and reports the clock offset. It writes its
// findings to check.txt and to stdout, each problem to stderr, and exits 1
// on any problem.
func checkScript(node, experiment string, eal, devices []string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `#!/bin/sh
# check-%s.sh: generated by testbed nodes for experiment %s. Run on node %s
# (by the playbook, in the node's work directory): checks the DPDK devices,
# hugepages and the clock offset; writes check.txt; exits 1 on a problem.
: > check.txt
fail=0
say() { echo "$*"; echo "$*" >> check.txt; }
bad() { echo "$*" >&2; echo "PROBLEM: $*" >> check.txt; fail=1; }
check_pci() {
	if [ ! -e "/sys/bus/pci/devices/$1" ]; then
		bad "device $1: no such PCI function on this node (lspci -D lists them)"
		return
	fi
	drv=$(basename "$(readlink "/sys/bus/pci/devices/$1/driver" 2>/dev/null)" 2>/dev/null)
	case "$drv" in
	vfio-pci|uio_pci_generic|igb_uio) say "device $1: bound to $drv" ;;
	mlx5_core|mlx4_core) say "device $1: $drv (bifurcated: DPDK needs no binding)" ;;
	"") bad "device $1: no driver bound: dpdk-devbind.py -b vfio-pci $1 (docs/real-nodes.md)" ;;
	*) bad "device $1: bound to $drv, which DPDK cannot drive: dpdk-devbind.py -b vfio-pci $1 (Intel; docs/real-nodes.md)" ;;
	esac
}
check_iface() {
	if [ -e "/sys/class/net/$1" ]; then
		say "device $1: interface $(cat "/sys/class/net/$1/operstate")"
	else
		bad "device $1: no such interface on this node"
	fi
}
`, node, experiment, node)
	for _, d := range devices {
		switch {
		case strings.HasPrefix(d, Placeholder):
			fmt.Fprintf(&b, "bad %s\n", shellQuote("device "+d+": fill in inventory.ini and run testbed nodes -inventory"))
		case switchdaemon.IsPCIAddress(d):
			fmt.Fprintf(&b, "check_pci %s\n", shellQuote(d))
		default:
			iface := ""
			for _, kv := range strings.Split(d, ",")[1:] {
				if k, v, _ := strings.Cut(kv, "="); k == "iface" {
					iface = v
				}
			}
			if iface != "" {
				fmt.Fprintf(&b, "check_iface %s\n", shellQuote(iface))
			} else {
				fmt.Fprintf(&b, "say %s\n", shellQuote("device "+d+": a virtual device, not checked"))
			}
		}
	}
	noHuge := false
	for _, a := range eal {
		noHuge = noHuge || a == "--no-huge"
	}
	if noHuge {
		b.WriteString("say 'hugepages: not used (--no-huge)'\n")
	} else {
		b.WriteString(`free=$(awk '/^HugePages_Free/ {print $2}' /proc/meminfo)
size=$(awk '/^Hugepagesize/ {print $2 $3}' /proc/meminfo)
if ! grep -q hugetlbfs /proc/mounts; then
	bad "hugepages: no hugetlbfs mounted (mount -t hugetlbfs nodev /dev/hugepages; docs/real-nodes.md)"
elif [ "${free:-0}" -eq 0 ]; then
	bad "hugepages: none free (echo 1024 > /proc/sys/vm/nr_hugepages; docs/real-nodes.md)"
else
	say "hugepages: $free free of $size"
fi
`)
	}
	b.WriteString(`# The clock offset from the node's reference, as chrony or linuxptp reports it.
if command -v chronyc >/dev/null 2>&1; then
	out=$(chronyc -n tracking 2>&1)
	if echo "$out" | grep -q 'Not synchronised'; then
		say "clock_offset=unknown (chrony is not synchronised)"
	else
		ns=$(echo "$out" | awk '/^System time/ {v = $4 * 1e9; if ($6 == "slow") v = -v; printf "%.0f", v}')
		if [ -n "$ns" ]; then say "clock_offset_ns=$ns"; else say "clock_offset=unknown (chronyc: $(echo "$out" | head -1))"; fi
	fi
elif command -v pmc >/dev/null 2>&1; then
	ns=$(pmc -u -b 0 'GET TIME_STATUS_NP' 2>/dev/null | awk '$1 == "master_offset" {print $2}')
	if [ -n "$ns" ]; then say "clock_offset_ns=$ns"; else say "clock_offset=unknown (pmc gave no master_offset)"; fi
else
	say "clock_offset=unknown (neither chronyc nor pmc is installed)"
fi
exit $fail
`)
	return []byte(b.String())
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// inventoryTemplate is the template inventory.ini for sw and hosts.
func (e *Experiment) inventoryTemplate(sw nodeVals, hosts []nodeVals) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `# Ansible inventory for experiment %s (generated by testbed nodes).
# Fill in every %s value, then write the node configs from this file and run:
#   testbed nodes EXPERIMENT.toml -inventory DIR/inventory.ini -o DIR
#   go build -o DIR/bin/ ./cmd/switchd ./cmd/hostd
#   ansible-playbook -i DIR/inventory.ini DIR/playbook.yml
#   testbed collect DIR
# Variables (docs/real-nodes.md):
#   ansible_host          the node's management address (ssh)
#   ccbed_port<i>_device  switch port i (it faces host i): a PCI address
#                         (0000:41:00.0) or a DPDK vdev (net_af_packet0,iface=eth1)
#   ccbed_port<i>_mac     switch port i's MAC (the host's gateway MAC)
#   ccbed_device          a host's NIC: PCI address or vdev
#   ccbed_mac             a host's NIC MAC (the switch port's peer MAC)
#   ccbed_eal_args        EAL arguments (devices are added from the above)
#   ccbed_lcores          lcores: switch 3 (pipeline) or 1 (rtc); host 2 (rx, tx) or 1
#   ccbed_tx_lcores       switch, sharded mode: the last this many of ccbed_lcores
#                         are tx+CC lcores, the others rx lcores (e.g. 6 lcores,
#                         2 tx: 4 rx); with PFC on, at most 8
#   ccbed_dir             work directory on the node (default /tmp/ccbed-%s)
`, e.Experiment.Name, Placeholder, e.Experiment.Name)
	b.WriteString("\n[switch]\n")
	fmt.Fprintf(&b, "%s ansible_host=%sADDRESS_OF_SWITCH_NODE", sw.name, Placeholder)
	for p := range sw.devices {
		fmt.Fprintf(&b, " ccbed_port%d_device=%s ccbed_port%d_mac=%s", p, sw.devices[p], p, sw.macs[p])
	}
	b.WriteString("\n\n[hosts]\n")
	for _, h := range hosts {
		fmt.Fprintf(&b, "%s ansible_host=%sADDRESS_OF_%s ccbed_device=%s ccbed_mac=%s\n", h.name, Placeholder,
			strings.ToUpper(h.name), h.devices[0], h.macs[0])
	}
	b.WriteString(`
[ccbed:children]
switch
hosts

[switch:vars]
ccbed_eal_args="-l 0-3"
ccbed_lcores=1,2,3

[hosts:vars]
ccbed_eal_args="-l 0-2"
ccbed_lcores=1,2

[ccbed:vars]
ansible_user=root
`)
	return []byte(b.String())
}
