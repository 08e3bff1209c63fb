package mesh

import (
	"bytes"
	"testing"
)

// FuzzRead feeds arbitrary bytes to Read. Read must never panic; when it
// succeeds the mesh must validate, and writing it and reading it back must
// give the same mesh with coordinates rounded to Write's six decimals, whose
// own text is then a fixed point of Write∘Read. ReadBlockFrom must then
// give every rank its block of the mesh, for 2 and 3 ranks.
func FuzzRead(f *testing.F) {
	m, err := Generate(1, 2)
	if err != nil {
		f.Fatal(err)
	}
	valid := encode(f, m)
	f.Add(valid)
	for _, n := range []int{0, 1, 10, len(valid) / 3, len(valid) / 2, len(valid) - 1} {
		f.Add(valid[:n])
	}
	f.Add(gzipBytes(f, valid))
	f.Add([]byte(small))
	f.Add([]byte(" 0 0 0 0 \n"))
	f.Add([]byte(" 1 0 0 0 \n -nan inf \n"))
	f.Add([]byte(" 1 0 0 0 \n 1e400 0 \n"))
	f.Add([]byte(" 2 1 0 0 \n 0 0 \n 1 1 \n 0 1 1 2 \n"))
	f.Add([]byte(" 2147483647 1 1 1 \n 0 0 \n"))
	f.Add([]byte(" -1 0 0 0 \n"))
	f.Add([]byte(replaceLine(9, " 2 3 0 -7 \n")))
	f.Add([]byte(small + " \n junk \n"))

	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Read(bytes.NewReader(data))
		if err != nil {
			if m != nil {
				t.Fatalf("Read returned a mesh together with error %v", err)
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("Read succeeded but Validate failed: %v", err)
		}
		for ranks := 2; ranks <= 3; ranks++ {
			for rank := range ranks {
				b, err := ReadBlockFrom(bytes.NewReader(data), rank, ranks)
				if err != nil {
					t.Fatalf("Read succeeded but ReadBlockFrom rank %d of %d failed: %v", rank, ranks, err)
				}
				if !b.Equal(blockOf(m, rank, ranks)) {
					t.Fatalf("ReadBlockFrom rank %d of %d: %s", rank, ranks, diffBlock(b, blockOf(m, rank, ranks)))
				}
			}
		}
		var text bytes.Buffer
		if err := m.Write(&text); err != nil {
			t.Fatalf("Write: %v", err)
		}
		r, err := Read(bytes.NewReader(text.Bytes()))
		if err != nil {
			t.Fatalf("Read of written mesh: %v\n%q", err, text.Bytes())
		}
		if !r.Equal(rounded(m)) {
			t.Fatalf("Write→Read changed the mesh\n%q", text.Bytes())
		}
		var again bytes.Buffer
		if err := r.Write(&again); err != nil {
			t.Fatalf("second Write: %v", err)
		}
		if !bytes.Equal(again.Bytes(), text.Bytes()) {
			t.Fatalf("Write(Read(Write(m))) != Write(m)")
		}
	})
}
