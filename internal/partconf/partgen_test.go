package partconf

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// The tests' generator: random partitions.conf files that OpenSM 3.3.23 accepts, for
// generated-case tests of the partconf model against OpenSM in the lab: every
// construct of the grammar (ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF, =full,
// =limited, =both and their prefixes, defmember, indx0, ipoib, mgid groups with
// flags, names of every length, key-less definitions, one partition split over
// definitions of the same name and key, duplicate keys and GUIDs, keys with the top
// bit, octal and decimal GUIDs, GUIDs not in the fabric, router ports and node GUIDs
// as members, member lists over several lines, comments, comments after mgid values),
// the default partition limited or left out, indx0 on a limited default partition, and
// tables that overflow (with both, for -W). MutateGenFile derives the next file of a
// sequence from one: a definition removed, added or moved (the Default line too),
// indx0 moved, memberships and keys changed. (cmd/ibkey/internal/partitions keeps 120
// files it drew in testdata/partgen.txtar.)

// GenOptions shape a file.
type GenOptions struct {
	// Ports are the fabric's port GUIDs (CA, router and switch ports).
	Ports []uint64
	// Others are GUIDs the file may name that are not port GUIDs (a router's or a
	// CA's node GUID): OpenSM finds no port by them.
	Others []uint64
}

// maxPartitions bounds the number of definitions a file draws; overflow adds up to 80
// partitions for one port.
const maxPartitions = 12

// GenFile is a drawn file: its definitions in order.
type GenFile struct {
	Defs []*GenDef
	keys []uint16 // keys drawn so far: duplicates come from here
}

// GenDef is one definition and how it is written.
type GenDef struct {
	Name, Key string   // Key "" for none, else "=0x..." or "=N"
	Flags     []string // ipoib, indx0, defmember=..., mtu=..., ...
	Items     []string // member items
	MGIDs     []string // mgid lines, each ends its line
	Default   bool     // the file's Default line
	Overflow  bool     // one of the definitions that overflow a port's table
	layout    uint64   // seed of how the items are laid out over lines
}

// NewGenFile draws one file.
func NewGenFile(rng *rand.Rand, o GenOptions) *GenFile {
	g := &generator{rng: rng, o: o, f: &GenFile{}}
	if !g.chance(10) {
		g.f.Defs = append(g.f.Defs, g.defaultDef())
	}
	n := 1 + rng.IntN(maxPartitions)
	for range n {
		g.f.Defs = append(g.f.Defs, g.definition())
	}
	if g.chance(15) && len(o.Ports) > 0 {
		g.overflow()
	}
	return g.f
}

// MutateGenFile returns a copy of f with one to three changes, as an administrator makes
// between two reloads: a definition removed, added or moved (the Default line too),
// indx0 added, removed or moved, an item's membership changed, an item added or
// removed, defmember changed, a key changed, the Default line's members changed, the
// overflowing definitions added or removed, or (rarely) a new file.
func MutateGenFile(rng *rand.Rand, f *GenFile, o GenOptions) *GenFile {
	g := &generator{rng: rng, o: o, f: f.clone()}
	if g.chance(5) {
		return NewGenFile(rng, o)
	}
	for range 1 + rng.IntN(3) {
		g.mutate()
	}
	return g.f
}

func (f *GenFile) clone() *GenFile {
	c := &GenFile{keys: slices.Clone(f.keys)}
	for _, d := range f.Defs {
		cd := *d
		cd.Flags, cd.Items, cd.MGIDs = slices.Clone(d.Flags), slices.Clone(d.Items), slices.Clone(d.MGIDs)
		c.Defs = append(c.Defs, &cd)
	}
	return c
}

type generator struct {
	rng *rand.Rand
	o   GenOptions
	f   *GenFile
}

func (g *generator) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }

func (g *generator) chance(n int) bool { return g.rng.IntN(100) < n }

// guid writes a port GUID in one of the ways OpenSM's strtoull reads it.
func (g *generator) guid() string {
	var v uint64
	switch {
	case len(g.o.Ports) == 0 || g.chance(6):
		v = 0x0002c903000f0000 + uint64(g.rng.IntN(4096)) // not in the fabric
	case len(g.o.Others) > 0 && g.chance(5):
		v = g.o.Others[g.rng.IntN(len(g.o.Others))] // a node GUID: no port has it
	default:
		v = g.o.Ports[g.rng.IntN(len(g.o.Ports))]
	}
	switch g.rng.IntN(10) {
	case 0:
		return fmt.Sprintf("0%o", v) // octal: leading 0, no 0x
	case 1:
		return fmt.Sprintf("%d", v) // decimal
	case 2:
		return fmt.Sprintf("0X%X", v)
	}
	return fmt.Sprintf("0x%016x", v)
}

func (g *generator) membership() string {
	if g.chance(40) {
		return ""
	}
	return "=" + g.pick("full", "limited", "both", "f", "limi", "b", "", "FULL", "l", "fu")
}

func (g *generator) member() string {
	if g.chance(25) {
		return g.pick("ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF", "A", "ALL_C", "ALL_S", "ALL_R", "S") + g.membership()
	}
	return g.guid() + g.membership()
}

func (g *generator) name() string {
	switch g.rng.IntN(8) {
	case 0:
		return strings.Repeat("long", 8) + fmt.Sprint(g.rng.IntN(3)) // 32+ bytes
	case 1:
		return strings.Repeat("n", 31) // exactly 31: found again by name
	case 2:
		return ""
	}
	return g.pick("storage", "compute", "mgmt", "ipoib_net", "gpu", "x", "Default") + fmt.Sprint(g.rng.IntN(4))
}

func (g *generator) key() string {
	switch g.rng.IntN(10) {
	case 0, 1:
		return "" // key-less: by name, else generated
	case 2:
		if len(g.f.keys) > 0 { // a duplicate key, maybe with the top bit
			k := g.f.keys[g.rng.IntN(len(g.f.keys))]
			if g.chance(50) {
				k |= 0x8000
			}
			return fmt.Sprintf("=0x%04x", k)
		}
	case 3:
		return fmt.Sprintf("=%d", 1+g.rng.IntN(200)) // decimal key
	}
	k := uint16(1 + g.rng.IntN(0x300))
	if g.chance(5) {
		k = 0x7fff
	}
	g.f.keys = append(g.f.keys, k)
	return fmt.Sprintf("=0x%04x", k)
}

func (g *generator) flags() []string {
	var fs []string
	if g.chance(30) {
		fs = append(fs, g.pick("ipoib", "i", "ipo"))
	}
	if g.chance(15) {
		fs = append(fs, "indx0")
	}
	if g.chance(35) {
		fs = append(fs, "defmember="+g.pick("full", "limited", "both", "f", "l", "b"))
	}
	if g.chance(15) {
		fs = append(fs, fmt.Sprintf("mtu=%d", 1+g.rng.IntN(5)), fmt.Sprintf("rate=%d", 2+g.rng.IntN(9)))
	}
	if g.chance(10) {
		fs = append(fs, fmt.Sprintf("sl=%d", g.rng.IntN(16)), fmt.Sprintf("scope=%d", 1+g.rng.IntN(14)))
	}
	if g.chance(5) {
		fs = append(fs, "Q_Key=0x1234", "TClass=3", "FlowLabel=0x12")
	}
	return fs
}

// mgidLine is a group line. It always ends its line and carries a flag or a comment
// after its value: `mgid=GID;` and an mgid ending a line with nothing after it make
// OpenSM read bytes past the line, which the model reports as uncertain; a comment
// after the value is parsed as group flags.
func (g *generator) mgidLine() string {
	gid := g.pick("ff12:401b::1", "ff12:401b::ffff:ffff", "ff15::5", "ff12:601b::1", "ff12::abcd", "ff12:401b:8001::2", "fe80::1")
	if g.chance(25) {
		return fmt.Sprintf("mgid=%s %s", gid, g.pick("# IGMP", "# all routers, v2", "# mtu=2", "# sl=1", "#"))
	}
	fl := g.pick("sl=0", "Q_Key=0x10", "mtu=4", "rate=3", "scope=5", "TClass=0")
	if g.chance(20) {
		fl += " # a comment"
	}
	return fmt.Sprintf("mgid=%s,%s", gid, fl)
}

func (g *generator) definition() *GenDef {
	d := &GenDef{Name: g.name(), Key: g.key(), Flags: g.flags(), layout: g.rng.Uint64()}
	if d.Name == "" && d.Key == "" {
		d.Name = "anon"
	}
	if d.Name != "" && d.Name[0] >= '0' && d.Name[0] <= '9' {
		d.Name = "p" + d.Name
	}
	for range 1 + g.rng.IntN(5) {
		d.Items = append(d.Items, g.member())
	}
	if g.chance(15) { // a port listed twice
		d.Items = append(d.Items, d.Items[0])
	}
	if g.chance(15) {
		d.MGIDs = append(d.MGIDs, g.mgidLine())
	}
	if g.chance(8) && len(g.f.Defs) > 0 { // the same partition again: a split
		prev := g.f.Defs[g.rng.IntN(len(g.f.Defs))]
		if prev.Key != "" && !prev.Default && !prev.Overflow {
			d.Name, d.Key, d.Flags = prev.Name, prev.Key, nil
		}
	}
	return d
}

// defaultDef is a Default line: full, limited (with SELF full), by node type (maybe
// leaving routers out), maybe with indx0 on a limited default partition.
func (g *generator) defaultDef() *GenDef {
	d := &GenDef{Name: "Default", Key: "=0x7fff", Default: true, layout: g.rng.Uint64()}
	d.Flags = strings.Fields(strings.ReplaceAll(g.pick("", ", ipoib", ", ipoib, mtu=4"), ",", ""))
	items := g.pick("ALL=full", "ALL=full, SELF=full", "ALL=limited, SELF=full", "ALL_CAS=full, ALL_SWITCHES=full, ALL_ROUTERS=full",
		"ALL_CAS=full, ALL_SWITCHES=full", "ALL, SELF=full", "ALL=limited", "ALL_CAS=full, ALL_ROUTERS=limited, SELF=full")
	d.Items = strings.Split(items, ", ")
	if g.chance(15) {
		d.Flags = append(d.Flags, "indx0")
	}
	return d
}

// overflow adds definitions that overflow one port's 64-entry table: 60 to 80 keys
// for it, some of them both (two entries each with -W).
func (g *generator) overflow() {
	v := g.o.Ports[g.rng.IntN(len(g.o.Ports))]
	both := g.chance(40)
	for i := range 60 + g.rng.IntN(20) {
		m := "full"
		if both && i%3 == 0 {
			m = "both"
		}
		g.f.Defs = append(g.f.Defs, &GenDef{Name: fmt.Sprintf("of%d", i), Key: fmt.Sprintf("=0x%04x", 0x1000+i),
			Items: []string{fmt.Sprintf("0x%016x=%s", v, m)}, Overflow: true})
	}
}

func (g *generator) mutate() {
	f := g.f
	pickDef := func(ok func(*GenDef) bool) (int, *GenDef) {
		var idx []int
		for i, d := range f.Defs {
			if ok(d) {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			return -1, nil
		}
		i := idx[g.rng.IntN(len(idx))]
		return i, f.Defs[i]
	}
	plain := func(d *GenDef) bool { return !d.Overflow }
	switch g.rng.IntN(11) {
	case 0: // remove a definition
		if i, _ := pickDef(plain); i >= 0 {
			f.Defs = slices.Delete(f.Defs, i, i+1)
		}
	case 1: // add one
		f.Defs = slices.Insert(f.Defs, g.rng.IntN(len(f.Defs)+1), g.definition())
	case 2: // move one (the Default line when there is one)
		i, _ := pickDef(func(d *GenDef) bool { return d.Default })
		if i < 0 || g.chance(40) {
			i, _ = pickDef(plain)
		}
		if i >= 0 {
			d := f.Defs[i]
			f.Defs = slices.Delete(f.Defs, i, i+1)
			f.Defs = slices.Insert(f.Defs, g.rng.IntN(len(f.Defs)+1), d)
		}
	case 3: // indx0 added, removed or moved
		var had *GenDef
		for _, d := range f.Defs {
			if j := slices.Index(d.Flags, "indx0"); j >= 0 {
				d.Flags = slices.Delete(d.Flags, j, j+1)
				had = d
				break
			}
		}
		if _, d := pickDef(plain); d != nil && (had == nil || d != had || g.chance(30)) {
			d.Flags = append(d.Flags, "indx0")
		}
	case 4: // an item's membership
		if _, d := pickDef(func(d *GenDef) bool { return len(d.Items) > 0 }); d != nil {
			j := g.rng.IntN(len(d.Items))
			base, _, _ := strings.Cut(d.Items[j], "=")
			d.Items[j] = base + "=" + g.pick("full", "limited", "both")
		}
	case 5: // an item added or removed
		if _, d := pickDef(plain); d != nil {
			if len(d.Items) > 1 && g.chance(50) {
				j := g.rng.IntN(len(d.Items))
				d.Items = slices.Delete(d.Items, j, j+1)
			} else {
				d.Items = append(d.Items, g.member())
			}
		}
	case 6: // defmember
		if _, d := pickDef(plain); d != nil {
			d.Flags = slices.DeleteFunc(d.Flags, func(s string) bool { return strings.HasPrefix(s, "defmember=") })
			if g.chance(70) {
				d.Flags = append(d.Flags, "defmember="+g.pick("full", "limited", "both"))
			}
		}
	case 7: // a key
		if _, d := pickDef(func(d *GenDef) bool { return !d.Overflow && !d.Default }); d != nil {
			d.Key = g.key()
			if d.Key == "" && d.Name == "" {
				d.Name = "anon"
			}
		}
	case 8: // the Default line's members, or the line itself
		i, d := pickDef(func(d *GenDef) bool { return d.Default })
		switch {
		case d == nil:
			f.Defs = slices.Insert(f.Defs, g.rng.IntN(len(f.Defs)+1), g.defaultDef())
		case g.chance(25):
			f.Defs = slices.Delete(f.Defs, i, i+1)
		default:
			nd := g.defaultDef()
			d.Items = nd.Items
		}
	case 9: // the overflowing definitions
		if slices.ContainsFunc(f.Defs, func(d *GenDef) bool { return d.Overflow }) {
			f.Defs = slices.DeleteFunc(f.Defs, func(d *GenDef) bool { return d.Overflow })
		} else if len(g.o.Ports) > 0 {
			g.overflow()
		}
	case 10: // an mgid line
		if _, d := pickDef(plain); d != nil {
			if len(d.MGIDs) > 0 && g.chance(50) {
				d.MGIDs = nil
			} else {
				d.MGIDs = append(d.MGIDs, g.mgidLine())
			}
		}
	}
	if len(f.Defs) == 0 {
		f.Defs = append(f.Defs, g.definition())
	}
}

// String writes the file.
func (f *GenFile) String() string {
	var b strings.Builder
	b.WriteString("# generated by partgen\n")
	for _, d := range f.Defs {
		d.write(&b)
	}
	return b.String()
}

func (d *GenDef) write(b *strings.Builder) {
	rng := rand.New(rand.NewPCG(d.layout, 0x9a7))
	chance := func(n int) bool { return rng.IntN(100) < n }
	head := d.Name + d.Key
	if len(d.Flags) > 0 {
		head += ", " + strings.Join(d.Flags, ", ")
	}
	if d.Overflow {
		fmt.Fprintf(b, "%s : %s ;\n", head, strings.Join(d.Items, ", "))
		return
	}
	fmt.Fprintf(b, "%s :", head)
	items := d.Items
	if len(d.MGIDs) > 0 {
		// Each mgid line ends its line; members follow on the next line.
		for _, m := range d.MGIDs {
			b.WriteString("\n " + m + "\n")
		}
		if len(items) > 0 {
			b.WriteString(" " + items[0])
			items = items[1:]
			if len(items) > 0 {
				b.WriteString(",")
			}
		}
	}
	for i, it := range items {
		sep := " "
		if chance(20) {
			sep = "\n  "
		}
		b.WriteString(sep + it)
		if i < len(items)-1 {
			b.WriteString(",")
		}
	}
	switch {
	case chance(1):
		// ';' alone on the next line: OpenSM rejects it after a long line (lab).
		b.WriteString(" # trailing comment\n;\n")
	case chance(8):
		b.WriteString(" ; # trailing comment\n")
	default:
		b.WriteString(" ;\n")
	}
}
