package decode

import (
	"fmt"

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

func runDecodePKey(o *DecodeOptions) error {
	return run(o, []string{"VALUE", "KEY", "MEMBERSHIP", "VALID", "DEFAULT"}, func(items []any) any {
		return struct {
			Schema cmdutil.SchemaVersion `json:"schema_version"`
			PKeys  []any                 `json:"pkeys"`
		}{cmdutil.SchemaVersion{}, items}
	}, func(s string) (value, error) {
		p, err := check.ParsePKey(s)
		if err != nil {
			return value{}, err
		}
		d := check.DecodePKey(p)
		var m *string // null for key 0, which names no partition ("-" in text)
		ms := "-"
		if d.Membership != "" {
			m, ms = &d.Membership, d.Membership
		}
		valid, def := cmdutil.YesNo(d.Valid), cmdutil.YesNo(d.Default)
		return value{
			json:  pkeyJSON{d.Value, d.Key, m, d.Valid, d.Default, cmdutil.List(d.Notes)},
			row:   []string{d.Value, d.Key, ms, valid, def},
			text:  fmt.Sprintf("P_Key %s\n  key         %s\n  membership  %s\n  valid       %s\n  default     %s\n", d.Value, d.Key, ms, valid, def),
			notes: d.Notes,
		}, nil
	})
}

// pkeyJSON is one value of `decode pkey -o json`.
type pkeyJSON struct {
	Value      string   `json:"value"`
	Key        string   `json:"key"`
	Membership *string  `json:"membership"` // null for key 0
	Valid      bool     `json:"valid"`
	Default    bool     `json:"default"`
	Notes      []string `json:"notes"`
}
