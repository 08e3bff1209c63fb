package rss

import (
	"runtime"
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
