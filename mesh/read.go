package mesh

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/regfile"
	"github.com/goop2/op2/internal/textnum"
)

// MaxLineLength is the longest line, in bytes and including the newline,
// that Read accepts. Lines written by Write are far shorter (a node line
// holding two of the largest float64 values is about 640 bytes).
const MaxLineLength = 64 << 10

// initialCap bounds the number of elements reserved for a set before any of
// its lines have been read; beyond it slices grow as lines arrive, so a
// header announcing absurd counts cannot make Read allocate memory that the
// input does not back.
const initialCap = 4096

// Read reads a mesh in OP2's ASCII format (see Write for the layout). If
// the input starts with the gzip magic bytes 0x1f 0x8b it is decompressed
// transparently.
//
// The header must hold exactly four non-negative counts no larger than
// 2^31−1, and then exactly that many node, cell, edge and boundary edge
// lines must follow, each with exactly the expected number of fields
// (2, 4, 4 and 4). Fields are separated by spaces or tabs; a carriage
// return before the newline is tolerated, and the last line may lack its
// newline. Blank lines are not allowed inside the data; after the last
// boundary edge only blank or whitespace-only lines may follow.
//
// Coordinates are parsed with strconv.ParseFloat, so any syntax it accepts
// is allowed (including "inf" and "nan"); additionally "-nan", as C prints
// it, is read as a NaN with the sign bit set. Values that overflow float64
// are rejected. Indices are decimal integers with an optional sign; node
// indices must lie in [0, nnode) and cell indices in [0, ncell). The
// boundary kind may be any value that fits in an int32; it is not
// restricted to 1 and 2.
//
// Errors name the 1-based line number and what was expected there, for
// example "mesh: line 17: cell 15: node index 900 out of range [0,721801)".
// Elements are numbered from 0 in messages, as in the file.
func Read(r io.Reader) (*Mesh, error) {
	return readBlock(r, 0, 1)
}

// ReadBlockFrom reads rank's block (of ranks) of every set of a mesh in
// OP2's ASCII format, plain or gzip-compressed: the split of Block, the
// representation hdf5.ReadMeshBlock gives and op2.Partition expects. The
// counts are the block's (NNode is the number of nodes in the rank's
// block, and so on), X holds the block's coordinates, and the maps hold
// the file's (global) node and cell indices. ReadBlockFrom(r, 0, 1) is
// Read(r).
//
// Memory is in proportion to the block, not to the input: the lines of
// the other ranks' blocks are counted, by scanning for newlines, and not
// parsed. The header and the block's lines are checked as Read checks
// them, with the same messages and line numbers; indices are checked
// against the global set sizes of the header. Of the other lines only
// their number is checked: input that ends before the last boundary edge
// is an error naming the set and the element expected (as Read's is), and
// only blank lines may follow the last boundary edge; a malformed line in
// another rank's block is that rank's error.
func ReadBlockFrom(r io.Reader, rank, ranks int) (*Mesh, error) {
	if ranks < 1 || rank < 0 || rank >= ranks {
		return nil, fmt.Errorf("mesh: rank %d of %d ranks: want 0 <= rank < ranks", rank, ranks)
	}
	return readBlock(r, rank, ranks)
}

// readBlock reads rank's block of r, decompressing gzip input.
func readBlock(r io.Reader, rank, ranks int) (*Mesh, error) {
	br := bufio.NewReaderSize(r, MaxLineLength)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("mesh: gzip: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, MaxLineLength)
	}
	p := &parser{r: br}
	return p.parse(rank, ranks)
}

// ReadFile reads a mesh from the named file with Read; gzip-compressed
// files are detected by their content, not by their name. The path must
// name a regular file (directly or through symbolic links): a FIFO, a
// device, a socket or a directory is refused before it is opened, and no
// more than the file's size is read.
func ReadFile(path string) (*Mesh, error) {
	return readFileBlock(path, 0, 1)
}

// ReadBlock reads rank's block (of ranks) of every set of the mesh in the
// named file with ReadBlockFrom: under MPI each rank calls it with its
// rank and the number of ranks, and passes the block to op2's
// declarations before op2.Partition. The file is opened as ReadFile opens
// it, and errors name it as ReadFile's do. ReadBlock(path, 0, 1) is
// ReadFile(path).
func ReadBlock(path string, rank, ranks int) (*Mesh, error) {
	if ranks < 1 || rank < 0 || rank >= ranks {
		return nil, fmt.Errorf("mesh: %s: rank %d of %d ranks: want 0 <= rank < ranks", path, rank, ranks)
	}
	return readFileBlock(path, rank, ranks)
}

// readFileBlock reads rank's block of the named file.
func readFileBlock(path string, rank, ranks int) (*Mesh, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mesh: %w", err)
	}
	defer f.Close()
	m, err := readBlock(f.Reader(), rank, ranks)
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return m, nil
}

// Block returns the block of a set of n elements that rank (of ranks)
// holds before partitioning: OP2's split (compute_local_size), where each
// rank gets n/ranks consecutive elements and the first n mod ranks ranks
// one more. ReadBlock, GenerateBlock and hdf5.ReadMeshBlock split every
// set this way. ranks below 1 count as 1.
func Block(n, rank, ranks int) (start, count int) { return collective.Block(n, rank, ranks) }

// parser reads the mesh line by line, keeping the current line number.
type parser struct {
	r    *bufio.Reader
	line int // 1-based number of the line last returned by next
	eof  bool
}

// errEOF is returned by next when the input has no more lines.
var errEOF = errors.New("end of input")

// next returns the next line without its line terminator. The slice is
// valid until the following call.
func (p *parser) next() ([]byte, error) {
	if p.eof {
		return nil, errEOF
	}
	s, err := p.r.ReadSlice('\n')
	switch {
	case err == nil:
		s = s[:len(s)-1]
	case err == io.EOF:
		p.eof = true
		if len(s) == 0 {
			return nil, errEOF
		}
	case err == bufio.ErrBufferFull:
		p.line++
		return nil, p.errorf("line longer than %d bytes", MaxLineLength)
	default:
		p.line++
		return nil, p.errorf("read error: %w", err)
	}
	p.line++
	if n := len(s); n > 0 && s[n-1] == '\r' {
		s = s[:n-1]
	}
	return s, nil
}

// skip passes over the next n lines without parsing them, counting them
// by their newlines; they are elements first, first+1, ... of the set
// named what (of total elements), for the error when the input ends
// before them. A last line without a newline counts as a line.
func (p *parser) skip(n int, what string, first, total int) error {
	partial := false // bytes of a line whose newline is still to come were passed
	for n > 0 {
		if p.eof {
			p.line++
			return p.errorf("unexpected end of input: expected %s %d of %d", what, first, total)
		}
		if p.r.Buffered() == 0 {
			if _, err := p.r.Peek(1); err == io.EOF {
				p.eof = true
				if partial { // the input's last line, without a newline
					partial = false
					p.line++
					n--
					first++
				}
				continue
			} else if err != nil {
				p.line++
				return p.errorf("read error: %w", err)
			}
		}
		b, _ := p.r.Peek(p.r.Buffered())
		off := 0
		for n > 0 {
			i := bytes.IndexByte(b[off:], '\n')
			if i < 0 {
				break
			}
			off += i + 1
			p.line++
			n--
			first++
			partial = false
		}
		if n > 0 && off < len(b) {
			off = len(b)
			partial = true
		}
		p.r.Discard(off)
	}
	return nil
}

// errorf returns an error prefixed with the current line number.
func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("mesh: line %d: "+format, append([]any{p.line}, args...)...)
}

// isSpace reports whether c separates fields.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// splitFields stores the whitespace-separated fields of line in out and
// returns how many fields the line has in total (which may exceed len(out);
// the extra fields are counted but not stored).
func splitFields(line []byte, out [][]byte) int {
	n := 0
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return n
		}
		j := i
		for j < len(line) && !isSpace(line[j]) {
			j++
		}
		if n < len(out) {
			out[n] = line[i:j]
		}
		n++
		i = j
	}
}

// negNaN is a NaN with the sign bit set, the value Read gives to "-nan".
var negNaN = math.Float64frombits(math.Float64bits(math.NaN()) | 1<<63)

// parseFloat parses a coordinate: whatever strconv.ParseFloat accepts, plus
// C's "-nan". Overflow is an error.
func parseFloat(b []byte) (float64, error) {
	if len(b) == 4 && b[0] == '-' && (b[1]|0x20) == 'n' && (b[2]|0x20) == 'a' && (b[3]|0x20) == 'n' {
		return negNaN, nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("value %q out of float64 range", b)
		}
		return 0, fmt.Errorf("invalid number %q", b)
	}
	return v, nil
}

// grow returns s with room for at least k more elements, never reserving
// beyond total elements in all.
func grow[T any](s []T, k, total int) []T {
	if len(s)+k <= cap(s) {
		return s
	}
	c := max(2*cap(s), len(s)+k, initialCap)
	c = min(c, total)
	t := make([]T, len(s), c)
	copy(t, s)
	return t
}

// headerNames are the names of the four header counts, in file order.
var headerNames = [4]string{"nnode", "ncell", "nedge", "nbedge"}

// parse reads rank's block (of ranks) of every set, skipping the lines
// of the other blocks; parse(0, 1) reads the whole mesh.
func (p *parser) parse(rank, ranks int) (*Mesh, error) {
	var f [5][]byte
	line, err := p.next()
	if err == errEOF {
		p.line++
		return nil, p.errorf("missing header (empty input): expected 4 counts (nnode ncell nedge nbedge)")
	} else if err != nil {
		return nil, err
	}
	if n := splitFields(line, f[:]); n != 4 {
		return nil, p.errorf("header: expected 4 counts (nnode ncell nedge nbedge), got %d fields", n)
	}
	var counts [4]int
	for k := range counts {
		v, ok := textnum.ParseInt(f[k])
		switch {
		case !ok:
			return nil, p.errorf("header: %s: invalid count %q", headerNames[k], f[k])
		case v < 0:
			return nil, p.errorf("header: %s: count %d is negative", headerNames[k], v)
		case v > maxCount:
			return nil, p.errorf("header: %s: count %d exceeds %d", headerNames[k], v, maxCount)
		}
		counts[k] = int(v)
	}
	// The global sizes bound the indices; the block's lines are parsed.
	nnode, ncell, nedge, nbedge := counts[0], counts[1], counts[2], counts[3]
	var start, end [4]int
	for k, n := range counts {
		var c int
		start[k], c = Block(n, rank, ranks)
		end[k] = start[k] + c
	}
	m := &Mesh{NNode: end[0] - start[0], NCell: end[1] - start[1], NEdge: end[2] - start[2], NBedge: end[3] - start[3]}

	// Fetches the next data line of a section and splits it into want
	// fields.
	fetch := func(what string, i, total, want int) error {
		line, err := p.next()
		if err == errEOF {
			p.line++
			return p.errorf("unexpected end of input: expected %s %d of %d", what, i, total)
		} else if err != nil {
			return err
		}
		if n := splitFields(line, f[:]); n != want {
			return p.errorf("%s %d: expected %d fields, got %d", what, i, want, n)
		}
		return nil
	}
	// Parses field k of the current line as an index in [0, limit).
	index := func(what string, i, k int, kind string, limit int) (int32, error) {
		v, ok := textnum.ParseInt(f[k])
		if !ok {
			return 0, p.errorf("%s %d: invalid %s index %q", what, i, kind, f[k])
		}
		if v < 0 || v >= int64(limit) {
			return 0, p.errorf("%s %d: %s index %d out of range [0,%d)", what, i, kind, v, limit)
		}
		return int32(v), nil
	}

	m.X = make([]float64, 0, min(2*m.NNode, initialCap))
	if err := p.skip(start[0], "node", 0, nnode); err != nil {
		return nil, err
	}
	for i := start[0]; i < end[0]; i++ {
		if err := fetch("node", i, nnode, 2); err != nil {
			return nil, err
		}
		x, err := parseFloat(f[0])
		if err != nil {
			return nil, p.errorf("node %d: x: %v", i, err)
		}
		y, err := parseFloat(f[1])
		if err != nil {
			return nil, p.errorf("node %d: y: %v", i, err)
		}
		m.X = grow(m.X, 2, 2*m.NNode)
		m.X = append(m.X, x, y)
	}
	if err := p.skip(nnode-end[0], "node", end[0], nnode); err != nil {
		return nil, err
	}

	m.Cell = make([]int32, 0, min(4*m.NCell, initialCap))
	if err := p.skip(start[1], "cell", 0, ncell); err != nil {
		return nil, err
	}
	for i := start[1]; i < end[1]; i++ {
		if err := fetch("cell", i, ncell, 4); err != nil {
			return nil, err
		}
		var c [4]int32
		for k := range c {
			if c[k], err = index("cell", i, k, "node", nnode); err != nil {
				return nil, err
			}
		}
		m.Cell = grow(m.Cell, 4, 4*m.NCell)
		m.Cell = append(m.Cell, c[:]...)
	}
	if err := p.skip(ncell-end[1], "cell", end[1], ncell); err != nil {
		return nil, err
	}

	m.Edge = make([]int32, 0, min(2*m.NEdge, initialCap))
	m.Ecell = make([]int32, 0, min(2*m.NEdge, initialCap))
	if err := p.skip(start[2], "edge", 0, nedge); err != nil {
		return nil, err
	}
	for i := start[2]; i < end[2]; i++ {
		if err := fetch("edge", i, nedge, 4); err != nil {
			return nil, err
		}
		var e [4]int32
		for k := range e {
			kind, limit := "node", nnode
			if k >= 2 {
				kind, limit = "cell", ncell
			}
			if e[k], err = index("edge", i, k, kind, limit); err != nil {
				return nil, err
			}
		}
		m.Edge = grow(m.Edge, 2, 2*m.NEdge)
		m.Edge = append(m.Edge, e[0], e[1])
		m.Ecell = grow(m.Ecell, 2, 2*m.NEdge)
		m.Ecell = append(m.Ecell, e[2], e[3])
	}
	if err := p.skip(nedge-end[2], "edge", end[2], nedge); err != nil {
		return nil, err
	}

	m.Bedge = make([]int32, 0, min(2*m.NBedge, initialCap))
	m.Becell = make([]int32, 0, min(m.NBedge, initialCap))
	m.Bound = make([]int32, 0, min(m.NBedge, initialCap))
	if err := p.skip(start[3], "bedge", 0, nbedge); err != nil {
		return nil, err
	}
	for i := start[3]; i < end[3]; i++ {
		if err := fetch("bedge", i, nbedge, 4); err != nil {
			return nil, err
		}
		var e [3]int32
		for k := range e {
			kind, limit := "node", nnode
			if k == 2 {
				kind, limit = "cell", ncell
			}
			if e[k], err = index("bedge", i, k, kind, limit); err != nil {
				return nil, err
			}
		}
		b, ok := textnum.ParseInt(f[3])
		if !ok || b < math.MinInt32 || b > math.MaxInt32 {
			return nil, p.errorf("bedge %d: invalid boundary kind %q (want an int32)", i, f[3])
		}
		m.Bedge = grow(m.Bedge, 2, 2*m.NBedge)
		m.Bedge = append(m.Bedge, e[0], e[1])
		m.Becell = grow(m.Becell, 1, m.NBedge)
		m.Becell = append(m.Becell, e[2])
		m.Bound = grow(m.Bound, 1, m.NBedge)
		m.Bound = append(m.Bound, int32(b))
	}
	if err := p.skip(nbedge-end[3], "bedge", end[3], nbedge); err != nil {
		return nil, err
	}

	// Only whitespace may follow.
	for {
		line, err := p.next()
		if err == errEOF {
			break
		} else if err != nil {
			return nil, err
		}
		if len(bytes.TrimLeft(line, " \t\r\v\f")) != 0 {
			return nil, p.errorf("unexpected data after the last boundary edge (expected %d nodes, %d cells, %d edges, %d bedges)",
				nnode, ncell, nedge, nbedge)
		}
	}
	return m, nil
}
