// Command switchd is ccbed's DPDK software switch: `switchd -c switch.toml`.
//
// It reads the TOML file (switchd/daemon.Config; unknown keys and bad values are errors
// with file:line), initialises the EAL with the file's eal_args plus --vdev for
// every vdev port and -a for every PCI port, brings the ports up (an mbuf data
// room that holds the largest frame of cc.mtu, jumbo included; the NIC's flow
// control set explicitly; a wait for link-up; a warning when the NIC's speed
// differs from link_gbps), builds the engine (switchd) and its DPDK adapter
// (switchd/dataplane), and runs the loops in rtc or pipeline mode.
//
// Results are safe by construction: the telemetry CSV and JSON paths are
// opened (the JSON written once) before the EAL starts, so an unwritable path
// fails at once; while the switch runs, the CSV is flushed and the JSON
// rewritten (atomically: a temporary file renamed) every -checkpoint (2 s),
// with "final": false, so that a SIGKILL loses at most that much; after a
// -csv-full-mb (256 MB) CSV, samples are decimated to one row per port per
// -csv-window (100 ms, the window's largest queue), so that an hour-long run
// stays bounded on disk. Every XOFF and XON the switch sends goes to a PFC
// event log, pfc.csv beside telemetry.json (else beside telemetry.csv; -pfc-csv
// names another file), with the columns of a testbed run's pfc.csv and
// times on the CSV's time base, flushed with the CSV. SIGINT / SIGTERM (or -duration) stop the loops, flush
// the files ("final": true, "interrupted" and "signal" when a signal ended the
// run), and exit 0. It prints a one-line summary every second when the file's
// telemetry.console is set.
//
//	switchd -c configs/switch-vdev.toml [-duration 10s] [-check | -check-syntax]
//
// The command line follows package cli: -h prints the usage (exit 0),
// -version the build, a bad flag or a stray argument exits 2, a failed run 1.
// Status messages are log lines on standard error: -v adds debug, -q leaves
// warnings and errors, -log-format json makes them JSON objects.
//
// -check brings up what a run would use without starting traffic: the EAL
// (lcores, memory), the mempool, every port (driver limits against the MTU,
// flow control, link up within -link-timeout, speed against link_gbps), then
// releases it all and exits 0 when every check passed. -check-syntax checks the
// file alone, without DPDK (for a machine without the NICs).
//
// -pdump serves DPDK's capture tools: dpdk-dumpcap --file-prefix PREFIX -i
// PORT -w FILE, run beside switchd as a secondary process, captures what a
// port sends and receives (docs/capture.md, "dpdk-dumpcap"); eal_args must
// then keep the EAL on hugepages (no --no-huge, --no-shconf or --in-memory).
//
// -metrics 127.0.0.1:9100 serves the ports' counters and queues in the
// Prometheus text format at /metrics while the switch runs (package metrics,
// docs/metrics.md); an address that is not loopback needs -metrics-any too.
package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/cli"
	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/lcore"
	"github.com/ccbed/ccbed/metrics"
	"github.com/ccbed/ccbed/port"
	"github.com/ccbed/ccbed/switchd"
	"github.com/ccbed/ccbed/switchd/daemon"
	"github.com/ccbed/ccbed/switchd/dataplane"
	"github.com/ccbed/ccbed/wire"
	"go.uber.org/zap"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// options are the command line's settings beside the file.
type options struct {
	duration    time.Duration
	linkTimeout time.Duration
	flowControl port.FlowControl
	csvFullMB   int64
	csvWindow   time.Duration
	checkpoint  time.Duration
	pfcCSV      string         // -pfc-csv: "" for daemon.PFCPath
	metrics     *metrics.Flags // -metrics, -metrics-any
	pdump       bool           // -pdump: serve dpdk-dumpcap
}

func run(args []string) int {
	c := cli.New("switchd", "-c switch.toml [-duration 10s] [-check | -check-syntax] [flags]",
		"The ccbed DPDK software switch: the file's ports, lcores, CC scheme and telemetry.").Logging()
	fs := c.Flags
	cfgPath := fs.String("c", "", "switch TOML file (required)")
	var o options
	c.Duration(&o.duration, "duration", 0, "stop after this long, a Go `duration` such as 2s or 500ms (0: until SIGINT / SIGTERM)")
	check := fs.Bool("check", false, "bring up the EAL, lcores, mempool and ports a run would use, without traffic, and exit")
	checkSyntax := fs.Bool("check-syntax", false, "check the file alone (no DPDK) and exit")
	c.Duration(&o.linkTimeout, "link-timeout", port.DefaultLinkTimeout, "how long to wait for each port's link to come up")
	fc := fs.String("nic-flow-control", "off", "the NICs' own flow control: off (switchd does PFC in software), pause (802.3x), pfc (the NIC's 802.1Qbb on priority 3), driver (leave it)")
	fs.Int64Var(&o.csvFullMB, "csv-full-mb", 256, "telemetry CSV: MB at full resolution, then one row per port per -csv-window (0: never decimate)")
	c.Duration(&o.csvWindow, "csv-window", 100*time.Millisecond, "telemetry CSV: the decimation window")
	c.Duration(&o.checkpoint, "checkpoint", daemon.DefaultCheckpoint, "rewrite the JSON and flush the CSV this often while running")
	fs.StringVar(&o.pfcCSV, "pfc-csv", "", "the PFC event log (default: pfc.csv beside telemetry.json, else beside telemetry.csv)")
	fs.BoolVar(&o.pdump, "pdump", false, "serve dpdk-dumpcap and dpdk-pdump (rte_pdump_init): the EAL must run on hugepages, without --no-huge, --no-shconf or --in-memory (docs/capture.md)")
	o.metrics = metrics.AddFlags(fs)
	if _, err := c.Parse(args); err != nil {
		return cli.Exit("switchd", err)
	}
	if *cfgPath == "" {
		return cli.Exit("switchd", c.Errorf("-c switch.toml is required"))
	}
	var err error
	if o.flowControl, err = port.ParseFlowControl(*fc); err != nil {
		return cli.Exit("switchd", c.Errorf("-nic-flow-control: %v", err))
	}
	if o.checkpoint <= 0 || o.linkTimeout <= 0 || o.csvFullMB < 0 || o.csvWindow < 0 {
		return cli.Exit("switchd", c.Errorf("-checkpoint and -link-timeout must be > 0, -csv-full-mb and -csv-window >= 0"))
	}
	if err := o.metrics.Check(); err != nil {
		return cli.Exit("switchd", c.Errorf("%v", err))
	}
	cfg, err := daemon.LoadConfig(*cfgPath)
	if err == nil {
		err = dpdk.CheckEALArgs(ealArgs(cfg))
	}
	if err == nil && o.pdump {
		if err = dpdk.CheckPdumpEAL(ealArgs(cfg)); err != nil {
			err = fmt.Errorf("-pdump: switch.eal_args: %w", err)
		}
	}
	if err != nil {
		return c.Exit(err)
	}
	log := c.Log()
	okLine := fmt.Sprintf("%s: ok: %d ports, mode %s, schemes %s", *cfgPath, len(cfg.Ports), cfg.Switch.Mode,
		strings.Join(cfg.SchemesInUse(), ","))
	switch {
	case *checkSyntax:
		fmt.Println(okLine)
		return 0
	case *check:
		if err := checkBringUp(cfg, o, log); err != nil {
			return c.Exit(fmt.Errorf("-check: %w", err))
		}
		fmt.Println(okLine + "; devices, lcores and memory checked")
		return 0
	}
	return c.Exit(serve(cfg, o, log))
}

// ealArgs is the file's eal_args plus the devices of the ports.
func ealArgs(cfg *daemon.Config) []string {
	args := append([]string(nil), cfg.Switch.EALArgs...)
	for _, p := range cfg.Ports {
		switch {
		case p.Device == "":
		case daemon.IsPCIAddress(p.Device):
			args = append(args, "-a", p.Device)
		default:
			args = append(args, "--vdev="+p.Device)
		}
	}
	return args
}

func lcoresOf(cfg *daemon.Config) []uint {
	if len(cfg.Switch.Lcores) > 0 {
		return cfg.Switch.Lcores
	}
	switch cfg.Switch.Mode {
	case daemon.ModePipeline:
		return []uint{0, 1, 2}
	case daemon.ModeSharded: // one rx lcore, then the tx+CC lcores
		l := make([]uint, 1+cfg.Switch.TxLcores)
		for i := range l {
			l[i] = uint(i)
		}
		return l
	}
	return []uint{0}
}

// maxFrameBytes is the largest frame the switch must carry: a ccbed data
// frame of cc.mtu payload with a VLAN tag and a full INT stack, and never less
// than a standard 1500-byte-MTU Ethernet frame with a VLAN tag.
func maxFrameBytes(cfg *daemon.Config) int {
	ccbed := cfg.CC.MTU + wire.EthernetLen + wire.VLANTagLen + wire.IPv4MinLen + wire.UDPLen +
		wire.BTHLen + wire.DataHeaderLen + wire.ICRCLen + wire.INTLen
	return max(ccbed, 1500+wire.EthernetLen+wire.VLANTagLen)
}

// nicMTU is the MTU to configure on the ports (DPDK's MTU: the frame without
// its Ethernet header and CRC); 0 leaves the driver's 1500.
func nicMTU(cfg *daemon.Config) uint32 {
	if m := maxFrameBytes(cfg) - wire.EthernetLen - wire.VLANTagLen; m > 1500 {
		return uint32(m)
	}
	return 0
}

// nodeUp is what bringUp started: release it with down.
type nodeUp struct {
	pool  *dpdk.Mempool
	eths  port.Started
	ports []port.Port
	pdump bool // rte_pdump_init ran
}

func (n *nodeUp) down() {
	n.eths.Close()
	if n.pdump {
		dpdk.PdumpUninit()
		n.pdump = false
	}
	if n.pool != nil {
		n.pool.Free()
	}
}

// bringUp initialises the EAL, checks the lcores, makes the mempool (its data
// room from the MTU) and brings every port up: flow control, link, speed.
// It logs what it found.
func bringUp(cfg *daemon.Config, o options, log *zap.Logger) (*nodeUp, error) {
	if err := dpdk.EALInit(ealArgs(cfg)); err != nil {
		return nil, err
	}
	var bad []string
	for _, l := range lcoresOf(cfg) {
		if !dpdk.LcoreEnabled(l) {
			bad = append(bad, fmt.Sprint(l))
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("lcores %s (switch.lcores) are not enabled by the EAL (eal_args -l / --lcores enable %v)",
			strings.Join(bad, ","), dpdk.Lcores(true))
	}
	frame := maxFrameBytes(cfg)
	room := dpdk.DataRoomFor(frame)
	need := uint64(cfg.Switch.Mbufs) * uint64(int(room)+dpdk.MbufOverheadBytes)
	log.Info("mempool", zap.Uint32("mbufs", uint32(cfg.Switch.Mbufs)), zap.Int("data_room_bytes", int(room)),
		zap.Int("largest_frame_bytes", frame), zap.Int("cc_mtu", cfg.CC.MTU),
		zap.Float64("mib", math.Round(float64(need)/(1<<20))), zap.Float64("eal_mib", math.Round(float64(dpdk.PhysMemBytes())/(1<<20))))
	if rx := uint64(len(cfg.Ports)) * uint64(cfg.Switch.RingSize); uint64(cfg.Switch.Mbufs) < 2*rx {
		log.Warn("switch.mbufs is less than twice the rx descriptors: a NIC that fills its rx rings leaves too few for the queues",
			zap.Uint32("mbufs", uint32(cfg.Switch.Mbufs)), zap.Int("ports", len(cfg.Ports)), zap.Int("ring_size", int(cfg.Switch.RingSize)))
	}
	n := &nodeUp{}
	pool, err := dpdk.NewPktMbufPool("switchd", cfg.Switch.Mbufs, 256, room, dpdk.SocketAny)
	if err != nil {
		return nil, fmt.Errorf("%w: %d mbufs of %d B need about %.0f MiB; give the EAL more memory (hugepages, or -m with --no-huge) or lower switch.mbufs",
			err, cfg.Switch.Mbufs, room, float64(need)/(1<<20))
	}
	n.pool = pool
	if o.pdump {
		if err := dpdk.PdumpInit(pool); err != nil {
			n.down()
			return nil, fmt.Errorf("-pdump: %w", err)
		}
		n.pdump = true
		log.Info("pdump: serving dpdk-dumpcap", zap.Strings("mempool_ops", dpdk.MempoolOps()))
		if w := dpdk.PdumpLcoreClash(lcoresOf(cfg)); w != "" {
			log.Warn(w)
		}
	}
	mtu := nicMTU(cfg)
	for i := range cfg.Ports {
		pc := &cfg.Ports[i]
		name := daemon.DeviceName(pc.Device)
		if id, err := dpdk.EthPortByName(name); err == nil {
			if info, err := id.Info(); err == nil && mtu > 0 && info.MaxMTU > 0 && uint32(info.MaxMTU) < mtu {
				n.down()
				return nil, fmt.Errorf("port %s (%s, driver %s): cc.mtu %d needs an MTU of %d, the NIC's largest is %d",
					pc.Name, name, info.Driver, cfg.CC.MTU, mtu, info.MaxMTU)
			}
		}
		p, err := n.eths.Start(port.EthConfig{Name: name, Pool: pool, Promisc: true, MTU: mtu,
			RxDesc: uint16(cfg.Switch.RingSize), TxDesc: uint16(cfg.Switch.RingSize), FlowControl: o.flowControl})
		if err != nil {
			n.down()
			return nil, fmt.Errorf("port %s: %w", pc.Name, err)
		}
		n.ports = append(n.ports, port.EthQueue{Port: p})
		if pc.MAC == "" {
			mac, err := p.MACAddr()
			if err != nil {
				n.down()
				return nil, err
			}
			pc.MAC = mac.String()
		}
		link, err := port.WaitLinkUp(p, o.linkTimeout)
		if err != nil {
			n.down()
			return nil, fmt.Errorf("port %s: %w", pc.Name, err)
		}
		drv := "?"
		if info, err := p.Info(); err == nil {
			drv = info.Driver
		}
		log.Info("port up", zap.Int("port", i), zap.String("name", pc.Name), zap.String("device", name), zap.String("driver", drv),
			zap.Uint32("link_mbps", uint32(link.SpeedMbps)), zap.String("nic_flow_control", port.FlowControlState(p)))
		if w := port.SpeedMismatch(pc.Name, link, pc.LinkGbps); w != "" {
			log.Warn(w, zap.Int("port", i))
		}
	}
	return n, nil
}

// newEngine builds the engine of cfg, whose ports' MACs bringUp filled in
// from the devices.
func newEngine(cfg *daemon.Config) (*switchd.Engine, error) {
	s, err := cfg.Spec(nil)
	if err != nil {
		return nil, err
	}
	return switchd.New(s)
}

// checkBringUp is -check: bring everything up, release it, report.
func checkBringUp(cfg *daemon.Config, o options, log *zap.Logger) error {
	for _, p := range []string{cfg.Telemetry.CSV, cfg.Telemetry.JSON, o.pfcPath(cfg)} {
		if p != "" {
			if err := daemon.CheckOutputPath(p); err != nil {
				return fmt.Errorf("telemetry output: %w", err)
			}
		}
	}
	n, err := bringUp(cfg, o, log)
	if err != nil {
		return err
	}
	if _, err := newEngine(cfg); err != nil {
		n.down()
		return err
	}
	n.eths.Close()
	in := n.pool.InUse()
	n.down()
	if in != 0 {
		return fmt.Errorf("%d mbufs not returned after the ports closed", in)
	}
	return nil
}

// pfcPath is where the PFC event log goes: -pfc-csv, else beside the
// telemetry files ("" when there are none).
func (o options) pfcPath(cfg *daemon.Config) string {
	if o.pfcCSV != "" {
		return o.pfcCSV
	}
	return daemon.PFCPath(cfg.Telemetry.JSON, cfg.Telemetry.CSV)
}

// outputs are the files a run writes as it goes.
type outputs struct {
	csv *daemon.CSVWriter
	pfc *daemon.PFCWriter
}

// close closes the files opened (after a failed start).
func (out *outputs) close() {
	if out.csv != nil {
		out.csv.Close()
	}
	if out.pfc != nil {
		out.pfc.Close()
	}
}

// openOutputs opens the telemetry CSV and the PFC event log and checks that
// the JSON can be written: an unwritable path fails before the run.
func openOutputs(cfg *daemon.Config, o options) (*outputs, error) {
	out := &outputs{}
	var err error
	if cfg.Telemetry.CSV != "" {
		if out.csv, err = daemon.CreateCSV(cfg.Telemetry.CSV); err != nil {
			return nil, fmt.Errorf("telemetry.csv: %w", err)
		}
		out.csv.SetDecimation(o.csvFullMB<<20, o.csvWindow)
	}
	if cfg.Telemetry.JSON != "" {
		if err := daemon.CheckOutputPath(cfg.Telemetry.JSON); err != nil {
			out.close()
			return nil, fmt.Errorf("telemetry.json: %w", err)
		}
	}
	if p := o.pfcPath(cfg); p != "" {
		if out.pfc, err = daemon.CreatePFCCSV(p); err != nil {
			out.close()
			return nil, fmt.Errorf("PFC event log: %w", err)
		}
	}
	return out, nil
}

func serve(cfg *daemon.Config, o options, log *zap.Logger) error {
	// Outputs first: an unwritable path fails now, not after the run.
	out, err := openOutputs(cfg, o)
	if err != nil {
		return err
	}
	// Fewer GC cycles for the lcores' sake; the control plane makes next to
	// no garbage (daemon.Monitor), so the heap stays flat between them.
	debug.SetGCPercent(400)
	// Signals from here on: SIGINT / SIGTERM mark the run interrupted.
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)
	n, err := bringUp(cfg, o, log)
	if err != nil {
		out.close()
		return err
	}
	defer n.down()
	lcores := lcoresOf(cfg)
	eng, err := newEngine(cfg)
	if err != nil {
		out.close()
		return err
	}
	rxLcores := 0
	if cfg.Switch.Mode == daemon.ModeSharded {
		rxLcores = len(lcores) - cfg.Switch.TxLcores
	}
	sw, err := dataplane.New(eng, n.ports, n.pool, dataplane.Config{
		Pipeline: cfg.Switch.Mode == daemon.ModePipeline, RxLcores: rxLcores, TxLcores: cfg.Switch.TxLcores,
		Burst: cfg.Switch.Burst, RingSize: cfg.Switch.RingSize, Name: "switchd",
	})
	if err != nil {
		out.close()
		return err
	}
	for i, p := range cfg.Ports {
		log.Info("port", zap.Int("port", i), zap.String("name", p.Name), zap.String("device", p.Device), zap.String("mac", p.MAC),
			zap.String("peer_mac", p.PeerMAC), zap.Float64("link_gbps", p.LinkGbps), zap.String("scheme", cfg.SchemeOf(i)))
	}
	mcfg := daemon.MonitorConfig{CSV: out.csv, PFC: out.pfc, JSONPath: cfg.Telemetry.JSON, Mode: cfg.Switch.Mode, Start: time.Now(), Checkpoint: o.checkpoint}
	if cfg.Telemetry.Console {
		mcfg.Console = os.Stdout
	}
	mon, err := daemon.NewMonitor(eng, mcfg)
	if err != nil {
		sw.Close()
		out.close()
		return fmt.Errorf("telemetry.json: %w", err)
	}
	stopMetrics, err := o.metrics.Serve(metrics.Switch(eng, sw)) // before the loops; stopped at return
	if err != nil {
		sw.Close()
		return err
	}
	defer stopMetrics()
	clock := lcore.NewTSCClock(dpdk.TSCHz())
	mon.SetClockOrigin(time.Now().UnixNano()) // the engine's time 0, within a microsecond
	g := lcore.NewGroup()
	if err := sw.Launch(g, clock, lcores); err != nil {
		g.Stop()
		g.Wait()
		sw.Close()
		return err
	}
	// Signals stop the run from before it says it runs (lcore.SignalContext).
	ctx, cancel := lcore.SignalContext(context.Background(), sigc)
	defer cancel()
	if o.duration > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, o.duration)
		defer stop()
	}
	// "switchd: running" begins the line in the console format: the test
	// harnesses and testbed collect's fallback (switchOrigin) look for it.
	log.Info("running", zap.String("mode", string(cfg.Switch.Mode)), zap.Uints("lcores", lcores))

	done, stopTel := make(chan struct{}), make(chan struct{})
	go func() { // telemetry: CSV samples, the console line, checkpoints
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		warned := false
		for {
			select {
			case now := <-tick.C:
				if err := mon.Tick(now); err != nil && !warned {
					log.Warn("checkpoint failed (warned once)", zap.Error(err))
					warned = true
				}
			case <-stopTel:
				return
			}
		}
	}()
	stats := g.Run(ctx) // returns on -duration, SIGINT or SIGTERM
	close(stopTel)
	<-done
	sig := ""
	select {
	case s := <-sigc:
		sig = s.String()
	default:
	}
	sw.Close()
	var lcs []switchd.LcoreResults
	for _, s := range stats {
		lcs = append(lcs, switchd.LcoreResults{Name: s.Name, Lcore: s.Lcore, Iterations: s.Iterations,
			BusyPolls: s.BusyPolls, Work: s.Work, MaxStallNs: s.MaxStallNs, Panic: s.Panic})
	}
	res, ferr := mon.Finish(time.Now(), lcs, sig)
	var errs []error
	if ferr != nil {
		errs = append(errs, ferr)
	}
	tot := switchd.PortCounters{}
	for _, p := range res.Counters.Ports {
		tot.RxPackets += p.RxPackets
		tot.TxPackets += p.TxPackets
		tot.DropsTotal += p.DropsTotal
	}
	n.eths.Close() // drain, stop, close: the mbufs in the rx rings come back
	how := "ran its duration"
	if sig != "" {
		how = "interrupted by " + sig
	}
	log.Info("stopped", zap.Float64("duration_s", math.Round(res.DurationS*10)/10), zap.String("how", how),
		zap.Uint64("rx", tot.RxPackets), zap.Uint64("tx", tot.TxPackets), zap.Uint64("drops", tot.DropsTotal),
		zap.Int("mbufs_in_use", n.pool.InUse()))
	for _, s := range stats {
		if s.Panic != "" {
			errs = append(errs, fmt.Errorf("loop %s panicked: %s", s.Name, s.Panic))
		}
	}
	return errors.Join(errs...)
}
