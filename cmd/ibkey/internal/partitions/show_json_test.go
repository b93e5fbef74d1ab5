package partitions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
	"github.com/ibkey/ibkey/internal/check"
)

// showConfigs are partitions files of every shape: the committed examples and lab
// files (rejected, uncertain, CRLF, mgid groups, overflow, both, indx0 ...), 120 files
// drawn by internal/partconf's generator (testdata/partgen.txtar: every construct
// OpenSM accepts), and a large generated one.
func showConfigs(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, g := range []string{"../../../../testdata/partitions/*.conf", "../../../../internal/partconf/testdata/lab/*.conf", "testdata/*.conf"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	dir := t.TempDir()
	drawn, err := txtar.ParseFile("testdata/partgen.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range drawn.Files {
		f := filepath.Join(dir, g.Name)
		if err := os.WriteFile(f, g.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	// The shape of the benchmark's files (internal/tools/partconfgen): 300 ports in 60
	// partitions, each port in 10, member lists over several lines.
	var b strings.Builder
	b.WriteString("Default=0x7fff, ipoib : ALL=full, SELF=full ;\n")
	for k := 0; k < 60; k++ {
		fmt.Fprintf(&b, "part%d=0x%04x, ipoib :", k, k+1)
		for j := 0; j < 50; j++ {
			if j > 0 {
				b.WriteString(",")
				if j%5 == 0 {
					b.WriteString("\n ")
				}
			}
			fmt.Fprintf(&b, " 0x%016x", 0x0002c90300000001+uint64(((k*50+j)*7919)%300)*16)
			if j < 2 {
				b.WriteString("=full")
			}
		}
		b.WriteString(" ;\n")
	}
	big := filepath.Join(dir, "big.conf")
	if err := os.WriteFile(big, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return append(files, big)
}

// TestShowJSONShapes: `partitions show -o json` and `partitions check -o json` on files
// of every shape and with every option that changes them (-W, --sm-guid, a small
// --table-size that drops entries, --previous, --router, extra GUIDs, node names that
// need escaping) follow their schemas, and the ports' entries are the table in index
// order.
func TestShowJSONShapes(t *testing.T) {
	files := showConfigs(t)
	names := map[check.GUID]string{0x0002c90300001001: `node <1> & "quoted" \ ` + "\x01\t\u2028 \xff", 0x0002c90300001002: ""}
	variants := [][]string{
		nil,
		{"--allow-both", "--sm-guid", "0x0002c90300001001"},
		{"--table-size", "3", "0x0002c90300001003", "0x00000000deadbeef"},
		{"--router", "0x0002c90300001002,0x0002c90300000011", "--sm-guid", "0x0002c90300000021"},
	}
	n := 0
	for i, file := range files {
		for v, args := range variants {
			args = append([]string{"show", file, "-o", "json"}, args...)
			if v == 3 || i%7 == 0 {
				args = append(args, "--previous", files[(i+1)%len(files)])
			}
			var out bytes.Buffer
			root := func(f *cmdutil.Factory) *cobra.Command {
				return NewCmdShow(f, func(o *ShowOptions) error {
					s, err := loadShow(o)
					if err != nil {
						return err
					}
					if v == 1 {
						s.names = names
					}
					return s.writeJSON(&out, nil)
				})
			}
			r := cmdtest.Run(t, cmdtest.WithCommands(root), false, nil, args...)
			if r.Code != 0 {
				t.Fatalf("%v: exit %d: %s", args, r.Code, r.Stderr)
			}
			jsonschematest.Validate(t, "partitions-show", out.Bytes())
			var doc showJSON
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			for _, p := range doc.Ports {
				if len(p.Entries) > doc.TableSize {
					t.Fatalf("%v: port %s has %d entries in a table of %d", args, p.PortGUID, len(p.Entries), doc.TableSize)
				}
				for k, e := range p.Entries {
					if e.Index != k {
						t.Fatalf("%v: port %s: entry %d has index %d", args, p.PortGUID, k, e.Index)
					}
				}
			}
			if v == 1 && (!bytes.Contains(out.Bytes(), []byte(`\u003c1\u003e \u0026 \"quoted\"`))) {
				t.Fatalf("%v: node name not escaped as encoding/json escapes it", args)
			}
			if v < 2 {
				cmdtest.Run(t, cmdtest.WithCommands(NewCmdPartitions), false, nil, append([]string{"partitions", "check", "-o", "json"}, args[1:2]...)...)
			}
			n++
		}
	}
	t.Logf("%d documents checked", n)
}
