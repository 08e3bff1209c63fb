package dist

// propagate completes values given for some sets of m (done[s] != nil) to
// every set connected to them through the maps, by two rules: fromTargets
// gives a map's source set its values from its target set's, and toTarget
// a map's target set its values from its source set's. It is the skeleton
// of Spread (owners) and SpreadOrder (orders).
//
// Each round first derives every set that is the source of a map whose
// target is done (the first such map in declared order serves); failing
// any, it derives one target set, through the map whose source was done
// earliest (the sets given first, then those derived from them, and so
// on; declared order among equals), so that a target follows the set
// closest to the ones given. It stops when no map leads from a done set
// to one not done; such sets keep nil. Each set is derived once, so the
// work is that of the rules on each map at most once, plus a scan of the
// maps per derived set.
func propagate(m *Mesh, done [][]int32, fromTargets, toTarget func(mp *Map) []int32) {
	// gen[s] is the round in which set s was done (0: given).
	gen := make([]int, len(m.Sets))
	for round := 1; ; round++ {
		changed := false
		for i := range m.Maps {
			mp := &m.Maps[i]
			if done[mp.From] != nil || done[mp.To] == nil || mp.Arity == 0 {
				continue
			}
			done[mp.From], gen[mp.From], changed = fromTargets(mp), round, true
		}
		if changed {
			continue
		}
		var best *Map
		for i := range m.Maps {
			mp := &m.Maps[i]
			if done[mp.From] == nil || done[mp.To] != nil {
				continue
			}
			if best == nil || gen[mp.From] < gen[best.From] {
				best = mp
			}
		}
		if best == nil {
			return
		}
		done[best.To], gen[best.To] = toTarget(best), round
	}
}
