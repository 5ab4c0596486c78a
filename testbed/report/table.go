package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// MaxTableFlows is the most flows PrintTable lists one by one; a run with
// more (a workload's) gets one line of counts: summary.json and fct.csv
// hold every flow.
const MaxTableFlows = 32

// MaxTablePorts is the most ports PrintTable lists one by one; a fabric
// with more gets a line of totals over every port and a row for each of the
// MaxTablePorts busiest (by p99 queue, then drops and pauses):
// summary.json's ports[] holds every port.
const MaxTablePorts = 8

// TableOptions choose what PrintTableWith prints beyond the default.
type TableOptions struct {
	// AllFlows lists every flow, however many (testbed run -flows).
	AllFlows bool
}

// PrintTable is PrintTableWith with the default options.
func PrintTable(w io.Writer, s Summary) error { return PrintTableWith(w, s, TableOptions{}) }

// PrintTableWith writes s as a short human summary: a header line, one row
// per flow (avg and steady Gb/s, FCT; with more than MaxTableFlows and not
// o.AllFlows, a count and the WorstFlows by FCT slowdown), one row per port
// (avg, p99 and steady queue in KB, fair rate, drops, marks, CNPs, pauses;
// totals and the busiest when there are more than MaxTablePorts), PFC
// pauses by priority, the FCT slowdowns by size (per traffic class when the
// flows are of several), Jain's index, and whether the run was interrupted
// or degraded (with the reasons). A missing value (no FCT, no fair rate, no
// samples) prints as "-".
func PrintTableWith(w io.Writer, s Summary, o TableOptions) error {
	active := 0
	for _, f := range s.Flows {
		if f.SteadyGbps.Or(0) > 0 {
			active++
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "experiment %s  scheme %s  duration %.6g s  steady from %.6g s\n",
		s.Experiment, s.Scheme, s.DurationS, s.SteadyFromS)
	if s.Scaling != "" {
		fmt.Fprintf(w, "scaling: %s\n", s.Scaling)
	}
	if len(s.Flows) > MaxTableFlows && !o.AllFlows {
		done := 0
		for _, f := range s.Flows {
			if f.FCTUs.Valid() {
				done++
			}
		}
		fmt.Fprintf(w, "%d flows, %d completed, %d active in the steady half (every one: -flows; summary.json; fct.csv)\n", len(s.Flows), done, active)
		if len(s.WorstFlows) > 0 {
			fmt.Fprintf(w, "the %d with the largest FCT slowdown (every one in fct.csv):\n", len(s.WorstFlows))
			fmt.Fprintf(tw, "flow\tsrc\tdst\tbytes\tstart us\tFCT us\tslowdown\t\n")
			for _, f := range s.WorstFlows {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%.1f\t%.2f\t\n",
					f.ID, dash(f.Src), dash(f.Dst), f.SizeBytes, f.StartUs.Format(1), f.FCTUs, f.Slowdown)
			}
			tw.Flush()
		}
	} else if len(s.Flows) > 0 {
		fmt.Fprintf(tw, "flow\tsrc\tdst\tbytes\tavg Gb/s\tsteady Gb/s\tFCT us\t\n")
		for _, f := range s.Flows {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\t\n",
				f.ID, dash(f.Src), dash(f.Dst), f.Bytes, f.AvgGbps.Format(3), f.SteadyGbps.Format(3), f.FCTUs.Format(1))
		}
		tw.Flush()
	}
	if len(s.Ports) > 0 {
		ports := s.Ports
		if len(ports) > MaxTablePorts {
			var drops, marks, cnps, pauses uint64
			for _, p := range ports {
				drops += p.Drops
				marks += p.ECNMarked
				cnps += p.CNPsSent
				pauses += p.PFCPauses
			}
			fmt.Fprintf(w, "%d ports: %d drops, %d marks, %d CNPs, %d pauses; the %d with the largest p99 queue (every port in summary.json):\n",
				len(ports), drops, marks, cnps, pauses, MaxTablePorts)
			ports = busiestPorts(ports, MaxTablePorts)
		}
		fmt.Fprintf(tw, "port\tavg q KB\tp99 q KB\tsteady q KB\tfair Gb/s\tdrops\tmarks\tCNPs\tpauses\t\n")
		for _, p := range ports {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t\n",
				portLabel(p), kb(p.AvgQueueBytes), kb(p.P99QueueBytes), kb(p.SteadyQueueBytes),
				p.FairRateGbps.Format(3), p.Drops, p.ECNMarked, p.CNPsSent, p.PFCPauses)
		}
		tw.Flush()
	}
	printPFCByPriority(w, s.Ports)
	if len(s.ClassFCTBuckets) > 0 {
		fmt.Fprintf(tw, "class\tsize bytes\tflows\tmedian slowdown\tp99 slowdown\tmedian FCT us\tp99 FCT us\t\n")
		for _, c := range s.ClassFCTBuckets {
			for _, b := range c.Buckets {
				fmt.Fprintf(tw, "p%d\t[%d,%d)\t%d\t%.2f\t%.2f\t%.1f\t%.1f\t\n",
					c.Priority, b.LoBytes, b.HiBytes, b.Count, b.MedianSlowdown, b.P99Slowdown, b.MedianFCTUs, b.P99FCTUs)
			}
		}
		tw.Flush()
	} else if len(s.FCTBuckets) > 0 {
		fmt.Fprintf(tw, "size bytes\tflows\tmedian slowdown\tp99 slowdown\tmedian FCT us\tp99 FCT us\t\n")
		for _, b := range s.FCTBuckets {
			fmt.Fprintf(tw, "[%d,%d)\t%d\t%.2f\t%.2f\t%.1f\t%.1f\t\n",
				b.LoBytes, b.HiBytes, b.Count, b.MedianSlowdown, b.P99Slowdown, b.MedianFCTUs, b.P99FCTUs)
		}
		tw.Flush()
	}
	switch {
	case s.JainIndex.Valid():
		fmt.Fprintf(w, "Jain index over the %d flows that shared the whole steady half: %s\n", s.JainFlows, s.JainIndex.Format(4))
	case s.JainFlows < s.SteadyFlows:
		fmt.Fprintf(w, "Jain index: - (only %d of the %d flows active in the steady half shared all of it: flows that come and go are measured by their FCT slowdown)\n",
			s.JainFlows, s.SteadyFlows)
	default:
		fmt.Fprintf(w, "Jain index: - (it needs %d flows that shared the whole steady half, the run had %d)\n", MinJainFlows, s.JainFlows)
	}
	if s.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: the results cover the run up to the signal")
	}
	for _, r := range s.DegradedReasons {
		fmt.Fprintf(w, "DEGRADED: %s\n", r)
	}
	return nil
}

// printPFCByPriority prints one line of the PFC pauses the ports sent and
// the pause episodes, by priority, when the ports say and some were sent.
func printPFCByPriority(w io.Writer, ports []PortSummary) {
	var pauses, acts [8]uint64
	known := false
	for _, p := range ports {
		if p.PFCPausesByPriority == nil || p.PFCActivationsByPriority == nil {
			continue
		}
		known = true
		for i := range pauses {
			pauses[i] += p.PFCPausesByPriority[i]
			acts[i] += p.PFCActivationsByPriority[i]
		}
	}
	line := ""
	for i := range pauses {
		if pauses[i] > 0 || acts[i] > 0 {
			line += fmt.Sprintf("  p%d: %d pauses in %d episodes", i, pauses[i], acts[i])
		}
	}
	if known && line != "" {
		fmt.Fprintf(w, "PFC by priority (every port):%s\n", line)
	}
}

// busiestPorts returns the n ports of ports with the largest p99 queue
// (then the most drops, then the most pauses), in the order of ports.
func busiestPorts(ports []PortSummary, n int) []PortSummary {
	idx := make([]int, len(ports))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		pa, pb := &ports[a], &ports[b]
		if c := cmp.Compare(pb.P99QueueBytes.Or(-1), pa.P99QueueBytes.Or(-1)); c != 0 {
			return c
		}
		if c := cmp.Compare(pb.Drops, pa.Drops); c != 0 {
			return c
		}
		return cmp.Compare(pb.PFCPauses, pa.PFCPauses)
	})
	idx = idx[:n]
	slices.Sort(idx)
	out := make([]PortSummary, n)
	for i, k := range idx {
		out[i] = ports[k]
	}
	return out
}

// portLabel is a port's name (a fabric's s<i>.p<port>), else its id.
func portLabel(p PortSummary) string {
	if p.Name != "" {
		return p.Name
	}
	return fmt.Sprint(p.ID)
}

// kb formats a byte count in KB with one decimal, "-" when missing.
func kb(x OptFloat) string {
	if v, ok := x.Get(); ok {
		return Some(v / 1e3).Format(1)
	}
	return "-"
}

// PrintTable summarizes what r holds and prints it (see the PrintTable
// function).
func (r *Recorder) PrintTable(w io.Writer) error {
	return PrintTable(w, r.Summarize())
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
