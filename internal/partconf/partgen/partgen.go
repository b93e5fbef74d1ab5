// Package partgen draws random partitions.conf files that OpenSM 3.3.23 accepts, for
// generated-case tests of the partconf model against OpenSM in the lab: every
// construct of the grammar (ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF, =full,
// =limited, =both and their prefixes, defmember, indx0, ipoib, mgid groups with
// flags, names of every length, key-less definitions, duplicate keys and GUIDs, keys
// with the top bit, octal and decimal GUIDs, GUIDs not in the fabric, member lists
// over several lines, comments) and tables that overflow.
package partgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Port is a port GUID the file may name.
type Port struct {
	GUID uint64
}

// Options shape a file.
type Options struct {
	// Ports are the fabric's port GUIDs (CA, router and switch ports).
	Ports []uint64
	// MaxPartitions bounds the number of definitions (default 12). Overflow draws
	// up to 80 partitions for one port.
	MaxPartitions int
}

// Config draws one file.
func Config(rng *rand.Rand, o Options) string {
	if o.MaxPartitions <= 0 {
		o.MaxPartitions = 12
	}
	g := &gen{rng: rng, o: o}
	return g.file()
}

type gen struct {
	rng  *rand.Rand
	o    Options
	b    strings.Builder
	keys []uint16
}

func (g *gen) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }

func (g *gen) chance(n int) bool { return g.rng.IntN(100) < n }

// guid writes a port GUID in one of the ways OpenSM's strtoull reads it.
func (g *gen) guid() string {
	var v uint64
	if len(g.o.Ports) == 0 || g.chance(8) {
		v = 0x0002c903000f0000 + uint64(g.rng.IntN(4096)) // not in the fabric
	} else {
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

func (g *gen) membership() string {
	if g.chance(40) {
		return ""
	}
	return "=" + g.pick("full", "limited", "both", "f", "limi", "b", "", "FULL", "l", "fu")
}

func (g *gen) member() string {
	if g.chance(25) {
		return g.pick("ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF", "A", "ALL_C", "ALL_S", "ALL_R", "S") + g.membership()
	}
	return g.guid() + g.membership()
}

func (g *gen) name() string {
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

func (g *gen) key() string {
	switch g.rng.IntN(10) {
	case 0, 1:
		return "" // key-less: by name, else generated
	case 2:
		if len(g.keys) > 0 { // a duplicate key, maybe with the top bit
			k := g.keys[g.rng.IntN(len(g.keys))]
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
	g.keys = append(g.keys, k)
	return fmt.Sprintf("=0x%04x", k)
}

func (g *gen) flags() string {
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
	if len(fs) == 0 {
		return ""
	}
	return ", " + strings.Join(fs, ", ")
}

// mgidLine is a group line. It always carries a flag and ends its line: `mgid=GID;`
// and an mgid as the last item of a line make OpenSM read bytes past the line, which
// the model reports as uncertain.
func (g *gen) mgidLine() string {
	gid := g.pick("ff12:401b::1", "ff12:401b::ffff:ffff", "ff15::5", "ff12:601b::1", "ff12::abcd", "ff12:401b:8001::2", "fe80::1")
	fl := g.pick("sl=0", "Q_Key=0x10", "mtu=4", "rate=3", "scope=5", "TClass=0")
	return fmt.Sprintf(" mgid=%s,%s\n", gid, fl)
}

func (g *gen) definition() {
	hasDefault := false
	_ = hasDefault
	n := g.name()
	k := g.key()
	if n == "" && k == "" {
		n = "anon"
	}
	if n != "" && n[0] >= '0' && n[0] <= '9' {
		n = "p" + n
	}
	fmt.Fprintf(&g.b, "%s%s%s :", n, k, g.flags())
	nm := 1 + g.rng.IntN(5)
	var items []string
	for i := 0; i < nm; i++ {
		items = append(items, g.member())
	}
	if g.chance(15) && len(items) > 0 { // a port listed twice
		items = append(items, items[0])
	}
	if g.chance(15) {
		g.b.WriteString("\n" + g.mgidLine())
		g.b.WriteString(" " + items[0])
		items = items[1:]
		if len(items) > 0 {
			g.b.WriteString(",")
		}
	}
	for i, it := range items {
		sep := " "
		if g.chance(20) {
			sep = "\n  "
		}
		g.b.WriteString(sep + it)
		if i < len(items)-1 {
			g.b.WriteString(",")
		}
	}
	if g.chance(10) {
		g.b.WriteString(" # trailing comment")
		g.b.WriteString("\n;\n")
		return
	}
	g.b.WriteString(" ;\n")
}

func (g *gen) file() string {
	g.b.WriteString("# generated by partgen\n")
	if !g.chance(10) {
		fmt.Fprintf(&g.b, "Default=0x7fff%s : %s ;\n", g.pick("", ", ipoib", ", ipoib, mtu=4"), g.pick("ALL=full", "ALL=full, SELF=full", "ALL=limited, SELF=full", "ALL_CAS=full, ALL_SWITCHES=full, ALL_ROUTERS=full"))
	}
	n := 1 + g.rng.IntN(g.o.MaxPartitions)
	for i := 0; i < n; i++ {
		g.definition()
	}
	if g.chance(15) && len(g.o.Ports) > 0 { // overflow one port's table
		v := g.o.Ports[g.rng.IntN(len(g.o.Ports))]
		for i := 0; i < 60+g.rng.IntN(20); i++ {
			fmt.Fprintf(&g.b, "of%d=0x%04x : 0x%016x=full ;\n", i, 0x1000+i, v)
		}
	}
	return g.b.String()
}
