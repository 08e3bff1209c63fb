#!/usr/bin/env python3
"""Writes a random Gmsh mesh in four encodings, for TestGmshGeneratedAgreesWithMeshio.

python3 gen_random.py OUTDIR SEED: a 2-D domain (a rectangle with a disc cut
out) or a 3-D box, picked by SEED, meshed with a random characteristic
length and some recombination, with physical groups on its boundary and
domain, written as OUTDIR/mesh-{22,41}-{ascii,binary}.msh.
"""
import random
import sys

import gmsh

out, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add("random")
occ = gmsh.model.occ
lc = rng.uniform(0.08, 0.3)
if seed % 2 == 0:
    r = occ.addRectangle(0, 0, 0, rng.uniform(1, 2), 1)
    d = occ.addDisk(0.5, 0.5, 0, 0.2, 0.2)
    occ.cut([(2, r)], [(2, d)])
    occ.synchronize()
    dim = 2
    if rng.random() < 0.5:
        gmsh.option.setNumber("Mesh.RecombineAll", 1)
else:
    occ.addBox(0, 0, 0, 1, rng.uniform(0.5, 1.5), 1)
    occ.synchronize()
    dim = 3
    lc *= 2
gmsh.model.mesh.setSize(gmsh.model.getEntities(0), lc)
domains = [t for _, t in gmsh.model.getEntities(dim)]
bnd = [t for _, t in gmsh.model.getBoundary([(dim, t) for t in domains], oriented=False)]
half = max(1, len(bnd) // 2)
for name, d, tags in [("inlet", dim - 1, bnd[:half]), ("wall", dim - 1, bnd[half:]), ("domain", dim, domains)]:
    if tags:
        gmsh.model.setPhysicalName(d, gmsh.model.addPhysicalGroup(d, tags), name)
gmsh.model.mesh.generate(dim)
for version, vname in [(2.2, "22"), (4.1, "41")]:
    for binary, bname in [(0, "ascii"), (1, "binary")]:
        gmsh.option.setNumber("Mesh.MshFileVersion", version)
        gmsh.option.setNumber("Mesh.Binary", binary)
        gmsh.write(f"{out}/mesh-{vname}-{bname}.msh")
gmsh.finalize()
