package dataplane

import (
	"github.com/ccbed/ccbed/dpdk"
	"github.com/ccbed/ccbed/switchd"
)

// PollRx is the pipeline's rx lcore: one burst from each port into its ring.
func (s *Switch) PollRx(now int64) int {
	work := 0
	if s.mrx != nil {
		s.mrx.RxBurst()
	}
	for i, p := range s.ports {
		var pkts []*dpdk.Mbuf
		if s.mrx != nil {
			pkts = s.mrx.Segment(i)[:s.mrx.Count[i]]
		} else {
			pkts = s.rxb.in.Pkts[:p.RxBurst(s.rxb.in.Pkts)]
		}
		n := len(pkts)
		if n == 0 {
			continue
		}
		k := s.inRing[i].EnqueueBurst(pkts)
		if k < n {
			dpdk.FreeBulk(pkts[k:n])
			s.stats.ringDrops.Add(uint64(n - k))
		}
		work += n
	}
	return work
}

// PollShard is rx lcore k of the sharded mode: receive on its ports, classify
// and route each frame, carry its Meta in the mbuf's tailroom, and pass the
// frames to the tx+CC lcores of their egress ports.
func (s *Switch) PollShard(k int, now int64) int {
	sh := s.shards[k]
	work := 0
	if sh.mrx != nil {
		sh.mrx.RxBurst()
		for j, i := range sh.ports {
			base, n := j*sh.mrx.Per, int(sh.mrx.Count[j])
			for x, m := range sh.mrx.Pkts[base : base+n] {
				s.shardClassify(sh, i, m, sh.mrx.Frame(base+x))
			}
			work += n
		}
	} else {
		for _, i := range sh.ports {
			pkts := sh.b.in.Pkts[:s.ports[i].RxBurst(sh.b.in.Pkts)]
			for _, m := range pkts {
				s.shardClassify(sh, i, m, m.Data())
			}
			work += len(pkts)
		}
	}
	for t := range sh.rings {
		s.flushShard(sh, t)
	}
	sh.b.flush()
	sh.ing.Service(now)
	return work
}

// shardClassify classifies frame f (mbuf m) received on port in and stages it
// for the ring to its egress port's tx lcore, or frees it.
func (s *Switch) shardClassify(sh *rxShard, in int, m *dpdk.Mbuf, f []byte) {
	if !s.eng.Classify(in, f, &sh.meta) {
		sh.b.freeLater(m)
		return
	}
	room := m.Room()
	if len(room) < len(f)+switchd.MetaLen {
		s.stats.noRoom.Add(1)
		sh.b.freeLater(m)
		return
	}
	sh.meta.Put(room[len(f):])
	t := int(s.txOf[sh.meta.Out])
	if sh.nstage[t] == len(sh.stage[t].Pkts) {
		s.flushShard(sh, t)
	}
	sh.stage[t].Pkts[sh.nstage[t]] = m
	sh.nstage[t]++
}

// flushShard passes rx shard sh's frames staged for tx lcore t to its ring.
func (s *Switch) flushShard(sh *rxShard, t int) {
	s.toRing(sh.rings[t], sh.stage[t].Pkts, &sh.nstage[t])
}

// toRing moves the first *n of pkts into r, frees and counts what does not
// fit, and empties the stage.
func (s *Switch) toRing(r *dpdk.Ring, pkts []*dpdk.Mbuf, n *int) {
	if *n == 0 {
		return
	}
	k := r.EnqueueBurst(pkts[:*n])
	if k < *n {
		dpdk.FreeBulk(pkts[k:*n])
		s.stats.ringDrops.Add(uint64(*n - k))
	}
	*n = 0
}

// PollSwitch is the pipeline's switching lcore: classify and route each frame,
// carry its Meta in the mbuf's tailroom, and pass it to its egress ring.
func (s *Switch) PollSwitch(now int64) int {
	b := &s.swb
	work := 0
	for i, r := range s.inRing {
		n := r.DequeueBurst(b.in.Pkts)
		for _, m := range b.in.Pkts[:n] {
			f := m.Data()
			if !s.eng.Classify(i, f, &s.swMeta) {
				b.freeLater(m)
				continue
			}
			room := m.Room()
			if len(room) < len(f)+switchd.MetaLen {
				s.stats.noRoom.Add(1)
				b.freeLater(m)
				continue
			}
			s.swMeta.Put(room[len(f):])
			o := int(s.swMeta.Out)
			if s.nstage[o] == len(s.stage[o].Pkts) {
				s.flushStage(o)
			}
			s.stage[o].Pkts[s.nstage[o]] = m
			s.nstage[o]++
		}
		work += n
	}
	for o := range s.stage {
		s.flushStage(o)
	}
	b.flush()
	s.eng.ServiceIngress(now)
	return work
}

func (s *Switch) flushStage(o int) { s.toRing(s.egRing[o], s.stage[o].Pkts, &s.nstage[o]) }
