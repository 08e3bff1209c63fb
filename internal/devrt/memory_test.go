package devrt

import (
	"errors"
	"slices"
	"testing"
	"unsafe"
)

// typedMem is a Memory over *mockBuf that records the calls it gets.
type typedMem struct {
	failAlloc bool
	calls     []string
}

func (m *typedMem) Alloc(n int) (*mockBuf, error) {
	m.calls = append(m.calls, "Alloc")
	if m.failAlloc {
		return nil, errors.New("out of memory")
	}
	return &mockBuf{data: make([]byte, n)}, nil
}
func (m *typedMem) Free(b *mockBuf) { m.calls = append(m.calls, "Free"); b.data = nil }
func (m *typedMem) Write(b *mockBuf, src unsafe.Pointer, n int) error {
	m.calls = append(m.calls, "Write")
	copy(b.data, unsafe.Slice((*byte)(src), n))
	return nil
}
func (m *typedMem) Read(b *mockBuf, dst unsafe.Pointer, n int) error {
	m.calls = append(m.calls, "Read")
	copy(unsafe.Slice((*byte)(dst), n), b.data)
	return nil
}
func (m *typedMem) ReadAt(b *mockBuf, off int, dst unsafe.Pointer, n int) error {
	m.calls = append(m.calls, "ReadAt")
	copy(unsafe.Slice((*byte)(dst), n), b.data[off:])
	return nil
}
func (m *typedMem) WriteAt(b *mockBuf, off int, src unsafe.Pointer, n int) error {
	m.calls = append(m.calls, "WriteAt")
	copy(b.data[off:off+n], unsafe.Slice((*byte)(src), n))
	return nil
}
func (m *typedMem) Copy(dst, src *mockBuf, n int) error {
	m.calls = append(m.calls, "Copy")
	copy(dst.data[:n], src.data)
	return nil
}
func (m *typedMem) Zero(b *mockBuf, n int) error {
	m.calls = append(m.calls, "Zero")
	clear(b.data[:n])
	return nil
}

// TestBuffers: each Driver memory method reaches the Memory with the
// buffer its Alloc made, and a failed Alloc gives a nil Buffer.
func TestBuffers(t *testing.T) {
	mem := &typedMem{}
	drv := Buffers[*mockBuf]{Mem: mem}
	a, err := drv.Alloc(4)
	if err != nil {
		t.Fatal(err)
	}
	b, err := drv.Alloc(4)
	if err != nil {
		t.Fatal(err)
	}
	in := [4]byte{1, 2, 3, 4}
	var out [4]byte
	steps := []struct {
		name string
		do   func() error
		want [4]byte // out after the step
	}{
		{"Write then Read", func() error {
			if err := drv.Write(a, unsafe.Pointer(&in[0]), 4); err != nil {
				return err
			}
			return drv.Read(a, unsafe.Pointer(&out[0]), 4)
		}, [4]byte{1, 2, 3, 4}},
		{"ReadAt", func() error { out = [4]byte{}; return drv.ReadAt(a, 2, unsafe.Pointer(&out[0]), 2) }, [4]byte{3, 4}},
		{"Copy", func() error {
			if err := drv.Copy(b, a, 3); err != nil {
				return err
			}
			return drv.Read(b, unsafe.Pointer(&out[0]), 4)
		}, [4]byte{1, 2, 3, 0}},
		{"Zero", func() error {
			if err := drv.Zero(b, 2); err != nil {
				return err
			}
			return drv.Read(b, unsafe.Pointer(&out[0]), 4)
		}, [4]byte{0, 0, 3, 0}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if out != s.want {
			t.Errorf("%s: read %v, want %v", s.name, out, s.want)
		}
	}
	drv.Free(a)
	if a.(*mockBuf).data != nil {
		t.Error("Free did not reach the Memory's Free with the buffer")
	}
	want := []string{"Alloc", "Alloc", "Write", "Read", "ReadAt", "Copy", "Read", "Zero", "Read", "Free"}
	if !slices.Equal(mem.calls, want) {
		t.Errorf("calls %v, want %v", mem.calls, want)
	}

	mem.failAlloc = true
	if buf, err := drv.Alloc(4); err == nil || buf != nil {
		t.Errorf("failed Alloc = %v (%T), %v; want a nil Buffer and an error", buf, buf, err)
	}
}
