package job

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// Kind says how a library is told its partition.
type Kind uint8

const (
	// ByIndex: the setting is a P_Key table index, used as given on every port: the
	// same index can hold different partitions on different hosts.
	ByIndex Kind = iota
	// ByValue: the setting is a P_Key value; the library looks its index up in each
	// port's table.
	ByValue
)

func (k Kind) String() string { return [...]string{"index", "value"}[k] }

// Library is one communication library's P_Key behaviour.
type Library struct {
	ID   string // nccl, ucx, nvshmem, gasnet, mvapich2, openmpi, perftest
	Name string
	Kind Kind
	// Vars are the settings it reads (environment variables; perftest: its options).
	Vars []string
	// Modifiers are settings read only to interpret Vars (GASNet's
	// GASNET_DISABLE_ENVDECODE): read and known like Vars, but one set alone does not
	// make the library one the job uses (Mentioned).
	Modifiers []string
	// Source cites where the rules below come from.
	Source string

	// configure reads the job's settings into the library's one description (setup).
	configure func(in Inputs, s *setup)
	// lookup is the library's own P_Key lookup on p with setting v: the index
	// (ByIndex) or the 15-bit key (ByValue) its QPs are given. Resolve runs it with
	// the job's setting, WantPartition with the one it proposes.
	lookup func(v int, p *Port) Pick
	// wantMin is the lowest partition the setting accepts (GASNet: 2); wantNote is
	// said with every index setting but 0 (NVSHMEM: its version).
	wantMin  check.PartitionKey
	wantNote string
	// releases are the releases ibkey models (--lib-version): a version given
	// outside them leaves every answer of the library not checked.
	releases releases
}

// Inputs are a job's settings: its environment and, for perftest, its command line.
type Inputs struct {
	Env      Env
	Perftest *PerftestArgs // nil: no perftest command line given
	// Unread are the devices and ports of the job's hosts that could not be read: a
	// library that would abort on a host is not judged to when what it asks for may
	// be among them (unsure).
	Unread []Unread
	// MCA are Open MPI's MCA parameter files as read on this host (nil: not read,
	// the settings not coming from the environment).
	MCA *MCAFiles
	// NCCL and MV2 are NCCL's and MVAPICH2's configuration files as read on this
	// host (nil: not read).
	NCCL, MV2 *ConfFiles
	// UCX are UCX's configuration files (ucx.conf) as read on this host (nil: not
	// read, the settings not coming from the environment).
	UCX *UCXFiles
	// NVSHMEM are NVSHMEM's configuration files (nvshmem.conf) as read on this host
	// (nil: not read).
	NVSHMEM *ConfFiles
	// Versions are the job's library versions (--lib-version): where a library's
	// behaviour changes with its version, the version given decides (libVersion).
	Versions Versions
	// exported is the variable a gate exports (WantPartition: the library's
	// partition variable), which beats what settings files give it.
	exported string
	// ports are the job's ports (Resolve, WantPartition): whether the library runs
	// at all may depend on their link layers (Open MPI's openib without allow_ib
	// runs on RoCE ports only).
	ports []*Port
}

// setup is a library configured by one job environment.
type setup struct {
	// Result starts with what the settings say before any port is read: Setting, how
	// the partition is chosen ("NCCL_IB_PKEY=1 (index 1)"); Unchecked, settings that
	// may change the answer but that ibkey does not interpret (the answer is then
	// incomplete); Assumptions and Notes; Inactive, set when the settings route the
	// library away from its own InfiniBand code (Open MPI over UCX, NVSHMEM over
	// UCX): the library is not resolved and Inactive says which applies instead.
	Result
	// Reject is non-empty when the library refuses the settings at start-up on every
	// port (a value it cannot parse or that is out of range).
	Reject string

	// The library's one description of which devices and ports it would select and
	// what stops it, read by selectPorts (Resolve, WantPartition), by chooses
	// (onHost: the results' chosen, read by Choosers, UnreadPending and the host
	// states) and by usesOnceUp (a gate's idle ports).

	// allows says whether the device and port settings let the library use port num
	// of device dev on a host with ports host, and why (not).
	allows func(host []*Port, dev string, num int) (bool, string)
	scope  scope
	// claims (firstOfOneHCA), for one pass over a host's ports in order, says
	// whether GASNet takes the next candidate port (ACTIVE, with a LID, on the HCA it
	// opened), and why not: each GASNET_IBV_PORTS entry serves one port.
	claims func() func(dev string, num int) (bool, string)
	roce   bool // it uses ACTIVE RoCE ports too (everyPort)
	// notActive, when set, says what the library does with a port that is not
	// ACTIVE (perftest: uses it and fails; MVAPICH2: why its MV2_DEFAULT_PORT matters).
	notActive func(p *Port) (used bool, why string)
	// value is the setting given to Library.lookup; unknown, when set, is why the
	// partition cannot be known from the settings (each used port is not checked).
	value   int
	unknown string
	// wantNote is Library.wantNote, unless the job's version makes it moot; pinned,
	// when set, says why the library uses index pinnedIndex whatever its exported
	// index setting says (NVSHMEM before 3.7.0, its version given: 0; NVSHMEM's
	// configuration file, which beats the environment: the file's). pinnedNote: say
	// pinned on a port where that index holds the partition too.
	wantNote, pinned string
	pinnedIndex      int
	pinnedNote       bool
	// look, when set, replaces Library.lookup: the lookup of the job's version of
	// the library, where it changed (UCX on RoCE ports before 1.12.0).
	look func(v int, p *Port) Pick
	// route, when set, is the pick on a port of a library whose QPs the settings do
	// not place (unknown is set), where it is decided all the same (perftest -R on
	// RoCE: rdma_cm's 0xffff); false: not decided there, unknown says why.
	route func(p *Port) (Pick, bool)
	// allPorts: every process opens every port the library selects on its host
	// (MVAPICH2 sharing its rails), so a lookup that aborts stops them all
	// (Pick.AbortHost).
	allPorts bool
	// opens, when above 0, is how many of the devices the library selects on a host
	// a process opens (MVAPICH2's MV2_NUM_HCAS), which ones not being known here;
	// opensWhy says how it chooses them.
	opens    int
	opensWhy string
	// aborts says why the library stops the process at start-up on this host, a
	// setting the host cannot satisfy whatever the P_Key tables hold (MVAPICH2's
	// MV2_IBA_HCA or MV2_DEFAULT_PORT, GASNet without a port, perftest's -d or -i);
	// nil or none: it starts. sel is selectPorts' answer for host.
	aborts func(host []*Port, sel []PortResult) []Abort
	// beatsExport, when set, says why exporting Vars[0] would not put the library
	// in partition part ("": it would): another setting beats it (Open MPI's
	// override file or a synonym).
	beatsExport func(part check.PartitionKey) string
}

// Abort is a library stopping the process on one host at start-up. Host-wide (Port
// 0: a device or port setting the host cannot satisfy), no port of that host is
// used, whatever any table holds; on a port's P_Key lookup (Pick.Abort), that port's
// outcome is fails. Device names what it stopped on ("" when it is no one device).
type Abort struct {
	Host   string `json:"host,omitempty"`
	Device string `json:"device,omitempty"`
	// Port is the port whose pick aborts (Pick.Abort; its row says fails), 0 for a
	// host-wide abort.
	Port int `json:"port,omitempty"`
	// Reason is the library's own message and why this host triggers it.
	Reason string `json:"reason"`
	// Waits: a port of the host that is not ACTIVE would remove the abort by coming
	// up (the device or port asked for is there, down); otherwise nothing the Subnet
	// Manager does changes it.
	Waits bool `json:"-"`
}

// unreadChosen lists the devices and ports of host h that could not be read and
// that the library could choose (chooses).
func (s *setup) unreadChosen(in Inputs, h hostPorts) []Unread {
	var out []Unread
	for _, u := range in.Unread {
		if u.Host == h.name && s.chooses(in, h.ports, u) {
			out = append(out, u)
		}
	}
	return out
}

// scope is how many of the ports its settings allow a library takes on a host.
type scope uint8

const (
	// everyPort: every ACTIVE port with a P_Key table on the link layers it runs on.
	everyPort scope = iota
	// firstOfOneHCA: GASNet's default build opens one HCA, the first with an ACTIVE
	// port with a LID, and of it the first such port, or every port
	// GASNET_IBV_PORTS lists.
	firstOfOneHCA
	// namedPort: perftest's one -d/-i port, ACTIVE or not.
	namedPort
)

// selectPorts says which ports of a host the library uses, and why (Pick unset): the
// one code path from the description to a host's ports.
func (s *setup) selectPorts(host []*Port) []PortResult {
	out := make([]PortResult, 0, len(host))
	hca := "" // firstOfOneHCA: the HCA opened
	var claim func(dev string, num int) (bool, string)
	if s.claims != nil {
		claim = s.claims()
	}
	for _, p := range host {
		r := PortResult{Port: p}
		ok, why := s.allows(host, p.Device, p.Num)
		switch {
		case p.Fabric && !p.DeviceKnown:
			r.Used, r.Why = true, "given (device filters do not apply to a port read over the fabric)"
		case s.scope != everyPort && !ok:
			r.Why = why
		case !p.Active():
			r.Why = "not ACTIVE (" + p.State + ")"
			if s.notActive != nil {
				r.Used, r.Why = s.notActive(p)
			}
		case s.scope == namedPort:
			r.Used, r.Why = true, why
		case s.scope == firstOfOneHCA:
			switch {
			case p.LID == 0 && p.LIDMissing == "":
				r.Why = "LID is 0"
			case hca != "" && hca != p.Device:
				r.Why = "GASNet opens one HCA (default build): " + hca + " comes first"
			default:
				if r.Used, r.Why = claim(p.Device, p.Num); r.Used {
					hca = p.Device
				}
			}
		case noPKeys(p):
			r.Why = "no P_Key table (" + p.NoTable + "): P_Keys do not apply"
		case p.Ethernet() && !s.roce:
			r.Why = "RoCE port: not used"
		case linkLayerUnread(p):
			// InfiniBand or RoCE: the library may use it (pick: not checked).
			r.Used, r.Why = ok, why+", link layer not read"
		case p.LinkLayer != "InfiniBand" && !p.Ethernet():
			r.Why = "link layer " + strconv.Quote(p.LinkLayer) + ": not used"
		default:
			r.Used, r.Why = ok, why
		}
		out = append(out, r)
	}
	return out
}

// usesOnceUp reports whether the library would use port p of host, not ACTIVE,
// once the Subnet Manager brings it up: its device and port settings allow it (and,
// for libraries that look at link layers, it is an InfiniBand port). The caller
// has left out RoCE ports and ports without P_Keys.
func (s *setup) usesOnceUp(host []*Port, p *Port) bool {
	if p.Fabric && !p.DeviceKnown {
		return true
	}
	ok, _ := s.allows(host, p.Device, p.Num)
	return ok && (s.scope != everyPort || p.LinkLayer == "InfiniBand")
}

// chooses reports whether the library could choose the unread device or port u of
// a host with ports host: whether its device and port settings allow u's device at
// any port number it may have (unreadPortNums), as they would an ACTIVE InfiniBand
// device (the one-device libraries' first device counts u among the host's); a
// device whose name is not known, at any name (unreadNames). A library the settings
// make inactive chooses nothing.
func (s *setup) chooses(in Inputs, host []*Port, u Unread) bool {
	if s.Inactive != "" {
		return false
	}
	names := []string{u.Device}
	if u.Device == "" {
		if names = unreadNames(in, host); names == nil {
			return true
		}
	}
	return slices.ContainsFunc(unreadPortNums(in, u), func(n int) bool {
		return slices.ContainsFunc(names, func(d string) bool {
			ok, _ := s.allows(host, d, n)
			return ok
		})
	})
}

// unreadNames are the names to try for a device of host whose name is not known (an
// adapter a sweep that missed links may not have reached), or nil when any name must
// be taken as chosen: the host has no port read, or one whose device name is not
// known. A device's name is unique on its host (the kernel's ib_device names), so
// it is none of host's devices; the libraries' device settings are lists of names
// and prefixes (NCCL_IB_HCA matches by prefix: mlx5_1 takes mlx5_10), so every
// name they admit that is not one of host's is among: a name no setting mentions,
// and each word a setting mentions, alone and extended.
func unreadNames(in Inputs, host []*Port) []string {
	if len(host) == 0 || slices.ContainsFunc(host, func(p *Port) bool { return p.Fabric && !p.DeviceKnown }) {
		return nil
	}
	words := []string{"\x00not-named"} // sorts first, as perftest's first device would
	add := func(v string) {
		for _, w := range strings.FieldsFunc(v, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.-", r))
		}) {
			words = append(words, w, w+"\x01")
		}
	}
	for _, v := range in.Env {
		add(v)
	}
	if in.UCX != nil {
		for _, v := range in.UCX.Values {
			add(v.Value)
		}
	}
	if in.Perftest != nil {
		add(in.Perftest.Device)
	}
	return slices.DeleteFunc(words, func(w string) bool {
		return slices.ContainsFunc(host, func(p *Port) bool { return p.Device == w })
	})
}

// pick is the library's lookup on p with the job's setting.
func (s *setup) pick(p *Port) Pick {
	if s.route != nil {
		if pk, ok := s.route(p); ok {
			return pk
		}
	}
	if pk, ok := s.undecided(p); ok {
		return pk
	}
	return s.lookup(s.value, p)
}

// undecided is the pick on p, not checked, when the settings or what was not read
// of p leave it open whatever the table holds (pick, want): a setting that does not
// decide the partition (perftest -R: s.unknown); a port whose link layer was not
// read, for a library that selects ports by it (everyPort: RoCE ports are used, or
// not, and looked up differently), the kernel writing link_layer for every port
// (drivers/infiniband/core/sysfs.c), so InfiniBand or RoCE, not neither; a port
// whose LID was not read, for GASNet, which opens only a port with a LID
// (selectPorts takes it as the HCA's port).
func (s *setup) undecided(p *Port) (Pick, bool) {
	why := ""
	switch {
	case s.unknown != "":
		return Pick{Outcome: NotChecked, Index: -1, Problem: s.unknown}, true
	case s.scope == everyPort && linkLayerUnread(p):
		why = fmt.Sprintf("the link layer of %s was not read: InfiniBand or RoCE, whether %s uses it, and with which entry, is not known", p.Label(), s.Library.Name)
	case s.scope == firstOfOneHCA && p.LIDMissing != "":
		why = fmt.Sprintf("the LID of %s was not read (%s): GASNet uses a port only with a LID, so whether it uses this one is not known", p.Label(), p.LIDMissing)
	default:
		return Pick{}, false
	}
	return Pick{Outcome: NotChecked, Index: -1, Gap: GapUnread, Problem: why}, true
}

// linkLayerUnread reports a port read from sysfs, with a P_Key table, whose link
// layer was not read (undecided).
func linkLayerUnread(p *Port) bool { return p.LinkLayer == "" && !p.Fabric && !noPKeys(p) }

// lookup is Library.lookup as this setup runs it: a lookup that aborts stops every
// process of the host when each opens every port (allPorts).
func (s *setup) lookup(v int, p *Port) Pick {
	look := s.Library.lookup
	if s.look != nil {
		look = s.look
	}
	pk := look(v, p)
	pk.AbortHost = pk.AbortHost || pk.Abort && s.allPorts
	return pk
}

// Gap is why a port is not (yet) in the wanted partition, as far as waiting can
// change it.
type Gap uint8

const (
	// NoGap: the port's table holds the key (or nothing the SM does changes the
	// answer).
	NoGap Gap = iota
	// GapMissing: the table, read whole, holds no entry of the key.
	GapMissing
	// GapUnread: the table, or an entry that may hold the key, was not read.
	GapUnread
)

// setup configures the library from the job's settings. A setting the library
// rejects is described by the rejection alone: what it would have meant is never
// shown as if it applied ("partition 0x0000").
func (l *Library) setup(in Inputs) *setup {
	s := &setup{Result: Result{Library: l}, wantNote: l.wantNote}
	l.configure(in, s)
	lv := in.version(l)
	if lv.given {
		s.Version = lv.v.String()
	}
	if why := lv.notModelled(); why != "" {
		// The library's whole model is its modelled releases': nothing it says
		// holds for another.
		s.Reject, s.Inactive = "", ""
		s.Unchecked = append(s.Unchecked, why)
		s.unknown = fmt.Sprintf("what %s does is not known: not a release ibkey models", lv)
	}
	if s.Reject != "" {
		s.Setting = s.Reject
	}
	return s
}

// settledReject is the refusal that stays when the library's partition variable
// (Vars[0]) is what a fix or a gate's export sets: a component list Open MPI
// refuses, an empty mca_base_param_files, MV2_DEFAULT_PORT 0; not a partition value
// the library cannot parse, which the export replaces ("" then).
func (s *setup) settledReject(in Inputs) string {
	if s.Reject == "" {
		return ""
	}
	env := maps.Clone(in.Env)
	delete(env, s.Library.Vars[0])
	in.Env = env
	if a := in.Perftest; a != nil && a.badPKey {
		// perftest's --pkey_index, the setting proposed (perftest stops at its first
		// bad value: one after it is not known).
		b := *a
		b.BadValue, b.badPKey = "", false
		in.Perftest = &b
	}
	return s.Library.setup(in).Reject
}

// Libraries are all libraries ibkey knows, in the order they are reported.
func Libraries() []*Library {
	return []*Library{&NCCL, &UCX, &NVSHMEM, &GASNet, &MVAPICH2, &OpenMPI, &Perftest}
}

// LibraryIDs lists the accepted library names, for usage errors.
func LibraryIDs() []string {
	var out []string
	for _, l := range Libraries() {
		out = append(out, l.ID)
	}
	return out
}

// LookupLibrary finds a library by ID (case-insensitive).
func LookupLibrary(id string) (*Library, bool) {
	for _, l := range Libraries() {
		if strings.EqualFold(l.ID, id) {
			return l, true
		}
	}
	return nil, false
}

// Mentioned reports whether the inputs set any of the library's settings.
func (l *Library) Mentioned(in Inputs) bool {
	if l.ID == Perftest.ID {
		return in.Perftest != nil
	}
	return slices.ContainsFunc(l.Vars, func(v string) bool {
		_, ok := in.Env[v]
		// A key set in Open MPI's MCA parameter files or NCCL's, MVAPICH2's, NVSHMEM's
		// and UCX's configuration files is the job's too; their other settings are
		// the install's (Debian's file sets btl and pml; a site's nccl.conf
		// NCCL_IB_HCA).
		_, inFile := map[string]*ConfFiles{NCCL.ID: in.NCCL, MVAPICH2.ID: in.MV2, NVSHMEM.ID: in.NVSHMEM}[l.ID].values()[v]
		inFile = inFile || l.ID == UCX.ID && in.UCX != nil && in.UCX.sets(v)
		return ok || l.ID == OpenMPI.ID && strings.Contains(v, "pkey") && in.MCA != nil && in.MCA.sets(v) ||
			strings.Contains(v, "PKEY") && inFile
	})
}

// noPKeys reports a port without a P_Key table on a non-InfiniBand link (iWARP):
// partitions do not apply to it, whatever a library does there.
func noPKeys(p *Port) bool { return p.Table == nil && !p.Fabric && p.LinkLayer != "InfiniBand" }

// pickFirst is the lookup GASNet, MVAPICH2 and Open MPI's openib BTL share: key 0
// (unset) uses index 0 (who names it); otherwise the first index, in table order,
// whose 15-bit key equals key, whatever its membership (an unreadable entry before
// the match leaves the answer open), and without one, miss.
func pickFirst(p *Port, key check.PartitionKey, who string, miss Pick) Pick {
	if p.Table == nil {
		return Pick{Outcome: NotChecked, Index: -1, Problem: p.NoTable}
	}
	if key == 0 {
		return usesIndex(p, 0, who)
	}
	for _, e := range p.Table {
		if !e.Readable {
			return Pick{Outcome: NotChecked, Index: -1, Problem: fmt.Sprintf("entry %d of %s could not be read: it may hold partition %s", e.Index, p.Label(), key)}
		}
		if e.PKey.Partition() == key {
			pk := Pick{Outcome: Uses, Index: e.Index, PKey: e.PKey}
			if !e.PKey.IsFull() {
				for _, f := range p.Table[e.Index+1:] {
					if f.Readable && f.PKey.Partition() == key && f.PKey.IsFull() {
						pk.Notes = append(pk.Notes, fmt.Sprintf("takes the limited entry at index %d although index %d holds %s (full): the lookup takes the first entry of the key, whatever its membership", e.Index, f.Index, f.PKey))
						break
					}
				}
			}
			return pk
		}
	}
	return miss
}

// want is the setting that puts the library's QPs on p in partition key, checked
// by running the library's own lookup with it (in Pick.Setting), whatever else the
// job sets. Set by index, it names one of p's best entries (bestEntries: a full
// member read, else a limited one when every entry was read), common when that is
// one of them (wantOn: one index for every port), else the lowest; set by value, it
// is the 15-bit key, and the library's own lookup says which entry it takes. Where
// the settings or what was not read leave it open (undecided), it is not checked.
func (s *setup) want(key check.PKey, p *Port, common int) Pick {
	l := s.Library
	name, part := l.Vars[0], key.Partition()
	if pk, ok := s.undecided(p); ok {
		return pk
	}
	switch {
	case part < l.wantMin:
		return noSetting(fmt.Sprintf("%s refuses partition %s: %s must be %s-0x7fff", strings.Fields(l.Name)[0], part, name, l.wantMin), NoGap)
	case l.Kind == ByValue && p.Ethernet():
		pk := s.lookup(int(part), p)
		// UCX takes index 0 on RoCE whatever the value; Open MPI's openib looks the
		// value up there too, and skips the port without it.
		if other := s.lookup(int(part%0x7fff+1), p); other.Outcome == pk.Outcome && other.Index == pk.Index {
			pk.Notes = append(pk.Notes, "RoCE port: the setting does not apply")
		}
		return pk
	case p.Table == nil:
		return noSetting(p.NoTable, unreadGap(p))
	case p.Ethernet():
		// RoCE: P_Keys do not apply; the one entry is index 0 and any other index
		// fails there.
		pk := s.lookup(0, p)
		pk.Setting, pk.Notes = name+"=0", append(pk.Notes, "RoCE port: P_Keys do not apply, but the index must exist: its table has the one entry 0 (exclude the port from the library's devices to use another index elsewhere)")
		return pk
	}
	best, known := bestEntries(p, key)
	if len(best) == 0 && (l.Kind == ByIndex || !hasUnreadable(p)) {
		pk := missing(key, p)
		// Set anyway, the value stops UCX's and GASNet's process on the host
		// (their lookup's AbortHost): it uses none of the host's other ports.
		pk.AbortHost = l.Kind == ByValue && s.lookup(int(part), p).AbortHost
		return pk
	}
	if l.Kind == ByValue {
		pk := s.lookup(int(part), p)
		pk.Setting = name + "=" + part.String()
		if pk.Outcome == NotChecked {
			pk.Gap = GapUnread
		}
		return pk
	}
	if !known {
		e := p.Table[best[0]]
		return noSetting(fmt.Sprintf("the index to set is not known: index %d holds %s (limited), and %s: a full entry there would be the one to set", e.Index, e.PKey, unreadEntries(p)), GapUnread)
	}
	if s.pinned != "" {
		// The library takes index pinnedIndex whatever the setting: only a port whose
		// entry there holds the partition is in it.
		if i := s.pinnedIndex; !slices.Contains(best, i) {
			switch {
			case i < 0 || i >= len(p.Table):
				return noSetting(fmt.Sprintf("%s, and %s has no index %d (%d entries): no setting puts it in partition %s", s.pinned, p.Label(), i, len(p.Table), part), NoGap)
			case !p.Table[i].Readable:
				return noSetting(fmt.Sprintf("%s, and index %d of %s could not be read: whether it holds partition %s is not known", s.pinned, i, p.Label(), part), GapUnread)
			}
			return noSetting(fmt.Sprintf("%s, and index %d of %s holds %s, not partition %s: no setting puts it there", s.pinned, i, p.Label(), p.Table[i].PKey, part), NoGap)
		}
		common = s.pinnedIndex
	}
	idx := best[0]
	if slices.Contains(best, common) {
		idx = common
	}
	pk := s.lookup(idx, p)
	pk.Setting = name + "=" + strconv.Itoa(idx)
	if s.pinnedNote {
		pk.Notes = append(pk.Notes, s.pinned)
	}
	if s.wantNote != "" && idx != 0 {
		pk.Notes = append(pk.Notes, s.wantNote)
	}
	return pk
}

// bestEntries are the indexes, ascending, of the entries of p an index setting
// (NCCL_IB_PKEY, NVSHMEM_IB_PKEY_INDEX, --pkey_index) may name for partition key:
// the full members of it read, else the limited ones. A library that takes the
// index it is given runs no lookup, so any full entry is as good as another and an
// entry not read beside one changes nothing; beside only limited entries (or none),
// an entry not read may be a full one (query.FindPKey's rule: a limited match is
// the answer only when no full one can exist), so the best entry is known only
// when every entry was read (known). Key 0 matches nothing (check.FindPKeyIndex).
func bestEntries(p *Port, key check.PKey) (idx []int, known bool) {
	var full, limited []int
	for _, e := range p.Table {
		if !e.Readable || !e.PKey.Valid() || e.PKey.Partition() != key.Partition() {
			continue
		}
		if e.PKey.IsFull() {
			full = append(full, e.Index)
		} else {
			limited = append(limited, e.Index)
		}
	}
	if len(full) > 0 {
		return full, true
	}
	return limited, !hasUnreadable(p)
}

// unreadEntries names the entries of p not read: "2 entries could not be read
// (index 3, 9)".
func unreadEntries(p *Port) string {
	var idx []int
	for _, e := range p.Table {
		if !e.Readable {
			idx = append(idx, e.Index)
		}
	}
	return fmt.Sprintf("%s could not be read (index %s)", textsafe.Plural(len(idx), "entry", "entries"), strings.Join(textsafe.Capped(query.IndexRanges(idx), 8), ", "))
}

// noSetting is a port where no setting works, for problem: the library fails there,
// or is not checked when what was not read may hold the key.
func noSetting(problem string, gap Gap) Pick {
	if gap == GapUnread {
		return Pick{Outcome: NotChecked, Index: -1, Problem: problem, Gap: gap}
	}
	return Pick{Outcome: Fails, Index: -1, Problem: problem, Gap: gap}
}

func unreadGap(p *Port) Gap {
	if p.tableUnread() {
		return GapUnread
	}
	return NoGap
}

func hasUnreadable(p *Port) bool {
	return slices.ContainsFunc(p.Table, func(e check.TableEntry) bool { return !e.Readable })
}

// missing is the pick on p when no entry of key was read there: the port is not
// in the partition (a finding), or not checked when some entries were not read.
func missing(key check.PKey, p *Port) Pick {
	if hasUnreadable(p) {
		return noSetting(fmt.Sprintf("partition %s is not in the entries that could be read (some could not)", key.Partition().String()), GapUnread)
	}
	return noSetting(fmt.Sprintf("no entry for partition %s in its table: no setting makes it a member (the Subnet Manager must add the port to the partition)", key.Partition().String()), GapMissing)
}
