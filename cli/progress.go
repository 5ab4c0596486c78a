package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Progress reports a long run's progress at info level, at most once a
// period. On a terminal, in the console log format, a report is one line
// rewritten in place (ended by the next log line, by a write through Writer
// and by Done); elsewhere it is a log entry, msg "progress", with the
// caller's fields. A nil *Progress reports nothing: Command.Progress returns
// nil under -q and for a period of 0.
type Progress struct {
	log   *zap.Logger
	sink  *progressSink
	tty   bool
	every time.Duration
	next  time.Time
	now   func() time.Time
}

// Progress returns c's progress reporter, reporting at most once every
// period; nil (report nothing) when every <= 0 or the log level is above
// info (-q). Call it after Parse.
func (c *Command) Progress(every time.Duration) *Progress {
	log := c.Log()
	if every <= 0 || !log.Core().Enabled(zapcore.InfoLevel) {
		return nil
	}
	sink := c.stderr()
	return &Progress{log: log, sink: sink, every: every, now: time.Now,
		tty: c.LogOptions().Format == LogConsole && isTerminal(sink.w)}
}

// Report reports the run's progress when a period has passed since the last
// report (the first call always reports): line on a terminal, fields in a
// log entry. Call it from one goroutine at a time.
func (p *Progress) Report(line string, fields ...zap.Field) {
	if p == nil {
		return
	}
	now := p.now()
	if now.Before(p.next) {
		return
	}
	p.next = now.Add(p.every)
	if p.tty {
		p.sink.line(line)
		return
	}
	p.log.Info("progress", fields...)
}

// Done ends a progress line left on the terminal; call it when the run ends.
func (p *Progress) Done() {
	if p != nil {
		p.sink.end()
	}
}

// Writer returns w (standard output, which may share the terminal) wrapped so
// that a write first ends a progress line left on the terminal.
func (p *Progress) Writer(w io.Writer) io.Writer {
	if p == nil || !p.tty {
		return w
	}
	return endingWriter{p.sink, w}
}

// progressSink is a command's standard error: a log line written to it first
// ends the progress line a terminal shows, if any.
type progressSink struct {
	mu      sync.Mutex
	w       io.Writer
	pending bool // a progress line without its newline is on the terminal
}

// Write writes a log line (or an error), after ending a progress line.
func (s *progressSink) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endLocked()
	return s.w.Write(b)
}

// line shows text as the progress line: carriage return, erase the line,
// text, no newline.
func (s *progressSink) line(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, "\r\x1b[K%s", text)
	s.pending = true
}

// end ends the progress line, if one is shown.
func (s *progressSink) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endLocked()
}

func (s *progressSink) endLocked() {
	if s.pending {
		s.pending = false
		io.WriteString(s.w, "\n")
	}
}

// endingWriter ends the progress line before each write to w.
type endingWriter struct {
	s *progressSink
	w io.Writer
}

func (e endingWriter) Write(b []byte) (int, error) {
	e.s.end()
	return e.w.Write(b)
}

// isTerminal reports whether w is a terminal: a character device other than
// the null device.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}
