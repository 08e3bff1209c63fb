"""Makes the Gmsh meshes the CGNS tests convert (through an AFLR3 .ugrid
and libcgns's aflr3_to_cgns) and compare with: python3 make.py (Debian:
python3-gmsh). box.msh: tetrahedra in the unit cube, its faces in the
groups "wall" (two faces), "inlet" and "farfield" (three). layer.msh: a
boundary layer of prisms (two layers extruded from the triangulated
square z = 0) under tetrahedra, with the groups "wall" (z = 0),
"layer_sides" (the prisms' quadrilaterals), "sides" and "top". Every
boundary face is in one group. hybrid.msh: two layers of hexahedra
(a recombined transfinite square extruded) under tetrahedra, with the
pyramids Gmsh puts between them; no groups.

It also writes box.ugrid (ASCII AFLR3: each boundary face's surface ID is
its group's tag) and, with libcgns's converter (Debian: cgns-convert),
box.cgns from it: aflr3_to_cgns -f box.ugrid box.cgns. The tests make
their .cgns files themselves the same way; box.cgns is for the example."""
import os
import subprocess
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

def write_ugrid(path):
    tags, x, _ = gmsh.model.mesh.getNodes()
    index = {int(t): i + 1 for i, t in enumerate(tags)}
    tris, ids, tets = [], [], []
    for dim, tag in gmsh.model.getPhysicalGroups(2):
        for ent in gmsh.model.getEntitiesForPhysicalGroup(dim, tag):
            for etype, _, nodes in zip(*gmsh.model.mesh.getElements(2, ent)):
                assert etype == 2
                for k in range(0, len(nodes), 3):
                    tris.append([index[int(n)] for n in nodes[k:k + 3]])
                    ids.append(tag)
    for etype, _, nodes in zip(*gmsh.model.mesh.getElements(3)):
        assert etype == 4
        for k in range(0, len(nodes), 4):
            tets.append([index[int(n)] for n in nodes[k:k + 4]])
    with open(path, "w") as f:
        f.write(f"{len(tags)} {len(tris)} 0 {len(tets)} 0 0 0\n")
        for i in range(len(tags)):
            f.write("%.17g %.17g %.17g\n" % tuple(x[3 * i:3 * i + 3]))
        for t in tris:
            f.write("%d %d %d\n" % tuple(t))
        for i in ids:
            f.write(f"{i}\n")
        for t in tets:
            f.write("%d %d %d %d\n" % tuple(t))

write_ugrid("box.ugrid")
subprocess.run(["aflr3_to_cgns", "-f", "box.ugrid", "box.cgns"], check=True, stdout=subprocess.DEVNULL)
os.remove("box.ugrid")

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

gmsh.model.add("hybrid")
p = [geo.addPoint(x, y, 0, 0.3) for x, y in [(0, 0), (1, 0), (1, 1), (0, 1)]]
lines = [geo.addLine(p[i], p[(i + 1) % 4]) for i in range(4)]
s = geo.addPlaneSurface([geo.addCurveLoop(lines)])
for c in lines:
    geo.mesh.setTransfiniteCurve(c, 4)
geo.mesh.setTransfiniteSurface(s)
geo.mesh.setRecombine(2, s)
lay = geo.extrude([(2, s)], 0, 0, 0.3, numElements=[2], recombine=True)
geo.extrude([(2, lay[0][1])], 0, 0, 0.7)
geo.synchronize()
gmsh.model.mesh.generate(3)
save("hybrid.msh")
gmsh.finalize()
