package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/ccbed/ccbed/hostd"
	hostdp "github.com/ccbed/ccbed/hostd/dataplane"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// fakeHost is a HostSource: a fixed Progress, or none (loops that do not
// answer).
type fakeHost struct {
	p       hostdp.Progress
	ok      bool
	timeout time.Duration
}

func (f *fakeHost) Progress(timeout time.Duration) (hostdp.Progress, bool) {
	f.timeout = timeout
	return f.p, f.ok
}

func TestHostCollectorMapsEveryField(t *testing.T) {
	src := &fakeHost{ok: true, p: hostdp.Progress{
		Port: hostd.PortCounter{RxFrames: 1, TxFrames: 2, TxDrops: 3, NoMbuf: 4, CtlRingDrops: 5},
		Rx: hostd.RxCounters{Frames: 66, Malformed: 6, Other: 7, NotForUs: 8, Data: 9, DataBytes: 10,
			InOrder: 11, Duplicate: 12, OutOfOrder: 13, NewFlows: 14, FlowTableFull: 15, Evicted: 16,
			AcksOwed: 17, NaksOwed: 18, CNPsOwed: 19, Acks: 20, Naks: 21, CNPs: 22, RoCCRate: 23, P4QCN: 24,
			QCN: 25, PFC: 26, EventsDropped: 27, BuildErrors: 28,
			Refused: hostd.Refusals{PFC: 1, RoCCRate: 2, P4QCN: 3, QCN: 4}},
		Tx: hostd.TxCounters{DataFrames: 31, DataBytes: 32, PayloadBytes: 33, RetxFrames: 34, NakRewinds: 35,
			Timeouts: 36, StaleEvents: 37, BadAcks: 38, ControlFrames: 39, ControlBytes: 40, PauseFrames: 41,
			FlowsStarted: 50, FlowsCompleted: 42, PendingDropped: 43, SamplesDropped: 44, FCTsDropped: 45,
			BuildErrors: 46, RPRebuilds: 47, Refused: hostd.Refusals{CNP: 5, Ack: 6, Nak: 7, PFC: 10, NakRepeat: 48}},
	}}
	c := Host(src, "h1", "net_ring0")
	want := `
# HELP ccbed_host_info The host (always 1): its name and port device.
# TYPE ccbed_host_info gauge
ccbed_host_info{host="h1",port="net_ring0"} 1
# HELP ccbed_host_loops_responding 1 when the host's lcore loops handed their counters over for this scrape, 0 when they did not answer in time.
# TYPE ccbed_host_loops_responding gauge
ccbed_host_loops_responding 1
# HELP ccbed_host_port_rx_frames_total Frames received from the port.
# TYPE ccbed_host_port_rx_frames_total counter
ccbed_host_port_rx_frames_total{port="net_ring0"} 1
# HELP ccbed_host_port_tx_frames_total Frames the port took for transmission.
# TYPE ccbed_host_port_tx_frames_total counter
ccbed_host_port_tx_frames_total{port="net_ring0"} 2
# HELP ccbed_host_port_drops_total Frames dropped at the port adapter, by reason.
# TYPE ccbed_host_port_drops_total counter
ccbed_host_port_drops_total{port="net_ring0",reason="tx_full"} 3
ccbed_host_port_drops_total{port="net_ring0",reason="no_mbuf"} 4
ccbed_host_port_drops_total{port="net_ring0",reason="control_ring_full"} 5
# HELP ccbed_host_rx_frames_total Frames the receive side handled, by kind; they sum to every frame received.
# TYPE ccbed_host_rx_frames_total counter
ccbed_host_rx_frames_total{kind="data"} 9
ccbed_host_rx_frames_total{kind="ack"} 20
ccbed_host_rx_frames_total{kind="nak"} 21
ccbed_host_rx_frames_total{kind="cnp"} 22
ccbed_host_rx_frames_total{kind="rocc_rate"} 23
ccbed_host_rx_frames_total{kind="p4qcn"} 24
ccbed_host_rx_frames_total{kind="qcn"} 25
ccbed_host_rx_frames_total{kind="pfc"} 26
ccbed_host_rx_frames_total{kind="malformed"} 6
ccbed_host_rx_frames_total{kind="other"} 7
ccbed_host_rx_frames_total{kind="not_for_us"} 8
# HELP ccbed_host_rx_data_bytes_total Bytes of the data frames received.
# TYPE ccbed_host_rx_data_bytes_total counter
ccbed_host_rx_data_bytes_total 10
# HELP ccbed_host_rx_data_frames_total Data frames received, by result: in order, out of order (a gap), duplicate, or no room in the flow table.
# TYPE ccbed_host_rx_data_frames_total counter
ccbed_host_rx_data_frames_total{result="in_order"} 11
ccbed_host_rx_data_frames_total{result="out_of_order"} 13
ccbed_host_rx_data_frames_total{result="duplicate"} 12
ccbed_host_rx_data_frames_total{result="flow_table_full"} 15
# HELP ccbed_host_rx_flows_total Incoming flows (source, QP) the receiver started.
# TYPE ccbed_host_rx_flows_total counter
ccbed_host_rx_flows_total 14
# HELP ccbed_host_rx_flows_evicted_total Completed incoming flows evicted from the flow table to make room for new ones.
# TYPE ccbed_host_rx_flows_evicted_total counter
ccbed_host_rx_flows_evicted_total 16
# HELP ccbed_host_controls_owed_total Control frames the receiver owed its senders, by kind.
# TYPE ccbed_host_controls_owed_total counter
ccbed_host_controls_owed_total{kind="ack"} 17
ccbed_host_controls_owed_total{kind="nak"} 18
ccbed_host_controls_owed_total{kind="cnp"} 19
# HELP ccbed_host_refused_total Control frames refused under trust "topology", by kind (receive and send sides).
# TYPE ccbed_host_refused_total counter
ccbed_host_refused_total{kind="pfc"} 11
ccbed_host_refused_total{kind="cnp"} 5
ccbed_host_refused_total{kind="ack"} 6
ccbed_host_refused_total{kind="nak"} 7
ccbed_host_refused_total{kind="rocc_rate"} 2
ccbed_host_refused_total{kind="p4qcn"} 3
ccbed_host_refused_total{kind="qcn"} 4
ccbed_host_refused_total{kind="nak_repeat"} 48
# HELP ccbed_host_events_dropped_total Control events lost to a full receive-to-send event ring.
# TYPE ccbed_host_events_dropped_total counter
ccbed_host_events_dropped_total 27
# HELP ccbed_host_build_errors_total Frames that could not be built, by side.
# TYPE ccbed_host_build_errors_total counter
ccbed_host_build_errors_total{side="rx"} 28
ccbed_host_build_errors_total{side="tx"} 46
# HELP ccbed_host_tx_data_frames_total Data frames sent, retransmissions included.
# TYPE ccbed_host_tx_data_frames_total counter
ccbed_host_tx_data_frames_total 31
# HELP ccbed_host_tx_data_bytes_total Bytes of the data frames sent.
# TYPE ccbed_host_tx_data_bytes_total counter
ccbed_host_tx_data_bytes_total 32
# HELP ccbed_host_tx_payload_bytes_total Payload bytes of the data frames sent.
# TYPE ccbed_host_tx_payload_bytes_total counter
ccbed_host_tx_payload_bytes_total 33
# HELP ccbed_host_tx_retransmitted_frames_total Data frames sent again (go-back-N after a NAK or a timeout).
# TYPE ccbed_host_tx_retransmitted_frames_total counter
ccbed_host_tx_retransmitted_frames_total 34
# HELP ccbed_host_tx_nak_rewinds_total Go-back-N rewinds on a NAK.
# TYPE ccbed_host_tx_nak_rewinds_total counter
ccbed_host_tx_nak_rewinds_total 35
# HELP ccbed_host_tx_timeouts_total Retransmission timeouts.
# TYPE ccbed_host_tx_timeouts_total counter
ccbed_host_tx_timeouts_total 36
# HELP ccbed_host_tx_stale_events_total Events for a flow that had already ended.
# TYPE ccbed_host_tx_stale_events_total counter
ccbed_host_tx_stale_events_total 37
# HELP ccbed_host_tx_bad_acks_total ACKs that acknowledged nothing the sender had sent.
# TYPE ccbed_host_tx_bad_acks_total counter
ccbed_host_tx_bad_acks_total 38
# HELP ccbed_host_tx_control_frames_total Control frames (ACK, NAK, CNP) sent.
# TYPE ccbed_host_tx_control_frames_total counter
ccbed_host_tx_control_frames_total 39
# HELP ccbed_host_tx_control_bytes_total Bytes of the control frames sent.
# TYPE ccbed_host_tx_control_bytes_total counter
ccbed_host_tx_control_bytes_total 40
# HELP ccbed_host_pfc_pauses_honoured_total PFC pauses for the data priority that stopped the sender.
# TYPE ccbed_host_pfc_pauses_honoured_total counter
ccbed_host_pfc_pauses_honoured_total 41
# HELP ccbed_host_flows_started_total Sender flows started.
# TYPE ccbed_host_flows_started_total counter
ccbed_host_flows_started_total 50
# HELP ccbed_host_flows_completed_total Sender flows completed (last byte acknowledged).
# TYPE ccbed_host_flows_completed_total counter
ccbed_host_flows_completed_total 42
# HELP ccbed_host_flows_active Sender flows started and not yet completed.
# TYPE ccbed_host_flows_active gauge
ccbed_host_flows_active 8
# HELP ccbed_host_flows_pending_dropped_total Flows dropped because the queue of flows waiting for a QP was full.
# TYPE ccbed_host_flows_pending_dropped_total counter
ccbed_host_flows_pending_dropped_total 43
# HELP ccbed_host_rate_samples_dropped_total Rate samples not recorded (the sample buffer was full).
# TYPE ccbed_host_rate_samples_dropped_total counter
ccbed_host_rate_samples_dropped_total 44
# HELP ccbed_host_fcts_dropped_total Flow completion times not recorded (the FCT buffer was full).
# TYPE ccbed_host_fcts_dropped_total counter
ccbed_host_fcts_dropped_total 45
# HELP ccbed_host_rp_rebuilds_total Reaction points rebuilt (allocating) rather than copied for a new flow.
# TYPE ccbed_host_rp_rebuilds_total counter
ccbed_host_rp_rebuilds_total 47
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if src.timeout != HostProgressTimeout {
		t.Errorf("Progress asked with timeout %v, want %v", src.timeout, HostProgressTimeout)
	}
	lintClean(t, c)
	pedanticGather(t, c)
}

// TestHostCollectorLoopsSilent: loops that do not hand their counters over
// give a scrape with the host's info and loops_responding 0, no stale
// counters.
func TestHostCollectorLoopsSilent(t *testing.T) {
	c := Host(&fakeHost{ok: false, p: hostdp.Progress{Tx: hostd.TxCounters{DataFrames: 9}}}, "h2", "0000:81:00.0")
	want := `
# HELP ccbed_host_info The host (always 1): its name and port device.
# TYPE ccbed_host_info gauge
ccbed_host_info{host="h2",port="0000:81:00.0"} 1
# HELP ccbed_host_loops_responding 1 when the host's lcore loops handed their counters over for this scrape, 0 when they did not answer in time.
# TYPE ccbed_host_loops_responding gauge
ccbed_host_loops_responding 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	pedanticGather(t, c)
}
