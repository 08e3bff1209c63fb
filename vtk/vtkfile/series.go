package vtkfile

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"

	"github.com/goop2/op2/internal/regfile"
)

// Series is a time series of VTK files, one per step (.vtu or .pvtu),
// listed in a ParaView data collection (.pvd) that opens them as one data
// set over time:
//
//	s := vtkfile.NewSeries("run.pvd")
//	for step := ... {
//		p := fmt.Sprintf("run_%04d.vtu", step)
//		err = g.WriteFile(p, vtkfile.Binary)
//		err = s.Add(t, p) // rewrites run.pvd
//	}
//
// A run restarted from a checkpoint continues its series with OpenSeries
// in place of NewSeries. Under MPI every rank calls Add (nothing is
// exchanged) and, with Rank set, rank 0 writes the .pvd file.
type Series struct {
	// Rank, when not nil, gives this process's MPI rank at each Add:
	// only rank 0 writes the .pvd file. Package vtk's NewSeries and
	// OpenSeries set it to op2.Rank.
	Rank  func() int
	path  string
	steps []Step
}

// Step is one step of a Series: its time and its file, relative to the
// .pvd file's folder when it is inside it.
type Step struct {
	Time float64
	File string
}

// NewSeries returns an empty series to be written to path (by convention
// ending in .pvd). Nothing is written until the first Add.
func NewSeries(path string) *Series { return &Series{path: path} }

// OpenSeries returns the series that the .pvd file at path lists, to be
// continued: a program restarted from a checkpoint opens its series and
// Adds the steps that follow, and path is rewritten with the old steps
// and the new. The old steps keep their files as recorded (relative to
// the .pvd file's folder, or absolute); new ones are given to Add as the
// program names them, as always. A missing file gives an empty series,
// as NewSeries does. Steps the restarted run computes again (after the
// checkpoint's time) can be dropped first with Truncate.
func OpenSeries(path string) (*Series, error) {
	steps, err := ReadSeriesFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewSeries(path), nil
	}
	if err != nil {
		return nil, err
	}
	return &Series{path: path, steps: steps}, nil
}

// Truncate drops the steps whose time is after t, as a run restarted
// from a checkpoint at time t writes them again; the .pvd file is
// rewritten at the next Add.
func (s *Series) Truncate(t float64) {
	kept := s.steps[:0]
	for _, st := range s.steps {
		if st.Time <= t {
			kept = append(kept, st)
		}
	}
	s.steps = kept
}

// Steps returns the steps added so far.
func (s *Series) Steps() []Step { return append([]Step(nil), s.steps...) }

// Add appends the step at time t whose data is file (a path as the
// program names it, which the .pvd records relative to its own folder
// when it can) and rewrites the .pvd file, through a temporary file
// renamed over it, so that a reader never sees half a file. Under MPI
// only rank 0 writes (with Rank set).
func (s *Series) Add(t float64, file string) error {
	rel := file
	if d, err := filepath.Abs(filepath.Dir(s.path)); err == nil {
		if f, err := filepath.Abs(file); err == nil {
			if r, err := filepath.Rel(d, f); err == nil {
				rel = r
			}
		}
	}
	s.steps = append(s.steps, Step{Time: t, File: filepath.ToSlash(rel)})
	if s.Rank != nil && s.Rank() != 0 {
		return nil
	}
	return regfile.WriteWith(s.path, "vtk: series", s.Write)
}

// Write writes the series as a VTK XML Collection file (.pvd): one
// DataSet element per step, with its timestep and file.
func (s *Series) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n")
	for _, st := range s.steps {
		bw.WriteString(`    <DataSet timestep="` + strconv.FormatFloat(st.Time, 'g', -1, 64) + `" group="" part="0" file="`)
		xml.EscapeText(bw, []byte(st.File))
		bw.WriteString("\"/>\n")
	}
	bw.WriteString("  </Collection>\n</VTKFile>\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("vtk: %w", err)
	}
	return nil
}

// ReadSeriesFile reads the steps of a .pvd file: each DataSet's timestep
// and file, as written (relative to the .pvd file's folder or absolute).
// The program names such a file filepath.Join(filepath.Dir(path), File)
// when it is relative; to continue the series, use OpenSeries rather than
// passing these Files to Series.Add, which takes paths as the program
// names them.
func ReadSeriesFile(path string) ([]Step, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("vtk: %w", err)
	}
	b, err := f.ReadAll()
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("vtk: %w", err)
	}
	var x struct {
		Type string `xml:"type,attr"`
		Sets []struct {
			Time string `xml:"timestep,attr"`
			File string `xml:"file,attr"`
		} `xml:"Collection>DataSet"`
	}
	if err := xml.Unmarshal(b, &x); err != nil {
		return nil, fmt.Errorf("vtk: %s is not a VTK XML file: %w", path, err)
	}
	if x.Type != "Collection" {
		return nil, fmt.Errorf("vtk: %s is a %q file; want a Collection", path, x.Type)
	}
	out := make([]Step, len(x.Sets))
	for i, d := range x.Sets {
		t, err := strconv.ParseFloat(d.Time, 64)
		if err != nil {
			return nil, fmt.Errorf("vtk: %s: data set %d: timestep %q is not a number", path, i, d.Time)
		}
		out[i] = Step{Time: t, File: d.File}
	}
	return out, nil
}
