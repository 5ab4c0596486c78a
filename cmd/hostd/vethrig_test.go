package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ccbed/ccbed/internal/daemontest"
)

// vethRig is a switch and hosts on veth cables, each in its own network
// namespace: host i's interface hIf[i] in nsH[i] is joined to the switch's
// swIf[i] in nsS. Its daemons are separate processes whose ports are
// net_af_packet vdevs on those interfaces. Everything it makes (namespaces,
// veths, EAL runtime directories) goes in t's cleanup.
type vethRig struct {
	id          string // the test process's id, in every name
	nsS         string
	nsH         []string
	swIf, hIf   []string
	swMAC, hMAC []string
}

// newVethRig makes the namespaces and veth pairs of a switch and hosts hosts,
// every name starting with prefix (interface names stay within Linux's 15
// characters for a prefix of up to 7). It skips t in -short mode and where
// namespaces cannot be made (not root, no iproute2).
func newVethRig(t *testing.T, prefix string, hosts int) *vethRig {
	t.Helper()
	if testing.Short() {
		t.Skip("multi-process veth test skipped in -short mode")
	}
	r := &vethRig{id: strconv.Itoa(os.Getpid() % 100000), nsS: prefix + "S"}
	r.nsS += r.id
	if out, err := exec.Command("ip", "netns", "add", r.nsS).CombinedOutput(); err != nil {
		t.Skipf("cannot create network namespaces and veths (needs root and iproute2): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", r.nsS).Run() })
	for i := range hosts {
		ns := fmt.Sprintf("%sH%d%s", prefix, i, r.id)
		mustRun(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		r.nsH = append(r.nsH, ns)
	}
	for _, ns := range append([]string{r.nsS}, r.nsH...) {
		// No IPv6 autoconfiguration traffic on the veths: set before they exist.
		mustRun(t, "ip", "netns", "exec", ns, "sysctl", "-qw",
			"net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
	}
	for i, ns := range r.nsH {
		s, h := fmt.Sprintf("%ss%d%s", prefix, i, r.id), fmt.Sprintf("%sh%d%s", prefix, i, r.id)
		mustRun(t, "ip", "link", "add", "name", s, "netns", r.nsS, "type", "veth", "peer", "name", h, "netns", ns)
		mustRun(t, "ip", "-n", r.nsS, "link", "set", s, "up")
		mustRun(t, "ip", "-n", ns, "link", "set", h, "up")
		r.swIf, r.hIf = append(r.swIf, s), append(r.hIf, h)
		r.swMAC, r.hMAC = append(r.swMAC, vethMAC(t, r.nsS, s)), append(r.hMAC, vethMAC(t, ns, h))
	}
	return r
}

// eal is a daemon's eal_args as a TOML array: no hugepages, one lcore on CPU
// cpu, its own file prefix (role and the rig's id, removed in t's cleanup),
// and the vdev vdev unless it is empty (switchd adds its ports' vdevs
// itself).
func (r *vethRig) eal(t *testing.T, role, cpu, vdev string) string {
	prefix := "ccb" + role + r.id
	// --no-shconf still makes each process's EAL runtime directory.
	t.Cleanup(func() { os.RemoveAll(filepath.Join("/var/run/dpdk", prefix)) })
	if vdev != "" {
		vdev = fmt.Sprintf(`, "--vdev=%s"`, vdev)
	}
	return fmt.Sprintf(`["--no-huge", "-m", "256", "--no-pci", "--no-shconf", "--no-telemetry", "--lcores=0@%s", "--file-prefix=%s", "--log-level=lib.eal:error"%s]`,
		cpu, prefix, vdev)
}

// switchFile is the rig's switch, rtc on lcore 0 (CPU 1) with mbufs mbufs
// a base RTT of 100 us and no console telemetry: port pi on the switch's veth i (an af_packet
// vdev, devArgs appended to its device), whose peer is host i, at gbps[i],
// with the route net.(i+1).0/24 (net "10.78": 10.78.1.0/24 to p0); the
// switch's address is net.0.254. The caller sets the scheme and the rest.
func (r *vethRig) switchFile(t *testing.T, net string, mbufs int, devArgs string, gbps ...float64) daemontest.SwitchFile {
	sw := daemontest.SwitchFile{IP: net + ".0.254", Mode: "rtc", Lcores: []int{0}, EALArgs: r.eal(t, "sw", "1", ""),
		Mbufs: mbufs, CC: "base_rtt_us = 100\n", Quiet: true}
	for i, g := range gbps {
		sw.Ports = append(sw.Ports, daemontest.SwitchPort{Name: fmt.Sprintf("p%d", i),
			Device: fmt.Sprintf("net_af_packet%d,iface=%s%s", i, r.swIf[i], devArgs), PeerMAC: r.hMAC[i], LinkGbps: g,
			Route: fmt.Sprintf("%s.%d.0/24", net, i+1)})
	}
	return sw
}

// vethRxPackets is the packets the kernel delivered to interface dev in
// namespace ns (its RX count): with the switch's count of what it read,
// what its af_packet receive ring lost.
func vethRxPackets(t *testing.T, ns, dev string) uint64 {
	t.Helper()
	var links []struct {
		Stats struct {
			RX struct {
				Packets uint64 `json:"packets"`
			} `json:"rx"`
		} `json:"stats64"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "ip", "-n", ns, "-j", "-s", "link", "show", "dev", dev)), &links); err != nil || len(links) != 1 {
		t.Fatalf("ip -j -s link show dev %s: %v", dev, err)
	}
	return links[0].Stats.RX.Packets
}

// vethHost is one hostd daemon's config on a vethRig: hostTOML writes it.
type vethHost struct {
	name, ip, gatewayMAC string
	eal                  string // eal_args (vethRig.eal)
	linkGbps             float64
	durationS            float64 // 0: until SIGTERM
	mtu                  int
	scheme               string
	rtoUs, nakUs         float64
	flows                string // [[host.flows]] tables, or ""
}

// hostTOML is h's hostd config file, with results under dir/h.name.
func hostTOML(dir string, h vethHost) string {
	return fmt.Sprintf(`eal_args = %s
port = "net_af_packet0"
lcores = [0]
mbufs = 4095
duration_s = %g
results_dir = "%s"

[host]
name = "%s"
ip = "%s"
gateway_mac = "%s"
link_gbps = %g
mtu_bytes = %d
base_rtt_us = 100
scheme = "%s"
rto_us = %g
nak_interval_us = %g
%s`, h.eal, h.durationS, filepath.Join(dir, h.name), h.name, h.ip, h.gatewayMAC, h.linkGbps, h.mtu, h.scheme, h.rtoUs, h.nakUs, h.flows)
}

// buildSwitchd builds cmd/switchd into a temporary directory and returns the
// binary's path.
func buildSwitchd(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to build switchd: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "switchd")
	mustRun(t, goTool, "build", "-o", bin, "../switchd")
	return bin
}

// writeFile writes text to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// startSwitchd runs switchd bin on config cfg in the switch's namespace and
// waits until it runs.
func (r *vethRig) startSwitchd(t *testing.T, bin, cfg string) *daemon {
	t.Helper()
	sw := startDaemon(t, "switchd", "switchd: running", nil, "ip", "netns", "exec", r.nsS, bin, "-c", cfg)
	select {
	case <-sw.ready:
	case <-sw.done:
		t.Fatalf("switchd exited before running (%v):\n%s", sw.err, sw.output())
	case <-time.After(15 * time.Second):
		t.Fatalf("switchd did not start:\n%s", sw.output())
	}
	return sw
}

// startHost runs this test binary as hostd on config cfg in host i's
// namespace, with the start instant startAt unless it is zero. Without one
// it waits until the host has opened its port (a host that starts at once
// is then ready to receive).
func (r *vethRig) startHost(t *testing.T, name string, i int, cfg string, startAt time.Time) *daemon {
	t.Helper()
	env := []string{hostdConfigEnv + "=" + cfg}
	if !startAt.IsZero() {
		env = append(env, hostdStartAtEnv+"="+startAt.UTC().Format(time.RFC3339Nano))
	}
	d := startDaemon(t, name, "", env, "ip", "netns", "exec", r.nsH[i], os.Args[0], "-test.run=^$")
	if !startAt.IsZero() {
		return d
	}
	for deadline := time.Now().Add(15 * time.Second); !hasPacketSocket(d.cmd.Process.Pid, r.nsH[i]); {
		select {
		case <-d.done:
			t.Fatalf("%s exited before opening its port (%v):\n%s", name, d.err, d.output())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not open its af_packet port:\n%s", name, d.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return d
}
