package switchd

import "testing"

// TestDrainTelemetry: DrainSamples and DrainPFCEvents hand over what every
// tx shard's ring holds, oldest first, once, and allocate nothing.
func TestDrainTelemetry(t *testing.T) {
	c := testSpec(4, 10)
	e, err := New(&c)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ShardTx([][]int{{0, 1}, {2, 3}}); err != nil {
		t.Fatal(err)
	}
	for k := range e.tx {
		for i := 0; i < 3; i++ {
			e.tx[k].samples.push(&Sample{TNs: int64(10*k + i), Port: 2 * k})
			e.tx[k].pfcEvents.push(&PFCEvent{TNs: int64(10*k + i), Port: int32(2 * k), XOFF: i%2 == 0})
		}
	}
	var samples, events []int64
	if n := e.DrainSamples(func(s *Sample) { samples = append(samples, s.TNs) }); n != 6 {
		t.Errorf("DrainSamples: %d, want 6", n)
	}
	if n := e.DrainPFCEvents(func(ev *PFCEvent) { events = append(events, ev.TNs) }); n != 6 {
		t.Errorf("DrainPFCEvents: %d, want 6", n)
	}
	want := []int64{0, 1, 2, 10, 11, 12}
	for i := range want {
		if i >= len(samples) || i >= len(events) || samples[i] != want[i] || events[i] != want[i] {
			t.Fatalf("samples %v, events %v: want %v each (shard by shard, oldest first)", samples, events, want)
		}
	}
	if e.DrainSamples(func(*Sample) {}) != 0 || e.DrainPFCEvents(func(*PFCEvent) {}) != 0 {
		t.Error("a second drain found records again")
	}
	var nS, nE int
	onS, onE := func(*Sample) { nS++ }, func(*PFCEvent) { nE++ }
	if a := testing.AllocsPerRun(100, func() {
		for k := range e.tx {
			e.tx[k].samples.push(&Sample{})
			e.tx[k].pfcEvents.push(&PFCEvent{})
		}
		e.DrainSamples(onS)
		e.DrainPFCEvents(onE)
	}); a != 0 || nS != 2*101 || nE != 2*101 {
		t.Errorf("%v allocations per drain, %d samples and %d events drained; want 0, %d and %d", a, nS, nE, 2*101, 2*101)
	}
}
