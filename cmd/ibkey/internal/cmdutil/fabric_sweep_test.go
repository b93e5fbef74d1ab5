package cmdutil

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

// TestPartialResult: a complete fabric keeps the command's result; a partial one (a
// failed read, a link with no answer, a sweep cut short, tables a needing command
// does not have) is exit 4 with one line naming the gaps; an error that is not an
// exit code (a write error) wins.
func TestPartialResult(t *testing.T) {
	sw := check.GUID(0x200000)
	mkFabric := func(edit func(f *fabric.Fabric, p *fabric.Port)) *fabric.Fabric {
		p := &fabric.Port{Num: 0, GUID: sw, State: check.StateActive, PKeys: []check.PKey{0xffff}, TableSize: 32}
		f := &fabric.Fabric{Nodes: []*fabric.Node{{GUID: sw, Type: check.NodeSwitch, NumPorts: 1, Description: "Sw", Ports: []*fabric.Port{p}}}}
		if edit != nil {
			edit(f, p)
		}
		return f
	}
	writeErr := errors.New("write: broken pipe")
	tests := []struct {
		name       string
		f          *fabric.Fabric
		needTables bool
		in         error
		code       int
		stderr     string
	}{
		{"complete", mkFabric(nil), true, nil, 0, ""},
		{"complete, the command's no", mkFabric(nil), true, Exit(ExitNo), ExitNo, ""},
		{"a table read failed", mkFabric(func(f *fabric.Fabric, p *fabric.Port) { p.PKeys, p.PKeysError = nil, "P_KeyTable: timeout" }), true, nil, 4, "partial sweep: 1 P_Key table not read"},
		{"a link with no answer, the command's no", mkFabric(func(f *fabric.Fabric, p *fabric.Port) {
			f.Unreachable = []fabric.Unreachable{{From: check.PortID{Node: sw, Port: 1}, Path: "0,1", Error: "no reply"}}
		}), true, Exit(ExitNo), 4, `1 link with no answer from the far end (the nodes behind them are missing): behind "Sw"[1] (DR path 0,1): no reply`},
		{"stopped early", mkFabric(func(f *fabric.Fabric, p *fabric.Port) { f.Incomplete = "context deadline exceeded after 1s" }), false, nil, 4, "the sweep stopped early (context deadline exceeded after 1s)"},
		{"no tables, needed", mkFabric(func(f *fabric.Fabric, p *fabric.Port) { p.PKeys = nil }), true, nil, 4, "1 P_Key table not in the sweep (made with --no-tables)"},
		{"no tables, not needed", mkFabric(func(f *fabric.Fabric, p *fabric.Port) { p.PKeys = nil }), false, nil, 0, ""},
		{"a DOWN port's table is not a gap", mkFabric(func(f *fabric.Fabric, p *fabric.Port) { p.PKeys, p.State = nil, check.StateDown }), true, nil, 0, ""},
		{"a write error wins", mkFabric(func(f *fabric.Fabric, p *fabric.Port) { f.Incomplete = "stopped" }), true, writeErr, ExitUsage, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := PartialResult(NewNotices(&b, false), tc.f, tc.needTables, tc.in)
			if tc.in == writeErr {
				if err != writeErr {
					t.Errorf("got %v, want the write error", err)
				}
				return
			}
			if code := ExitCode(err); code != tc.code {
				t.Errorf("exit %d, want %d (%v)", code, tc.code, err)
			}
			if !strings.Contains(b.String(), tc.stderr) || (tc.stderr == "") != (b.Len() == 0) {
				t.Errorf("stderr %q, want %q", b.String(), tc.stderr)
			}
		})
	}
}
