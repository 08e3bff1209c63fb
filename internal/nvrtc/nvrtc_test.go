package nvrtc

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/testreq"
)

// loadOrSkip loads NVRTC, skipping t where it is not installed, or
// failing it where OP2_REQUIRE names nvrtc (scripts/test-all fetches
// NVRTC and sets it; OP2_REQUIRE_NVRTC=1 still works).
func loadOrSkip(t *testing.T) *Library {
	t.Helper()
	l, err := Load()
	testreq.Check(t, "nvrtc", err, ErrUnavailable)
	return l
}

func TestCompileForHopperAndAmpere(t *testing.T) {
	l := loadOrSkip(t)
	t.Logf("NVRTC %s from %s", l.Version(), l.Path)
	archs, err := l.Archs()
	if err != nil {
		t.Fatal(err)
	}
	src := `extern "C" __global__ void twice(double *x, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] *= 2; }`
	for _, arch := range []int{80, 90} {
		if !slices.Contains(archs, arch) {
			t.Errorf("NVRTC %s does not list sm_%d (lists %v)", l.Version(), arch, archs)
			continue
		}
		cubin, log, err := l.Compile(src, "twice.cu", arch)
		if err != nil {
			t.Fatalf("sm_%d: %v", arch, err)
		}
		if log != "" && strings.TrimSpace(log) != "" {
			t.Errorf("sm_%d: log %q", arch, log)
		}
		if !bytes.HasPrefix(cubin, []byte("\x7fELF")) {
			t.Errorf("sm_%d: the CUBIN is not an ELF file (%d bytes)", arch, len(cubin))
		}
	}
}

func TestCompileErrorsAndWarnings(t *testing.T) {
	l := loadOrSkip(t)
	_, log, err := l.Compile("extern \"C\" __global__ void k(double *x) {\n  x[0] = y;\n}\n", "bad.cu", 80)
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v, want a CompileError", err)
	}
	for _, want := range []string{"bad.cu(2)", `identifier "y" is undefined`} {
		if !strings.Contains(err.Error(), want) || !strings.Contains(log, want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	_, log, err = l.Compile("extern \"C\" __global__ void k(double *x) { int unused; x[0] = 1; }\n", "warn.cu", 80)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log, "warning") {
		t.Errorf("an unused variable gives no warning: log %q", log)
	}
}
