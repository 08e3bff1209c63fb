package vtkfile_test

import (
	"encoding/base64"
	"io"
)

func base64Encoder(w io.Writer) io.WriteCloser { return base64.NewEncoder(base64.StdEncoding, w) }
