package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/query"
)

const mlx5 = "../../../../testdata/sysfs/mlx5"

// testMAD is the MAD flags at their defaults, with env as the environment.
func testMAD(env map[string]string) *MADFlags {
	f := NewFactory(&IOStreams{Out: &strings.Builder{}, ErrOut: &strings.Builder{}}, func(k string) string { return env[k] }, time.Now)
	return &MADFlags{f: f, MADSettings: &MADSettings{MADTimeout: time.Second, MADRetries: 3}}
}

// TestParseLIDFlag: --lid's errors are usage errors naming the flag and what is
// accepted (the parser itself: query.ParseLIDList).
func TestParseLIDFlag(t *testing.T) {
	if got, err := ParseLIDFlag("1,3-5,4,1"); err != nil || !reflect.DeepEqual(got, []uint16{1, 3, 4, 5}) {
		t.Errorf("ParseLIDFlag: %v, %v", got, err)
	}
	for _, in := range []string{"", "0", "49152", "0xffff", "5-3", "3-", "-3", "a", "3,,4", "1-49151,x"} {
		if got, err := ParseLIDFlag(in); err == nil {
			t.Errorf("ParseLIDFlag(%q) = %v, want an error", in, got)
		} else if !strings.HasPrefix(err.Error(), "invalid --lid ") || !strings.Contains(err.Error(), "accepted:") || ExitCode(err) != ExitUsage {
			t.Errorf("ParseLIDFlag(%q): %v (exit %d), want invalid --lid ... accepted, exit 2", in, err, ExitCode(err))
		}
	}
}

// Without --ca, MADs go out of the first ACTIVE InfiniBand port; umad's refusals
// reach the user with what to do, as environment errors (exit 3).
func TestOpenFabricUmad(t *testing.T) {
	m := testMAD(nil)
	m.f.SysfsDir = mlx5
	var gotDev string
	var gotPort int
	m.OpenUmad = func(dev string, port int, o mad.UmadOptions) (mad.Transport, error) {
		gotDev, gotPort = dev, port
		if o.SysfsRoot != mlx5 {
			t.Errorf("umad sysfs root %q, want %q", o.SysfsRoot, mlx5)
		}
		return nil, fmt.Errorf("umad: open /dev/infiniband/umad0: permission denied: needs root or membership of group \"rdma\", which owns /dev/infiniband/umad0: %w", fs.ErrPermission)
	}
	_, err := m.Open(context.Background())
	var env *query.EnvError
	if !errors.As(err, &env) || !strings.Contains(err.Error(), "needs root or membership of group \"rdma\"") {
		t.Errorf("Open: %v, want an EnvError with the reason", err)
	}
	if ExitCode(err) != ExitEnv {
		t.Errorf("exit code %d, want %d", ExitCode(err), ExitEnv)
	}
	// mlx5_0/1 is the first ACTIVE InfiniBand port (irdma0 comes first, but is iWARP).
	if gotDev != "mlx5_0" || gotPort != 1 {
		t.Errorf("default port %s/%d, want mlx5_0/1", gotDev, gotPort)
	}
	m.CA, m.CAPort = "mlx5_1", 2
	if _, err := m.Open(context.Background()); err == nil || gotDev != "mlx5_1" || gotPort != 2 {
		t.Errorf("--ca mlx5_1 --ca-port 2: opened %s/%d (%v)", gotDev, gotPort, err)
	}

	// A host with no ACTIVE InfiniBand port lists what it has.
	dir := t.TempDir()
	port := filepath.Join(dir, "class/infiniband/dev0/ports/1")
	if err := os.MkdirAll(port, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"state": "1: DOWN\n", "link_layer": "InfiniBand\n"} {
		if err := os.WriteFile(filepath.Join(port, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m = testMAD(nil)
	m.f.SysfsDir = dir
	m.OpenUmad = func(string, int, mad.UmadOptions) (mad.Transport, error) { return nil, errors.New("opened") }
	_, err = m.Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no ACTIVE InfiniBand port to send MADs from (ports: dev0/1 InfiniBand DOWN); choose one with --ca DEV --ca-port N") || ExitCode(err) != ExitEnv {
		t.Errorf("no active port: %v", err)
	}
}

func TestIbsimBase(t *testing.T) {
	cases := []struct {
		flag string
		env  map[string]string
		want string
	}{
		{"", nil, ""},
		{"sim", nil, "sim"},
		{"sim", map[string]string{"IBSIM_SOCKNAME": "lab7"}, "lab7"},
		{"other", map[string]string{"IBSIM_SOCKNAME": "lab7"}, "other"},
		{"", map[string]string{"IBKEY_IBSIM": "1"}, "sim"},
		{"", map[string]string{"IBKEY_IBSIM": "1", "IBSIM_SOCKNAME": "lab7"}, "lab7"},
		{"", map[string]string{"IBKEY_IBSIM": "x"}, "x"},
		{"y", map[string]string{"IBKEY_IBSIM": "x"}, "y"},
	}
	for _, tc := range cases {
		m := testMAD(tc.env)
		m.Ibsim = tc.flag
		if got := m.IbsimBase(); got != tc.want {
			t.Errorf("--ibsim=%q env %v: base %q, want %q", tc.flag, tc.env, got, tc.want)
		}
	}
}

// TestUmadErrorHint: the --ibsim hint goes with mad.ErrNoUmadDevice (matched by type,
// not by the message), never with a permission error.
func TestUmadErrorHint(t *testing.T) {
	const hint = "; without InfiniBand hardware, query a simulated fabric with --ibsim"
	_, noDev := mad.FindUmadPort(t.TempDir(), "mlx5_0", 1)
	for _, tc := range []struct {
		name string
		err  error
		hint bool
	}{
		{"no umad device", noDev, true},
		{"wrapped", fmt.Errorf("open: %w", noDev), true},
		{"permission", fmt.Errorf("umad: open /dev/infiniband/umad0: %w", fs.ErrPermission), false},
		{"other", errors.New("umad: eventfd: too many open files"), false},
	} {
		want := tc.err.Error()
		if tc.hint {
			want += hint
		}
		if got := umadErrorText(tc.err); got != want {
			t.Errorf("%s: %q, want %q", tc.name, got, want)
		}
	}
}

// noReply is a transport on which every MAD is dropped.
type noReply struct{}

func (noReply) Do(context.Context, mad.Request) (*mad.Packet, error) {
	return nil, &mad.TimeoutError{Attempts: 4, Timeout: time.Second, Dropped: true}
}
func (noReply) Close() error { return nil }

// TestFabricNoAnswerHint: query's error for a LID that got no answer names no flag;
// the fabric the MAD flags open has it suggest --dr, in the words users saw before.
func TestFabricNoAnswerHint(t *testing.T) {
	m := testMAD(nil)
	m.f.SysfsDir = mlx5
	m.OpenUmad = func(string, int, mad.UmadOptions) (mad.Transport, error) { return noReply{}, nil }
	fab, err := m.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = fab.Load(context.Background(), query.FabricSelector{Addr: mad.LIDAddress(4)}, query.LoadOptions{})
	const want = "no answer from lid 4 via mlx5_0/1: dropped or no route (4 attempt(s)): is the LID assigned and routed? before a subnet manager has run, only directed routes (--dr) reach other nodes"
	var na *query.NoAnswerError
	if err == nil || err.Error() != want || !errors.As(err, &na) || ExitCode(err) != ExitEnv {
		t.Errorf("no answer: %v (exit %d)\nwant %s (exit %d)", err, ExitCode(err), want, ExitEnv)
	}
}

// TestSimNodeTooLong (issue 28 item 7): a --sim-node longer than the 31 bytes ibsim's
// CONNECT carries is bad input (exit 2) found before attaching, not an attach failure.
func TestSimNodeTooLong(t *testing.T) {
	m := testMAD(nil)
	m.Ibsim, m.SimNode = "sim", strings.Repeat("n", mad.MaxSimNodeLen+1)
	m.DialIbsim = func(context.Context, mad.IbsimOptions) (mad.Transport, string, error) {
		t.Fatal("dialled")
		return nil, "", nil
	}
	_, err := m.Open(context.Background())
	if err == nil || ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "invalid --sim-node") {
		t.Errorf("%v (exit %d), want invalid --sim-node, exit 2", err, ExitCode(err))
	}
	m.SimNode = strings.Repeat("n", mad.MaxSimNodeLen)
	m.DialIbsim = func(context.Context, mad.IbsimOptions) (mad.Transport, string, error) { return noReply{}, "n", nil }
	if fab, err := m.Open(context.Background()); err != nil {
		t.Errorf("a 31-byte node: %v", err)
	} else {
		fab.T.Close()
	}
}

// TestIbsimWithoutAddressHint (issue 25 item 7): --ibsim given to a command that then
// reads the local host (no address) says how it reaches the simulated fabric, with the
// address flags the command has, besides the sysfs advice.
func TestIbsimWithoutAddressHint(t *testing.T) {
	f := NewFactory(&IOStreams{Out: &strings.Builder{}, ErrOut: &strings.Builder{}}, func(string) string { return "" }, time.Now)
	f.SysfsDir = t.TempDir() // no class/infiniband
	c := &cobra.Command{Use: "pkeys"}
	var a AddressFlags
	a.RegisterFor(c, f)
	AddMADFlags(c, f)
	other := &cobra.Command{Use: "other"}
	AddMADFlags(other, f) // another command's flags, not parsed: not consulted
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "(is the ib_core module loaded? " + NoDevicesHint + ")"},
		{[]string{"--ibsim=lab"}, "(is the ib_core module loaded? with --ibsim, 'pkeys' reads the simulated fabric only through --lid, --dr or --guid, and this host's sysfs otherwise; or " + NoDevicesHint + ")"},
	} {
		c.Flags().Set("ibsim", "") // reset
		if err := c.ParseFlags(tc.args); err != nil {
			t.Fatal(err)
		}
		_, err := f.Host().Devices("")
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("%v: %v, want ...%s", tc.args, err, tc.want)
		}
	}
}
