package decode

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
)

// NewCmdPKey is `ibkey decode pkey`; runF replaces the run function in tests.
func NewCmdPKey(f *cmdutil.Factory, runF func(*DecodeOptions) error) *cobra.Command {
	return newValuesCmd(f, &cobra.Command{
		Use:   "pkey VALUE...",
		Short: "Explain P_Key values: membership, 15-bit key, validity, default",
		Long: `Explain P_Key values. Bit 15 is the membership (1 full, 0 limited), bits 0-14 the
key. Key 0 is invalid (0x0000, 0x8000); key 0x7fff is the default partition (0xffff
full, 0x7fff limited). Values are hex with or without 0x, or the colon form 80:01.

JSON (-o json; schemas/decode-pkey.schema.json): {"schema_version","pkeys":[{"value",
"key","membership","valid","default","notes"}]}.`,
		Example: "  ibkey decode pkey 0x8001 7fff 80:02",
	}, runF, runDecodePKey)
}

var pkeyDecoding = decoding[check.PKeyDecoding]{
	parse: func(s string) (check.PKeyDecoding, error) {
		p, err := check.ParsePKey(s)
		if err != nil {
			return check.PKeyDecoding{}, err
		}
		return check.DecodePKey(p), nil
	},
	json: func(out []check.PKeyDecoding) any {
		return struct {
			Schema cmdutil.SchemaVersion `json:"schema_version"`
			PKeys  []pkeyJSON            `json:"pkeys"`
		}{cmdutil.SchemaVersion{}, mapSlice(out, func(d check.PKeyDecoding) pkeyJSON {
			var m *string
			if d.Membership != "" {
				m = &d.Membership
			}
			return pkeyJSON{d.Value, d.Key, m, d.Valid, d.Default, cmdutil.List(d.Notes)}
		})}
	},
	header: []string{"VALUE", "KEY", "MEMBERSHIP", "VALID", "DEFAULT"},
	row: func(d check.PKeyDecoding) []string {
		return []string{d.Value, d.Key, membership(d), cmdutil.YesNo(d.Valid), cmdutil.YesNo(d.Default)}
	},
	text: func(w io.Writer, d check.PKeyDecoding) {
		fmt.Fprintf(w, "P_Key %s\n", d.Value)
		fmt.Fprintf(w, "  key         %s\n  membership  %s\n  valid       %s\n  default     %s\n",
			d.Key, membership(d), cmdutil.YesNo(d.Valid), cmdutil.YesNo(d.Default))
	},
	notes: func(d check.PKeyDecoding) []string { return d.Notes },
}

func runDecodePKey(o *DecodeOptions) error { return pkeyDecoding.run(o) }

// pkeyJSON is one value of `decode pkey -o json`.
type pkeyJSON struct {
	Value      string   `json:"value"`
	Key        string   `json:"key"`
	Membership *string  `json:"membership"` // null for key 0
	Valid      bool     `json:"valid"`
	Default    bool     `json:"default"`
	Notes      []string `json:"notes"`
}

// membership is d's membership as text: "-" for key 0, which names no partition.
func membership(d check.PKeyDecoding) string {
	if d.Membership == "" {
		return "-"
	}
	return d.Membership
}

func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
