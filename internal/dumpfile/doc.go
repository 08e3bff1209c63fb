// Package dumpfile holds OP2's two dat dump formats, as
// op_print_dat_to_txtfile and op_print_dat_to_binfile write them, and the
// file work around them. The op2 package's Dat.WriteText, WriteBinary,
// ReadText and ReadBinary use it; it knows nothing of sets, ranks or
// backends: it formats and parses a whole dat's values (size elements of
// dim values each, in the numbering the mesh was declared with), and
// reads and writes whole files.
//
// # Text
//
// A first line "size dim", then one line per element holding its dim
// values, each written with a space before it: float64 as C's "%+.15E"
// (16 significant digits; -0 is written as +0, as OP2 does), float32 as
// "%+f" (6 decimals), int32 and int64 as "%+d", uint32 as "+%d".
// FormatText writes it. ParseText reads it, and also C's spellings of
// NaN and infinities (nan, -INF), values as Go writes them, trailing
// spaces (OP2's older files) and empty lines after the last element; a
// double rounded up past the largest one by the 16 digits reads as the
// largest double.
//
// # Binary
//
// int32 size, int32 dim, then the size×dim values as they are in memory
// (little-endian on every platform GoOP2 runs on). FormatBinary writes it;
// ParseBinary checks the header and the length and reads it;
// BinaryTooLarge refuses a file longer than the dat before it is read.
//
// # Files
//
// Write creates a file and reports a failed close. Read reads a regular
// file whole (internal/regfile): a FIFO, a device or a directory is
// refused before it is opened.
//
// Errors name what is wrong (the line, the element, the component, the
// header's figures) but not the file or the dat: the caller adds them.
package dumpfile
