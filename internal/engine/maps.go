package engine

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
)

// CheckLocality looks, once per map, at the numbering of the maps of
// loop l, just bound by r: the first loop through a map comes after any
// Renumber (Renumber refuses to run later), so the numbering looked at is
// the one loops will use. A map that Partition lays out is ordered there
// and never looked at.
func (r *Runtime) CheckLocality(l *core.Loop) {
	for i := range l.Args {
		if m := l.Args[i].Map; m != nil && m.LocalityUnchecked {
			m.LocalityUnchecked = false
			r.warnLocality(m)
		}
	}
}

// warnLocality logs a warning, on r's logger, when m is numbered with
// poor locality (PoorLocality): Renumber would speed its loops up.
func (r *Runtime) warnLocality(m *core.Map) {
	l := r.Logger()
	if l == nil || !l.Enabled(context.Background(), slog.LevelWarn) {
		return
	}
	gap := MedianGap(m.Table, m.Arity, m.From.Total)
	if PoorLocality(gap, m.To.Total) {
		l.LogAttrs(context.Background(), slog.LevelWarn, "op2: map with poor locality; op2.Renumber, before the first loop, orders a mesh for it",
			slog.String("map", m.Name), slog.String("from", m.From.Name), slog.String("to", m.To.Name),
			slog.Int("median_gap", gap), slog.Int("target_set_size", m.To.Total))
	}
}

// ComposeTables evaluates the composition of maps (op2.NewComposedMap's
// order: the first map is the outermost), innermost first: each map's
// rows replace the entries so far. what names the composed map in
// errors. Before Partition on several ranks (distributing) the entries
// are global numbers and the rows come from the ranks whose blocks hold
// them (collective). Caller holds the lock.
func (p *Process) ComposeTables(maps []*core.Map, what string, distributing bool) ([]int32, error) {
	table := slices.Clone(maps[len(maps)-1].Table)
	for i := len(maps) - 2; i >= 0; i-- {
		m := maps[i]
		k := m.Arity
		if distributing {
			at := fmt.Sprintf("%s: map %q at the entries through map %q (elements of set %q)", what, m.Name, maps[i+1].Name, m.From.Name)
			rows, err := dist.BlockRows(p.Started(), m.Table, k, table, at)
			if err != nil {
				return nil, p.Fatal(p.api.Internal(err))
			}
			table = rows
			continue
		}
		rows := make([]int32, 0, len(table)*k)
		for _, t := range table {
			rows = append(rows, m.Table[int(t)*k:(int(t)+1)*k]...)
		}
		table = rows
	}
	return table, nil
}
