package dumpfile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/regfile"
)

// Scalar is the set of element types a dump holds (op2.Scalar's).
type Scalar interface {
	~float64 | ~float32 | ~int32 | ~int64 | ~uint32
}

// HeaderSize is the length in bytes of the binary format's header.
const HeaderSize = 8

// rawBytes views v's memory as bytes.
func rawBytes[T Scalar](v []T) []byte {
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(z)))
}

// Read reads the regular file at path whole (see regfile.Open): a FIFO,
// a device or a directory is refused before it is opened, and a file
// whose size tooLarge (if not nil) refuses, for a dat of n elements, is
// not read.
func Read(path string, n int, tooLarge func(size int64, n int) error) ([]byte, error) {
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

// FormatBinary renders v (dim values of type typ per element) in OP2's
// binary format.
func FormatBinary[T Scalar](v []T, typ core.ScalarType, dim int) []byte {
	n := len(v) / max(dim, 1)
	b := make([]byte, HeaderSize, HeaderSize+len(v)*typ.Size())
	binary.LittleEndian.PutUint32(b[0:], uint32(n))
	binary.LittleEndian.PutUint32(b[4:], uint32(dim))
	return append(b, rawBytes(v)...)
}

// BinaryTooLarge returns a check for Read: it refuses a file of size
// bytes longer than the binary dump of n elements of dim values of type
// typ, when that length is representable.
func BinaryTooLarge(typ core.ScalarType, dim int) func(size int64, n int) error {
	return func(size int64, n int) error {
		hi, values := bits.Mul64(uint64(n), uint64(dim))
		hi2, bytes := bits.Mul64(values, uint64(typ.Size()))
		if hi == 0 && hi2 == 0 && bytes <= math.MaxInt64-HeaderSize && size > int64(bytes)+HeaderSize {
			return fmt.Errorf("%d bytes, more than the %d expected (8 header bytes and %d×%d %s values)", size, bytes+HeaderSize, n, dim, typ)
		}
		return nil
	}
}

// ParseBinary reads OP2's binary format: a header that must say n and
// dim, then exactly n×dim values of type typ.
func ParseBinary[T Scalar](b []byte, typ core.ScalarType, n, dim int) ([]T, error) {
	if len(b) < HeaderSize {
		return nil, fmt.Errorf("%d bytes: too short for the header (int32 size, int32 dim)", len(b))
	}
	size, fdim := int(int32(binary.LittleEndian.Uint32(b))), int(int32(binary.LittleEndian.Uint32(b[4:])))
	if size != n || fdim != dim {
		return nil, fmt.Errorf("header says size %d, dim %d; the dat has size %d, dim %d", size, fdim, n, dim)
	}
	want := HeaderSize + n*dim*typ.Size()
	if len(b) != want {
		return nil, fmt.Errorf("%d bytes, want %d (8 header bytes and %d×%d %s values)", len(b), want, n, dim, typ)
	}
	v := make([]T, n*dim)
	copy(rawBytes(v), b[HeaderSize:])
	return v, nil
}

// FormatText renders v (dim values of type typ per element) in OP2's text
// format.
func FormatText[T Scalar](v []T, typ core.ScalarType, dim int) []byte {
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
			num = appendValue(num[:0], v[i*dim+j], typ)
			b.WriteByte(' ')
			b.Write(num)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// appendValue appends x as OP2's text dump writes a value of type typ.
func appendValue[T Scalar](b []byte, x T, typ core.ScalarType) []byte {
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

// ParseText reads OP2's text format: a header "size dim" that must say n
// and dim, then n lines of dim values of type typ. Empty lines after the
// last element are allowed.
func ParseText[T Scalar](b []byte, typ core.ScalarType, n, dim int) ([]T, error) {
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

// largestWritten is the largest double as FormatText writes it (16
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
