package metrics

import "github.com/prometheus/client_golang/prometheus"

// family is one metric family a collector emits: its name, help and label
// names (the Desc) and its type.
type family struct {
	desc *prometheus.Desc
	typ  prometheus.ValueType
}

// families collects the families of one collector as they are declared, for
// its Describe.
type families []*family

func (fs *families) add(typ prometheus.ValueType, name, help string, labels ...string) *family {
	f := &family{desc: prometheus.NewDesc(name, help, labels, nil), typ: typ}
	*fs = append(*fs, f)
	return f
}

func (fs *families) counter(name, help string, labels ...string) *family {
	return fs.add(prometheus.CounterValue, name, help, labels...)
}

func (fs *families) gauge(name, help string, labels ...string) *family {
	return fs.add(prometheus.GaugeValue, name, help, labels...)
}

// summary declares a summary family: its samples go out through
// prometheus.MustNewConstSummary on its desc, not emit.
func (fs *families) summary(name, help string, labels ...string) *family {
	return fs.add(prometheus.UntypedValue, name, help, labels...)
}

// describe sends every family's Desc.
func (fs families) describe(ch chan<- *prometheus.Desc) {
	for _, f := range fs {
		ch <- f.desc
	}
}

// emit sends one sample of f with the given label values (in the order of
// the family's label names).
func (f *family) emit(ch chan<- prometheus.Metric, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(f.desc, f.typ, v, labels...)
}

// labelled is a value with the value of one label, for the families whose
// samples differ by one label (a reason, a kind) beside the port.
type labelled struct {
	label string
	v     uint64
}
