package testbed

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/ccbed/ccbed/ccalgo"
	"github.com/ccbed/ccbed/config"
)

// validateCC decodes [cc.params], once, into the overrides every node lays
// over its own defaults (e.CC.overrides, fabric.Spec.Params): strictly, into
// the scheme's parameter struct (unknown keys, wrong types). Then it checks
// them over the scheme's defaults for the host links through the scheme's
// own checks (its CP, RP and NP constructors: ranges, Q_ref < Q_mid < Q_max
// and the like), so that validate refuses what run would, at the key's line
// in the experiment file.
func (e *Experiment) validateCC() error {
	e.CC.overrides = ccalgo.Overrides{}
	sch, err := ccalgo.Lookup(e.CC.Scheme)
	if err != nil {
		return e.errorf("cc.scheme", "%v", err)
	}
	baseRTT := config.UsToNs(e.Topology.BaseRTTUs)
	if baseRTT == 0 {
		baseRTT = 10_000 // the topology's own is derived later; the checks do not depend on it
	}
	env := e.hostEnv(baseRTT)
	overrides, err := config.DecodeOverrides(e.CC.Scheme, e.CC.Params)
	if err != nil {
		var errs []error
		for _, one := range splitErrors(err) {
			var ce *config.Error
			if !errors.As(one, &ce) || ce.Key == "" {
				errs = append(errs, e.errorf("cc.params", "%v", one))
				continue
			}
			pe := e.errorf("cc.params."+ce.Key, "%s (scheme %s)", ce.Msg, e.CC.Scheme)
			var pce *config.Error
			if ce.Suggest != "" && errors.As(pe, &pce) {
				pce.Suggest = "cc.params." + ce.Suggest
			}
			errs = append(errs, pe)
		}
		return errors.Join(errs...)
	}
	e.CC.overrides = overrides
	params := sch.DefaultParams(env)
	if err := overrides.Apply(params); err != nil {
		return e.errorf("cc.params", "%v", err)
	}
	for _, build := range []func() error{
		func() error {
			if sch.NewCP == nil {
				return nil
			}
			_, err := sch.NewCP(params, env)
			return err
		},
		func() error {
			if sch.NewRP == nil {
				return nil
			}
			_, err := sch.NewRP(params, env)
			return err
		},
		func() error {
			if sch.NewNP == nil {
				return nil
			}
			_, err := sch.NewNP(params, env)
			return err
		},
	} {
		if err := build(); err != nil {
			var pe *ccalgo.ParamError
			if !errors.As(err, &pe) {
				return e.errorf("cc.params", "%v", err)
			}
			// A check of several parameters names them "a/b/c": point at the
			// first the file sets, else at the table.
			key := "cc.params"
			for _, p := range strings.Split(pe.Param, "/") {
				if e.file != nil && e.file.Line("cc.params."+p) > 0 {
					key = "cc.params." + p
					break
				}
			}
			return e.errorf(key, "%s = %v: %s (scheme %s)", pe.Param, pe.Value, pe.Reason, e.CC.Scheme)
		}
	}
	return nil
}

// hostEnv is the scheme environment of the experiment's hosts: their link
// rate, baseRTTNs, the MTU and cc.expected_flows.
func (e *Experiment) hostEnv(baseRTTNs int64) ccalgo.Env {
	t := &e.Topology
	return ccalgo.Env{LinkBps: t.LinkGbps * 1e9, BaseRTT: baseRTTNs, MTU: t.MTUBytes,
		MaxFlows: 1024, ExpectedFlows: e.CC.ExpectedFlows, ID: 1}
}

// SchemeParams is the scheme's parameters as the hosts run them: its defaults
// for hostEnv(baseRTTNs) with [cc.params] laid over them (as Validate decoded
// it), keyed as in [cc.params] (nil when they cannot be built). A switch port on a faster link scales the
// rate-dependent defaults of its CP to that link.
func (e *Experiment) SchemeParams(baseRTTNs int64) map[string]any {
	sch, err := ccalgo.Lookup(e.CC.Scheme)
	if err != nil {
		return nil
	}
	params := sch.DefaultParams(e.hostEnv(baseRTTNs))
	if e.CC.overrides.Apply(params) != nil {
		return nil
	}
	var b bytes.Buffer
	var m map[string]any
	if toml.NewEncoder(&b).Encode(params) != nil {
		return nil
	}
	if _, err := toml.Decode(b.String(), &m); err != nil {
		return nil
	}
	return m
}

// validateFlowRates refuses a flow whose offered-rate cap exceeds its
// sender's link: the cap could never bind, and a file that says 40 Gb/s on a
// 10 Gb/s host most likely meant another topology.
func (e *Experiment) validateFlowRates() error {
	for i, f := range e.Flows {
		if f.RateGbps == 0 || f.Src < 0 || f.Src >= len(e.topo.Hosts) {
			continue
		}
		_, _, out := e.topo.Peer(f.Src, 0)
		if link := out.Bps / 1e9; f.RateGbps > link {
			return e.errorf(fmt.Sprintf("flows[%d].rate_gbps", i), "%v Gb/s exceeds host %d's %v Gb/s link", f.RateGbps, f.Src, link)
		}
	}
	return nil
}
