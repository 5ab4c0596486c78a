package testbed

import (
	"bufio"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ccbed/ccbed/hostd"
	"github.com/ccbed/ccbed/hostd/daemon"
	"github.com/ccbed/ccbed/switchd"
	swdaemon "github.com/ccbed/ccbed/switchd/daemon"
	"github.com/ccbed/ccbed/testbed/report"
)

// CollectFile is the file beside summary.json in which Collect keeps what
// the summary has no field for: the consistency check, each node's clock
// offset and time base. Each node's counters are copied beside it as
// switch.json and counters-<host>.json.
const CollectFile = "nodes.json"

// CollectResult is what Collect produced.
type CollectResult struct {
	// Dir is the merged results directory.
	Dir string `json:"-"`
	// Summary is the merged summary.json.
	Summary report.Summary `json:"-"`
	// StartAtUnixNs is the common start instant, t = 0 of every series.
	StartAtUnixNs int64 `json:"start_at_unix_ns"`
	// Consistency is the check of the nodes' counters against each other.
	Consistency Consistency `json:"consistency"`
	// Nodes are each node's time base and clock offset.
	Nodes []NodeTime `json:"nodes"`
	// ClockSync sums up the nodes' clock offsets against the bound: "ok",
	// "exceeds bound" (cross-node series are degraded) or "unknown".
	ClockSync string `json:"clock_sync"`
	// ClockOffsetBoundNs is the bound the offsets were held to.
	ClockOffsetBoundNs int64 `json:"clock_offset_bound_ns"`
	// StallBound is the bound the lcores' stalls and the hosts' lateness at
	// the start instant were held to (nil: the node files carry none).
	StallBound *StallBound `json:"stall_bound,omitempty"`
}

// NodeTime is one node's place on the common time base.
type NodeTime struct {
	Node string `json:"node"`
	Role string `json:"role"` // "switch" or "host"
	// T0Us is where the node's own time 0 lies on the common time base (a
	// host's wake-up lateness; for the switch, negative: it started first).
	T0Us float64 `json:"t0_us"`
	// T0Source says how T0Us was found.
	T0Source string `json:"t0_source"`
	// ClockOffset is the node's offset as its synchronisation daemon
	// reported it (unknown: null offset and the reason).
	ClockOffset hostd.ClockOffset `json:"clock_offset"`
}

// Consistency checks the frames the hosts sent against those they received
// and the switch dropped. Every data frame a host sends is, when the run
// ends, received by a host, dropped by the switch, lost on a link (counted by
// the two ends' NICs: a host's tx against its switch port's rx, the port's tx
// against the host's rx; a receiver's rx ring that overflowed while its
// process was descheduled counts here), or still in flight (in the switch's
// queues, or in a burst on a NIC). The links' counts take frames of every
// kind, so only the directions that carry data count (a host's uplink when it
// sent data, its downlink when it received data: a pure sender's downlink
// carries only ACKs, CNPs and rate messages), and even there some lost frames
// may have been control frames. So
//
//	residue = sent - received - dropped - lost on data-carrying links
//	lies within [-(Tolerance + lost on data-carrying links), +Tolerance],
//
// with Tolerance = the frames the switch's queues held at the hosts' end
// (the last queue sample, in data frames) + the frames the hosts sent, at
// their mean rate, between the first and the last host's end (SkewFrames)
// + 64 frames per host (a tx burst of 32 at the sender and an rx burst of
// 32 at the receiver when the hosts stopped). Dropped counts every switch
// drop, control frames included, so it may exceed the data frames lost by
// the control frames dropped; the tolerance covers that only in part, and
// a run with many control drops fails the check.
type Consistency struct {
	OK bool `json:"ok"`
	// Text is the check in words, as written into summary.json's notes.
	Text string `json:"text"`
	// SentFrames is the data frames every host sent (retransmissions
	// included); ReceivedFrames those every host received.
	SentFrames     uint64 `json:"sent_data_frames"`
	ReceivedFrames uint64 `json:"received_data_frames"`
	// SentBytes and ReceivedBytes are the same in frame bytes.
	SentBytes     uint64 `json:"sent_data_bytes"`
	ReceivedBytes uint64 `json:"received_data_bytes"`
	// DroppedFrames is every drop the switch counted.
	DroppedFrames uint64 `json:"switch_dropped_frames"`
	// QueuedFrames is the switch's queues at the hosts' end, in data frames.
	QueuedFrames uint64 `json:"queued_frames_at_end"`
	// SkewFrames is the data frames the hosts send, at their mean rate, in
	// the spread between the first and the last host's end: a receiver that
	// stopped first did not count what its senders sent meanwhile.
	SkewFrames uint64 `json:"skew_frames"`
	// LinkLostFrames is the frames, of every kind, one end of a host's link
	// sent and the other did not receive (Links), both directions;
	// DataLinkLostFrames those of them on directions that carry data.
	LinkLostFrames     uint64 `json:"link_lost_frames"`
	DataLinkLostFrames uint64 `json:"data_link_lost_frames"`
	// Residue is sent - received - dropped - DataLinkLostFrames.
	Residue int64 `json:"residue_frames"`
	// Tolerance bounds Residue above; below, Tolerance + DataLinkLostFrames
	// (some of those lost frames may not have been data).
	Tolerance int64 `json:"tolerance_frames"`
	// Links compare each host's NIC with its switch port: frames a host sent
	// that its switch port did not receive were lost on the link or in a
	// NIC's rx ring, and the reverse.
	Links []LinkCount `json:"links"`
}

// LinkCount is one host's link: its NIC's frame counts and its switch
// port's.
type LinkCount struct {
	Host       string `json:"host"`
	SwitchPort int    `json:"switch_port"`
	HostTx     uint64 `json:"host_tx_frames"`
	SwitchRx   uint64 `json:"switch_rx_frames"`
	SwitchTx   uint64 `json:"switch_tx_frames"`
	HostRx     uint64 `json:"host_rx_frames"`
}

// Collect merges the results that the playbook of NodeFiles fetched into
// dir/results/<node>/ into the results contract of a one-machine run,
// written to out (default dir/merged) by the same report.Recorder: every
// series on one time base whose t = 0 is the common start instant, the
// switch's counters as the ports' counters, its PFC event log as pfc.csv,
// the hosts' rates, FCTs and delivered bytes as the flows'. It copies each node's counters beside
// summary.json, checks them against each other (Consistency), writes the
// check and the nodes' clock offsets into the summary's notes and into
// nodes.json, and prints the summary table to w. It returns an error when
// the results cannot be merged; a failed check is CollectResult.Consistency.OK
// false, with everything written.
func Collect(dir, out string, w io.Writer) (*CollectResult, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("testbed: collect: %w (is %s a directory written by testbed nodes?)", err, dir)
	}
	if out == "" {
		out = filepath.Join(dir, "merged")
	}
	res := &CollectResult{Dir: out, ClockOffsetBoundNs: m.ClockOffsetBoundNs, StallBound: m.StallBound}
	nodeDir := func(node string) string { return filepath.Join(dir, ResultsSubdir, node) }

	// The hosts: run.json (time base), counters.json.
	infos := make([]hostd.RunInfo, len(m.Hosts))
	reps := make([]hostd.Report, len(m.Hosts))
	for i, h := range m.Hosts {
		info, err := daemon.ReadRunInfo(filepath.Join(nodeDir(h.Name), hostd.RunInfoFile))
		if err != nil {
			return nil, fmt.Errorf("testbed: collect: host %s: %w (did hostd run? see %s)", h.Name, err,
				filepath.Join(nodeDir(h.Name), HostLogFile))
		}
		if info.StartAtUnixNs == 0 {
			return nil, fmt.Errorf("testbed: collect: host %s started without a common start instant (hostd -start-at)", h.Name)
		}
		if i > 0 && info.StartAtUnixNs != infos[0].StartAtUnixNs {
			return nil, fmt.Errorf("testbed: collect: host %s started at %s, host %s at %s: not one run",
				h.Name, info.StartAt, m.Hosts[0].Name, infos[0].StartAt)
		}
		infos[i] = info
		if err := readJSONFile(filepath.Join(nodeDir(h.Name), "counters.json"), &reps[i]); err != nil {
			return nil, fmt.Errorf("testbed: collect: host %s: %w", h.Name, err)
		}
	}
	if len(infos) == 0 {
		return nil, fmt.Errorf("testbed: collect: %s: no hosts", filepath.Join(dir, ManifestFile))
	}
	start := infos[0].StartAtUnixNs
	res.StartAtUnixNs = start

	// The switch: switch.json, its time 0 from the stamped log, its clock
	// offset from check.txt.
	var sw switchd.Results
	if err := readJSONFile(filepath.Join(nodeDir(m.Switch), SwitchJSONFile), &sw); err != nil {
		return nil, fmt.Errorf("testbed: collect: switch %s: %w", m.Switch, err)
	}
	swT0, t0Source := sw.ClockOriginUnixNs, "switchd's own record of its engine clock's start (clock_origin_unix_ns)"
	if swT0 == 0 { // a switchd that does not record it
		if swT0, err = switchOrigin(filepath.Join(nodeDir(m.Switch), SwitchLogFile)); err != nil {
			return nil, fmt.Errorf("testbed: collect: switch %s: %w", m.Switch, err)
		}
		t0Source = "wall clock stamped on switchd's \"switchd: running\" line by the playbook (within about 100 us after its time 0)"
	}
	swShiftUs := float64(swT0-start) / 1e3
	res.Nodes = append(res.Nodes, NodeTime{Node: m.Switch, Role: "switch", T0Us: swShiftUs,
		T0Source:    t0Source,
		ClockOffset: readCheckOffset(filepath.Join(nodeDir(m.Switch), CheckFile))})
	for i, h := range m.Hosts {
		res.Nodes = append(res.Nodes, NodeTime{Node: h.Name, Role: "host", T0Us: float64(infos[i].T0UnixNs-start) / 1e3,
			T0Source: "hostd run.json: wall clock at its time 0", ClockOffset: infos[i].ClockOffset})
	}
	res.ClockSync = "ok"
	var unknown, exceeded []string
	for _, n := range res.Nodes {
		switch {
		case n.ClockOffset.OffsetNs == nil:
			unknown = append(unknown, n.Node)
		case n.ClockOffset.Exceeds(m.ClockOffsetBoundNs):
			exceeded = append(exceeded, fmt.Sprintf("%s %+.1f us", n.Node, float64(*n.ClockOffset.OffsetNs)/1e3))
		}
	}
	clockNote := fmt.Sprintf("clock offsets within %.0f us on every node", float64(m.ClockOffsetBoundNs)/1e3)
	switch {
	case len(exceeded) > 0:
		res.ClockSync = "exceeds bound"
		clockNote = fmt.Sprintf("DEGRADED: clock offsets above the %.0f us bound (%s): cross-node time series are misaligned",
			float64(m.ClockOffsetBoundNs)/1e3, strings.Join(exceeded, ", "))
	case len(unknown) > 0:
		res.ClockSync = "unknown"
		clockNote = fmt.Sprintf("clock offsets unknown on %s (no chrony or PTP): cross-node time series are aligned only as well as the nodes' clocks agree",
			strings.Join(unknown, ", "))
	}

	// The switch's series on the common time base, up to the hosts' end.
	durUs := m.DurationS * 1e6
	type qsample struct {
		t       float64
		port    int
		q       int64
		fair    float64
		hasFair bool
	}
	var queue []qsample
	lastQueue := map[int]int64{} // port -> its last queue sample at or before the hosts' end
	if err := readSwitchCSV(filepath.Join(nodeDir(m.Switch), SwitchCSVFile), func(tUs float64, port int, q int64, fair float64, hasFair bool) {
		t := tUs + swShiftUs
		if t < 0 || t > durUs {
			return
		}
		queue = append(queue, qsample{t, port, q, fair, hasFair})
		lastQueue[port] = q
	}); err != nil {
		return nil, fmt.Errorf("testbed: collect: switch %s: %w", m.Switch, err)
	}
	// Its PFC event log: every XOFF and XON, on the same time base.
	type pfcEvent struct {
		t           float64
		port, prio  int
		xoff        bool
		ingressByte int64
	}
	var pfcEvents []pfcEvent
	pfcRows, pfcErr := readSwitchPFCCSV(filepath.Join(nodeDir(m.Switch), swdaemon.PFCCSVFile), func(tUs float64, port, prio int, xoff bool, bytes int64) {
		if t := tUs + swShiftUs; t >= 0 && t <= durUs {
			pfcEvents = append(pfcEvents, pfcEvent{t, port, prio, xoff, bytes})
		}
	})
	if pfcErr != nil && !errors.Is(pfcErr, fs.ErrNotExist) {
		return nil, fmt.Errorf("testbed: collect: switch %s: %w", m.Switch, pfcErr)
	}
	var skewNs int64 // the spread of the hosts' ends (their time 0s plus their run times)
	minEnd, maxEnd := int64(math.MaxInt64), int64(math.MinInt64)
	for _, info := range infos {
		end := info.T0UnixNs + int64(info.DurationS*1e9)
		minEnd, maxEnd = min(minEnd, end), max(maxEnd, end)
	}
	skewNs = maxEnd - minEnd
	res.Consistency = checkConsistency(m, reps, &sw, lastQueue, float64(skewNs)/1e9)

	// The recorder, filled as a one-process run fills it (Experiment.record).
	notes := []string{}
	if m.Mirrors != "" {
		notes = append(notes, m.Mirrors)
	}
	notes = append(notes, fmt.Sprintf("real nodes (a switch and %d hosts, through Ansible), t = 0 at the common start instant %s",
		len(m.Hosts), infos[0].StartAt), "consistency "+res.Consistency.Text, clockNote)
	var degraded []string
	if len(exceeded) > 0 {
		degraded = append(degraded, clockNote[len("DEGRADED: "):])
	}
	if !res.Consistency.OK {
		degraded = append(degraded, "the nodes' frame counters disagree (consistency check failed: "+CollectFile+")")
	}
	if res.Consistency.LinkLostFrames > 0 {
		degraded = append(degraded, fmt.Sprintf("%d frames lost between a host and the switch (no drop counter saw them)",
			res.Consistency.LinkLostFrames))
	}
	if b := m.StallBound; b != nil {
		for _, l := range sw.Lcores {
			if r := stallReason(l.Lcore, "switch "+l.Name, l.MaxStallNs, *b); r != "" {
				degraded = append(degraded, r)
			}
		}
		for i, h := range m.Hosts {
			if r := lateStartReason(h.Name, infos[i].T0UnixNs-start, *b); r != "" {
				degraded = append(degraded, r)
			}
			for _, l := range infos[i].Lcores {
				if r := stallReason(l.Lcore, h.Name+" "+l.Name, l.MaxStallNs, *b); r != "" {
					degraded = append(degraded, r)
				}
			}
		}
	}
	degraded = append(degraded, switchDegraded(m.Switch, &sw.Counters)...)
	switch {
	case pfcErr != nil:
		notes = append(notes, fmt.Sprintf("switch %s left no PFC event log (%s): pfc.csv has its header only", m.Switch, swdaemon.PFCCSVFile))
	case sw.Final && sw.PFCRows != pfcRows:
		degraded = append(degraded, fmt.Sprintf("switch %s wrote %d PFC events, its %s holds %d (pfc.csv has gaps)",
			m.Switch, sw.PFCRows, swdaemon.PFCCSVFile, pfcRows))
	}
	for i, h := range m.Hosts {
		degraded = append(degraded, hostDegraded(h.Name, &reps[i])...)
	}
	rec := report.NewRecorder(report.Meta{Experiment: m.Experiment, Scheme: m.Scheme, Scaling: m.Scaling,
		Notes: strings.Join(notes, "; "), Clock: ClockDPDK, Seed: m.Seed, Topology: m.Topology, LinkGbps: m.LinkGbps,
		StartedAt: time.Unix(0, start), Config: manifestSnapshot(filepath.Join(dir, ManifestFile)),
		Build: report.ThisBuild(), Machine: report.ThisMachine(), Degraded: degraded})
	rec.SetDuration(m.DurationS)
	for _, q := range queue {
		rec.AddQueueSample(q.t, q.port, q.q)
		if q.hasFair {
			rec.AddFairRate(q.t, q.port, q.fair)
		}
	}
	for _, ev := range pfcEvents {
		rec.AddPFCEvent(ev.t, ev.port, ev.prio, ev.xoff, ev.ingressByte)
	}
	warmUs := m.WarmupS * 1e6
	hostName := map[string]string{} // hostd writes addresses; the results name hosts
	for _, h := range m.Hosts {
		hostName[h.IP] = h.Name
	}
	for i, h := range m.Hosts {
		shift := float64(infos[i].T0UnixNs-start) / 1e3
		if err := readRateCSV(filepath.Join(nodeDir(h.Name), "rate.csv"), func(s report.RateSample) {
			if s.TUs += shift; s.TUs >= warmUs {
				rec.AddRate(s)
			}
		}); err != nil {
			return nil, fmt.Errorf("testbed: collect: host %s: %w", h.Name, err)
		}
		delivered := map[int64]int64{}
		fcts := map[int64]float64{}
		if err := readFCTCSV(filepath.Join(nodeDir(h.Name), "fct.csv"), func(f report.FCTRecord) {
			for _, a := range []*string{&f.Src, &f.Dst} {
				if n, ok := hostName[*a]; ok {
					*a = n
				}
			}
			f.StartUs += shift
			rec.AddFCTRecord(f)
			delivered[int64(f.Flow)] += f.SizeBytes
			fcts[int64(f.Flow)] = f.FCTUs
		}); err != nil {
			return nil, fmt.Errorf("testbed: collect: host %s: %w", h.Name, err)
		}
		for _, f := range reps[i].Active {
			delivered[f.Flow] += f.AckedBytes
		}
		for id, bytes := range delivered {
			rec.SetFlow(report.FlowInfo{ID: int(id), Src: h.Name, Dst: m.flowDst(h.Name, id), Bytes: bytes, FCTUs: fcts[id]})
		}
	}
	hostOnPort := map[int]int{}
	for i, h := range m.Hosts {
		hostOnPort[h.SwitchPort] = i
	}
	for _, pc := range sw.Counters.Ports {
		// The port's congestion notifications: the switch CP's own feedback
		// plus the CNPs of the host behind the port (DCQCN's NP).
		cnps := pc.FeedbackSent
		if i, ok := hostOnPort[pc.Port]; ok {
			cnps += reps[i].Rx.CNPs
		}
		rec.SetPortCounters(report.PortCounters{ID: pc.Port, PFCPauses: pc.PausesSent, Drops: pc.DropsTotal,
			PFCActivations: pc.PFCOnsets, PFCPausesReceived: pc.PausesRecv, PausedUs: float64(pc.PausedNs) / 1e3,
			ECNMarked: pc.ECNMarkedTotal, CNPsSent: cnps})
	}
	stage, err := report.StageDir(out)
	if err != nil {
		return nil, fmt.Errorf("testbed: collect: results: %w", err)
	}
	defer stage.Abort() // after Commit, nothing
	sum, err := rec.WriteFiles(stage.Path())
	if err != nil {
		return nil, fmt.Errorf("testbed: collect: results: %w", err)
	}
	res.Summary = sum

	// Beside the summary: each node's counters and nodes.json.
	copies := map[string]string{filepath.Join(nodeDir(m.Switch), SwitchJSONFile): SwitchJSONFile}
	for _, h := range m.Hosts {
		copies[filepath.Join(nodeDir(h.Name), "counters.json")] = "counters-" + h.Name + ".json"
	}
	for src, name := range copies {
		b, err := os.ReadFile(src)
		if err == nil {
			err = os.WriteFile(filepath.Join(stage.Path(), name), b, 0o644)
		}
		if err != nil {
			return nil, fmt.Errorf("testbed: collect: %w", err)
		}
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(stage.Path(), CollectFile), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("testbed: collect: %w", err)
	}
	if err := stage.Commit(); err != nil {
		return nil, fmt.Errorf("testbed: collect: results: %w", err)
	}
	if w != nil {
		report.PrintTable(w, sum)
		for _, n := range res.Nodes {
			fmt.Fprintf(w, "node %-8s %-6s time 0 at t = %+9.1f us, clock offset %s\n", n.Node, n.Role, n.T0Us, n.ClockOffset)
		}
		fmt.Fprintf(w, "consistency: %s\n", res.Consistency.Text)
		fmt.Fprintf(w, "clocks: %s\n", clockNote)
		fmt.Fprintf(w, "results in %s\n", out)
	}
	return res, nil
}

// flowDst names the destination of flow id sent by host src, "workload" for
// a flow whose destination was drawn at random.
func (m *NodesManifest) flowDst(src string, id int64) string {
	for _, f := range m.Flows {
		if f.Src == src && id >= f.FirstID && id <= f.LastID {
			return f.Dst
		}
	}
	return "workload"
}

// checkConsistency checks the hosts' and the switch's frame counts (see
// Consistency).
func checkConsistency(m *NodesManifest, reps []hostd.Report, sw *switchd.Results, lastQueue map[int]int64, skewS float64) Consistency {
	var c Consistency
	for i := range reps {
		c.SentFrames += reps[i].Tx.DataFrames
		c.SentBytes += reps[i].Tx.DataBytes
		c.ReceivedFrames += reps[i].Rx.Data
		c.ReceivedBytes += reps[i].Rx.DataBytes
	}
	byPort := map[int]switchd.PortCounters{}
	for _, pc := range sw.Counters.Ports {
		c.DroppedFrames += pc.DropsTotal
		byPort[pc.Port] = pc
	}
	frame := float64(m.MTUBytes)
	if c.SentFrames > 0 {
		frame = float64(c.SentBytes) / float64(c.SentFrames)
	}
	var queued int64
	for _, q := range lastQueue {
		queued += q
	}
	if frame > 0 {
		c.QueuedFrames = uint64(math.Ceil(float64(queued) / frame))
	}
	var lossy []string
	for i, h := range m.Hosts {
		pc := byPort[h.SwitchPort]
		l := LinkCount{Host: h.Name, SwitchPort: h.SwitchPort, HostTx: reps[i].Port.TxFrames, SwitchRx: pc.RxPackets,
			SwitchTx: pc.TxPackets, HostRx: reps[i].Port.RxFrames}
		c.Links = append(c.Links, l)
		if l.HostTx > l.SwitchRx {
			c.LinkLostFrames += l.HostTx - l.SwitchRx
			if reps[i].Tx.DataFrames > 0 {
				c.DataLinkLostFrames += l.HostTx - l.SwitchRx
			}
			lossy = append(lossy, fmt.Sprintf("%s sent %d frames, switch port %d received %d", h.Name, l.HostTx, h.SwitchPort, l.SwitchRx))
		}
		if l.SwitchTx > l.HostRx {
			c.LinkLostFrames += l.SwitchTx - l.HostRx
			if reps[i].Rx.Data > 0 {
				c.DataLinkLostFrames += l.SwitchTx - l.HostRx
			}
			lossy = append(lossy, fmt.Sprintf("switch port %d sent %d frames, %s received %d", h.SwitchPort, l.SwitchTx, h.Name, l.HostRx))
		}
	}
	c.Residue = int64(c.SentFrames) - int64(c.ReceivedFrames) - int64(c.DroppedFrames) - int64(c.DataLinkLostFrames)
	if m.DurationS > 0 {
		c.SkewFrames = uint64(math.Ceil(float64(c.SentFrames) / m.DurationS * skewS))
	}
	c.Tolerance = int64(c.QueuedFrames) + int64(c.SkewFrames) + 64*int64(len(reps))
	c.OK = c.SentFrames > 0 && c.Residue <= c.Tolerance && c.Residue >= -c.Tolerance-int64(c.DataLinkLostFrames)
	verdict := "ok"
	if !c.OK {
		verdict = "FAILED"
	}
	c.Text = fmt.Sprintf("%s: hosts sent %d data frames (%d B), received %d (%d B), the switch dropped %d, the links lost %d (%d where data flows): residue %+d frames, tolerance %d (%d queued at the end + %d sent in the %.1f ms between the first and the last host's end + 64 per host)",
		verdict, c.SentFrames, c.SentBytes, c.ReceivedFrames, c.ReceivedBytes, c.DroppedFrames, c.LinkLostFrames, c.DataLinkLostFrames,
		c.Residue, c.Tolerance, c.QueuedFrames, c.SkewFrames, skewS*1e3)
	if c.DataLinkLostFrames > 0 {
		c.Text += fmt.Sprintf(", down to %d (frames lost where data flows may have been control frames)", -c.Tolerance-int64(c.DataLinkLostFrames))
	}
	if c.SentFrames == 0 {
		c.Text += "; no data sent"
	}
	if len(lossy) > 0 {
		sort.Strings(lossy)
		c.Text += "; DEGRADED: frames lost between a host and the switch (no drop counter saw them): " + strings.Join(lossy, ", ")
	}
	return c
}

func readJSONFile(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// switchOrigin is the wall-clock time (Unix ns) of the switch's time 0: the
// stamp the playbook's wrapper put on switchd's "switchd: running" line
// ($EPOCHREALTIME: seconds with microseconds). switchd prints it right after
// it made its clock and launched its loops.
func switchOrigin(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		stamp, line, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(line, "switchd: running") {
			continue
		}
		sec, frac, _ := strings.Cut(stamp, ".")
		s, err1 := strconv.ParseInt(sec, 10, 64)
		frac = (frac + "000000000")[:9]
		ns, err2 := strconv.ParseInt(frac, 10, 64)
		if err1 != nil || err2 != nil {
			return 0, fmt.Errorf("%s: line %q: want a $EPOCHREALTIME stamp before it (the playbook's wrapper writes one)", path, sc.Text())
		}
		return s*1e9 + ns, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no \"switchd: running\" line: switchd did not run, so its series cannot be placed in time", path)
}

// readCheckOffset reads the clock offset a node's check script reported in
// check.txt.
func readCheckOffset(path string) hostd.ClockOffset {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return hostd.ClockOffset{Source: "no " + CheckFile + " from the node"}
		}
		return hostd.ClockOffset{Source: err.Error()}
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "clock_offset_ns="); ok {
			if ns, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return hostd.ClockOffset{OffsetNs: &ns, Source: "the node's check (chrony or PTP)"}
			}
		}
		if v, ok := strings.CutPrefix(l, "clock_offset=unknown"); ok {
			return hostd.ClockOffset{Source: strings.Trim(strings.TrimSpace(v), "()")}
		}
	}
	return hostd.ClockOffset{Source: CheckFile + " has no clock offset"}
}

// readCSV calls row on every record of the CSV file at path after checking
// its header: header, or one of the older headers the reader still takes.
func readCSV(path, header string, row func(rec []string) error, older ...string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReader(f))
	r.FieldsPerRecord = -1
	first := true
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if first {
			if got := strings.Join(rec, ","); got != header && !slices.Contains(older, got) {
				return fmt.Errorf("%s: header %q, want %q", path, got, header)
			}
			first = false
			continue
		}
		if err := row(rec); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
}

// readSwitchCSV reads switchd's telemetry CSV (swdaemon.CSVHeader).
func readSwitchCSV(path string, fn func(tUs float64, port int, q int64, fair float64, hasFair bool)) error {
	return readCSV(path, swdaemon.CSVHeader, func(rec []string) error {
		if len(rec) != 4 {
			return fmt.Errorf("%d fields, want 4", len(rec))
		}
		t, err1 := strconv.ParseFloat(rec[0], 64)
		p, err2 := strconv.Atoi(rec[1])
		q, err3 := strconv.ParseInt(rec[2], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
		var fair float64
		if rec[3] != "" {
			var err error
			if fair, err = strconv.ParseFloat(rec[3], 64); err != nil {
				return err
			}
		}
		fn(t, p, q, fair, rec[3] != "")
		return nil
	})
}

// readSwitchPFCCSV reads switchd's PFC event log (its
// swdaemon.PFCCSVHeader) and returns how many rows it holds.
func readSwitchPFCCSV(path string, fn func(tUs float64, port, prio int, xoff bool, ingressBytes int64)) (uint64, error) {
	var rows uint64
	err := readCSV(path, swdaemon.PFCCSVHeader, func(rec []string) error {
		if len(rec) != 5 {
			return fmt.Errorf("%d fields, want 5", len(rec))
		}
		t, err1 := strconv.ParseFloat(rec[0], 64)
		p, err2 := strconv.Atoi(rec[1])
		prio, err3 := strconv.Atoi(rec[2])
		b, err4 := strconv.ParseInt(rec[4], 10, 64)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return err
		}
		if p < 0 || prio < 0 || prio > 7 || (rec[3] != "xoff" && rec[3] != "xon") {
			return fmt.Errorf("port %d, priority %d, event %q: want a port, a priority 0-7, xoff or xon", p, prio, rec[3])
		}
		rows++
		fn(t, p, prio, rec[3] == "xoff", b)
		return nil
	})
	return rows, err
}

// readRateCSV reads a host's rate.csv (hostd.RateCSVHeader): an empty
// rate_gbps or window_bytes is unknown.
func readRateCSV(path string, fn func(report.RateSample)) error {
	return readCSV(path, hostd.RateCSVHeader, func(rec []string) error {
		if len(rec) != 5 {
			return fmt.Errorf("%d fields, want 5", len(rec))
		}
		s := report.RateSample{RateGbps: math.NaN(), WindowBytes: -1}
		var err1, err2, err3, err4, err5 error
		s.TUs, err1 = strconv.ParseFloat(rec[0], 64)
		s.Flow, err2 = strconv.Atoi(rec[1])
		s.GoodputGbps, err3 = strconv.ParseFloat(rec[2], 64)
		if rec[3] != "" {
			s.RateGbps, err4 = strconv.ParseFloat(rec[3], 64)
		}
		if rec[4] != "" {
			s.WindowBytes, err5 = strconv.ParseInt(rec[4], 10, 64)
		}
		if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
			return err
		}
		fn(s)
		return nil
	})
}

// readFCTCSV reads a host's fct.csv (hostd.FCTCSVHeader, or the header
// without priority of an older hostd, whose flows then have none): src and
// dst as written (addresses), start_us on the host's time base.
func readFCTCSV(path string, fn func(report.FCTRecord)) error {
	return readCSV(path, hostd.FCTCSVHeader, func(rec []string) error {
		if len(rec) != 7 && len(rec) != 8 {
			return fmt.Errorf("%d fields, want 8 (7 without priority)", len(rec))
		}
		f := report.FCTRecord{Src: rec[1], Dst: rec[2], StartUs: math.NaN()}
		fl, err1 := strconv.Atoi(rec[0])
		var err2, err3, err4, err5 error
		f.SizeBytes, err2 = strconv.ParseInt(rec[3], 10, 64)
		if rec[4] != "" {
			f.StartUs, err3 = strconv.ParseFloat(rec[4], 64)
		}
		f.FCTUs, err4 = strconv.ParseFloat(rec[5], 64)
		f.Slowdown, err5 = strconv.ParseFloat(rec[6], 64)
		var err6 error
		if len(rec) == 8 && rec[7] != "" {
			f.Priority, err6 = strconv.Atoi(rec[7])
			if err6 == nil && (f.Priority < 0 || f.Priority > 7) {
				err6 = fmt.Errorf("priority %d, want 0-7", f.Priority)
			}
			f.HasPriority = true
		}
		if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
			return err
		}
		f.Flow = fl
		fn(f)
		return nil
	}, hostd.FCTCSVHeaderNoPriority)
}

// manifestSnapshot is the config snapshot of a real-node run: the nodes.json
// manifest testbed nodes wrote (the experiment as the nodes ran it); nil
// when it cannot be read.
func manifestSnapshot(path string) *report.ConfigSnapshot {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(b)
	return &report.ConfigSnapshot{Path: path, SHA256: hex.EncodeToString(sum[:]), Text: string(b)}
}
