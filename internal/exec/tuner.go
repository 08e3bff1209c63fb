package exec

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/goop2/op2/internal/regfile"
)

// Setting is one way of running a loop that the tuner can choose: the
// backend's variant of the loop's program and the execution plan's block
// size.
type Setting struct {
	// Variant names the backend's way of running the loop, one of its
	// VariantBuilder.Variants ("" for a backend with one way): the
	// openmp scheme, or a device scheme and work-group size.
	Variant string `json:"variant,omitempty"`
	// BlockSize is the plan's block size; 0 is the executor's own
	// choice (ChoosePlan's policy).
	BlockSize int `json:"block_size"`
}

// String describes the setting for people: "owner, block 1024", "staged
// wg128", "block auto" (the block size is left out when it is the
// executor's own choice and there is a variant to name).
func (s Setting) String() string {
	switch {
	case s.BlockSize > 0 && s.Variant != "":
		return s.Variant + ", block " + strconv.Itoa(s.BlockSize)
	case s.BlockSize > 0:
		return "block " + strconv.Itoa(s.BlockSize)
	case s.Variant != "":
		return s.Variant
	}
	return "block auto"
}

// Trial is a setting the tuner measured and the fastest of its calls.
type Trial struct {
	Setting Setting
	Time    time.Duration
	// Planned is whether the calls used an execution plan (when none
	// did, the block size makes no difference and is not tried).
	Planned bool
	// Failed is whether the setting's program could not be built (a
	// work-group size whose resources the device lacks): it is never
	// chosen.
	Failed bool
}

// Tuner chooses, per loop shape and set size, how a loop runs by
// measurement (seed 002 §8). The first calls of a loop try each of the
// backend's variants (VariantBuilder: the openmp scheme; the device
// scheme and work-group size) with the executor's block size policy, Reps
// calls each; then, if the fastest variant uses an execution plan, each of
// BlockSizes with that variant. When the fastest is not the configured
// setting, both are measured once more (Reps calls each), since a loop's
// first calls can be slower than later ones (its program just loaded,
// its data not yet in cache), which would count against the configured
// setting alone; each counts its fastest call of both measurements. The
// fastest setting measured is kept (the configured one unless another is
// faster by more than Margin), and
// written to a file in the cache directory keyed by the machine and the
// configuration, so that later runs start tuned. Every setting gives
// correct results; only the order in which increments are summed, and so
// the last bits of floating-point sums, depends on the choice.
type Tuner struct {
	// BlockSizes are the block sizes tried with the fastest variant; 0
	// is the executor's own choice, which every variant is first measured
	// with.
	BlockSizes []int
	// Reps is the number of calls measured per setting (the fastest
	// counts).
	Reps int
	// Margin is how much faster, as a fraction, a setting must be than
	// the configured one (the first measured) to be chosen instead:
	// settings within the noise of a few calls keep the configuration.
	Margin float64
	// Fingerprint names the configuration choices depend on (backend
	// settings such as threads), part of every key.
	Fingerprint string
	// Chosen, if not nil, is told each choice made by measurement, with
	// every setting tried.
	Chosen func(key string, chosen Setting, tried []Trial)
	// Warn, if not nil, is told of each problem with the file after
	// NewTuner: one that cannot be read or holds no choices (it is
	// ignored), one that cannot be locked or written. Tuning goes on;
	// only saved choices are lost.
	Warn func(err error)

	path    string
	machine string
	loadErr error
	mu      sync.Mutex
	known   map[string]Setting // saved choices, by key
	state   map[string]*tuning
}

// tuning is a loop's measurement in progress.
type tuning struct {
	trials []Trial // the settings to measure, in order, and their best times
	cur    int     // the trial being measured
	calls  int     // calls of trials[cur] measured
	sizes  bool    // the block sizes have been added
	// again is the index of the setting measured again with the
	// configured one (the last two trials), 0 before that.
	again int
}

// DefaultBlockSizes are the block sizes the tuner tries.
var DefaultBlockSizes = []int{0, 256, 1024, 4096, 16384}

// maxMeasuring bounds the loops a tuner measures at once.
const maxMeasuring = 1024

// tuningFile is the name of the file, in the cache directory, that holds
// the choices.
const tuningFile = "tuning-v2.json"

// maxTuningFile bounds the size of the tuning file read: about 200 000
// choices.
const maxTuningFile = 64 << 20

// NewTuner returns a tuner that remembers its choices in dir (the cache
// directory), loading what earlier runs on this machine chose. A file
// that cannot be read or holds something other than choices is ignored
// (LoadError says why) and replaced at the first choice saved.
func NewTuner(dir, fingerprint string) *Tuner {
	t := &Tuner{BlockSizes: DefaultBlockSizes, Reps: 3, Margin: 0.03, Fingerprint: fingerprint,
		machine: MachineKey(), known: map[string]Setting{}, state: map[string]*tuning{}}
	if dir != "" {
		t.path = filepath.Join(dir, tuningFile)
		t.known, t.loadErr = readChoices(t.path)
	}
	return t
}

// LoadError returns why NewTuner ignored the tuning file (nil when it was
// read, or did not exist).
func (t *Tuner) LoadError() error { return t.loadErr }

// readChoices reads the choices saved at path: none when there is no file,
// and none with an error saying why when the file is not a regular file
// (a FIFO would block the read for ever, a link to a device read without
// end), is larger than maxTuningFile, or does not hold a JSON object of
// choices (null, an array, malformed text). An unreadable file only costs
// tuning again.
func readChoices(path string) (map[string]Setting, error) {
	b, err := regfile.ReadFile(path, maxTuningFile)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Setting{}, nil
	}
	if err != nil {
		return map[string]Setting{}, fmt.Errorf("tuning file ignored: %w", err)
	}
	var all map[string]Setting
	if err := json.Unmarshal(b, &all); err != nil {
		return map[string]Setting{}, fmt.Errorf("tuning file %s ignored: %w", path, err)
	}
	if all == nil {
		return map[string]Setting{}, fmt.Errorf("tuning file %s ignored: it holds null, not an object of choices", path)
	}
	return all, nil
}

// warn tells Warn of err, if both are not nil.
func (t *Tuner) warn(err error) {
	if err != nil && t.Warn != nil {
		t.Warn(err)
	}
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

// Key is the saved key of a loop: machine, configuration, backend (its
// name and the device it runs on), loop shape and the number of elements
// it runs over.
func (t *Tuner) Key(backend, shape string, elements int) string {
	return t.machine + "|" + t.Fingerprint + "|" + backend + "|" + fmt.Sprintf("%x", sha256.Sum256([]byte(shape))) + "|" + strconv.Itoa(elements)
}

// Setting returns the setting for the next call of the loop saved under
// key and whether that call is a measurement (whose time the caller
// reports with Record). variants are the backend's variants for the loop,
// the configured one first (nil when it has one way); a saved choice
// naming a variant no longer offered, or a block size the tuner does not
// try (a file edited or damaged), is measured again.
func (t *Tuner) Setting(key string, variants []string) (s Setting, measuring bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.known[key]; ok && (s.Variant == "" && len(variants) == 0 || slices.Contains(variants, s.Variant)) &&
		slices.Contains(t.BlockSizes, s.BlockSize) {
		return s, false
	}
	st := t.state[key]
	if st == nil && len(t.state) >= maxMeasuring {
		// Loops of ever new sizes (subsets) would each start a
		// measurement: beyond maxMeasuring at once, run as configured.
		if len(variants) > 0 {
			return Setting{Variant: variants[0]}, false
		}
		return Setting{}, false
	}
	if st == nil {
		st = &tuning{}
		if len(variants) == 0 {
			st.trials = []Trial{{}}
		}
		for _, v := range variants {
			st.trials = append(st.trials, Trial{Setting: Setting{Variant: v}})
		}
		t.state[key] = st
	}
	return st.trials[st.cur].Setting, true
}

// Record reports the time of a measured call made with the setting
// Setting returned, and whether it used an execution plan. After the last
// setting the fastest is chosen and saved.
func (t *Tuner) Record(key string, d time.Duration, planned bool) {
	t.mu.Lock()
	st := t.state[key]
	if st == nil {
		t.mu.Unlock()
		return
	}
	tr := &st.trials[st.cur]
	if tr.Time == 0 || d < tr.Time {
		tr.Time = max(d, 1)
	}
	tr.Planned = tr.Planned || planned
	if st.calls++; st.calls < t.Reps {
		t.mu.Unlock()
		return
	}
	t.next(key, st)
}

// Fail reports that the setting Setting returned for the loop saved under
// key cannot run (its program failed to build): it is never chosen, and
// the next call measures the next setting.
func (t *Tuner) Fail(key string) {
	t.mu.Lock()
	st := t.state[key]
	if st == nil {
		t.mu.Unlock()
		return
	}
	st.trials[st.cur].Failed = true
	t.next(key, st)
}

// Forget drops the saved choice for key (it failed to run: a device or
// toolchain that changed under the same key), so that the loop is measured
// again.
func (t *Tuner) Forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.known[key]; !ok {
		return
	}
	delete(t.known, key)
	t.update(func(all map[string]Setting) { delete(all, key) })
}

// next moves st on to its next setting once the current one is measured;
// after the last, it chooses and saves. It unlocks t.mu.
func (t *Tuner) next(key string, st *tuning) {
	st.cur, st.calls = st.cur+1, 0
	if st.cur < len(st.trials) {
		t.mu.Unlock()
		return
	}
	best := t.fastest(st.trials)
	if !st.sizes && !st.trials[best].Failed && st.trials[best].Planned {
		// The block sizes, with the fastest variant.
		st.sizes = true
		for _, bs := range t.BlockSizes {
			if bs != st.trials[best].Setting.BlockSize {
				st.trials = append(st.trials, Trial{Setting: Setting{Variant: st.trials[best].Setting.Variant, BlockSize: bs}})
			}
		}
		if st.cur < len(st.trials) {
			t.mu.Unlock()
			return
		}
	}
	if best := t.fastest(st.trials); st.again == 0 && best != 0 {
		// The configured setting and the fastest, once more.
		st.again = best
		st.trials = append(st.trials, Trial{Setting: st.trials[0].Setting}, Trial{Setting: st.trials[best].Setting})
		t.mu.Unlock()
		return
	}
	if st.again != 0 { // fold the last two trials into the ones they measured again
		n := len(st.trials) - 2
		for k, j := range []int{0, st.again} {
			if again := st.trials[n+k]; !again.Failed && again.Time > 0 && (st.trials[j].Time == 0 || again.Time < st.trials[j].Time) {
				st.trials[j].Time = again.Time
			}
		}
		st.trials = st.trials[:n]
	}
	chosen := st.trials[t.fastest(st.trials)].Setting
	t.known[key] = chosen
	delete(t.state, key)
	report, tried := t.Chosen, st.trials
	t.update(func(all map[string]Setting) { all[key] = chosen })
	t.mu.Unlock()
	if report != nil {
		report(key, chosen, tried)
	}
}

// fastest is the index of the trial with the least time among those that
// ran, unless it is within Margin of the first trial (the configured
// setting), which is then kept.
func (t *Tuner) fastest(trials []Trial) int {
	best := 0
	for j, tr := range trials {
		if !tr.Failed && (trials[best].Failed || tr.Time < trials[best].Time) {
			best = j
		}
	}
	if first := trials[0]; !first.Failed && float64(trials[best].Time) > float64(first.Time)*(1-t.Margin) {
		return 0
	}
	return best
}

// update applies edit to the choices in the file (t.mu held), under the
// file's lock, so that processes sharing the cache directory (MPI ranks,
// runs at once) each change only their own keys and keep the others'.
func (t *Tuner) update(edit func(all map[string]Setting)) {
	if t.path == "" {
		return
	}
	unlock, err := lockFile(t.path)
	t.warn(err)
	defer unlock()
	all, err := readChoices(t.path)
	t.warn(err)
	edit(all)
	t.warn(t.write(all)) // a cache that cannot be written only costs tuning again
}

// lockFile takes an exclusive lock on path's lock file (path + ".lock"),
// so that processes sharing the cache directory (MPI ranks, runs at once)
// read, merge and write the choices one at a time; the returned function
// releases it. Without a lock (a file system that refuses it, a lock file
// that is not a regular file) an update only risks losing another
// process's newest choices; the error says why there is none.
func lockFile(path string) (unlock func(), err error) {
	lock := path + ".lock"
	f, err := os.OpenFile(lock, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return func() {}, fmt.Errorf("tuning file not locked: %w", err)
	}
	fi, err := f.Stat()
	if err == nil {
		err = regfile.Check(lock, fi)
	}
	if err == nil {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
	}
	if err != nil {
		f.Close()
		return func() {}, fmt.Errorf("tuning file not locked: %s: %w", lock, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// write replaces the file with choices (t.mu held), through a new
// temporary file (a name chosen in advance could be a FIFO left there,
// which would block the write).
func (t *Tuner) write(choices map[string]Setting) error {
	b, err := json.MarshalIndent(choices, "", " ")
	if err != nil {
		return err
	}
	f, err := regfile.Replace(t.path)
	if err == nil {
		if _, err = f.Write(b); err != nil {
			f.Abort()
		} else {
			err = f.Commit()
		}
	}
	if err != nil {
		return fmt.Errorf("tuning file not saved: %w", err)
	}
	return nil
}
