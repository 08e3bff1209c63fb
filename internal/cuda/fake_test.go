package cuda

import (
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/cuda/cudatest"
)

// TestBatchOnFakeDriver runs the C side of batches and graphs against
// the stand-in driver of package cudatest, whose test kernel adds its
// second parameter to the word its first points at. Whether launches go
// one by one or as graphs, the word holds every addition queued before a
// read, also while another goroutine frees buffers (as the collector's
// cleanups do); a repeated batch goes as a graph; a launch the driver
// refuses comes back naming its loop; a launch left waiting goes by
// itself.
func TestBatchOnFakeDriver(t *testing.T) {
	if cudatest.Child() {
		fakeDriverChild(t)
		return
	}
	log := cudatest.Run(t, "TestBatchOnFakeDriver")
	count := func(prefix string) int {
		n := 0
		for line := range strings.Lines(log) {
			if strings.HasPrefix(line, prefix) {
				n++
			}
		}
		return n
	}
	// 40 rounds of 3 launches one by one, 40 batched with a read after
	// each (the first batch goes kernel by kernel, the second makes the
	// graph, every later one replays it), 40 more with frees splitting
	// some batches.
	if n := count("instantiate 3"); n < 1 {
		t.Errorf("%d graphs of 3 kernels made, want at least 1", n)
	}
	if n := count("graph launch 3"); n < 39 {
		t.Errorf("%d graphs of 3 kernels launched, want at least 39", n)
	}
	if n := count("kernel "); n != 3*3*40+3 {
		t.Errorf("%d kernels ran, want %d", n, 3*3*40+3)
	}
	if n := count("graph destroy"); n < 1 {
		t.Error("no graph destroyed when its kernel was unloaded")
	}
}

func fakeDriverChild(t *testing.T) {
	d, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := d.Load([]byte("image"), "op2_stub", "adder")
	if err != nil {
		t.Fatal(err)
	}
	word, err := d.Alloc(8)
	if err != nil {
		t.Fatal(err)
	}
	var p Params
	launch := func(add, local int) error {
		s := p.Slots(2)
		s[0], s[1] = word.Ptr, uint64(add)
		return d.Launch(f, 1, local, 0, &p)
	}
	read := func() int64 {
		var v int64
		if err := d.Read(word, unsafe.Pointer(&v), 8); err != nil {
			t.Fatal(err)
		}
		return v
	}
	want := int64(0)
	rounds := func(what string) {
		for round := range 40 {
			for k := 1; k <= 3; k++ {
				if err := launch(k, 64); err != nil {
					t.Fatal(err)
				}
				want += int64(k)
			}
			if got := read(); got != want {
				t.Fatalf("%s, round %d: the word is %d, want %d", what, round, got, want)
			}
		}
	}
	rounds("one by one")
	// Page-locked host memory: a copy of the word into it and back.
	host, err := d.AllocHost(8)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Read(word, host, 8); err != nil || *(*int64)(host) != want {
		t.Fatalf("the word read into page-locked memory: %d, %v; want %d", *(*int64)(host), err, want)
	}
	d.FreeHost(host)
	// No batch goes by itself while the parent counts graphs (a loaded
	// machine may pause the test for a millisecond).
	batchDelay = time.Hour
	if err := d.Batch(true, func(err error) { t.Errorf("graphs off: %v", err) }); err != nil {
		t.Fatal(err)
	}
	rounds("batched")
	// Buffers freed from another goroutine meanwhile, as the collector's
	// cleanups free them: each Free sends the batch, wherever it is.
	stop, freed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(freed)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if b, err := d.Alloc(8); err == nil {
				d.Free(b)
			}
		}
	}()
	rounds("batched, buffers freed meanwhile")
	close(stop)
	<-freed
	// A refused launch (2048 threads) queued after a good one: the good
	// one runs, the error names the loop.
	if err := launch(5, 64); err != nil {
		t.Fatal(err)
	}
	if err := launch(7, 2048); err != nil {
		t.Fatal(err)
	}
	var v int64
	err = d.Read(word, unsafe.Pointer(&v), 8)
	if err == nil || !strings.Contains(err.Error(), "adder") || !strings.Contains(err.Error(), "CUDA_ERROR_INVALID_VALUE") {
		t.Fatalf("reading after a refused launch: %v, want an error naming loop adder", err)
	}
	if got := read(); got != want+5 {
		t.Fatalf("after the refused launch: the word is %d, want %d", got, want+5)
	}
	// A launch the host leaves waiting goes by itself after batchDelay.
	batchDelay = time.Millisecond
	kernels := func() int { return strings.Count(cudatest.Log(), "kernel ") }
	before := kernels()
	if err := launch(1, 64); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); kernels() == before; time.Sleep(time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("a queued launch waited 10 s for the host")
		}
	}
	// A launch queued before Free runs before it; Unload forgets graphs.
	if err := launch(1, 64); err != nil {
		t.Fatal(err)
	}
	d.Unload(f)
	d.Free(word)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
