package devrt

import (
	"errors"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// failingDriver fails every kernel launch after the first ok of them.
type failingDriver struct {
	*mockDriver
	ok int
}

func (d *failingDriver) Launch(k Kernel, args []Arg, groups, local int) error {
	if len(d.launches) >= d.ok {
		return errors.New("device refuses the launch")
	}
	return d.mockDriver.Launch(k, args, groups, local)
}

// oneProgram is a backend whose every loop runs program p.
type oneProgram struct{ p *Program }

func (b oneProgram) Name() string                           { return "mockdev" }
func (b oneProgram) Generate(*core.Loop) (string, error)    { return b.p.Source(), nil }
func (b oneProgram) Build(*core.Loop) (exec.Program, error) { return b.p, nil }

// TestColourLaunchFailsAfterOneRan: an indirect loop whose second
// colour's device launch fails after the first colour's kernel was queued
// fails saying its data may be partly updated, not as a loop of which
// nothing ran (exec.NothingRan: a fused loop would run its loops again);
// one whose first colour fails is one of which nothing ran.
func TestColourLaunchFailsAfterOneRan(t *testing.T) {
	f := newFixture(t, 3000, 500)
	w := f.dat("w", f.edges, 1, make([]float64, 3000))
	r := f.dat("r", f.nodes, 1, make([]float64, 500))
	l := loopOf(t, "void k(const double *w, double *a, double *b) { *a += *w; *b += *w; }", "k", f.edges, nil,
		core.Arg{Data: w, Access: core.Read, Kind: core.ArgDirect},
		core.Arg{Data: r, Map: f.m, Idx: 0, Access: core.Inc, Kind: core.ArgIndirect},
		core.Arg{Data: r, Map: f.m, Idx: 1, Access: core.Inc, Kind: core.ArgIndirect})
	d := &failingDriver{mockDriver: newMock(32 << 10), ok: 1 << 30}
	// Each launched colour adds 1 to r[0] on the device: the work it did.
	d.run = func(args []Arg, groups int) {
		for i := range args {
			if mb, ok := args[i].Buf.(*mockBuf); ok && r.Dev != nil && mb == r.Dev.(*devBuf).buf {
				mb.data[7]++ // marks r's device copy as changed
			}
		}
	}
	p := program(t, d.mockDriver, l)
	p.drv = d
	x := exec.New()
	b := &exec.Opened{Backend: oneProgram{p}, ID: core.NewID()}
	if err := x.Run(b, l); err != nil { // r becomes resident on the device
		t.Fatal(err)
	}
	before := len(d.launches)
	mark := r.Dev.(*devBuf).buf.(*mockBuf).data[7]
	d.ok = before + 1 // the second loop's first colour runs, its second fails
	err := x.Run(b, l)
	if err == nil {
		t.Fatal("no error")
	}
	if changed := r.Dev.(*devBuf).buf.(*mockBuf).data[7] != mark; !changed || exec.NothingRan(err) || !strings.Contains(err.Error(), "partly updated") {
		t.Errorf("a colour ran (changed r: %v), then: %v (NothingRan %v), want an error saying the data may be partly updated", changed, err, exec.NothingRan(err))
	}
	d.ok = len(d.launches) // the next loop's first colour fails
	if err := x.Run(b, l); !exec.NothingRan(err) {
		t.Errorf("the first colour failed: %v, want an error satisfying NothingRan", err)
	}
}
