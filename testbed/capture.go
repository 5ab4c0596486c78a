package testbed

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/pcapw"
)

// Capture says which ports' frames a run writes to capture files, with what
// each port sent and received, in both clocks (docs/capture.md): by
// default one pcapng file per node (s0.pcapng) with an interface per
// captured port and each frame's direction; with format "pcap", one
// classic pcap file per port named by its link (s0.p3-h3.pcap). It is an
// experiment file's [capture] table, or testbed run's -pcap flags
// (CaptureFromFlags).
//
//	[capture]
//	ports = ["s0.p3", "h2"]  # s0.p3: port 3 of switch s0; s0: its every port; h2: host h2's port; "switches"; "hosts"
//	snaplen = 128            # bytes kept of each frame; 0 (default): whole frames
//	format = "pcapng"        # "pcapng" (default): a file per node; "pcap": a file per port
type Capture struct {
	// Ports name the captured ports: "s0.p3" (a switch's port), "s0" (every
	// port of switch s0), "h2" (host h2's port), "switches" (every switch
	// port), "hosts" (every host); none: every switch port.
	Ports []string `toml:"ports"`
	// Snaplen is the most bytes kept of each frame (1..262144); 0: whole
	// frames.
	Snaplen int `toml:"snaplen"`
	// Format is the files' format: "pcapng" (the default; "": pcapng), one
	// file per node, an interface per port, each frame's direction; "pcap",
	// one classic pcap file per port, the directions mixed.
	Format string `toml:"format"`
	// Dir is where the files go; "": pcap/ in the results directory.
	Dir string `toml:"-"`

	// portsFlag, snaplenFlag and formatFlag name the flags that gave Ports,
	// Snaplen and Format, for errors; "": the experiment file's [capture]
	// table.
	portsFlag, snaplenFlag, formatFlag string
}

// fileCapture is the experiment file's [capture] table, nil when the file
// has none (names no ports and no snap length).
func (e *Experiment) fileCapture() *Capture {
	if len(e.Capture.Ports) == 0 && e.Capture.Snaplen == 0 && e.Capture.Format == "" {
		return nil
	}
	return &e.Capture
}

// CaptureFromFlags is the capture testbed run's flags ask for, over the
// file's [capture] table: dir (-pcap) and ports (-pcap-ports, comma-separated)
// turn a capture on; snaplen (-pcap-snaplen, when snaplenSet) sets its snap
// length, format (-pcap-format, when not "") its format. Without them it
// returns the file's table (nil when none). Errors name the flag.
func (e *Experiment) CaptureFromFlags(dir, ports string, snaplen int, snaplenSet bool, format string) (*Capture, error) {
	file := e.fileCapture()
	switch on := dir != "" || ports != ""; {
	case !on && !snaplenSet && format == "":
		return file, nil
	case !on && file == nil && snaplenSet:
		return nil, fmt.Errorf("-pcap-snaplen: no capture to apply it to: add -pcap DIR or -pcap-ports LIST")
	case !on && file == nil:
		return nil, fmt.Errorf("-pcap-format: no capture to apply it to: add -pcap DIR or -pcap-ports LIST")
	}
	c := Capture{Dir: dir}
	if file != nil {
		c.Ports, c.Snaplen, c.Format = file.Ports, file.Snaplen, file.Format
	}
	if format != "" {
		c.Format, c.formatFlag = format, "-pcap-format"
	}
	if ports != "" {
		c.Ports, c.portsFlag = nil, "-pcap-ports"
		for _, p := range strings.Split(ports, ",") {
			c.Ports = append(c.Ports, strings.TrimSpace(p))
		}
	}
	if snaplenSet {
		c.Snaplen, c.snaplenFlag = snaplen, "-pcap-snaplen"
	}
	if _, err := e.capture(&c, ""); err != nil {
		return nil, err
	}
	return &c, nil
}

// CheckCapture checks the file's [capture] table against the topology: every
// name matches a port, the snap length is in range. Errors name the file,
// line and key.
func (e *Experiment) CheckCapture() error {
	_, err := e.capture(e.fileCapture(), "")
	return err
}

// capture resolves c into the fabric's capture, its files in c.Dir or else
// in resultsDir's pcap/; nil c: no capture.
func (e *Experiment) capture(c *Capture, resultsDir string) (*fabric.Capture, error) {
	if c == nil {
		return nil, nil
	}
	fail := func(flag, key string, err any) error {
		if flag != "" {
			return fmt.Errorf("%s: %v", flag, err)
		}
		return e.errorf(key, "%v", err)
	}
	if c.Snaplen < 0 || c.Snaplen > pcapw.MaxSnaplen {
		return nil, fail(c.snaplenFlag, "capture.snaplen",
			fmt.Sprintf("%d bytes: want 1..%d, or 0 for whole frames", c.Snaplen, pcapw.MaxSnaplen))
	}
	if c.Format != "" && !slices.Contains(fabric.CaptureFormats, c.Format) {
		return nil, fail(c.formatFlag, "capture.format",
			fmt.Sprintf("%q: want %s", c.Format, strings.Join(fabric.CaptureFormats, " or ")))
	}
	names := c.Ports
	if len(names) == 0 {
		names = []string{fabric.CaptureSwitches}
	}
	ports, err := e.topo.CapturePorts(names)
	if err != nil {
		return nil, fail(c.portsFlag, "capture.ports", err)
	}
	dir := c.Dir
	if dir == "" {
		dir = filepath.Join(resultsDir, "pcap")
	}
	return &fabric.Capture{Ports: ports, Dir: dir, Snaplen: c.Snaplen, Format: c.Format}, nil
}
