package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// OptFloat is a number that may be missing: an unfinished flow's FCT, the
// fair rate of a port whose scheme has none, Jain's index over no active
// flows, a mean over no samples. It encodes as JSON null when missing (pandas
// reads NaN), never as 0, and decodes null back to missing. The zero value is
// missing.
type OptFloat struct {
	v     float64
	valid bool
}

// Some returns x as present, or missing when x is NaN or infinite (JSON
// cannot carry them).
func Some(x float64) OptFloat {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return OptFloat{}
	}
	return OptFloat{v: x, valid: true}
}

// None is the missing value.
var None = OptFloat{}

// Get returns the value and whether it is present.
func (o OptFloat) Get() (float64, bool) { return o.v, o.valid }

// Valid reports whether the value is present.
func (o OptFloat) Valid() bool { return o.valid }

// Or returns the value, or def when it is missing.
func (o OptFloat) Or(def float64) float64 {
	if !o.valid {
		return def
	}
	return o.v
}

// NaN returns the value, or NaN when it is missing (for arithmetic that
// should propagate the gap).
func (o OptFloat) NaN() float64 { return o.Or(math.NaN()) }

// Format writes the value with prec decimals, or "-" when it is missing.
func (o OptFloat) Format(prec int) string {
	if !o.valid {
		return "-"
	}
	return strconv.FormatFloat(o.v, 'f', prec, 64)
}

// String formats the value in its shortest exact form, or "null".
func (o OptFloat) String() string {
	if !o.valid {
		return "null"
	}
	return strconv.FormatFloat(o.v, 'g', -1, 64)
}

// MarshalJSON encodes the value as a JSON number, or null when missing.
func (o OptFloat) MarshalJSON() ([]byte, error) { return o.appendJSON(nil) }

// appendJSON appends o as MarshalJSON writes it: null, or the number as
// encoding/json writes a float64 (shortest decimal that reads back exactly;
// exponent form below 1e-6 and from 1e21, with e-7 rather than e-07).
func (o OptFloat) appendJSON(b []byte) ([]byte, error) {
	if !o.valid {
		return append(b, "null"...), nil
	}
	f := o.v
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b, nil
}

// UnmarshalJSON decodes a JSON number, or null as missing.
func (o *OptFloat) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*o = OptFloat{}
		return nil
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*o = Some(x)
	return nil
}

// optMean is the mean of xs, missing when xs is empty.
func optMean(xs []float64) OptFloat {
	if len(xs) == 0 {
		return None
	}
	return Some(Mean(xs))
}
