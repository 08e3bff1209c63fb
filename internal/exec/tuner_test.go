package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestTunerChoosesFastest: the tuner measures every variant with the
// executor's block size policy, then the block sizes with the fastest
// variant when it used a plan, Reps calls each, keeps the fastest setting,
// saves it, and a tuner on the same directory starts with that choice.
func TestTunerChoosesFastest(t *testing.T) {
	type cost struct {
		d       time.Duration
		planned bool
	}
	ms := time.Millisecond
	for _, tc := range []struct {
		name     string
		variants []string
		costs    map[Setting]cost
		want     []Setting // settings handed out, once per setting
		again    []Setting // then measured again: the configured one and the fastest
		chosen   Setting
	}{
		{
			name: "block sizes only",
			costs: map[Setting]cost{
				{BlockSize: 0}: {5 * ms, true}, {BlockSize: 256}: {3 * ms, true}, {BlockSize: 1024}: {4 * ms, true},
			},
			want:   []Setting{{}, {BlockSize: 256}, {BlockSize: 1024}},
			again:  []Setting{{}, {BlockSize: 256}},
			chosen: Setting{BlockSize: 256},
		},
		{
			name:     "variants then block sizes of the fastest",
			variants: []string{"owner", "colour"},
			costs: map[Setting]cost{
				{"owner", 0}: {5 * ms, true}, {"colour", 0}: {4 * ms, true},
				{"colour", 256}: {6 * ms, true}, {"colour", 1024}: {2 * ms, true},
			},
			want:   []Setting{{"owner", 0}, {"colour", 0}, {"colour", 256}, {"colour", 1024}},
			again:  []Setting{{"owner", 0}, {"colour", 1024}},
			chosen: Setting{"colour", 1024},
		},
		{
			name:     "within the margin the configured variant stays",
			variants: []string{"owner", "colour"},
			costs: map[Setting]cost{
				{"owner", 0}: {100 * ms, true}, {"colour", 0}: {98 * ms, true},
				{"owner", 256}: {99 * ms, true}, {"owner", 1024}: {90 * ms, true},
			},
			want:   []Setting{{"owner", 0}, {"colour", 0}, {"owner", 256}, {"owner", 1024}},
			again:  []Setting{{"owner", 0}, {"owner", 1024}},
			chosen: Setting{"owner", 1024},
		},
		{
			name:     "no plan: block sizes not tried",
			variants: []string{"staged", "atomics"},
			costs: map[Setting]cost{
				{"staged", 0}: {5 * ms, true}, {"atomics", 0}: {4 * ms, false},
			},
			want:   []Setting{{"staged", 0}, {"atomics", 0}},
			again:  []Setting{{"staged", 0}, {"atomics", 0}},
			chosen: Setting{"atomics", 0},
		},
		{
			name:     "a variant measured first stays when block sizes are slower",
			variants: []string{"staged", "atomics"},
			costs: map[Setting]cost{
				{"staged", 0}: {3 * ms, true}, {"atomics", 0}: {4 * ms, false},
				{"staged", 256}: {5 * ms, true}, {"staged", 1024}: {5 * ms, true},
			},
			want:   []Setting{{"staged", 0}, {"atomics", 0}, {"staged", 256}, {"staged", 1024}},
			chosen: Setting{"staged", 0},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tu := NewTuner(dir, "threads=2")
			tu.BlockSizes, tu.Reps = []int{0, 256, 1024}, 2
			var got Setting
			var tried []Trial
			tu.Chosen = func(key string, s Setting, tr []Trial) { got, tried = s, tr }
			key := tu.Key("openmp", "shape", 1000)
			var seen []Setting
			handed := append(slices.Clone(tc.want), tc.again...)
			for i := 0; i < 2*len(handed); i++ {
				s, measuring := tu.Setting(key, tc.variants)
				if !measuring {
					t.Fatalf("call %d: not measuring", i)
				}
				if i%2 == 0 {
					seen = append(seen, s)
				}
				c, ok := tc.costs[s]
				if !ok {
					t.Fatalf("call %d: setting %v has no cost", i, s)
				}
				tu.Record(key, c.d+time.Duration(i%2)*ms, c.planned)
			}
			if !reflect.DeepEqual(seen, handed) {
				t.Errorf("settings handed out %v, want %v", seen, handed)
			}
			if s, measuring := tu.Setting(key, tc.variants); measuring || s != tc.chosen || got != tc.chosen {
				t.Errorf("after tuning: %v (measuring %v, reported %v), want %v", s, measuring, got, tc.chosen)
			}
			if len(tried) != len(tc.want) {
				t.Errorf("reported %d settings tried, want %d", len(tried), len(tc.want))
			}
			for _, tr := range tried {
				if want := tc.costs[tr.Setting].d; tr.Time != want {
					t.Errorf("%v: fastest call %v, want %v", tr.Setting, tr.Time, want)
				}
			}
			again := NewTuner(dir, "threads=2")
			if s, measuring := again.Setting(again.Key("openmp", "shape", 1000), tc.variants); measuring || s != tc.chosen {
				t.Errorf("a new tuner on the same directory: %v (measuring %v), want %v", s, measuring, tc.chosen)
			}
			other := NewTuner(dir, "threads=1")
			if _, measuring := other.Setting(other.Key("openmp", "shape", 1000), tc.variants); !measuring {
				t.Errorf("another configuration reused the choice")
			}
		})
	}
}

// TestTunerMeasuresAgain: before leaving the configured setting for a
// faster one, the tuner measures both once more and each counts its
// fastest call: a configured setting that was slow only in its first
// calls (a program just loaded, data not yet in cache) is kept.
func TestTunerMeasuresAgain(t *testing.T) {
	for _, tc := range []struct {
		name       string
		a1, b1, a2 time.Duration // a's first calls, b's, a's again (b's again: b1)
		chosen     string
	}{
		{"slow only at first", 5, 3, 2, "a"},
		{"slower both times", 5, 3, 5, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tu := NewTuner("", "")
			tu.BlockSizes, tu.Reps = []int{0}, 1
			var tried []Trial
			tu.Chosen = func(_ string, _ Setting, tr []Trial) { tried = tr }
			key := tu.Key("openmp", "shape", 10)
			var seen []string
			for _, d := range []time.Duration{tc.a1, tc.b1, tc.a2, tc.b1} {
				s, measuring := tu.Setting(key, []string{"a", "b"})
				if !measuring {
					t.Fatalf("not measuring after %v", seen)
				}
				seen = append(seen, s.Variant)
				tu.Record(key, d, false)
			}
			if want := []string{"a", "b", "a", "b"}; !slices.Equal(seen, want) {
				t.Errorf("settings handed out %v, want %v", seen, want)
			}
			if s, measuring := tu.Setting(key, []string{"a", "b"}); measuring || s.Variant != tc.chosen {
				t.Errorf("chose %v (measuring %v), want %s", s, measuring, tc.chosen)
			}
			if len(tried) != 2 || tried[0].Time != min(tc.a1, tc.a2) || tried[1].Time != tc.b1 {
				t.Errorf("reported %+v, want a's fastest of both measurements and b's", tried)
			}
		})
	}
}

// TestTunerForgetsVanishedVariant: a saved choice naming a variant the
// backend no longer offers is measured again.
func TestTunerForgetsVanishedVariant(t *testing.T) {
	dir := t.TempDir()
	tu := NewTuner(dir, "")
	tu.BlockSizes, tu.Reps = []int{0}, 1
	key := tu.Key("opencl", "shape", 10)
	for range 4 { // a, b, then both again
		s, _ := tu.Setting(key, []string{"a", "b"})
		tu.Record(key, map[string]time.Duration{"a": 2, "b": 1}[s.Variant], false)
	}
	if s, measuring := tu.Setting(key, []string{"a", "b"}); measuring || s.Variant != "b" {
		t.Fatalf("chose %v (measuring %v), want b", s, measuring)
	}
	again := NewTuner(dir, "")
	if s, measuring := again.Setting(key, []string{"a", "c"}); !measuring || s.Variant != "a" {
		t.Errorf("with b gone: %v (measuring %v), want a measured", s, measuring)
	}
}

// TestTunerRemeasuresBadBlockSize: a saved block size the tuner does not
// try (a damaged or edited file: negative, huge) is measured again rather
// than handed to the planner.
func TestTunerRemeasuresBadBlockSize(t *testing.T) {
	for _, bs := range []int{-7, 3, 1 << 40} {
		dir := t.TempDir()
		tu := NewTuner(dir, "")
		key := tu.Key("opencl", "shape", 10)
		tu.update(func(all map[string]Setting) { all[key] = Setting{Variant: "a", BlockSize: bs} })
		again := NewTuner(dir, "")
		if s, measuring := again.Setting(key, []string{"a", "b"}); !measuring || s.BlockSize != 0 {
			t.Errorf("saved block size %d: %v (measuring %v), want block size 0 measured", bs, s, measuring)
		}
	}
}

func TestSettingString(t *testing.T) {
	for _, tc := range []struct {
		s    Setting
		want string
	}{
		{Setting{}, "block auto"},
		{Setting{BlockSize: 1024}, "block 1024"},
		{Setting{Variant: "owner"}, "owner"},
		{Setting{Variant: "staged/128", BlockSize: 256}, "staged/128, block 256"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%#v: %q, want %q", tc.s, got, tc.want)
		}
	}
}

// TestTunersShareTheFile: two tuners on one directory (two MPI ranks, two
// runs at once) keep each other's choices.
func TestTunersShareTheFile(t *testing.T) {
	dir := t.TempDir()
	a, b := NewTuner(dir, ""), NewTuner(dir, "")
	for _, tu := range []*Tuner{a, b} {
		tu.BlockSizes, tu.Reps = []int{0}, 1
	}
	ka, kb := a.Key("openmp", "loop a", 10), b.Key("openmp", "loop b", 10)
	a.Setting(ka, nil)
	b.Setting(kb, nil)
	a.Record(ka, 1, false)
	b.Record(kb, 1, false)
	c := NewTuner(dir, "")
	for _, k := range []string{ka, kb} {
		if _, measuring := c.Setting(k, nil); measuring {
			t.Errorf("choice %s lost", k)
		}
	}
}

// TestTunerFailedSetting: a setting whose program cannot be built is
// skipped at once and never chosen, even as the only fast one.
func TestTunerFailedSetting(t *testing.T) {
	tu := NewTuner("", "")
	tu.BlockSizes, tu.Reps = []int{0, 256}, 2
	key := tu.Key("opencl", "shape", 10)
	var chosen Setting
	var tried []Trial
	tu.Chosen = func(_ string, s Setting, tr []Trial) { chosen, tried = s, tr }
	vs := []string{"staged wg64", "staged wg1024", "atomics wg64"}
	var seen []Setting
	for i := 0; i < 20 && chosen.Variant == ""; i++ {
		s, measuring := tu.Setting(key, vs)
		if !measuring {
			t.Fatalf("call %d not measuring", i)
		}
		seen = append(seen, s)
		if s.Variant == "staged wg1024" {
			tu.Fail(key)
			continue
		}
		tu.Record(key, map[string]time.Duration{"staged wg64": 3, "atomics wg64": 5}[s.Variant]+time.Duration(s.BlockSize), true)
	}
	want := []Setting{{"staged wg64", 0}, {"staged wg64", 0}, {"staged wg1024", 0}, {"atomics wg64", 0}, {"atomics wg64", 0}, {"staged wg64", 256}, {"staged wg64", 256}}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("settings handed out %v, want %v", seen, want)
	}
	if chosen != (Setting{"staged wg64", 0}) {
		t.Errorf("chose %v", chosen)
	}
	if len(tried) != 4 || !tried[1].Failed {
		t.Errorf("tried %+v, want 4 with the second failed", tried)
	}
}

// TestTunerBoundsMeasurements: loops of ever new sizes (subsets) do not
// make the tuner measure without bound; beyond the limit they run as
// configured.
func TestTunerBoundsMeasurements(t *testing.T) {
	tu := NewTuner("", "")
	vs := []string{"owner", "colour"}
	for n := 0; n < maxMeasuring; n++ {
		if _, measuring := tu.Setting(tu.Key("openmp", "shape", n), vs); !measuring {
			t.Fatalf("size %d not measured", n)
		}
	}
	if s, measuring := tu.Setting(tu.Key("openmp", "shape", maxMeasuring), vs); measuring || s != (Setting{Variant: "owner"}) {
		t.Errorf("beyond the limit: %v (measuring %v), want the configured owner", s, measuring)
	}
	if _, measuring := tu.Setting(tu.Key("openmp", "shape", 0), vs); !measuring {
		t.Errorf("a loop already being measured stopped")
	}
}

// TestTunersSaveConcurrently: tuners of several processes (here
// goroutines, each with its own tuner) saving at once keep every choice.
func TestTunersSaveConcurrently(t *testing.T) {
	dir := t.TempDir()
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tu := NewTuner(dir, "")
			tu.BlockSizes, tu.Reps = []int{0}, 1
			k := tu.Key("openmp", fmt.Sprint("loop ", i), 10)
			tu.Setting(k, nil)
			tu.Record(k, 1, false)
		}()
	}
	wg.Wait()
	c := NewTuner(dir, "")
	for i := range n {
		if _, measuring := c.Setting(c.Key("openmp", fmt.Sprint("loop ", i), 10), nil); measuring {
			t.Errorf("choice of loop %d lost", i)
		}
	}
}

// TestTunerKeepsNewerChoices: a tuner saving a choice does not write back
// the choices it loaded at its start over newer ones another process saved
// since.
func TestTunerKeepsNewerChoices(t *testing.T) {
	dir := t.TempDir()
	k := NewTuner(dir, "").Key("openmp", "loop k", 10)
	NewTuner(dir, "").update(func(all map[string]Setting) { all[k] = Setting{BlockSize: 256} })
	a := NewTuner(dir, "") // loads k = 256
	a.BlockSizes, a.Reps = []int{0}, 1
	NewTuner(dir, "").update(func(all map[string]Setting) { all[k] = Setting{BlockSize: 1024} })
	j := a.Key("openmp", "loop j", 10)
	a.Setting(j, nil)
	a.Record(j, 1, false) // a saves its choice for j
	c := NewTuner(dir, "")
	c.BlockSizes = DefaultBlockSizes
	if s, measuring := c.Setting(k, nil); measuring || s.BlockSize != 1024 {
		t.Errorf("k: %v (measuring %v), want the newer 1024", s, measuring)
	}
}

// TestTunerIgnoresBadFile: a tuning file holding JSON null (which used to
// panic at the first choice saved), another shape than an object of
// choices, malformed or oversized, or a path that is a FIFO (which used to
// block NewTuner, and so Configure, for ever), a link to /dev/zero or a
// directory is ignored at once, with LoadError and Warn saying why; tuning
// goes on and the first choice saved replaces the file when it can.
func TestTunerIgnoresBadFile(t *testing.T) {
	type prep func(t *testing.T, path string)
	write := func(s string) prep {
		return func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name    string
		prepare prep
		load    string // in LoadError; "" for none
		saved   bool   // a choice saved replaces the file
	}{
		{"null", write("null"), "ignored: it holds null, not an object of choices", true},
		{"null with spaces", write(" null\n"), "it holds null", true},
		{"array", write("[1, 2]"), "ignored: json: cannot unmarshal array", true},
		{"string", write(`"x"`), "ignored: json: cannot unmarshal string", true},
		{"number", write("5"), "ignored: json: cannot unmarshal number", true},
		{"malformed", write("{not json"), "ignored: invalid character", true},
		{"truncated", write(`{"k": {"block_size": 2`), "ignored: unexpected end of JSON input", true},
		{"empty", write(""), "ignored: unexpected end of JSON input", true},
		{"null choice", write(`{"k": null}`), "", true},
		{"empty object", write("{}"), "", true},
		{"fifo", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is a named pipe (FIFO), not a regular file", true},
		{"link to /dev/zero", func(t *testing.T, path string) {
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}, "(a link to /dev/zero) is a character device, not a regular file", true},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "is a directory, not a regular file", false},
		{"too large", func(t *testing.T, path string) {
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(maxTuningFile + 1); err != nil { // sparse
				t.Fatal(err)
			}
		}, fmt.Sprintf("is %d bytes, more than the %d bytes it may hold", maxTuningFile+1, maxTuningFile), true},
		{"lock file is a fifo", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path+".lock", 0o600); err != nil {
				t.Fatal(err)
			}
		}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tuningFile)
			tc.prepare(t, path)
			made := make(chan *Tuner, 1)
			go func() { made <- NewTuner(dir, "") }()
			var tu *Tuner
			select {
			case tu = <-made:
			case <-time.After(10 * time.Second):
				t.Fatal("NewTuner still blocks after 10s")
			}
			switch err := tu.LoadError(); {
			case tc.load == "" && err != nil:
				t.Errorf("LoadError: %v", err)
			case tc.load != "" && (err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.load)):
				t.Errorf("LoadError: %v; want it to name %s and say %q", err, path, tc.load)
			}
			var warned []string
			tu.Warn = func(err error) { warned = append(warned, err.Error()) }
			tu.BlockSizes, tu.Reps = []int{0}, 1
			key := tu.Key("openmp", "loop", 10)
			saved := make(chan struct{})
			go func() {
				defer close(saved)
				for _, v := range []string{"a", "b", "a", "b"} { // then both again
					if s, measuring := tu.Setting(key, []string{"a", "b"}); !measuring || s.Variant != v {
						t.Errorf("setting %v (measuring %v), want %s measured", s, measuring, v)
					}
					tu.Record(key, map[string]time.Duration{"a": 2, "b": 1}[v], false)
				}
				tu.Forget(tu.Key("openmp", "other loop", 10))
			}()
			select {
			case <-saved:
			case <-time.After(10 * time.Second):
				t.Fatal("saving a choice still blocks after 10s")
			}
			if s, measuring := tu.Setting(key, []string{"a", "b"}); measuring || s.Variant != "b" {
				t.Errorf("chose %v (measuring %v), want b", s, measuring)
			}
			again := NewTuner(dir, "")
			_, measuring := again.Setting(key, []string{"a", "b"})
			if tc.saved && (again.LoadError() != nil || measuring) {
				t.Errorf("the choice was not saved over the file: %v, measuring %v; warned %q", again.LoadError(), measuring, warned)
			}
			switch {
			case tc.name == "lock file is a fifo":
				if len(warned) == 0 || !strings.Contains(warned[0], path+".lock is a named pipe (FIFO), not a regular file") {
					t.Errorf("warned %q; want the lock file refused", warned)
				}
			case !tc.saved:
				if len(warned) < 2 || !strings.Contains(warned[0], tc.load) || !strings.Contains(warned[1], "tuning file not saved: "+path) {
					t.Errorf("warned %q; want the file ignored and not saved", warned)
				}
			case len(warned) != 0 && tc.load == "":
				t.Errorf("warned %q", warned)
			}
			if ents, _ := os.ReadDir(dir); len(ents) > 3 {
				t.Errorf("files left in the directory: %v", ents)
			}
		})
	}
}
