package hostd

import (
	"os"
	"testing"

	_ "github.com/ccbed/ccbed/ccalgo/all"
	"github.com/ccbed/ccbed/wire"
)

// vnet joins two engines back to back in virtual time: every frame arrives
// delay ns after it left (no serialization on the wire: the sender's NIC pacing
// is the only rate). Hooks may change or drop frames in flight, as a switch
// would mark or lose them.
type vnet struct {
	tb    testing.TB
	eng   [2]*Engine
	now   int64
	delay int64
	q     [2][]vpkt // frames in flight to engine i
	buf   []byte
	ctls  Controls
	fr    wire.Frame
	// onFrame sees every frame from engine `from` and may change it; it
	// returns false to drop it.
	onFrame func(from int, fr *wire.Frame, b []byte) bool
	sent    [2]int // frames each engine sent
	// poll, when positive, makes the engines run only at multiples of it,
	// as a polling loop that comes late to its timers does.
	poll int64
}

type vpkt struct {
	at int64
	b  []byte
}

const (
	ipA = 0x0a000001 // 10.0.0.1
	ipB = 0x0a000002 // 10.0.0.2
)

// testConfig is the spec of host name (h1, h2, ...: its MAC ends in the
// digit) at ip.
func testConfig(name string, ip uint32, scheme string) Spec {
	return Spec{
		Name: name, IP: ip, MAC: wire.MAC{2, 0, 0, 0, 0, name[len(name)-1] - '0'}, LinkGbps: 10,
		Scheme: scheme, BaseRTTNs: 4000, MaxQPs: 16, MaxRxFlows: 64, SampleNs: 10_000,
	}
}

// mustCDF reads a CDF file of the repository (configs/workloads), or
// panics.
func mustCDF(path string) *CDF {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	c, err := ParseCDF(path, string(b))
	if err != nil {
		panic(err)
	}
	return c
}

func newVnet(tb testing.TB, a, b Spec) *vnet {
	tb.Helper()
	ea, err := NewEngine(a, 0)
	if err != nil {
		tb.Fatal(err)
	}
	eb, err := NewEngine(b, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return &vnet{tb: tb, eng: [2]*Engine{ea, eb}, delay: 2000, buf: make([]byte, 16384)}
}

func (v *vnet) send(from int, b []byte) {
	v.sent[from]++
	if v.onFrame != nil {
		if err := wire.Decode(b, &v.fr); err == nil && !v.onFrame(from, &v.fr, b) {
			return
		}
	}
	to := 1 - from
	v.q[to] = append(v.q[to], vpkt{at: v.now + v.delay, b: append([]byte(nil), b...)})
}

// inject delivers a frame to engine i now (switch-originated feedback, PFC).
func (v *vnet) inject(i int, b []byte) {
	v.q[i] = append([]vpkt{{at: v.now, b: append([]byte(nil), b...)}}, v.q[i]...)
}

// run advances virtual time to until.
func (v *vnet) run(until int64) {
	for iter := 0; v.now < until; iter++ {
		if iter > 50_000_000 {
			v.tb.Fatal("vnet: no progress")
		}
		for i := 0; i < 2; i++ {
			for len(v.q[i]) > 0 && v.q[i][0].at <= v.now {
				p := v.q[i][0]
				v.q[i] = v.q[i][1:]
				k := v.eng[i].Receive(v.now, p.b, &v.ctls)
				for j := 0; j < k; j++ {
					n := v.eng[i].BuildControl(v.buf, &v.ctls.C[j])
					if n == 0 {
						v.tb.Fatal("BuildControl failed")
					}
					v.eng[i].ChargeControl(v.now, n)
					v.send(i, v.buf[:n])
				}
			}
		}
		for i := 0; i < 2; i++ {
			v.eng[i].Service(v.now)
			for {
				n := v.eng[i].NextData(v.now, v.buf)
				if n == 0 {
					break
				}
				v.send(i, v.buf[:n])
			}
		}
		next := until
		for i := 0; i < 2; i++ {
			next = min(next, v.eng[i].NextWake(v.now))
			if len(v.q[i]) > 0 {
				next = min(next, v.q[i][0].at)
			}
		}
		if v.poll > 0 {
			next = min((next+v.poll-1)/v.poll*v.poll, until)
		}
		v.now = max(next, v.now+1)
	}
}
