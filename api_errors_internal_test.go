package op2

import (
	"errors"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// TestErrFormsReturnDeviceFailure: when copying the values from the
// device fails, every Err form of an accessor returns the error (prefixed
// once, naming the data, with the cause in its chain) instead of
// panicking, and the data stays on the device.
func TestErrFormsReturnDeviceFailure(t *testing.T) {
	cause := errors.New("device lost")
	set, err := NewSet(4, "s")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := NewDat(set, 2, []float64{1, 2, 3, 4, 5, 6, 7, 8}, "x")
	g, _ := NewGlobal(1, []int32{7}, "g")
	view, _ := d.View(1)
	ms, _ := NewMixedSet([]*Set{set}, "ms")
	md, _ := NewMixedDat[float64](ms, []int{1}, nil, "md")
	for _, s := range []*core.Storage{&d.s, &g.s, &md.dats[0].s} {
		s.Dev, s.State = failingBuffer{cause}, core.StateDevice
	}
	ignore := func(_ any, err error) error { return err }
	cases := []struct {
		name string
		s    *core.Storage
		call func() error
	}{
		{"Dat.DataErr", &d.s, func() error { return ignore(d.DataErr()) }},
		{"Dat.DataROErr", &d.s, func() error { return ignore(d.DataROErr()) }},
		{"DatView.DataROErr", &d.s, func() error { return ignore(view.DataROErr()) }},
		{"Global.DataErr", &g.s, func() error { return ignore(g.DataErr()) }},
		{"Global.DataROErr", &g.s, func() error { return ignore(g.DataROErr()) }},
		{"Global.ValueErr", &g.s, func() error { return ignore(g.ValueErr()) }},
		{"Global.SetValueErr", &g.s, func() error { return g.SetValueErr(9) }},
		{"MixedDat.DataErr", &md.dats[0].s, func() error { return ignore(md.DataErr()) }},
		{"MixedDat.DataROErr", &md.dats[0].s, func() error { return ignore(md.DataROErr()) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panicked: %v", p)
					}
				}()
				err = c.call()
			}()
			if err == nil || !errors.Is(err, cause) || !strings.HasPrefix(err.Error(), prefix) || strings.Count(err.Error(), prefix) != 1 {
				t.Fatalf("error %v, want the device failure, prefixed once", err)
			}
			if !strings.Contains(err.Error(), "copying "+c.s.Describe()+" from the device") {
				t.Errorf("error %q does not name the data", err)
			}
			if c.s.State != core.StateDevice {
				t.Errorf("state after the failure: %v", c.s.State)
			}
		})
	}
	if g.data[0] != 7 {
		t.Errorf("a failed SetValueErr changed the value to %d", g.data[0])
	}
}
