package dynlib

import (
	"errors"
	"strings"
	"testing"
)

var errNo = errors.New("unavailable")

// TestOnce: the first success is kept, failures are remembered by name
// (open is not called again), another file after a success is refused
// naming both, and Forget starts over.
func TestOnce(t *testing.T) {
	type lib struct{ path string }
	o := Once[lib]{What: "Lib", Env: "OP2_LIB", Unavailable: errNo}
	calls := 0
	open := func(name string) (*lib, string, error) {
		calls++
		if name == "missing" {
			return nil, "", errors.New("no such file")
		}
		p := "/usr/lib/default.so"
		if name != "" {
			p = name
		}
		return &lib{p}, p, nil
	}
	for range 2 {
		if _, err := o.Load("missing", open); err == nil || calls != 1 {
			t.Fatalf("missing: %v after %d opens", err, calls)
		}
	}
	l, err := o.Load("", open)
	if err != nil || l.path != "/usr/lib/default.so" || o.Loaded() != l || calls != 2 {
		t.Fatalf("default: %v, %v, %d opens", l, err, calls)
	}
	if again, err := o.Load("", open); err != nil || again != l || calls != 2 {
		t.Fatalf("default again: %v, %v, %d opens", again, err, calls)
	}
	_, err = o.Load("/opt/other.so", open)
	if !errors.Is(err, errNo) || !strings.Contains(err.Error(), "OP2_LIB=/opt/other.so, but this process has already loaded Lib from /usr/lib/default.so") {
		t.Fatalf("another file: %v", err)
	}
	o.Forget()
	if o.Loaded() != nil {
		t.Fatal("Forget kept the library")
	}
	if l, err := o.Load("/opt/other.so", open); err != nil || l.path != "/opt/other.so" {
		t.Fatalf("after Forget: %v, %v", l, err)
	}
}
