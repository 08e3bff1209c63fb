// Package cache is GoOP2's on-disk cache of compiled code: host shared
// libraries, OpenCL device binaries and whatever else is expensive to
// rebuild. It is pure Go and knows nothing about compilers; callers decide
// what an entry holds and what it is bound to.
//
// # Trust
//
// The cache directory is private to the user running the process. Open
// creates it with mode 0700 and refuses a directory owned by another user or
// writable by group or others, and a directory below a parent that another
// user could rename or replace (a parent must be owned by root or by the
// user, and be writable by nobody else unless it has the sticky bit, as /tmp
// does). A symbolic link on the way to the directory must be owned by the
// user or root and sit in a directory that passes the parent check, so
// that nobody else can redirect the cache. Every entry is opened without
// following symbolic links, checked with fstat on the open descriptor
// (owned by the user, a regular file, writable by nobody else) and read from
// that same descriptor, so an entry another user could have written is never
// used.
//
// # Entries
//
// An entry is a body followed by a trailer:
//
//	body | SHA-256(key) | SHA-256(version, key, body) | "GOOP2CE2"
//
// The key is whatever identifies the entry's contents for its writer (for
// compiled code: the cache key and the hash of the generated source). Get
// returns an entry's body only if the trailer is intact, the checksum
// matches and the entry was written for the key asked for, so a truncated,
// damaged, stale or swapped entry (another loop's valid entry copied over
// this one) is reported as [ErrInvalid] and can be rebuilt. A trailer does
// not stop the dynamic loader from loading a shared library, so a library
// entry can be loaded by path once verified.
//
// # Writing
//
// Entries and other files are written to a temporary file in the cache
// directory and renamed into place, so concurrent processes never see a
// partial file. Temporary files are removed on every error path.
//
// # Temporary files left behind
//
// A process killed while it writes (a compile interrupted midway) cannot
// remove its temporary files. Each process that opens a cache directory
// holds an exclusive lock (flock) on a file of its own there, ".live."
// and a token unique to the process, for as long as it runs, and the
// names of its temporary files carry the same token. Sweep (run by the
// first Open of a directory in each process, and by the JIT before each
// compile) removes the temporary files of every token whose lock it can
// take, since the lock goes with its process however that ends, and then
// that token's lock file; a token whose lock is held belongs to a live
// process, whose files are never touched. Temporary files without a lock
// file to check (written by older versions, or where locks are refused)
// are removed once they are StaleAge old.
package cache

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/goop2/op2/internal/regfile"
)

// ErrInvalid is matched (with errors.Is) by the error Get returns for an
// entry that exists but must not be used: truncated, damaged, written for
// another key, or writable by someone else.
var ErrInvalid = errors.New("invalid cache entry")

// StaleAge is how old a temporary file whose writer cannot be checked
// (no lock file names it) must be before Sweep removes it as left behind
// by a process that was killed.
const StaleAge = time.Hour

const (
	magic       = "GOOP2CE2"
	version     = "goop2-cache-v2\x00"
	trailerSize = 2*sha256.Size + len(magic)
	tempMark    = ".tmp"
	liveMark    = ".live."
)

// Dir is an open cache directory.
type Dir struct {
	path string
}

// swept records the directories whose stale temporary files this process
// has already removed.
var swept sync.Map

// token identifies this process in the names of its temporary files and
// of its lock files: its pid (for people) and 64 random bits (unique even
// across pid namespaces and pid reuse).
var token = func() string {
	var r [8]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(r[:]))
}()

// live holds, per cache directory (its resolved path), the open lock file
// that tells other processes this one is alive. The descriptors stay open,
// and locked, until the process ends.
var live struct {
	sync.Mutex
	files map[string]*os.File
}

// holdLive creates this process's lock file in the directory, locked, the
// first time the process opens it. The file is made and locked under a
// temporary name and renamed into place, so that no other process can
// take its lock first. Without it (a file system that refuses locks) this
// process's temporary files are swept by age alone.
func (d *Dir) holdLive() {
	live.Lock()
	defer live.Unlock()
	if _, ok := live.files[d.path]; ok {
		return
	}
	f, err := d.CreateTemp("live", "")
	if err != nil {
		return
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil || os.Rename(f.Name(), d.liveFile(token)) != nil {
		os.Remove(f.Name())
		f.Close()
		return
	}
	if live.files == nil {
		live.files = map[string]*os.File{}
	}
	live.files[d.path] = f
}

// liveFile is the path of the lock file of the process whose token is tok.
func (d *Dir) liveFile(tok string) string { return d.File(liveMark + tok) }

// Open opens the cache directory dir, creating it (mode 0700) if needed. A
// relative dir is taken relative to the working directory. Open refuses a
// directory another user could write to (see the package comment) with an
// error that names the directory, its owner and mode, and what to do. The
// first Open of a directory in a process removes stale temporary files.
func Open(dir string) (*Dir, error) {
	if dir == "" {
		return nil, errors.New("cache: no cache directory configured (set Config.CacheDir or OP2_CACHE_DIR)")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("cache: cache directory %q: %w", dir, err)
	}
	// Symbolic links on the way are checked before anything is created
	// through them, and again once the directory exists.
	real, err := resolve(abs)
	if err != nil {
		return nil, err
	}
	// The parents that exist are checked before anything is created in
	// them, all of them again once the directory exists.
	if err := checkParents(real, abs, true); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(real, 0o700); err != nil {
		return nil, fmt.Errorf("cache: creating the cache directory: %w (set Config.CacheDir or OP2_CACHE_DIR to a directory you can write)", err)
	}
	if real, err = resolve(abs); err != nil {
		return nil, err
	}
	if err := checkDir(real, true); err != nil {
		return nil, err
	}
	if err := checkParents(real, abs, false); err != nil {
		return nil, err
	}
	d := &Dir{path: real}
	d.holdLive()
	if _, done := swept.LoadOrStore(real, true); !done {
		d.Sweep()
	}
	return d, nil
}

// checkParents checks the parent directories of real, the cache
// directory abs resolved (see checkDir); existing: only those that exist.
func checkParents(real, abs string, existing bool) error {
	for p := filepath.Dir(real); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || !existing {
			if err := checkDir(p, false); err != nil {
				return fmt.Errorf("%w (cache directory %s)", err, abs)
			}
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// maxLinks bounds the symbolic links followed while resolving a path, as
// the kernel's own limit does.
const maxLinks = 40

// resolve returns the path abs (absolute and clean) names with every
// symbolic link replaced by its target, like filepath.EvalSymlinks, but
// refuses a link another user could have made or could change: a link
// must be owned by the user or root, and the directory holding it must pass
// the parent check (owned by the user or root, writable by nobody else
// unless sticky). A missing tail of the path is kept as written, so that
// Open can create it.
func resolve(abs string) (string, error) {
	cur := string(filepath.Separator)
	rest := strings.Split(strings.TrimPrefix(abs, cur), cur)
	links := 0
	for len(rest) > 0 {
		comp := rest[0]
		rest = rest[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, comp)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		if err != nil {
			return "", fmt.Errorf("cache: cache directory %s: %w", abs, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("cache: cache directory %s: too many levels of symbolic links", abs)
		}
		if err := checkLink(next, fi, cur); err != nil {
			return "", fmt.Errorf("%w (cache directory %s)", err, abs)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("cache: cache directory %s: %w", abs, err)
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		rest = append(strings.Split(target, string(filepath.Separator)), rest...)
	}
	return cur, nil
}

// checkLink verifies that the symbolic link at path (fi from Lstat), held
// by directory dir (a resolved path), can only have been made and only be
// changed by the user or root.
func checkLink(path string, fi fs.FileInfo, dir string) error {
	me := os.Geteuid()
	if uid, ok := owner(fi); ok && uid != me && uid != 0 {
		return fmt.Errorf("cache: refusing symbolic link %s: it is owned by uid %d (neither you, uid %d, nor root), who chose where it points; set Config.CacheDir or OP2_CACHE_DIR to a directory of your own", path, uid, me)
	}
	if err := checkDir(dir, false); err != nil {
		return fmt.Errorf("%w (it holds the symbolic link %s, which others could replace)", err, path)
	}
	return nil
}

// checkDir verifies that path is a directory nobody but the current user
// (and root) can change: for the cache directory itself, owned by the user
// and writable by nobody else; for a parent, owned by the user or root and
// writable by nobody else unless sticky.
func checkDir(path string, leaf bool) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("cache: %s is not a directory (set Config.CacheDir or OP2_CACHE_DIR to a directory)", path)
	}
	uid, ok := owner(fi)
	if !ok {
		return nil // no ownership information on this system
	}
	me := os.Geteuid()
	perm := fi.Mode().Perm()
	what := "parent directory"
	if leaf {
		what = "cache directory"
	}
	switch {
	case leaf && uid != me:
		return fmt.Errorf("cache: refusing %s %s: it is owned by uid %d, not by you (uid %d), so its entries could run another user's code; set Config.CacheDir or OP2_CACHE_DIR to a directory of your own (it is created with mode 0700)", what, path, uid, me)
	case !leaf && uid != me && uid != 0:
		return fmt.Errorf("cache: refusing parent directory %s: it is owned by uid %d (neither you, uid %d, nor root), who could replace the cache; set Config.CacheDir or OP2_CACHE_DIR to a directory of your own", path, uid, me)
	case perm&0o022 != 0 && (leaf || fi.Mode()&fs.ModeSticky == 0):
		mode := uint32(perm)
		if fi.Mode()&fs.ModeSticky != 0 {
			mode |= 0o1000 // as ls and chmod write it
		}
		return fmt.Errorf("cache: refusing %s %s (owner uid %d, mode %04o): other users can write to it; run `chmod go-w %s` or set Config.CacheDir or OP2_CACHE_DIR to a private directory", what, path, uid, mode, path)
	}
	return nil
}

// owner returns the uid owning a file.
func owner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// Path is the directory's absolute path.
func (d *Dir) Path() string { return d.path }

// File is the path of the file called name in the directory.
func (d *Dir) File(name string) string { return filepath.Join(d.path, name) }

// Entry is a verified cache entry.
type Entry struct {
	Path string // where the entry lives
	Body []byte // its contents without the trailer
	info fs.FileInfo
}

// Unchanged reports an error unless e.Path still names the file that was
// verified (same device and inode), for callers that must hand the path to
// another loader (dlopen). Only the user could have replaced it, since Open
// checked the directory.
func (e *Entry) Unchanged() error {
	fi, err := os.Lstat(e.Path)
	if err != nil {
		return err
	}
	if !os.SameFile(fi, e.info) {
		return fmt.Errorf("cache entry %s was replaced while it was being loaded: %w", e.Path, ErrInvalid)
	}
	return nil
}

// Get reads and verifies the entry called name, which must have been written
// by Put with the same key. A missing entry gives an error matching
// os.ErrNotExist; one that must not be used an error matching ErrInvalid.
func (d *Dir) Get(name, key string) (*Entry, error) {
	path := d.File(name)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("cache entry %s is a symbolic link, which is never followed: %w", path, ErrInvalid)
		}
		return nil, fmt.Errorf("cache entry %s cannot be opened (%v): %w", path, err, ErrInvalid)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cache entry %s: %v: %w", path, err, ErrInvalid)
	}
	if err := checkFile(fi); err != nil {
		return nil, fmt.Errorf("cache entry %s %s: %w", path, err, ErrInvalid)
	}
	b, err := (&regfile.File{File: f, Size: fi.Size()}).ReadAll() // no more than its size
	if err != nil {
		return nil, fmt.Errorf("cache entry %s: %v: %w", path, err, ErrInvalid)
	}
	body, err := unseal(b, key)
	if err != nil {
		return nil, fmt.Errorf("cache entry %s %s: %w", path, err, ErrInvalid)
	}
	return &Entry{Path: path, Body: body, info: fi}, nil
}

// checkFile accepts a regular file owned by the current user that nobody
// else can write.
func checkFile(fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("is %s, not a regular file", regfile.Kind(fi.Mode()))
	}
	if uid, ok := owner(fi); ok && uid != os.Geteuid() {
		return fmt.Errorf("is owned by uid %d, not by you", uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("is writable by other users (mode %04o)", fi.Mode().Perm())
	}
	return nil
}

// trailer returns the trailer binding body to key.
func trailer(key string, body []byte) []byte {
	kh := sha256.Sum256([]byte(key))
	h := sha256.New()
	h.Write([]byte(version))
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write(body)
	t := make([]byte, 0, trailerSize)
	t = append(t, kh[:]...)
	t = h.Sum(t)
	return append(t, magic...)
}

// unseal checks b's trailer against key and returns the body.
func unseal(b []byte, key string) ([]byte, error) {
	if len(b) < trailerSize || string(b[len(b)-len(magic):]) != magic {
		return nil, errors.New("has no valid trailer (truncated, damaged or from another version)")
	}
	body := b[:len(b)-trailerSize]
	t := b[len(body):]
	kh := sha256.Sum256([]byte(key))
	if !bytes.Equal(t[:sha256.Size], kh[:]) {
		return nil, errors.New("was written for another key (a stale or swapped entry)")
	}
	if !bytes.Equal(trailer(key, body), t) {
		return nil, errors.New("is damaged (checksum mismatch)")
	}
	return body, nil
}

// Put stores body under name, bound to key, atomically.
func (d *Dir) Put(name, key string, body []byte) error {
	return d.WriteFile(name, body, trailer(key, body))
}

// WriteFile stores the concatenation of parts as the file called name,
// atomically (mode 0600), for files that are not entries (such as generated
// source kept for error messages).
func (d *Dir) WriteFile(name string, parts ...[]byte) error {
	tmp, err := d.CreateTemp(name, "")
	if err != nil {
		return err
	}
	tmpPath := tmp.Name()
	for _, p := range parts {
		if _, err = writeHook(tmp, p); err != nil {
			break
		}
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmpPath, d.File(name))
	}
	if err != nil {
		os.Remove(tmpPath)
		return fmt.Errorf("writing %s: %w", d.File(name), err)
	}
	return nil
}

// writeHook writes to a temporary file; tests replace it to simulate a full
// disk.
var writeHook = func(f *os.File, b []byte) (int, error) { return f.Write(b) }

// AppendTrailer appends the trailer binding the contents of the file at
// tmpPath to key, leaving the file where it is (to be renamed by Commit).
// On error the file is removed.
func (d *Dir) AppendTrailer(tmpPath, key string) error {
	if err := d.seal(tmpPath, key); err != nil {
		os.Remove(tmpPath)
		return fmt.Errorf("storing %s in the cache: %w", tmpPath, err)
	}
	return nil
}

// Commit renames a file from TempPath (already holding a trailer, see
// AppendTrailer) to name. On error the temporary file is removed.
func (d *Dir) Commit(tmpPath, name string) error {
	d.Unblock(name)
	if err := os.Rename(tmpPath, d.File(name)); err != nil {
		os.Remove(tmpPath)
		return fmt.Errorf("storing %s in the cache: %w", name, err)
	}
	return nil
}

// Unblock removes whatever sits at name that is not a regular file (a
// directory, a link), so that the cache's own file can take its place:
// the cache's names are the cache's. A rename onto a directory fails,
// and a shell's mv onto one (or a link to one) moves the file into it.
func (d *Dir) Unblock(name string) {
	if fi, err := os.Lstat(d.File(name)); err == nil && !fi.Mode().IsRegular() {
		os.RemoveAll(d.File(name))
	}
}

func (d *Dir) seal(tmpPath, key string) error {
	f, err := os.OpenFile(tmpPath, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	// The compiler (or cp) made the file with the process's umask,
	// which leaves it writable by the group under a umask of 002 (the
	// default of Debian's users): in the cache's directory, which nobody
	// else may write, only this user made it. It is made private before
	// it is checked and sealed.
	if perm := fi.Mode().Perm(); fi.Mode().IsRegular() && perm&0o022 != 0 {
		if err := f.Chmod(perm &^ 0o022); err != nil {
			return err
		}
		if fi, err = f.Stat(); err != nil {
			return err
		}
	}
	if err := checkFile(fi); err != nil {
		return fmt.Errorf("%s %v", tmpPath, err)
	}
	body, err := (&regfile.File{File: f, Size: fi.Size()}).ReadAll()
	if err != nil {
		return err
	}
	if _, err := writeHook(f, trailer(key, body)); err != nil {
		return err
	}
	return f.Close()
}

// CreateTemp creates a new temporary file (mode 0600) in the directory whose
// name starts with base and ends with suffix. The caller must remove or
// rename it.
func (d *Dir) CreateTemp(base, suffix string) (*os.File, error) {
	for {
		f, err := os.OpenFile(d.TempPath(base, suffix), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("creating a temporary file in the cache directory: %w", err)
		}
		return f, nil
	}
}

// TempPath returns a fresh temporary file name in the directory, for a
// program (a compiler) that writes its output to a path. The name starts
// with base and ends with suffix, and carries this process's token; the
// caller must remove the file on every path that does not rename it.
// Sweep removes such names once their process has ended.
func (d *Dir) TempPath(base, suffix string) string {
	var r [8]byte
	_, _ = rand.Read(r[:])
	return filepath.Join(d.path, fmt.Sprintf(".%s.%s.%s%s%s", base, token, hex.EncodeToString(r[:]), tempMark, suffix))
}

// IsTemp reports whether a file name is one that TempPath or CreateTemp
// produces.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tempMark)
}

// tempToken returns the token of the process that made the temporary file
// name: the field before the random one, before the last tempMark.
func tempToken(name string) (string, bool) {
	i := strings.LastIndex(name, tempMark)
	if i < 0 {
		return "", false
	}
	fields := strings.Split(name[:i], ".")
	if len(fields) < 3 {
		return "", false
	}
	tok := fields[len(fields)-2]
	return tok, validToken(tok)
}

// validToken reports whether tok has the form of a token: decimal digits,
// '-', 16 hexadecimal digits.
func validToken(tok string) bool {
	pid, r, ok := strings.Cut(tok, "-")
	if !ok || pid == "" || len(r) != 16 {
		return false
	}
	for _, c := range pid {
		if c < '0' || c > '9' {
			return false
		}
	}
	_, err := hex.DecodeString(r)
	return err == nil
}

// Sweep removes the temporary files left by processes that have ended:
// those of every token whose lock file it can lock (then that lock file
// too), and those naming no lock file once they are StaleAge old. A
// process's lock is held as long as it runs, so the files of a live
// process, such as a compile in progress, are never removed. Several
// processes may sweep at once. Errors are ignored: a file left behind
// costs only disk space.
func (d *Dir) Sweep() {
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return
	}
	// Tokens with a lock file: dead ones hold our lock until the end.
	alive := map[string]bool{}
	dead := map[string]*os.File{}
	defer func() {
		for tok, f := range dead {
			os.Remove(d.liveFile(tok))
			f.Close() // releases the lock
		}
	}()
	for _, e := range ents {
		tok, ok := strings.CutPrefix(e.Name(), liveMark)
		if !ok || !validToken(tok) || !e.Type().IsRegular() {
			continue
		}
		if tok == token {
			alive[tok] = true
			continue
		}
		f, err := os.OpenFile(d.File(e.Name()), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); {
		case err == nil:
			dead[tok] = f
		case errors.Is(err, syscall.EWOULDBLOCK):
			alive[tok] = true
			f.Close()
		default: // locks refused: judge by age
			f.Close()
		}
	}
	cutoff := time.Now().Add(-StaleAge)
	for _, e := range ents {
		if !e.Type().IsRegular() || !IsTemp(e.Name()) {
			continue
		}
		tok, ok := tempToken(e.Name())
		switch {
		case ok && alive[tok]:
			continue
		case ok && dead[tok] != nil:
		default:
			if fi, err := e.Info(); err != nil || !fi.ModTime().Before(cutoff) {
				continue
			}
		}
		os.Remove(d.File(e.Name()))
	}
}
