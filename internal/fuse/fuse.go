// Package fuse runs consecutive loops over one set as one loop: the loops'
// kernels become one kernel whose body runs each kernel's body in turn,
// and their arguments one argument list, an argument that several loops
// pass alike (the same Dat directly, or the same Dat read through the same
// map column) passed once. The fused loop is an ordinary core.Loop, so
// every backend generates, plans, stages and tunes it as any other loop,
// and its results are those of the loops run one after the other, bit for
// bit: each element runs the kernels' statements in order, on the same
// values.
//
// Loops fuse when no element of a later loop depends on another element
// of an earlier loop (Check): data that either loop modifies is reached
// directly by both (element e of the later loop reads what element e of
// the earlier one wrote), never through a map; Globals only read. The
// loop chains of package op2 use it when they run their recorded loops.
package fuse

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goop2/op2/internal/cfront"
	"github.com/goop2/op2/internal/clex"
	"github.com/goop2/op2/internal/core"
)

// MaxLoops is the most loops one fused loop runs: a longer run of loops
// that fuse is fused in pieces, so that a fused kernel (and its name in
// the timing report) stays of a size a compiler handles quickly.
const MaxLoops = 16

// errNo is the answer of the checks when no reason is asked for, so that
// checking a chain that repeats allocates nothing.
var errNo = errors.New("fuse: no")

// Eligible returns why loop l cannot be fused with any other loop, or nil.
func Eligible(l *core.Loop) error { return eligible(l, true) }

// CanFuse reports whether loop l can be fused with others (Eligible
// returns nil) without saying why not; it allocates nothing.
func CanFuse(l *core.Loop) bool { return eligible(l, false) == nil }

func eligible(l *core.Loop, explain bool) error {
	why := ""
	switch {
	case l.Extruded != nil:
		why = "it runs over an extruded set"
	case l.Check:
		why = "check mode compares each loop's arguments"
	case l.Kernel.CXX:
		why = "its kernel is C++"
	case l.Kernel.Info == nil:
		why = "its kernel was not read"
	}
	for i := range l.Args {
		if a := &l.Args[i]; why == "" && (a.Facts().Any(core.FactMat) || a.Hidden) {
			if !explain {
				return errNo
			}
			return fmt.Errorf("argument %d is a matrix or the hidden layer ranges", i)
		}
	}
	switch {
	case why == "":
		return nil
	case !explain:
		return errNo
	}
	return errors.New(why)
}

// Check returns why loop b cannot run fused after the loops of group (each
// Eligible, fused with the ones before it), or nil. b must be Eligible.
//
// b fuses when it runs over the same set and every Dat or Global that b and
// a loop of the group both pass is either only read by both, or a Dat
// that both reach directly, alike, and that one of them only reads (or
// views of different components): then element e of b depends on element
// e of the group only, which the fused loop runs before it. A Dat both
// modify is refused although the order would allow it: the second
// modification makes the first one's stores dead, so the compiler may
// contract a product the first kernel computed with a sum the second
// makes (GCC does, in GNU C, on CPUs with FMA), and the fused loop would
// round unlike the loops apart; whereas a value the first kernel stores
// and the second only reads stays a store, which the compiler cannot
// contract.
func Check(group []*core.Loop, b *core.Loop) error { return check(group, b, true) }

// Fusable reports whether Check returns nil, without saying why not; it
// allocates nothing.
func Fusable(group []*core.Loop, b *core.Loop) bool { return check(group, b, false) == nil }

func check(group []*core.Loop, b *core.Loop, explain bool) error {
	if len(group) == 0 {
		return errors.New("fuse: no loop to fuse with")
	}
	if b.Set != group[0].Set {
		if !explain {
			return errNo
		}
		return fmt.Errorf("it runs over set %q, not %q", b.Set.Name, group[0].Set.Name)
	}
	for _, g := range group {
		for i := range g.Args {
			x := &g.Args[i]
			for j := range b.Args {
				y := &b.Args[j]
				if x.Data != y.Data || (x.Access == core.Read && y.Access == core.Read) {
					continue
				}
				xDirect := x.Facts().Any(core.FactDirect)
				if xDirect && y.Facts().Any(core.FactDirect) && x.View && y.View && x.Comp != y.Comp {
					continue // different components
				}
				if xDirect && sameSlot(x, y) && !(x.Access.Modifies() && y.Access.Modifies()) {
					continue
				}
				if !explain {
					return errNo
				}
				if x.Access.Modifies() && y.Access.Modifies() && xDirect && sameSlot(x, y) {
					return fmt.Errorf("loops %q and %q both modify %s: in one function the compiler may contract a product the first stores with a sum the second makes into one fused multiply-add, rounding unlike the loops apart",
						g.Kernel.Name, b.Kernel.Name, x.Data.Describe())
				}
				return fmt.Errorf("loop %q passes %s (%s) and loop %q passes it (%s): an element depends on other elements",
					g.Kernel.Name, x.Data.Describe(), x.Access, b.Kernel.Name, y.Access)
			}
		}
	}
	return nil
}

// sameSlot reports whether arguments x and y (of two loops to fuse) can be
// one argument of the fused loop: the same data reached the same way, and
// either a Dat reached directly (which the fused kernel must see as one
// pointer, so that a later kernel reads what an earlier one wrote) or only
// read by both. Index arguments (ArgIdx) are never merged: each kernel
// call gets its own copy of the index, which it may write without
// changing what a later kernel sees.
func sameSlot(x, y *core.Arg) bool {
	if x.Data != y.Data || x.Map != y.Map || x.Idx != y.Idx || x.Facts().Role() != y.Facts().Role() || x.View != y.View || x.Comp != y.Comp ||
		x.Off || y.Off || x.Index || y.Index || x.Optional != y.Optional {
		return false
	}
	return x.Facts().Any(core.FactDirect) || (x.Access == core.Read && y.Access == core.Read)
}

// maxKernels bounds the fused kernels a Fuser keeps: a program that
// makes kernel after kernel (new sources) would otherwise keep every
// fused one it ever made.
const maxKernels = 1024

// Fuser makes fused loops (Fuse). It keeps the fused kernels it made, by
// the kernels and argument pattern they fuse, so that fusing the same
// loops again builds nothing and allocates nothing. A Fuser is not safe
// for concurrent use.
type Fuser struct {
	kernels map[string]*fused
	key     []byte
	// slot is, for each argument of each loop fused, in order, the
	// fused loop's argument that passes it.
	slot  []int
	first []int  // per fused argument: the first loop argument in it (index into slot)
	last  *fused // the last Fuse's kernel
}

// Failed records that the loop the last call of Fuse made cannot be used
// on the backend instance numbered backend (its program failed to build
// there, with that backend's compiler and settings): FailedOn then
// returns err for the same loops on it.
func (f *Fuser) Failed(backend uint64, err error) {
	if f.last != nil {
		if f.last.failed == nil {
			f.last.failed = map[uint64]error{}
		}
		f.last.failed[backend] = err
	}
}

// FailedOn returns the error Failed recorded for the loop the last call of
// Fuse made on the backend instance numbered backend, or nil.
func (f *Fuser) FailedOn(backend uint64) error {
	if f.last == nil {
		return nil
	}
	return f.last.failed[backend]
}

// fused is a fused kernel, or why the loops cannot be fused, and the
// backend instances on which its program failed to build (Failed).
type fused struct {
	k      *core.Kernel
	err    error
	failed map[uint64]error
}

// Fuse makes dst the loop that runs loops (at least two, each Eligible and
// accepted by Check after those before it) as one: their kernels fused
// into one (see the package comment), their arguments merged where they
// pass the same data alike (sameSlot), with the access that covers both
// (READ if both read, WRITE if the first writes, else RW), and their
// constants. dst's argument and constant lists are reused (they must not
// be another loop's). It returns an error when the
// kernels cannot be combined (a parameter the body redeclares, a return
// before the last kernel's end, a goto, a directive in a body...); the
// loops then run one by one. dst.Sig is left for the executor to set.
func (f *Fuser) Fuse(dst *core.Loop, loops []*core.Loop) error {
	if len(loops) < 2 {
		return errors.New("fuse: fewer than two loops")
	}
	args := dst.Args[:0]
	f.slot, f.first = f.slot[:0], f.first[:0]
	for _, l := range loops {
		for i := range l.Args {
			a := &l.Args[i]
			m := -1
			for k := range args {
				if sameSlot(&args[k], a) {
					m = k
					break
				}
			}
			if m < 0 {
				m = len(args)
				args = append(args, *a)
				f.first = append(f.first, len(f.slot))
			} else {
				args[m].Access = combine(args[m].Access, a.Access)
			}
			f.slot = append(f.slot, m)
		}
	}
	f.key = f.key[:0]
	for _, l := range loops {
		f.key = append(f.key, l.Kernel.Sum[:]...)
		f.key = binary.LittleEndian.AppendUint32(f.key, uint32(len(l.Args)))
		for i := range l.Args {
			f.key = append(f.key, byte(l.Args[i].Access))
		}
	}
	for _, m := range f.slot {
		f.key = binary.LittleEndian.AppendUint32(f.key, uint32(m))
	}
	for i := range args {
		f.key = append(f.key, byte(args[i].Access))
	}
	e, ok := f.kernels[string(f.key)]
	if !ok {
		k, err := f.kernel(loops, args)
		e = &fused{k: k, err: err}
		if f.kernels == nil || len(f.kernels) >= maxKernels {
			f.kernels = map[string]*fused{} // start afresh: bounded
		}
		f.kernels[string(f.key)] = e
	}
	dst.Args = args
	f.last = e
	if e.err != nil {
		return e.err
	}
	consts := dst.Consts[:0]
	for _, l := range loops {
		for _, c := range l.Consts {
			if !slices.Contains(consts, c) {
				consts = append(consts, c)
			}
		}
	}
	slices.SortFunc(consts, func(a, b *core.Const) int { return strings.Compare(a.Name, b.Name) })
	dst.Kernel, dst.Set, dst.Consts = e.k, loops[0].Set, consts
	dst.Check, dst.Extruded, dst.Sig = false, nil, nil
	return nil
}

// combine is the access of a fused argument that passes data with access
// a, and then again with access b: READ if both read; WRITE if a writes
// every value (whatever b does next, the old values are not needed); else
// RW.
func combine(a, b core.Access) core.Access {
	switch {
	case a == core.Read && b == core.Read:
		return core.Read
	case a == core.Write:
		return core.Write
	}
	return core.RW
}

// fusedName is the fused kernel's name for loops with kernels named names.
func fusedName(names ...string) string { return "fused_" + strings.Join(names, "_") }

// kernel writes and reads the fused kernel of loops, whose fused
// arguments are args (f.slot and f.first filled by Fuse).
func (f *Fuser) kernel(loops []*core.Loop, args []core.Arg) (*core.Kernel, error) {
	names := make([]string, len(loops))
	used := map[string]bool{}
	for i, l := range loops {
		names[i] = l.Kernel.Name
		for id := range l.Kernel.Info.Idents {
			used[id] = true
		}
	}
	name := fresh(fusedName(names...), used)
	used[name] = true
	// The fused parameters: each named after the first loop parameter
	// passed in it, declared as the first parameter that modifies it
	// declares it (a READ kernel may have declared it const).
	pnames := make([]string, len(args))
	decls := make([]string, len(args))
	for m := range args {
		pos := f.first[m]
		l, i := argAt(loops, pos)
		p := &l.Kernel.Info.Params[i]
		if p.Name == "" {
			return nil, fmt.Errorf("kernel %s's parameter %d has no name", l.Kernel.Name, i)
		}
		pnames[m] = fresh(p.Name, used)
		used[pnames[m]] = true
		decl := p
		for s, n := range f.slot {
			if n != m {
				continue
			}
			if ll, j := argAt(loops, s); ll.Args[j].Access.Modifies() {
				decl = &ll.Kernel.Info.Params[j]
				break
			}
		}
		text, err := rename(decl.Text, decl.Name, pnames[m])
		if err != nil {
			return nil, err
		}
		decls[m] = text
	}
	if err := separate(loops); err != nil {
		return nil, err
	}
	var src strings.Builder
	seen := map[string]bool{}
	for _, l := range loops {
		info := l.Kernel.Info
		if seen[info.Source] {
			continue
		}
		seen[info.Source] = true
		src.WriteString(withoutDefinition(info))
		src.WriteString("\n")
		for _, m := range info.Macros {
			src.WriteString("#undef " + m + "\n")
		}
	}
	fmt.Fprintf(&src, "void %s(%s)\n{\n", name, strings.Join(decls, ", "))
	pos := 0
	for li, l := range loops {
		body, err := f.body(l, li == len(loops)-1, pnames, pos)
		if err != nil {
			return nil, err
		}
		src.WriteString(body)
		src.WriteString("\n")
		pos += len(l.Args)
	}
	src.WriteString("}\n")
	info, err := cfront.ParseKernel(src.String(), name)
	if err != nil {
		return nil, fmt.Errorf("the fused kernel %s: %w", name, err)
	}
	if len(info.Params) != len(args) {
		return nil, fmt.Errorf("the fused kernel %s has %d parameters for %d arguments", name, len(info.Params), len(args))
	}
	return &core.Kernel{Name: name, Source: info.Source, ID: core.NewID(), Info: info, Sum: core.KernelSum(name, info.Source, false)}, nil
}

// separate returns why the sources of loops' kernels cannot share one
// file, or nil: a source sets compiler options (which the fused function
// would not have); of two sources, one sets something for the code after
// it (FileScope: a pragma, a header that turns calls into macros, a macro
// a header reads), which would reach the other, wherever it stands; or
// two declare a name at file scope alike (static double acc; in both is
// one variable in one file).
func separate(loops []*core.Loop) error {
	first := loops[0].Kernel
	for _, l := range loops {
		if opts := l.Kernel.Info.SetsOptions; opts != "" {
			return fmt.Errorf("kernel %s sets compiler options (%s), which the fused function would not have", l.Kernel.Name, opts)
		}
	}
	for _, l := range loops[1:] {
		k := l.Kernel
		if k.Info.Source == first.Info.Source {
			continue
		}
		for _, pair := range [][2]*core.Kernel{{first, k}, {k, first}} {
			if scope := pair[0].Info.FileScope; scope != "" {
				return fmt.Errorf("kernel %s's source sets what holds for the code after it (%s): in one file with kernel %s's, it would change it",
					pair[0].Name, strings.SplitN(scope, "\n", 2)[0], pair[1].Name)
			}
		}
	}
	declared := map[string]*core.Kernel{}
	for _, l := range loops {
		k := l.Kernel
		m, err := cfront.Model(k.Info)
		if err != nil {
			return fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		for _, id := range fileScopeNames(m) {
			if id == k.Name {
				continue
			}
			if o, ok := declared[id]; ok && o.Info.Source != k.Info.Source {
				return fmt.Errorf("kernels %s and %s both declare %s at file scope: in one file, their declarations would meet", o.Name, k.Name, id)
			}
			declared[id] = k
		}
	}
	return nil
}

// fileScopeNames returns the names a source (model m) declares at file
// scope that another source's declaration of the same name would meet
// in one file, silently: its functions (defined or only declared: a
// prototype takes a static definition's linkage) and its objects (a
// name before ;, =, [ or , outside braces: static double acc; twice is
// one variable). Type names, typedefs' included, and tags are left out
// (two declarations of one do not compile unless they are alike), and
// so are members.
func fileScopeNames(m *cfront.SourceModel) []string {
	var names []string
	for _, f := range m.Defs {
		names = append(names, f.Name)
	}
	for _, f := range m.Protos {
		names = append(names, f.Name)
	}
	toks := clex.Tokenize(m.Outside)
	depth := 0
	for i, t := range toks {
		switch t.Text {
		case "{", "(", "[":
			depth++
		case "}", ")", "]":
			depth--
		}
		if depth != 0 || !clex.IsIdentStart(t.Text[0]) || cfront.TypeWord(t.Text) || m.Typedefs[t.Text] || i+1 >= len(toks) {
			continue
		}
		switch toks[i+1].Text {
		case ";", "=", "[", ",":
			names = append(names, t.Text)
		}
	}
	return names
}

// argAt returns the loop and argument index of position pos in the loops'
// arguments taken in order.
func argAt(loops []*core.Loop, pos int) (*core.Loop, int) {
	for _, l := range loops {
		if pos < len(l.Args) {
			return l, pos
		}
		pos -= len(l.Args)
	}
	panic("fuse: argument position out of range")
}

// fresh returns name, or name with a number appended, that is not in used
// and is a name the kernel reader accepts.
func fresh(name string, used map[string]bool) string {
	if strings.HasPrefix(strings.ToLower(name), cfront.ReservedPrefix) {
		name = "k" + name
	}
	cand := name
	for n := 2; used[cand]; n++ {
		cand = fmt.Sprintf("%s_%d", name, n)
	}
	return cand
}

// rename returns declaration text with its parameter name (the last
// identifier spelled name) changed to to.
func rename(text, name, to string) (string, error) {
	toks := clex.Tokenize(clex.Blank(text, true, nil))
	for i := len(toks) - 1; i >= 0; i-- {
		if toks[i].Text == name {
			return text[:toks[i].Start] + to + text[toks[i].End:], nil
		}
	}
	return "", fmt.Errorf("no name %s in parameter %q", name, text)
}

// withoutDefinition returns the kernel's source without the kernel's
// definition (from the first word of its head to its closing brace), so
// that only the fused kernel uses its body. Prototypes stay.
func withoutDefinition(info *core.KernelInfo) string {
	src, code := info.Source, info.Blanked
	start := info.NameStart
	for start > 0 {
		c := code[start-1]
		if c == ';' || c == '}' || c == '{' || (c == '\n' && lineIsDirective(code, start)) {
			break
		}
		start--
	}
	return src[:start] + strings.Repeat("\n", strings.Count(src[start:info.BodyClose+1], "\n")) + src[info.BodyClose+1:]
}

// lineIsDirective reports whether the line that ends just before offset
// i (a '\n' at i-1) is a preprocessor directive.
func lineIsDirective(code string, i int) bool {
	end := i - 1
	start := strings.LastIndexByte(code[:end], '\n') + 1
	return strings.HasPrefix(strings.TrimSpace(code[start:end]), "#")
}

// body returns loop l's kernel body, macros expanded, with its parameters
// renamed to the fused kernel's (pnames[pos+i] for parameter i, via
// f.slot). last says it is the last kernel fused, the only one whose body
// may return.
func (f *Fuser) body(l *core.Loop, last bool, pnames []string, pos int) (string, error) {
	info := l.Kernel.Info
	name := l.Kernel.Name
	kb, err := cfront.Body(info)
	if kb.Directive {
		return "", fmt.Errorf("kernel %s has a preprocessor directive in its body", name)
	}
	if err != nil {
		return "", fmt.Errorf("kernel %s: %w", name, err)
	}
	body := kb.Text
	to := map[string]string{}
	for i := range info.Params {
		if p := info.Params[i].Name; p != "" {
			to[p] = pnames[f.slot[pos+i]]
		}
	}
	toks := kb.Tokens
	var b strings.Builder
	at := 0
	for i, t := range toks {
		switch t.Text {
		case "goto":
			return "", fmt.Errorf("kernel %s uses goto", name)
		case "return":
			if !last {
				return "", fmt.Errorf("kernel %s returns before the end of its body", name)
			}
		}
		n, ok := to[t.Text]
		switch t.Text {
		case "__func__", "__FUNCTION__", "__PRETTY_FUNCTION__":
			n, ok = "((const char[]){"+strconv.Quote(name)+"})", true // the kernel's name, of __func__'s type
		}
		if !ok {
			continue
		}
		prev := ""
		if i > 0 {
			prev = toks[i-1].Text
		}
		if prev == "." || prev == "->" {
			continue // a member of the same name
		}
		// A parameter is a pointer: name * p, not subscripted, declares
		// p (multiplying by a pointer is no C; name * p[i] multiplies).
		next := ""
		if i+1 < len(toks) {
			next = toks[i+1].Text
		}
		if clex.Declares(prev) || (prev == "*" && i > 1 && clex.Declares(toks[i-2].Text) && next != "[") {
			return "", fmt.Errorf("kernel %s declares %s in its body", name, t.Text)
		}
		b.WriteString(body[at:t.Start])
		b.WriteString(n)
		at = t.End
	}
	b.WriteString(body[at:])
	return b.String(), nil
}
