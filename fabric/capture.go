package fabric

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/ccbed/ccbed/buildinfo"
	"github.com/ccbed/ccbed/pcapw"
)

// CapturePort is port Port of node Node, a port whose frames a run writes to
// a pcap file: every frame the port sends and every frame it receives, as a
// capture on that port would see them (docs/capture.md).
type CapturePort struct{ Node, Port int }

// Capture asks a driver to capture the frames of Ports into Dir (created if
// missing): in Format FormatPcapng (the default), one pcapng file per node
// (CaptureNodeFileName) with an interface per captured port of the node and
// each frame's direction; in FormatPcap, one pcap file per port
// (CaptureFileName). Snaplen is the most bytes kept of each frame (0: whole
// frames).
type Capture struct {
	Ports   []CapturePort
	Dir     string
	Snaplen int
	Format  string
}

// The capture formats.
const (
	// FormatPcapng: a pcapng file per node, an interface block per port,
	// each frame's direction in its epb_flags.
	FormatPcapng = "pcapng"
	// FormatPcap: a classic pcap file per port, both directions in it.
	FormatPcap = "pcap"
)

// CaptureFormats are the formats Capture.Format takes, the default first.
var CaptureFormats = []string{FormatPcapng, FormatPcap}

// CaptureFile is one captured port and the file it went to.
type CaptureFile struct {
	// Port names the captured port (Topology.PortName), Peer the port at the
	// other end of its link.
	Port, Peer string
	// Path is the file: the port's own pcap file, or its node's pcapng file,
	// which other ports of the node may share.
	Path string
	// Frames is the number of frames written; Dropped the frames the
	// capture could not keep up with (DPDK only: its rings were full).
	Frames, Dropped uint64
}

// The capture keywords CapturePorts accepts beside node and port names.
const (
	CaptureSwitches = "switches" // every port of every switch
	CaptureHosts    = "hosts"    // every host's port
)

// PortName names port p of node n: a host by its name (it has one port), a
// switch's port as "<switch>.p<port>" (s0.p3).
func (t *Topology) PortName(n, p int) string {
	if t.IsHost(n) {
		return t.Hosts[n].Name
	}
	return t.NodeName(n) + ".p" + strconv.Itoa(p)
}

// CaptureFileName is the file of port c's capture: "<port>-<peer>.pcap"
// (s0.p3-h3.pcap, h3-s0.p3.pcap), with any character a file name should not
// hold replaced by '_'.
func (t *Topology) CaptureFileName(c CapturePort) string {
	peer, peerPort, _ := t.Peer(c.Node, c.Port)
	return fileSafe(t.PortName(c.Node, c.Port) + "-" + t.PortName(peer, peerPort) + ".pcap")
}

// fileSafe replaces each character of name a file name should not hold by '_'.
func fileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, name)
}

// CaptureNodeFileName is the pcapng file of node n's captured ports:
// "<node>.pcapng" (s0.pcapng, h3.pcapng), characters a file name should not
// hold replaced by '_'.
func (t *Topology) CaptureNodeFileName(n int) string {
	return fileSafe(t.NodeName(n) + ".pcapng")
}

// CaptureInterfaceName is the pcapng interface name (if_name) of port p of
// node n: "<node>:p<port>" (s0:p3, h3:p0).
func (t *Topology) CaptureInterfaceName(n, p int) string {
	return t.NodeName(n) + ":p" + strconv.Itoa(p)
}

// CapturePorts resolves capture names into ports, in node and port order,
// each once: "s0.p3" (port 3 of switch s0), "s0" (every port of switch s0),
// "h2" (host h2's port), CaptureSwitches, CaptureHosts. The error names the
// first name that matches nothing.
func (t *Topology) CapturePorts(names []string) ([]CapturePort, error) {
	byName := make(map[string]int, t.NumNodes())
	for n := 0; n < t.NumNodes(); n++ {
		byName[t.NodeName(n)] = n
	}
	want := make([][]bool, t.NumNodes())
	for n := range want {
		want[n] = make([]bool, t.NumPorts(n))
	}
	every := func(from, to int) {
		for n := from; n < to; n++ {
			for p := range want[n] {
				want[n][p] = true
			}
		}
	}
	for _, name := range names {
		if name == CaptureSwitches {
			every(len(t.Hosts), t.NumNodes())
			continue
		}
		if name == CaptureHosts {
			every(0, len(t.Hosts))
			continue
		}
		if n, ok := byName[name]; ok {
			every(n, n+1)
			continue
		}
		i := strings.LastIndex(name, ".p") // the last: a node's name may hold one
		if i < 0 {
			i = len(name)
		}
		node, port := name[:i], strings.TrimPrefix(name[i:], ".p")
		n, known := byName[node]
		p, err := strconv.Atoi(port)
		switch {
		case !known:
			return nil, fmt.Errorf("%q names no host, switch or switch port (s0, s0.p3, h2, %s, %s)", name, CaptureSwitches, CaptureHosts)
		case err != nil || strconv.Itoa(p) != port:
			return nil, fmt.Errorf("%q: port %q is not a number", name, port)
		case p < 0 || p >= t.NumPorts(n):
			return nil, fmt.Errorf("%q: %s has ports 0..%d", name, node, t.NumPorts(n)-1)
		}
		want[n][p] = true
	}
	var out []CapturePort
	for n := range want {
		for p, w := range want[n] {
			if w {
				out = append(out, CapturePort{Node: n, Port: p})
			}
		}
	}
	return out, nil
}

// CaptureSet is a capture's open files: Ports[i] and Files[i] are those of
// Capture.Ports[i], Groups the indices of the ports of each file (one port
// each in FormatPcap; a node's ports, in the order of Capture.Ports, in
// FormatPcapng). A driver appends to a file from one goroutine.
type CaptureSet struct {
	Ports  []*pcapw.Port
	Files  []CaptureFile
	Groups [][]int
	// closers close the files, one each.
	closers []func() error
}

// captureSection is the pcapng section header of ccbed's captures.
func captureSection() pcapw.NgSection {
	return pcapw.NgSection{UserAppl: "ccbed (" + buildinfo.Read().String() + ")", OS: runtime.GOOS + "/" + runtime.GOARCH}
}

// OpenCapture creates c's directory and its files (each port once).
func OpenCapture(t *Topology, c *Capture) (*CaptureSet, error) {
	if c.Snaplen < 0 || c.Snaplen > pcapw.MaxSnaplen {
		return nil, fmt.Errorf("fabric: capture: %w", pcapw.ErrSnaplen)
	}
	if c.Format != "" && c.Format != FormatPcapng && c.Format != FormatPcap {
		return nil, fmt.Errorf("fabric: capture: format %q: want %s", c.Format, strings.Join(CaptureFormats, " or "))
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("fabric: capture: %w", err)
	}
	s := &CaptureSet{}
	seen := make(map[CapturePort]bool, len(c.Ports))
	nodes := map[int]int{} // node: its group (pcapng)
	var ngs []*pcapw.NgWriter
	var section pcapw.NgSection
	fail := func(err error) (*CaptureSet, error) {
		s.Close()
		return nil, fmt.Errorf("fabric: capture: %w", err)
	}
	for i, cp := range c.Ports {
		if cp.Node < 0 || cp.Node >= t.NumNodes() || cp.Port < 0 || cp.Port >= t.NumPorts(cp.Node) {
			return fail(fmt.Errorf("node %d has no port %d", cp.Node, cp.Port))
		}
		if seen[cp] {
			return fail(fmt.Errorf("port %s listed twice", t.PortName(cp.Node, cp.Port)))
		}
		seen[cp] = true
		peer, peerPort, _ := t.Peer(cp.Node, cp.Port)
		f := CaptureFile{Port: t.PortName(cp.Node, cp.Port), Peer: t.PortName(peer, peerPort)}
		var port *pcapw.Port
		if c.Format == FormatPcap {
			f.Path = filepath.Join(c.Dir, t.CaptureFileName(cp))
			w, err := pcapw.Create(f.Path, c.Snaplen)
			if err != nil {
				return fail(err)
			}
			s.closers = append(s.closers, w.Close)
			s.Groups = append(s.Groups, []int{i})
			port = pcapw.NewPcapPort(w)
		} else {
			f.Path = filepath.Join(c.Dir, t.CaptureNodeFileName(cp.Node))
			g, ok := nodes[cp.Node]
			if !ok {
				if section.UserAppl == "" {
					section = captureSection()
				}
				w, err := pcapw.CreateNg(f.Path, section)
				if err != nil {
					return fail(err)
				}
				g = len(s.Groups)
				nodes[cp.Node] = g
				ngs = append(ngs, w)
				s.closers = append(s.closers, w.Close)
				s.Groups = append(s.Groups, nil)
			}
			s.Groups[g] = append(s.Groups[g], i)
			iface, err := ngs[g].AddInterface(pcapw.NgInterface{Name: t.CaptureInterfaceName(cp.Node, cp.Port),
				Description: fmt.Sprintf("%s port %d, link to %s", t.NodeName(cp.Node), cp.Port, f.Peer), Snaplen: c.Snaplen})
			if err != nil {
				return fail(err)
			}
			port = pcapw.NewNgPort(ngs[g], iface)
		}
		s.Ports = append(s.Ports, port)
		s.Files = append(s.Files, f)
	}
	return s, nil
}

// Close flushes and closes every file, and returns the ports with their
// frame counts and the first error met.
func (s *CaptureSet) Close() ([]CaptureFile, error) {
	var errs []error
	for i, p := range s.Ports {
		s.Files[i].Frames = p.Frames()
	}
	for g, c := range s.closers {
		if err := c(); err != nil {
			errs = append(errs, fmt.Errorf("fabric: capture %s: %w", s.Files[s.Groups[g][0]].Path, err))
		}
	}
	s.closers = nil
	return s.Files, errors.Join(errs...)
}
