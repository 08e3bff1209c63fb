package gmsh

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/goop2/op2/internal/gmshtest"
)

// bigScript writes a structured (transfinite) unit square of 2×707²
// (about a million) triangles in the four encodings.
const bigScript = `
import sys, gmsh
gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
s = gmsh.model.occ.addRectangle(0, 0, 0, 1, 1)
gmsh.model.occ.synchronize()
for _, c in gmsh.model.getEntities(1):
    gmsh.model.mesh.setTransfiniteCurve(c, 708)
gmsh.model.mesh.setTransfiniteSurface(s)
gmsh.model.setPhysicalName(2, gmsh.model.addPhysicalGroup(2, [s]), "domain")
gmsh.model.mesh.generate(2)
for v, vn in [(2.2, "22"), (4.1, "41")]:
    for b, bn in [(0, "ascii"), (1, "binary")]:
        gmsh.option.setNumber("Mesh.MshFileVersion", v)
        gmsh.option.setNumber("Mesh.Binary", b)
        gmsh.write(f"{sys.argv[1]}/big-{vn}-{bn}.msh")
gmsh.finalize()
`

// BenchmarkReadFile reads a million-triangle mesh that Gmsh writes at the
// start (not committed: about 60 MB in ASCII); it reports the time per
// triangle.
func BenchmarkReadFile(b *testing.B) {
	py := gmshtest.Need(b)
	dir := b.TempDir()
	if out, err := exec.Command(py, "-c", bigScript, dir).CombinedOutput(); err != nil {
		b.Fatalf("gmsh: %v\n%s", err, out)
	}
	for _, enc := range encodings {
		path := filepath.Join(dir, "big-"+enc+".msh")
		b.Run(enc, func(b *testing.B) {
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(fi.Size())
			var n int
			for b.Loop() {
				m, err := ReadFile(path)
				if err != nil {
					b.Fatal(err)
				}
				n = m.Cells()[0].Len()
			}
			if n < 900_000 {
				b.Fatalf("%d triangles", n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/triangle")
			b.Logf("%d triangles, %d bytes", n, fi.Size())
		})
	}
}
