package query

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// silentFabric answers nothing: every MAD times out as err says.
type silentFabric struct{ err *mad.TimeoutError }

func (s silentFabric) Do(context.Context, mad.Request) (*mad.Packet, error) { return nil, s.err }
func (silentFabric) Close() error                                           { return nil }

// localPort answers the local port's PortInfo (an empty directed route) with pi,
// and leaves every other MAD to T.
type localPort struct {
	mad.Transport
	pi mad.PortInfo
}

func (l localPort) Do(ctx context.Context, req mad.Request) (*mad.Packet, error) {
	if !req.Addr.Directed || len(req.Addr.Path) != 0 || req.Attr != mad.AttrPortInfo {
		return l.Transport.Do(ctx, req)
	}
	d := make([]byte, 64)
	binary.BigEndian.PutUint16(d[16:], l.pi.LID)
	binary.BigEndian.PutUint16(d[18:], l.pi.MasterSMLID)
	d[32] = byte(l.pi.PortState)
	return &mad.Packet{Class: req.Class, Attr: req.Attr, Data: d}, nil
}

// TestNoAnswerError: a MAD that got no reply is an *EnvError wrapping a *NoAnswerError
// (and the transport's *mad.TimeoutError). Its hint for a LID names the directed-route
// flag only when the caller gave one (Fabric.DirectedRouteFlag): this package names no
// flag.
func TestNoAnswerError(t *testing.T) {
	dropped := &mad.TimeoutError{Attempts: 4, Timeout: 100 * time.Millisecond, Dropped: true}
	silent := &mad.TimeoutError{Attempts: 2, Timeout: 100 * time.Millisecond}
	tests := []struct {
		addr mad.Address
		te   *mad.TimeoutError
		flag string
		want string
	}{
		{mad.LIDAddress(4), dropped, "", `no answer from lid 4 via ibsim "sim" at HcaA: dropped or no route (4 attempt(s)): is the LID assigned and routed? before a subnet manager has run, only directed routes reach other nodes`},
		{mad.LIDAddress(4), dropped, "--dr", `no answer from lid 4 via ibsim "sim" at HcaA: dropped or no route (4 attempt(s)): is the LID assigned and routed? before a subnet manager has run, only directed routes (--dr) reach other nodes`},
		{mad.LIDAddress(9), silent, "", `no answer from lid 9 via ibsim "sim" at HcaA: no reply after 2 attempt(s) of 100ms: is the LID assigned and routed? before a subnet manager has run, only directed routes reach other nodes`},
		{mad.DirectedRoute(1, 3), silent, "--dr", `no answer from DR path 0,1,3 via ibsim "sim" at HcaA: no reply after 2 attempt(s) of 100ms: is the destination there and routed?`},
	}
	for _, tt := range tests {
		fab := &Fabric{T: silentFabric{tt.te}, Via: `ibsim "sim" at HcaA`, DirectedRouteFlag: tt.flag}
		_, err := fab.Load(context.Background(), FabricSelector{Addr: tt.addr}, LoadOptions{})
		var (
			env *EnvError
			na  *NoAnswerError
			te  *mad.TimeoutError
		)
		if !errors.As(err, &env) || !errors.As(err, &na) || !errors.As(err, &te) {
			t.Errorf("%s: %T %v, want an *EnvError wrapping a *NoAnswerError and the *mad.TimeoutError", tt.addr, err, err)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("%s (flag %q):\n got %s\nwant %s", tt.addr, tt.flag, err, tt.want)
		}
		if tt.flag == "" && strings.Contains(err.Error(), "--") {
			t.Errorf("%s: names a flag no caller gave: %s", tt.addr, err)
		}
		if na.Addr.String() != tt.addr.String() || na.Via != fab.Via {
			t.Errorf("%s: NoAnswerError %+v", tt.addr, na)
		}
	}
	// The hint of a LID says only what the local port's PortInfo allows: the first
	// three before any subnet manager ran (ibsim before OpenSM: INIT, LID 0), the last
	// once one has.
	for _, tt := range []struct {
		local mad.PortInfo
		want  string
	}{
		{mad.PortInfo{PortState: mad.PortStateInit}, "no subnet manager has brought the local port up (INIT, LID 0, SM LID 0): until one has, only directed routes (--dr) reach other nodes"},
		{mad.PortInfo{PortState: mad.PortStateArmed, LID: 5, MasterSMLID: 1}, "no subnet manager has brought the local port up (ARMED, LID 5, SM LID 1): until one has, only directed routes (--dr) reach other nodes"},
		{mad.PortInfo{PortState: mad.PortStateDown}, "the local port is DOWN: nothing beyond it answers (is it cabled?)"},
		{mad.PortInfo{PortState: mad.PortStateActive, LID: 5, MasterSMLID: 1}, "a subnet manager has run (SM LID 1): the LID is not assigned or not routed, or its node does not answer ('ibkey fabric discover' lists the assigned LIDs)"},
	} {
		fab := &Fabric{T: localPort{silentFabric{silent}, tt.local}, Via: "x", DirectedRouteFlag: "--dr", ListLIDs: "'ibkey fabric discover'"}
		_, err := fab.Load(context.Background(), FabricSelector{Addr: mad.LIDAddress(9)}, LoadOptions{})
		var na *NoAnswerError
		if want := "no answer from lid 9 via x: no reply after 2 attempt(s) of 100ms: " + tt.want; !errors.As(err, &na) || err.Error() != want || na.Local == nil || *na.Local != tt.local {
			t.Errorf("local port %+v:\n got %v\nwant %s", tt.local, err, want)
		}
		if strings.Contains(err.Error(), "before a subnet manager") {
			t.Errorf("local port %+v: %v: says an SM may not have run", tt.local, err)
		}
	}
	// Other errors are not NoAnswerErrors.
	fab := &Fabric{T: &fakeFabric{}, Via: "x", DirectedRouteFlag: "--dr"}
	_, err := fab.Load(context.Background(), FabricSelector{Addr: mad.LIDAddress(3)}, LoadOptions{})
	var na *NoAnswerError
	if err == nil || errors.As(err, &na) || strings.Contains(err.Error(), "--dr") {
		t.Errorf("a refused query: %v", err)
	}
}

// TestNeedsFabricAccess: the reason names no flag unless the caller says how; its
// short form (before " (") is the same either way.
func TestNeedsFabricAccess(t *testing.T) {
	for how, want := range map[string]string{
		"":               "needs fabric access (PortInfo, not in sysfs)",
		"pass --ca DEV":  "needs fabric access (PortInfo, not in sysfs: pass --ca DEV)",
		"run it as root": "needs fabric access (PortInfo, not in sysfs: run it as root)",
	} {
		got := NeedsFabricAccess(how)
		if short, _, _ := strings.Cut(got, " ("); got != want || short != "needs fabric access" {
			t.Errorf("NeedsFabricAccess(%q) = %q, want %q", how, got, want)
		}
	}
}

// TestFabricFileError: a fabric file that cannot be used is a usage error wrapping a
// *FabricFileError whose text is the file and what is wrong with it (the decoder's
// words, with no second "fabric file: "), or the open's error, which names the file.
func TestFabricFileError(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"format":"other","version":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	notJSON := filepath.Join(dir, "x.json")
	if err := os.WriteFile(notJSON, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	for path, want := range map[string]string{
		other:   other + `: format "other", want "ibkey-fabric" (a file written by ` + "`ibkey fabric discover -o json`)",
		notJSON: notJSON + ": not JSON: invalid character 'x' looking for beginning of value",
		missing: missing,
	} {
		_, err := ReadFabricFile(path)
		var ue *UsageError
		var fe *FabricFileError
		if !errors.As(err, &ue) || !errors.As(err, &fe) || !strings.Contains(fmt.Sprint(err), want) || strings.Contains(fmt.Sprint(err), "fabric file: ") {
			t.Errorf("ReadFabricFile(%s) = %v, want a usage error wrapping a *FabricFileError, %q...", path, err, want)
		}
		if (fe != nil && fe.Path == "") != (path == missing) {
			t.Errorf("ReadFabricFile(%s): Path %q", path, fe.Path)
		}
	}
}
