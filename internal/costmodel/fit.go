package costmodel

import "fmt"

// bisect is the x in [lo, hi] at which rate(x), falling as x grows, equals
// target; an error when target is outside [rate(hi), rate(lo)].
func bisect(rate func(float64) (float64, error), target, lo, hi float64, what string) (float64, error) {
	rlo, err := rate(lo)
	if err != nil {
		return 0, err
	}
	if rlo < target {
		return 0, fmt.Errorf("costmodel: %s: %.2f Mpps at %v, below the %.2f to fit", what, rlo, lo, target)
	}
	rhi, err := rate(hi)
	if err != nil {
		return 0, err
	}
	if rhi > target {
		return 0, fmt.Errorf("costmodel: %s: %.2f Mpps at %v, above the %.2f to fit", what, rhi, hi, target)
	}
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		r, err := rate(mid)
		if err != nil {
			return 0, err
		}
		if r > target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2, nil
}

// FitContention is the Contention (0 to 1 per lcore) at which m's Saturated
// rate for ports ports on l equals mpps; an error when even no contention
// gives less than mpps (the costs alone are too high) or a rise of 1 per
// lcore still gives more.
func FitContention(m Model, ports int, l Lcores, mpps float64) (float64, error) {
	return bisect(func(c float64) (float64, error) {
		m.Contention = c
		return m.Saturated(ports, l)
	}, mpps, 0, 1, fmt.Sprintf("contention on %v, %d ports", l, ports))
}

// FitHandoff is the factor (0 to 100) by which ms's hand-off costs, both
// sides alike, must be multiplied for m (ms's model with burst, scale and
// contention as in like) to forward mpps on l with ports ports: the
// hand-off a machine's own sharded point implies, where it cannot be
// carried over from another machine (it is mostly cache lines crossing
// between cores, which single-lcore speed does not tell).
func FitHandoff(ms Measured, like Model, ports int, l Lcores, mpps float64) (float64, error) {
	if ms.HandoffRx+ms.HandoffTx == 0 {
		return 0, fmt.Errorf("costmodel: no hand-off to fit (calibrate it first)")
	}
	return bisect(func(f float64) (float64, error) {
		x := ms
		x.HandoffRx, x.HandoffTx = ms.HandoffRx*f, ms.HandoffTx*f
		m := x.Model(like.Burst)
		m.Scale, m.Contention, m.BaseLcores = like.Scale, like.Contention, like.BaseLcores
		return m.Saturated(ports, l)
	}, mpps, 0, 100, fmt.Sprintf("hand-off on %v, %d ports", l, ports))
}
