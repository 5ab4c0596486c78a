package testbed

import (
	"fmt"

	"github.com/ccbed/ccbed/switchd"
)

// HostPriority gives the listed hosts' data a priority (0-7): they tag it in
// the DSCP (class selector, priority << 3) and obey PFC pauses of it, and the
// switches queue it in that priority's queue. Hosts not listed use priority
// 3 (fabric.DefaultPriority). A [[flows]], [[incast]] or [[workloads]] entry
// with a priority of its own sends in that one instead.
type HostPriority struct {
	Hosts    []int `toml:"hosts" required:"the hosts' indexes"`
	Priority uint8 `toml:"priority" required:"the priority (0-7) their traffic is sent in"`
}

// validateBuffer checks [pfc] priorities, [buffer], [queues],
// [[host_priority]] and the traffic's priorities with the switch's own
// checks, errors at the file's lines.
func (e *Experiment) validateBuffer(nHosts int) error {
	c := switchd.DefaultSpec()
	c.PFC.Enabled, c.PFC.Priorities = e.PFC.Enabled, e.PFC.Priorities
	c.Buffer, c.Queues = e.Buffer, e.Queues
	if err := c.CheckBuffer(e.errorf); err != nil {
		return err
	}
	seen := map[int]int{}
	for i, hp := range e.HostPriority {
		k := fmt.Sprintf("host_priority[%d]", i)
		if hp.Priority > 7 {
			return e.errorf(k+".priority", "%d: want 0..7", hp.Priority)
		}
		if len(hp.Hosts) == 0 {
			return e.errorf(k+".hosts", "empty: list the hosts of this priority")
		}
		for _, h := range hp.Hosts {
			if h < 0 || h >= nHosts {
				return e.errorf(k+".hosts", "host %d out of range 0..%d", h, nHosts-1)
			}
			if j, dup := seen[h]; dup {
				return e.errorf(k+".hosts", "host %d already has a priority in host_priority[%d]", h, j)
			}
			seen[h] = i
		}
	}
	check := func(k string, p *int) error {
		if p != nil && (*p < 0 || *p > 7) {
			return e.errorf(k+".priority", "%d: want 0..7", *p)
		}
		return nil
	}
	for i, f := range e.Flows {
		if err := check(fmt.Sprintf("flows[%d]", i), f.Priority); err != nil {
			return err
		}
	}
	for i, in := range e.Incast {
		if err := check(fmt.Sprintf("incast[%d]", i), in.Priority); err != nil {
			return err
		}
	}
	for i, w := range e.Workloads {
		if err := check(fmt.Sprintf("workloads[%d]", i), w.Priority); err != nil {
			return err
		}
	}
	return nil
}

// hostPriorities maps each listed host to its priority (nil when none is).
func (e *Experiment) hostPriorities() map[int]uint8 {
	if len(e.HostPriority) == 0 {
		return nil
	}
	m := map[int]uint8{}
	for _, hp := range e.HostPriority {
		for _, h := range hp.Hosts {
			m[h] = hp.Priority
		}
	}
	return m
}
