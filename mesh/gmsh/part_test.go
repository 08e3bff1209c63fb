package gmsh

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/collective"
)

// withBuffer runs f with ScanFile's window of n bytes.
func withBuffer(n int, f func()) {
	old := streamBuffer
	streamBuffer = n
	defer func() { streamBuffer = old }()
	f()
}

// blocksKeep is the Keep of rank's blocks (of ranks) of the nodes and of
// each type's elements, as scan counted them.
func blocksKeep(scan *Part, rank, ranks int, unique bool) Keep {
	k := Keep{Elements: map[Type]Range{}, Unique: map[Type]bool{}}
	s, c := collective.Block(int(scan.NumNodes), rank, ranks)
	k.Nodes = Range{int64(s), int64(c)}
	for t, n := range scan.Counts {
		if unique {
			n = scan.Unique[t]
			k.Unique[t] = true
		}
		s, c := collective.Block(int(n), rank, ranks)
		k.Elements[t] = Range{int64(s), int64(c)}
	}
	return k
}

// inputs are the fixtures and the small meshes, by name.
func inputs(t *testing.T) map[string][]byte {
	t.Helper()
	in := map[string][]byte{"small22": []byte(small22), "small41": []byte(small41), "bin22-le": bin22(binary.LittleEndian), "bin22-be": bin22(binary.BigEndian)}
	paths, err := filepath.Glob("testdata/*.msh")
	if err != nil || len(paths) == 0 {
		t.Fatal("no fixtures", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		in[filepath.Base(p)] = data
	}
	return in
}

// TestReadFilePartMatchesRead reads every fixture and small mesh in the
// blocks of 1 to 4 ranks, through windows of a few bytes to a megabyte:
// the ranks' parts put together are Read's mesh, with node tags for
// indices, and the counts, groups and entities are Read's.
func TestReadFilePartMatchesRead(t *testing.T) {
	for name, data := range inputs(t) {
		m, err := Read(bytes.NewReader(data))
		if err != nil {
			t.Fatal(name, err)
		}
		dense := true
		for i, tag := range m.NodeTags {
			dense = dense && tag == int64(i)+1
		}
		for _, buf := range []int{5, 61, 1 << 20} {
			withBuffer(buf, func() {
				scan, err := readPart(bytes.NewReader(data), len(data), Keep{})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if scan.Dim != m.Dim || scan.NumNodes != int64(m.NumNodes()) || scan.DenseTags != dense ||
					!reflect.DeepEqual(scan.Physical, m.Physical) || !reflect.DeepEqual(scan.Entities, m.Entities) ||
					len(scan.X) != 0 || len(scan.Blocks) != 0 || len(scan.Counts) != len(m.Blocks) {
					t.Fatalf("%s window %d: scan %+v", name, buf, scan)
				}
				for _, b := range m.Blocks {
					if scan.Counts[b.Type] != int64(b.Len()) || scan.Unique[b.Type] > scan.Counts[b.Type] {
						t.Fatalf("%s: %v: count %d unique %d, want %d", name, b.Type, scan.Counts[b.Type], scan.Unique[b.Type], b.Len())
					}
				}
				for ranks := 1; ranks <= 4; ranks++ {
					got := &Mesh{Dim: m.Dim, Physical: m.Physical, Entities: m.Entities}
					blocks := map[Type]*Block{}
					for rank := range ranks {
						keep := blocksKeep(scan, rank, ranks, false)
						p, err := readPart(bytes.NewReader(data), len(data), keep)
						if err != nil {
							t.Fatalf("%s rank %d of %d: %v", name, rank, ranks, err)
						}
						if p.FirstNode != keep.Nodes.Start || int64(len(p.NodeTags)) != keep.Nodes.Count {
							t.Fatalf("%s rank %d of %d: first node %d, %d nodes; want %+v", name, rank, ranks, p.FirstNode, len(p.NodeTags), keep.Nodes)
						}
						got.X = append(got.X, p.X...)
						got.NodeTags = append(got.NodeTags, p.NodeTags...)
						for _, pb := range p.Blocks {
							if pb.First != keep.Elements[pb.Type].Start || int64(pb.Len()) != keep.Elements[pb.Type].Count || pb.Repeat != nil {
								t.Fatalf("%s rank %d of %d: %v from %d, %d of them, want %+v", name, rank, ranks, pb.Type, pb.First, pb.Len(), keep.Elements[pb.Type])
							}
							b := blocks[pb.Type]
							if b == nil {
								b = &Block{Type: pb.Type}
								blocks[pb.Type] = b
							}
							for _, tag := range pb.Nodes {
								b.Nodes = append(b.Nodes, int32(slices.Index(m.NodeTags, tag)))
							}
							b.Tags = append(b.Tags, pb.Tags...)
							b.Physical = append(b.Physical, pb.Physical...)
							b.Entity = append(b.Entity, pb.Entity...)
						}
					}
					for _, b := range m.Blocks {
						if blocks[b.Type] != nil {
							got.Blocks = append(got.Blocks, *blocks[b.Type])
						}
					}
					if !reflect.DeepEqual(got, m) {
						t.Fatalf("%s window %d, %d ranks: the parts make\n%+v\nwant\n%+v", name, buf, ranks, got, m)
					}
				}
			})
		}
	}
}

// TestPartErrorsAreRead: a malformed input, or any prefix of a fixture,
// gives ScanFile the error Read gives (through small windows), but for the
// node tags Read checks and ScanFile leaves to its caller.
func TestPartErrorsAreRead(t *testing.T) {
	var cases []errorCase
	for _, c := range errorCases() {
		if !strings.Contains(c.want, "is not in $Nodes") && !strings.Contains(c.want, "given twice") {
			cases = append(cases, c)
		}
	}
	for name, data := range inputs(t) {
		end := bytes.LastIndex(data, []byte("$EndElements"))
		for n := 0; n < end+len("$EndElement"); n += 1 + n/50 {
			cases = append(cases, errorCase{fmt.Sprintf("%s cut at %d", name, n), data[:n], ""})
		}
	}
	for _, buf := range []int{3, 64} {
		withBuffer(buf, func() {
			for _, c := range cases {
				_, want := Read(bytes.NewReader(c.data))
				if want != nil && strings.Contains(want.Error(), "is not in $Nodes") {
					continue // a node tag cut short
				}
				_, err := readPart(bytes.NewReader(c.data), len(c.data), Keep{})
				if err == nil || want == nil || err.Error() != want.Error() || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s, window %d: ScanFile: %v\nRead: %v", c.name, buf, err, want)
				}
				// A file whose size says more than it holds.
				_, err = readPart(bytes.NewReader(c.data), len(c.data)+100, Keep{})
				if _, ok := err.(*Error); !ok {
					t.Errorf("%s, window %d, shorter than said: %v", c.name, buf, err)
				}
			}
		})
	}
}

// repeats22 is a 2.2 file that writes each triangle once per physical
// group of its two, one after the other, as Gmsh does.
const repeats22 = `$MeshFormat
2.2 0 8
$EndMeshFormat
$PhysicalNames
2
2 1 "left"
2 2 "all"
$EndPhysicalNames
$Nodes
4
1 0 0 0
2 1 0 0
3 1 1 0
4 0 1 0
$EndNodes
$Elements
5
1 2 2 1 1 1 2 3
2 2 2 2 1 1 2 3
3 2 2 1 1 1 3 4
4 2 2 2 1 1 3 4
5 1 2 1 1 1 2
$EndElements
`

// TestReadFilePartRepeats: with Keep.Unique, ranges count an element
// and its repeats once and keep them together, marking the repeats.
func TestReadFilePartRepeats(t *testing.T) {
	data := []byte(repeats22)
	scan, err := readPart(bytes.NewReader(data), len(data), Keep{})
	if err != nil {
		t.Fatal(err)
	}
	if scan.Counts[Triangle] != 4 || scan.Unique[Triangle] != 2 || scan.Counts[Line] != 1 || scan.Unique[Line] != 1 || !scan.DenseTags {
		t.Fatalf("counts %v unique %v dense %v", scan.Counts, scan.Unique, scan.DenseTags)
	}
	if want := [4][]int32{1: {1}, 2: {1, 2}}; !reflect.DeepEqual(scan.Groups, want) {
		t.Errorf("groups %v, want %v (the elements' own tags per dimension)", scan.Groups, want)
	}
	for _, c := range []struct {
		r      Range
		tags   []int64
		repeat []bool
	}{
		{Range{0, 1}, []int64{1, 2}, []bool{false, true}},
		{Range{1, 1}, []int64{3, 4}, []bool{false, true}},
		{Range{0, 2}, []int64{1, 2, 3, 4}, []bool{false, true, false, true}},
		{Range{2, 5}, nil, nil},
	} {
		p, err := readPart(bytes.NewReader(data), len(data), Keep{Elements: map[Type]Range{Triangle: c.r}, Unique: map[Type]bool{Triangle: true}})
		if err != nil {
			t.Fatal(err)
		}
		var tags []int64
		var repeat []bool
		for _, b := range p.Blocks {
			if b.Type != Triangle {
				t.Fatalf("%+v: kept %v", c.r, b.Type)
			}
			tags, repeat = b.Tags, b.Repeat
			if b.First != c.r.Start {
				t.Errorf("%+v: first %d", c.r, b.First)
			}
		}
		if !slices.Equal(tags, c.tags) || !slices.Equal(repeat, c.repeat) {
			t.Errorf("%+v: tags %v repeats %v, want %v %v", c.r, tags, repeat, c.tags, c.repeat)
		}
	}
}

// TestReadFilePartNamesFile: ReadFilePart reads files, and its errors name
// them.
func TestReadFilePartNamesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.msh")
	if err := os.WriteFile(path, []byte(small22[:len(small22)-40]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ScanFile(path); err == nil || !strings.HasPrefix(err.Error(), "gmsh: "+path+": line ") {
		t.Errorf("error %v does not name the file and line", err)
	}
	if _, err := ScanFile(filepath.Join(t.TempDir(), "absent.msh")); err == nil || !strings.Contains(err.Error(), "absent.msh") {
		t.Errorf("error %v does not name the file", err)
	}
	p, err := ReadFilePart(fixture("box", "41-binary"), Keep{Nodes: Range{40, 100}, Elements: map[Type]Range{Tetrahedron: {100, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if p.FirstNode != 40 || len(p.NodeTags) != 5 || len(p.X) != 15 || len(p.Blocks) != 1 || p.Blocks[0].Len() != 1 || p.Blocks[0].First != 100 {
		t.Errorf("part %+v", p)
	}
}
