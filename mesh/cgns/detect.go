package cgns

import (
	"bytes"
	"fmt"
	"io"

	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/h5"
	"github.com/goop2/op2/internal/regfile"
)

// adfMagic is at offset 4 of a CGNS file in the older ADF format (after
// "@(#)" written with the high bits set).
var adfMagic = []byte("ADF Database Version")

// IsCGNS reports whether the file at path is a CGNS file, by its content:
// an HDF5 file whose root holds a CGNSLibraryVersion node, or an ADF file
// (its header). It needs HDF5 (not the CGNS library) for an HDF5 file; an
// error is returned when the file cannot be read.
func IsCGNS(path string) (bool, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return false, err
	}
	head := make([]byte, 4+len(adfMagic))
	_, err = f.ReadAt(head, 0)
	f.Close()
	if err != nil && err != io.EOF {
		return false, err
	}
	if bytes.Equal(head[4:], adfMagic) {
		return true, nil
	}
	isH5, err := hdf5.IsHDF5(path)
	if err != nil || !isH5 {
		return false, err
	}
	hf, err := h5.Open(path, false)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	defer hf.Close()
	return hf.Exists("CGNSLibraryVersion")
}
