package op2_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// walkFixture holds one object of every exported type, and a lazy
// runtime whose recorded loop each forcing call must run.
type walkFixture struct {
	dir          string
	r            *op2.Runtime // lazy
	inc          *op2.Kernel
	nodes, edges *op2.Set
	pedge        *op2.Map
	d, d2        *op2.Dat[float64]
	g            *op2.Global[float64]
	c            *op2.Const[float64]
	view         *op2.DatView[float64]
	A            *op2.Mat[float64]
	x, b         *op2.Dat[float64]
	solver       *op2.Solver
	md, md2      *op2.MixedDat[float64]
	mA           *op2.MixedMat[float64]
	loop         *op2.Loop // of the default (eager) runtime
}

func newWalkFixture(t *testing.T) *walkFixture {
	f := &walkFixture{dir: t.TempDir()}
	f.r = must(op2.NewRuntime(op2.Config{Backend: "sequential", Lazy: true}))
	f.inc = op2.NewKernel(`void walk_inc(double *x) { x[0] += 1; }`, "walk_inc")
	f.edges, f.nodes, f.pedge = scatteredEdges(6, 5, 3, 2)
	f.d = must(op2.NewDat(f.nodes, 1, []float64{1, 2, 3, 4, 5}, "d"))
	f.d2 = must(op2.NewDat[float64](f.nodes, 1, nil, "d2"))
	f.g = must(op2.NewGlobal(1, []float64{0.5}, "g"))
	f.c = must(op2.NewConstIn(f.r, 1, []float64{2}, "walk_c"))
	t.Cleanup(f.c.Remove)
	f.view = must(f.d.View(0))
	sp := must(op2.NewSparsity(f.nodes, 1, f.nodes, 1, []op2.MapPair{{Row: f.pedge, Col: f.pedge}}, "sp"))
	f.A = must(op2.NewMat[float64](sp, "A"))
	f.x = must(op2.NewDat[float64](f.nodes, 1, nil, "x"))
	f.b = must(op2.NewDat(f.nodes, 1, []float64{1, 1, 1, 1, 1}, "b"))
	f.solver = must(op2.NewSolver(op2.SolverOptions{Precond: "none", MaxIts: 1, Runtime: op2.Default()}))
	ident := must(op2.NewMap(f.edges, f.edges, 1, iota32[int32](6), "ident"))
	ms := must(op2.NewMixedSet([]*op2.Set{f.nodes, f.edges}, "ms"))
	mm := must(op2.NewMixedMap([]*op2.Map{f.pedge, ident}, "mm"))
	f.md = must(op2.NewMixedDat[float64](ms, []int{1, 1}, nil, "md"))
	f.md2 = must(op2.NewMixedDat[float64](ms, []int{1, 1}, nil, "md2"))
	msp := must(op2.NewMixedSparsity(ms, []int{1, 1}, ms, []int{1, 1}, []op2.MixedMapPair{{Row: mm, Col: mm}}, "msp"))
	f.mA = must(op2.NewMixedMat[float64](msp, "mA"))
	f.loop = must(op2.NewLoop(f.inc, f.nodes, f.d2.Arg(op2.RW)))
	check(t, f.d.WriteText(filepath.Join(f.dir, "d.txt")))
	check(t, f.d.WriteBinary(filepath.Join(f.dir, "d.bin")))
	return f
}

// record records a loop incrementing d in the lazy runtime.
func (f *walkFixture) record(t *testing.T) {
	t.Helper()
	check(t, f.r.ParLoop(f.inc, f.nodes, f.d.Arg(op2.RW)))
	if n := op2.RecordedLoops(); n != 1 {
		t.Fatalf("%d loops recorded, want 1", n)
	}
}

// forcing says how an exported function or method of package op2 relates
// to recorded loops: call calls it (it must run them), or static says
// that it does and the test checks that it calls lock(forData) or
// lock(forCollective) (calling it here would end MPI or PETSc for the
// test process), or none says why it touches no data a loop can change,
// or orders says why it need not run them and which test checks the
// order it keeps instead.
type forcing struct {
	call   func(f *walkFixture)
	static bool
	none   string
	orders string
}

const (
	noDecl  = "declares or describes objects; reads no values a loop writes"
	noName  = "a name, size, shape or structure, fixed when declared"
	noArg   = "builds a loop argument; nothing runs"
	noMap   = "maps, sets and sparsities are never written by loops (Renumber and Partition force)"
	noError = "an error's or a report's text"
)

// forcings is every exported function and method of package op2.
var forcings = map[string]forcing{
	// Package-level functions.
	"Abort":                  {none: "ends the process"},
	"ArgIdx":                 {none: noArg},
	"ArgLayer":               {none: noArg},
	"AutoPartitioner":        {none: noDecl},
	"Backend":                {none: "the configured backend's name"},
	"Backends":               {none: "the registered backends' names"},
	"BlockPartitioner":       {none: noDecl},
	"Chain":                  {call: func(f *walkFixture) { op2.Chain(func() error { return nil }) }},
	"Close":                  {call: func(f *walkFixture) { op2.Close() }},
	"Configure":              {call: func(f *walkFixture) { op2.Configure(op2.Config{}.Explicit("Lazy")) }},
	"Default":                {none: "the default runtime"},
	"EnableTiming":           {call: func(f *walkFixture) { op2.EnableTiming(false) }},
	"Finalize":               {static: true},
	"Checkpoint":             {static: true},
	"Restore":                {static: true},
	"Runtime.Logger":         {none: "the runtime's logger"},
	"Generate":               {none: "generates source; runs nothing"},
	"METISPartitioner":       {none: noDecl},
	"NewComposedMap":         {none: noDecl},
	"NewConst":               {none: noDecl},
	"NewConstIn":             {none: noDecl},
	"NewDat":                 {none: noDecl},
	"NewExtrudedDat":         {none: noDecl},
	"NewExtrudedMap":         {none: noDecl},
	"NewExtrudedSet":         {none: noDecl},
	"NewGlobal":              {none: noDecl},
	"NewKernel":              {none: noDecl},
	"NewLoop":                {none: "binds a loop object; nothing runs until Compute"},
	"NewMap":                 {none: noDecl},
	"NewMap64":               {none: noDecl},
	"NewMat":                 {none: noDecl},
	"NewMixedDat":            {none: noDecl},
	"NewMixedDatOf":          {none: noDecl},
	"NewMixedMap":            {none: noDecl},
	"NewMixedMat":            {none: noDecl},
	"NewMixedSet":            {none: noDecl},
	"NewMixedSparsity":       {none: noDecl},
	"NewPermutedMap":         {none: noDecl},
	"NewRuntime":             {none: noDecl},
	"NewSet":                 {none: noDecl},
	"NewSolver":              {none: noDecl},
	"NewSparsity":            {none: noDecl},
	"NewSubset":              {none: noDecl},
	"NewVariableExtrudedSet": {none: noDecl},
	"OwnerPartitioner":       {none: noDecl},
	"Opt":                    {none: noArg},
	"PTScotchPartitioner":    {none: noDecl},
	"ParLoop":                {call: func(f *walkFixture) { op2.ParLoop(f.inc, f.nodes, f.d2.Arg(op2.RW)) }},
	"Partition":              {call: func(f *walkFixture) { op2.Partition(op2.Partitioner{}) }},
	"Partitioned":            {none: "whether Partition ran"},
	"RCBCentreOrdering":      {none: noDecl},
	"RCBOrdering":            {none: noDecl},
	"RCBPartitioner":         {none: noDecl},
	"RCMOrdering":            {none: noDecl},
	"Rank":                   {none: "the MPI rank"},
	"Ranks":                  {none: "the MPI ranks"},
	"ReadStats":              {call: func(f *walkFixture) { op2.ReadStats() }},
	"Renumber":               {call: func(f *walkFixture) { op2.Renumber(op2.Ordering{}) }},
	"ResetTimings":           {call: func(f *walkFixture) { op2.ResetTimings() }},
	"Timings":                {call: func(f *walkFixture) { op2.Timings() }},
	"Use":                    {call: func(f *walkFixture) { op2.Use("sequential") }},
	"Wait":                   {call: func(f *walkFixture) { op2.Wait() }},
	"WriteTimingCSV":         {call: func(f *walkFixture) { op2.WriteTimingCSV(io.Discard) }},
	"WriteTimingJSON":        {call: func(f *walkFixture) { op2.WriteTimingJSON(io.Discard) }},
	"WriteTimingTable":       {call: func(f *walkFixture) { op2.WriteTimingTable(io.Discard) }},

	// Errors and reports.
	"ChainError.Error":        {none: noError},
	"ChainAccessError.Error":  {none: noError},
	"ReadHaloStats":           {none: "reads the halo counters, which loops change only when they run"},
	"ChainError.Unwrap":       {none: noError},
	"CompileError.Error":      {none: noError},
	"CompileError.Unwrap":     {none: noError},
	"DeviceBuildError.Error":  {none: noError},
	"DeviceBuildError.Unwrap": {none: noError},
	"LoadError.Error":         {none: noError},
	"LoadError.Unwrap":        {none: noError},
	"LoopError.Error":         {none: noError},
	"LoopTiming.GBPerSecond":  {none: "arithmetic on a report already taken"},
	"LoopTiming.Mean":         {none: "arithmetic on a report already taken"},
	"PartitionInfo.String":    {none: noError},
	"Partitioner.With":        {none: noDecl},

	// Const.
	"Const.Name":   {none: noName},
	"Const.Remove": {none: "a recorded loop keeps the constants it was bound with"},
	"Const.Set":    {orders: "sets at once when no recorded loop uses the constant, else records the assignment after them (TestConstSetOrdersAfterRecordedLoops)"},
	"Const.Value":  {none: "loops never write constants; Set forces"},

	// Dat.
	"Dat.Arg":         {none: noArg},
	"Dat.ArgExtMap":   {none: noArg},
	"Dat.ArgExtVec":   {none: noArg},
	"Dat.ArgMap":      {none: noArg},
	"Dat.ArgVec":      {none: noArg},
	"Dat.Clone":       {call: func(f *walkFixture) { f.d.Clone("clone") }},
	"Dat.CopyTo":      {call: func(f *walkFixture) { f.d.CopyTo(f.d2) }},
	"Dat.Data":        {call: func(f *walkFixture) { f.d.Data() }},
	"Dat.DataErr":     {call: func(f *walkFixture) { f.d.DataErr() }},
	"Dat.DataRO":      {call: func(f *walkFixture) { f.d.DataRO() }},
	"Dat.DataROErr":   {call: func(f *walkFixture) { f.d.DataROErr() }},
	"Dat.DataWO":      {call: func(f *walkFixture) { f.d2.DataWO() }},
	"Dat.DataWOErr":   {call: func(f *walkFixture) { f.d2.DataWOErr() }},
	"Dat.Dim":         {none: noName},
	"Dat.ExtrudedSet": {none: noName},
	"Dat.Gather":      {call: func(f *walkFixture) { f.d.Gather() }},
	"Dat.GatherBlock": {call: func(f *walkFixture) { f.d.GatherBlock() }},
	"Dat.LayerDim":    {none: noName},
	"Dat.Name":        {none: noName},
	"Dat.Nbytes":      {none: noName},
	"Dat.Range":       {call: func(f *walkFixture) { f.d.Range(0, 1) }},
	"Dat.ReadBinary":  {call: func(f *walkFixture) { f.d2.ReadBinary(filepath.Join(f.dir, "d.bin")) }},
	"Dat.ReadText":    {call: func(f *walkFixture) { f.d2.ReadText(filepath.Join(f.dir, "d.txt")) }},
	"Dat.Set":         {none: noName},
	"Dat.State":       {call: func(f *walkFixture) { f.d.State() }},
	"Dat.Sync":        {call: func(f *walkFixture) { f.d.Sync() }},
	"Dat.View":        {none: noDecl},
	"Dat.WriteBinary": {call: func(f *walkFixture) { f.d.WriteBinary(filepath.Join(f.dir, "w.bin")) }},
	"Dat.WriteText":   {call: func(f *walkFixture) { f.d.WriteText(filepath.Join(f.dir, "w.txt")) }},
	"Dat.Zero":        {call: func(f *walkFixture) { f.d2.Zero() }},

	"Dat.SetNoCheckpoint": {none: "a flag the next Checkpoint or Restore reads; touches no values"},

	// DatView.
	"DatView.Arg":       {none: noArg},
	"DatView.ArgMap":    {none: noArg},
	"DatView.ArgVec":    {none: noArg},
	"DatView.Component": {none: noName},
	"DatView.Dat":       {none: noName},
	"DatView.DataRO":    {call: func(f *walkFixture) { f.view.DataRO() }},
	"DatView.DataROErr": {call: func(f *walkFixture) { f.view.DataROErr() }},
	"DatView.Dim":       {none: noName},
	"DatView.Name":      {none: noName},
	"DatView.Set":       {none: noName},

	// Extruded sets and maps.
	"ExtrudedMap.Arity":    {none: noMap},
	"ExtrudedMap.Base":     {none: noMap},
	"ExtrudedMap.From":     {none: noMap},
	"ExtrudedMap.Name":     {none: noMap},
	"ExtrudedMap.Offset":   {none: noMap},
	"ExtrudedMap.Start":    {none: noMap},
	"ExtrudedMap.To":       {none: noMap},
	"ExtrudedSet.Base":     {none: noMap},
	"ExtrudedSet.Layers":   {none: noMap},
	"ExtrudedSet.Name":     {none: noMap},
	"ExtrudedSet.Size":     {none: noMap},
	"ExtrudedSet.String":   {none: noMap},
	"ExtrudedSet.Variable": {none: noMap},

	// Global.
	"Global.Arg":         {none: noArg},
	"Global.Data":        {call: func(f *walkFixture) { f.g.Data() }},
	"Global.DataErr":     {call: func(f *walkFixture) { f.g.DataErr() }},
	"Global.DataRO":      {call: func(f *walkFixture) { f.g.DataRO() }},
	"Global.DataROErr":   {call: func(f *walkFixture) { f.g.DataROErr() }},
	"Global.Dim":         {none: noName},
	"Global.Name":        {none: noName},
	"Global.Nbytes":      {none: noName},
	"Global.SetValue":    {orders: "sets at once when no recorded loop passes the Global, else records the assignment after them (TestSetValueOrdersAfterRecordedLoops)"},
	"Global.SetValueErr": {orders: "SetValue's: sets at once or records the assignment after the recorded loops passing the Global"},
	"Global.State":       {call: func(f *walkFixture) { f.g.State() }},
	"Global.Sync":        {call: func(f *walkFixture) { f.g.Sync() }},
	"Global.Value":       {call: func(f *walkFixture) { f.g.Value() }},
	"Global.ValueErr":    {call: func(f *walkFixture) { f.g.ValueErr() }},

	// Kernel and Loop.
	"Kernel.CXX":    {none: noDecl},
	"Kernel.IsCXX":  {none: noName},
	"Kernel.Name":   {none: noName},
	"Loop.Backend":  {none: noName},
	"Loop.Compute":  {call: func(f *walkFixture) { f.loop.Compute() }},
	"Loop.Generate": {none: "generates source; runs nothing"},

	// Map, Set, Subset, Sparsity.
	"Map.ArgIdx":            {none: noArg},
	"Map.Arity":             {none: noMap},
	"Map.From":              {none: noMap},
	"Map.Gather":            {none: noMap},
	"Map.Gather64":          {none: noMap},
	"Map.GatherBlock":       {none: noMap},
	"Map.GatherBlock64":     {none: noMap},
	"Map.Locality":          {none: noMap},
	"Map.Name":              {none: noMap},
	"Map.To":                {none: noMap},
	"Map.Values":            {none: noMap},
	"Set.CoreSize":          {none: noMap},
	"Set.DeclaredNumbers":   {none: noMap},
	"Set.DeclaredNumbers64": {none: noMap},
	"Set.ExecSize":          {none: noMap},
	"Set.GlobalSize":        {none: noMap},
	"Set.Name":              {none: noMap},
	"Set.Size":              {none: noMap},
	"Set.String":            {none: noMap},
	"Set.TotalSize":         {none: noMap},
	"Sparsity.CSR":          {none: noMap},
	"Sparsity.NNZ":          {none: noMap},
	"Sparsity.Name":         {none: noMap},
	"Sparsity.Shape":        {none: noMap},
	"Sparsity.String":       {none: noMap},
	"Subset.Difference":     {none: noDecl},
	"Subset.Indices":        {none: noMap},
	"Subset.Intersection":   {none: noDecl},
	"Subset.Name":           {none: noMap},
	"Subset.Set":            {none: noMap},
	"Subset.Size":           {none: noMap},
	"Subset.String":         {none: noMap},
	"Subset.Union":          {none: noDecl},
	"MixedMap.Block":        {none: noMap},
	"MixedMap.From":         {none: noMap},
	"MixedMap.Len":          {none: noMap},
	"MixedMap.Maps":         {none: noMap},
	"MixedMap.Name":         {none: noMap},
	"MixedMap.To":           {none: noMap},
	"MixedSet.Block":        {none: noMap},
	"MixedSet.Len":          {none: noMap},
	"MixedSet.Name":         {none: noMap},
	"MixedSet.Sets":         {none: noMap},
	"MixedSet.Size":         {none: noMap},
	"MixedSet.String":       {none: noMap},
	"MixedSparsity.Block":   {none: noMap},
	"MixedSparsity.Blocks":  {none: noMap},
	"MixedSparsity.Name":    {none: noMap},

	// Mat and MixedMat.
	"Mat.Arg":             {none: noArg},
	"Mat.Dense":           {call: func(f *walkFixture) { f.A.Dense() }},
	"Mat.Gather":          {call: func(f *walkFixture) { f.A.Gather() }},
	"Mat.Mult":            {call: func(f *walkFixture) { f.A.Mult(f.x, f.d2) }},
	"Mat.Name":            {none: noName},
	"Mat.Nbytes":          {none: noName},
	"Mat.Sparsity":        {none: noName},
	"Mat.State":           {call: func(f *walkFixture) { f.A.State() }},
	"Mat.String":          {none: noName},
	"Mat.Values":          {call: func(f *walkFixture) { f.A.Values() }},
	"Mat.Zero":            {call: func(f *walkFixture) { f.A.Zero() }},
	"Mat.ZeroRows":        {call: func(f *walkFixture) { f.A.ZeroRows([]int{0}, 1) }},
	"Mat.ZeroRowsColumns": {call: func(f *walkFixture) { f.A.ZeroRowsColumns([]int{0}, 1, nil, nil) }},
	"MixedMat.Arg":        {none: noArg},
	"MixedMat.Block":      {none: noName},
	"MixedMat.Mult":       {call: func(f *walkFixture) { f.mA.Mult(f.md, f.md2) }},
	"MixedMat.Name":       {none: noName},
	"MixedMat.Sparsity":   {none: noName},
	"MixedMat.Zero":       {call: func(f *walkFixture) { f.mA.Zero() }},

	// MixedDat.
	"MixedDat.Arg":       {none: noArg},
	"MixedDat.ArgMap":    {none: noArg},
	"MixedDat.ArgVec":    {none: noArg},
	"MixedDat.Block":     {none: noName},
	"MixedDat.Blocks":    {none: noName},
	"MixedDat.Clone":     {call: func(f *walkFixture) { f.md.Clone("mclone") }},
	"MixedDat.CopyTo":    {call: func(f *walkFixture) { f.md.CopyTo(f.md2) }},
	"MixedDat.Data":      {call: func(f *walkFixture) { f.md.Data() }},
	"MixedDat.DataErr":   {call: func(f *walkFixture) { f.md.DataErr() }},
	"MixedDat.DataRO":    {call: func(f *walkFixture) { f.md.DataRO() }},
	"MixedDat.DataROErr": {call: func(f *walkFixture) { f.md.DataROErr() }},
	"MixedDat.Dims":      {none: noName},
	"MixedDat.Len":       {none: noName},
	"MixedDat.Name":      {none: noName},
	"MixedDat.Nbytes":    {none: noName},
	"MixedDat.Set":       {none: noName},
	"MixedDat.Sync":      {call: func(f *walkFixture) { f.md.Sync() }},
	"MixedDat.Zero":      {call: func(f *walkFixture) { f.md2.Zero() }},

	// Runtime.
	"Runtime.Backend":          {none: "the configured backend's name"},
	"Runtime.Chain":            {call: func(f *walkFixture) { f.r.Chain(func() error { return nil }) }},
	"Runtime.Close":            {call: func(f *walkFixture) { f.r.Close() }},
	"Runtime.Configure":        {call: func(f *walkFixture) { f.r.Configure(op2.Config{Backend: "sequential", Lazy: true}) }},
	"Runtime.EnableTiming":     {call: func(f *walkFixture) { f.r.EnableTiming(false) }},
	"Runtime.Generate":         {none: "generates source; runs nothing"},
	"Runtime.NewLoop":          {none: "binds a loop object; nothing runs until Compute"},
	"Runtime.ParLoop":          {call: func(f *walkFixture) { op2.Default().ParLoop(f.inc, f.nodes, f.d2.Arg(op2.RW)) }},
	"Runtime.ResetTimings":     {call: func(f *walkFixture) { f.r.ResetTimings() }},
	"Runtime.Stats":            {call: func(f *walkFixture) { f.r.Stats() }},
	"Runtime.Timings":          {call: func(f *walkFixture) { f.r.Timings() }},
	"Runtime.Use":              {call: func(f *walkFixture) { f.r.Use("sequential") }},
	"Runtime.Wait":             {call: func(f *walkFixture) { f.r.Wait() }},
	"Runtime.WriteTimingCSV":   {call: func(f *walkFixture) { f.r.WriteTimingCSV(io.Discard) }},
	"Runtime.WriteTimingJSON":  {call: func(f *walkFixture) { f.r.WriteTimingJSON(io.Discard) }},
	"Runtime.WriteTimingTable": {call: func(f *walkFixture) { f.r.WriteTimingTable(io.Discard) }},

	// Solver.
	"NormType.String": {none: "a name of an option's value"},
	"Solver.Close":    {none: "frees the solver's PETSc objects; reads no data"},
	"Solver.Solve":    {call: func(f *walkFixture) { f.solver.Solve(f.A, f.x, f.b) }},
}

// parsePackage parses the package's source files, tests left out.
func parsePackage(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

// packageDecls parses the package's source (tests left out) and returns
// its exported functions and methods, as "Name" and "Type.Name", with
// their declarations.
func packageDecls(t *testing.T) map[string]*ast.FuncDecl {
	t.Helper()
	_, files := parsePackage(t)
	decls := map[string]*ast.FuncDecl{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil {
				recv := receiverType(fd.Recv.List[0].Type)
				if !ast.IsExported(recv) {
					continue
				}
				name = recv + "." + name
			}
			decls[name] = fd
		}
	}
	return decls
}

// receiverType is the name of a method's receiver type (*T, T[P] and T).
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// TestEveryExportedAPIForcesRecordedLoops walks every exported function
// and method of the package (read from its source, so that a new one
// without an entry in forcings fails): each one either runs the recorded
// loops — called here with a loop recorded, it leaves none — or is
// declared, with the reason, to touch no data a loop can change.
func TestEveryExportedAPIForcesRecordedLoops(t *testing.T) {
	decls := packageDecls(t)
	var names []string
	for name, fd := range decls {
		if !ast.IsExported(fd.Name.Name) {
			continue
		}
		names = append(names, name)
		if _, ok := forcings[name]; !ok {
			t.Errorf("%s: exported, but not in forcings: say whether it forces recorded loops", name)
		}
	}
	for name := range forcings {
		if _, ok := decls[name]; !ok {
			t.Errorf("forcings lists %s, which the package does not declare", name)
		}
	}
	sort.Strings(names)
	// The default runtime runs its loops at once, so that a call that
	// issues one (ParLoop, Loop.Compute, Mat.Mult...) runs the loops the
	// fixture recorded before it, rather than recording its own after
	// them (lazy mode, the default).
	check(t, op2.Configure(op2.Config{}.Explicit("Lazy")))
	f := newWalkFixture(t)
	defer op2.Configure(op2.Config{}) // the default runtime as TestMain set it
	for _, name := range names {
		rule := forcings[name]
		switch {
		case rule.static:
			if !locks(decls[name].Body, "forData") && !locks(decls[name].Body, "forCollective") {
				t.Errorf("%s: declared to force, but does not call lock(forData) or lock(forCollective)", name)
			}
		case rule.call != nil:
			f.record(t)
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s panicked: %v", name, p)
					}
				}()
				rule.call(f)
			}()
			if n := op2.RecordedLoops(); n != 0 {
				t.Errorf("%s left %d recorded loops: it must run them", name, n)
				check(t, op2.Wait())
			}
		case rule.none == "" && rule.orders == "":
			t.Errorf("%s: forcings entry says nothing", name)
		}
	}
	// d was incremented once per forcing call.
	if got := f.d.Data()[0]; got < 2 {
		t.Errorf("d[0] = %v: the recorded loops did not run", got)
	}
}

// noDataLockers are the functions that may take mu without running the
// recorded loops, with lock(forNoData), and why.
var noDataLockers = map[string]string{
	"ReadHaloStats":         "reads counters",
	"Runtime.ParLoop":       "records, or runs the recorded loops first",
	"Loop.Compute":          "records, or runs the recorded loops first",
	"Runtime.Chain":         "opens the scope (counter only)",
	"Runtime.chainScope":    "closes the scope (counter only)",
	"Runtime.Backend":       "reads the configuration",
	"Runtime.Generate":      "generates source",
	"Runtime.NewLoop":       "binds a loop object",
	"Loop.Generate":         "generates source",
	"Partitioned":           "reads a flag",
	"Map.Gather":            "maps are never written by loops",
	"Map.Gather64":          "maps are never written by loops",
	"Map.GatherBlock":       "maps are never written by loops",
	"Map.GatherBlock64":     "maps are never written by loops",
	"NewMap64":              "declares a map",
	"NewPermutedMap":        "declares a map",
	"composedTable":         "reads maps",
	"newDistributedSubset":  "declares a subset",
	"Subset.indicesCopy":    "reads a subset",
	"Set.DeclaredNumbers":   "reads the numbering (Renumber forces)",
	"Set.count":             "reads the counts (Partition forces)",
	"Set.GlobalSize":        "reads the counts (Partition forces)",
	"MixedSet.Size":         "reads the counts (Partition forces)",
	"Map.Values":            "maps are never written by loops (Renumber and Partition force)",
	"Set.DeclaredNumbers64": "reads the numbering (Renumber forces)",
	"Const.Set":             "orders itself after the recorded loops using the constant (TestConstSetOrdersAfterRecordedLoops)",
	"ExtrudedSet.Size":      "reads layer ranges, which loops only read",
	"Global.setValueErr":    "orders itself after the recorded loops passing the Global (TestSetValueOrdersAfterRecordedLoops)",
}

// TestDataAccessTakesMuThroughLock checks the structure that makes
// forcing impossible to forget: in the package's source only lock takes
// mu, and only the functions of noDataLockers take it in the mode that
// does not run the recorded loops (forNoData); everything else that
// needs mu (every access to data) takes it in a mode that runs them.
func TestDataAccessTakesMuThroughLock(t *testing.T) {
	fset, files := parsePackage(t)
	taking := map[string]bool{}
	for _, file := range files {
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil {
				name = receiverType(fd.Recv.List[0].Type) + "." + name
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				c, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Lock" {
					// mu, or the process's lock: rt.proc.Lock,
					// r.proc.mu.Lock.
					isMu := false
					switch x := sel.X.(type) {
					case *ast.Ident:
						isMu = x.Name == "mu"
					case *ast.SelectorExpr:
						owner, ok := x.X.(*ast.SelectorExpr)
						isMu = x.Sel.Name == "proc" || x.Sel.Name == "mu" && ok && owner.Sel.Name == "proc"
					}
					if isMu && name != "lock" {
						t.Errorf("%s (%s) takes mu directly: take it with lock, in the mode that says what happens to the recorded loops", name, fset.Position(c.Pos()))
					}
				}
				if isLock(c, "forNoData") {
					taking[name] = true
					if _, allowed := noDataLockers[name]; !allowed {
						t.Errorf("%s (%s) takes mu with lock(forNoData), which does not run the recorded loops: use a mode that does (forData, forStorage, forCollective, forStatus), or list it in noDataLockers with the reason it touches no data", name, fset.Position(c.Pos()))
					}
				}
				return true
			})
		}
	}
	for name := range noDataLockers {
		if !taking[name] {
			t.Errorf("noDataLockers lists %s, which does not call lock(forNoData)", name)
		}
	}
}

// isLock reports whether c is a call lock(mode).
func isLock(c *ast.CallExpr, mode string) bool {
	id, ok := c.Fun.(*ast.Ident)
	if !ok || id.Name != "lock" || len(c.Args) != 2 {
		return false
	}
	arg, ok := c.Args[0].(*ast.Ident)
	return ok && arg.Name == mode
}

// locks reports whether body calls lock(mode).
func locks(body ast.Node, mode string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && isLock(c, mode) {
			found = true
		}
		return !found
	})
	return found
}

// TestLockNamesItsCaller: every lock call names the API call it serves,
// the name a *ChainAccessError gives: an exported function or method
// passes its own name ("Dat.Data", "Wait"), and an unexported helper
// either passes on a name its caller gave it (a parameter) or names an
// exported function of the package. The engine reads no call stack.
func TestLockNamesItsCaller(t *testing.T) {
	fset, files := parsePackage(t)
	exported := map[string]bool{}
	for name, fd := range packageDecls(t) {
		if ast.IsExported(fd.Name.Name) {
			exported[name] = true
		}
	}
	for _, file := range files {
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || fd.Name.Name == "lock" {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil {
				name = receiverType(fd.Recv.List[0].Type) + "." + name
			}
			params := map[string]bool{}
			for _, f := range fd.Type.Params.List {
				for _, n := range f.Names {
					params[n.Name] = true
				}
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				c, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if id, isID := c.Fun.(*ast.Ident); !isID || id.Name != "lock" {
					return true
				}
				at := fset.Position(c.Pos())
				if len(c.Args) != 2 {
					t.Errorf("%s (%s): lock takes a mode and the API call's name", name, at)
					return true
				}
				switch arg := c.Args[1].(type) {
				case *ast.BasicLit:
					got, err := strconv.Unquote(arg.Value)
					switch {
					case err != nil:
						t.Errorf("%s (%s): lock's name %s: %v", name, at, arg.Value, err)
					case ast.IsExported(fd.Name.Name) && exported[name] && got != name:
						t.Errorf("%s (%s) locks as %q: an exported call names itself, %q", name, at, got, name)
					case !exported[got]:
						t.Errorf("%s (%s) locks as %q, which is no exported function or method of the package", name, at, got)
					}
				case *ast.Ident:
					if !params[arg.Name] || ast.IsExported(fd.Name.Name) && exported[name] {
						t.Errorf("%s (%s) locks with %s: only an unexported helper passes on a name, as a parameter its caller gave", name, at, arg.Name)
					}
				default:
					t.Errorf("%s (%s): lock's name is neither a string literal nor a parameter", name, at)
				}
				return true
			})
		}
	}
}
