package partitions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/partconf/partgen"
)

// showConfigs are partitions files of every shape: the committed examples and lab
// files (rejected, uncertain, CRLF, mgid groups, overflow, both, indx0 ...), files
// drawn by partgen (every construct OpenSM accepts), and a large generated one.
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
	rng := rand.New(rand.NewPCG(15, 2026))
	guids := make([]uint64, 24)
	for i := range guids {
		guids[i] = 0x0002c90300001001 + uint64(i)
	}
	for i := 0; i < 120; i++ {
		f := filepath.Join(dir, fmt.Sprintf("gen%d.conf", i))
		if err := os.WriteFile(f, []byte(partgen.Config(rng, partgen.Options{Ports: guids})), 0o644); err != nil {
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

// TestShowJSONMatchesStructs: the streamed document of `partitions show -o json` is byte
// for byte what encoding/json writes for the document's structs (show_structs_test.go),
// compact and indented, on files of every shape and with every option that changes
// it (-W, --sm-guid, a small --table-size that drops entries, --previous, --router,
// extra GUIDs, node names that need escaping), encoded by one goroutine or several;
// and it follows the schema.
func TestShowJSONMatchesStructs(t *testing.T) {
	// The large file's ports and partitions are encoded in runs by three goroutines,
	// whatever GOMAXPROCS is; the small files' in one.
	defer func(f func() int) { arrayWorkers = f }(arrayWorkers)
	arrayWorkers = func() int { return 3 }
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
			var got, gotIndent, want, wantIndent []byte
			root := func(f *cmdutil.Factory) *cobra.Command {
				return NewCmdShow(f, func(o *ShowOptions) error {
					s, err := loadShow(o)
					if err != nil {
						return err
					}
					if v == 1 {
						s.names = names
					}
					var b bytes.Buffer
					if err := s.writeJSON(&b, false); err != nil {
						return err
					}
					got = append([]byte(nil), b.Bytes()...)
					b.Reset()
					if err := s.writeJSON(&b, true); err != nil {
						return err
					}
					gotIndent = append([]byte(nil), b.Bytes()...)
					b.Reset()
					if err := json.NewEncoder(&b).Encode(s.structJSON()); err != nil {
						return err
					}
					want = append([]byte(nil), b.Bytes()...)
					b.Reset()
					if err := cmdutil.WriteJSON(&b, s.structJSON()); err != nil {
						return err
					}
					wantIndent = b.Bytes()
					return nil
				})
			}
			r := cmdtest.Run(t, cmdtest.WithCommands(root), false, nil, args...)
			if r.Code != 0 {
				t.Fatalf("%v: exit %d: %s", args, r.Code, r.Stderr)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%v: compact JSON differs from encoding/json's:\n%s\nwant:\n%s", args, firstDiff(got, want), firstDiff(want, got))
			}
			if !bytes.Equal(gotIndent, wantIndent) {
				t.Fatalf("%v: indented JSON differs from encoding/json's:\n%s\nwant:\n%s", args, firstDiff(gotIndent, wantIndent), firstDiff(wantIndent, gotIndent))
			}
			if bytes.Count(got, []byte{'\n'}) != 1 {
				t.Fatalf("%v: compact JSON is not one line", args)
			}
			if n%40 == 0 {
				jsonschematest.Validate(t, "partitions-show", got)
			}
			n++
		}
	}
	t.Logf("%d documents compared", n)
}

// firstDiff is a's text around the first byte where it differs from b.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return string(a[max(0, i-200):min(len(a), i+200)])
}
