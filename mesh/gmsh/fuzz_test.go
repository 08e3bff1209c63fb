package gmsh

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead feeds arbitrary bytes to Read, seeded with every fixture (and
// prefixes of them) and the small hand-written files. Read must never
// panic; it returns a mesh or an *Error, never both, and a mesh it
// returns is consistent (check): coordinates for every node, node
// indices in range, slices of matching lengths.
func FuzzRead(f *testing.F) {
	paths, err := filepath.Glob("testdata/*.msh")
	if err != nil || len(paths) == 0 {
		f.Fatal("no fixtures", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Add([]byte(small22))
	f.Add([]byte(small41))
	f.Add(bin22(binary.LittleEndian))
	f.Add(bin22(binary.BigEndian))
	f.Add([]byte("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2147483647\n1 0 0 0\n"))

	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Read(bytes.NewReader(data))
		if err != nil {
			if m != nil {
				t.Fatalf("a mesh together with error %v", err)
			}
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %v is a %T, not an *Error", err, err)
			}
			return
		}
		check(t, m)
	})
}
