package testbed

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	hostdaemon "github.com/ccbed/ccbed/hostd/daemon"
	switchdaemon "github.com/ccbed/ccbed/switchd/daemon"
)

// filledInventory is an inventory of the four hosts of small and a switch.
const filledInventory = `# a cluster
[switch]
sw0 ansible_host=10.1.0.10 ccbed_port0_device=0000:41:00.0 ccbed_port0_mac=02:00:00:00:02:00 ccbed_port1_device=0000:41:00.1 ccbed_port1_mac=02:00:00:00:02:01 ccbed_port2_device=0000:42:00.0 ccbed_port2_mac=02:00:00:00:02:02 ccbed_port3_device=0000:42:00.1 ccbed_port3_mac=02:00:00:00:02:03

[hosts]
h0 ansible_host=10.1.0.20 ccbed_device=0000:81:00.0 ccbed_mac=02:00:00:00:01:00
h1 ansible_host=10.1.0.21 ccbed_device=0000:81:00.0 ccbed_mac=02:00:00:00:01:01
h2 ansible_host=10.1.0.22 ccbed_device=net_af_packet0,iface=eth1 ccbed_mac=02:00:00:00:01:02 ccbed_lcores=0 ccbed_eal_args="--no-huge -m 512 -l 0"
h3 ansible_host=10.1.0.23 ccbed_device=0000:81:00.0 ccbed_mac=02:00:00:00:01:03

[ccbed:children]
switch
hosts

[switch:vars]
ccbed_eal_args = "-l 0-3 --file-prefix sw"

[ccbed:vars]
ansible_user=root
`

func TestNodeFilesTemplate(t *testing.T) {
	e, err := Decode("x.toml", small, ".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := e.NodeFiles(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"switch.toml", "check-switch.sh", "host-h0.toml", "check-h0.sh", "host-h3.toml", InventoryFile, PlaybookFile, ManifestFile}
	for _, w := range want {
		found := false
		for _, f := range files {
			found = found || filepath.Base(f) == w
		}
		if !found {
			t.Errorf("%s not written (%v)", w, files)
		}
	}
	sw, _ := os.ReadFile(filepath.Join(dir, "switch.toml"))
	if !bytes.Contains(sw, []byte(Placeholder+"PCI_ADDRESS_OF_SWITCH_PORT_3")) || !bytes.Contains(sw, []byte(`mode = "pipeline"`)) {
		t.Fatalf("switch file:\n%s", sw)
	}
	// As written, the placeholders are rejected by both daemons.
	if _, err := switchdaemon.LoadConfig(filepath.Join(dir, "switch.toml")); err == nil {
		t.Error("switch file with placeholders accepted")
	}
	if _, err := hostdaemon.LoadFile(filepath.Join(dir, "host-h0.toml")); err == nil {
		t.Error("host file with placeholders accepted")
	}
	// The template inventory reads back, and -inventory refuses it until the
	// placeholders are filled in.
	inv, err := ReadInventory(filepath.Join(dir, InventoryFile))
	if err != nil {
		t.Fatal(err)
	}
	if g := inv.Groups["hosts"]; len(g) != 4 || g[3] != "h3" {
		t.Errorf("template [hosts] = %v", g)
	}
	if _, err := e.NodeFiles(t.TempDir(), inv); err == nil || !strings.Contains(err.Error(), Placeholder) {
		t.Errorf("template inventory accepted by -inventory: %v", err)
	}
	check, _ := os.ReadFile(filepath.Join(dir, "check-h0.sh"))
	if !bytes.Contains(check, []byte("fill in inventory.ini")) {
		t.Errorf("check script of a placeholder device:\n%s", check)
	}
}

func TestNodeFilesFromInventory(t *testing.T) {
	e, err := Decode("x.toml", small, ".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	invPath := filepath.Join(dir, "my.ini")
	os.WriteFile(invPath, []byte(filledInventory), 0o644)
	inv, err := ReadInventory(invPath)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := inv.Var("h2", "hosts", "ccbed_eal_args"); v != "--no-huge -m 512 -l 0" {
		t.Errorf("quoted value read as %q", v)
	}
	if v, _ := inv.Var("h1", "hosts", "ansible_user"); v != "root" {
		t.Errorf("ccbed:vars not inherited: %q", v)
	}
	out := filepath.Join(dir, "nodes")
	if _, err := e.NodeFiles(out, inv); err != nil {
		t.Fatal(err)
	}
	cfg, err := switchdaemon.LoadConfig(filepath.Join(out, "switch.toml"))
	if err != nil {
		t.Fatalf("switch file: %v", err)
	}
	if cfg.Ports[2].Device != "0000:42:00.0" || cfg.Ports[2].PeerMAC != "02:00:00:00:01:02" || cfg.Ports[2].MAC != "02:00:00:00:02:02" {
		t.Errorf("switch port 2: %+v", cfg.Ports[2])
	}
	if strings.Join(cfg.Switch.EALArgs, " ") != "-l 0-3 --file-prefix sw" || cfg.Switch.Mode != switchdaemon.ModePipeline {
		t.Errorf("switch eal %q mode %s", cfg.Switch.EALArgs, cfg.Switch.Mode)
	}
	for _, h := range []string{"h0", "h1", "h2", "h3"} {
		f, err := hostdaemon.LoadFile(filepath.Join(out, "host-"+h+".toml"))
		if err != nil {
			t.Fatalf("host %s: %v", h, err)
		}
		if h == "h2" {
			if f.Port != "net_af_packet0" || strings.Join(f.EALArgs, " ") != "--no-huge -m 512 -l 0 --vdev=net_af_packet0,iface=eth1" ||
				len(f.Lcores) != 1 || f.Host.GatewayMAC != "02:00:00:00:02:02" {
				t.Errorf("h2: port %s eal %q lcores %v gateway %s", f.Port, f.EALArgs, f.Lcores, f.Host.GatewayMAC)
			}
		} else if f.Port != "0000:81:00.0" || f.EALArgs[len(f.EALArgs)-1] != "0000:81:00.0" {
			t.Errorf("%s: port %s eal %q", h, f.Port, f.EALArgs)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, InventoryFile)); string(b) != filledInventory {
		t.Error("inventory.ini is not a copy of the user's inventory")
	}
	check, _ := os.ReadFile(filepath.Join(out, "check-h2.sh"))
	if !bytes.Contains(check, []byte("check_iface 'eth1'")) || !bytes.Contains(check, []byte("not used (--no-huge)")) {
		t.Errorf("check-h2.sh:\n%s", check)
	}
	check, _ = os.ReadFile(filepath.Join(out, "check-sw0.sh"))
	if !bytes.Contains(check, []byte("check_pci '0000:42:00.1'")) || !bytes.Contains(check, []byte("HugePages_Free")) {
		t.Errorf("check-sw0.sh:\n%s", check)
	}
	m, err := ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Switch != "sw0" || len(m.Hosts) != 4 || m.flowDst("h1", 2) != "h3" || m.flowDst("h1", 9) != "workload" {
		t.Errorf("manifest %+v", m)
	}
	// The scripts are valid sh, the playbook valid Ansible.
	for _, s := range []string{"check-sw0.sh", "check-h2.sh"} {
		if out, err := exec.Command("sh", "-n", filepath.Join(out, s)).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", s, err, out)
		}
	}
	if _, err := exec.LookPath("ansible-playbook"); err == nil {
		cmd := exec.Command("ansible-playbook", "--syntax-check", "-i", filepath.Join(out, InventoryFile), filepath.Join(out, PlaybookFile))
		cmd.Env = append(os.Environ(), "ANSIBLE_LOCAL_TEMP="+t.TempDir(), "ANSIBLE_NOCOLOR=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("ansible-playbook --syntax-check: %v\n%s", err, b)
		}
	} else {
		t.Log("ansible-playbook not installed: playbook syntax not checked")
	}
}

// TestPlaybookLint: the generated playbook, with and without workload CDFs
// to copy, passes ansible-lint's default rules (scripts/setup.sh installs
// it; skipped where it is not installed).
func TestPlaybookLint(t *testing.T) {
	lint, err := exec.LookPath("ansible-lint")
	if err != nil {
		t.Skip("ansible-lint not installed (scripts/setup.sh installs it): playbook not linted")
	}
	for _, tc := range []struct{ name, path string }{
		{"no workload files", "../configs/experiments/rocc-3to1.toml"},
		{"workload files", "../configs/experiments/incast-websearch.toml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Load(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if _, err := e.NodeFiles(dir, nil); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(lint, "--offline", "--nocolor", "-p", PlaybookFile)
			cmd.Dir = dir
			home := t.TempDir()
			cmd.Env = append(os.Environ(), "HOME="+home, "ANSIBLE_LOCAL_TEMP="+home, "ANSIBLE_HOME="+home, "NO_COLOR=1")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("ansible-lint %s: %v\n%s", PlaybookFile, err, b)
			}
		})
	}
}

func TestInventoryErrors(t *testing.T) {
	e, err := Decode("x.toml", small, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, edit, with, want string }{
		{"missing host", "h3 ansible_host=10.1.0.23 ccbed_device=0000:81:00.0 ccbed_mac=02:00:00:00:01:03\n", "", "no node h3"},
		{"extra host", "h3 ansible_host", "h9 ansible_host=x ccbed_device=y ccbed_mac=z\nh3 ansible_host", "h9: not a host"},
		{"missing mac", " ccbed_mac=02:00:00:00:01:01", "", "h1: ccbed_mac is not set"},
		{"missing port", " ccbed_port3_device=0000:42:00.1", "", "ccbed_port3_device is not set"},
		{"two switches", "[hosts]\n", "sw1 ansible_host=x\n[hosts]\n", "want one node"},
		{"bad lcores", "ccbed_lcores=0", "ccbed_lcores=zero", "ccbed_lcores"},
		{"unterminated quote", `"--no-huge -m 512 -l 0"`, `"--no-huge`, "quote"},
		{"bad tx lcores", "sw0 ansible_host=10.1.0.10", "sw0 ansible_host=10.1.0.10 ccbed_tx_lcores=none", "ccbed_tx_lcores \"none\""},
		{"sharded without rx lcores", "sw0 ansible_host=10.1.0.10", "sw0 ansible_host=10.1.0.10 ccbed_lcores=0,1 ccbed_tx_lcores=2", "sharded mode needs the rx lcores"},
		{"bad host tx lcores", "h1 ansible_host=10.1.0.21", "h1 ansible_host=10.1.0.21 ccbed_tx_lcores=1,x", `h1: ccbed_tx_lcores "1,x"`},
		{"host rx lcores alone", "h1 ansible_host=10.1.0.21", "h1 ansible_host=10.1.0.21 ccbed_rx_lcores=3", "h1: ccbed_rx_lcores needs ccbed_tx_lcores"},
		{"host rx lcores not one per tx lcore", "h1 ansible_host=10.1.0.21", "h1 ansible_host=10.1.0.21 ccbed_tx_lcores=1,2 ccbed_rx_lcores=3", "rx_lcores"},
	} {
		p := filepath.Join(t.TempDir(), "inv.ini")
		text := strings.Replace(filledInventory, tc.edit, tc.with, 1)
		if tc.name == "two switches" {
			text = strings.Replace(filledInventory, "\n[hosts]\n", "\nsw1 ansible_host=x\n\n[hosts]\n", 1)
		}
		os.WriteFile(p, []byte(text), 0o644)
		inv, err := ReadInventory(p)
		if err == nil {
			_, err = e.NodeFiles(t.TempDir(), inv)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// nodeFilesWith writes e's node files from filledInventory with edit replaced
// by with, and returns their directory.
func nodeFilesWith(t *testing.T, e *Experiment, edit, with string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "inv.ini")
	if err := os.WriteFile(p, []byte(strings.Replace(filledInventory, edit, with, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	inv, err := ReadInventory(p)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := e.NodeFiles(out, inv); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNodeFilesSharded: ccbed_tx_lcores makes the switch's config the sharded
// mode, its last lcores the tx+CC ones.
func TestNodeFilesSharded(t *testing.T) {
	e, err := Decode("x.toml", small, ".")
	if err != nil {
		t.Fatal(err)
	}
	out := nodeFilesWith(t, e, "sw0 ansible_host=10.1.0.10", "sw0 ansible_host=10.1.0.10 ccbed_lcores=1,2,3,4 ccbed_tx_lcores=2")
	cfg, err := switchdaemon.LoadConfig(filepath.Join(out, "switch.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Switch.Mode != switchdaemon.ModeSharded || cfg.Switch.TxLcores != 2 || len(cfg.Switch.Lcores) != 4 {
		t.Errorf("mode %s, tx lcores %d, lcores %v: want sharded, 2 of 4", cfg.Switch.Mode, cfg.Switch.TxLcores, cfg.Switch.Lcores)
	}
}

// TestNodeFilesHostEngines: a host's ccbed_tx_lcores and ccbed_rx_lcores make
// its hostd file run one engine per tx lcore (hostd's tx_lcores, rx_lcores),
// each on its own queue pair of the NIC; other hosts keep one engine.
func TestNodeFilesHostEngines(t *testing.T) {
	e, err := Decode("x.toml", small, ".")
	if err != nil {
		t.Fatal(err)
	}
	out := nodeFilesWith(t, e, "h1 ansible_host=10.1.0.21", `h1 ansible_host=10.1.0.21 ccbed_eal_args="-l 0-4" ccbed_tx_lcores=1,2,3 ccbed_rx_lcores=4,4,4`)
	f, err := hostdaemon.LoadFile(filepath.Join(out, "host-h1.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.TxLcores, []uint{1, 2, 3}) || !slices.Equal(f.RxLcores, []uint{4, 4, 4}) || len(f.Lcores) != 0 || f.Engines() != 3 {
		t.Errorf("h1: lcores %v, tx %v, rx %v, %d engines: want 3 engines on tx lcores 1-3, rx on 4", f.Lcores, f.TxLcores, f.RxLcores, f.Engines())
	}
	f, err = hostdaemon.LoadFile(filepath.Join(out, "host-h0.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Engines() != 1 || len(f.Lcores) != 2 {
		t.Errorf("h0: engines %d, lcores %v: want one engine on the default lcores", f.Engines(), f.Lcores)
	}
}

// TestCheckPlaybookHosts: an inventory whose nodes the playbook (hosts:
// ccbed) would not match is an error naming what is missing.
func TestCheckPlaybookHosts(t *testing.T) {
	for _, tc := range []struct {
		name, text, err string
	}{
		{"generated shape", "[switch]\ns0\n[hosts]\nh0\nh1\n[ccbed:children]\nswitch\nhosts\n", ""},
		{"nodes listed", "[switch]\ns0\n[hosts]\nh0\n[ccbed]\ns0\nh0\n", ""},
		{"nested", "[switch]\ns0\n[hosts]\nh0\n[all_nodes:children]\nswitch\nhosts\n[ccbed:children]\nall_nodes\n", ""},
		{"no ccbed", "[switch]\ns0\n[hosts]\nh0\nh1\n", "no group ccbed"},
		{"hosts left out", "[switch]\ns0\n[hosts]\nh0\nh1\n[ccbed:children]\nswitch\n", "does not hold h0, h1"},
		{"no switch", "[hosts]\nh0\n[ccbed:children]\nhosts\n", "no [switch] group"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "inventory.ini")
			os.WriteFile(p, []byte(tc.text), 0o644)
			inv, err := ReadInventory(p)
			if err != nil {
				t.Fatal(err)
			}
			err = inv.CheckPlaybookHosts()
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}
