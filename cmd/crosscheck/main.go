// Command crosscheck prints the side-by-side table of ccbed and the
// HPCC-lineage ns-3 RDMA simulator run on the same inputs
// (internal/crosscheck; scripts/crosscheck-ns3.sh makes the runs).
//
// Usage:
//
//	crosscheck -topology topology.txt [-mtu 1000] CASE_DIR...
//
// Each CASE_DIR holds one scheme at one load, as the script writes it:
// flow.txt (the flows both tools ran), ns3-fct.txt (the simulator's
// FCT_OUTPUT_FILE), ccbed/fct.csv (ccbed's run), and ns3.time and
// ccbed.time (bash's TIMEFORMAT='%U %S %R': user, system, real seconds).
// The case's name is the directory's base name.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ccbed/ccbed/cli"
	"github.com/ccbed/ccbed/internal/crosscheck"
	"github.com/ccbed/ccbed/ns3"
)

func main() { os.Exit(cli.Exit("crosscheck", run(os.Args[1:], os.Stdout))) }

func run(args []string, out io.Writer) error {
	c := cli.New("crosscheck", "-topology topology.txt [-mtu 1000] CASE_DIR...",
		"ccbed's and the ns-3 simulator's FCT slowdowns side by side, from each case directory's raw FCTs.").Positional("CASE_DIR", 1, -1)
	c.Stdout = out
	topo := c.Flags.String("topology", "", "the ns-3 topology.txt both tools ran")
	mtu := c.Flags.Int("mtu", 1000, "the payload bytes per packet (PACKET_PAYLOAD_SIZE)")
	dirs, err := c.Parse(args)
	if err != nil {
		return err
	}
	if *topo == "" {
		return c.Errorf("want -topology")
	}
	if *mtu <= 0 {
		return c.Errorf("-mtu %d: want > 0", *mtu)
	}
	t, err := ns3.ReadTopologyFile(*topo, *topo)
	if err != nil {
		return err
	}
	ideal := crosscheck.NewIdeal(t, *mtu)
	for _, dir := range dirs {
		c, err := readCase(dir, ideal)
		if err != nil {
			return err
		}
		if err := c.Write(out); err != nil {
			return err
		}
	}
	return nil
}

// readCase reads one case directory (the package doc's layout).
func readCase(dir string, ideal *crosscheck.Ideal) (crosscheck.Case, error) {
	p := func(name string) string { return filepath.Join(dir, name) }
	flows, err := flowCount(p("flow.txt"))
	if err != nil {
		return crosscheck.Case{}, err
	}
	ns3, err := readFile(p("ns3-fct.txt"), crosscheck.ReadNS3FCT)
	if err != nil {
		return crosscheck.Case{}, err
	}
	cc, err := readFile(p("ccbed/fct.csv"), crosscheck.ReadCcbedFCT)
	if err != nil {
		return crosscheck.Case{}, err
	}
	var times [2]crosscheck.Times
	for i, name := range []string{"ns3.time", "ccbed.time"} {
		b, err := os.ReadFile(p(name))
		if err != nil {
			return crosscheck.Case{}, err
		}
		if times[i], err = crosscheck.ParseTimes(string(b)); err != nil {
			return crosscheck.Case{}, fmt.Errorf("%s: %w", p(name), err)
		}
	}
	c, err := crosscheck.Compare(filepath.Base(filepath.Clean(dir)), flows, ns3, cc, ideal, times[0], times[1])
	if err != nil {
		return c, fmt.Errorf("%s: %w", dir, err)
	}
	return c, nil
}

func readFile(path string, read func(io.Reader, string) ([]crosscheck.FCT, error)) ([]crosscheck.FCT, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, path)
}

// flowCount is the count on flow.txt's first line.
func flowCount(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return 0, fmt.Errorf("%s: empty: want the number of flows on the first line", path)
	}
	n, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s:1: %q: want the number of flows", path, strings.TrimSpace(line))
	}
	return n, nil
}
