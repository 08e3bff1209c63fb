// Package hdf5 reads and writes OP2 meshes and data in HDF5 files, in the
// layout OP2's own HDF5 routines use (op_decl_set_hdf5, op_decl_map_hdf5,
// op_decl_dat_hdf5, op_get_const_hdf5, op_dump_to_hdf5,
// op_write_const_hdf5), so that files interoperate with OP2's, such as the
// new_grid.h5 of OP2's Airfoil:
//
//   - a set is a dataset, named after the set, holding one int: its size;
//   - a map is a two-dimensional int dataset (elements × arity) with the
//     attributes "size" (elements), "dim" (arity) and "type" ("int");
//   - a dat is a two-dimensional dataset (elements × dim) of its element
//     type with the attributes "size" (bytes per element, OP2's
//     op_dat.size), "dim" and "type" (its C type: "double", "float", "int",
//     "long long", "unsigned int");
//   - a constant is a one-dimensional dataset of dim values with the
//     attributes "dim" and "type".
//
// Names may contain '/': the groups on the path are created on writing, as
// OP2 does.
//
// Files are in the numbering the mesh was declared with, both ways:
// WriteMap and WriteDat write it (op2.Map.Gather, op2.Dat.Gather), and
// DeclareMap and DeclareDat read it, also after op2.Renumber reordered the
// sets: each element gets the row of its declared number
// (op2.Set.DeclaredNumbers) and each map entry is translated to its
// target's new number, so that a file lands on the elements it names and
// what is written reads back onto the same elements. ReadRows, ReadAll
// and ReadMesh return the file's rows as they are.
//
// The HDF5 C library (1.10 or later) is loaded at run time, the first time
// a file is opened or created: nothing of HDF5 is needed to build GoOP2 or
// to run programs that do not use this package's files. On Debian it is
// the package libhdf5-103-1 (libhdf5-dev installs it too); the environment
// variable OP2_HDF5_LIBRARY names another library (a path or a soname).
// Without it, Open and Create return an error wrapping ErrNoHDF5 that says
// what to install.
//
// # Files that claim more than they hold
//
// Only regular files are opened: a FIFO, a device or a directory is
// refused before HDF5 sees it. Before any values are read, a dataset's
// claimed size (rows × dim × element size, overflow-checked) must be
// stored in the file: uncompressed values must all be allocated
// (H5Dget_storage_size) and fit in the file's size, so a file of a few
// kilobytes declaring 2^33 rows is an error naming the file, the dataset
// and the sizes. Rows requested must lie in the dataset (checked without
// overflow), and no read allocates more than op2.MaxDataBytes or more
// than the machine's memory (the bound for compressed values).
//
// # Under MPI
//
// Reading is parallel: every rank opens the file and DeclareSet,
// DeclareMap and DeclareDat read the rank's own contiguous block of each
// set (OP2's split: the first size mod ranks ranks get one element more,
// see Block), which is the declaration op2.Partition expects; constants
// are read by every rank. After op2.Partition, DeclareDat reads the rows
// of the rank's owned elements (the halo gets the owners' values at the
// first exchange), and DeclareMap refuses, as op2.NewMap does.
//
// Writing is collective: every rank calls Create (or OpenWrite) and
// every writer, in the same order. With a parallel HDF5 library (Debian:
// libhdf5-openmpi-103-1, loaded in place of the serial one when the
// program runs on several ranks) every rank opens the file through
// MPI-IO, and WriteDat and WriteMap write each rank's block of the
// declared numbering in one collective write (op2.Dat.GatherBlock), so
// that no rank holds more than its part and its block; the writers of
// plain slices write rank 0's values. Without it, WriteDat and WriteMap
// gather every value on rank 0 (op2.Dat.Gather), which alone writes the
// file, and a line says so once. The file is the same either way. Write
// OP2 objects after op2.Partition (or without MPI): before it each rank
// knows only its own declarations.
package hdf5

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"reflect"
	"unsafe"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/h5"
	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/regfile"
	"github.com/goop2/op2/mesh"
)

// ErrNoHDF5 is wrapped by the error Open and Create return when the HDF5
// library cannot be loaded; the message says what to install.
var ErrNoHDF5 = h5.ErrNoHDF5

func init() { dist.Share("hdf5", ErrNoHDF5) } // see dist.Share

// LibraryEnv names the environment variable that points GoOP2 at an HDF5
// library other than the system's (a path or a soname).
const LibraryEnv = h5.LibraryEnv

// signature is the HDF5 format signature, at offset 0 of a file without a
// user block (or at 512, 1024, ... with one).
var signature = []byte("\x89HDF\r\n\x1a\n")

// IsHDF5 reports whether the file at path starts with the HDF5 signature
// (at offset 0, or after a user block of 512, 1024, 2048... bytes). It
// needs no HDF5 library. A path that is not a regular file (a FIFO, a
// device, a directory) is an error.
func IsHDF5(path string) (bool, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, len(signature))
	for off := int64(0); off < 1<<20; {
		if _, err := f.ReadAt(buf, off); err != nil {
			if errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, err
		}
		if bytes.Equal(buf, signature) {
			return true, nil
		}
		if off == 0 {
			off = 512
		} else {
			off *= 2
		}
	}
	return false, nil
}

// File is an HDF5 file open for reading (Open) or writing (Create,
// OpenWrite). Its methods may be called from several goroutines; the
// library is used by one at a time.
type File struct {
	h    *h5.File // nil on ranks > 0 of a file opened for writing
	path string
	size int64 // the file's size when it was opened for reading; -1 when open for writing
	// mapBase is the number of the first element in the file's map
	// tables (SetMapBase).
	mapBase int32
	// world is the job of a file every rank writes through MPI-IO
	// (parallel.go); nil otherwise. unhook removes the function that
	// closes it when op2.Finalize comes first.
	world  *mpi.World
	unhook func()
}

// SetMapBase sets the number the file's map tables give the first element
// of a set: 0 (OP2's and GoOP2's default) or 1 (OP2 with
// OP_MAPS_BASE_INDEX=1, as Fortran applications write their tables).
// DeclareMap subtracts it from every entry it reads and WriteMap adds it
// to every entry it writes; in memory maps are 0-based either way.
func (f *File) SetMapBase(base int) error {
	if base != 0 && base != 1 {
		return f.errorf("map base %d: tables are 0-based or 1-based", base)
	}
	f.mapBase = int32(base)
	return nil
}

// Parallel reports whether every rank writes the file through MPI-IO
// (see Create); false for a file opened for reading, written by one
// process, or gathered to rank 0.
func (f *File) Parallel() bool { return f.world != nil }

// Path returns the file's path.
func (f *File) Path() string { return f.path }

func (f *File) errorf(format string, args ...any) error {
	return fmt.Errorf("hdf5: %s: "+format, append([]any{f.path}, args...)...)
}

func (f *File) dsErr(name string, err error) error {
	return fmt.Errorf("hdf5: %s: dataset %q: %w", f.path, name, err)
}

// Open opens an existing HDF5 file for reading. Under MPI every rank opens
// it (the ranks read their blocks in parallel). The path must name a
// regular file (directly or through symbolic links): a FIFO, a device or a
// directory is refused before HDF5 opens it.
func Open(path string) (*File, error) {
	fi, err := regfile.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("hdf5: %w", err)
	}
	h, err := h5.Open(path, false)
	if err != nil {
		return nil, wrapOpen(path, err)
	}
	return &File{h: h, path: path, size: fi.Size()}, nil
}

func wrapOpen(path string, err error) error {
	if errors.Is(err, ErrNoHDF5) {
		return fmt.Errorf("hdf5: %s: %w", path, err)
	}
	return fmt.Errorf("hdf5: %s %w", path, err)
}

// Create creates the file (truncating one that exists, in place: WriteFile
// writes one whole or not at all) for writing. Under
// MPI it is collective, as every writer of the file is: with a parallel
// HDF5 library installed (Debian: libhdf5-openmpi-103-1) every rank opens
// the file through MPI-IO and writes its own rows; without one, rank 0
// alone creates it (a line says so once, on the logger or standard error)
// and the other ranks get a File whose writers take part in the
// collective gathers and write nothing (every rank returns rank 0's
// error). After op2.Finalize, under a
// launcher, it returns an error saying MPI has ended.
func Create(path string) (*File, error) {
	if err := ended(path); err != nil {
		return nil, err
	}
	w := parallelWorld()
	if w != nil {
		if f, ok, err := openParallel(w, path, true); ok {
			return f, err
		}
	}
	return onRoot(w, path, "create", func() (*File, error) { return createOnRoot(path) })
}

// createOnRoot creates the file (on rank 0).
func createOnRoot(path string) (*File, error) {
	h, err := h5.Create(path)
	if err != nil {
		return nil, wrapOpen(path, err)
	}
	return &File{h: h, path: path, size: -1}, nil
}

// onRoot runs open on rank 0, when the file is written there alone; the
// other ranks get a File that writes nothing. Under MPI (w not nil) every
// rank returns rank 0's error, as the other ranks would otherwise wait
// for rank 0 in the first collective write.
func onRoot(w *mpi.World, path, what string, open func() (*File, error)) (*File, error) {
	f, err := &File{path: path}, error(nil)
	if op2.Rank() == 0 {
		f, err = open()
	}
	if w == nil {
		return f, err
	}
	if err := dist.AgreeStep(w, fmt.Sprintf("hdf5: %s %q on rank 0", what, path), err); err != nil {
		f.Close() // rank 0's, if it opened (Close takes nil)
		return nil, err
	}
	return f, nil
}

// OpenWrite opens a file for adding datasets, creating it when it does
// not exist (as op_write_const_hdf5 does). Under MPI it is collective,
// and the file is written in parallel or by rank 0 as for Create. An
// existing path that is not a regular file (a FIFO, a device, a
// directory) is refused.
func OpenWrite(path string) (*File, error) {
	if err := ended(path); err != nil {
		return nil, err
	}
	w := parallelWorld()
	if w != nil {
		_, statErr := regfile.Stat(path)
		var bad error
		if statErr != nil && !errors.Is(statErr, os.ErrNotExist) {
			bad = fmt.Errorf("hdf5: %w", statErr)
		}
		if err := dist.AgreeStep(w, fmt.Sprintf("hdf5: open %q for writing", path), bad); err != nil {
			return nil, err
		}
		exists, err := h5.RootInt(w, boolInt(statErr == nil))
		if err != nil {
			return nil, fmt.Errorf("hdf5: %s: %w", path, err)
		}
		if f, ok, err := openParallel(w, path, exists == 0); ok {
			return f, err
		}
	}
	return onRoot(w, path, "open for writing", func() (*File, error) {
		_, err := regfile.Stat(path)
		if errors.Is(err, os.ErrNotExist) {
			return createOnRoot(path)
		}
		if err != nil {
			return nil, fmt.Errorf("hdf5: %w", err)
		}
		h, err := h5.Open(path, true)
		if err != nil {
			return nil, wrapOpen(path, err)
		}
		return &File{h: h, path: path, size: -1}, nil
	})
}

// Close closes the file. Datasets written are complete only once the file
// is closed. op2.Finalize closes a file every rank writes through MPI-IO
// that is still open (MPI-IO cannot close it afterwards); Close after it
// has nothing left to do.
func (f *File) Close() error {
	if f == nil || f.h == nil {
		return nil
	}
	if f.unhook != nil {
		f.unhook()
		f.unhook = nil
	}
	if err := f.h.Close(); err != nil {
		return f.errorf("%v", err)
	}
	return nil
}

// Info describes a dataset.
type Info struct {
	Rows int    // first extent: the set size of a map or dat, the dim of a constant
	Dim  int    // second extent (1 for a one-dimensional dataset)
	Type string // element type as OP2 names it ("double", "int", ...)
}

func (f *File) stat(name string) (h5.Shape, error) {
	if f.h == nil {
		return h5.Shape{}, f.errorf("dataset %q: the file is open for writing on rank 0 only", name)
	}
	ok, err := f.h.Exists(name)
	if err != nil {
		return h5.Shape{}, f.dsErr(name, err)
	}
	if !ok {
		return h5.Shape{}, f.dsErr(name, errors.New("not found"))
	}
	s, err := f.h.Stat(name)
	if err != nil {
		return h5.Shape{}, f.dsErr(name, err)
	}
	if s.NDims > 2 {
		return h5.Shape{}, f.dsErr(name, fmt.Errorf("has %d dimensions; OP2's layout has 1 or 2", s.NDims))
	}
	if err := f.checkStorage(s); err != nil {
		return h5.Shape{}, f.dsErr(name, err)
	}
	return s, nil
}

// checkStorage refuses a dataset whose extent claims more values than its
// file holds: unfiltered values take rows × dim × element size bytes, all
// of which must be stored (H5Dget_storage_size) and, in a file opened for
// reading, fit in the file's size. A
// file of a few kilobytes can declare 2^33 rows; reading them would
// allocate memory for values that are not there (HDF5 makes up zeros for
// storage never written). Compressed values are bounded when they are
// read (see checkAlloc).
func (f *File) checkStorage(s h5.Shape) error {
	hi, bytes := bits.Mul64(s.ElemCount, uint64(s.Size))
	if hi != 0 {
		return fmt.Errorf("claims %d × %d values of %d bytes, more than 2^64 bytes", s.Rows, s.Dim, s.Size)
	}
	if s.Filters > 0 || bytes <= s.Storage && (f.size < 0 || bytes <= uint64(f.size)) {
		return nil
	}
	what := ""
	if s.Layout == h5.Virtual {
		what = "; it is a virtual dataset (values mapped from other files), which GoOP2 does not read"
	}
	return fmt.Errorf("claims %d × %d values of %d bytes (%d bytes), but the file stores %d bytes of them (%s layout) and is %d bytes long%s",
		s.Rows, s.Dim, s.Size, bytes, s.Storage, s.Layout, f.size, what)
}

// checkAlloc refuses to read count × dim values of elem bytes each, plus
// as many of wide bytes (a buffer of the file's values read wide to be
// converted), when they would take more than op2.MaxDataBytes or more than
// this machine's memory: the memory is refused with an error rather than
// the process killed for the lack of it.
func (f *File) checkAlloc(count, dim, elem, wide int) error {
	hi, values := bits.Mul64(uint64(count), uint64(dim))
	hi2, bytes := bits.Mul64(values, uint64(elem+wide))
	if hi != 0 || hi2 != 0 || bytes > op2.MaxDataBytes {
		return fmt.Errorf("%d × %d values of %d bytes exceed op2.MaxDataBytes (%d bytes)", count, dim, elem+wide, uint64(op2.MaxDataBytes))
	}
	if mem := memoryBytes(); mem > 0 && bytes > mem {
		return fmt.Errorf("%d × %d values of %d bytes (%d bytes) need more memory than this machine has (%d bytes)", count, dim, elem+wide, bytes, mem)
	}
	return nil
}

// Info describes the dataset name.
func (f *File) Info(name string) (Info, error) {
	s, err := f.stat(name)
	if err != nil {
		return Info{}, err
	}
	return Info{Rows: s.Rows, Dim: s.Dim, Type: s.TypeName}, nil
}

// Block returns the block of a set of n elements that rank (of ranks)
// reads: OP2's split (compute_local_size), where each rank gets n/ranks
// elements and the first n mod ranks ranks one more. It is mesh.Block,
// the split mesh.ReadBlock and mesh.GenerateBlock use too.
func Block(n, rank, ranks int) (start, count int) {
	return mesh.Block(n, rank, ranks)
}

// elemType gives the shim's type, OP2's name and the HDF5 class of T.
func elemType[T op2.Scalar]() (h5.Type, string, int) {
	var z T
	switch reflect.TypeOf(z).Kind() {
	case reflect.Float64:
		return h5.Float64, "double", 1
	case reflect.Float32:
		return h5.Float32, "float", 1
	case reflect.Int32:
		return h5.Int32, "int", 0
	case reflect.Int64:
		return h5.Int64, "long long", 0
	default:
		return h5.Uint32, "unsigned int", 0
	}
}

func ptr[T any](v []T) unsafe.Pointer {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(v))
}

// readRows reads rows [start, start+count) of a dataset of dim columns,
// checking its shape and element class against T.
func readRows[T op2.Scalar](f *File, name string, dim, start, count int) ([]T, error) {
	return readChecked[T](f, name, dim, start, count, true)
}

func readChecked[T op2.Scalar](f *File, name string, dim, start, count int, dimAttr bool) ([]T, error) {
	s, err := f.stat(name)
	if err != nil {
		return nil, err
	}
	typ, tname, class := elemType[T]()
	if s.Class != class {
		return nil, f.dsErr(name, fmt.Errorf("holds %s values, not %s", s.TypeName, tname))
	}
	if s.Dim != dim {
		return nil, f.dsErr(name, fmt.Errorf("has dim %d (%d × %d), not %d", s.Dim, s.Rows, s.Dim, dim))
	}
	if start < 0 || count < 0 {
		return nil, f.dsErr(name, fmt.Errorf("%d rows from row %d requested: neither may be negative", count, start))
	}
	if start > s.Rows || count > s.Rows-start { // start+count could overflow
		return nil, f.dsErr(name, fmt.Errorf("rows [%d,%d) requested, it has %d", start, uint64(start)+uint64(count), s.Rows))
	}
	if d, found, err := f.h.IntAttr(name, "dim"); dimAttr && err == nil && found && int(d) != dim {
		return nil, f.dsErr(name, fmt.Errorf("attribute dim is %d, its extent %d", d, dim))
	}
	var z T
	wideBytes := 0
	if narrowing(s, typ) {
		wideBytes = 8
	}
	if err := f.checkAlloc(count, dim, int(unsafe.Sizeof(z)), wideBytes); err != nil {
		return nil, f.dsErr(name, err)
	}
	out := make([]T, count*dim)
	if !narrowing(s, typ) {
		if err := f.h.Read(name, typ, s.NDims, start, count, dim, ptr(out)); err != nil {
			return nil, f.dsErr(name, err)
		}
		return out, nil
	}
	// The file's values may not all fit T (HDF5 would clip them): read
	// them wide and convert, refusing the first that does not fit.
	if class == 1 {
		wide := make([]float64, count*dim)
		if err := f.h.Read(name, h5.Float64, s.NDims, start, count, dim, ptr(wide)); err != nil {
			return nil, f.dsErr(name, err)
		}
		for i, v := range wide {
			if math.Abs(v) > math.MaxFloat32 && !math.IsInf(v, 0) {
				return nil, f.dsErr(name, fmt.Errorf("row %d, column %d: %g does not fit %s", start+i/dim, i%dim, v, tname))
			}
			out[i] = T(v)
		}
		return out, nil
	}
	wide := make([]int64, count*dim)
	if err := f.h.Read(name, h5.Int64, s.NDims, start, count, dim, ptr(wide)); err != nil {
		return nil, f.dsErr(name, err)
	}
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	if typ == h5.Uint32 {
		lo, hi = 0, math.MaxUint32
	}
	for i, v := range wide {
		if v < lo || v > hi {
			return nil, f.dsErr(name, fmt.Errorf("row %d, column %d: %d does not fit %s", start+i/dim, i%dim, v, tname))
		}
		out[i] = T(v)
	}
	return out, nil
}

// narrowing reports whether a dataset of shape s may hold values that the
// memory type typ cannot represent: a wider type, or a signed one read as
// unsigned (or an unsigned one as a signed type of its width). float64
// and int64 take every value of their kind (unsigned 64-bit values beyond
// the int64 range excepted, which HDF5 clips).
func narrowing(s h5.Shape, typ h5.Type) bool {
	switch typ {
	case h5.Float64, h5.Int64:
		return false
	case h5.Float32:
		return s.Size > 4
	case h5.Int32:
		return s.Size > 4 || !s.Signed && s.Size == 4
	}
	return s.Size > 4 || s.Signed // h5.Uint32
}

// ReadRows reads rows [start, start+count) of a map or dat dataset of dim
// columns: count×dim values, row after row. The dataset's element type
// must be of T's kind (integer or floating point); values of another width
// are converted, and a value T cannot hold (beyond float32's range, beyond
// int32's, negative for uint32) is an error naming its row and column.
func ReadRows[T op2.Scalar](f *File, name string, dim, start, count int) ([]T, error) {
	return readRows[T](f, name, dim, start, count)
}

// ReadAll reads every row of a map or dat dataset of dim columns.
func ReadAll[T op2.Scalar](f *File, name string, dim int) ([]T, error) {
	info, err := f.Info(name)
	if err != nil {
		return nil, err
	}
	return readRows[T](f, name, dim, 0, info.Rows)
}

// SetSize reads a set's size: the one int of the dataset name.
func (f *File) SetSize(name string) (int, error) {
	s, err := f.stat(name)
	if err != nil {
		return 0, err
	}
	if s.Class != 0 || s.ElemCount != 1 {
		return 0, f.dsErr(name, fmt.Errorf("is not a set size (one int): it holds %d %s values", s.ElemCount, s.TypeName))
	}
	var v [1]int64
	if err := f.h.Read(name, h5.Int64, 0, 0, 1, 1, unsafe.Pointer(&v[0])); err != nil {
		return 0, f.dsErr(name, err)
	}
	if v[0] < 0 || v[0] > math.MaxInt32 {
		return 0, f.dsErr(name, fmt.Errorf("set size %d out of range [0,%d]", v[0], math.MaxInt32))
	}
	return int(v[0]), nil
}

// ReadConst reads a constant of dim values (op_get_const_hdf5). Every rank
// reads it.
func ReadConst[T op2.Scalar](f *File, name string, dim int) ([]T, error) {
	s, err := f.stat(name)
	if err != nil {
		return nil, err
	}
	if s.ElemCount != uint64(dim) {
		return nil, f.dsErr(name, fmt.Errorf("holds %d values, not %d", s.ElemCount, dim))
	}
	if d, found, err := f.h.IntAttr(name, "dim"); err == nil && found && int(d) != dim {
		return nil, f.dsErr(name, fmt.Errorf("attribute dim is %d, it holds %d values", d, dim))
	}
	return readChecked[T](f, name, s.Dim, 0, s.Rows, false)
}

// writable returns false on ranks that do not write.
func (f *File) writable() bool { return f.h != nil }

// WriteSetSize writes a set: a dataset holding its size as one int.
func (f *File) WriteSetSize(name string, size int) error {
	if !f.writable() {
		return nil
	}
	if size < 0 || size > math.MaxInt32 {
		return f.dsErr(name, fmt.Errorf("set size %d out of range", size))
	}
	v := []int32{int32(size)}
	if err := f.writeRoot(name, h5.Int32, 1, 1, 1, ptr(v)); err != nil {
		return f.dsErr(name, err)
	}
	return nil
}

// WriteMapTable writes a map's table of len(values)/arity elements, as
// op_dump_to_hdf5 does: an elements × arity int dataset with the
// attributes size, dim and type.
func (f *File) WriteMapTable(name string, arity int, values []int32) error {
	if !f.writable() {
		return nil
	}
	if arity < 1 || len(values)%arity != 0 {
		return f.dsErr(name, fmt.Errorf("%d values are not a table of arity %d", len(values), arity))
	}
	rows := len(values) / arity
	if rows > math.MaxInt32 {
		return f.dsErr(name, fmt.Errorf("%d elements exceed an int", rows))
	}
	if err := f.writeRoot(name, h5.Int32, 2, rows, arity, ptr(values)); err != nil {
		return f.dsErr(name, err)
	}
	if f.world != nil {
		var err error
		if rows, err = f.rootShape(rows); err != nil {
			return f.dsErr(name, err)
		}
	}
	return f.attrs(name, int32(rows), arity, "int", 10)
}

func (f *File) attrs(name string, size int32, dim int, typ string, typeLen int) error {
	err := f.writeAttrs(name, func() error {
		err := f.h.WriteIntAttr(name, "size", size)
		if err == nil {
			err = f.h.WriteIntAttr(name, "dim", int32(dim))
		}
		if err == nil {
			err = f.h.WriteStringAttr(name, "type", typ, typeLen)
		}
		return err
	})
	if err != nil {
		return f.dsErr(name, err)
	}
	return nil
}

// WriteArray writes the values of a dat of dim components per element as
// op_dump_to_hdf5 does: an elements × dim dataset of T with the
// attributes size (dim × the element's bytes, OP2's op_dat.size), dim and
// type.
func WriteArray[T op2.Scalar](f *File, name string, dim int, values []T) error {
	if !f.writable() {
		return nil
	}
	if dim < 1 || len(values)%dim != 0 {
		return f.dsErr(name, fmt.Errorf("%d values are not elements of dim %d", len(values), dim))
	}
	typ, tname, _ := elemType[T]()
	var z T
	if err := f.writeRoot(name, typ, 2, len(values)/dim, dim, ptr(values)); err != nil {
		return f.dsErr(name, err)
	}
	return f.attrs(name, int32(dim*int(unsafe.Sizeof(z))), dim, tname, len(tname))
}

// WriteConst writes a constant as op_write_const_hdf5 does: a dataset of
// len(values) values with the attributes dim and type.
func WriteConst[T op2.Scalar](f *File, name string, values []T) error {
	if !f.writable() {
		return nil
	}
	if len(values) == 0 {
		return f.dsErr(name, errors.New("a constant needs at least one value"))
	}
	typ, tname, _ := elemType[T]()
	if err := f.writeRoot(name, typ, 1, len(values), 1, ptr(values)); err != nil {
		return f.dsErr(name, err)
	}
	n := len(values)
	if f.world != nil {
		var err error
		if n, err = f.rootShape(n); err != nil {
			return f.dsErr(name, err)
		}
	}
	err := f.writeAttrs(name, func() error {
		err := f.h.WriteIntAttr(name, "dim", int32(n))
		if err == nil {
			err = f.h.WriteStringAttr(name, "type", tname, len(tname))
		}
		return err
	})
	if err != nil {
		return f.dsErr(name, err)
	}
	return nil
}
