package plan

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestEnvTrue(t *testing.T) {
	for v, want := range map[string]bool{
		"": false, "0": false, "false": false, "no": false, "junk": false,
		"1": true, "true": true, "TRUE": true, "True": true, "t": true, " 1 ": true,
	} {
		if got := envTrue(v); got != want {
			t.Errorf("envTrue(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestSetChecking(t *testing.T) {
	old := CheckingEnabled()
	defer SetChecking(old)
	SetChecking(true)
	if !CheckingEnabled() {
		t.Error("SetChecking(true) ignored")
	}
	SetChecking(false)
	if CheckingEnabled() {
		t.Error("SetChecking(false) ignored")
	}
}

func TestCache(t *testing.T) {
	old := CheckingEnabled()
	defer SetChecking(old)
	SetChecking(true)

	var c Cache
	in := pathInput(3)
	p1, err := c.Get("path", in)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := c.Get("path", in)
	if err != nil || p2 != p1 {
		t.Fatalf("second Get returned %p, %v; want the cached %p", p2, err, p1)
	}
	if c.Len() != 1 {
		t.Errorf("Len %d, want 1", c.Len())
	}

	// Failures are reported and not cached.
	bad := pathInput(3)
	bad.Args[0].Idx = 5
	if _, err := c.Get("bad", bad); err == nil || !strings.Contains(err.Error(), "arg 0") {
		t.Fatalf("bad input: err = %v", err)
	}
	if c.Len() != 1 {
		t.Errorf("failed build cached: Len %d", c.Len())
	}
	if p, err := c.Get("bad", in); err != nil || p == nil {
		t.Fatalf("retry after failure: %v", err)
	}

	// Concurrent misses and hits on a few keys.
	c.Reset()
	if c.Len() != 0 {
		t.Fatal("Reset left entries")
	}
	var wg sync.WaitGroup
	got := make([]*Plan, 32)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := pathInput(1 + i%4)
			p, err := c.Get(fmt.Sprint("bs", 1+i%4), in)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = p
		}()
	}
	wg.Wait()
	for i := range got {
		if got[i] != got[i%4] {
			t.Errorf("goroutine %d got a different plan for its key", i)
		}
		if got[i].BlockSize != 1+i%4 {
			t.Errorf("goroutine %d: block size %d", i, got[i].BlockSize)
		}
	}
	if c.Len() != 4 {
		t.Errorf("Len %d, want 4", c.Len())
	}
}
