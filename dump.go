package op2

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/regfile"
)

// Dat dumps in OP2's two formats (op_print_dat_to_txtfile and
// op_print_dat_to_binfile):
//
// Text: a first line "size dim", then one line per element holding its dim
// values, each written with a space before it: float64 as C's "%+.15E"
// (16 significant digits; -0 is written as +0, as OP2 does), float32 as
// "%+f" (6 decimals), int32 and int64 as "%+d", uint32 as "+%d".
//
// Binary: int32 size, int32 dim, then the size×dim values as they are in
// memory (little-endian on every platform GoOP2 runs on).
//
// Under MPI every rank calls the functions together (they are collective):
// rank 0 writes or reads the file, in the numbering the mesh was declared
// with, and every rank returns the same error.

// WriteText writes the dat's values to path in OP2's text format (see
// op_print_dat_to_txtfile): "size dim" on the first line, then one line
// per element. Doubles carry 16 significant digits, as OP2 writes them,
// which is exact for most values but not all; floats carry 6 decimals.
// Use WriteBinary for a bit-exact dump. On a device backend the values
// are first brought to the host (the device copy stays valid). Under MPI
// it is collective and rank 0 writes every element in the declared
// numbering.
func (d *Dat[T]) WriteText(path string) error {
	return d.dump(path, func(v []T) []byte { return formatText(v, d.s.Type, d.s.Dim) })
}

// WriteBinary writes the dat's values to path in OP2's binary format (see
// op_print_dat_to_binfile): int32 size, int32 dim, then the raw values,
// little-endian. Like WriteText it works on every backend and, under MPI,
// writes the whole dat from rank 0 in the declared numbering.
func (d *Dat[T]) WriteBinary(path string) error {
	return d.dump(path, func(v []T) []byte {
		n := len(v) / max(d.s.Dim, 1)
		b := make([]byte, 8, 8+len(v)*d.s.Type.Size())
		binary.LittleEndian.PutUint32(b[0:], uint32(n))
		binary.LittleEndian.PutUint32(b[4:], uint32(d.s.Dim))
		return append(b, rawBytes(v)...)
	})
}

// ReadText loads the dat's values from a file in OP2's text format, as
// WriteText and OP2's op_print_dat_to_txtfile write it. The file's size
// and dim must equal the dat's set size (over all ranks) and dim. A
// malformed file is refused with an error naming the file and the line,
// and the dat is left unchanged. Under MPI it is collective: rank 0 reads
// the file and every rank receives its elements, halo included.
func (d *Dat[T]) ReadText(path string) error {
	return d.load(path, nil, func(b []byte, n int) ([]T, error) { return parseText[T](b, d.s.Type, n, d.s.Dim) })
}

// ReadBinary loads the dat's values from a file in OP2's binary format, as
// WriteBinary and op_print_dat_to_binfile write it. The size and dim in
// the header must match the dat, and the file must hold exactly size×dim
// values of the dat's type. Like ReadText it is collective under MPI.
func (d *Dat[T]) ReadBinary(path string) error {
	tooLarge := func(size int64, n int) error {
		hi, values := bits.Mul64(uint64(n), uint64(d.s.Dim))
		hi2, bytes := bits.Mul64(values, uint64(d.s.Type.Size()))
		if hi == 0 && hi2 == 0 && bytes <= math.MaxInt64-8 && size > int64(bytes)+8 {
			return fmt.Errorf("%d bytes, more than the %d expected (8 header bytes and %d×%d %s values)", size, bytes+8, n, d.s.Dim, d.s.Type)
		}
		return nil
	}
	return d.load(path, tooLarge, func(b []byte, n int) ([]T, error) {
		if len(b) < 8 {
			return nil, fmt.Errorf("%d bytes: too short for the header (int32 size, int32 dim)", len(b))
		}
		size, dim := int(int32(binary.LittleEndian.Uint32(b))), int(int32(binary.LittleEndian.Uint32(b[4:])))
		if size != n || dim != d.s.Dim {
			return nil, fmt.Errorf("header says size %d, dim %d; the dat has size %d, dim %d", size, dim, n, d.s.Dim)
		}
		want := 8 + n*d.s.Dim*d.s.Type.Size()
		if len(b) != want {
			return nil, fmt.Errorf("%d bytes, want %d (8 header bytes and %d×%d %s values)", len(b), want, n, d.s.Dim, d.s.Type)
		}
		v := make([]T, n*d.s.Dim)
		copy(rawBytes(v), b[8:])
		return v, nil
	})
}

// rawBytes views v's memory as bytes.
func rawBytes[T Scalar](v []T) []byte {
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(z)))
}

// refuseUnpartitioned refuses dumps of a mesh declared on several ranks
// but not partitioned yet: each rank holds only its block.
func refuseUnpartitioned(what string, s *core.Storage) error {
	distributing, err := distributing()
	if err != nil {
		return err
	}
	if distributing {
		return fmt.Errorf("op2: %s %s: the mesh is declared on %d MPI ranks; call op2.Partition first", what, s.Describe(), rt.proc.Started().Size())
	}
	return nil
}

// dump gathers the dat on rank 0, which writes format(values) to path;
// every rank returns rank 0's result.
func (d *Dat[T]) dump(path string, format func([]T) []byte) error {
	if err := refuseUnpartitioned("writing", &d.s); err != nil {
		return err
	}
	v, err := d.Gather()
	if err != nil {
		return err
	}
	if Rank() == 0 {
		if werr := writeDump(path, format(v)); werr != nil {
			err = fmt.Errorf("op2: writing %s: %w", d.s.Describe(), werr)
		}
	}
	return shareError(fmt.Sprintf("writing dat %q", d.s.Name), err)
}

// writeDump writes b to path, reporting a failed close.
func writeDump(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// shareError gives every rank rank 0's error (collective under MPI), and
// an error when the ranks are at different operations (what).
func shareError(what string, err error) error {
	w := rt.proc.Started()
	if w == nil || w.Size() == 1 {
		return err
	}
	if w.Rank() != 0 {
		err = nil
	}
	aerr := mpiFatal(dist.AgreeStep(w, what, err))
	switch {
	case aerr == nil:
		return nil
	case err != nil:
		return err // rank 0's own error, as the other ranks report it
	}
	return fmt.Errorf("op2: %s: %w", what, aerr)
}

// load reads path on rank 0, parses it with parse (given the dat's global
// size) and puts the values into the dat; under MPI each rank gets its
// local elements' values. The path must name a regular file, read no
// further than its size; tooLarge, if not nil, refuses a file's size
// before it is read.
func (d *Dat[T]) load(path string, tooLarge func(size int64, n int) error, parse func(b []byte, n int) ([]T, error)) error {
	if err := refuseUnpartitioned("reading", &d.s); err != nil {
		return err
	}
	set := setOf(d.s.Set)
	var vals []T
	var err error
	if Rank() == 0 {
		var b []byte
		if b, err = readDump(path, set.GlobalSize(), tooLarge); err != nil {
			err = fmt.Errorf("op2: reading %s: %w", d.s.Describe(), err)
		} else if vals, err = parse(b, set.GlobalSize()); err != nil {
			err = fmt.Errorf("op2: reading %s from %s: %w", d.s.Describe(), path, err)
		}
	}
	if err = shareError(fmt.Sprintf("reading dat %q", d.s.Name), err); err != nil {
		return err
	}
	forced := lock(forCollective)
	defer unlock()
	if forced != nil {
		return forced
	}
	h, ok := d.s.Set.Halo.(*dist.SetHalo)
	w := rt.proc.Started()
	if !ok || w == nil {
		if err := apiError(d.s.HostAccess(true)); err != nil {
			return err
		}
		if decl := d.s.Set.Declared; decl != nil { // renumbered: the file is in the declared numbering
			dim := d.s.Dim
			for i, g := range decl {
				copy(d.data[i*dim:(i+1)*dim], vals[int(g)*dim:(int(g)+1)*dim])
			}
			return nil
		}
		copy(d.data[:d.s.Set.Owned*d.s.Dim], vals)
		return nil
	}
	// Each rank gets its local elements from rank 0 by global number.
	total := d.s.Set.Total
	got, err := dist.ScatterRows(w, h.Global[:total], rawBytes(vals), d.s.Dim*d.s.Type.Size())
	if err != nil {
		return mpiFatal(fmt.Errorf("op2: reading %s: %w", d.s.Describe(), err))
	}
	if err := apiError(d.s.HostAccess(true)); err != nil {
		return err
	}
	copy(rawBytes(d.data[:total*d.s.Dim]), got)
	d.s.HaloStale = false // the halo got the file's values too
	return nil
}

// readDump reads the regular file at path whole (see regfile.Open): a
// FIFO, a device or a directory is refused before it is opened, and a
// file whose size tooLarge refuses is not read.
func readDump(path string, n int, tooLarge func(size int64, n int) error) ([]byte, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if tooLarge != nil {
		if err := tooLarge(f.Size, n); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return f.ReadAll()
}

// formatText renders v (dim values per element) in OP2's text format.
func formatText[T Scalar](v []T, typ core.ScalarType, dim int) []byte {
	n := 0
	if dim > 0 {
		n = len(v) / dim
	}
	var b bytes.Buffer
	b.Grow(16 + len(v)*24)
	fmt.Fprintf(&b, "%d %d\n", n, dim)
	var num []byte
	for i := 0; i < n; i++ {
		for j := 0; j < dim; j++ {
			num = appendOP2Value(num[:0], v[i*dim+j], typ)
			b.WriteByte(' ')
			b.Write(num)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// appendOP2Value appends x as OP2's text dump writes a value of type typ.
func appendOP2Value[T Scalar](b []byte, x T, typ core.ScalarType) []byte {
	switch typ {
	case core.Float64, core.Float32:
		f := float64(x)
		verb, digits, upper := byte('E'), 15, true
		if typ == core.Float32 {
			verb, digits, upper = 'f', 6, false
		}
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			s := "nan"
			if math.IsInf(f, 0) {
				s = "inf"
			}
			if upper {
				s = strings.ToUpper(s)
			}
			sign := byte('+')
			if math.Signbit(f) {
				sign = '-'
			}
			return append(append(b, sign), s...)
		case f == 0 && typ == core.Float64:
			f = 0 // OP2 writes -0 as +0
		}
		if !math.Signbit(f) {
			b = append(b, '+')
		}
		return strconv.AppendFloat(b, f, verb, digits, 64)
	case core.Uint32:
		return strconv.AppendUint(append(b, '+'), uint64(x), 10)
	}
	i := int64(x)
	if i >= 0 {
		b = append(b, '+')
	}
	return strconv.AppendInt(b, i, 10)
}

// parseText reads OP2's text format: a header "size dim" that must say n
// and dim, then n lines of dim values. Empty lines after the last element
// are allowed.
func parseText[T Scalar](b []byte, typ core.ScalarType, n, dim int) ([]T, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<30)
	line := 0
	next := func() ([]string, bool) {
		if !sc.Scan() {
			return nil, false
		}
		line++
		return strings.Fields(sc.Text()), true
	}
	head, ok := next()
	if !ok {
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("line 1: the file is empty; want a header \"size dim\"")
	}
	if len(head) != 2 {
		return nil, fmt.Errorf("line 1: %d fields, want a header \"size dim\"", len(head))
	}
	size, err1 := strconv.Atoi(head[0])
	fdim, err2 := strconv.Atoi(head[1])
	if err1 != nil || err2 != nil || size < 0 || fdim < 0 {
		return nil, fmt.Errorf("line 1: header %q: want two non-negative integers \"size dim\"", sc.Text())
	}
	if size != n || fdim != dim {
		return nil, fmt.Errorf("line 1: header says size %d, dim %d; the dat has size %d, dim %d", size, fdim, n, dim)
	}
	v := make([]T, n*dim)
	for i := 0; i < n; i++ {
		f, ok := next()
		if !ok {
			if err := sc.Err(); err != nil {
				return nil, fmt.Errorf("line %d: %w", line+1, err)
			}
			return nil, fmt.Errorf("line %d: end of file after %d of %d elements", line+1, i, n)
		}
		if len(f) != dim {
			return nil, fmt.Errorf("line %d (element %d): %d values, want dim = %d", line, i, len(f), dim)
		}
		for j, s := range f {
			x, err := parseValue[T](s, typ)
			if err != nil {
				return nil, fmt.Errorf("line %d (element %d, component %d): %q is not a %s value", line, i, j, s, typ)
			}
			v[i*dim+j] = x
		}
	}
	for {
		f, ok := next()
		if !ok {
			break
		}
		if len(f) > 0 {
			return nil, fmt.Errorf("line %d: more lines than the %d elements the header announces", line, n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return v, nil
}

// largestWritten is the largest double as WriteText writes it (16
// significant digits, rounded up).
var largestWritten, _, _ = big.ParseFloat("1.797693134862316e308", 10, 64, big.ToNearestEven)

// parseValue reads one value as OP2 (C printf) or Go writes it.
func parseValue[T Scalar](s string, typ core.ScalarType) (T, error) {
	switch typ {
	case core.Float64, core.Float32:
		bits := 64
		if typ == core.Float32 {
			bits = 32
		}
		t := s
		if lower := strings.ToLower(strings.TrimLeft(s, "+-")); lower == "nan" {
			t = lower // C writes +nan or -nan; Go's parser takes no sign on NaN
		}
		f, err := strconv.ParseFloat(t, bits)
		if err != nil && bits == 64 && math.IsInf(f, 0) && errors.Is(err, strconv.ErrRange) {
			// OP2's 16 significant digits round the largest doubles up
			// to ±1.797693134862316E+308, just beyond the range: that
			// (and nothing larger) is the largest double.
			if b, _, perr := big.ParseFloat(strings.TrimPrefix(t, "+"), 10, 64, big.ToNearestEven); perr == nil && b.Abs(b).Cmp(largestWritten) <= 0 {
				return T(math.Copysign(math.MaxFloat64, f)), nil
			}
		}
		return T(f), err
	case core.Uint32:
		u, err := strconv.ParseUint(strings.TrimPrefix(s, "+"), 10, 32)
		return T(u), err
	case core.Int32:
		i, err := strconv.ParseInt(s, 10, 32)
		return T(i), err
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return T(i), err
}
