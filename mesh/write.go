package mesh

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/goop2/op2/internal/regfile"
)

// writeChunk is the size of the formatting buffer flushed to the writer.
const writeChunk = 1 << 20

// Write writes m in OP2's ASCII mesh format, byte for byte as OP2's C code
// prints it:
//
//	" %d %d %d %d \n"   header: nnode ncell nedge nbedge
//	" %f %f \n"         nnode lines: x y
//	" %d %d %d %d \n"   ncell lines: the four nodes of each cell
//	" %d %d %d %d \n"   nedge lines: node1 node2 cell1 cell2
//	" %d %d %d %d \n"   nbedge lines: node1 node2 cell bound
//
// Coordinates are printed like C's "%f": rounded correctly to six decimals
// (exact ties to even), with a minus sign for every negative value and for
// negative zero, so -1e-9 and -0.0 both print as "-0.000000". Infinities and
// NaNs are printed as C does ("inf", "-inf", "nan", "-nan").
//
// Write validates m first and writes nothing if it is inconsistent.
func (m *Mesh) Write(w io.Writer) error {
	if err := m.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, writeChunk)
	buf := make([]byte, 0, writeChunk+256)
	flush := func() error {
		_, err := bw.Write(buf)
		buf = buf[:0]
		return err
	}
	buf = appendInts4(buf, int64(m.NNode), int64(m.NCell), int64(m.NEdge), int64(m.NBedge))
	for i := 0; i < m.NNode; i++ {
		buf = append(buf, ' ')
		buf = appendFixed6(buf, m.X[2*i])
		buf = append(buf, ' ')
		buf = appendFixed6(buf, m.X[2*i+1])
		buf = append(buf, ' ', '\n')
		if len(buf) >= writeChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	for i := 0; i < m.NCell; i++ {
		c := m.Cell[4*i : 4*i+4]
		buf = appendInts4(buf, int64(c[0]), int64(c[1]), int64(c[2]), int64(c[3]))
		if len(buf) >= writeChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	for i := 0; i < m.NEdge; i++ {
		buf = appendInts4(buf, int64(m.Edge[2*i]), int64(m.Edge[2*i+1]),
			int64(m.Ecell[2*i]), int64(m.Ecell[2*i+1]))
		if len(buf) >= writeChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	for i := 0; i < m.NBedge; i++ {
		buf = appendInts4(buf, int64(m.Bedge[2*i]), int64(m.Bedge[2*i+1]),
			int64(m.Becell[i]), int64(m.Bound[i]))
		if len(buf) >= writeChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return bw.Flush()
}

// appendInts4 appends the line " a b c d \n".
func appendInts4(buf []byte, a, b, c, d int64) []byte {
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, a, 10)
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, b, 10)
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, c, 10)
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, d, 10)
	return append(buf, ' ', '\n')
}

// appendFixed6 appends v formatted like C's printf("%f", v) (glibc
// spelling for the special values).
func appendFixed6(buf []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		if math.Signbit(v) {
			return append(buf, "-nan"...)
		}
		return append(buf, "nan"...)
	case math.IsInf(v, 1):
		return append(buf, "inf"...)
	case math.IsInf(v, -1):
		return append(buf, "-inf"...)
	}
	// strconv rounds the exact binary value correctly, ties to even, and
	// keeps the sign of negative values that round to zero (and of -0),
	// which is exactly what glibc's printf does.
	return strconv.AppendFloat(buf, v, 'f', 6, 64)
}

// WriteFile writes m to the named file in OP2's ASCII format, compressed
// with gzip if the name ends in ".gz". The data are written to a temporary
// file in the same directory which then replaces path by a rename, so
// readers never see a partly written file and a failed write leaves any
// existing file untouched (regfile.WriteWith). A new file gets mode 0666
// less the umask; a file replaced keeps its mode.
func (m *Mesh) WriteFile(path string) error {
	if err := m.Validate(); err != nil {
		return err
	}
	return regfile.WriteWith(path, "mesh", func(w io.Writer) error {
		if !strings.HasSuffix(path, ".gz") {
			return m.Write(w)
		}
		zw := gzip.NewWriter(w)
		if err := m.Write(zw); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("mesh: %w", err)
		}
		return nil
	})
}
