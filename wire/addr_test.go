package wire

import (
	"net"
	"strings"
	"testing"
)

func TestParseMAC(t *testing.T) {
	want := MAC{0x02, 0x00, 0x5e, 0x10, 0xab, 0xCD}
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"02:00:5e:10:ab:cd", true},
		{"02-00-5E-10-AB-CD", true},
		{"0200.5e10.abcd", true},
		{"02:00:5e:10:ab", false},
		{"02:00:5e:10:ab:cd:ef:01", false},
		{"02:00-5e:10:ab:cd", false},
		{"02:00:5e:10:ab:cg", false},
		{"", false},
	} {
		got, err := ParseMAC(tc.in)
		if (err == nil) != tc.ok || tc.ok && got != want {
			t.Errorf("ParseMAC(%q) = %v, %v; want ok %v", tc.in, got, err, tc.ok)
		}
	}
	if s := want.String(); s != "02:00:5e:10:ab:cd" {
		t.Errorf("String = %q", s)
	}
	var m MAC
	if err := m.UnmarshalText([]byte("02:00:5e:10:ab:cd")); err != nil || m != want {
		t.Errorf("UnmarshalText: %v, %v", m, err)
	}
	if err := m.UnmarshalText([]byte("nope")); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("UnmarshalText(nope): %v", err)
	}
}

func TestIPv4(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint32
		ok   bool
	}{
		{"10.0.0.1", 0x0a000001, true},
		{"255.255.255.255", 0xffffffff, true},
		{"::ffff:10.0.0.1", 0x0a000001, true},
		{"0.0.0.0", 0, true},
		{"10.0.0", 0, false},
		{"10.0.0.256", 0, false},
		{"010.0.0.1", 0, false},
		{"::1", 0, false},
		{"", 0, false},
	} {
		got, err := ParseIPv4(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseIPv4(%q) = %#x, %v; want %#x ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	if s := FormatIPv4(0x0a000102); s != "10.0.1.2" {
		t.Errorf("FormatIPv4 = %q", s)
	}
}

// FuzzParseMAC checks ParseMAC against net.ParseMAC's six-byte addresses, and
// that String parses back.
func FuzzParseMAC(f *testing.F) {
	for _, s := range []string{"02:00:5e:10:ab:cd", "02-00-5E-10-AB-CD", "0200.5e10.abcd", "02:00:5e:10:ab", "0200.5e10.abcd.ef01", "::::::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseMAC(s)
		hw, nerr := net.ParseMAC(s)
		if nerr != nil || len(hw) != 6 {
			if err == nil {
				t.Fatalf("ParseMAC(%q) = %v; net.ParseMAC refuses it as a 6-byte address", s, got)
			}
			return
		}
		if err != nil || got != MAC(hw) {
			t.Fatalf("ParseMAC(%q) = %v, %v; net.ParseMAC %v", s, got, err, hw)
		}
		if back, err := ParseMAC(got.String()); err != nil || back != got {
			t.Fatalf("String %q parses back as %v, %v", got.String(), back, err)
		}
	})
}

// FuzzParseIPv4 checks ParseIPv4 against net.ParseIP(s).To4(), and that
// FormatIPv4 parses back.
func FuzzParseIPv4(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "::ffff:10.0.0.1", "010.0.0.1", "1.2.3.4%eth0", "::1", "1.2.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseIPv4(s)
		ip := net.ParseIP(s).To4()
		if ip == nil {
			if err == nil {
				t.Fatalf("ParseIPv4(%q) = %#x; net.ParseIP refuses it as IPv4", s, got)
			}
			return
		}
		want := uint32(ip[0])<<24 | uint32(ip[1])<<16 | uint32(ip[2])<<8 | uint32(ip[3])
		if err != nil || got != want {
			t.Fatalf("ParseIPv4(%q) = %#x, %v; want %#x", s, got, err, want)
		}
		if back, err := ParseIPv4(FormatIPv4(got)); err != nil || back != got {
			t.Fatalf("FormatIPv4 %q parses back as %#x, %v", FormatIPv4(got), back, err)
		}
	})
}
