package regfile

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Named is a path a program was given, with what gave it (a flag such
// as "-mesh", or "the input"), for messages.
type Named struct {
	Flag string
	Path string
}

// SameFile reports whether paths a and b name the same regular file, one
// that writing either would replace: one file (os.SameFile) when both
// exist, so that links and spellings such as ./a and a are seen through;
// else the same absolute path once cleaned, its folder's symbolic links
// resolved where the folder exists. Devices, pipes and sockets, and
// paths in /dev and /proc, which Create writes in place (/dev/null,
// /dev/stdout for two outputs), are never the same file; but a path in
// /proc that leads to a file elsewhere (/proc/self/cwd/a.dat) is that
// file.
func SameFile(a, b string) bool {
	if a == "" || b == "" || inDevOrProc(a) || inDevOrProc(b) {
		return false
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return fa.Mode().IsRegular() && fb.Mode().IsRegular() && os.SameFile(fa, fb)
	}
	if errA == nil && !fa.Mode().IsRegular() || errB == nil && !fb.Mode().IsRegular() {
		return false
	}
	return resolved(a) == resolved(b)
}

// inDevOrProc reports whether path is a device or stream in /dev (a
// regular file there, on /dev/shm, is a file), or in /proc and not
// leading out of it, or leads there.
func inDevOrProc(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	return devOrProc(abs, true)
}

// devOrProc is inDevOrProc for the absolute path abs; follow says to
// follow it to where it leads, which is judged alike.
func devOrProc(abs string, follow bool) bool {
	if strings.HasPrefix(abs, "/dev/") {
		switch abs {
		case "/dev/stdin", "/dev/stdout", "/dev/stderr":
			return true
		}
		if strings.HasPrefix(abs, "/dev/fd/") {
			return true
		}
		if fi, err := os.Stat(abs); err == nil {
			return !fi.Mode().IsRegular()
		}
		fi, err := os.Stat(filepath.Dir(abs)) // a file not there yet
		return err != nil || !fi.IsDir() || filepath.Dir(abs) == "/dev"
	}
	if !follow {
		return inSpecialFS(abs)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = resolved(abs) // a file not there yet: its folder's links
	}
	return devOrProc(real, false) // /proc/self/cwd/a.dat is a.dat; a link to /dev/shm/f, f
}

// resolved is path absolute and cleaned, its folder's symbolic links
// resolved when the folder exists.
func resolved(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	dir, base := filepath.Split(abs)
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(d, base)
	}
	return abs
}

// CheckOutputs refuses, before anything is written, an output that names
// the same file (SameFile) as an input, which writing it would destroy,
// or as another output: its error names both flags and the path; and an
// output whose folder does not exist (or is not a folder), which a run
// would find only when it came to write. Empty paths (an output not
// asked for) are skipped.
func CheckOutputs(inputs, outputs []Named) error {
	for i, o := range outputs {
		if o.Path == "" {
			continue
		}
		dir := filepath.Dir(o.Path)
		if fi, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s %s: its folder %s does not exist", o.Flag, o.Path, dir)
		} else if err == nil && !fi.IsDir() {
			return fmt.Errorf("%s %s: %s is not a folder", o.Flag, o.Path, dir)
		}
		for _, in := range inputs {
			if SameFile(o.Path, in.Path) {
				return sameError(o, in, "the input would be overwritten")
			}
		}
		for _, o2 := range outputs[:i] {
			if SameFile(o.Path, o2.Path) {
				return sameError(o, o2, "one output would overwrite the other")
			}
		}
	}
	return nil
}

func sameError(a, b Named, what string) error {
	if a.Path == b.Path {
		return fmt.Errorf("%s and %s both name %s: %s", a.Flag, b.Flag, a.Path, what)
	}
	return fmt.Errorf("%s %s and %s %s are the same file: %s", a.Flag, a.Path, b.Flag, b.Path, what)
}

// GeneratedOnly returns an error naming the first of the flags names
// (flags that shape what a command generates, a mesh) that fs's command
// line set beside a non-empty -input, which replaces what they shape:
// set together, one of them would be ignored.
func GeneratedOnly(fs *flag.FlagSet, input string, names ...string) error {
	in := fs.Lookup(input).Value.String()
	if in == "" {
		return nil
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && slices.Contains(names, f.Name) {
			err = fmt.Errorf("-%s %s with -%s %s: -%s shapes the generated mesh, which -%s replaces", f.Name, f.Value, input, in, f.Name, input)
		}
	})
	return err
}

// EmptyOutput returns an error naming the first of the output flags
// names that fs's command line set to "": a path naming no file (left
// out, such a flag writes nothing; given empty, it is a mistake).
func EmptyOutput(fs *flag.FlagSet, names ...string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && slices.Contains(names, f.Name) && f.Value.String() == "" {
			err = fmt.Errorf("-%s \"\": an empty output path names no file", f.Name)
		}
	})
	return err
}
