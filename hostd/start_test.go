package hostd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadFileStartAt(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "h.toml")
	body := "port = \"net_null0\"\nlcores = [0]\nstart_at_unix_ns = %s\n[host]\nname = \"h0\"\nip = \"10.0.0.1\"\ngateway_mac = \"02:00:00:00:00:02\"\n"
	os.WriteFile(p, []byte(strings.Replace(body, "%s", "1795428000500000000", 1)), 0o644)
	f, err := LoadFile(p)
	if err != nil || f.StartAtUnixNs != 1795428000500000000 {
		t.Fatalf("%+v, %v", f, err)
	}
	os.WriteFile(p, []byte(strings.Replace(body, "%s", "-1", 1)), 0o644)
	if _, err := LoadFile(p); err == nil || !strings.Contains(err.Error(), "start_at_unix_ns") {
		t.Errorf("negative start_at_unix_ns: %v", err)
	}
}
