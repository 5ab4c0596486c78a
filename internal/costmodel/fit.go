package costmodel

import "fmt"

// FitContention is the Contention (0 to 1 per lcore) at which m's Saturated
// rate for ports ports on l equals mpps, by bisection; an error when even
// no contention gives less than mpps (the costs alone are too high) or a
// rise of 1 per lcore still gives more.
func FitContention(m Model, ports int, l Lcores, mpps float64) (float64, error) {
	rate := func(c float64) (float64, error) {
		m.Contention = c
		return m.Saturated(ports, l)
	}
	lo, hi := 0.0, 1.0
	r0, err := rate(lo)
	if err != nil {
		return 0, err
	}
	if r0 < mpps {
		return 0, fmt.Errorf("costmodel: %v on %d ports: %.2f Mpps with no contention, below the %.2f to fit", l, ports, r0, mpps)
	}
	if r1, _ := rate(hi); r1 > mpps {
		return 0, fmt.Errorf("costmodel: %v on %d ports: %.2f Mpps with contention 1, above the %.2f to fit", l, ports, r1, mpps)
	}
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		r, _ := rate(mid)
		if r > mpps {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2, nil
}
