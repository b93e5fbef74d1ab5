// Package query answers the questions ibkey's commands ask ("all ports with their
// tables", "resolve this endpoint") by turning raw facts from ibverbs into views that
// carry the meaning check gives them.
package query

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// UsageError is bad input from the user (exit code 2): it names the bad token and what
// is accepted. Err, when set, is the typed error it reports (e.g. *FabricFileError), for
// errors.As.
type UsageError struct {
	Msg string
	Err error
}

func (e *UsageError) Error() string { return e.Msg }

func (e *UsageError) Unwrap() error { return e.Err }

// FabricFileError is a saved sweep (a fabric file) that could not be read or is not a
// fabric file. Its text names the file, not the flag that named it: the command adds
// that (cmdutil.ReadFabricFile: --fabric-file).
type FabricFileError struct {
	// Path is the file, "" when it could not be opened (then Err names it).
	Path string
	// Err is why: the open's error or the decoder's (fabric.DecodeFabric).
	Err error
}

func (e *FabricFileError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *FabricFileError) Unwrap() error { return e.Err }

// What an endpoint needs to be resolved, for EndpointSourceError.Need (errors.Is).
var (
	// ErrGUIDNeedsSource: a GUID resolves against a partitions.conf (the tables the SM
	// would program), a saved sweep or a fabric to sweep.
	ErrGUIDNeedsSource = errors.New("resolving a GUID needs a partitions.conf, a saved sweep or a fabric to sweep")
	// ErrLIDNeedsFabric: lid= is read over the fabric, or found in a saved sweep.
	ErrLIDNeedsFabric = errors.New("a port read over the fabric needs fabric access or a saved sweep")
	// ErrNodeNeedsSweep: node= is found in a sweep (live or saved).
	ErrNodeNeedsSweep = errors.New("a node of the fabric needs a sweep")
	// ErrIndexNeedsSweep: index= and port= on a GUID need a port of a sweep; a GUID
	// resolved against a partitions.conf is a member of it, which has no table index.
	ErrIndexNeedsSweep = errors.New("index= and port= need a port of a sweep")
)

// EndpointSourceError is an endpoint that cannot be resolved from the sources given
// (EndpointSources): bad input, returned inside a *UsageError. Its text says what is
// missing, not which flags supply it: the command adds those. Need is one of
// ErrGUIDNeedsSource, ErrLIDNeedsFabric, ErrNodeNeedsSweep, ErrIndexNeedsSweep, and
// errors.Is matches it.
type EndpointSourceError struct {
	// Token is the endpoint as given.
	Token string
	Spec  check.EndpointSpec
	Need  error
}

// MaybePKey says the GUID is short enough to be a mistyped P_Key: real port GUIDs
// are EUI-64 identifiers, whose top 24 bits are the vendor's OUI (IEEE, "Guidelines
// for Use of Extended Unique Identifier (EUI), Organizationally Unique Identifier (OUI),
// and Company ID (CID)").
func (e *EndpointSourceError) MaybePKey() bool {
	return e.Spec.Kind == check.EndpointGUID && e.Spec.GUID < 1<<32
}

func (e *EndpointSourceError) Error() string {
	switch e.Need {
	case ErrGUIDNeedsSource:
		hint := ""
		if e.MaybePKey() {
			hint = " (if you meant a P_Key: a P_Key is at most 0xffff)"
		}
		return fmt.Sprintf("endpoint %q is a port GUID (%s)%s: resolving a GUID needs a partitions.conf (the tables the SM would program), a saved sweep or a fabric to sweep; or use DEV/PORT for a local port or a P_Key value",
			e.Token, e.Spec.GUID.String(), hint)
	case ErrLIDNeedsFabric:
		return fmt.Sprintf("endpoint %q is a port read over the fabric (LID %d): it needs fabric access (MADs) or a saved sweep; use DEV/PORT for a local port or the P_Key the remote QP uses",
			e.Token, e.Spec.LID)
	case ErrNodeNeedsSweep:
		return fmt.Sprintf("endpoint %q names a node of the fabric: it needs a sweep (fabric access, or a saved sweep)", e.Token)
	case ErrIndexNeedsSweep:
		return fmt.Sprintf("endpoint %q: index= and port= need a port of a sweep; resolved against a partitions.conf, a GUID is a member of it, which has no table index", e.Token)
	}
	return fmt.Sprintf("endpoint %q: %v", e.Token, e.Need)
}

func (e *EndpointSourceError) Unwrap() error { return e.Need }

// NotFoundError is a device or port that does not exist (exit code 3), with what does.
type NotFoundError struct {
	What      string // "device", "port"
	Name      string // "mlx5_9", "3 on mlx5_0"
	Available []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no %s %s (%ss: %s)", e.What, e.Name, e.What, joinOrNone(e.Available))
}

// joinOrNone lists what exists, or says there is none.
func joinOrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}

// EnvError is an environment problem (exit code 3): no sysfs, no RDMA devices,
// permission denied, no answer over the fabric. Err, when set, is the typed error it
// reports (e.g. *NoAnswerError), for errors.As.
type EnvError struct {
	Msg string
	Err error
}

func (e *EnvError) Error() string { return e.Msg }

func (e *EnvError) Unwrap() error { return e.Err }

// UnknownError is an answer that depends on what could not be read (exit code 4): a
// port looked for in a partial sweep may be in the part not read. Never a definite no.
type UnknownError struct {
	Msg string
	// partial is set on a read of which nothing was read (PartialError.Unwrap): what
	// it did not read, for a read of several selectors (Host.LoadMany), where the
	// others may have been read.
	partial *PartialError
}

func (e *UnknownError) Error() string { return e.Msg }

// NoAnswerError is a query over the fabric that got no reply (Err wraps the
// *mad.TimeoutError): the destination is not there, or nothing routes to it. A LID may
// not be assigned or routed: the subnet manager assigns LIDs and programs the
// switches' forwarding tables (OpenSM osm_lid_mgr.c, osm_ucast_mgr.c), so before one
// has run only directed routes reach other nodes. Whether one has is in the local
// port's PortInfo (Local): its MasterSMLID and LID are set and it is ACTIVE once an
// SM has brought it up (IBA 14.2.5.6; OpenSM osm_link_mgr.c).
type NoAnswerError struct {
	Addr mad.Address
	// Via is the transport (Fabric.Via); "" when not known.
	Via string
	// DirectedRouteFlag is how the user asks for a directed route (Fabric's), named in
	// the hint of a LID; "" names none.
	DirectedRouteFlag string
	// ListLIDs is how the user lists the assigned LIDs (Fabric's), named in the hint
	// of a LID once an SM has run; "" names none.
	ListLIDs string
	// Local is the PortInfo of the port MADs leave from, read when the reply did not
	// come (Fabric.madError); nil when not read: then whether an SM has run is not
	// known, and the hint says both.
	Local *mad.PortInfo
	Err   error
}

func (e *NoAnswerError) Error() string { return e.text(" from " + e.Addr.String()) }

// bare is Error without the address, for a line that names it already (Unread.What:
// "not read: lid 9: no answer via ...").
func (e *NoAnswerError) bare() string { return e.text("") }

func (e *NoAnswerError) text(from string) string {
	via := ""
	if e.Via != "" {
		via = " via " + e.Via
	}
	how := e.Err.Error()
	if te, ok := errors.AsType[*mad.TimeoutError](e.Err); ok {
		how = fmt.Sprintf("no reply after %d attempt(s) of %v", te.Attempts, te.Timeout)
		if te.Dropped {
			how = fmt.Sprintf("dropped or no route (%d attempt(s))", te.Attempts)
		}
	}
	return fmt.Sprintf("no answer%s%s: %s: %s", from, via, how, e.hint())
}

// hint says what can keep a reply from coming, from what Local says of the subnet
// manager: only what can be true.
func (e *NoAnswerError) hint() string {
	if e.Addr.Directed {
		return "is the destination there and routed?"
	}
	routes := "directed routes"
	if e.DirectedRouteFlag != "" {
		routes += " (" + e.DirectedRouteFlag + ")"
	}
	l := e.Local
	switch {
	case l == nil:
		return "is the LID assigned and routed? before a subnet manager has run, only " + routes + " reach other nodes"
	case l.PortState == mad.PortStateDown:
		return "the local port is DOWN: nothing beyond it answers (is it cabled?)"
	case l.PortState != mad.PortStateActive || l.MasterSMLID == 0 || l.LID == 0:
		return fmt.Sprintf("no subnet manager has brought the local port up (%s, LID %d, SM LID %d): until one has, only %s reach other nodes",
			portStateEnum(l.PortState).Name, l.LID, l.MasterSMLID, routes)
	}
	list := ""
	if e.ListLIDs != "" {
		list = " (" + e.ListLIDs + " lists the assigned LIDs)"
	}
	// The LID may be assigned and routed and its node or agent silent (a PMA that
	// does not answer): not said as the only cause.
	return fmt.Sprintf("a subnet manager has run (SM LID %d): the LID is not assigned or not routed, or its node does not answer%s", l.MasterSMLID, list)
}

func (e *NoAnswerError) Unwrap() error { return e.Err }

// addressesFailed is the failures of a read of several fabric addresses of which none
// was read, or that was interrupted (Fabric.LoadMany's errors, in selector order), in
// one line: the addresses that got no answer for the same reason together
// (SelectorList), the transport, the attempts and the hint said once ("no answer from
// lid 8, lid 9 via ...: dropped or no route (1 attempt(s)): HINT"); any other failure
// as it is. A few, then a count (MaxListed), of the failures.
func addressesFailed(errs []error) string {
	type group struct {
		na    *NoAnswerError // nil: text is the failure
		text  string
		addrs []FabricSelector
	}
	var groups []*group
	byWhy := map[string]*group{}
	for _, err := range errs {
		na, ok := errors.AsType[*NoAnswerError](err)
		if !ok {
			groups = append(groups, &group{text: err.Error()})
			continue
		}
		g := byWhy[na.bare()]
		if g == nil {
			g = &group{na: na}
			byWhy[na.bare()] = g
			groups = append(groups, g)
		}
		if !slices.ContainsFunc(g.addrs, func(s FabricSelector) bool { return s.Addr.String() == na.Addr.String() }) {
			g.addrs = append(g.addrs, FabricSelector{Addr: na.Addr})
		}
	}
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = g.text
		if g.na != nil {
			out[i] = g.na.text(" from " + SelectorList(g.addrs))
		}
	}
	return strings.Join(textsafe.Capped(out, MaxListed), "; ")
}

// SelectorList names fabric addresses in a sentence, in order: a run of three or more
// consecutive LIDs with the same port choice as one range, as --lid takes it ("lid
// 10-40", "lid 10-12 port 2"); a few, then a count (MaxListed).
func SelectorList(sels []FabricSelector) string {
	var out []string
	for i := 0; i < len(sels); {
		first := sels[i]
		j := i + 1
		for j < len(sels) && !first.Addr.Directed && !sels[j].Addr.Directed && sels[j].Addr.LID == sels[j-1].Addr.LID+1 &&
			sels[j].Port == first.Port && sels[j].HasPort == first.HasPort && sels[j].AllPorts == first.AllPorts {
			j++
		}
		if j-i < 3 {
			for _, s := range sels[i:j] {
				out = append(out, s.String())
			}
		} else {
			choice := strings.TrimPrefix(first.String(), first.Addr.String()) // " port 2", " (all ports)"
			out = append(out, fmt.Sprintf("lid %d-%d%s", first.Addr.LID, sels[j-1].Addr.LID, choice))
		}
		i = j
	}
	return strings.Join(textsafe.Capped(out, MaxListed), ", ")
}

// InterruptedError is what a screen (internal/tui.Run) returns when its context
// ended it (in ibkey: a signal, through main's signal context) rather than the user.
// Cause is context.Cause of that context ("terminated signal received" and the
// like); the terminal has been restored. cmdutil.ExitCode maps it to 128+signo.
type InterruptedError struct{ Cause error }

func (e *InterruptedError) Error() string { return "interrupted: " + e.Cause.Error() }

func (e *InterruptedError) Unwrap() error { return e.Cause }
