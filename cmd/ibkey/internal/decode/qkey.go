package decode

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
)

// NewCmdQKey is `ibkey decode qkey`; runF replaces the run function in tests.
func NewCmdQKey(f *cmdutil.Factory, runF func(*DecodeOptions) error) *cobra.Command {
	return newValuesCmd(f, &cobra.Command{
		Use:   "qkey VALUE...",
		Short: "Explain Q_Key values: controlled bit, ranges, well-known values",
		Long: `Explain Q_Key values: whether the top bit (controlled, privileged) is set, which range
the value falls in (general use 0x80000000-0x8000ffff, reserved 0x80010000-0x8fffffff),
and well-known values (GSI 0x80010000, OpenSM's IPoIB default 0x00000b1b).

For a controlled value the notes say what it does in a send request, which depends on
the device: under the IBA rule the top bit makes the channel adapter send the QP's own
Q_Key instead; Linux's software RoCE driver (rdma_rxe) sends the value verbatim
('ibkey can-talk' names the rule of a local port's device). And who may use it on
Linux: an unprivileged process cannot set it in a QP context (EPERM), but may send it
in a work request, so where it goes out verbatim it reaches QP1 with the GSI Q_Key.

JSON (-o json; schemas/decode-qkey.schema.json): {"schema_version","qkeys":[{"value",
"controlled","well_known","range","notes"}]}; well_known is "gsi", "ipoib" or null
(not a well-known value), range one of unprivileged, general-use, reserved,
controlled.`,
		Example: "  ibkey decode qkey 0x80010000 b1b",
	}, runF, runDecodeQKey)
}

func runDecodeQKey(o *DecodeOptions) error {
	return run(o, []string{"VALUE", "CONTROLLED", "RANGE", "WELL_KNOWN"}, func(items []any) any {
		return struct {
			Schema cmdutil.SchemaVersion `json:"schema_version"`
			QKeys  []any                 `json:"qkeys"`
		}{cmdutil.SchemaVersion{}, items}
	}, func(s string) (value, error) {
		q, err := check.ParseQKey(s)
		if err != nil {
			return value{}, err
		}
		d := check.DecodeQKey(q)
		j := qkeyJSON{Value: d.Value, Controlled: d.Controlled, Range: string(d.Range), Notes: cmdutil.List(d.Notes)}
		if d.WellKnown != "" {
			j.WellKnown = &d.WellKnown
		}
		wk := map[string]string{"gsi": "GSI (QP1)", "ipoib": "IPoIB (OpenSM default)", "": "no"}[d.WellKnown]
		return value{
			json:  j,
			row:   []string{d.Value, cmdutil.YesNo(d.Controlled), string(d.Range), d.WellKnown},
			text:  fmt.Sprintf("Q_Key %s\n  controlled  %s\n  range       %s\n  well-known  %s\n", d.Value, cmdutil.YesNo(d.Controlled), d.Range, wk),
			notes: d.Notes,
		}, nil
	})
}

// qkeyJSON is one value of `decode qkey -o json`.
type qkeyJSON struct {
	Value      string   `json:"value"`
	Controlled bool     `json:"controlled"`
	WellKnown  *string  `json:"well_known"`
	Range      string   `json:"range"`
	Notes      []string `json:"notes"`
}
