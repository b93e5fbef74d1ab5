package cmdutil

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/query"
)

// Dynamic completion reads the host the command line selects so far: --sysfs or
// --demo given earlier on the line are already parsed when cobra calls these.

// CompleteDurations completes a duration flag with common values, never file names.
func CompleteDurations(values ...string) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, v := range values {
			if strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// CompleteDevices completes a local device name (--ca).
func CompleteDevices(f *Factory) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		devs, err := f.Host().Devices("")
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, d := range devs {
			out = append(out, d.Name)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// LIDChoice is a LID to offer and what it is.
type LIDChoice struct {
	LID  uint16
	Desc string
}

// LIDChoices are the LIDs of the fabric in use, without sending a MAD: the ports of
// the saved sweep fabricFile when given, else the host's own ports (sysfs or the
// demo). Completion must never send MADs: it runs on every TAB.
func LIDChoices(f *Factory, fabricFile string) []LIDChoice {
	var out []LIDChoice
	if fabricFile != "" {
		fab, err := ReadFabricFile(fabricFile)
		if err != nil {
			return nil
		}
		for _, n := range fab.Nodes {
			for _, p := range n.Ports {
				if p.LID != 0 && n.IsEndPort(p) {
					out = append(out, LIDChoice{p.LID, fmt.Sprintf("%s port %d", n.Description, p.Num)})
				}
			}
		}
	} else {
		views, err := f.Host().Load(query.Selector{}, query.LoadOptions{})
		if err != nil {
			return nil
		}
		for _, v := range views {
			if v.LinkLayer() == "InfiniBand" && v.Port.LID.OK() && v.Port.LID.Value != 0 {
				out = append(out, LIDChoice{uint16(v.Port.LID.Value), "local " + v.Ref().String()})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].LID < out[j].LID })
	return out
}

// completeLIDs completes --lid LIDS (a list: the item after the last comma, what is
// before it kept) from the host's LIDChoices.
func completeLIDs(f *Factory) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		i := strings.LastIndex(toComplete, ",")
		done, item := toComplete[:i+1], toComplete[i+1:]
		var out []cobra.Completion
		for _, l := range LIDChoices(f, "") {
			s := strconv.Itoa(int(l.LID))
			if strings.HasPrefix(s, item) {
				out = append(out, cobra.CompletionWithDesc(done+s, l.Desc))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// PKeyCompletions are the valid P_Keys of the ports' tables, each once, described by
// membership and partition ("full member of 0x0001").
func PKeyCompletions(views []*query.PortView) []cobra.Completion {
	seen := map[check.PKey]bool{}
	var out []cobra.Completion
	for _, v := range views {
		if v.Table == nil {
			continue
		}
		for _, e := range v.Table.Entries {
			if e.Valid() && !seen[e.PKey] {
				seen[e.PKey] = true
				out = append(out, cobra.CompletionWithDesc(e.PKey.String(), e.PKey.Membership().String()+" member of "+e.PKey.Partition().String()))
			}
		}
	}
	return out
}
