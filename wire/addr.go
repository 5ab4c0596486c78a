package wire

import (
	"errors"
	"fmt"
	"net/netip"
)

// The one parser and formatter of each address type the engines and their
// configs use: an Ethernet MAC (MAC, with text marshalling) and an IPv4
// address as the engines hold it, a uint32 in host byte order (ParseIPv4,
// FormatIPv4, and IPv4Addr / IPv4FromAddr to and from net/netip).

// String formats m as six colon-separated lower-case hex bytes,
// "02:00:00:00:00:01".
func (m MAC) String() string {
	b, _ := m.MarshalText()
	return string(b)
}

// MarshalText is String's text, for encoders (TOML, JSON).
func (m MAC) MarshalText() ([]byte, error) {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, 17)
	for i, x := range m {
		if i > 0 {
			b = append(b, ':')
		}
		b = append(b, hex[x>>4], hex[x&15])
	}
	return b, nil
}

// UnmarshalText parses text as ParseMAC does.
func (m *MAC) UnmarshalText(text []byte) error {
	v, err := ParseMAC(string(text))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

var errMAC = errors.New("want six hex bytes: 02:00:00:00:00:01, 02-00-00-00-00-01 or 0200.0000.0001")

// ParseMAC parses an Ethernet MAC address of six bytes in one of the forms
// net.ParseMAC accepts for them: colon- or hyphen-separated hex bytes
// ("02:00:5e:10:00:01", "02-00-5e-10-00-01"), three dot-separated groups
// of four hex digits ("0200.5e10.0001") or twelve in a row
// ("02005e100001"); either case.
func ParseMAC(s string) (MAC, error) {
	var m MAC
	switch {
	case len(s) == 17 && (s[2] == ':' || s[2] == '-'):
		sep := s[2]
		for i := range m {
			at := 3 * i
			if i < 5 && s[at+2] != sep {
				return MAC{}, fmt.Errorf("%q is not a MAC address: %w", s, errMAC)
			}
			hi, ok1 := unhex(s[at])
			lo, ok2 := unhex(s[at+1])
			if !ok1 || !ok2 {
				return MAC{}, fmt.Errorf("%q is not a MAC address: %w", s, errMAC)
			}
			m[i] = hi<<4 | lo
		}
	case len(s) == 14 && s[4] == '.' && s[9] == '.', len(s) == 12:
		step := 5 // in groups of four digits, or 12 digits in a row
		if len(s) == 12 {
			step = 4
		}
		for i := range m {
			at := step*(i/2) + 2*(i%2)
			hi, ok1 := unhex(s[at])
			lo, ok2 := unhex(s[at+1])
			if !ok1 || !ok2 {
				return MAC{}, fmt.Errorf("%q is not a MAC address: %w", s, errMAC)
			}
			m[i] = hi<<4 | lo
		}
	default:
		return MAC{}, fmt.Errorf("%q is not a MAC address: %w", s, errMAC)
	}
	return m, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// ParseIPv4 parses a dotted-decimal IPv4 address (or an IPv4-mapped IPv6
// one, "::ffff:10.0.0.1") into host byte order.
func ParseIPv4(s string) (uint32, error) {
	a, err := netip.ParseAddr(s)
	if a = a.Unmap(); err != nil || !a.Is4() {
		return 0, fmt.Errorf("%q is not an IPv4 address", s)
	}
	return IPv4FromAddr(a), nil
}

// FormatIPv4 formats a host-byte-order IPv4 address, "10.0.0.1".
func FormatIPv4(a uint32) string { return IPv4Addr(a).String() }

// IPv4Addr is a host-byte-order IPv4 address as a netip.Addr.
func IPv4Addr(a uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)})
}

// IPv4FromAddr is an IPv4 (or IPv4-mapped) netip.Addr in host byte order;
// 0 for any other address.
func IPv4FromAddr(a netip.Addr) uint32 {
	if a = a.Unmap(); !a.Is4() {
		return 0
	}
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}
