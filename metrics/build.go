package metrics

import (
	"strconv"

	"github.com/ccbed/ccbed/buildinfo"
	"github.com/prometheus/client_golang/prometheus"
)

// BuildInfo is ccbed_build_info: a gauge of 1 whose labels say which ccbed
// build is running (package buildinfo, as -version prints it): module,
// version, revision, modified ("true", "false", or "" when the build did not
// record it) and go_version.
func BuildInfo() prometheus.Collector {
	b := buildinfo.Read()
	modified := ""
	if b.VCSModified != nil {
		modified = strconv.FormatBool(*b.VCSModified)
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ccbed_build_info",
		Help: "The ccbed build that is running (always 1): module, version, VCS revision, modified tree, Go version.",
		ConstLabels: prometheus.Labels{"module": b.Module, "version": b.Version, "revision": b.VCSRevision,
			"modified": modified, "go_version": b.GoVersion},
	})
	g.Set(1)
	return g
}
