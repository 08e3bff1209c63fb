package unstructured_test

import (
	"bytes"
	"log/slog"
	"math/rand"
	"strings"
	"testing"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/mesh/unstructured"
)

// TestRenumberedMeshNotWarned: a mesh whose cells come in random order has
// poor locality; declared with the loader's renumbering (the default), the
// loops that follow log no locality warning, since the advice to call
// op2.Renumber does not apply, while declared with Renumber "none" its
// loops warn about its cells' map.
func TestRenumberedMeshNotWarned(t *testing.T) {
	defer func() {
		if err := op2.Configure(op2.Config{}); err != nil {
			t.Fatal(err)
		}
	}()
	var log bytes.Buffer
	if err := op2.Configure(op2.Config{Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))}); err != nil {
		t.Fatal(err)
	}
	g := unstructured.Cube(12)
	b := &g.Blocks[0]
	perm := rand.New(rand.NewSource(3)).Perm(b.Len())
	nodes := make([]int32, 0, len(b.Nodes))
	for _, e := range perm {
		nodes = append(nodes, b.Nodes[4*e:4*e+4]...)
	}
	b.Nodes = nodes
	for _, renumber := range []string{"rcm", "none"} {
		log.Reset()
		m, err := unstructured.Declare(g, unstructured.Options{Renumber: renumber})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Geometry(); err != nil {
			t.Fatal(err)
		}
		warned := strings.Contains(log.String(), "poor locality")
		if renumber == "rcm" && warned {
			t.Errorf("a mesh the loader renumbered was warned about:\n%s", log.String())
		}
		if renumber == "none" && (!warned || !strings.Contains(log.String(), "map=tetrahedra_nodes")) {
			t.Errorf("a shuffled mesh left in its order logged no locality warning for its cells' map:\n%s", log.String())
		}
	}
}
