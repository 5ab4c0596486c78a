// Package atomicfile replaces files whole: a reader, or a process killed
// half-way, sees a path's old content or its new one, never a part. The
// daemons' checkpoints (switch.json, a host's progress.json) and the
// sweeps' indexes are written through it.
package atomicfile

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// Write writes data to path through a temporary file in the same directory
// (so the rename cannot cross file systems) and a rename; the file is
// readable by all (0644). On an error path is untouched and the temporary
// file removed.
func Write(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// WriteJSON writes v as indented JSON and a newline to path, as Write does.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return Write(path, append(b, '\n'))
}
