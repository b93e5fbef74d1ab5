package query

import (
	"context"
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
		{mad.LIDAddress(4), dropped, "", `no answer from lid 4 via ibsim "sim" at HcaA: dropped or no route (4 attempt(s)): is LID 4 assigned and routed? before a subnet manager has run, only directed routes reach other nodes`},
		{mad.LIDAddress(4), dropped, "--dr", `no answer from lid 4 via ibsim "sim" at HcaA: dropped or no route (4 attempt(s)): is LID 4 assigned and routed? before a subnet manager has run, only directed routes (--dr) reach other nodes`},
		{mad.LIDAddress(9), silent, "", `no answer from lid 9 via ibsim "sim" at HcaA: no reply after 2 attempt(s) of 100ms: is LID 9 assigned and routed? before a subnet manager has run, only directed routes reach other nodes`},
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
