package gmsh

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"unsafe"

	"github.com/goop2/op2/internal/regfile"
	"github.com/goop2/op2/internal/textnum"
)

// Error is the error Read and ReadFile return for a malformed file.
type Error struct {
	File   string // the path given to ReadFile; empty for Read
	Binary bool   // the file is binary: Offset, not Line, says where
	Line   int    // 1-based line of the item (ASCII files)
	Offset int64  // byte offset of the item (binary files)
	Msg    string // the section, the item and what is wrong
}

func (e *Error) Error() string {
	file := ""
	if e.File != "" {
		file = e.File + ": "
	}
	if e.Binary {
		return fmt.Sprintf("gmsh: %sbyte %d: %s", file, e.Offset, e.Msg)
	}
	return fmt.Sprintf("gmsh: %sline %d: %s", file, e.Line, e.Msg)
}

// Read reads a Gmsh mesh (MSH 4.1 or 2.2, ASCII or binary) from r. It
// reads all of r into memory first; ReadFile bounds that by the file's
// size. A malformed input gives an *Error.
func Read(r io.Reader) (*Mesh, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("gmsh: %w", err)
	}
	return parse(data)
}

// ReadFile reads the Gmsh mesh in the named file as Read does. The path
// must name a regular file (directly or through symbolic links): anything
// else is refused before it is opened, and no more than the file's size
// is read. Errors name the file.
func ReadFile(path string) (*Mesh, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gmsh: %w", err)
	}
	defer f.Close()
	data, err := f.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("gmsh: %w", err)
	}
	m, err := parse(data)
	if e, ok := err.(*Error); ok {
		e.File = path
	}
	return m, err
}

func parse(data []byte) (*Mesh, error) {
	p := &parser{data: data, length: len(data), m: &Mesh{}}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.m, nil
}

// parser reads the input through a window, data, which holds the input
// from byte off on: the whole input (Read, ReadFile), or a part of it
// that fill moves along a file it streams (ScanFile, ReadFilePart).
// Positions (pos, at, sectionAt, headerAt) are byte offsets in the whole
// input. In binary files the counts and values of $Entities, $Nodes and
// $Elements are binary; everything else is ASCII in both kinds.
type parser struct {
	// inLine says the next tokens are an ASCII element's, which Gmsh
	// writes on one line (elementLine); note is where the first element
	// went on to the next line or left values on its own, for errors
	// found after (a value missing or extra there puts every later one
	// out of place).
	inLine  bool
	note    string
	data    []byte
	off     int // the input's offset of data[0]
	length  int // the input's length
	src     io.Reader
	lines   int // newlines before off
	pos     int
	at      int // where the item being read starts, for errors
	binary  bool
	order   binary.ByteOrder
	version string // "2.2" or "4.1"

	// What is being read, for errors: "$Nodes: node 3 of 30: ".
	section   string
	sectionAt int // where the section's name is
	item      string
	i, n      int64
	// Where the header of $Nodes or $Elements (4.1) is, for an error
	// found at the end of the section; the lines of the two marks, kept
	// when fill drops them from the window.
	headerAt                int
	sectionLine, headerLine int
	readErr                 error // what stopped fill, other than the input's end

	m        *Mesh
	part     *partState // ScanFile and ReadFilePart: what to keep
	nodes    tagIndex
	entities map[[2]int32]int // (dim, tag) → index in m.Entities
	block    map[Type]int     // type → index in m.Blocks
	seen     map[string]bool  // sections read
}

func (p *parser) errorf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if p.item != "" {
		msg = fmt.Sprintf("%s %d of %d: %s", p.item, p.i+1, p.n, msg)
	}
	if p.section != "" {
		msg = p.section + ": " + msg
	}
	if p.readErr != nil {
		msg += fmt.Sprintf(" (reading failed: %v)", p.readErr)
	}
	if p.note != "" {
		msg += " (" + p.note + ")"
	}
	e := &Error{Binary: p.binary, Msg: msg}
	at := min(p.at, p.off+len(p.data))
	if p.binary {
		e.Offset = int64(at)
	} else {
		e.Line = p.lineOf(at)
	}
	return e
}

// lineOf is the 1-based line of offset at: in the window, or one of the
// marks fill kept.
func (p *parser) lineOf(at int) int {
	switch {
	case at >= p.off:
		return p.lines + bytes.Count(p.data[:at-p.off], []byte{'\n'}) + 1
	case at == p.sectionAt:
		return p.sectionLine
	case at == p.headerAt:
		return p.headerLine
	}
	return 0
}

// fill moves the window along a streamed input: it drops what is before
// offset keep (no earlier than off) and reads more after the window's end.
// It returns false, reading nothing, at the input's end, when the input is
// held whole, or when reading fails (readErr, which the next error
// names).
func (p *parser) fill(keep int) bool {
	if p.src == nil || p.readErr != nil || p.off+len(p.data) >= p.length {
		return false
	}
	k := keep - p.off
	if !p.binary {
		for _, m := range []struct {
			at   int
			line *int
		}{{p.sectionAt, &p.sectionLine}, {p.headerAt, &p.headerLine}} {
			if m.at >= p.off && m.at < keep {
				*m.line = p.lineOf(m.at)
			}
		}
		p.lines += bytes.Count(p.data[:k], []byte{'\n'})
	}
	buf := p.data[:cap(p.data)]
	n := copy(buf, p.data[k:])
	if n == len(buf) { // an item longer than the window
		buf = make([]byte, 2*len(buf))
		copy(buf, p.data[k:])
	}
	got, err := io.ReadAtLeast(p.src, buf[n:min(len(buf), n+p.length-(keep+n))], 1)
	p.off, p.data = keep, buf[:n+got]
	if err != nil && err != io.EOF {
		p.readErr = err
	}
	if got == 0 {
		if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
			p.length = p.off + len(p.data) // the input is shorter than its size said
		}
		return false
	}
	return true
}

// avail reports whether the n bytes at pos are in the window, moving it
// along a streamed input as needed.
func (p *parser) avail(n int) bool {
	for p.off+len(p.data)-p.pos < n {
		if !p.fill(p.pos) {
			return false
		}
	}
	return true
}

func (p *parser) setItem(item string, i, n int64) { p.item, p.i, p.n = item, i, n }

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

func (p *parser) skipSpace() {
	i := p.pos - p.off
	for i < len(p.data) && isSpace(p.data[i]) {
		i++
	}
	p.pos = p.off + i
	if i == len(p.data) && p.src != nil {
		p.skipSpaceOn()
	}
}

// skipSpaceOn is skipSpace past the window's end.
func (p *parser) skipSpaceOn() {
	for p.fill(p.pos) {
		i := p.pos - p.off
		for i < len(p.data) && isSpace(p.data[i]) {
			i++
		}
		p.pos = p.off + i
		if i < len(p.data) {
			return
		}
	}
}

// atEnd reports whether the input ends at pos.
func (p *parser) atEnd() bool { return !p.avail(1) }

// token returns the next whitespace-separated ASCII token; what names it
// for the error at the end of the input.
func (p *parser) token(what string) ([]byte, error) {
	if p.inLine {
		p.sameLine(what)
	}
	p.skipSpace()
	p.at = p.pos
	if p.pos-p.off == len(p.data) {
		return nil, p.errorf("truncated: input ends where %s was expected", what)
	}
	start := p.pos
	for {
		i := p.pos - p.off
		for i < len(p.data) && !isSpace(p.data[i]) {
			i++
		}
		p.pos = p.off + i
		if i < len(p.data) || !p.fill(start) {
			break
		}
	}
	return p.data[start-p.off : p.pos-p.off], nil
}

// int reads an ASCII integer in [lo, hi].
func (p *parser) int(what string, lo, hi int64) (int64, error) {
	b, err := p.token(what)
	if err != nil {
		return 0, err
	}
	v, ok := textnum.ParseInt(b)
	if !ok {
		return 0, p.errorf("%s: invalid integer %q", what, clip(b))
	}
	if v < lo || v > hi {
		return 0, p.errorf("%s %d out of range [%d, %d]", what, v, lo, hi)
	}
	return v, nil
}

// float reads an ASCII number (strconv.ParseFloat's syntax).
func (p *parser) float(what string) (float64, error) {
	b, err := p.token(what)
	if err != nil {
		return 0, err
	}
	// The string aliases data, which does not change while it is parsed;
	// it saves an allocation per coordinate.
	v, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(b), len(b)), 64)
	if err != nil {
		return 0, p.errorf("%s: invalid number %q", what, clip(b))
	}
	return v, nil
}

// clip shortens a token for a message.
func clip(b []byte) []byte {
	if len(b) > 40 {
		return append(b[:37:37], "..."...)
	}
	return b
}

// sameLine notes, for the first element that does so, where the line
// ends before the element's next token, what: a line short of a value
// reads the next line's first. Gmsh's own reader reads on, and so does
// this one.
func (p *parser) sameLine(what string) {
	if c, ok := p.blanks(); ok && c == '\n' && p.note == "" {
		p.note = fmt.Sprintf("%s %d's line, line %d, ends before %s: if it lacks a value, the values after it are out of place", p.item, p.i+1, p.lineOf(p.pos), what)
	}
}

// elementLine marks, in an ASCII file, the start of an element's line,
// after its first token (sameLine).
func (p *parser) elementLine() { p.inLine = !p.binary }

// elementEnd ends an element: in an ASCII file, it notes the first line
// that holds more than its element.
func (p *parser) elementEnd() {
	if p.binary {
		return
	}
	p.inLine = false
	if c, ok := p.blanks(); ok && c != '\n' && p.note == "" {
		p.note = fmt.Sprintf("%s %d's line, line %d, holds more values than its element: if one is extra, the values after it are out of place", p.item, p.i+1, p.lineOf(p.pos))
	}
}

// blanks passes the blanks on the line and returns the byte after them;
// ok is false at the input's end.
func (p *parser) blanks() (c byte, ok bool) {
	for p.avail(1) {
		if c = p.data[p.pos-p.off]; c != ' ' && c != '\t' && c != '\r' {
			return c, true
		}
		p.pos++
	}
	return 0, false
}

// endLine passes the end of the current line: only blanks may remain on
// it. Binary data starts after it.
func (p *parser) endLine() error {
	c, ok := p.blanks()
	p.at = p.pos
	if !ok {
		return p.errorf("truncated: input ends where a newline was expected")
	}
	if c != '\n' {
		return p.errorf("unexpected %q where the line should end", c)
	}
	p.pos++
	return nil
}

// binaryStart passes the end of a section's first line in a binary file,
// where its binary data starts.
func (p *parser) binaryStart() error {
	if !p.binary {
		return nil
	}
	return p.endLine()
}

// bytes returns the next n bytes of binary data.
func (p *parser) bytes(n int, what string) ([]byte, error) {
	p.at = p.pos
	i := p.pos - p.off
	if len(p.data)-i < n {
		if !p.avail(n) {
			return nil, p.errorf("truncated: input ends in %s (%d bytes needed, %d left)", what, n, p.off+len(p.data)-p.pos)
		}
		i = p.pos - p.off
	}
	b := p.data[i : i+n]
	p.pos += n
	return b, nil
}

// binInt reads a binary int (4 bytes) in [lo, hi].
func (p *parser) binInt(what string, lo, hi int64) (int64, error) {
	b, err := p.bytes(4, what)
	if err != nil {
		return 0, err
	}
	v := int64(int32(p.order.Uint32(b)))
	if v < lo || v > hi {
		return 0, p.errorf("%s %d out of range [%d, %d]", what, v, lo, hi)
	}
	return v, nil
}

// binSize reads a binary size_t (8 bytes) in [lo, hi].
func (p *parser) binSize(what string, lo, hi int64) (int64, error) {
	b, err := p.bytes(8, what)
	if err != nil {
		return 0, err
	}
	u := p.order.Uint64(b)
	if u > math.MaxInt64 || int64(u) < lo || int64(u) > hi {
		return 0, p.errorf("%s %d out of range [%d, %d]", what, u, lo, hi)
	}
	return int64(u), nil
}

func (p *parser) binFloat(what string) (float64, error) {
	b, err := p.bytes(8, what)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(p.order.Uint64(b)), nil
}

// integer reads an int (binary: 4 bytes) in [lo, hi].
func (p *parser) integer(what string, lo, hi int64) (int64, error) {
	if p.binary {
		return p.binInt(what, lo, hi)
	}
	return p.int(what, lo, hi)
}

// size reads a size_t (binary: 8 bytes) in [lo, hi].
func (p *parser) size(what string, lo, hi int64) (int64, error) {
	if p.binary {
		return p.binSize(what, lo, hi)
	}
	return p.int(what, lo, hi)
}

// real reads a finite float64 (binary: 8 bytes): NaN and infinities are
// refused, as numbers too large for a float64 are.
func (p *parser) real(what string) (float64, error) {
	var v float64
	var err error
	if p.binary {
		v, err = p.binFloat(what)
	} else {
		v, err = p.float(what)
	}
	if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
		return 0, p.errorf("%s is %v, not a finite number", what, v)
	}
	return v, err
}

// fits checks, before anything is allocated for them, that n items of
// at least per bytes each (binary), or of at least per tokens each
// (ASCII: a token and a separator, two bytes, per token), fit in what is
// left of the input.
func (p *parser) fits(n int64, per int, what string) error {
	left := int64(p.length - p.pos)
	need := int64(per)
	if !p.binary {
		need = 2 * int64(per)
		left++ // the last token needs no separator
	}
	if n > left/need {
		return p.errorf("%d %s claimed, but the %d bytes left in the input hold at most %d", n, what, p.length-p.pos, left/need)
	}
	return nil
}

// per is the least size of an item: tokens in ASCII files, bytes in
// binary ones.
func (p *parser) per(tokens, bytes int) int {
	if p.binary {
		return bytes
	}
	return tokens
}

// maxNodes bounds the number of nodes: Block.Nodes holds int32 indices.
const maxNodes = math.MaxInt32

// parse reads the sections in turn.
func (p *parser) parse() error {
	p.seen = make(map[string]bool)
	first := true
	for {
		p.section, p.item = "", ""
		p.skipSpace()
		if p.atEnd() {
			if first {
				p.at = p.pos
				return p.errorf("empty input: expected $MeshFormat")
			}
			break
		}
		name, _ := p.token("a section")
		if name[0] != '$' {
			return p.errorf("expected a section ($Name), found %q", clip(name))
		}
		sec := string(name)
		if first && sec != "$MeshFormat" {
			return p.errorf("the file must start with $MeshFormat, not %q", clip(name))
		}
		first = false
		if p.seen[sec] && (sec == "$MeshFormat" || sec == "$Nodes" || sec == "$Elements" || sec == "$Entities" || sec == "$PhysicalNames") {
			return p.errorf("a second %s section", sec)
		}
		p.seen[sec] = true
		p.section, p.sectionAt = sec, p.at
		var err error
		switch sec {
		case "$MeshFormat":
			err = p.format()
		case "$PhysicalNames":
			err = p.physicalNames()
		case "$Entities":
			if p.version != "4.1" {
				return p.errorf("an $Entities section in a %s file", p.version)
			}
			err = p.readEntities()
		case "$Nodes":
			err = p.readNodes()
		case "$ParametricNodes":
			// MSH 2.2 with Mesh.SaveParametric: the nodes, with their
			// parametric coordinates, in place of $Nodes.
			return p.errorf("$ParametricNodes (Mesh.SaveParametric = 1) is not read in MSH %s files: write the mesh without it, or as MSH 4.1", p.version)
		case "$Elements":
			if !p.seen["$Nodes"] {
				return p.errorf("$Elements before $Nodes")
			}
			err = p.readElements()
		case "$PartitionedEntities":
			return p.errorf("partitioned MSH 4.1 meshes, split into files or not, are not supported: write the mesh unpartitioned (GoOP2 partitions it under MPI), or as MSH 2.2 (Mesh.MshFileVersion = 2.2), whose partitions are read as one mesh")
		default:
			if err := p.skipSection(sec); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		p.item = ""
		if err := p.end(sec); err != nil {
			return err
		}
	}
	for _, sec := range []string{"$Nodes", "$Elements"} {
		if !p.seen[sec] {
			p.at = p.pos
			return p.errorf("the input ends without a %s section", sec)
		}
	}
	for _, b := range p.m.Blocks {
		p.m.Dim = max(p.m.Dim, b.Type.Dim())
	}
	slices.SortStableFunc(p.m.Blocks, func(a, b Block) int {
		return cmp.Or(cmp.Compare(a.Type.Dim(), b.Type.Dim()), cmp.Compare(a.Type, b.Type))
	})
	return nil
}

// end reads the end marker of section sec.
func (p *parser) end(sec string) error {
	want := "$End" + sec[1:]
	b, err := p.token(want)
	if err != nil {
		return err
	}
	if string(b) != want {
		return p.errorf("expected %s, found %q", want, clip(b))
	}
	return nil
}

// skipSection passes over a section this reader does not read, to the
// end marker at the start of a line.
func (p *parser) skipSection(sec string) error {
	marker := []byte("\n$End" + sec[1:])
	for {
		i := bytes.Index(p.data[p.pos-p.off:], marker)
		if i < 0 {
			// Keep what could be the marker's start.
			p.pos = max(p.pos, p.off+len(p.data)-len(marker)+1)
			if !p.fill(p.pos) {
				return p.errorf("no $End%s: the section is not closed", sec[1:])
			}
			continue
		}
		p.pos += i + len(marker)
		if p.atEnd() || isSpace(p.data[p.pos-p.off]) {
			return nil
		}
	}
}

func (p *parser) format() error {
	v, err := p.token("the version")
	if err != nil {
		return err
	}
	switch string(v) {
	case "2.2", "4.1":
		p.version = string(v)
	default:
		return p.errorf("MSH version %q is not supported (this reader reads 2.2 and 4.1)", clip(v))
	}
	ft, err := p.int("the file type", 0, 1)
	if err != nil {
		return err
	}
	ds, err := p.int("the data size", 0, 64)
	if err != nil {
		return err
	}
	if ft == 0 {
		return nil
	}
	if ds != 8 {
		return p.errorf("binary data size %d is not supported (Gmsh writes 8)", ds)
	}
	if err := p.endLine(); err != nil {
		return err
	}
	b, err := p.bytes(4, "the endianness marker")
	if err != nil {
		return err
	}
	p.binary = true
	switch {
	case binary.LittleEndian.Uint32(b) == 1:
		p.order = binary.LittleEndian
	case binary.BigEndian.Uint32(b) == 1:
		p.order = binary.BigEndian
	default:
		return p.errorf("the endianness marker is % x, not the int 1 in either byte order", b)
	}
	return nil
}

func (p *parser) physicalNames() error {
	n, err := p.int("the number of names", 0, math.MaxInt32)
	if err != nil {
		return err
	}
	if err := p.fits(n, 4, "physical names"); err != nil { // dim tag "x"
		return err
	}
	p.m.Physical = make([]PhysicalGroup, 0, n)
	for i := range n {
		p.setItem("name", i, n)
		dim, err := p.int("the dimension", 0, 3)
		if err != nil {
			return err
		}
		tag, err := p.int("the tag", math.MinInt32, math.MaxInt32)
		if err != nil {
			return err
		}
		p.skipSpace()
		p.at = p.pos
		if p.atEnd() || p.data[p.pos-p.off] != '"' {
			return p.errorf("expected a quoted name")
		}
		end := -1
		for from := 1; ; {
			w := p.data[p.pos-p.off:]
			if end = bytes.IndexAny(w[from:], "\"\n"); end >= 0 {
				end += from - 1
				break
			}
			from = len(w)
			if !p.fill(p.pos) {
				break
			}
		}
		w := p.data[p.pos-p.off:]
		if end < 0 || w[1+end] != '"' {
			return p.errorf("the name's closing quote is missing")
		}
		name := string(w[1 : 1+end])
		p.pos += end + 2
		p.m.Physical = append(p.m.Physical, PhysicalGroup{Dim: int(dim), Tag: int32(tag), Name: name})
	}
	return nil
}

var entityKinds = [4]string{"point", "curve", "surface", "volume"}

func (p *parser) readEntities() error {
	if err := p.binaryStart(); err != nil {
		return err
	}
	var counts [4]int64
	for d := range counts {
		c, err := p.size("the number of "+entityKinds[d]+"s", 0, math.MaxInt32)
		if err != nil {
			return err
		}
		counts[d] = c
	}
	total := counts[0] + counts[1] + counts[2] + counts[3]
	// A point has at least a tag, 3 coordinates and a count: 5 tokens or
	// 4+24+8 bytes.
	if err := p.fits(total, p.per(5, 36), "entities"); err != nil {
		return err
	}
	p.m.Entities = make([]Entity, 0, total)
	p.entities = make(map[[2]int32]int, total)
	for d, n := range counts {
		for i := range n {
			p.setItem(entityKinds[d], i, n)
			tag, err := p.integer("the tag", math.MinInt32, math.MaxInt32)
			if err != nil {
				return err
			}
			coords := 6
			if d == 0 {
				coords = 3
			}
			for range coords {
				if _, err := p.real("a bounding coordinate"); err != nil {
					return err
				}
			}
			np, err := p.size("the number of physical tags", 0, math.MaxInt32)
			if err != nil {
				return err
			}
			if err := p.fits(np, p.per(1, 4), "physical tags"); err != nil {
				return err
			}
			e := Entity{Dim: d, Tag: int32(tag), Physical: make([]int32, np)}
			for k := range e.Physical {
				t, err := p.integer("a physical tag", -math.MaxInt32, math.MaxInt32)
				if err != nil {
					return err
				}
				// Gmsh writes the tag negative for an entity a group
				// holds reversed (Physical Curve("left") = {-4}); it is
				// in the group all the same, as Gmsh reads it.
				e.Physical[k] = int32(max(t, -t))
			}
			key := [2]int32{int32(d), int32(tag)}
			if _, dup := p.entities[key]; dup {
				return p.errorf("%s %d appears twice", entityKinds[d], tag)
			}
			p.entities[key] = len(p.m.Entities)
			p.m.Entities = append(p.m.Entities, e)
			if d == 0 {
				continue
			}
			nb, err := p.size("the number of bounding entities", 0, math.MaxInt32)
			if err != nil {
				return err
			}
			if err := p.fits(nb, p.per(1, 4), "bounding entities"); err != nil {
				return err
			}
			for range nb {
				if _, err := p.integer("a bounding entity", math.MinInt32, math.MaxInt32); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (p *parser) readNodes() error {
	var err error
	if p.version == "2.2" {
		err = p.nodes22()
	} else {
		err = p.nodes41()
	}
	if err != nil {
		return err
	}
	p.setItem("", 0, 0)
	if p.part != nil {
		return nil
	}
	return p.nodes.build(p)
}

// nodes22 reads "n", then n × (tag x y z).
func (p *parser) nodes22() error {
	n, err := p.int("the number of nodes", 0, maxNodes)
	if err != nil {
		return err
	}
	if p.binary {
		if err := p.endLine(); err != nil {
			return err
		}
	}
	if err := p.fits(n, p.per(4, 28), "nodes"); err != nil {
		return err
	}
	m := p.m
	if p.part != nil {
		p.part.nodes(n)
	} else {
		m.NodeTags = make([]int64, n)
		m.X = make([]float64, 3*n)
	}
	for i := range n {
		p.setItem("node", i, n)
		tag, err := p.integer("the node tag", 1, math.MaxInt64)
		if err != nil {
			return err
		}
		if p.part != nil {
			var x [3]float64
			for k := range x {
				if x[k], err = p.real("a coordinate"); err != nil {
					return err
				}
			}
			p.part.nodeTag(i, tag)
			p.part.nodeX(i, x[:])
			continue
		}
		m.NodeTags[i] = tag
		for k := range 3 {
			if m.X[3*i+int64(k)], err = p.real("a coordinate"); err != nil {
				return err
			}
		}
	}
	return nil
}

// nodes41 reads "blocks n minTag maxTag" and the blocks: "dim entity
// parametric count", count tags, count × (x y z [u [v [w]]]).
func (p *parser) nodes41() error {
	if err := p.binaryStart(); err != nil {
		return err
	}
	blocks, err := p.size("the number of node blocks", 0, math.MaxInt32)
	if err != nil {
		return err
	}
	n, err := p.size("the number of nodes", 0, maxNodes)
	if err != nil {
		return err
	}
	p.headerAt = p.at
	for _, what := range []string{"the smallest node tag", "the largest node tag"} {
		if _, err := p.size(what, 0, math.MaxInt64); err != nil {
			return err
		}
	}
	if err := p.fits(blocks, p.per(4, 20), "node blocks"); err != nil {
		return err
	}
	if err := p.fits(n, p.per(4, 32), "nodes"); err != nil {
		return err
	}
	m := p.m
	if p.part != nil {
		p.part.nodes(n)
	} else {
		m.NodeTags = make([]int64, 0, n)
		m.X = make([]float64, 0, 3*n)
	}
	read := int64(0) // nodes before the block
	for b := range blocks {
		p.setItem("node block", b, blocks)
		dim, err := p.integer("the entity dimension", 0, 3)
		if err != nil {
			return err
		}
		if _, err := p.integer("the entity tag", math.MinInt32, math.MaxInt32); err != nil {
			return err
		}
		param, err := p.integer("the parametric flag", 0, 1)
		if err != nil {
			return err
		}
		count, err := p.size("the number of nodes in the block", 0, maxNodes)
		if err != nil {
			return err
		}
		first := read
		if count > n-first {
			return p.errorf("the blocks hold more than the %d nodes the section's header gives", n)
		}
		for i := range count {
			p.setItem("node", first+i, n)
			tag, err := p.size("the node tag", 1, math.MaxInt64)
			if err != nil {
				return err
			}
			if p.part != nil {
				p.part.nodeTag(first+i, tag)
				continue
			}
			m.NodeTags = append(m.NodeTags, tag)
		}
		extra := 0
		if param == 1 {
			extra = int(dim)
		}
		for i := range count {
			p.setItem("node", first+i, n)
			var x [3]float64
			for k := range x {
				if x[k], err = p.real("a coordinate"); err != nil {
					return err
				}
			}
			if p.part != nil {
				p.part.nodeX(first+i, x[:])
			} else {
				m.X = append(m.X, x[:]...)
			}
			for range extra {
				if _, err := p.real("a parametric coordinate"); err != nil {
					return err
				}
			}
		}
		read += count
	}
	if read != n {
		p.setItem("", 0, 0)
		p.at = p.headerAt
		return p.errorf("the blocks hold %d nodes, the section's header %d", read, n)
	}
	return nil
}

// tagIndex maps node tags to indices: a slice when the tags are dense, a
// map otherwise.
type tagIndex struct {
	min    int64
	dense  []int32
	sparse map[int64]int32
}

func (t *tagIndex) build(p *parser) error {
	tags := p.m.NodeTags
	if len(tags) == 0 {
		return nil
	}
	lo, hi := slices.Min(tags), slices.Max(tags)
	t.min = lo
	dup := func(i int, j int32) error {
		p.at = p.sectionAt
		return p.errorf("node tag %d is given twice (nodes %d and %d of the section)", tags[i], j+1, i+1)
	}
	if uint64(hi-lo) < uint64(2*len(tags)+1024) {
		t.dense = make([]int32, hi-lo+1)
		for i, tag := range tags {
			k := tag - lo
			if t.dense[k] != 0 {
				return dup(i, t.dense[k]-1)
			}
			t.dense[k] = int32(i) + 1 // 0: no node
		}
		return nil
	}
	t.sparse = make(map[int64]int32, len(tags))
	for i, tag := range tags {
		if j, ok := t.sparse[tag]; ok {
			return dup(i, j)
		}
		t.sparse[tag] = int32(i)
	}
	return nil
}

func (t *tagIndex) index(tag int64) (int32, bool) {
	if t.dense != nil {
		k := uint64(tag - t.min)
		if k >= uint64(len(t.dense)) || t.dense[k] == 0 {
			return 0, false
		}
		return t.dense[k] - 1, true
	}
	i, ok := t.sparse[tag]
	return i, ok
}

// blockOf returns the block for elements of type t, made on its first
// use, with room for count more elements.
func (p *parser) blockOf(t Type, count int64) *Block {
	if p.block == nil {
		p.block = make(map[Type]int)
	}
	k, ok := p.block[t]
	if !ok {
		k = len(p.m.Blocks)
		p.block[t] = k
		p.m.Blocks = append(p.m.Blocks, Block{Type: t})
	}
	b := &p.m.Blocks[k]
	c := int(count)
	b.Nodes = slices.Grow(b.Nodes, c*t.NumNodes())
	b.Tags = slices.Grow(b.Tags, c)
	b.Physical = slices.Grow(b.Physical, c)
	b.Entity = slices.Grow(b.Entity, c)
	return b
}

// elementType checks an element type read from the file.
func (p *parser) elementType(v int64) (Type, error) {
	t := Type(v)
	if !t.Supported() {
		return 0, p.errorf("element %s is not supported (first-order types only: %s)", t, supportedList)
	}
	return t, nil
}

// node reads an element's node tag and gives its index.
func (p *parser) node(b *Block, tag int64) error {
	i, ok := p.nodes.index(tag)
	if !ok {
		return p.errorf("%s %d: node tag %d is not in $Nodes", b.Type, b.Tags[len(b.Tags)-1], tag)
	}
	b.Nodes = append(b.Nodes, i)
	return nil
}

func (p *parser) readElements() error {
	if p.version == "2.2" {
		if p.binary {
			return p.elements22Binary()
		}
		return p.elements22()
	}
	return p.elements41()
}

// elements22 reads "n", then n × (tag type ntags tags... nodes...).
func (p *parser) elements22() error {
	n, err := p.int("the number of elements", 0, math.MaxInt64)
	if err != nil {
		return err
	}
	if err := p.fits(n, 4, "elements"); err != nil {
		return err
	}
	if p.part != nil {
		p.part.elements(n)
	}
	for i := range n {
		p.setItem("element", i, n)
		tag, err := p.int("the element tag", math.MinInt64, math.MaxInt64)
		if err != nil {
			return err
		}
		p.elementLine()
		tv, err := p.int("the element type", math.MinInt32, math.MaxInt32)
		if err != nil {
			return err
		}
		t, err := p.elementType(tv)
		if err != nil {
			return err
		}
		ntags, err := p.int("the number of tags", 0, math.MaxInt32)
		if err != nil {
			return err
		}
		var phys, ent int64
		for k := range ntags {
			v, err := p.int("a tag", math.MinInt32, math.MaxInt32)
			if err != nil {
				return err
			}
			switch k {
			case 0:
				phys = v
			case 1:
				ent = v
			}
		}
		if p.part != nil {
			p.part.begin(t, tag, int32(phys), int32(ent))
			for range t.NumNodes() {
				v, err := p.int("a node tag", math.MinInt64, math.MaxInt64)
				if err != nil {
					return err
				}
				p.part.node(v)
			}
			p.part.end()
			p.elementEnd()
			continue
		}
		b := p.blockOf(t, 1)
		b.Tags = append(b.Tags, tag)
		b.Physical = append(b.Physical, int32(phys))
		b.Entity = append(b.Entity, int32(ent))
		for range t.NumNodes() {
			v, err := p.int("a node tag", math.MinInt64, math.MaxInt64)
			if err != nil {
				return err
			}
			if err := p.node(b, v); err != nil {
				return err
			}
		}
		p.elementEnd()
	}
	return nil
}

// elements22Binary reads "n" and then headers (type, count, ntags), each
// followed by count × (tag, ntags tags, nodes) ints, until n elements.
func (p *parser) elements22Binary() error {
	n, err := p.int("the number of elements", 0, math.MaxInt64)
	if err != nil {
		return err
	}
	if err := p.endLine(); err != nil {
		return err
	}
	if err := p.fits(n, 8, "elements"); err != nil { // a point with no tags
		return err
	}
	if p.part != nil {
		p.part.elements(n)
	}
	for i := int64(0); i < n; {
		p.setItem("element", i, n)
		tv, err := p.binInt("the element type", math.MinInt32, math.MaxInt32)
		if err != nil {
			return err
		}
		t, err := p.elementType(tv)
		if err != nil {
			return err
		}
		count, err := p.binInt("the number of elements of the header", 0, n-i)
		if err != nil {
			return err
		}
		ntags, err := p.binInt("the number of tags", 0, math.MaxInt32)
		if err != nil {
			return err
		}
		per := 4 * (1 + int(ntags) + t.NumNodes())
		if err := p.fits(count, per, "elements"); err != nil {
			return err
		}
		// The bytes of the count elements are there (fits), and any int
		// is a valid tag: only node tags can be wrong below.
		var b *Block
		if p.part == nil {
			b = p.blockOf(t, count)
		}
		for range count {
			p.setItem("element", i, n)
			tag, _ := p.binInt("the element tag", math.MinInt32, math.MaxInt32)
			var phys, ent int64
			for k := range ntags {
				v, _ := p.binInt("a tag", math.MinInt32, math.MaxInt32)
				switch k {
				case 0:
					phys = v
				case 1:
					ent = v
				}
			}
			if p.part != nil {
				p.part.begin(t, tag, int32(phys), int32(ent))
				for range t.NumNodes() {
					v, _ := p.binInt("a node tag", math.MinInt32, math.MaxInt32)
					p.part.node(v)
				}
				p.part.end()
				i++
				continue
			}
			b.Tags = append(b.Tags, tag)
			b.Physical = append(b.Physical, int32(phys))
			b.Entity = append(b.Entity, int32(ent))
			for range t.NumNodes() {
				v, _ := p.binInt("a node tag", math.MinInt32, math.MaxInt32)
				if err := p.node(b, v); err != nil {
					return err
				}
			}
			i++
		}
	}
	return nil
}

// elements41 reads "blocks n minTag maxTag" and the blocks: "dim entity
// type count", count × (tag nodes...).
func (p *parser) elements41() error {
	if err := p.binaryStart(); err != nil {
		return err
	}
	blocks, err := p.size("the number of element blocks", 0, math.MaxInt32)
	if err != nil {
		return err
	}
	n, err := p.size("the number of elements", 0, math.MaxInt64)
	if err != nil {
		return err
	}
	p.headerAt = p.at
	for _, what := range []string{"the smallest element tag", "the largest element tag"} {
		if _, err := p.size(what, 0, math.MaxInt64); err != nil {
			return err
		}
	}
	if err := p.fits(blocks, p.per(4, 20), "element blocks"); err != nil {
		return err
	}
	if err := p.fits(n, p.per(2, 16), "elements"); err != nil {
		return err
	}
	if p.part != nil {
		p.part.elements(n)
	}
	var read int64
	for k := range blocks {
		p.setItem("element block", k, blocks)
		dim, err := p.integer("the entity dimension", 0, 3)
		if err != nil {
			return err
		}
		etag, err := p.integer("the entity tag", math.MinInt32, math.MaxInt32)
		if err != nil {
			return err
		}
		tv, err := p.integer("the element type", math.MinInt32, math.MaxInt32)
		if err != nil {
			return err
		}
		t, err := p.elementType(tv)
		if err != nil {
			return err
		}
		if int64(t.Dim()) != dim {
			return p.errorf("%s elements in an entity of dimension %d", t, dim)
		}
		var phys int32
		if p.entities != nil {
			e, ok := p.entities[[2]int32{int32(dim), int32(etag)}]
			if !ok {
				return p.errorf("entity %d of dimension %d is not in $Entities", etag, dim)
			}
			if ph := p.m.Entities[e].Physical; len(ph) > 0 {
				phys = ph[0]
			}
		}
		count, err := p.size("the number of elements in the block", 0, n-read)
		if err != nil {
			return err
		}
		per := 1 + t.NumNodes()
		if p.binary {
			per *= 8
		}
		if err := p.fits(count, per, "elements"); err != nil {
			return err
		}
		var b *Block
		if p.part == nil {
			b = p.blockOf(t, count)
		}
		for range count {
			p.setItem("element", read, n)
			tag, err := p.size("the element tag", 0, math.MaxInt64)
			if err != nil {
				return err
			}
			p.elementLine()
			if p.part != nil {
				p.part.begin(t, tag, phys, int32(etag))
				for range t.NumNodes() {
					v, err := p.size("a node tag", 0, math.MaxInt64)
					if err != nil {
						return err
					}
					p.part.node(v)
				}
				p.part.end()
				p.elementEnd()
				read++
				continue
			}
			b.Tags = append(b.Tags, tag)
			b.Physical = append(b.Physical, phys)
			b.Entity = append(b.Entity, int32(etag))
			for range t.NumNodes() {
				v, err := p.size("a node tag", 0, math.MaxInt64)
				if err != nil {
					return err
				}
				if err := p.node(b, v); err != nil {
					return err
				}
			}
			p.elementEnd()
			read++
		}
	}
	if read != n {
		p.setItem("", 0, 0)
		p.at = p.headerAt
		return p.errorf("the blocks hold %d elements, the section's header %d", read, n)
	}
	return nil
}
