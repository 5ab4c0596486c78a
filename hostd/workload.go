package hostd

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ccbed/ccbed/config"
)

// CDF is a flow-size distribution: points (size in bytes, cumulative
// probability), sizes and probabilities increasing, the last probability 1; in
// a file, one point a line, "<size in bytes> <cumulative probability>", as in
// the distributions shipped in configs/workloads/ (web search, FB Hadoop).
// Between points it is linear; below the first point every size is the first
// size (the common convention of the HPCC and RoCC traffic generators, whose
// first point carries the mass of the smallest flows).
type CDF struct {
	Size []float64
	Prob []float64
}

// ParseCDF reads a CDF in the "size probability" line format; blank lines and
// lines starting with # are skipped. name is used in errors.
func ParseCDF(name, text string) (*CDF, error) {
	c := &CDF{}
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
		n := len(c.Size)
		switch {
		case !(size >= 1) || size > MaxMessageBytes:
			return nil, fmt.Errorf("%s:%d: size %v: want 1..2^53 bytes (float64 holds integers exactly up to 2^53)", name, line, size)
		case !(p > 0 && p <= 1):
			return nil, fmt.Errorf("%s:%d: probability %v must be in (0, 1]", name, line, p)
		case n > 0 && (size <= c.Size[n-1] || p < c.Prob[n-1]):
			return nil, fmt.Errorf("%s:%d: sizes must increase and probabilities not decrease", name, line)
		}
		c.Size = append(c.Size, size)
		c.Prob = append(c.Prob, p)
	}
	if len(c.Size) == 0 {
		return nil, fmt.Errorf("%s: no points", name)
	}
	if c.Prob[len(c.Prob)-1] != 1 {
		return nil, fmt.Errorf("%s: the last probability must be 1", name)
	}
	return c, nil
}

// LoadCDF reads a CDF file: a regular file of at most config.MaxCDFBytes
// (not a device or a pipe, which could block or never end; config.ReadFile).
func LoadCDF(path string) (*CDF, error) {
	b, err := config.ReadFile(path, config.MaxCDFBytes)
	if err != nil {
		return nil, err
	}
	return ParseCDF(path, string(b))
}

// Sample returns the flow size (bytes, >= 1) at cumulative probability u in
// [0, 1): the inverse of the piecewise-linear CDF.
func (c *CDF) Sample(u float64) int64 {
	if u <= c.Prob[0] {
		return int64(math.Round(c.Size[0]))
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
