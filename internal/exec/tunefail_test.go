package exec_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// launchFailBackend's variant "two" builds, but its launches fail (a
// launch a device refuses for its resources).
type launchFailBackend struct{ variantBackend }

func (b *launchFailBackend) BuildVariant(l *core.Loop, v string) (exec.Program, error) {
	needs := *b.needs
	p := &fakeProgram{b: &fakeBackend{needs: &needs, launchOK: 0}, src: v + " " + l.Kernel.Name}
	b.progs = append(b.progs, p)
	return p, nil
}

// saveChoice writes a tuning file holding s for l on the fake backend.
func saveChoice(t *testing.T, x *exec.Executor, b *exec.Opened, l *core.Loop, s exec.Setting) string {
	t.Helper()
	if _, err := x.Program(b, l); err != nil { // sets l.Sig
		t.Fatal(err)
	}
	dir := t.TempDir()
	key := exec.NewTuner(dir, "test").Key("fake", l.Sig.Key, l.IterEnd())
	data, err := json.Marshal(map[string]exec.Setting{key: s})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tuning-v2.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTunedSettingFailures: a setting of the tuner's that fails — to
// launch while it is measured, to build as a saved choice, to launch as a
// saved choice — never fails the loop: the call runs as configured, a
// measured setting is never chosen, a saved one is measured again.
func TestTunedSettingFailures(t *testing.T) {
	ms := newMesh(t, 120, 120, 120)
	needs := &exec.PlanNeeds{Threads: 2}
	for _, tc := range []struct {
		name    string
		saved   *exec.Setting // a choice in the tuning file
		failing string        // the variant that fails
		b       func() exec.Backend
	}{
		{"launch fails while measured", nil, "two", func() exec.Backend {
			return &launchFailBackend{variantBackend{fakeBackend: fakeBackend{needs: needs, launchOK: -1}, variants: []string{"one", "two"}}}
		}},
		{"saved choice fails to build", &exec.Setting{Variant: "three"}, "three", func() exec.Backend {
			return &variantBackend{fakeBackend: fakeBackend{needs: needs, launchOK: -1}, variants: []string{"one", "two", "three"}}
		}},
		{"saved choice fails to launch", &exec.Setting{Variant: "two"}, "two", func() exec.Backend {
			return &launchFailBackend{variantBackend{fakeBackend: fakeBackend{needs: needs, launchOK: -1}, variants: []string{"one", "two"}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := ms.incLoop(t)
			x := exec.New()
			b := &exec.Opened{Backend: tc.b(), ID: core.NewID()}
			dir := ""
			if tc.saved != nil {
				dir = saveChoice(t, x, b, l, *tc.saved)
			}
			x.Tuner = exec.NewTuner(dir, "test")
			x.Tuner.BlockSizes, x.Tuner.Reps = []int{0}, 1
			var chosen *exec.Setting
			x.Tuner.Chosen = func(_ string, s exec.Setting, tried []exec.Trial) { chosen = &s }
			for i := range 8 {
				if err := x.Run(b, l); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			if chosen == nil || chosen.Variant == tc.failing {
				t.Errorf("chosen %v, want a choice (made again) other than the failing %s", chosen, tc.failing)
			}
		})
	}
}

// partlyFailBackend's variant "two" fails its first launch after running
// part of it (an openmp thread's elements, a device's first colours).
type partlyFailBackend struct{ variantBackend }

func (b *partlyFailBackend) BuildVariant(l *core.Loop, v string) (exec.Program, error) {
	needs := *b.needs
	fb := &fakeBackend{needs: &needs, launchOK: -1}
	if v == "two" {
		fb.launchOK, fb.partly = 0, true
	}
	p := &fakeProgram{b: fb, src: v + " " + l.Kernel.Name}
	b.progs = append(b.progs, p)
	return p, nil
}

// TestTunedSettingPartlyRunFails: a tuner's setting whose first launch
// fails after running in part fails the call, saying the data may be
// partly updated; the loop does not run again as configured, which would
// apply the part that ran twice.
func TestTunedSettingPartlyRunFails(t *testing.T) {
	ms := newMesh(t, 120, 120, 120)
	needs := &exec.PlanNeeds{Threads: 2}
	fb := &partlyFailBackend{variantBackend{fakeBackend: fakeBackend{needs: needs, launchOK: -1}, variants: []string{"one", "two"}}}
	l := ms.incLoop(t)
	x := exec.New()
	b := &exec.Opened{Backend: fb, ID: core.NewID()}
	x.Tuner = exec.NewTuner("", "test")
	x.Tuner.BlockSizes, x.Tuner.Reps = []int{0}, 1
	for i := range 8 {
		before := len(fb.progs)
		launches := make([]int, before)
		for j, p := range fb.progs {
			launches[j] = len(p.launches())
		}
		err := x.Run(b, l)
		if err == nil {
			continue
		}
		if !strings.Contains(err.Error(), "partly updated") || exec.NothingRan(err) {
			t.Fatalf("call %d: %v, want a failure saying the data may be partly updated", i, err)
		}
		for j, p := range fb.progs[:before] {
			if n := len(p.launches()); n != launches[j] {
				t.Fatalf("call %d: program %q launched again after the partly run failure", i, p.src)
			}
		}
		return
	}
	t.Fatal("no call failed: the failing setting's calls ran again as configured")
}

// TestTunerOffForgetsSettings: once the tuner is removed (and the caches
// cleared, as Configure does), plans use the executor's own block size
// again, not the last tuned call's.
func TestTunerOffForgetsSettings(t *testing.T) {
	ms := newMesh(t, 120, 120, 120)
	l := ms.incLoop(t)
	fb := &fakeBackend{needs: &exec.PlanNeeds{Threads: 2}, launchOK: -1}
	x := exec.New()
	b := &exec.Opened{Backend: fb, ID: core.NewID()}
	if err := x.Run(b, l); err != nil {
		t.Fatal(err)
	}
	want := fb.progs[0].plans[0].BlockSize
	dir := saveChoice(t, x, b, l, exec.Setting{BlockSize: 16})
	x.Clear()
	x.Tuner = exec.NewTuner(dir, "test")
	x.Tuner.BlockSizes = []int{0, 16}
	if err := x.Run(b, l); err != nil {
		t.Fatal(err)
	}
	p := fb.progs[len(fb.progs)-1]
	if got := p.plans[len(p.plans)-1].BlockSize; got != 16 {
		t.Fatalf("tuned call: block %d, want the saved 16", got)
	}
	x.Tuner = nil
	x.Clear()
	if err := x.Run(b, l); err != nil {
		t.Fatal(err)
	}
	p = fb.progs[len(fb.progs)-1]
	if got := p.plans[len(p.plans)-1].BlockSize; got != want {
		t.Errorf("after the tuner is off: block %d, want the executor's %d", got, want)
	}
}
