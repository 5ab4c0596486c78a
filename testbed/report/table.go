package report

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// PrintTable writes s as a short human summary: a header line, one row per
// flow (avg and steady Gb/s, FCT), one row per port (avg, p99 and steady
// queue in KB, fair rate, drops, marks, CNPs, pauses) and Jain's index. A
// value that does not apply (no FCT, no fair rate) prints as "-".
func PrintTable(w io.Writer, s Summary) error {
	active := 0
	for _, f := range s.Flows {
		if f.SteadyGbps > 0 {
			active++
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "experiment %s  scheme %s  duration %.6g s  steady from %.6g s\n",
		s.Experiment, s.Scheme, s.DurationS, s.SteadyFromS)
	if s.Scaling != "" {
		fmt.Fprintf(w, "scaling: %s\n", s.Scaling)
	}
	if len(s.Flows) > 0 {
		fmt.Fprintf(tw, "flow\tsrc\tdst\tbytes\tavg Gb/s\tsteady Gb/s\tFCT us\t\n")
		for _, f := range s.Flows {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%.3f\t%.3f\t%s\t\n",
				f.ID, dash(f.Src), dash(f.Dst), f.Bytes, f.AvgGbps, f.SteadyGbps, optFloat(f.FCTUs, 1))
		}
		tw.Flush()
	}
	if len(s.Ports) > 0 {
		fmt.Fprintf(tw, "port\tavg q KB\tp99 q KB\tsteady q KB\tfair Gb/s\tdrops\tmarks\tCNPs\tpauses\t\n")
		for _, p := range s.Ports {
			fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%.1f\t%s\t%d\t%d\t%d\t%d\t\n",
				p.ID, p.AvgQueueBytes/1e3, p.P99QueueBytes/1e3, p.SteadyQueueBytes/1e3,
				optFloat(p.FairRateGbps, 3), p.Drops, p.ECNMarked, p.CNPsSent, p.PFCPauses)
		}
		tw.Flush()
	}
	if len(s.FCTBuckets) > 0 {
		fmt.Fprintf(tw, "size bytes\tflows\tmedian slowdown\tp99 slowdown\tmedian FCT us\tp99 FCT us\t\n")
		for _, b := range s.FCTBuckets {
			fmt.Fprintf(tw, "[%d,%d)\t%d\t%.2f\t%.2f\t%.1f\t%.1f\t\n",
				b.LoBytes, b.HiBytes, b.Count, b.MedianSlowdown, b.P99Slowdown, b.MedianFCTUs, b.P99FCTUs)
		}
		tw.Flush()
	}
	_, err := fmt.Fprintf(w, "Jain index over %d flows active in the steady half: %.4f\n", active, s.JainIndex)
	return err
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

// optFloat formats x with prec decimals, or "-" when x is 0 (not applicable).
func optFloat(x float64, prec int) string {
	if x == 0 {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}
