package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/testreq"
	"github.com/goop2/op2/mesh/cgns"
	"github.com/goop2/op2/mesh/gmsh"
	"github.com/goop2/op2/mesh/unstructured"
)

// TestConvert: generated → HDF5 → ASCII gives the ASCII file written
// directly, byte for byte; the HDF5 file holds OP2 Airfoil's datasets.
func TestConvert(t *testing.T) {
	dir := t.TempDir()
	h5File, direct, back := filepath.Join(dir, "new_grid.h5"), filepath.Join(dir, "direct.dat"), filepath.Join(dir, "back.dat")
	testreq.Check(t, "hdf5", convert("", 20, 30, h5File), hdf5.ErrNoHDF5)
	if err := convert("", 20, 30, direct); err != nil {
		t.Fatal(err)
	}
	if err := convert(h5File, 0, 0, back); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(direct)
	b, _ := os.ReadFile(back)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("ASCII mesh through HDF5 differs (%d and %d bytes)", len(a), len(b))
	}
	f, err := hdf5.Open(h5File)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, want := range map[string]hdf5.Info{
		"pedge": {Rows: 3530, Dim: 2, Type: "int"}, "pecell": {Rows: 3530, Dim: 2, Type: "int"},
		"pbedge": {Rows: 140, Dim: 2, Type: "int"}, "pbecell": {Rows: 140, Dim: 1, Type: "int"},
		"pcell": {Rows: 1800, Dim: 4, Type: "int"}, "p_bound": {Rows: 140, Dim: 1, Type: "int"},
		"p_x": {Rows: 1891, Dim: 2, Type: "double"}, "p_q": {Rows: 1800, Dim: 4, Type: "double"},
		"p_qold": {Rows: 1800, Dim: 4, Type: "double"}, "p_adt": {Rows: 1800, Dim: 1, Type: "double"},
		"p_res": {Rows: 1800, Dim: 4, Type: "double"},
		"gam":   {Rows: 1, Dim: 1, Type: "double"}, "gm1": {Rows: 1, Dim: 1, Type: "double"},
		"cfl": {Rows: 1, Dim: 1, Type: "double"}, "eps": {Rows: 1, Dim: 1, Type: "double"},
		"mach": {Rows: 1, Dim: 1, Type: "double"}, "alpha": {Rows: 1, Dim: 1, Type: "double"},
		"qinf": {Rows: 4, Dim: 1, Type: "double"},
	} {
		if got, err := f.Info(name); err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", name, got, err, want)
		}
	}
	for name, want := range map[string]int{"nodes": 1891, "edges": 3530, "bedges": 140, "cells": 1800} {
		if n, err := f.SetSize(name); err != nil || n != want {
			t.Errorf("set %s: %d, %v; want %d", name, n, err, want)
		}
	}
	if v, err := hdf5.ReadConst[float64](f, "gam", 1); err != nil || v[0] != 1.3999999761581421 {
		t.Errorf("gam = %v, %v", v, err)
	}
}

// TestConvertGmsh: `op2mesh convert box.msh box.h5` writes the layout
// unstructured.Load reads, with the fixture's counts; a Gmsh mesh to an
// ASCII name is refused.
func TestConvertGmsh(t *testing.T) {
	out := filepath.Join(t.TempDir(), "box.h5")
	testreq.Check(t, "hdf5", convert("../../mesh/gmsh/testdata/box-41-binary.msh", 0, 0, out), hdf5.ErrNoHDF5)
	m, err := unstructured.Load(out, unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gmsh.ReadFile("../../mesh/gmsh/testdata/box-41-binary.msh")
	if err != nil {
		t.Fatal(err)
	}
	if m.Nodes.Size() != g.NumNodes() || m.Cells.Size() != g.Cells()[0].Len() || len(m.Groups) != 2 {
		t.Errorf("%d nodes, %d cells, %d groups; want %d, %d, 2", m.Nodes.Size(), m.Cells.Size(), len(m.Groups), g.NumNodes(), g.Cells()[0].Len())
	}
	if err := convert("../../mesh/gmsh/testdata/box-41-binary.msh", 0, 0, "box.dat"); err == nil || !strings.Contains(err.Error(), "converts to HDF5 only") {
		t.Errorf("Gmsh to ASCII: %v", err)
	}
}

// TestConvertCGNS: `op2mesh convert box.cgns box.h5` (the CGNS file
// libcgns's aflr3_to_cgns made, mesh/cgns/testdata) writes the layout
// unstructured.Load reads, declaring what the .cgns declares.
func TestConvertCGNS(t *testing.T) {
	const in = "../../mesh/cgns/testdata/box.cgns"
	testreq.Check(t, "cgns", cgns.Load(), cgns.ErrUnavailable)
	out := filepath.Join(t.TempDir(), "box.h5")
	testreq.Check(t, "hdf5", convert(in, 0, 0, out), hdf5.ErrNoHDF5)
	m, err := unstructured.Load(out, unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := unstructured.Load(in, unstructured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Nodes.Size() != c.Nodes.Size() || m.Cells.Size() != c.Cells.Size() || len(m.Groups) != len(c.Groups) || len(c.Groups) != 3 {
		t.Errorf("%d nodes, %d cells, %d groups; want %d, %d, %d (3)", m.Nodes.Size(), m.Cells.Size(), len(m.Groups), c.Nodes.Size(), c.Cells.Size(), len(c.Groups))
	}
	if err := convert(in, 0, 0, "box.dat"); err == nil || !strings.Contains(err.Error(), "converts to HDF5 only") {
		t.Errorf("CGNS to ASCII: %v", err)
	}
}

// TestConvertByContent: Gmsh and CGNS meshes convert whatever their
// names (none, upper case, another kind's), as unstructured.Load reads
// them; they were read as Airfoil meshes unless named *.msh or *.cgns.
func TestConvertByContent(t *testing.T) {
	testreq.Check(t, "cgns", cgns.Load(), cgns.ErrUnavailable)
	dir := t.TempDir()
	for _, c := range []struct{ src, name string }{
		{"../../mesh/gmsh/testdata/box-41-binary.msh", "noext"},
		{"../../mesh/gmsh/testdata/square-22-ascii.msh", "mesh.MSH"},
		{"../../mesh/cgns/testdata/box.cgns", "box"},
		{"../../mesh/cgns/testdata/box.cgns", "box.msh"},
	} {
		b, err := os.ReadFile(c.src)
		if err != nil {
			t.Fatal(err)
		}
		if c.name == "mesh.MSH" {
			// Gmsh's reader skips white space before $MeshFormat.
			b = append([]byte(strings.Repeat(" ", 70)+"\n"), b...)
		}
		in := filepath.Join(dir, c.name)
		if err := os.WriteFile(in, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, c.name+".h5")
		testreq.Check(t, "hdf5", convert(in, 0, 0, out), hdf5.ErrNoHDF5)
		m, err := unstructured.Load(out, unstructured.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := unstructured.Load(c.src, unstructured.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if m.Nodes.Size() != want.Nodes.Size() || m.Cells.Size() != want.Cells.Size() || len(m.Groups) != len(want.Groups) {
			t.Errorf("%s converted: %d nodes, %d cells, %d groups; want %d, %d, %d", c.name, m.Nodes.Size(), m.Cells.Size(), len(m.Groups), want.Nodes.Size(), want.Cells.Size(), len(want.Groups))
		}
	}
}

// TestOutputOverInput: an output naming the input (another spelling, a
// link) is refused, naming both, in either form.
func TestOutputOverInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "mi.dat")
	if err := os.WriteFile(in, []byte("a mesh"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.dat")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		out     string
		convert bool
		want    string
	}{
		{in, false, "-o and -in both name " + in},
		{link, false, "-o " + link + " and -in " + in + " are the same file"},
		{dir + "/./mi.dat", true, "its output " + dir + "/./mi.dat" + " and convert's input " + in},
	} {
		if err := checkPaths(in, c.out, c.convert); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.out, err, c.want)
		}
	}
	if err := checkPaths(in, "", true); err == nil || !strings.Contains(err.Error(), "empty output path") {
		t.Errorf("convert IN \"\": %v", err)
	}
	if err := checkPaths(in, filepath.Join(dir, "mi.h5"), false); err != nil {
		t.Errorf("another output: %v", err)
	}
}

// TestUsage: -help shows both forms, the Gmsh conversion included, and
// the flags.
func TestUsage(t *testing.T) {
	var b bytes.Buffer
	fs := flag.NewFlagSet("op2mesh", flag.ContinueOnError)
	fs.SetOutput(&b)
	fs.String("o", "", "output file")
	usage(fs)
	for _, want := range []string{"op2mesh [-in FILE | -I 400 -J 600] -o FILE", "op2mesh convert FILE.msh FILE.h5", "unstructured.Load", "-o string"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("usage does not show %q:\n%s", want, b.String())
		}
	}
}

// TestArgs: a command line of both forms, of neither, or lacking what
// its form needs is refused, saying what is wrong (and whether the
// usage follows); the good ones give their paths.
func TestArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // the error; "" for none
		form bool   // a formError: the usage follows
	}{
		{[]string{"-I", "10", "-J", "10", "convert", "", "out.h5"}, "-I, -J with convert IN OUT: convert takes no flags", true},
		{[]string{"convert", "", "out.h5"}, `convert "" out.h5: an empty input path names no file`, false},
		{[]string{"-in", "s.dat", "-o", "other.h5", "convert", "a.msh", "conv.h5"}, "-in, -o with convert IN OUT", true},
		{[]string{"-in", "s.dat", "-I", "10", "-o", "x.dat"}, "-in s.dat with -I 10: -I and -J size the generated mesh", true},
		{[]string{"-in", "s.dat", "-J", "7", "-o", "x.dat"}, "-in s.dat with -J 7", true},
		{[]string{"-in", "", "-o", "x.dat"}, `-in "": an empty input path names no file (leave -in out to generate the mesh)`, false},
		{[]string{"-in", "s.dat"}, "no output: name it with -o FILE", true},
		{[]string{}, "no output: name it with -o FILE", true},
		{[]string{"convert", "s.dat"}, `convert takes an input and an output, got ["s.dat"]`, true},
		{[]string{"convert", "a", "b", "c"}, `convert takes an input and an output, got ["a" "b" "c"]`, true},
		{[]string{"-o", "x.dat", "extra"}, `unexpected arguments ["extra"]`, true},
		{[]string{"-I", "0", "-o", "x.dat"}, "-I 0: the generated mesh needs at least 1", false},
		{[]string{"-J", "-3", "-o", "x.dat"}, "-J -3: the generated mesh needs at least 1", false},
		{[]string{"-o", ""}, `-o "": an empty output path`, false},
		{[]string{"-I", "10", "-J", "20", "-o", "x.dat"}, "", false},
		{[]string{"-in", "s.dat", "-o", "x.h5"}, "", false},
		{[]string{"convert", "a.msh", "a.h5"}, "", false},
	} {
		fs := flag.NewFlagSet("op2mesh", flag.ContinueOnError)
		o, err := parseArgs(fs, c.args)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("op2mesh %q: %v", c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("op2mesh %q: %v (%+v), want an error saying %q", c.args, err, o, c.want)
		case c.want != "" && errors.As(err, new(formError)) != c.form:
			t.Errorf("op2mesh %q: %v: usage shown %v, want %v", c.args, err, !c.form, c.form)
		}
	}
	fs := flag.NewFlagSet("op2mesh", flag.ContinueOnError)
	if o, err := parseArgs(fs, []string{"convert", "a.msh", "a.h5"}); err != nil || o != (options{in: "a.msh", out: "a.h5", ni: 400, nj: 600, convert: true}) {
		t.Errorf("convert a.msh a.h5: %+v, %v", o, err)
	}
}
