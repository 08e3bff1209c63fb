package cuda

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// fakeGraphs records what a batch asks of the driver: the kernels it
// launches, in order (a graph's launches, when replayed, as the graph
// was made), the graphs alive.
type fakeGraphs struct {
	noGraph     bool
	failLaunch  uintptr // a kernel whose launch fails
	failMake    bool
	ran         []string // "fn:param0" per kernel run
	graphs      map[unsafe.Pointer][]string
	made, freed int
}

func newFake() *fakeGraphs { return &fakeGraphs{graphs: make(map[unsafe.Pointer][]string)} }

func describe(ls []launch, vals []uint64) []string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprintf("%d:%d", l.fn, vals[0]))
		vals = vals[l.nparams:]
	}
	return out
}

func (f *fakeGraphs) launchAll(ls []launch, vals []uint64) (int, error) {
	for i, d := range describe(ls, vals) {
		if ls[i].fn == f.failLaunch {
			return i, errors.New("CUDA_ERROR_INVALID_VALUE")
		}
		f.ran = append(f.ran, d)
	}
	return 0, nil
}

func (f *fakeGraphs) canGraph() bool { return !f.noGraph }

func (f *fakeGraphs) instantiate(ls []launch, vals []uint64) (unsafe.Pointer, error) {
	if f.failMake {
		return nil, errors.New("CUDA_ERROR_NOT_SUPPORTED")
	}
	exec := unsafe.Pointer(new(int)) // a handle
	f.graphs[exec] = describe(ls, vals)
	f.made++
	return exec, nil
}

func (f *fakeGraphs) launchGraph(exec unsafe.Pointer) error {
	g, ok := f.graphs[exec]
	if !ok {
		return errors.New("launch of a destroyed graph")
	}
	f.ran = append(f.ran, g...)
	return nil
}

func (f *fakeGraphs) destroyGraph(exec unsafe.Pointer) {
	delete(f.graphs, exec)
	f.freed++
}

// queue adds kernels fns, each with its parameter, to b.
func queue(t *testing.T, b *batch, fns []uintptr, param uint64) []string {
	t.Helper()
	var want []string
	for _, fn := range fns {
		if err := b.add(launch{fn: fn, groups: 1, local: 64, nparams: 2}, []uint64{param, 7}, fmt.Sprintf("loop%d", fn)); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("%d:%d", fn, param))
	}
	return want
}

// TestBatchReplaysRepeats: a batch runs its kernels in order however it
// is sent; the first time one by one, from the second a graph, made once
// and replayed; a batch with other parameters is another graph.
func TestBatchReplaysRepeats(t *testing.T) {
	f := newFake()
	b := newBatch(f)
	var want []string
	for round := range 4 {
		want = append(want, queue(t, b, []uintptr{1, 2, 3}, 10)...)
		if err := b.flush(); err != nil {
			t.Fatal(err)
		}
		if round == 2 {
			want = append(want, queue(t, b, []uintptr{1, 2, 3}, 11)...)
			if err := b.flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !slices.Equal(f.ran, want) {
		t.Fatalf("ran %v\nwant %v", f.ran, want)
	}
	if b.direct != 2 || b.made != 1 || b.replayed != 3 {
		t.Errorf("%d batches one by one, %d graphs made, %d replayed; want 2, 1, 3", b.direct, b.made, b.replayed)
	}
	if err := b.flush(); err != nil || len(f.ran) != len(want) {
		t.Errorf("an empty flush ran something or failed: %v", err)
	}
}

// TestBatchFullFlushes: the 32nd launch sends the batch; a lone launch
// never makes a graph.
func TestBatchFullFlushes(t *testing.T) {
	f := newFake()
	b := newBatch(f)
	fns := make([]uintptr, batchLaunches)
	for i := range fns {
		fns[i] = uintptr(i + 1)
	}
	for range 3 {
		queue(t, b, fns, 1)
		if len(b.launches) != 0 {
			t.Fatalf("%d launches still queued after a full batch", len(b.launches))
		}
	}
	if b.made != 1 || len(f.ran) != 3*batchLaunches {
		t.Errorf("%d graphs made, %d kernels ran; want 1, %d", b.made, len(f.ran), 3*batchLaunches)
	}
	for range 3 {
		queue(t, b, []uintptr{5}, 1)
		if err := b.flush(); err != nil {
			t.Fatal(err)
		}
	}
	if b.made != 1 {
		t.Errorf("a lone launch made a graph")
	}
}

// TestBatchGraphsBounded: at most batchGraphs graphs stay, the one
// replayed least recently going first; forget destroys them all.
func TestBatchGraphsBounded(t *testing.T) {
	f := newFake()
	b := newBatch(f)
	send := func(p uint64) {
		t.Helper()
		queue(t, b, []uintptr{1, 2}, p)
		if err := b.flush(); err != nil {
			t.Fatal(err)
		}
	}
	const kept = 1000 // replayed between the others: never the least recent
	send(kept)
	send(kept)
	for p := range batchGraphs + 5 {
		send(uint64(p))
		send(uint64(p))
		send(kept)
	}
	if made := b.made; made != batchGraphs+6 {
		t.Errorf("%d graphs made, want %d (the kept one once)", made, batchGraphs+6)
	}
	if len(f.graphs) != batchGraphs || len(b.graphs) != batchGraphs || len(b.order) != batchGraphs {
		t.Fatalf("%d graphs alive (%d kept, %d in order), want %d", len(f.graphs), len(b.graphs), len(b.order), batchGraphs)
	}
	b.forget()
	if len(f.graphs) != 0 || f.freed != f.made || len(b.seen) != 0 {
		t.Errorf("after forget: %d graphs alive, %d of %d freed, %d seen", len(f.graphs), f.freed, f.made, len(b.seen))
	}
}

// TestBatchErrors: a failing launch's error names its loop, and is a
// *QueuedError saying launches may have run (whichever loop's call gets
// it); when graphs cannot be made the kernels still run one by one; a
// late error comes back from the next flush, as a *QueuedError too.
func TestBatchErrors(t *testing.T) {
	f := newFake()
	f.failLaunch = 2
	b := newBatch(f)
	queue(t, b, []uintptr{1, 2, 3}, 1)
	err := b.flush()
	if err == nil || !strings.Contains(err.Error(), "loop2") || !strings.Contains(err.Error(), "INVALID_VALUE") {
		t.Fatalf("flush: %v, want loop2's launch error", err)
	}
	var q *QueuedError
	if !errors.As(err, &q) || !q.MayHaveRun() {
		t.Errorf("flush: %T, want a *QueuedError", err)
	}
	if len(b.launches) != 0 {
		t.Fatal("a failed batch stays queued")
	}

	f = newFake()
	f.failMake = true
	b = newBatch(f)
	var off error
	b.graphsOff = func(err error) { off = err }
	for round := range 2 + batchMakeFail {
		queue(t, b, []uintptr{1, 2}, 1)
		if err := b.flush(); err != nil {
			t.Fatal(err)
		}
		// Seen once, then failing to make a graph batchMakeFail times.
		if wantOff := round >= batchMakeFail; (b.noGraphs != nil) != wantOff || (off != nil) != wantOff {
			t.Errorf("round %d: graphs off %v, told %v; want off %v", round, b.noGraphs, off, wantOff)
		}
	}
	if n := 2 * (2 + batchMakeFail); len(f.ran) != n || b.direct != 2+batchMakeFail {
		t.Errorf("with graphs failing: %d kernels ran, %d batches one by one; want %d, %d", len(f.ran), b.direct, n, 2+batchMakeFail)
	}

	f = newFake()
	f.noGraph = true
	b = newBatch(f)
	b.late = errors.New("earlier")
	queue(t, b, []uintptr{1}, 1)
	if err := b.flush(); err == nil || !strings.Contains(err.Error(), "earlier") || len(f.ran) != 1 || !errors.As(err, &q) {
		t.Errorf("flush after a late error: %v, %d kernels ran", err, len(f.ran))
	}
	if err := b.flush(); err != nil {
		t.Errorf("the late error came back twice: %v", err)
	}
}
