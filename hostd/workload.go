package hostd

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// CDF is a flow-size distribution: points (size in bytes, cumulative
// probability), sizes and probabilities not decreasing, the last probability
// 1; in a file, one point a line, "<size in bytes> <cumulative probability>",
// as in the distributions shipped in configs/workloads/ (web search, FB
// Hadoop). The HPCC simulator's traffic generator's files, whose second column
// is a percentage ending at 100 and whose first point may carry probability 0,
// read as they are. Between points it is linear (two points of one size are a
// step: that size's own mass); below the first point every size is the first
// size (the common convention of the HPCC and RoCC traffic generators, whose
// first point carries the mass of the smallest flows).
type CDF struct {
	Size []float64
	Prob []float64
	// Name is where the points came from (ParseCDF's name: a file's path),
	// for errors and for a tool that writes the host's file again (testbed
	// nodes copies the file); "" for points made in memory.
	Name string
}

// ParseCDF reads a CDF in the "size probability" line format (or the HPCC
// simulator's "size percent"); blank lines and lines starting with # are
// skipped. name is used in errors.
func ParseCDF(name, text string) (*CDF, error) {
	c := &CDF{Name: name}
	var lines []int
	sc := bufio.NewScanner(strings.NewReader(text))
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		fs := strings.Fields(s)
		if len(fs) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"size probability\", got %q", name, line, s)
		}
		size, err1 := strconv.ParseFloat(fs[0], 64)
		p, err2 := strconv.ParseFloat(fs[1], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s:%d: bad number in %q", name, line, s)
		}
		c.Size = append(c.Size, size)
		c.Prob = append(c.Prob, p)
		lines = append(lines, line)
	}
	n := len(c.Size)
	if n == 0 {
		return nil, fmt.Errorf("%s: no points", name)
	}
	scale := 1.0
	if c.Prob[n-1] == 100 {
		scale = 100 // the HPCC simulator's percentages
	}
	for i := range c.Size {
		size, p := c.Size[i], c.Prob[i]/scale
		c.Prob[i] = p
		anchor := i == 0 && p == 0 // a first point of probability 0 only bounds the sizes
		switch {
		case math.IsNaN(size) || size < 0 || (size < 1 && !anchor) || size > MaxMessageBytes:
			return nil, fmt.Errorf("%s:%d: size %v: want 1..2^53 bytes (float64 holds integers exactly up to 2^53)", name, lines[i], size)
		case !(p > 0 && p <= 1) && !anchor:
			if scale == 1 && p > 1 && p <= 100 {
				return nil, fmt.Errorf("%s:%d: probability %v must be in (0, 1] (a percentage? then the last must be 100)", name, lines[i], p)
			}
			return nil, fmt.Errorf("%s:%d: probability %v must be in (0, %v]", name, lines[i], p*scale, scale)
		case i > 0 && (size < c.Size[i-1] || p < c.Prob[i-1] || (size == c.Size[i-1] && p == c.Prob[i-1])):
			return nil, fmt.Errorf("%s:%d: sizes and probabilities must not decrease, and a point must differ from the one before", name, lines[i])
		}
	}
	if c.Prob[n-1] != 1 {
		return nil, fmt.Errorf("%s: the last probability must be 1 (or 100)", name)
	}
	return c, nil
}

// Sample returns the flow size (bytes, >= 1) at cumulative probability u in
// [0, 1): the inverse of the piecewise-linear CDF.
func (c *CDF) Sample(u float64) int64 {
	if u <= c.Prob[0] {
		return max(int64(math.Round(c.Size[0])), 1)
	}
	// Binary search for the first point with Prob >= u.
	lo, hi := 1, len(c.Prob)-1
	for lo < hi {
		m := (lo + hi) / 2
		if c.Prob[m] >= u {
			hi = m
		} else {
			lo = m + 1
		}
	}
	p0, p1 := c.Prob[lo-1], c.Prob[lo]
	s0, s1 := c.Size[lo-1], c.Size[lo]
	s := s1
	if p1 > p0 {
		s = s0 + (s1-s0)*(u-p0)/(p1-p0)
	}
	return max(int64(math.Round(s)), 1)
}

// Mean is the mean flow size in bytes of the distribution Sample draws from.
func (c *CDF) Mean() float64 {
	m := c.Size[0] * c.Prob[0]
	for i := 1; i < len(c.Size); i++ {
		m += (c.Prob[i] - c.Prob[i-1]) * (c.Size[i] + c.Size[i-1]) / 2
	}
	return m
}

// MeanInterarrivalNs is the mean time between Poisson flow arrivals that offer
// load (a fraction of linkBps) with flows of mean size meanBytes. The offered
// load counts application bytes, as the papers' load definitions do.
func MeanInterarrivalNs(meanBytes, load, linkBps float64) float64 {
	return meanBytes * 8 * 1e9 / (load * linkBps)
}
