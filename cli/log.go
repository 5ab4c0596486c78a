package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Log formats: the values of -log-format.
const (
	// LogConsole is one line per entry for people: "switchd: message
	// {"key": value, ...}", the level after the command's name unless it is
	// info ("switchd: WARN: ..."), no timestamp.
	LogConsole = "console"
	// LogJSON is one JSON object per line: "level", "ts" (RFC 3339, ns),
	// "logger" (the command's name), "msg" and the entry's fields.
	LogJSON = "json"
)

// LogOptions are what -v, -q and -log-format ask for.
type LogOptions struct {
	// Level is the least severe level written: zap.DebugLevel (-v),
	// zap.InfoLevel (the default) or zap.WarnLevel (-q).
	Level zapcore.Level
	// Format is LogConsole ("" too) or LogJSON.
	Format string
}

// NewLogger returns the logger of the command prog, writing o.Format lines of
// level o.Level and above to w. Writes to w are serialised; w should be
// standard error, never the stream that carries a command's results.
func NewLogger(w io.Writer, prog string, o LogOptions) (*zap.Logger, error) {
	var enc zapcore.Encoder
	switch o.Format {
	case LogConsole, "":
		enc = zapcore.NewConsoleEncoder(zapcore.EncoderConfig{
			MessageKey: "msg", LevelKey: "level", ConsoleSeparator: " ", LineEnding: "\n",
			// The console's level encoder writes the command's name first,
			// so that every line starts "prog: " as the commands' errors do.
			EncodeLevel: func(l zapcore.Level, a zapcore.PrimitiveArrayEncoder) {
				a.AppendString(prog + ":")
				if l != zapcore.InfoLevel {
					a.AppendString(l.CapitalString() + ":")
				}
			},
			EncodeDuration: zapcore.StringDurationEncoder,
		})
	case LogJSON:
		enc = zapcore.NewJSONEncoder(zapcore.EncoderConfig{
			MessageKey: "msg", LevelKey: "level", TimeKey: "ts", NameKey: "logger", LineEnding: "\n",
			EncodeLevel: zapcore.LowercaseLevelEncoder, EncodeTime: zapcore.RFC3339NanoTimeEncoder,
			EncodeDuration: zapcore.StringDurationEncoder, EncodeName: zapcore.FullNameEncoder,
		})
	default:
		return nil, fmt.Errorf("log format %q: want %s or %s", o.Format, LogConsole, LogJSON)
	}
	ws := zapcore.Lock(zapcore.AddSync(w))
	return zap.New(zapcore.NewCore(enc, ws, o.Level), zap.ErrorOutput(ws)).Named(prog), nil
}

// logFlags are the values of -v, -q and -log-format.
type logFlags struct {
	verbose, quiet bool
	format         formatValue
}

// formatValue is -log-format: console or json.
type formatValue string

func (f *formatValue) String() string {
	if f == nil || *f == "" {
		return LogConsole
	}
	return string(*f)
}

func (f *formatValue) Set(s string) error {
	if s != LogConsole && s != LogJSON {
		return fmt.Errorf("want %s or %s", LogConsole, LogJSON)
	}
	*f = formatValue(s)
	return nil
}

// Logging declares -v (debug), -q (warnings and errors only) and -log-format
// (console or json) on c; Parse refuses -v with -q. Log then returns the
// logger they ask for. It returns c.
func (c *Command) Logging() *Command {
	if c.logf != nil {
		return c
	}
	c.logf = &logFlags{}
	c.Flags.BoolVar(&c.logf.verbose, "v", false, "verbose: log debug messages too")
	c.Flags.BoolVar(&c.logf.quiet, "q", false, "quiet: log warnings and errors only (no progress)")
	c.Flags.Var(&c.logf.format, "log-format", "log lines on standard error as `console|json` (json: one object per line)")
	return c
}

// checkLogFlags is Parse's check of the log flags.
func (c *Command) checkLogFlags() error {
	if c.logf != nil && c.logf.verbose && c.logf.quiet {
		return c.Errorf("give -v or -q, not both")
	}
	return nil
}

// LogOptions are the options the command line asked for: the defaults (info,
// console) when c has no log flags (Logging) or before Parse.
func (c *Command) LogOptions() LogOptions {
	o := LogOptions{Level: zapcore.InfoLevel, Format: LogConsole}
	if c.logf != nil {
		o.Format = c.logf.format.String()
		switch {
		case c.logf.verbose:
			o.Level = zapcore.DebugLevel
		case c.logf.quiet:
			o.Level = zapcore.WarnLevel
		}
	}
	return o
}

// Quiet reports whether -q was given.
func (c *Command) Quiet() bool { return c.logf != nil && c.logf.quiet }

// Log returns c's logger (NewLogger with LogOptions, named after the first
// word of c.Name), writing to c.Stderr; the same logger on every call. Call
// it after Parse.
func (c *Command) Log() *zap.Logger {
	c.logOnce.Do(func() {
		prog, _, _ := strings.Cut(c.Name, " ")
		l, err := NewLogger(c.stderr(), prog, c.LogOptions())
		if err != nil { // formatValue lets only valid formats through
			panic(err)
		}
		c.logger = l
	})
	return c.logger
}

// stderr is where c's logs, progress and errors go: c.Stderr, or standard
// error behind a progressSink (so that a log line never lands in the middle
// of a progress line on a terminal).
func (c *Command) stderr() *progressSink {
	c.sinkOnce.Do(func() {
		w := c.Stderr
		if w == nil {
			w = os.Stderr
		}
		c.sink = &progressSink{w: w}
	})
	return c.sink
}

// Exit is the package-level Exit for c, with two differences: errors go to
// c.Stderr, and under -log-format json a run-time error is one JSON entry
// (level "error", msg "failed", the error in "error"), so that standard error
// stays one object per line. Usage errors stay text, with the usage.
func (c *Command) Exit(err error) int {
	prog, _, _ := strings.Cut(c.Name, " ")
	var ue *UsageError
	if err == nil || errors.Is(err, ErrHelp) || errors.As(err, &ue) || c.LogOptions().Format != LogJSON {
		return ExitTo(c.stderr(), prog, err)
	}
	c.Log().Error("failed", zap.Error(err))
	c.Log().Sync()
	return ExitRuntime
}

var _ flag.Value = (*formatValue)(nil)
