package report

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/ccbed/ccbed/internal/idmap"
)

// row is one sample of a series: one row of queue.csv, rate.csv or
// fairrate.csv.
type row struct {
	t   float64 // us
	id  int     // port or flow
	seq uint64  // arrival order: orders rows of one time and id
	v   float64 // queue bytes, goodput or fair rate
	rp  float64 // rate rows: the sender's rate (Gb/s), NaN when unknown
	win float64 // rate rows: the window (bytes), NaN when none
}

// table is one CSV file of series (queue.csv, rate.csv, fairrate.csv): the
// rows added and not yet written, the file they go to, and the online
// statistics of the rows written. Rows are written in time order, ties by
// id, then by arrival: a row is written once Advance has passed its time, so
// the rows held are those of the last drain period, never the run's
// history.
type table struct {
	name, header string
	values       func([]byte, *row) []byte
	// byPrio: the row's id is port*8 + priority, written as two columns,
	// "port,priority" (queue_prio.csv, pfc.csv).
	byPrio   bool
	pending  []row
	seq      uint64
	cmpRows  func(a, b row) int // made once: sorting allocates nothing
	compares int                // comparisons made sorting (a measure of the writer's cost)
	stats    seriesStats
	f        *os.File
	w        *bufio.Writer
	buf      []byte
	written  int // rows written
}

func newTable(name, header string, values func([]byte, *row) []byte, counts bool) *table {
	tb := &table{name: name, header: header, values: values}
	tb.stats.counts = counts
	tb.cmpRows = func(a, b row) int {
		tb.compares++
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		if c := cmp.Compare(a.id, b.id); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	}
	return tb
}

// add holds r until it is written.
func (tb *table) add(r row) {
	r.seq = tb.seq
	tb.seq++
	tb.pending = append(tb.pending, r)
}

// rows is the number of rows added (written or held).
func (tb *table) rows() int { return tb.written + len(tb.pending) }

// sorted returns the held rows in the order they are written: in place.
func (tb *table) sorted() []row {
	slices.SortFunc(tb.pending, tb.cmpRows)
	return tb.pending
}

// open creates the table's file in dir and writes its header.
func (tb *table) open(dir string) error {
	f, err := os.Create(filepath.Join(dir, tb.name))
	if err != nil {
		return err
	}
	tb.f = f
	tb.w = bufio.NewWriterSize(f, 64<<10)
	tb.w.WriteString(tb.header)
	tb.w.WriteByte('\n')
	return nil
}

// emit writes the held rows earlier than untilUs, in order, into the file
// (opened in dir first when it is not: fairrate.csv exists only when a row
// does) and into the statistics, and keeps the rest.
func (tb *table) emit(dir string, untilUs float64) error {
	if len(tb.pending) == 0 {
		return nil
	}
	rs := tb.sorted()
	k := 0
	for k < len(rs) && rs[k].t < untilUs {
		k++
	}
	if k == 0 {
		return nil
	}
	if tb.w == nil {
		if err := tb.open(dir); err != nil {
			return err
		}
	}
	for i := range rs[:k] {
		r := &rs[i]
		tb.buf = tb.appendRow(tb.buf[:0], r)
		tb.w.Write(tb.buf)
		tb.stats.add(r, true)
	}
	tb.written += k
	tb.pending = tb.pending[:copy(tb.pending, rs[k:])]
	return nil
}

// appendRow appends r as a CSV line of tb: t, id (port and priority when
// byPrio), then its values.
func (tb *table) appendRow(b []byte, r *row) []byte {
	b = appendFloat(b, r.t)
	b = append(b, ',')
	if tb.byPrio {
		b = strconv.AppendInt(b, int64(r.id>>3), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.id&7), 10)
	} else {
		b = strconv.AppendInt(b, int64(r.id), 10)
	}
	b = append(b, ',')
	b = tb.values(b, r)
	return append(b, '\n')
}

// close flushes and closes the table's file, if open.
func (tb *table) close() error {
	if tb.w == nil {
		return nil
	}
	err := tb.w.Flush()
	if cerr := tb.f.Close(); err == nil {
		err = cerr
	}
	tb.w, tb.f = nil, nil
	return err
}

// flush pushes what is buffered to the file, so that a run killed later
// leaves the rows written so far.
func (tb *table) flush() error {
	if tb.w == nil {
		return nil
	}
	return tb.w.Flush()
}

// seriesStat is one series' online statistics: what summary.json says of
// it, computed from its rows in the order they are written (so sums are
// the same floating-point numbers as a sum over the whole series).
type seriesStat struct {
	id        int
	n         int
	sum       float64
	steadyN   int
	steadySum float64
	// rateN and rateSum are the steady half's sender rates (rate rows that
	// have one).
	rateN   int
	rateSum float64
	// counts is the number of samples of each value (queue bytes, integers
	// bounded by the buffer): the exact percentile of any rank, in memory
	// bounded by the buffer's size, not by the run's length.
	counts  map[int64]uint64
	nonzero bool
	plot    *decimator // nil when the plots leave the series out (plotSample)
}

// seriesStats is the statistics of every series of a table, and the plot's
// bounded copy of them.
type seriesStats struct {
	halfUs float64               // the steady half starts here
	counts bool                  // keep counts per value (queue bytes)
	idx    idmap.Map[int, int32] // series id -> place in list
	list   []seriesStat
	lastUs float64 // the latest row's time (0 before any)
	plots  plotSample
}

// reset forgets every series, for statistics from halfUs.
func (st *seriesStats) reset(halfUs float64) {
	*st = seriesStats{halfUs: halfUs, counts: st.counts}
}

// get returns series id's statistics, nil when it has no rows.
func (st *seriesStats) get(id int) *seriesStat {
	if i := st.idx.Ref(id); i != nil {
		return &st.list[*i]
	}
	return nil
}

// add counts r; with plot, into the plot's copy too.
func (st *seriesStats) add(r *row, plot bool) {
	slot := st.idx.Ref(r.id)
	if slot == nil {
		slot = st.idx.Slot(r.id)
		*slot = int32(len(st.list))
		s := seriesStat{id: r.id}
		if st.counts {
			s.counts = make(map[int64]uint64)
		}
		st.list = append(st.list, s)
		if plot {
			st.plots.admit(st.list, int(*slot))
		}
	}
	s := &st.list[*slot]
	s.n++
	s.sum += r.v
	if r.t >= st.halfUs {
		s.steadyN++
		s.steadySum += r.v
		if !math.IsNaN(r.rp) {
			s.rateN++
			s.rateSum += r.rp
		}
	}
	if s.counts != nil {
		s.counts[int64(r.v)]++
	}
	if r.v != 0 {
		s.nonzero = true
	}
	if r.t > st.lastUs {
		st.lastUs = r.t
	}
	if plot && s.plot != nil {
		s.plot.add(r.t, r.v)
	}
}

// ids returns the series' ids in increasing order.
func (st *seriesStats) ids() []int {
	return st.idx.IDs(make([]int, 0, len(st.list))) // the index keeps them in order
}

// nearestRank is the 1-based rank of the p-th percentile (nearest rank) of n
// samples.
func nearestRank(p float64, n int) int {
	if !(p > 0) {
		return 1
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	return min(max(rank, 1), n)
}

// percentileCounts is the p-th percentile (nearest rank) of the samples
// counted in counts, n in all (n > 0).
func percentileCounts(counts map[int64]uint64, n int, p float64) float64 {
	keys := make([]int64, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	rank := uint64(nearestRank(p, n))
	var seen uint64
	for _, k := range keys {
		if seen += counts[k]; seen >= rank {
			return float64(k)
		}
	}
	return float64(keys[len(keys)-1])
}

// fctStats is the online statistics of the FCT records: the mean FCT per
// flow id and the slowdowns and FCTs of each size bucket (16 bytes a
// completed flow, for exact percentiles).
type fctStats struct {
	perDecade int
	n         int
	perFlow   idmap.Map[int, fctMean]
	buckets   []fctValues // by bucket index + 1; 0 is [0, 1)
	worst     []WorstFlow // the MaxWorstFlows largest slowdowns, worst first
	// classes are the buckets of each priority's records, as buckets.
	classes [8][]fctValues
}

// fctMean is a sum and a count of FCTs.
type fctMean struct {
	sum float64
	n   int
}

// fctValues are the slowdowns and FCTs of one size bucket.
type fctValues struct {
	slow, fct []float64
}

// add counts rec.
func (fs *fctStats) add(rec *FCTRecord) {
	if fs.perDecade < 1 {
		fs.perDecade = DefaultBucketsPerDecade
	}
	fs.n++
	m := fs.perFlow.Slot(rec.Flow)
	m.sum += rec.FCTUs
	m.n++
	b := 0
	if rec.SizeBytes >= 1 {
		b = bucketOf(rec.SizeBytes, fs.perDecade) + 1
	}
	fs.buckets = addToBucket(fs.buckets, b, rec)
	if rec.HasPriority && rec.Priority >= 0 && rec.Priority < len(fs.classes) {
		fs.classes[rec.Priority] = addToBucket(fs.classes[rec.Priority], b, rec)
	}
	fs.keepWorst(rec)
}

// addToBucket adds rec's slowdown and FCT to bucket b of buckets.
func addToBucket(buckets []fctValues, b int, rec *FCTRecord) []fctValues {
	for len(buckets) <= b {
		buckets = append(buckets, fctValues{})
	}
	buckets[b].slow = append(buckets[b].slow, rec.Slowdown)
	buckets[b].fct = append(buckets[b].fct, rec.FCTUs)
	return buckets
}

// keepWorst puts rec among the worst flows when its slowdown is one of the
// MaxWorstFlows largest so far (ties: the record that came first stays
// ahead, so the list depends only on the records' order).
func (fs *fctStats) keepWorst(rec *FCTRecord) {
	if !finite(rec.Slowdown) {
		return
	}
	n := len(fs.worst)
	if n == MaxWorstFlows && rec.Slowdown <= fs.worst[n-1].Slowdown {
		return
	}
	i := n
	for i > 0 && rec.Slowdown > fs.worst[i-1].Slowdown {
		i--
	}
	w := WorstFlow{ID: rec.Flow, Src: rec.Src, Dst: rec.Dst, SizeBytes: rec.SizeBytes,
		FCTUs: rec.FCTUs, Slowdown: rec.Slowdown}
	if finite(rec.StartUs) {
		w.StartUs = Some(rec.StartUs)
	}
	if n < MaxWorstFlows {
		fs.worst = append(fs.worst, WorstFlow{})
	}
	copy(fs.worst[i+1:], fs.worst[i:])
	fs.worst[i] = w
}

// summary returns the non-empty buckets in increasing size with the median
// and 99th percentile (nearest rank) of slowdown and FCT.
func (fs *fctStats) summary() []FCTBucket { return bucketSummary(fs.buckets, fs.perDecade) }

// classSummary is summary per priority, in increasing priority, when the
// records with a priority have more than one; nil otherwise.
func (fs *fctStats) classSummary() []ClassFCTBuckets {
	var out []ClassFCTBuckets
	for p, b := range fs.classes {
		if len(b) > 0 {
			out = append(out, ClassFCTBuckets{Priority: p, Buckets: bucketSummary(b, fs.perDecade)})
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// bucketSummary is summary's for buckets.
func bucketSummary(buckets []fctValues, perDecade int) []FCTBucket {
	var out []FCTBucket
	for b := range buckets {
		v := &buckets[b]
		if len(v.slow) == 0 {
			continue
		}
		slow := slices.Clone(v.slow)
		fct := slices.Clone(v.fct)
		slices.Sort(slow)
		slices.Sort(fct)
		var lo, hi int64 = 0, 1
		if b > 0 {
			lo, hi = bucketEdge(b-1, perDecade), bucketEdge(b, perDecade)
		}
		out = append(out, FCTBucket{
			LoBytes:        lo,
			HiBytes:        hi,
			Count:          len(slow),
			MedianSlowdown: PercentileSorted(slow, 50),
			P99Slowdown:    PercentileSorted(slow, 99),
			MedianFCTUs:    PercentileSorted(fct, 50),
			P99FCTUs:       PercentileSorted(fct, 99),
		})
	}
	return out
}

// fctTable is fct.csv: records are written as they are added, grouped by
// their source (the host that completed them) in increasing order, each
// source's in the order added. Source 0's go straight into fct.csv; the
// others' into a spill file each (.fct-<source>.part beside it), appended
// to fct.csv when the run ends: the file's order without holding its rows.
type fctTable struct {
	pending []sourcedFCT
	stats   fctStats
	f       *os.File
	w       *bufio.Writer
	buf     []byte
	spills  []bool // sources with a spill file
	written int
}

// sourcedFCT is an FCT record and its source.
type sourcedFCT struct {
	source int
	rec    FCTRecord
}

// spillName is the spill file of source's records.
func spillName(source int) string { return ".fct-" + strconv.Itoa(source) + ".part" }

// appendFCT appends rec as a line of fct.csv.
func appendFCT(buf []byte, rec *FCTRecord) []byte {
	buf = strconv.AppendInt(buf, int64(rec.Flow), 10)
	buf = append(buf, ',')
	buf = append(buf, rec.Src...)
	buf = append(buf, ',')
	buf = append(buf, rec.Dst...)
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, rec.SizeBytes, 10)
	buf = append(buf, ',')
	buf = appendOpt(buf, rec.StartUs)
	buf = append(buf, ',')
	buf = appendFloat(buf, rec.FCTUs)
	buf = append(buf, ',')
	buf = appendFloat(buf, rec.Slowdown)
	buf = append(buf, ',')
	if rec.HasPriority {
		buf = strconv.AppendInt(buf, int64(rec.Priority), 10)
	}
	return append(buf, '\n')
}

// open creates fct.csv in dir and writes its header.
func (ft *fctTable) open(dir string) error {
	f, err := os.Create(filepath.Join(dir, FCTCSVFile))
	if err != nil {
		return err
	}
	ft.f = f
	ft.w = bufio.NewWriterSize(f, 64<<10)
	ft.w.WriteString(FCTCSVHeader)
	ft.w.WriteByte('\n')
	return nil
}

// emit writes every held record: source 0's into fct.csv, each other
// source's appended to its spill file in dir.
func (ft *fctTable) emit(dir string) error {
	if len(ft.pending) == 0 {
		return nil
	}
	ft.sortedPending()
	for i := 0; i < len(ft.pending); {
		src := ft.pending[i].source
		j := i
		ft.buf = ft.buf[:0]
		for ; j < len(ft.pending) && ft.pending[j].source == src; j++ {
			rec := &ft.pending[j].rec
			ft.stats.add(rec)
			if src == 0 {
				ft.buf = appendFCT(ft.buf[:0], rec)
				ft.w.Write(ft.buf)
			} else {
				ft.buf = appendFCT(ft.buf, rec)
			}
		}
		if src != 0 {
			if err := ft.spill(dir, src, ft.buf); err != nil {
				return err
			}
		}
		ft.written += j - i
		i = j
	}
	clear(ft.pending) // drop the strings
	ft.pending = ft.pending[:0]
	return nil
}

// spill appends b to source's spill file in dir.
func (ft *fctTable) spill(dir string, source int, b []byte) error {
	f, err := os.OpenFile(filepath.Join(dir, spillName(source)), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	for len(ft.spills) <= source {
		ft.spills = append(ft.spills, false)
	}
	ft.spills[source] = true
	return err
}

// close appends the spill files to fct.csv in source order, removes them,
// and closes fct.csv.
func (ft *fctTable) close(dir string) error {
	if ft.w == nil {
		return nil
	}
	var err error
	for src, ok := range ft.spills {
		if !ok || err != nil {
			continue
		}
		path := filepath.Join(dir, spillName(src))
		var f *os.File
		if f, err = os.Open(path); err != nil {
			break
		}
		_, err = ft.w.ReadFrom(f)
		f.Close()
		if err == nil {
			err = os.Remove(path)
		}
	}
	ft.spills = nil
	if ferr := ft.w.Flush(); err == nil {
		err = ferr
	}
	if cerr := ft.f.Close(); err == nil {
		err = cerr
	}
	ft.w, ft.f = nil, nil
	if err != nil {
		return fmt.Errorf("report: %s: %w", FCTCSVFile, err)
	}
	return nil
}

// restart forgets the statistics of every series, keeping the series and
// their plot copies, for statistics from halfUs.
func (st *seriesStats) restart(halfUs float64) {
	st.halfUs, st.lastUs = halfUs, 0
	for i := range st.list {
		s := &st.list[i]
		*s = seriesStat{id: s.id, counts: s.counts, nonzero: s.nonzero, plot: s.plot}
		clear(s.counts)
	}
}

// replay computes the statistics again, for the steady half from halfUs,
// from the rows written to the table's file in dir.
func (tb *table) replay(dir string, halfUs float64) error {
	tb.stats.restart(halfUs)
	if tb.written == 0 {
		return nil
	}
	path := filepath.Join(dir, tb.name)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sc.Scan() // the header
	line := 1
	for sc.Scan() {
		line++
		r, err := parseRow(sc.Bytes(), tb.byPrio)
		if err != nil {
			return fmt.Errorf("report: %s:%d: %w", path, line, err)
		}
		tb.stats.add(&r, false)
	}
	return sc.Err()
}

// parseRow reads a line of queue.csv, rate.csv, fairrate.csv or (byPrio)
// queue_prio.csv: the values written are the shortest that read back
// exactly, so the row is the one written.
func parseRow(b []byte, byPrio bool) (row, error) {
	r := row{rp: math.NaN(), win: math.NaN()}
	for k := 0; ; k++ {
		f := b
		i := bytes.IndexByte(b, ',')
		if i >= 0 {
			f, b = b[:i], b[i+1:]
		}
		var err error
		if byPrio && k == 2 { // the priority: the id is port*8 + priority
			var p int
			if p, err = strconv.Atoi(string(f)); err == nil && (p < 0 || p > 7) {
				err = fmt.Errorf("priority %d", p)
			}
			r.id = r.id<<3 | p
			if err != nil {
				return r, err
			}
			k-- // the values follow as in queue.csv
			byPrio = false
			continue
		}
		switch k {
		case 0:
			r.t, err = strconv.ParseFloat(string(f), 64)
		case 1:
			r.id, err = strconv.Atoi(string(f))
		case 2:
			r.v, err = strconv.ParseFloat(string(f), 64)
		case 3:
			if len(f) > 0 {
				r.rp, err = strconv.ParseFloat(string(f), 64)
			}
		case 4:
			if len(f) > 0 {
				r.win, err = strconv.ParseFloat(string(f), 64)
			}
		}
		if err != nil {
			return r, err
		}
		if i < 0 {
			if k < 2 {
				return r, fmt.Errorf("%d columns", k+1)
			}
			return r, nil
		}
	}
}

// sortedPending returns the held records in fct.csv's order: by source,
// each source's in the order added.
func (ft *fctTable) sortedPending() []sourcedFCT {
	slices.SortStableFunc(ft.pending, func(a, b sourcedFCT) int { return cmp.Compare(a.source, b.source) })
	return ft.pending
}
