package config

import "testing"

// TestSuggest: the nearest key of the same table, when near enough.
func TestSuggest(t *testing.T) {
	type port struct {
		LinkGbps float64 `toml:"link_gbps"`
		Name     string  `toml:"name"`
	}
	type cfg struct {
		Ports  []port `toml:"ports"`
		Scheme string `toml:"scheme"`
		Hidden int    `toml:"-"`
	}
	for _, tc := range []struct {
		key  []string
		want string
	}{
		{[]string{"ports", "link_gbs"}, "ports.link_gbps"},
		{[]string{"sheme"}, "scheme"},
		{[]string{"SCHEME"}, "scheme"},
		{[]string{"hidden"}, ""},
		{[]string{"zzzzzzzz"}, ""},
		{[]string{"scheme", "x"}, ""},
		{nil, ""},
	} {
		if got := Suggest(&cfg{}, tc.key); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.key, got, tc.want)
		}
	}
}

// FuzzEditDistance: a distance is symmetric, 0 only for equal strings, and
// at most the longer length.
func FuzzEditDistance(f *testing.F) {
	f.Add("link_gbs", "link_gbps")
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 64 || len(b) > 64 {
			return
		}
		d := editDistance(a, b)
		if d != editDistance(b, a) || (d == 0) != (a == b) || d > max(len(a), len(b)) {
			t.Fatalf("editDistance(%q, %q) = %d", a, b, d)
		}
	})
}
