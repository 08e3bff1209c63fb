package exec

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Tuner chooses, per loop shape and set size, the execution plan's block
// size by measurement (seed 002 §8): the first calls of a loop try each
// candidate in turn (Reps calls each), the fastest is kept, and the choice
// is written to a file in the cache directory keyed by the machine and the
// backend's configuration, so that later runs start tuned. Every candidate
// gives correct results (a plan is a plan); only the order in which
// increments are summed, and so the last bits of floating-point sums,
// depends on the choice.
type Tuner struct {
	// Candidates are the block sizes tried; 0 is the executor's own
	// choice (ChoosePlan's policy).
	Candidates []int
	// Reps is the number of calls measured per candidate (the fastest
	// counts).
	Reps int
	// Fingerprint names the configuration choices depend on (backend
	// settings such as threads), part of every key.
	Fingerprint string

	path    string
	machine string
	mu      sync.Mutex
	known   map[string]int // saved choices, by key
	state   map[string]*tuning
	// Chosen, if not nil, is told each choice made by measurement.
	Chosen func(key string, blockSize int, times []time.Duration)
}

// tuning is a loop's measurement in progress.
type tuning struct {
	best  []time.Duration // per candidate, the fastest call so far
	calls int
}

// DefaultCandidates are the block sizes the tuner tries.
var DefaultCandidates = []int{0, 256, 1024, 4096, 16384}

// NewTuner returns a tuner that remembers its choices in dir (the cache
// directory), loading what earlier runs on this machine chose.
func NewTuner(dir, fingerprint string) *Tuner {
	t := &Tuner{Candidates: DefaultCandidates, Reps: 2, Fingerprint: fingerprint,
		machine: MachineKey(), known: map[string]int{}, state: map[string]*tuning{}}
	if dir != "" {
		t.path = filepath.Join(dir, "tuning.json")
		if b, err := os.ReadFile(t.path); err == nil {
			_ = json.Unmarshal(b, &t.known) // an unreadable file only costs tuning again
		}
	}
	return t
}

// MachineKey names this machine for the saved choices: host name, CPU
// model, CPU count and architecture.
func MachineKey() string {
	host, _ := os.Hostname()
	model := ""
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		s := bufio.NewScanner(f)
		for s.Scan() {
			if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	return fmt.Sprintf("%s/%s/%d/%s", host, model, runtime.NumCPU(), runtime.GOARCH)
}

// key is the saved key of a loop: machine, configuration, backend, loop
// shape and the number of elements it runs over.
func (t *Tuner) key(backend, shape string, elements int) string {
	return t.machine + "|" + t.Fingerprint + "|" + backend + "|" + fmt.Sprintf("%x", sha256.Sum256([]byte(shape))) + "|" + strconv.Itoa(elements)
}

// BlockSize returns the block size for the next call of a loop and whether
// that call is a measurement (whose time the caller reports with Record).
func (t *Tuner) BlockSize(key string) (blockSize int, measuring bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if bs, ok := t.known[key]; ok {
		return bs, false
	}
	st := t.state[key]
	if st == nil {
		st = &tuning{best: make([]time.Duration, len(t.Candidates))}
		t.state[key] = st
	}
	return t.Candidates[st.calls/t.Reps], true
}

// Record reports the time of a measured call made with the block size
// BlockSize returned; after the last candidate the fastest is chosen and
// saved.
func (t *Tuner) Record(key string, d time.Duration) {
	t.mu.Lock()
	st := t.state[key]
	if st == nil {
		t.mu.Unlock()
		return
	}
	i := st.calls / t.Reps
	if st.best[i] == 0 || d < st.best[i] {
		st.best[i] = max(d, 1)
	}
	st.calls++
	if st.calls < len(t.Candidates)*t.Reps {
		t.mu.Unlock()
		return
	}
	best := 0
	for j, b := range st.best {
		if b < st.best[best] {
			best = j
		}
	}
	bs := t.Candidates[best]
	t.known[key] = bs
	delete(t.state, key)
	chosen, times := t.Chosen, st.best
	err := t.save()
	t.mu.Unlock()
	if chosen != nil {
		chosen(key, bs, times)
	}
	_ = err // a cache that cannot be written only costs tuning again
}

// save writes the known choices (t.mu held).
func (t *Tuner) save() error {
	if t.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(t.known, "", " ")
	if err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", t.path, os.Getpid())
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, t.path)
}
