package report

import (
	"bytes"
	"encoding/json"
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
func (o OptFloat) MarshalJSON() ([]byte, error) {
	if !o.valid {
		return []byte("null"), nil
	}
	return json.Marshal(o.v)
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
