package job

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/query"
)

// IPoIBVar is the variable --emit env sets to the IPoIB interface of the partition.
// rdma_cm takes a connection's partition from the IPoIB interface whose address it
// resolves (the kernel's cma.c: cma_acquire_dev_by_src_ip and ib_addr_set_pkey from
// the interface's broadcast address), so an rdma_cm user (Open MPI's rdmacm CPC,
// MVAPICH2 with MV2_USE_RDMA_CM=1, libfabric's verbs provider, UCX's rdmacm
// sockaddr transport) reaches the partition only through an address on this
// interface. No library reads this name: scripts pass it on (libfabric's
// FI_VERBS_IFACE, an IP address for the application).
const IPoIBVar = "IBKEY_IPOIB_INTERFACE"

// Export is one variable of the job's environment.
type Export struct {
	Name, Value string
}

// Line is the export as a POSIX shell line, quoted only where the value needs it.
func (e Export) Line() string { return "export " + e.Name + "=" + ShellQuote(e.Value) }

// ShellQuote quotes s for a POSIX shell: as is when it holds only characters no
// shell treats specially, else in single quotes.
func ShellQuote(s string) string {
	if shellSafe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellSafe reports whether s needs no quoting in a POSIX shell: letters, digits and
// ._-+:/,@%= only, and not empty.
func shellSafe(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-+:/,@%=", r))
	}) < 0
}

// Exports are the environment that puts the job in a partition, and what could not
// be given.
type Exports struct {
	Vars []Export
	// Problems are libraries with no value that is right on every host (the job gets
	// one environment): nothing may be exported then.
	Problems []string
	// Warnings are what the environment cannot do (no IPoIB interface for rdma_cm
	// users; a library that is not applicable).
	Warnings []string
	// Unchecked are libraries whose one value for every host depends on what was
	// not read: nothing may be exported, and the answer is not a "no" either.
	Unchecked []string
}

// EnvExports turns the WantPartition results into one environment, right on every
// host of the job: each library's setting when it is the same for every port it uses
// (a value, or an index every host has the key at); a library that does not work,
// whose setting differs between hosts, or that is set on its command line (perftest)
// is a problem or a warning instead, and one whose answer depends on what was not
// read is not checked (Unchecked). ports are the job's ports, for the IPoIB
// interface of the partition.
func EnvExports(ws []*Result, key check.PKey, ports []*Port) Exports {
	var ex Exports
	for _, w := range ws {
		switch {
		case w.Verdict == NotApplicable:
			ex.Warnings = append(ex.Warnings, fmt.Sprintf("%s: nothing to export: %s", w.Library.Name, w.Inactive))
		case w.Library.ID == Perftest.ID:
			ex.Warnings = append(ex.Warnings, fmt.Sprintf("perftest takes its index on its command line (%s): not exported", w.Summary()))
		case w.Verdict == Incomplete:
			ex.Unchecked = append(ex.Unchecked, fmt.Sprintf("%s: whether a setting puts it in partition %s is not known: %s", w.Library.Name, key.Partition().String(), strings.Join(w.Unchecked, "; ")))
		case w.Verdict != Works:
			ex.Problems = append(ex.Problems, fmt.Sprintf("%s: no setting puts it in partition %s: %s", w.Library.Name, key.Partition().String(), strings.Join(slices.Concat(w.Findings, w.Unchecked), "; ")))
		case w.Same == "" && w.sameUnknown != "":
			ex.Unchecked = append(ex.Unchecked, fmt.Sprintf("%s: one value for every host of the job is not known: %s (%s)", w.Library.Name, w.Summary(), w.sameUnknown))
		case w.Same == "":
			ex.Problems = append(ex.Problems, fmt.Sprintf("%s needs one value on every host of the job and there is none: %s (set it per host, as the Slurm TaskProlog does, or have the Subnet Manager put the key at one index)", w.Library.Name, w.Summary()))
		default:
			name, value, _ := strings.Cut(w.Same, "=")
			ex.Vars = append(ex.Vars, Export{Name: name, Value: value})
		}
	}
	ipoib, warn := ipoibInterface(ws, key, ports)
	ex.Warnings = append(ex.Warnings, warn...)
	if ipoib != "" {
		ex.Vars = append(ex.Vars, Export{Name: IPoIBVar, Value: ipoib})
	}
	return ex
}

// ipoibInterface is the IPoIB interface of partition key on the ports the libraries
// use, when every host has one and its name is the same everywhere.
func ipoibInterface(ws []*Result, key check.PKey, ports []*Port) (string, []string) {
	used := map[string]bool{}
	for _, w := range ws {
		for _, pw := range w.Ports {
			used[pw.Port.Label()] = used[pw.Port.Label()] || pw.Used
		}
	}
	byHost := map[string][]query.IPoIB{}
	var hosts []string
	var unread []string
	for _, p := range ports {
		if !used[p.Label()] || p.Ethernet() {
			continue
		}
		if _, ok := byHost[p.Host]; !ok {
			hosts = append(hosts, p.Host)
			byHost[p.Host] = nil
		}
		if !p.InterfacesRead {
			unread = append(unread, p.Label())
			continue
		}
		for _, nif := range p.Interfaces {
			if nif.PKey.Partition() == key.Partition() {
				byHost[p.Host] = append(byHost[p.Host], nif)
			}
		}
	}
	part := key.Partition().String()
	if len(unread) > 0 {
		return "", []string{fmt.Sprintf("%s not set: IPoIB interfaces are not visible over MADs (%s); rdma_cm users need the interface of partition %s on each host", IPoIBVar, strings.Join(unread, ", "), part)}
	}
	var warn, names []string
	missing := false
	for _, h := range hosts {
		ifs := byHost[h]
		if len(ifs) == 0 {
			missing = true
			warn = append(warn, fmt.Sprintf("%s has no IPoIB interface of partition %s: rdma_cm users (which take the partition from the interface whose address they use) cannot use it there", HostName(h), part))
			continue
		}
		nif := slices.MinFunc(ifs, func(a, b query.IPoIB) int { return strings.Compare(a.Name, b.Name) })
		if !slices.Contains(names, nif.Name) {
			names = append(names, nif.Name)
		}
		// query's link state (flags and carrier, else operstate): operstate alone calls
		// an interface that never had a carrier event "unknown", and says "down" for
		// one the user took down and for one without carrier alike.
		what := fmt.Sprintf("%s: IPoIB interface %s of partition %s", HostName(h), nif.Name, part)
		switch {
		case !nif.AdminUp.OK():
			warn = append(warn, fmt.Sprintf("%s: whether it is up was not read (%s)", what, nif.AdminUp.Missing))
		case !nif.AdminUp.Value:
			warn = append(warn, what+" is down")
		case !nif.Carrier.OK():
			warn = append(warn, fmt.Sprintf("%s: whether it has carrier was not read (%s)", what, nif.Carrier.Missing))
		case !nif.Carrier.Value:
			// IPoIB turns carrier on only once it joined the partition's broadcast
			// group (drivers/infiniband/ulp/ipoib/ipoib_multicast.c).
			warn = append(warn, what+" is up without carrier: it has not joined the partition's broadcast group ('ibkey pkeys' on that host says why)")
		}
		// The entry the kernel runs it with (ib_find_pkey, query.FindPKey) is not
		// known when entries of the table were not read: full or limited, unless a
		// full one was read.
		if nif.Unknown != "" && !(nif.Index >= 0 && nif.Membership == check.Full) {
			warn = append(warn, fmt.Sprintf("%s: whether it runs as a full or a limited member is not known: %s", what, nif.Unknown))
		}
	}
	switch {
	case len(names) > 1:
		slices.Sort(names)
		warn = append(warn, fmt.Sprintf("%s not set: the hosts' IPoIB interfaces of partition %s have different names (%s)", IPoIBVar, part, strings.Join(names, ", ")))
	case len(names) == 1 && !missing:
		return names[0], warn
	}
	return "", warn
}
