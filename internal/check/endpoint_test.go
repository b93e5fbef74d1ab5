package check

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func pk(p PKey) *PKey { return &p }
func qk(q QKey) *QKey { return &q }
func ip(i int) *int   { return &i }

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		in   string
		want EndpointSpec
		str  string // canonical form; "" means same as in
	}{
		// P_Key bases, all of ParsePKey's forms.
		{"0x8001", EndpointSpec{Kind: EndpointPKey, PKey: pk(0x8001)}, ""},
		{"8001", EndpointSpec{Kind: EndpointPKey, PKey: pk(0x8001)}, "0x8001"},
		{"80:01", EndpointSpec{Kind: EndpointPKey, PKey: pk(0x8001)}, "0x8001"},
		{"0x1", EndpointSpec{Kind: EndpointPKey, PKey: pk(0x0001)}, "0x0001"},
		{"0X7FFF", EndpointSpec{Kind: EndpointPKey, PKey: pk(0x7fff)}, "0x7fff"},
		{"0x0000", EndpointSpec{Kind: EndpointPKey, PKey: pk(0)}, ""}, // parses; the rules call it invalid
		// Leading zeros do not make a GUID: at most 4 significant digits and not 16 digits.
		{"0x00008001", EndpointSpec{Kind: EndpointPKey, PKey: pk(0x8001)}, "0x8001"},
		{"000000000000001", EndpointSpec{Kind: EndpointPKey, PKey: pk(0x0001)}, "0x0001"}, // 15 digits
		// GUIDs: 16 digits, more than 4 significant digits, colon form, guid=.
		{"0x0002c90300000204", EndpointSpec{Kind: EndpointGUID, GUID: 0x0002c90300000204}, ""},
		{"0002c90300000204", EndpointSpec{Kind: EndpointGUID, GUID: 0x0002c90300000204}, "0x0002c90300000204"},
		{"0x0000000000008001", EndpointSpec{Kind: EndpointGUID, GUID: 0x8001}, ""},
		{"0x18001", EndpointSpec{Kind: EndpointGUID, GUID: 0x18001}, "0x0000000000018001"},
		{"0002:c903:00a1:b2c4", EndpointSpec{Kind: EndpointGUID, GUID: 0x0002c90300a1b2c4}, "0x0002c90300a1b2c4"},
		{"guid=0x2c90300000204", EndpointSpec{Kind: EndpointGUID, GUID: 0x0002c90300000204}, "0x0002c90300000204"},
		{"guid=1", EndpointSpec{Kind: EndpointGUID, GUID: 1}, "0x0000000000000001"},
		{"guid=0002:c903:00a1:b2c4,qp=ud", EndpointSpec{Kind: EndpointGUID, GUID: 0x0002c90300a1b2c4, QPType: QPUD}, "0x0002c90300a1b2c4,qp=ud"},
		// Ports.
		{"mlx5_0/1", EndpointSpec{Kind: EndpointPort, Device: "mlx5_0", Port: 1}, ""},
		{"switch-a/0", EndpointSpec{Kind: EndpointPort, Device: "switch-a", Port: 0}, ""},
		{"mlx4_0/255", EndpointSpec{Kind: EndpointPort, Device: "mlx4_0", Port: 255}, ""},
		{"mlx5_0/01", EndpointSpec{Kind: EndpointPort, Device: "mlx5_0", Port: 1}, "mlx5_0/1"},
		{"8001/1", EndpointSpec{Kind: EndpointPort, Device: "8001", Port: 1}, ""}, // "/" wins over hex
		{"a:b/2", EndpointSpec{Kind: EndpointPort, Device: "a:b", Port: 2}, ""},
		{"mlx5_0/1,index=3", EndpointSpec{Kind: EndpointPort, Device: "mlx5_0", Port: 1, Index: ip(3)}, ""},
		{"mlx5_0/1,pkey=80:01", EndpointSpec{Kind: EndpointPort, Device: "mlx5_0", Port: 1, PKey: pk(0x8001)}, "mlx5_0/1,pkey=0x8001"},
		// DEV:PORT, as NCCL_IB_HCA and UCX_NET_DEVICES write a port; a hex byte on each
		// side is the P_Key colon form.
		{"mlx5_0:1", EndpointSpec{Kind: EndpointPort, Device: "mlx5_0", Port: 1}, "mlx5_0/1"},
		{"mlx5_0:1,pkey=0x8001", EndpointSpec{Kind: EndpointPort, Device: "mlx5_0", Port: 1, PKey: pk(0x8001)}, "mlx5_0/1,pkey=0x8001"},
		{"rxe0:1", EndpointSpec{Kind: EndpointPort, Device: "rxe0", Port: 1}, "rxe0/1"},
		{"ab:1", EndpointSpec{Kind: EndpointPKey, PKey: pk(0xab01)}, "0xab01"},
		// LIDs.
		{"lid=3", EndpointSpec{Kind: EndpointLID, LID: 3}, ""},
		{"lid=0x1a,port=2", EndpointSpec{Kind: EndpointLID, LID: 0x1a, PortNum: ip(2)}, "lid=26,port=2"},
		{"lid=49151,qp=rc", EndpointSpec{Kind: EndpointLID, LID: 0xbfff, QPType: QPRC}, ""},
		// Nodes of a sweep, and GUIDs with a port.
		{"node=HcaB", EndpointSpec{Kind: EndpointNode, Node: "HcaB"}, ""},
		{"node=node01 HCA-1,port=2,qp=ud", EndpointSpec{Kind: EndpointNode, Node: "node01 HCA-1", PortNum: ip(2), QPType: QPUD}, ""},
		{"node=a=b", EndpointSpec{Kind: EndpointNode, Node: "a=b"}, ""},
		{"guid=0x100004,port=1,index=0", EndpointSpec{Kind: EndpointGUID, GUID: 0x100004, PortNum: ip(1), Index: ip(0)}, "0x0000000000100004,port=1,index=0"},
		// Options.
		{"0x8001,qp=ud,qkey=0x11,wr_qkey=80000000,index=0", EndpointSpec{Kind: EndpointPKey, PKey: pk(0x8001), QPType: QPUD, QKey: qk(0x11), WRQKey: qk(0x80000000), Index: ip(0)},
			"0x8001,index=0,qp=ud,qkey=0x00000011,wr_qkey=0x80000000"},
		{"pkey=0x8001,qp=ud,qkey=0x11", EndpointSpec{Kind: EndpointOptions, PKey: pk(0x8001), QPType: QPUD, QKey: qk(0x11)}, "pkey=0x8001,qp=ud,qkey=0x00000011"},
		{"qp=RC,pkey=1", EndpointSpec{Kind: EndpointOptions, PKey: pk(0x0001), QPType: QPRC}, "pkey=0x0001,qp=rc"},
		{"0x8001,qp=uc", EndpointSpec{Kind: EndpointPKey, PKey: pk(0x8001), QPType: QPUC}, ""},
	}
	for _, tt := range tests {
		got, err := ParseEndpoint(tt.in)
		if err != nil {
			t.Errorf("ParseEndpoint(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseEndpoint(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
		wantStr := tt.str
		if wantStr == "" {
			wantStr = tt.in
		}
		if s := got.String(); s != wantStr {
			t.Errorf("ParseEndpoint(%q).String() = %q, want %q", tt.in, s, wantStr)
		}
	}
}

func TestSplitPort(t *testing.T) {
	for in, want := range map[string]string{
		"mlx5_0/1": "mlx5_0 1", "mlx5_0:1": "mlx5_0 1", "hfi1_0:12": "hfi1_0 12", "a:b/2": "a:b 2",
		"80:01": "", "0:1": "", "800:01": "", "efa0:1": "efa0 1", "mlx5_0:x": "", "mlx5_0:": "", ":1": "", "mlx5_0": "", "a:b:c": "",
		"0002:c903:00a1:b2c4": "",
	} {
		dev, port, ok := SplitPort(in)
		got := ""
		if ok {
			got = dev + " " + port
		}
		if got != want {
			t.Errorf("SplitPort(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestParseEndpointErrors(t *testing.T) {
	tests := []struct {
		in    string
		token string // the bad token the message must name
		hint  string // part of the problem or accepted forms
	}{
		{"", `""`, "empty endpoint"},
		{"mlx5_0", `"mlx5_0"`, "DEV/PORT"},
		{"/1", `"/1"`, "empty device name"},
		{"./1", `"./1"`, "not a device name"},
		{"../1", `"../1"`, "not a device name"},
		{"a/b/1", `"a/b/1"`, "one \"/\""},
		{"a\x00b/1", `"a\x00b/1"`, "control character"},
		{"my dev/1", `"my dev/1"`, "space"},
		{strings.Repeat("d", 65) + "/1", "longer than 63", "longer than 63"},
		{"mlx5_0/", `"mlx5_0/"`, "0-255"},
		{"mlx5_0/256", `"mlx5_0/256"`, "0-255"},
		{"mlx5_0/-1", `"mlx5_0/-1"`, "0-255"},
		{"0x1ffff", `"0x1ffff"`, ""}, // 5 significant digits: a GUID, fine... see below
		{"0x", `"0x"`, "no hex digits"},
		{"-1", `"-1"`, "signs"},
		{"80:01:02", `"80:01:02"`, "colon form"},
		{"800:01", `"800:01"`, "more than one byte"},
		{"0002:c903:00a1:b2c", `"0002:c903:00a1:b2c"`, "four hex digits"},
		{"0x12345678901234567", `"0x12345678901234567"`, "more than 16 hex digits"},
		{"0x0000000000000000", `"0x0000000000000000"`, "GUID 0"},
		{"guid=", `""`, "empty value"},
		{"guid=zz", `"zz"`, "not a hex digit"},
		{"lid=0", `"0"`, "unicast"},
		{"lid=0xc000", `"0xc000"`, "unicast"},
		{"lid=-3", `"-3"`, "decimal"},
		{"lid=010", `"010"`, "octal to infiniband-diags (010 is 8)"},
		{"lid=1_0", `"1_0"`, "decimal"},
		{"lid=3,port=256", `"port=256"`, "0-255"},
		{"mlx5_0/1,port=1", `"port=1"`, "lid="},
		{"0x8001,port=1", `"port=1"`, "lid="},
		{"0x8001,qp=xyz", `"qp=xyz"`, "rc, uc or ud"},
		{"0x8001,qp=", `"qp="`, "rc, uc or ud"},
		{"0x8001,index=-1", `"index=-1"`, "0-65535"},
		{"0x8001,index=65536", `"index=65536"`, "0-65535"},
		{"0x8001,index=0x3", `"index=0x3"`, "decimal"},
		{"0x8001,qp=ud,qp=ud", `"qp=ud"`, "given twice"},
		{"0x8001,qkey=1,qkey=2", `"qkey=2"`, "given twice"},
		{"pkey=1,pkey=2", `"pkey=2"`, "given twice"},
		{"0x8001,pkey=0x8001", `"pkey=0x8001"`, "given twice"},
		{"0x8001,color=red", `"color=red"`, "unknown option"},
		{"0x8001,qkey=0x100000000", `"0x100000000"`, "larger than"},
		{"0x8001,wr_qkey=", `""`, "empty value"},
		{"0x8001,", `"0x8001,"`, "empty option"},
		{"0x8001,,qp=ud", `"0x8001,,qp=ud"`, "empty option"},
		{"0x8001,ud", `"ud"`, "KEY=VALUE"},
		{"qp=ud,qkey=0x11", `"qp=ud,qkey=0x11"`, "needs pkey="},
		{"0x8001,guid=1", `"guid=1"`, "put it first"},
		{"lid=3,lid=4", `"lid=4"`, "put it first"},
		{"node=", `"node="`, "empty node name"},
		{"node=" + strings.Repeat("x", 65), `"node=`, "longer than 64"},
		{"node=a\tb", `"node=a\tb"`, "control character"},
		{"0x8001,node=HcaB", `"node=HcaB"`, "put it first"},
		{"=1", `"=1"`, "unknown option"},
		{"mlx5_0/1,pkey=zz", `"zz"`, "hex"},
	}
	for _, tt := range tests {
		if tt.in == "0x1ffff" {
			// Not an error: documents the rule that >4 significant digits make a GUID.
			spec, err := ParseEndpoint(tt.in)
			if err != nil || spec.Kind != EndpointGUID || spec.GUID != 0x1ffff {
				t.Errorf("ParseEndpoint(%q) = %+v, %v; want GUID 0x1ffff", tt.in, spec, err)
			}
			continue
		}
		_, err := ParseEndpoint(tt.in)
		if err == nil {
			t.Errorf("ParseEndpoint(%q) succeeded, want an error", tt.in)
			continue
		}
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("ParseEndpoint(%q) error %T is not a *ParseError: %v", tt.in, err, err)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") {
			t.Errorf("ParseEndpoint(%q) error is not one line: %q", tt.in, msg)
		}
		if !strings.Contains(msg, tt.token) {
			t.Errorf("ParseEndpoint(%q) error %q does not name %s", tt.in, msg, tt.token)
		}
		if !strings.Contains(msg, tt.hint) {
			t.Errorf("ParseEndpoint(%q) error %q does not say %q", tt.in, msg, tt.hint)
		}
		if pe.Accepted == "" {
			t.Errorf("ParseEndpoint(%q) error names no accepted forms: %q", tt.in, msg)
		}
	}
}

func TestParseEndpointDeviceLength(t *testing.T) {
	dev := strings.Repeat("d", MaxDeviceName)
	spec, err := ParseEndpoint(dev + "/1")
	if err != nil || spec.Device != dev {
		t.Fatalf("a %d-byte device name: %+v, %v", MaxDeviceName, spec, err)
	}
	// 64 bytes is IB_DEVICE_NAME_MAX with no room for the NUL: no device has that name.
	long := strings.Repeat("d", 64) + "/1"
	if spec, err := ParseEndpoint(long); err == nil || !strings.Contains(err.Error(), "longer than 63 bytes") {
		t.Errorf("ParseEndpoint(%q) = %+v, %v; want a device name longer than 63 bytes refused", long, spec, err)
	}
}

func FuzzParseEndpoint(f *testing.F) {
	// The committed corpus in testdata/fuzz/FuzzParseEndpoint holds more seeds.
	for _, s := range []string{"0x8001", "mlx5_0/1,index=3", "lid=3,port=1", "pkey=80:01,qp=ud,qkey=0x11,wr_qkey=0x80000000", "node=HcaB,port=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseEndpoint(s)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseEndpoint(%q): error %T is not a *ParseError", s, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseEndpoint(%q): error is not one line: %q", s, err)
			}
			return
		}
		canon := spec.String()
		again, err := ParseEndpoint(canon)
		if err != nil {
			t.Fatalf("ParseEndpoint(%q) ok, but its String() %q does not parse: %v", s, canon, err)
		}
		if diff := cmp.Diff(spec, again); diff != "" {
			t.Fatalf("round trip %q -> %q changed the spec (-first +again):\n%s", s, canon, diff)
		}
		if again.String() != canon {
			t.Fatalf("String() not stable: %q then %q", canon, again.String())
		}
	})
}

// TestResolvePKeyWithUnreadEntries: pkey= whose key is in no entry read, with entries
// not read, is an endpoint whose entry was not read (EntryNotRead: an unknown verdict),
// never a definite ResolveError; with every entry read it is one (moved from
// internal/fabric in wave 10, where it asserted ResolveError.Unknown).
func TestResolvePKeyWithUnreadEntries(t *testing.T) {
	spec, err := ParseEndpoint("mlx5_0/1,pkey=0x0005")
	if err != nil {
		t.Fatal(err)
	}
	table := []TableEntry{{Index: 0, PKey: 0xffff, Readable: true}, {Index: 1}}
	e, err := spec.Endpoint("", table)
	if err != nil || e.Port || len(e.Entries) != 0 || !strings.Contains(e.EntryNotRead, "partition 0x0005; 1 entry could not be read") {
		t.Errorf("unread entry: %+v, %v; want an endpoint whose entry was not read", e, err)
	}
	if v := CanTalk(e, QPEndpoint("B", 0x8005, QPAny)); v.Kind != VerdictUnknown || len(v.NotChecked) != 1 || v.NotChecked[0].Cause != NotCheckedEntries {
		t.Errorf("unread entry: verdict %s, not checked %+v; want unknown on entries", v.Kind, v.NotChecked)
	}
	// Key 0 matches no entry (IBA 10.9), read or not: a definite no (wave 12; it was
	// an unknown).
	for _, k := range []string{"0x0000", "0x8000"} {
		zero, err := ParseEndpoint("mlx5_0/1,pkey=" + k)
		if err != nil {
			t.Fatal(err)
		}
		var re *ResolveError
		if e, err := zero.Endpoint("", table); !errors.As(err, &re) || e.EntryNotRead != "" {
			t.Errorf("pkey=%s, unread entry: %+v, %v; want a definite ResolveError", k, e, err)
		}
	}
	table[1] = TableEntry{Index: 1, PKey: 0x8001, Readable: true}
	var re *ResolveError
	if _, err = spec.Endpoint("", table); !errors.As(err, &re) {
		t.Errorf("all read: %v, want a definite ResolveError", err)
	}
}
