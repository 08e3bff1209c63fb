"""Makes a unit cube with Gmsh by extruding the unit square's mesh in 3
layers: prisms from triangles ("prism"), or hexahedra from a recombined
transfinite square ("hex"), with the physical groups "bottom", "top",
"sides" and "volume", and "all" and "everything" holding every boundary
surface and the volume again, so that every element is in two groups.
Tests run it: python3 extrude.py KIND OUT.msh [VERSION] (MSH 4.1 binary,
or VERSION 2.2; Debian: python3-gmsh)."""
import sys, gmsh
kind, path = sys.argv[1], sys.argv[2]
version = float(sys.argv[3]) if len(sys.argv) > 3 else 4.1
gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add("cube")
geo = gmsh.model.geo
p = [geo.addPoint(x, y, 0, 0.3) for x, y in [(0, 0), (1, 0), (1, 1), (0, 1)]]
lines = [geo.addLine(p[i], p[(i + 1) % 4]) for i in range(4)]
s = geo.addPlaneSurface([geo.addCurveLoop(lines)])
if kind == "hex":
    for c in lines:
        geo.mesh.setTransfiniteCurve(c, 4)
    geo.mesh.setTransfiniteSurface(s)
    geo.mesh.setRecombine(2, s)
out = geo.extrude([(2, s)], 0, 0, 1, numElements=[3], recombine=True)
geo.synchronize()
sides = [t for d, t in out[2:]]
for dim, tags, name in [(2, [s], "bottom"), (2, [out[0][1]], "top"), (2, sides, "sides"), (3, [out[1][1]], "volume"),
                        (2, [s, out[0][1]] + sides, "all"), (3, [out[1][1]], "everything")]:
    g = gmsh.model.addPhysicalGroup(dim, tags)
    gmsh.model.setPhysicalName(dim, g, name)
gmsh.model.mesh.generate(3)
gmsh.option.setNumber("Mesh.MshFileVersion", version)
gmsh.option.setNumber("Mesh.Binary", 1)
gmsh.write(path)
gmsh.finalize()
