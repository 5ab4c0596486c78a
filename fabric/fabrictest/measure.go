package fabrictest

import (
	"fmt"

	"github.com/ccbed/ccbed/fabric"
	"github.com/ccbed/ccbed/hostd"
)

// WireOverhead is what a frame takes on the wire beyond its own bytes:
// preamble and delimiter 8, FCS 4, inter-frame gap 12.
const WireOverhead = 24

// PayloadGoodput is the payload goodput of a link of bps that carries only
// full data frames as the hosts build them, mtu bytes of payload each:
// bps x mtu / (mtu + hostd.DataOverhead + WireOverhead).
func PayloadGoodput(bps float64, mtu int) float64 {
	return FrameGoodput(bps, mtu, hostd.DataOverhead)
}

// FrameGoodput is the payload goodput of a link of bps that carries only
// frames of mtu bytes of payload and headerBytes of headers each:
// bps x mtu / (mtu + headerBytes + WireOverhead).
func FrameGoodput(bps float64, mtu, headerBytes int) float64 {
	return bps * float64(mtu) / float64(mtu+headerBytes+WireOverhead)
}

// Goodputs returns each flow's goodput over (from, to] (fabric.Result.Goodput),
// in the order of flows.
func Goodputs(r *fabric.Result, flows []fabric.Flow, from, to int64) []float64 {
	g := make([]float64, len(flows))
	for i, f := range flows {
		g[i] = r.Goodput(int64(f.ID), from, to)
	}
	return g
}

// Sum adds x up in order.
func Sum(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

// Gbps formats bit rates as Gb/s with two decimals: [9.17 4.59].
func Gbps(x []float64) string { return Scaled(x, 1e9, 2) }

// Scaled formats each x[i] / unit with prec decimals, in brackets: Scaled(x,
// 1e9, 3) is Gb/s with three decimals, Scaled(x, share, 4) fractions of a
// share.
func Scaled(x []float64, unit float64, prec int) string {
	s := "["
	for i, v := range x {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.*f", prec, v/unit)
	}
	return s + "]"
}
