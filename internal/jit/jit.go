// Package jit compiles generated C source into shared libraries, caches them
// on disk and in memory, and loads them into the process.
//
// The disk cache is keyed by a SHA-256 of the source, the compiler's identity
// (its path and version line), the flags and the host CPU. Every entry is
// written to a temporary file and renamed into place, so processes that build
// the same loop at the same time never see a partial file. Each entry ends with
// a trailer holding a checksum of the library; an entry whose checksum does not
// match (a truncated or damaged file) is rebuilt.
package jit

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

static void *op2_dlopen(const char *path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
static const char *op2_dlerror(void) { const char *e = dlerror(); return e ? e : "unknown dlopen error"; }
static void *op2_dlsym(void *h, const char *name) { dlerror(); return dlsym(h, name); }
*/
import "C"

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Stats counts what the JIT did in this process.
type Stats struct {
	Compiles  uint64 // compiler invocations that succeeded
	DiskHits  uint64 // libraries loaded from the disk cache without compiling
	Rebuilds  uint64 // damaged cache entries detected and rebuilt
	MemoryHit uint64 // builds answered from the in-process cache
}

var stats struct{ compiles, diskHits, rebuilds, memHits atomic.Uint64 }

// ReadStats returns the counters.
func ReadStats() Stats {
	return Stats{
		Compiles:  stats.compiles.Load(),
		DiskHits:  stats.diskHits.Load(),
		Rebuilds:  stats.rebuilds.Load(),
		MemoryHit: stats.memHits.Load(),
	}
}

// Compiler builds shared libraries with one C compiler and one set of flags.
type Compiler struct {
	CC       string   // command, e.g. "cc" or "gcc-12"
	Flags    []string // flags added to every build (optimisation, -fopenmp)
	CacheDir string

	idOnce sync.Once
	id     string
	idErr  error
}

// loaded holds every library this process has loaded, by cache key. It is
// process wide because the dynamic loader identifies libraries by path: a
// path loaded once can never be loaded again with new contents.
var loaded = struct {
	sync.Mutex
	m map[string]*Library
}{m: map[string]*Library{}}

// Library is a loaded shared library.
type Library struct {
	Path       string // the cache entry that was loaded
	SourcePath string // the generated C file kept next to it
	handle     unsafe.Pointer
}

// CompileError is returned when the C compiler rejects generated code.
type CompileError struct {
	Compiler   string
	SourcePath string // where the generated source was written
	Output     string // the compiler's messages
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("C compilation failed (%s; generated source %s):\n%s", e.Compiler, e.SourcePath, strings.TrimSpace(e.Output))
}

const trailerMagic = "GOOP2LIB"
const trailerSize = sha256.Size + len(trailerMagic)

// identity returns the compiler's resolved path and version line.
func (c *Compiler) identity() (string, error) {
	c.idOnce.Do(func() {
		path, err := exec.LookPath(c.CC)
		if err != nil {
			c.idErr = fmt.Errorf("the C compiler %q was not found (install gcc, e.g. `apt-get install gcc`, or set CC): %w", c.CC, err)
			return
		}
		out, err := exec.Command(path, "--version").CombinedOutput()
		if err != nil {
			c.idErr = fmt.Errorf("the C compiler %q does not run: %v: %s", path, err, out)
			return
		}
		line, _, _ := strings.Cut(string(out), "\n")
		c.id = path + "\n" + line + "\n" + cpuIdentity()
	})
	return c.id, c.idErr
}

// cpuIdentity names the host CPU, since -march=native code is CPU specific.
func cpuIdentity() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown-cpu"
	}
	var model, flags string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			if model == "" {
				model = strings.TrimSpace(v)
			}
		case "flags":
			if flags == "" {
				flags = strings.TrimSpace(v)
			}
		}
	}
	sum := sha256.Sum256([]byte(flags))
	return model + " " + hex.EncodeToString(sum[:8])
}

// Key returns the cache key of a build of src with extra flags.
func (c *Compiler) Key(src string, extra []string) (string, error) {
	id, err := c.identity()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte("goop2-jit-v1\x00"))
	h.Write([]byte(id))
	h.Write([]byte{0})
	for _, f := range c.Flags {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	h.Write([]byte{1})
	for _, f := range extra {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	h.Write([]byte{1})
	h.Write([]byte(src))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Build returns the loaded library for src, compiling it only when neither
// this process nor the disk cache has it.
func (c *Compiler) Build(src string, extra ...string) (*Library, error) {
	key, err := c.Key(src, extra)
	if err != nil {
		return nil, err
	}
	loaded.Lock()
	defer loaded.Unlock()
	if lib, ok := loaded.m[key]; ok {
		stats.memHits.Add(1)
		return lib, nil
	}
	if err := os.MkdirAll(c.CacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating JIT cache directory: %w", err)
	}
	libPath := filepath.Join(c.CacheDir, key+".so")
	srcPath := filepath.Join(c.CacheDir, key+".c")

	switch err := verify(libPath); {
	case err == nil:
		lib, lerr := load(libPath)
		if lerr == nil {
			lib.SourcePath = srcPath
			stats.diskHits.Add(1)
			loaded.m[key] = lib
			return lib, nil
		}
		stats.rebuilds.Add(1) // valid checksum yet unloadable: rebuild
	case errors.Is(err, os.ErrNotExist):
	default:
		stats.rebuilds.Add(1)
	}

	if err := c.compile(src, extra, srcPath, libPath); err != nil {
		return nil, err
	}
	lib, err := load(libPath)
	if err != nil {
		return nil, err
	}
	lib.SourcePath = srcPath
	loaded.m[key] = lib
	return lib, nil
}

// verify checks a cache entry's trailer against its contents.
func verify(path string) error {
	_, err := ReadBlob(path)
	return err
}

// ReadBlob reads a cache entry written by WriteBlob and returns its body. A
// missing entry gives an error satisfying errors.Is(err, os.ErrNotExist); a
// truncated or damaged one any other error.
func ReadBlob(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < trailerSize || string(b[len(b)-len(trailerMagic):]) != trailerMagic {
		return nil, fmt.Errorf("cache entry %s has no valid trailer", path)
	}
	body := b[:len(b)-trailerSize]
	want := b[len(body) : len(body)+sha256.Size]
	got := sha256.Sum256(body)
	if !bytes.Equal(got[:], want) {
		return nil, fmt.Errorf("cache entry %s is damaged (checksum mismatch)", path)
	}
	return body, nil
}

// WriteBlob stores body at path with a checksum trailer, atomically.
func WriteBlob(path string, body []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	out := make([]byte, 0, len(body)+trailerSize)
	out = append(out, body...)
	out = append(out, sum[:]...)
	out = append(out, trailerMagic...)
	return writeAtomic(path, out)
}

// Note* count work done by other code generators sharing the cache (device
// backends that compile through their driver), in the same statistics.
func NoteCompile() { stats.compiles.Add(1) }

// NoteDiskHit counts a program loaded from the disk cache.
func NoteDiskHit() { stats.diskHits.Add(1) }

// NoteRebuild counts a damaged cache entry that was rebuilt.
func NoteRebuild() { stats.rebuilds.Add(1) }

func tempName(dir, base string) string {
	var r [6]byte
	_, _ = rand.Read(r[:])
	return filepath.Join(dir, fmt.Sprintf(".%s.%d.%s.tmp", base, os.Getpid(), hex.EncodeToString(r[:])))
}

// writeAtomic writes data to path through a temporary file and a rename.
func writeAtomic(path string, data []byte) error {
	tmp := tempName(filepath.Dir(path), filepath.Base(path))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func (c *Compiler) compile(src string, extra []string, srcPath, libPath string) error {
	if err := writeAtomic(srcPath, []byte(src)); err != nil {
		return fmt.Errorf("writing generated source: %w", err)
	}
	// Compile a private copy of the source so that a concurrent writer of
	// srcPath cannot change what this compiler reads.
	tmpSrc := tempName(c.CacheDir, "src") + ".c"
	if err := os.WriteFile(tmpSrc, []byte(src), 0o644); err != nil {
		return fmt.Errorf("writing generated source: %w", err)
	}
	defer os.Remove(tmpSrc)
	tmpLib := tempName(c.CacheDir, "lib") + ".so"
	defer os.Remove(tmpLib)

	args := append([]string{}, c.Flags...)
	args = append(args, extra...)
	args = append(args, "-fPIC", "-shared", "-fvisibility=hidden", "-o", tmpLib, tmpSrc)
	cmd := exec.Command(c.CC, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.ReplaceAll(string(out), tmpSrc, srcPath)
		if len(strings.TrimSpace(msg)) == 0 {
			msg = err.Error()
		}
		return &CompileError{Compiler: c.CC + " " + strings.Join(args[:len(args)-3], " "), SourcePath: srcPath, Output: msg}
	}
	stats.compiles.Add(1)
	body, err := os.ReadFile(tmpLib)
	if err != nil {
		return fmt.Errorf("reading compiled library: %w", err)
	}
	if err := WriteBlob(libPath, body); err != nil {
		return fmt.Errorf("storing compiled library in the cache: %w", err)
	}
	return nil
}

func load(path string) (*Library, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	h := C.op2_dlopen(cpath)
	if h == nil {
		return nil, fmt.Errorf("loading %s: %s", path, C.GoString(C.op2_dlerror()))
	}
	return &Library{Path: path, handle: h}, nil
}

// Symbol returns the address of a symbol in the library.
func (l *Library) Symbol(name string) (unsafe.Pointer, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	p := C.op2_dlsym(l.handle, cname)
	if p == nil {
		return nil, fmt.Errorf("symbol %q not found in %s", name, l.Path)
	}
	return p, nil
}
