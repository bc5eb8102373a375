package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/google/pprof/profile"
)

// ErrExists is returned, wrapped, when a file to write exists and may not
// be overwritten.
var ErrExists = errors.New("file exists")

// WriteProfile writes p to path, gzip-compressed as pprof writes it. Unless
// overwrite, it refuses a path that exists with an error wrapping
// [ErrExists] and never truncates it; a partly written file is removed.
func WriteProfile(path string, p *profile.Profile, overwrite bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if !overwrite {
		flags = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %s: choose another --write-profiles PREFIX, or pass --force to overwrite it", ErrExists, path)
	}
	if err != nil {
		return fmt.Errorf("writing profile: %w", err)
	}
	err = p.Write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
