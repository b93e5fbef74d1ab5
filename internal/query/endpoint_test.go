package query

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/partconf"
)

const mlx5Fixture = "../../testdata/sysfs/mlx5"

func specs(t testing.TB, in ...string) []check.EndpointSpec {
	t.Helper()
	out := make([]check.EndpointSpec, len(in))
	for i, s := range in {
		spec, err := check.ParseEndpoint(s)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = spec
	}
	return out
}

func fixtureHost(calls *int) func() *Host {
	return func() *Host {
		*calls++
		return &Host{Sys: ibverbs.Open(mlx5Fixture)}
	}
}

func TestResolveEndpoints(t *testing.T) {
	tests := []struct {
		a, b      string
		hostCalls int
		// want: per endpoint, port?, "index:pkey" of each entry (ports: valid count).
		wantA, wantB string
	}{
		{"0x8001", "pkey=0x0001,qp=ud,qkey=0x11", 0, "-1:0x8001", "-1:0x0001"},
		{"0x8001,index=7", "80:02", 0, "7:0x8001", "-1:0x8002"},
		{"mlx5_0/1", "mlx5_1/1", 1, "port:128", "port:128"},
		{"mlx5_0/1,index=4", "mlx5_0/1", 1, "4:0x8005", "port:128"},
		// pkey= on a port picks the entry a QP would use: the full one.
		{"mlx5_0/1,pkey=0x0005", "0x1", 1, "4:0x8005", "-1:0x0001"},
		// Only a limited entry is read (index 2) and entry 3 was not: the kernel may
		// pick a full one there, so the index is not known (findEntry, wave 11).
		{"mlx5_1/1,pkey=0x8002", "0x1", 1, "-1:0x0002", "-1:0x0001"},
	}
	for _, tt := range tests {
		calls := 0
		got, err := ResolveEndpointsFrom(EndpointSources{Host: fixtureHost(&calls)}, specs(t, tt.a, tt.b)...)
		if err != nil {
			t.Errorf("%s %s: %v", tt.a, tt.b, err)
			continue
		}
		if calls != tt.hostCalls {
			t.Errorf("%s %s: host read %d times, want %d", tt.a, tt.b, calls, tt.hostCalls)
		}
		for i, want := range []string{tt.wantA, tt.wantB} {
			e := got[i].Endpoint
			var desc string
			if e.Port {
				desc = "port:" + strconv.Itoa(len(e.Entries))
			} else {
				desc = strconv.Itoa(e.Entries[0].Index) + ":" + e.Entries[0].PKey.String()
			}
			if desc != want {
				t.Errorf("%s %s: endpoint %d = %s, want %s", tt.a, tt.b, i, desc, want)
			}
			if isPort := got[i].Spec.Kind == check.EndpointPort; (got[i].View != nil) != isPort {
				t.Errorf("%s %s: endpoint %d: view %v for a port spec %v", tt.a, tt.b, i, got[i].View != nil, isPort)
			}
		}
	}
}

func TestResolveEndpointsErrors(t *testing.T) {
	tests := []struct {
		a, b string
		kind string // usage, notfound, env, resolve
		msg  string
	}{
		{"lid=3", "0x8001", "usage", `endpoint "lid=3" is a port read over the fabric (LID 3): it needs fabric access`},
		// The command names the flags that give the source (can-talk's TestSourceFlags).
		{"0x8001", "0x0002c90300000204", "usage", "resolving a GUID needs a partitions.conf"},
		{"guid=0x2c90300000204", "0x8001", "usage", "resolving a GUID needs a partitions.conf"},
		{"mlx5_9/1", "0x8001", "notfound", "no device mlx5_9 (devices: irdma0, mlx5_0, mlx5_1, mlx5_2)"},
		{"mlx5_0/3", "0x8001", "notfound", "no port 3 on mlx5_0 (ports: 1)"},
		{"irdma0/1", "0x8001", "env", "irdma0/1: no P_Key table"},
		// Not read: exit 4, never 3 (red-team finding 8).
		{"mlx5_0/1,index=200", "0x8001", "resolve", "no P_Key table entry at index 200 (indexes 0-127)"},
		{"mlx5_0/1,index=3", "0x8001", "resolve", "index 3 holds 0x0000, an empty entry (a hole, typically left by a removed partition)"},
		{"mlx5_0/1,index=6", "0x8001", "resolve", "index 6 holds 0x8000, an empty entry (a hole"},
		{"mlx5_0/1,index=100", "0x8001", "resolve", "index 100 holds 0x0000, an empty entry: a QP using it sends key 0"},
		{"mlx5_0/1,index=1,pkey=0x0002", "0x8001", "resolve", "index 1 holds 0x8001, not partition 0x0002"},
		{"mlx5_0/1,pkey=0x0009", "0x8009", "resolve", "no valid P_Key table entry for partition 0x0009"},
		// A missing device is reported before a key missing from the other table.
		{"mlx5_0/1,pkey=0x0009", "mlx5_9/1", "notfound", "no device mlx5_9"},
	}
	for _, tt := range tests {
		calls := 0
		_, err := ResolveEndpointsFrom(EndpointSources{Host: fixtureHost(&calls)}, specs(t, tt.a, tt.b)...)
		var (
			usage    *UsageError
			notFound *NotFoundError
			env      *EnvError
			unknown  *UnknownError
			resolve  *check.ResolveError
		)
		ok := false
		switch tt.kind {
		case "usage":
			ok = errors.As(err, &usage)
			if calls != 0 {
				t.Errorf("%s %s: read the host for an unsupported form", tt.a, tt.b)
			}
		case "notfound":
			ok = errors.As(err, &notFound)
		case "env":
			ok = errors.As(err, &env)
		case "unknown":
			ok = errors.As(err, &unknown)
		case "resolve":
			ok = errors.As(err, &resolve)
		}
		if !ok || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s %s: error %T %v, want %s error with %q", tt.a, tt.b, err, err, tt.kind, tt.msg)
		}
	}
}

func TestEndpointLabels(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"0x8001", "0x0001"}, "0x8001|0x0001"},
		{[]string{"pkey=0x8001,qp=ud,qkey=0x11", "80:01,qp=ud"}, "A (0x8001)|B (0x8001)"},
		{[]string{"mlx5_0/1,index=2", "mlx5_1/1,pkey=0x8001"}, "mlx5_0/1|mlx5_1/1"},
		{[]string{"mlx5_0/1", "mlx5_0/1"}, "A (mlx5_0/1)|B (mlx5_0/1)"},
		{[]string{"lid=3", "0x8001"}, "lid=3|0x8001"},
	}
	for _, tt := range tests {
		if got := strings.Join(endpointLabels(specs(t, tt.in...)...), "|"); got != tt.want {
			t.Errorf("%q: labels %s, want %s", tt.in, got, tt.want)
		}
	}
}

// BenchmarkCanTalk128 is `ibkey can-talk DEV/1 DEV/2` for two 128-entry tables: read both
// ports, resolve, apply the rules.
func BenchmarkCanTalk128(b *testing.B) {
	dir := b.TempDir() + "/sys"
	if err := fakesysfs.Write(dir, fakesysfs.Large(1, 2, 128)); err != nil {
		b.Fatal(err)
	}
	sp := specs(b, "mlx5_0/1", "mlx5_0/2")
	host := func() *Host { return &Host{Sys: ibverbs.Open(dir)} }
	b.ReportAllocs()
	for b.Loop() {
		eps, err := ResolveEndpointsFrom(EndpointSources{Host: host}, sp...)
		if err != nil {
			b.Fatal(err)
		}
		if v := check.CanTalk(eps[0].Endpoint, eps[1].Endpoint); !v.CanTalk() || len(v.Shared) != 13 {
			b.Fatalf("verdict %v, %d shared", v.CanTalk(), len(v.Shared))
		}
	}
}

// TestEndpointSourceErrors: an endpoint without its source is a *UsageError wrapping an
// *EndpointSourceError that says what it needs (errors.Is) and names no flag: the
// command adds those.
func TestEndpointSourceErrors(t *testing.T) {
	parts := NewPartitions(partconf.Parse("p.conf", []byte("Default=0x7fff : ALL=full;\n")), partconf.Options{TableSize: 128})
	tests := []struct {
		endpoint string
		parts    *Partitions
		need     error
		msg      string
	}{
		{"0x0002c90300000204", nil, ErrGUIDNeedsSource, `endpoint "0x0002c90300000204" is a port GUID (0x0002c90300000204): resolving a GUID needs a partitions.conf (the tables the SM would program), a saved sweep or a fabric to sweep; or use DEV/PORT for a local port or a P_Key value`},
		{"0x10000", nil, ErrGUIDNeedsSource, `endpoint "0x0000000000010000" is a port GUID (0x0000000000010000) (if you meant a P_Key: a P_Key is at most 0xffff): resolving a GUID needs`},
		{"lid=3", nil, ErrLIDNeedsFabric, `endpoint "lid=3" is a port read over the fabric (LID 3): it needs fabric access (MADs) or a saved sweep; use DEV/PORT for a local port or the P_Key the remote QP uses`},
		{"node=HcaA", nil, ErrNodeNeedsSweep, `endpoint "node=HcaA" names a node of the fabric: it needs a sweep (fabric access, or a saved sweep)`},
		{"0x0002c90300000204,index=1", parts, ErrIndexNeedsSweep, `endpoint "0x0002c90300000204,index=1": index= and port= need a port of a sweep; resolved against a partitions.conf, a GUID is a member of it, which has no table index`},
	}
	for _, tt := range tests {
		calls := 0
		_, err := ResolveEndpointsFrom(EndpointSources{Host: fixtureHost(&calls), Partitions: tt.parts}, specs(t, tt.endpoint, "0x8001")...)
		var (
			usage *UsageError
			src   *EndpointSourceError
		)
		if !errors.As(err, &usage) || !errors.As(err, &src) || !errors.Is(err, tt.need) {
			t.Errorf("%s: error %T %v, want a *UsageError wrapping an *EndpointSourceError for %v", tt.endpoint, err, err, tt.need)
			continue
		}
		if calls != 0 {
			t.Errorf("%s: read the host", tt.endpoint)
		}
		// Resolving names the endpoint by its spec (the command passes the token typed).
		if src.Token != src.Spec.String() || src.Spec.Kind != specs(t, tt.endpoint)[0].Kind {
			t.Errorf("%s: token %q, spec %s", tt.endpoint, src.Token, src.Spec)
		}
		if !strings.HasPrefix(err.Error(), tt.msg) || strings.Contains(err.Error(), "--") {
			t.Errorf("%s: %q, want %q and no flag", tt.endpoint, err, tt.msg)
		}
		for _, other := range []error{ErrGUIDNeedsSource, ErrLIDNeedsFabric, ErrNodeNeedsSweep, ErrIndexNeedsSweep} {
			if other != tt.need && errors.Is(err, other) {
				t.Errorf("%s: is also %v", tt.endpoint, other)
			}
		}
	}
	// CheckResolvable answers the same for the forms that need a source, nil for others.
	for _, tok := range []string{"0x8001", "mlx5_0/1", "pkey=0x8001,qp=ud"} {
		if err := CheckResolvable(tok, specs(t, tok)[0]); err != nil {
			t.Errorf("CheckResolvable(%s) = %v", tok, err)
		}
	}
	if err := CheckResolvable("node=X", specs(t, "node=X")[0]); !errors.Is(err, ErrNodeNeedsSweep) {
		t.Errorf("CheckResolvable(node=X) = %v", err)
	}
}

// TestSweptPortViewNodeType: a swept port's device carries its node's type, as a
// device read over MADs does; a type the sweep does not have is missing, never a
// present type 0 (which an unset ibverbs.Opt would read as).
func TestSweptPortViewNodeType(t *testing.T) {
	for _, c := range []struct {
		typ  check.NodeType
		num  int
		name string
	}{{check.NodeCA, 1, "CA"}, {check.NodeSwitch, 2, "switch"}, {check.NodeRouter, 3, "router"}, {"", 0, ""}} {
		n := &fabric.Node{GUID: 0xa, Type: c.typ, Description: "n"}
		v := sweptPortView(n, &fabric.Port{Num: 1, State: check.StateActive})
		nt := v.Device.NodeType
		if c.num == 0 && nt.OK() || c.num != 0 && (!nt.OK() || nt.Value.Num != c.num || nt.Value.Name != c.name) {
			t.Errorf("type %q: %+v", c.typ, nt)
		}
	}
}
