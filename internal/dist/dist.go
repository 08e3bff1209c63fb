// Package dist lays a mesh out over MPI ranks: it chooses which rank owns
// each element (a block distribution, recursive coordinate bisection,
// METIS on the mesh's graph, a distributed graph partitioner such as
// PT-Scotch's, or owners given, spread from one set to the others through
// the maps) and builds every rank's local mesh: each set ordered core | owned |
// exec halo | non-exec halo, maps renumbered to local indices, and the
// lists of elements each pair of ranks exchange.
//
// Two forms compute the same layout. PartitionBlocks is what op2.Partition
// runs: every rank starts from its block of the declared mesh and talks to
// the others through a Comm (MPI, or simulated ranks in tests); owners are
// chosen and spread where elements are declared, elements migrate to their
// owners and halos in all-to-all exchanges, and each rank builds its own
// sections and exchange lists, so that no rank holds more than its block,
// its part and its halo. Owners and Layout work on a whole mesh in one
// process: the reference the distributed form is tested against, and what
// cmd/op2halo models many ranks with.
//
// Once the mesh is laid out, a Job holds a rank's part in the run: its
// World (what it needs of MPI, which *mpi.World implements and package
// disttest simulates), whether the mesh is partitioned, and the Halo that
// exchanges halos and combines reductions around every loop (the
// executor's exec.Halo). AgreeStep (internal/collective's), GatherRows
// and ScatterRows are the collective steps of op2.Partition, Gather and
// the dumps.
package dist

import (
	"fmt"
	"slices"
)

// Mesh is a whole mesh in global numbering.
type Mesh struct {
	Sets []Set
	Maps []Map
}

// Set is a set's name and global size.
type Set struct {
	Name string
	Size int
}

// Map is a map's table in global numbering: Arity entries per element of
// set From, indices into set To.
type Map struct {
	Name     string
	From, To int
	Arity    int
	Table    []int32
	// Table64, when not nil, is the table instead of Table, for global
	// numbers beyond int32 (PartitionBlocks only: a BlockMesh's map
	// declared with 64-bit values).
	Table64 []int64
}

// entries is the number of entries of the map's table.
func (m *Map) entries() int {
	if m.Table64 != nil {
		return len(m.Table64)
	}
	return len(m.Table)
}

// at is entry k of the map's table.
func (m *Map) at(k int) int64 {
	if m.Table64 != nil {
		return m.Table64[k]
	}
	return int64(m.Table[k])
}

// row copies element e's row of the map's table into dst (Arity entries).
func (m *Map) row(e int, dst []int64) []int64 {
	dst = dst[:0]
	if m.Table64 != nil {
		return append(dst, m.Table64[e*m.Arity:(e+1)*m.Arity]...)
	}
	for _, t := range m.Table[e*m.Arity : (e+1)*m.Arity] {
		dst = append(dst, int64(t))
	}
	return dst
}

// Validate checks every map entry against its target set's size.
func (m *Mesh) Validate() error {
	for _, mp := range m.Maps {
		from, to := m.Sets[mp.From], m.Sets[mp.To]
		if len(mp.Table) != from.Size*mp.Arity {
			return fmt.Errorf("map %q from %q to %q: %d entries, want %d (%d elements × arity %d)",
				mp.Name, from.Name, to.Name, len(mp.Table), from.Size*mp.Arity, from.Size, mp.Arity)
		}
		for i, v := range mp.Table {
			if v < 0 || int(v) >= to.Size {
				return fmt.Errorf("map %q from %q to %q: entry %d (element %d, column %d) is %d, outside the target set [0,%d)",
					mp.Name, from.Name, to.Name, i, i/mp.Arity, i%mp.Arity, v, to.Size)
			}
		}
	}
	return nil
}

// Local is one rank's part of the mesh.
type Local struct {
	Sets []LocalSet
	// Maps are the local tables, one row per local element of the source
	// set. Rows of non-exec halo elements are never used by loops; their
	// entries are local indices where the target is present, else 0.
	Maps [][]int32
}

// LocalSet is one rank's part of a set.
type LocalSet struct {
	// The ends of the sections: [0,Core) core, [Core,Owned) owned
	// elements that touch other ranks' elements, [Owned,Exec) the exec
	// halo, [Exec,Total) the non-exec halo.
	Core, Owned, Exec, Total int
	// Global is the global number of each local element.
	Global []int64
	// Neighbours are the ranks this rank exchanges elements of the set
	// with, in increasing rank order.
	Neighbours []Neighbour
}

// Neighbour is what one rank sends to and receives from another for one
// set: the message carries the elements of Send in that order, and the
// message from the neighbour fills the local elements [RecvExec[0],
// RecvExec[1]) and then [RecvNonexec[0], RecvNonexec[1]).
type Neighbour struct {
	Rank        int
	Send        []int32
	RecvExec    [2]int32
	RecvNonexec [2]int32
}

// Layout builds every rank's local mesh from owner, the rank of each
// element of each set. A map entry outside its target set (Validate) or
// an owner outside [0, ranks) is an error.
func Layout(m *Mesh, owner [][]int32, ranks int) ([]Local, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("dist: %w", err)
	}
	if len(owner) != len(m.Sets) {
		return nil, fmt.Errorf("dist: %d owner lists for %d sets", len(owner), len(m.Sets))
	}
	for s, set := range m.Sets {
		if len(owner[s]) != set.Size {
			return nil, fmt.Errorf("dist: set %q: %d owners for %d elements", set.Name, len(owner[s]), set.Size)
		}
		for _, r := range owner[s] {
			if r < 0 || int(r) >= ranks {
				return nil, fmt.Errorf("dist: set %q: owner %d outside [0,%d)", set.Name, r, ranks)
			}
		}
	}
	mapsFrom := make([][]int, len(m.Sets))
	for i, mp := range m.Maps {
		mapsFrom[mp.From] = append(mapsFrom[mp.From], i)
	}
	locals := make([]Local, ranks)
	// where[s][g] is the local index of element g of set s on the rank
	// being laid out (-1: absent); reset after each rank.
	where := make([][]int32, len(m.Sets))
	for s, set := range m.Sets {
		where[s] = make([]int32, set.Size)
		for i := range where[s] {
			where[s][i] = -1
		}
	}
	// ownedAt[s][g] is the local index of g on its owner.
	ownedAt := make([][]int32, len(m.Sets))
	for s := range m.Sets {
		ownedAt[s] = make([]int32, m.Sets[s].Size)
	}
	// One pass over every element classifies it for every rank: core on
	// its owner when all its targets are owned there too, else owned (not
	// core) on its owner and in the exec halo of each other rank owning
	// one of its targets. Elements are visited in increasing global
	// number, so every list is sorted.
	coreEls := make([][][]int32, ranks)
	ownedEls := make([][][]int32, ranks)
	execEls := make([][][]int32, ranks)
	for r := range ranks {
		coreEls[r] = make([][]int32, len(m.Sets))
		ownedEls[r] = make([][]int32, len(m.Sets))
		execEls[r] = make([][]int32, len(m.Sets))
	}
	stamp := make([]int, ranks) // stamp[q] == visit: q already noted for this element
	others := make([]int32, 0, 16)
	visit := 0
	for s, set := range m.Sets {
		for g := 0; g < set.Size; g++ {
			visit++
			o := owner[s][g]
			others = others[:0]
			for _, mi := range mapsFrom[s] {
				mp := &m.Maps[mi]
				for _, t := range mp.Table[g*mp.Arity : (g+1)*mp.Arity] {
					if q := owner[mp.To][t]; q != o && stamp[q] != visit {
						stamp[q] = visit
						others = append(others, q)
					}
				}
			}
			if len(others) == 0 {
				coreEls[o][s] = append(coreEls[o][s], int32(g))
				continue
			}
			ownedEls[o][s] = append(ownedEls[o][s], int32(g))
			for _, q := range others {
				execEls[q][s] = append(execEls[q][s], int32(g))
			}
		}
	}
	for r := 0; r < ranks; r++ {
		loc := &locals[r]
		loc.Sets = make([]LocalSet, len(m.Sets))
		coreEl, ownedEl, execEl := coreEls[r], ownedEls[r], execEls[r]
		coreEls[r], ownedEls[r], execEls[r] = nil, nil, nil
		for s := range m.Sets {
			ls := &loc.Sets[s]
			ls.Global = widen(widen(ls.Global, coreEl[s]), ownedEl[s])
			ls.Core, ls.Owned = len(coreEl[s]), len(ls.Global)
			byOwner(execEl[s], owner[s])
			ls.Global = widen(ls.Global, execEl[s])
			ls.Exec = len(ls.Global)
			for i, g := range ls.Global {
				where[s][g] = int32(i)
			}
			for i, g := range ls.Global[:ls.Owned] {
				ownedAt[s][g] = int32(i)
			}
		}
		// Non-exec halo: targets of owned and exec-halo elements that
		// are not yet present.
		nonexec := make([][]int32, len(m.Sets))
		for s := range m.Sets {
			for _, g := range loc.Sets[s].Global[:loc.Sets[s].Exec] {
				for _, mi := range mapsFrom[s] {
					mp := &m.Maps[mi]
					for _, t := range mp.Table[int(g)*mp.Arity : (int(g)+1)*mp.Arity] {
						if where[mp.To][t] == -1 {
							where[mp.To][t] = -2 // seen
							nonexec[mp.To] = append(nonexec[mp.To], t)
						}
					}
				}
			}
		}
		for s := range m.Sets {
			ls := &loc.Sets[s]
			byOwner(nonexec[s], owner[s])
			ls.Global = widen(ls.Global, nonexec[s])
			ls.Total = len(ls.Global)
			for i, g := range ls.Global[ls.Exec:] {
				where[s][g] = int32(ls.Exec + i)
			}
		}
		loc.Maps = make([][]int32, len(m.Maps))
		for mi := range m.Maps {
			mp := &m.Maps[mi]
			ls := &loc.Sets[mp.From]
			tab := make([]int32, ls.Total*mp.Arity)
			for i, g := range ls.Global {
				for c, t := range mp.Table[int(g)*mp.Arity : (int(g)+1)*mp.Arity] {
					w := where[mp.To][t]
					if w < 0 {
						if i < ls.Exec {
							return nil, fmt.Errorf("dist: internal error: rank %d map %q row %d: target %d absent", r, mp.Name, g, t)
						}
						w = 0
					}
					tab[i*mp.Arity+c] = w
				}
			}
			loc.Maps[mi] = tab
		}
		for s := range m.Sets {
			for _, g := range locals[r].Sets[s].Global {
				where[s][g] = -1
			}
		}
	}
	// Import ranges and export lists: rank r's halo elements owned by q
	// are contiguous (grouped by owner); q sends them in r's order.
	for r := range locals {
		for s := range m.Sets {
			ls := &locals[r].Sets[s]
			recv := map[int]*Neighbour{}
			get := func(q int) *Neighbour {
				if n, ok := recv[q]; ok {
					return n
				}
				n := &Neighbour{Rank: q}
				recv[q] = n
				return n
			}
			for i := ls.Owned; i < ls.Total; {
				q := int(owner[s][ls.Global[i]])
				j := i
				for j < ls.Total && int(owner[s][ls.Global[j]]) == q && (j < ls.Exec) == (i < ls.Exec) {
					j++
				}
				n := get(q)
				if i < ls.Exec {
					n.RecvExec = [2]int32{int32(i), int32(j)}
				} else {
					n.RecvNonexec = [2]int32{int32(i), int32(j)}
				}
				i = j
			}
			for q, n := range recv {
				qs := &locals[q].Sets[s]
				send := getNeighbour(qs, r)
				for _, rng := range [][2]int32{n.RecvExec, n.RecvNonexec} {
					for _, g := range ls.Global[rng[0]:rng[1]] {
						send.Send = append(send.Send, ownedAt[s][g])
					}
				}
			}
			for _, n := range recv {
				nb := getNeighbour(ls, n.Rank)
				nb.RecvExec, nb.RecvNonexec = n.RecvExec, n.RecvNonexec
			}
		}
	}
	return locals, nil
}

// getNeighbour returns ls's entry for rank q, adding it in rank order.
// widen appends the global numbers src to dst.
func widen(dst []int64, src []int32) []int64 {
	for _, g := range src {
		dst = append(dst, int64(g))
	}
	return dst
}

func getNeighbour(ls *LocalSet, q int) *Neighbour {
	i, found := slices.BinarySearchFunc(ls.Neighbours, q, func(n Neighbour, q int) int { return n.Rank - q })
	if !found {
		ls.Neighbours = slices.Insert(ls.Neighbours, i, Neighbour{Rank: q})
	}
	return &ls.Neighbours[i]
}

// byOwner sorts elements by owner, then by global number.
func byOwner(els []int32, owner []int32) {
	slices.SortFunc(els, func(a, b int32) int {
		if oa, ob := owner[a], owner[b]; oa != ob {
			return int(oa - ob)
		}
		return int(a - b)
	})
}
