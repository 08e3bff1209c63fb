package mpi_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/sigstack"
	"github.com/goop2/op2/internal/testreq"
)

func world(t *testing.T) *mpi.World {
	w, err := mpi.Init(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Finalize(); err != nil {
			t.Error(err)
		}
	})
	return w
}

func TestCollectivesAndMessages(t *testing.T) {
	if !mpitest.InRanks() {
		for _, np := range []int{2, 3} {
			mpitest.Run(t, np, 2*time.Minute)
		}
		return
	}
	w := world(t)
	n, r := w.Size(), w.Rank()
	if n != mpi.Launched() {
		t.Fatalf("size %d, launcher started %d", n, mpi.Launched())
	}
	// Allgather
	all := make([]byte, n)
	if err := w.Allgather([]byte{byte(r)}, all); err != nil {
		t.Fatal(err)
	}
	for i := range all {
		if all[i] != byte(i) {
			t.Fatalf("allgather %v", all)
		}
	}
	// Alltoallv: rank r sends i+1 copies of byte r to rank i.
	send := make([][]byte, n)
	for i := range send {
		send[i] = bytes.Repeat([]byte{byte(r)}, i+1)
	}
	got, err := w.Alltoallv(send)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if !bytes.Equal(got[i], bytes.Repeat([]byte{byte(i)}, r+1)) {
			t.Fatalf("from %d got %v", i, got[i])
		}
	}
	// Bcast
	b := []byte("xxxx")
	if r == 0 {
		copy(b, "root")
	}
	if err := w.Bcast(b, 0); err != nil || string(b) != "root" {
		t.Fatalf("bcast %q %v", b, err)
	}
	// A ring of non-blocking messages.
	out := []int64{int64(100 + r)}
	in := []int64{0}
	next, prev := (r+1)%n, (r+n-1)%n
	if err := w.Start(
		[]mpi.Msg{{Buf: uintptr(unsafe.Pointer(&in[0])), Bytes: 8, Rank: int32(prev), Tag: 7}},
		[]mpi.Msg{{Buf: uintptr(unsafe.Pointer(&out[0])), Bytes: 8, Rank: int32(next), Tag: 7}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Wait(); err != nil {
		t.Fatal(err)
	}
	if in[0] != int64(100+prev) {
		t.Fatalf("ring: got %d from %d", in[0], prev)
	}
	if !strings.Contains(w.Library(), "MPI") {
		t.Errorf("library version %q", w.Library())
	}
}

func TestPackUnpack(t *testing.T) {
	src := []int64{10, 11, 12, 13, 14}
	buf := make([]int64, 3)
	idx := []int32{4, 0, 2}
	mpi.Pack(unsafe.Pointer(&buf[0]), unsafe.Pointer(&src[0]), idx, 8)
	if buf[0] != 14 || buf[1] != 10 || buf[2] != 12 {
		t.Fatalf("pack %v", buf)
	}
	dst := make([]int64, 5)
	mpi.Unpack(unsafe.Pointer(&dst[0]), unsafe.Pointer(&buf[0]), idx, 8)
	if dst[4] != 14 || dst[0] != 10 || dst[2] != 12 || dst[1] != 0 {
		t.Fatalf("unpack %v", dst)
	}
}

// TestLauncherOfAnotherMPI starts this test as a plain process that looks
// launched by another MPI's launcher (MPICH's PMI_SIZE=2): the installed
// MPI then sees a world of one, and Init must say that the launcher and
// the compiler wrapper do not match instead of running every "rank" alone.
func TestLauncherOfAnotherMPI(t *testing.T) {
	if os.Getenv("OP2_TEST_FOREIGN_LAUNCHER") != "" {
		_, err := mpi.Init(t.TempDir(), 0)
		if !errors.Is(err, mpi.ErrUnavailable) {
			t.Fatalf("Init: %v, want ErrUnavailable", err)
		}
		for _, want := range []string{"started 2 processes", "different MPI installations"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
		return
	}
	testreq.Command(t, "mpi", "mpicc")
	if !strings.Contains(mpiLibraryKind(), "Open MPI") {
		t.Skip("needs Open MPI, which ignores MPICH's PMI_SIZE")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLauncherOfAnotherMPI$", "-test.count=1")
	cmd.Env = append(os.Environ(), "OP2_TEST_FOREIGN_LAUNCHER=1", "PMI_SIZE=2", "PMI_RANK=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestWrapperBuildTimesOut: Init's compile timeout bounds the build of
// the MPI shim with the MPI compiler wrapper (one that hangs waited the
// 5-minute default).
func TestWrapperBuildTimesOut(t *testing.T) {
	if os.Getenv("OP2_TEST_HANGING_MPICC") != "" {
		start := time.Now()
		_, err := mpi.Init(t.TempDir(), time.Second)
		if !errors.Is(err, mpi.ErrUnavailable) || !strings.Contains(err.Error(), "did not finish within 1s") || time.Since(start) > 30*time.Second {
			t.Fatalf("Init after %v: %v, want ErrUnavailable saying the build did not finish within 1s", time.Since(start), err)
		}
		return
	}
	hang := filepath.Join(t.TempDir(), "mpicc")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWrapperBuildTimesOut$", "-test.count=1")
	cmd.Env = append(os.Environ(), "OP2_TEST_HANGING_MPICC=1", "MPICC="+hang)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// mpiLibraryKind is what the MPI compiler wrapper says it wraps.
func mpiLibraryKind() string {
	out, _ := exec.Command("mpicc", "-showme:version").CombinedOutput()
	return string(out)
}

// TestAllreduceOr: every rank gets the OR of every rank's bytes.
func TestAllreduceOr(t *testing.T) {
	if !mpitest.InRanks() {
		mpitest.Run(t, 3, 2*time.Minute)
		return
	}
	w := world(t)
	buf := []byte{byte(1 << w.Rank()), 0, byte(w.Rank())}
	if err := w.AllreduceOr(buf); err != nil {
		t.Fatal(err)
	}
	if want := []byte{7, 0, 3}; !bytes.Equal(buf, want) {
		t.Fatalf("rank %d: %v, want %v", w.Rank(), buf, want)
	}
}

// TestAllreduceInt64: every rank gets the sum, minimum and maximum of
// every rank's values.
func TestAllreduceInt64(t *testing.T) {
	if !mpitest.InRanks() {
		mpitest.Run(t, 3, 2*time.Minute)
		return
	}
	w := world(t)
	r := int64(w.Rank())
	for _, tc := range []struct {
		op   int
		want []int64
	}{{mpi.Sum, []int64{3, -3, 1 << 40 * 3}}, {mpi.Min, []int64{0, -2, 1 << 40}}, {mpi.Max, []int64{2, 0, 1 << 40}}} {
		buf := []int64{r, -r, 1 << 40}
		if err := w.AllreduceInt64(buf, tc.op); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(buf, tc.want) {
			t.Fatalf("rank %d op %d: %v, want %v", w.Rank(), tc.op, buf, tc.want)
		}
	}
}

// TestWaitsEnd: with OP2_MPI_TIMEOUT=1s a receive no rank sends, and a
// barrier a rank never joins, end with a *TimeoutError that says what was
// waited for, instead of waiting for ever.
func TestWaitsEnd(t *testing.T) {
	if !mpitest.InRanks() {
		start := time.Now()
		out, err := mpitest.Output(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=1s")
		if err == nil {
			t.Fatalf("the job succeeded:\n%s", out)
		}
		for _, want := range []string{"rank 0: receive timed out: pending [0]", "rank 1: barrier timed out in MPI_Barrier"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if d := time.Since(start); d > time.Minute {
			t.Errorf("the job took %v", d)
		}
		return
	}
	w, err := mpi.Init(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if w.Timeout() != time.Second {
		t.Fatalf("timeout %v, want 1s", w.Timeout())
	}
	var te *mpi.TimeoutError
	if w.Rank() == 0 {
		in := []int64{0}
		if err := w.Start([]mpi.Msg{{Buf: uintptr(unsafe.Pointer(&in[0])), Bytes: 8, Rank: 1, Tag: 3}}, nil); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err := w.Wait()
		if !errors.As(err, &te) || te.Op != "MPI_Waitall" || time.Since(start) < time.Second {
			t.Fatalf("Wait: %v after %v, want a timeout after 1s", err, time.Since(start))
		}
		fmt.Printf("rank 0: receive timed out: pending %v: %v\n", te.Pending, err)
		time.Sleep(3 * time.Second) // rank 1 reports its own
	} else {
		err := w.Barrier()
		if !errors.As(err, &te) {
			t.Fatalf("Barrier: %v, want a timeout", err)
		}
		fmt.Printf("rank 1: barrier timed out in %s: %v\n", te.Op, err)
		time.Sleep(5 * time.Second)
	}
	w.Abort(3)
}

// TestTimeoutFromEnv reads OP2_MPI_TIMEOUT's forms.
func TestTimeoutFromEnv(t *testing.T) {
	for _, c := range []struct {
		v    string
		want time.Duration
		ok   bool
	}{{"", mpi.DefaultTimeout, true}, {"90s", 90 * time.Second, true}, {"2.5", 2500 * time.Millisecond, true},
		{"0", 0, true}, {"off", 0, true}, {"soon", 0, false}, {"-3s", 0, false},
		{"0s", 0, true}, {"0.0ms", 0, true}, {"0μs", 0, true}, {"0µs", 0, true}, {"-0s", 0, true}, {"1ns", time.Nanosecond, true},
		// Positive but below a nanosecond: not "no bound".
		{"1e-10", 0, false}, {"0.0000000001", 0, false}, {"0.5ns", 0, false}} {
		t.Setenv("OP2_MPI_TIMEOUT", c.v)
		got, err := mpi.TimeoutFromEnv()
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("OP2_MPI_TIMEOUT=%q: %v, %v; want %v (ok %v)", c.v, got, err, c.want, c.ok)
		}
	}
}

// TestSignalHandlersAfterInit: whatever MPI_Init loads (Open MPI's hwloc
// would start the OpenCL drivers, PoCL among them, whose SIGFPE handler
// lacks SA_ONSTACK) leaves every signal handler usable by the Go run time.
func TestSignalHandlersAfterInit(t *testing.T) {
	if !mpitest.InRanks() {
		mpitest.Run(t, 2, 2*time.Minute)
		return
	}
	world(t)
	if sig := sigstack.Missing(); sig != 0 {
		t.Errorf("after MPI_Init the handler of signal %d lacks SA_ONSTACK", sig)
	}
}

// TestGPUDirectFromEnv reads OP2_GPU_DIRECT's forms.
func TestGPUDirectFromEnv(t *testing.T) {
	for _, c := range []struct{ v, want string }{
		{"", "auto"}, {"auto", "auto"}, {"on", "on"}, {" ON ", "on"}, {"1", "on"}, {"off", "off"}, {"0", "off"}, {"sometimes", ""},
	} {
		t.Setenv("OP2_GPU_DIRECT", c.v)
		got, err := mpi.GPUDirectFromEnv()
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("OP2_GPU_DIRECT=%q: %q, %v; want %q", c.v, got, err, c.want)
		}
	}
}

// TestDeviceMemory: the library says whether it reads CUDA device memory
// (Open MPI always can say), and halo messages are device memory only
// where it does, or where OP2_GPU_DIRECT=on says so and the library does
// not say it does not (else Init refuses, naming the setting), and never
// with OP2_GPU_DIRECT=off.
func TestDeviceMemory(t *testing.T) {
	if !mpitest.InRanks() {
		for _, v := range []string{"auto", "on", "off"} {
			t.Run(v, func(t *testing.T) { mpitest.Run(t, 1, 2*time.Minute, "OP2_GPU_DIRECT="+v) })
		}
		return
	}
	if os.Getenv("OP2_GPU_DIRECT") == "on" {
		w, err := mpi.Init(t.TempDir(), 0)
		if err == nil {
			defer w.Finalize()
			if aware, known := w.CUDAAware(); !w.DeviceMemory() || (known && !aware) {
				t.Errorf("OP2_GPU_DIRECT=on, CUDA-aware %v (known %v): DeviceMemory %v", aware, known, w.DeviceMemory())
			}
		} else if !strings.Contains(err.Error(), "OP2_GPU_DIRECT=on, but the MPI library") {
			t.Errorf("OP2_GPU_DIRECT=on refused with %v, which does not say why", err)
		}
		return
	}
	w := world(t)
	aware, known := w.CUDAAware()
	t.Logf("%s: CUDA-aware %v (known %v)", w.Library(), aware, known)
	if strings.Contains(w.Library(), "Open MPI") && !known {
		t.Errorf("Open MPI did not say whether it is CUDA-aware")
	}
	want := map[string]bool{"auto": aware, "off": false}[os.Getenv("OP2_GPU_DIRECT")]
	if got := w.DeviceMemory(); got != want {
		t.Errorf("OP2_GPU_DIRECT=%s, CUDA-aware %v: DeviceMemory %v, want %v", os.Getenv("OP2_GPU_DIRECT"), aware, got, want)
	}
}
