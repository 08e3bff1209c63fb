package devrt

import "unsafe"

// Memory is the memory part of a device API whose buffers are of type B,
// as internal/opencl's Context (*opencl.Buffer) and internal/cuda's Device
// (*cuda.Buffer) provide it.
type Memory[B any] interface {
	Alloc(n int) (B, error)
	Free(b B)
	Write(b B, src unsafe.Pointer, n int) error
	Read(b B, dst unsafe.Pointer, n int) error
	ReadAt(b B, off int, dst unsafe.Pointer, n int) error
	WriteAt(b B, off int, src unsafe.Pointer, n int) error
	Copy(dst, src B, n int) error
	Zero(b B, n int) error
}

// Buffers gives a Memory the memory methods of Driver, so that a driver
// embeds it and adds only Backend, Describe, LocalMem and Launch. Every
// Buffer it is handed must be one its Alloc returned, which holds a B.
type Buffers[B any] struct {
	Mem Memory[B]
}

// Alloc allocates n bytes; on an error the Buffer is nil, not a nil B.
func (m Buffers[B]) Alloc(n int) (Buffer, error) {
	b, err := m.Mem.Alloc(n)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Free frees b.
func (m Buffers[B]) Free(b Buffer) { m.Mem.Free(b.(B)) }

// Write copies n bytes from host memory src to b.
func (m Buffers[B]) Write(b Buffer, src unsafe.Pointer, n int) error {
	return m.Mem.Write(b.(B), src, n)
}

// Read copies n bytes from b to host memory dst.
func (m Buffers[B]) Read(b Buffer, dst unsafe.Pointer, n int) error {
	return m.Mem.Read(b.(B), dst, n)
}

// ReadAt copies n bytes from byte offset off of b to host memory dst.
func (m Buffers[B]) ReadAt(b Buffer, off int, dst unsafe.Pointer, n int) error {
	return m.Mem.ReadAt(b.(B), off, dst, n)
}

// WriteAt copies n bytes from host memory src to byte offset off of b.
func (m Buffers[B]) WriteAt(b Buffer, off int, src unsafe.Pointer, n int) error {
	return m.Mem.WriteAt(b.(B), off, src, n)
}

// Copy copies the first n bytes of src to dst, on the device.
func (m Buffers[B]) Copy(dst, src Buffer, n int) error {
	return m.Mem.Copy(dst.(B), src.(B), n)
}

// Zero sets the first n bytes of b to zero.
func (m Buffers[B]) Zero(b Buffer, n int) error { return m.Mem.Zero(b.(B), n) }
