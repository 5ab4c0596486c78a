package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Caps on the files ccbed reads. Each is far above what the file holds in
// practice and far below what would exhaust memory: a file over its cap is an
// error, never read to its end.
const (
	// MaxTOMLBytes caps a TOML file (configs, experiments): ours are a few KB,
	// and the decoder takes about 100 bytes of memory per byte of text.
	MaxTOMLBytes = 1 << 20
	// MaxCDFBytes caps a flow-size CDF file (the papers' have a few dozen
	// lines).
	MaxCDFBytes = 1 << 20
	// MaxNS3Bytes caps an HPCC ns-3 topology or flow file: 64 MiB is about
	// two million flow lines, each kept as a record of a few dozen bytes.
	MaxNS3Bytes = 64 << 20
)

// Open opens path for reading if it is a regular file of at most maxBytes
// bytes: not a directory, a device (/dev/zero never ends, /dev/urandom
// neither), a FIFO (whose open would block until a writer comes) or a socket.
// The FIFO check does not block: the file is opened non-blocking and checked
// with fstat on the open descriptor, so it cannot change between check and
// read. The reader fails with an *Error if the file grows past maxBytes while
// it is read. The caller closes it. Errors are *Error naming path.
func Open(path string, maxBytes int64) (io.ReadCloser, error) {
	// A stat first spares a device the open (some act on it); the fstat
	// after the open is the check that holds.
	if st, err := os.Stat(path); err != nil {
		return nil, fileError(path, err)
	} else if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fileError(path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fileError(path, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(path, st.Mode())
	}
	if st.Size() > maxBytes {
		f.Close()
		return nil, tooBig(path, st.Size(), maxBytes)
	}
	return &capped{f: f, path: path, left: maxBytes, max: maxBytes}, nil
}

// ReadFile reads a whole regular file of at most maxBytes bytes (see Open).
func ReadFile(path string, maxBytes int64) ([]byte, error) {
	r, err := Open(path, maxBytes)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// capped reads a file and fails once it has given more than max bytes.
type capped struct {
	f         *os.File
	path      string
	left, max int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more tells a file that ends here from one that grew.
		var one [1]byte
		if n, _ := c.f.Read(one[:]); n > 0 {
			return 0, tooBig(c.path, -1, c.max)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.f.Read(p)
	c.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fileError(c.path, err)
	}
	return n, err
}

func (c *capped) Close() error { return c.f.Close() }

func tooBig(path string, size, max int64) error {
	if size < 0 {
		return &Error{File: path, Msg: fmt.Sprintf("grew past the %d-byte cap while read", max)}
	}
	return &Error{File: path, Msg: fmt.Sprintf("%d bytes: larger than the %d-byte cap", size, max)}
}

// fileError makes an *Error of an os error, without repeating the path.
func fileError(path string, err error) error {
	var pe *fs.PathError
	msg := err.Error()
	if errors.As(err, &pe) {
		msg = pe.Err.Error()
	}
	return &Error{File: path, Msg: msg, Err: err}
}

func notRegular(path string, m fs.FileMode) error {
	return &Error{File: path, Msg: fmt.Sprintf("not a regular file (%s)", fileKind(m))}
}

// fileKind names a file type that is not regular.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "mode " + m.String()
}
