package lab

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// NodeType is a topology node's type.
type NodeType string

// Node types in ibsim topology files.
const (
	Switch NodeType = "Switch"
	CA     NodeType = "Hca"
	Router NodeType = "Rt"
)

// Link is one cable end: the peer node and its port.
type Link struct {
	Peer     string
	PeerPort int
}

// Node is one node of a topology file.
type Node struct {
	Type     NodeType
	Name     string
	NumPorts int
	// Links maps a local port number to its peer.
	Links map[int]Link
}

// Topology is an ibsim topology file (ibnetdiscover-like text), in file order.
type Topology struct {
	Nodes  []*Node
	byName map[string]*Node
}

var (
	headerRE = regexp.MustCompile(`^(Switch|Hca|Ca|Rt)\s+(\d+)\s+"([^"]+)"`)
	linkRE   = regexp.MustCompile(`^\[(\d+)\]\s+"([^"]+)"\s*\[(\d+)\]`)
)

// ParseTopology reads the subset of ibsim's topology format the lab uses:
// `Switch N "name"` / `Hca N "name"` headers followed by `[port] "peer"[port]`
// lines. Comments and ibsim extensions (include, do, guid lines) are skipped.
func ParseTopology(text string) (*Topology, error) {
	t := &Topology{byName: map[string]*Node{}}
	var cur *Node
	sc := bufio.NewScanner(strings.NewReader(text))
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case headerRE.MatchString(line):
			m := headerRE.FindStringSubmatch(line)
			n, _ := strconv.Atoi(m[2])
			typ := Switch
			switch m[1] {
			case "Hca", "Ca":
				typ = CA
			case "Rt":
				typ = Router
			}
			if t.byName[m[3]] != nil {
				return nil, fmt.Errorf("line %d: node %q defined twice", ln, m[3])
			}
			cur = &Node{Type: typ, Name: m[3], NumPorts: n, Links: map[int]Link{}}
			t.Nodes = append(t.Nodes, cur)
			t.byName[cur.Name] = cur
		case linkRE.MatchString(line):
			if cur == nil {
				return nil, fmt.Errorf("line %d: link before any node header", ln)
			}
			m := linkRE.FindStringSubmatch(line)
			p, _ := strconv.Atoi(m[1])
			pp, _ := strconv.Atoi(m[3])
			if p < 1 || p > cur.NumPorts {
				return nil, fmt.Errorf("line %d: port %d of %q out of range 1-%d", ln, p, cur.Name, cur.NumPorts)
			}
			cur.Links[p] = Link{Peer: m[2], PeerPort: pp}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, n := range t.Nodes {
		for p, l := range n.Links {
			peer := t.byName[l.Peer]
			if peer == nil {
				return nil, fmt.Errorf("%q port %d: unknown peer %q", n.Name, p, l.Peer)
			}
			if back, ok := peer.Links[l.PeerPort]; !ok || back.Peer != n.Name || back.PeerPort != p {
				return nil, fmt.Errorf("%q port %d -> %q port %d is not linked back", n.Name, p, l.Peer, l.PeerPort)
			}
		}
	}
	return t, nil
}

// CAs returns the channel adapters in file order.
func (t *Topology) CAs() []*Node { return t.ofType(CA) }

// Switches returns the switches in file order.
func (t *Topology) Switches() []*Node { return t.ofType(Switch) }

func (t *Topology) ofType(typ NodeType) []*Node {
	var out []*Node
	for _, n := range t.Nodes {
		if n.Type == typ {
			out = append(out, n)
		}
	}
	return out
}

// DRPath returns the directed route (egress ports, infiniband-diags' "0,..."
// without the leading 0) from node from to node to, arriving at to through
// its port arrive (0: any port). Only switches forward directed-route SMPs,
// so the route crosses no other CA. It is a shortest such route.
func (t *Topology) DRPath(from, to string, arrive int) ([]uint8, error) {
	src, dst := t.byName[from], t.byName[to]
	if src == nil || dst == nil {
		return nil, fmt.Errorf("topology: unknown node %q or %q", from, to)
	}
	if from == to && (arrive == 0 || dst.Type == Switch) {
		return []uint8{}, nil
	}
	type hop struct {
		prev string
		port int
	}
	seen := map[string]hop{from: {}}
	queue := []string{from}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		n := t.byName[name]
		if n.Type != Switch && name != from {
			continue // CAs do not forward
		}
		for p := 1; p <= n.NumPorts; p++ {
			l, ok := n.Links[p]
			if !ok {
				continue
			}
			if l.Peer == to && (arrive == 0 || l.PeerPort == arrive) {
				path := []uint8{uint8(p)}
				for cur := name; cur != from; cur = seen[cur].prev {
					path = append([]uint8{uint8(seen[cur].port)}, path...)
				}
				return path, nil
			}
			if _, ok := seen[l.Peer]; !ok {
				seen[l.Peer] = hop{prev: name, port: p}
				queue = append(queue, l.Peer)
			}
		}
	}
	return nil, fmt.Errorf("topology: no directed route from %q to %q port %d", from, to, arrive)
}

// FatTree returns a two-level fat tree topology: leaves leaf switches, each
// with hcasPerLeaf single-port CAs and one link to every one of spines spine
// switches. CAs come first, so ibsim's default node (and OpenSM's) is "Hca1".
// Names: Hca1..HcaN (numbered across leaves), Leaf1.., Spine1...
func FatTree(leaves, spines, hcasPerLeaf int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Two-level fat tree: %d leaves x %d CAs, %d spines.\n", leaves, hcasPerLeaf, spines)
	fmt.Fprintf(&b, "# Generated by lab.FatTree(%d, %d, %d).\n\n", leaves, spines, hcasPerLeaf)
	for l := 1; l <= leaves; l++ {
		for h := 1; h <= hcasPerLeaf; h++ {
			fmt.Fprintf(&b, "Hca 1 \"Hca%d\"\n[1] \"Leaf%d\"[%d]\n\n", (l-1)*hcasPerLeaf+h, l, h)
		}
	}
	for l := 1; l <= leaves; l++ {
		fmt.Fprintf(&b, "Switch %d \"Leaf%d\"\n", hcasPerLeaf+spines, l)
		for h := 1; h <= hcasPerLeaf; h++ {
			fmt.Fprintf(&b, "[%d] \"Hca%d\"[1]\n", h, (l-1)*hcasPerLeaf+h)
		}
		for s := 1; s <= spines; s++ {
			fmt.Fprintf(&b, "[%d] \"Spine%d\"[%d]\n", hcasPerLeaf+s, s, l)
		}
		b.WriteString("\n")
	}
	for s := 1; s <= spines; s++ {
		fmt.Fprintf(&b, "Switch %d \"Spine%d\"\n", leaves, s)
		for l := 1; l <= leaves; l++ {
			fmt.Fprintf(&b, "[%d] \"Leaf%d\"[%d]\n", l, l, hcasPerLeaf+s)
		}
		b.WriteString("\n")
	}
	return b.String()
}
