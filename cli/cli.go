// Package cli is the command-line contract every ccbed command keeps
// (cmd/switchd, cmd/hostd, cmd/pktgen, cmd/testbed and testbed's
// subcommands; the measuring tools cmd/costmodel and cmd/crosscheck too), so
// that they behave alike:
//
//   - -h or -help prints the usage to standard output and exits 0;
//   - -version prints the build (package buildinfo) and exits 0;
//   - a bad flag, a bad flag value, a stray or missing positional argument is
//     a usage error: the error, then the usage, on standard error, exit 2;
//   - an error at run time (a bad file, DPDK failing) is one line
//     "command: error" on standard error, exit 1;
//   - durations are Go durations ("2s", "500ms"): Command.Duration;
//   - -o DIR is the output directory of the command that writes it, in
//     every command: testbed run's the run's own directory, sweep's the
//     sweep's, compare's the plots', collect's the merged run's, nodes' the
//     per-node files', export-flows' the one its flow.txt goes in. A root
//     below which a command makes directories of its own is another flag
//     (testbed's -results). A flag whose meaning changes keeps the old one
//     for one release where the new one cannot hold, with a warning that
//     says what to write (docs/results.md, "-o: one meaning");
//   - logs go to standard error through one zap logger (Command.Logging,
//     Command.Log): -v adds debug messages, -q leaves warnings and errors
//     only, -log-format json makes every line a JSON object; what a command
//     produces (results, tables, -json summaries) stays on standard output,
//     unaffected by them. Long runs report progress (Command.Progress).
//
// A main builds a Command, declares its flags on Command.Flags, calls Parse
// and returns Exit(err) for whatever error comes back:
//
//	c := cli.New("switchd", "-c switch.toml [flags]", "the DPDK software switch").Logging()
//	path := c.Flags.String("c", "", "switch TOML file (required)")
//	if _, err := c.Parse(args); err != nil {
//		return c.Exit(err)
//	}
//	log := c.Log() // pass it on: packages take a *zap.Logger, never a global
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ccbed/ccbed/buildinfo"
	"github.com/ccbed/ccbed/config"
	"go.uber.org/zap"
)

// Exit codes.
const (
	// ExitOK: the command did what was asked (help and -version included).
	ExitOK = 0
	// ExitRuntime: the command line was fine; running it failed.
	ExitRuntime = 1
	// ExitUsage: the command line was wrong (flag package convention).
	ExitUsage = 2
)

// ErrHelp is returned by Parse after it printed the usage (-h, -help) or the
// version (-version) to standard output: nothing more is to be done, and
// Exit maps it to ExitOK.
var ErrHelp = errors.New("cli: help or version printed")

// UsageError is a mistake on the command line: Exit prints it and the
// command's usage to standard error and maps it to ExitUsage.
type UsageError struct {
	// Err says what is wrong.
	Err error
	// usage writes the command's usage; nil for none.
	usage func(io.Writer)
}

// Error is the underlying error's text.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *UsageError) Unwrap() error { return e.Err }

// Command is one command's (or subcommand's) flags, positional arguments and
// usage text.
type Command struct {
	// Name is what the usage calls the command: "switchd", "testbed run".
	Name string
	// Synopsis is the usage line after the name: "-c switch.toml [flags]".
	Synopsis string
	// Summary is a sentence or two printed under the usage line; may be empty.
	Summary string
	// Flags are the command's flags; Parse adds -version.
	Flags *flag.FlagSet
	// MinArgs and MaxArgs bound the number of positional arguments (MaxArgs
	// < 0: no bound). New sets both to 0: no positional arguments.
	MinArgs, MaxArgs int
	// Args names the positional arguments in errors: "EXPERIMENT.toml".
	Args string
	// Stdout receives help and -version (default os.Stdout).
	Stdout io.Writer
	// Stderr receives the logs, progress and errors of Log, Progress and
	// Exit (nil: os.Stderr). Set it before the first of those calls.
	Stderr  io.Writer
	version bool

	logf     *logFlags // -v, -q, -log-format; nil without Logging
	logOnce  sync.Once
	logger   *zap.Logger
	sinkOnce sync.Once
	sink     *progressSink
}

// New returns a command that takes no positional arguments.
func New(name, synopsis, summary string) *Command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // Parse reports errors itself
	fs.Usage = func() {}
	c := &Command{Name: name, Synopsis: synopsis, Summary: summary, Flags: fs, Stdout: os.Stdout}
	fs.BoolVar(&c.version, "version", false, "print the version (module, VCS revision, Go) and exit")
	return c
}

// Positional sets the number of positional arguments the command takes and
// what they are called; max < 0 is no upper bound.
func (c *Command) Positional(name string, min, max int) *Command {
	c.Args, c.MinArgs, c.MaxArgs = name, min, max
	return c
}

// Usage writes the usage line, the summary and the flags to w.
func (c *Command) Usage(w io.Writer) {
	fmt.Fprintln(w, strings.TrimSpace("usage: "+c.Name+" "+c.Synopsis))
	if c.Summary != "" {
		fmt.Fprintf(w, "\n%s\n", c.Summary)
	}
	n := 0
	c.Flags.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nflags:")
		c.Flags.SetOutput(w)
		c.Flags.PrintDefaults()
		c.Flags.SetOutput(io.Discard)
	}
}

// Errorf is a usage error of c: Exit prints it with c's usage.
func (c *Command) Errorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...), usage: c.Usage}
}

// Parse parses args: flags may come before, between and after the positional
// arguments ("--" ends the flags). It returns the positional arguments, or
// ErrHelp after printing the usage or the version, or a *UsageError for a
// bad flag or a wrong number of positional arguments.
func (c *Command) Parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := c.Flags.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.Usage(c.Stdout)
				return nil, ErrHelp
			}
			return nil, &UsageError{Err: err, usage: c.Usage}
		}
		rest := c.Flags.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if c.version {
		fmt.Fprintf(c.Stdout, "%s %s\n", c.Name, buildinfo.Read())
		return nil, ErrHelp
	}
	if err := c.checkLogFlags(); err != nil {
		return nil, err
	}
	what := c.Args
	if what == "" {
		what = "arguments"
	}
	switch {
	case len(pos) < c.MinArgs:
		return nil, c.Errorf("missing %s: want %s, got %d", what, count(c.MinArgs, c.MaxArgs), len(pos))
	case c.MaxArgs >= 0 && len(pos) > c.MaxArgs:
		if c.MaxArgs == 0 {
			return nil, c.Errorf("unexpected argument %q: %s takes no positional arguments", pos[0], c.Name)
		}
		return nil, c.Errorf("unexpected argument %q: want %s %s, got %d", pos[c.MaxArgs], count(c.MinArgs, c.MaxArgs), what, len(pos))
	}
	return pos, nil
}

func count(min, max int) string {
	switch {
	case max < 0:
		return fmt.Sprintf("at least %d", min)
	case min == max:
		return strconv.Itoa(min)
	default:
		return fmt.Sprintf("%d to %d", min, max)
	}
}

// Set reports whether the flag name was given on the command line.
func (c *Command) Set(name string) bool {
	set := false
	c.Flags.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// Exit writes err for the command prog to standard error and returns the
// exit code: ExitOK for nil and ErrHelp, ExitUsage for a *UsageError (the
// error, then the usage), ExitRuntime for anything else.
func Exit(prog string, err error) int { return ExitTo(os.Stderr, prog, err) }

// ExitTo is Exit writing to w.
func ExitTo(w io.Writer, prog string, err error) int {
	if err == nil || errors.Is(err, ErrHelp) {
		return ExitOK
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(w, "%s: %v\n", prog, err)
		if ue.usage != nil {
			ue.usage(w)
		}
		return ExitUsage
	}
	fmt.Fprintf(w, "%s: %v\n", prog, err)
	return ExitRuntime
}

// MaxDuration bounds every duration flag: config.MaxTimeNs (2^60 ns, about
// 36.5 years), the bound of every time in a config file.
const MaxDuration = time.Duration(config.MaxTimeNs)

// ParseDuration parses a duration flag: a Go duration ("2s", "500ms",
// "1m30s") in [0, MaxDuration]. A bare number other than 0 is an error that
// says to write the unit, so that "-duration 2" is never read as 2 ns or 2 ms.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		if f == 0 {
			return 0, nil // 0 is 0 in every unit
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("%q is not a duration: write a Go duration such as \"2s\" or \"500ms\"", s)
		}
		return 0, fmt.Errorf("%q has no unit: write a Go duration such as \"%gs\" or \"500ms\"", s, f)
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: write a Go duration such as \"2s\" or \"500ms\"", s)
	}
	if d < 0 || d > MaxDuration {
		return 0, fmt.Errorf("%q: want a duration from 0 to 2^60 ns (about 36 years)", s)
	}
	return d, nil
}

// durationValue is a flag.Value of ParseDuration.
type durationValue struct{ d *time.Duration }

func (v durationValue) String() string {
	if v.d == nil {
		return time.Duration(0).String()
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	d, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

// Duration declares a duration flag on c that ParseDuration parses: a Go
// duration, never a bare number, never negative or absurd.
func (c *Command) Duration(p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	if !strings.Contains(usage, "`") {
		usage += " (a Go `duration`)"
	}
	c.Flags.Var(durationValue{p}, name, usage)
}
