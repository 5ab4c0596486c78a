package dpdk

import (
	"strings"
	"testing"
)

// TestEALFailureDetail: of what a failing rte_eal_init wrote, the one line
// kept names the argument (getopt's message, the EAL's own log line) and
// drops the usage text and the generic "Invalid 'command line' arguments".
func TestEALFailureDetail(t *testing.T) {
	usage := "\nUsage: ccbed [options]\n\nEAL common options:\n  -c COREMASK         Hexadecimal bitmask of cores to run on\n"
	for _, tc := range []struct {
		name, out, err, want string
	}{
		{"getopt", usage + "EAL: Invalid 'command line' arguments.\n",
			"ccbed: unrecognized option '--bogus'\nEAL: Detected CPU lcores: 2\nEAL: FATAL: Invalid 'command line' arguments.\n",
			"unrecognized option '--bogus'"},
		{"eal log", "EAL: invalid core list syntax\n" + usage + "EAL: Invalid 'command line' arguments.\n", "",
			"EAL: invalid core list syntax"},
		{"generic only", usage + "EAL: Invalid 'command line' arguments.\n", "", "EAL: Invalid 'command line' arguments."},
		{"nothing", "", "", ""},
	} {
		if got := ealFailureDetail([]byte(tc.out), []byte(tc.err)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestCheckEALArgs: arguments that C would cut short, or that make the EAL
// print and exit, are refused before rte_eal_init.
func TestCheckEALArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--no-huge", "-l", "0-1", "--vdev=net_null0"}, ""},
		{[]string{"--no-huge", ""}, "EAL argument 2 is empty"},
		{[]string{"--vdev=net_null0\x00x"}, "NUL byte"},
		{[]string{"-h"}, "would make the EAL print and exit"},
	} {
		err := CheckEALArgs(tc.args)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckEALArgs(%q) = %v, want %q", tc.args, err, tc.want)
		}
	}
}
