package all_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ccbed/ccbed/ccalgo"
)

// twinCPs returns two fresh CPs of scheme s for env.
func twinCPs(t *testing.T, s *ccalgo.Scheme, env ccalgo.Env) [2]ccalgo.CongestionPoint {
	t.Helper()
	var cps [2]ccalgo.CongestionPoint
	for i := range cps {
		cp, err := s.NewCP(s.DefaultParams(env), env)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		cps[i] = cp
	}
	return cps
}

// eachClaimant calls check with twin CPs (twinCPs) of every scheme whose CP
// makes a claim (claims reports it of the first) and returns those schemes'
// names, in ccalgo.Schemes' order.
func eachClaimant(t *testing.T, env ccalgo.Env, claims func(ccalgo.CongestionPoint) bool, check func(name string, cps [2]ccalgo.CongestionPoint)) []string {
	var names []string
	for _, s := range ccalgo.Schemes() {
		if s.NewCP == nil {
			continue
		}
		cps := twinCPs(t, &s, env)
		if !claims(cps[0]) {
			continue
		}
		names = append(names, s.Name)
		check(s.Name, cps)
	}
	return names
}

// callHook calls cp's OnEnqueue (enq) or OnDequeue.
func callHook(cp ccalgo.CongestionPoint, enq bool, now int64, pkt *ccalgo.DataPacket, port *ccalgo.PortState, out ccalgo.FeedbackSink) ccalgo.Verdict {
	if enq {
		return cp.OnEnqueue(now, pkt, port, out)
	}
	return cp.OnDequeue(now, pkt, port, out)
}

// claimPacket is packet i of the claims' tests: its size, its flow and
// whether it enters (else leaves) a queue of q bytes that swings between
// empty and top (entering mostly while up, leaving mostly while down).
func claimPacket(i int, q, top int64, up *bool) (size int, enq bool, pkt ccalgo.DataPacket) {
	size = 64 + (i*37)%1400
	switch {
	case q > top:
		*up = false
	case q < int64(size):
		*up = true
	}
	enq = *up == (i%5 != 4) || q < int64(size)
	pkt = ccalgo.DataPacket{WireBytes: size, Mark: ccalgo.Mark(i % 3), Tag: uint32(i),
		Flow: ccalgo.FlowKey{SrcIP: uint32(i % 13), DstIP: 9, SrcPort: uint16(i), DstPort: 4791, DestQP: uint32(i % 5)}}
	return size, enq, pkt
}

// TestQuietQueueHonest checks every CP that reports ccalgo.QuietQueue: a
// hook called for a packet whose queue is at most QuietBytes returns a zero
// verdict, emits nothing and leaves NextTimer, and a twin that is not called
// for such packets (as a switch skips them) gives the same verdicts on the
// others, the same timers and the same feedback.
func TestQuietQueueHonest(t *testing.T) {
	env := ccalgo.Env{LinkBps: 40e9, BaseRTT: 10_000, MTU: 1000, MaxFlows: 16, ExpectedFlows: 4, ID: 1}
	quiet := eachClaimant(t, env, func(cp ccalgo.CongestionPoint) bool {
		_, ok := cp.(ccalgo.QuietQueue)
		return ok
	}, func(name string, cps [2]ccalgo.CongestionPoint) {
		qb := cps[0].(ccalgo.QuietQueue).QuietBytes()
		if qb <= 0 {
			t.Fatalf("%s: QuietBytes %d: the test wants a queue below it", name, qb)
		}
		var logs [2]feedbackLog
		var ports [2]ccalgo.PortState
		q, up, now, skipped := int64(0), true, int64(0), 0
		for i := 0; i < 40000; i++ {
			now += int64(i%7) * 100
			size, enq, pkt := claimPacket(i, q, 3*qb, &up)
			if enq {
				q += int64(size)
			} else {
				q -= int64(size)
			}
			var v [2]ccalgo.Verdict
			for k := range cps {
				ports[k].QueueBytes, ports[k].LinkBps = q, env.LinkBps
				if q <= qb && k == 1 {
					skipped++
					continue
				}
				p, next, n := pkt, cps[k].NextTimer(), len(logs[k].fbs)
				v[k] = callHook(cps[k], enq, now, &p, &ports[k], &logs[k])
				if q <= qb && (v[k] != ccalgo.Verdict{} || cps[k].NextTimer() != next || len(logs[k].fbs) != n) {
					t.Fatalf("%s: packet %d, queue %d <= %d: verdict %+v, timer %d -> %d, %d messages",
						name, i, q, qb, v[k], next, cps[k].NextTimer(), len(logs[k].fbs)-n)
				}
			}
			if i%50 == 0 {
				for k := range cps {
					cps[k].OnTimer(now, &ports[k], &logs[k])
				}
			}
			if v[0] != v[1] || cps[0].NextTimer() != cps[1].NextTimer() || !reflect.DeepEqual(logs[0], logs[1]) {
				t.Fatalf("%s: packet %d (queue %d): verdicts %+v / %+v differ with and without the quiet calls", name, i, q, v[0], v[1])
			}
		}
		if skipped < 1000 || skipped > 39000 {
			t.Errorf("%s: %d of 40000 packets found a quiet queue: the test does not cover both sides", name, skipped)
		}
	})
	if want := []string{"dcqcn"}; strings.Join(quiet, ",") != strings.Join(want, ",") {
		t.Errorf("quiet-queue CPs: %v, want %v", quiet, want)
	}
}

// TestINTOnlyHonest checks every CP that reports ccalgo.INTOnly: OnEnqueue
// returns a zero verdict and OnDequeue asks for an INT record and nothing
// else, neither emits, and a twin never called per packet (as a switch that
// stamps every packet itself) keeps the same timers and feedback.
func TestINTOnlyHonest(t *testing.T) {
	env := ccalgo.Env{LinkBps: 100e9, BaseRTT: 10_000, MTU: 1000, MaxFlows: 16, ExpectedFlows: 4, ID: 1}
	only := eachClaimant(t, env, func(cp ccalgo.CongestionPoint) bool {
		io, ok := cp.(ccalgo.INTOnly)
		return ok && io.INTOnly()
	}, func(name string, cps [2]ccalgo.CongestionPoint) {
		var logs [2]feedbackLog
		var ports [2]ccalgo.PortState
		q, up, now := int64(0), true, int64(0)
		for i := 0; i < 20000; i++ {
			now += int64(i%7) * 100
			size, enq, pkt := claimPacket(i, q, 200_000, &up)
			var v, want ccalgo.Verdict
			if enq {
				q += int64(size)
				ports[0].QueueBytes = q
				v = cps[0].OnEnqueue(now, &pkt, &ports[0], &logs[0])
			} else {
				q -= int64(size)
				ports[0].QueueBytes = q
				v, want = cps[0].OnDequeue(now, &pkt, &ports[0], &logs[0]), ccalgo.Verdict{StampINT: true}
			}
			ports[1].QueueBytes = q
			if !enq {
				ports[0].TxBytes += uint64(size)
				ports[1].TxBytes += uint64(size)
			}
			if v != want {
				t.Fatalf("%s: packet %d: verdict %+v, want %+v", name, i, v, want)
			}
			if i%50 == 0 {
				for k := range cps {
					cps[k].OnTimer(now, &ports[k], &logs[k])
				}
			}
			if cps[0].NextTimer() != cps[1].NextTimer() || !reflect.DeepEqual(logs[0], logs[1]) {
				t.Fatalf("%s: packet %d: timers or feedback differ with and without the per-packet calls", name, i)
			}
		}
	})
	if want := []string{"hpcc"}; strings.Join(only, ",") != strings.Join(want, ",") {
		t.Errorf("INT-only CPs: %v, want %v", only, want)
	}
}
