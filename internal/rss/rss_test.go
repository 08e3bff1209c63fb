package rss

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestPeakGrows(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("peak memory is reported on Linux only")
	}
	before := Peak()
	if before <= 0 {
		t.Fatalf("Peak() = %d before allocating", before)
	}
	b := make([]byte, 64<<20)
	for i := range b {
		b[i] = 1
	}
	// The peak holds the 64 MiB now resident. (It need not exceed the
	// earlier peak by 64 MiB: memory freed since that peak is reused.)
	if after := Peak(); after < 64<<20 || after < before {
		t.Errorf("Peak() = %d after touching 64 MiB, %d before", after, before)
	}
	runtime.KeepAlive(b)
}

func TestResetPeak(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	b := make([]byte, 64<<20)
	for i := range b {
		b[i] = 1
	}
	runtime.KeepAlive(b)
	b = nil
	debug.FreeOSMemory()
	if !ResetPeak() {
		t.Skip("/proc/self/clear_refs is not writable here")
	}
	now, peak := Status()
	if now <= 0 || peak < now {
		t.Fatalf("Status() = %d, %d after ResetPeak", now, peak)
	}
	c := make([]byte, 32<<20)
	for i := range c {
		c[i] = 1
	}
	if _, p := Status(); p < now+16<<20 || p > now+160<<20 {
		t.Errorf("peak %d after touching 32 MiB more than %d", p, now)
	}
	runtime.KeepAlive(c)
}
