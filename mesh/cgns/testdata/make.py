"""Makes the Gmsh meshes the CGNS tests convert (through an AFLR3 .ugrid
and libcgns's aflr3_to_cgns) and compare with: python3 make.py (Debian:
python3-gmsh). box.msh: tetrahedra in the unit cube, its faces in the
groups "wall" (two faces), "inlet" and "farfield" (three). layer.msh: a
boundary layer of prisms (two layers extruded from the triangulated
square z = 0) under tetrahedra, with the groups "wall" (z = 0),
"layer_sides" (the prisms' quadrilaterals), "sides" and "top". Every
boundary face is in one group."""
import gmsh

def save(path):
    gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
    gmsh.option.setNumber("Mesh.Binary", 0)
    gmsh.write(path)

def groups(pairs):
    for dim, tags, name in pairs:
        g = gmsh.model.addPhysicalGroup(dim, tags)
        gmsh.model.setPhysicalName(dim, g, name)

gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)

gmsh.model.add("box")
geo = gmsh.model.geo
p = [geo.addPoint(x, y, 0, 0.4) for x, y in [(0, 0), (1, 0), (1, 1), (0, 1)]]
lines = [geo.addLine(p[i], p[(i + 1) % 4]) for i in range(4)]
s = geo.addPlaneSurface([geo.addCurveLoop(lines)])
out = geo.extrude([(2, s)], 0, 0, 1)
geo.synchronize()
sides = [t for d, t in out[2:]]
groups([(2, [s, sides[0]], "wall"), (2, [sides[1]], "inlet"), (2, [out[0][1]] + sides[2:], "farfield"), (3, [out[1][1]], "fluid")])
gmsh.model.mesh.generate(3)
save("box.msh")

gmsh.model.add("layer")
p = [geo.addPoint(x, y, 0, 0.3) for x, y in [(0, 0), (1, 0), (1, 1), (0, 1)]]
lines = [geo.addLine(p[i], p[(i + 1) % 4]) for i in range(4)]
s = geo.addPlaneSurface([geo.addCurveLoop(lines)])
lay = geo.extrude([(2, s)], 0, 0, 0.2, numElements=[2], recombine=True)
top = geo.extrude([(2, lay[0][1])], 0, 0, 0.8)
geo.synchronize()
groups([(2, [s], "wall"), (2, [t for d, t in lay[2:]], "layer_sides"), (2, [t for d, t in top[2:]], "sides"),
        (2, [top[0][1]], "top"), (3, [lay[1][1], top[1][1]], "fluid")])
gmsh.model.mesh.generate(3)
save("layer.msh")
gmsh.finalize()
