package cmdutil

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/query"
)

// nodeNameMapUsage is --node-name-map's help.
const nodeNameMapUsage = "name nodes from `FILE`, infiniband-diags' node name map (node GUID, then \"name\"; # comments), instead of their NodeDescription"

// AddNodeNameMapFlag adds --node-name-map to c, bound to *path.
func AddNodeNameMapFlag(c *cobra.Command, path *string) {
	c.Flags().StringVar(path, "node-name-map", "", nodeNameMapUsage)
	_ = c.MarkFlagFilename("node-name-map")
}

// ReadNodeNameMap reads --node-name-map's file (query.ReadNodeNameMap): nil when the
// flag is not given; its errors name the flag.
func ReadNodeNameMap(path string) (*query.NodeNameMap, error) {
	if path == "" {
		return nil, nil
	}
	m, err := query.ReadNodeNameMap(path)
	if err != nil {
		sep := " " // a line of the file: "FILE:LINE: ..."
		if errors.Unwrap(err) != nil {
			sep = ": " // the read's error names the file
		}
		return nil, Usagef("--node-name-map%s%v", sep, err)
	}
	return m, nil
}
