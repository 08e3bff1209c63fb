package op2

import (
	"encoding/binary"
	"errors"
	"unsafe"

	"github.com/goop2/op2/internal/dist"
)

// The declarations rank 0 gathers and the layouts it sends back are
// encoded in a flat binary form: lengths as 64-bit integers, slices of
// int32 and bytes as their memory (every rank of a job runs on machines of
// one byte order). It is several times faster than encoding/gob on meshes
// of millions of elements, where Partition's start-up is paid once per run.

type encoder struct{ b []byte }

func (e *encoder) int(v int)      { e.b = binary.LittleEndian.AppendUint64(e.b, uint64(int64(v))) }
func (e *encoder) str(s string)   { e.int(len(s)); e.b = append(e.b, s...) }
func (e *encoder) bytes(v []byte) { e.int(len(v)); e.b = append(e.b, v...) }
func (e *encoder) int32s(v []int32) {
	e.int(len(v))
	if len(v) > 0 {
		e.b = append(e.b, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))...)
	}
}
func (e *encoder) ints(v []int) {
	e.int(len(v))
	for _, x := range v {
		e.int(x)
	}
}

type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("truncated message")

func (d *decoder) take(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		d.err = errShort
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int {
	v := d.take(8)
	if v == nil {
		return 0
	}
	return int(int64(binary.LittleEndian.Uint64(v)))
}

func (d *decoder) str() string   { return string(d.take(d.int())) }
func (d *decoder) bytes() []byte { return append([]byte(nil), d.take(d.int())...) }
func (d *decoder) count(size int) int {
	n := d.int()
	if n < 0 || n > len(d.b)/max(size, 1) {
		d.err = errShort
		return 0
	}
	return n
}
func (d *decoder) int32s() []int32 {
	n := d.count(4)
	raw := d.take(4 * n)
	if raw == nil || n == 0 {
		return nil
	}
	v := make([]int32, n)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*n), raw)
	return v
}
func (d *decoder) ints() []int {
	v := make([]int, d.count(8))
	for i := range v {
		v[i] = d.int()
	}
	return v
}

func encodeDeclaration(x *declaration) []byte {
	var e encoder
	e.str(x.Shape)
	e.str(x.Kind)
	e.int(x.Coords)
	e.int(x.Metis)
	e.ints(x.Sizes)
	e.int(len(x.Maps))
	for _, m := range x.Maps {
		e.int32s(m)
	}
	e.int(len(x.Dats))
	for _, b := range x.Dats {
		e.bytes(b)
	}
	return e.b
}

func decodeDeclaration(b []byte) (*declaration, error) {
	d := decoder{b: b}
	x := &declaration{Shape: d.str(), Kind: d.str(), Coords: d.int(), Metis: d.int(), Sizes: d.ints()}
	x.Maps = make([][]int32, d.count(8))
	for i := range x.Maps {
		x.Maps[i] = d.int32s()
	}
	x.Dats = make([][]byte, d.count(8))
	for i := range x.Dats {
		x.Dats[i] = d.bytes()
	}
	return x, d.err
}

func encodeLayout(l *layout) []byte {
	var e encoder
	e.str(l.Err)
	e.ints(l.GlobalSizes)
	e.int(l.Cut)
	e.int(l.Metis)
	e.ints(l.EdgeCuts)
	e.int(len(l.Local.Sets))
	for i := range l.Local.Sets {
		s := &l.Local.Sets[i]
		e.ints([]int{s.Core, s.Owned, s.Exec, s.Total})
		e.int32s(s.Global)
		e.int(len(s.Neighbours))
		for _, n := range s.Neighbours {
			e.int(n.Rank)
			e.int32s(n.Send)
			e.int32s([]int32{n.RecvExec[0], n.RecvExec[1], n.RecvNonexec[0], n.RecvNonexec[1]})
		}
	}
	e.int(len(l.Local.Maps))
	for _, m := range l.Local.Maps {
		e.int32s(m)
	}
	e.int(len(l.Dats))
	for _, b := range l.Dats {
		e.bytes(b)
	}
	return e.b
}

func decodeLayout(b []byte) (*layout, error) {
	d := decoder{b: b}
	l := &layout{Err: d.str(), GlobalSizes: d.ints(), Cut: d.int(), Metis: d.int(), EdgeCuts: d.ints()}
	l.Local.Sets = make([]dist.LocalSet, d.count(8))
	for i := range l.Local.Sets {
		s := &l.Local.Sets[i]
		if c := d.ints(); len(c) == 4 {
			s.Core, s.Owned, s.Exec, s.Total = c[0], c[1], c[2], c[3]
		} else {
			d.err = errShort
		}
		s.Global = d.int32s()
		s.Neighbours = make([]dist.Neighbour, d.count(8))
		for j := range s.Neighbours {
			n := &s.Neighbours[j]
			n.Rank = d.int()
			n.Send = d.int32s()
			if r := d.int32s(); len(r) == 4 {
				n.RecvExec, n.RecvNonexec = [2]int32{r[0], r[1]}, [2]int32{r[2], r[3]}
			} else {
				d.err = errShort
			}
		}
	}
	l.Local.Maps = make([][]int32, d.count(8))
	for i := range l.Local.Maps {
		l.Local.Maps[i] = d.int32s()
	}
	l.Dats = make([][]byte, d.count(8))
	for i := range l.Dats {
		l.Dats[i] = d.bytes()
	}
	return l, d.err
}
