package main

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/query"
)

// Dynamic completion reads the host the command line selects so far: --sysfs or
// --demo given earlier on the line are already parsed when cobra calls these.

// completeDevPort completes DEV for the first argument and the device's ports for the
// second (`pkeys DEV PORT`).
func completeDevPort(g *Globals) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		host := g.Host()
		switch len(args) {
		case 0:
			devs, err := host.Devices("")
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, d := range devs {
				desc := ""
				if d.NodeDesc.OK() {
					desc = "\t" + d.NodeDesc.Value
				}
				out = append(out, d.Name+desc)
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		case 1:
			devs, err := host.Devices(args[0])
			if err != nil || strings.Contains(args[0], "/") {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, p := range devs[0].Ports {
				out = append(out, strconv.Itoa(p))
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// completePKeys completes the P_Keys present in the selected port's (or every port's)
// table, for --find.
func completePKeys(g *Globals, o *PKeysOptions) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		sel, err := selectorFromArgs(args)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		views, err := g.Host().Load(sel, query.LoadOptions{Tables: true})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		seen := map[string]bool{}
		var out []cobra.Completion
		for _, v := range views {
			if v.Table == nil {
				continue
			}
			for _, e := range v.Table.Entries {
				if e.Valid() && !seen[e.PKey.String()] {
					seen[e.PKey.String()] = true
					out = append(out, e.PKey.String()+"\t"+e.PKey.Membership().String()+" member of "+e.PKey.KeyString())
				}
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
