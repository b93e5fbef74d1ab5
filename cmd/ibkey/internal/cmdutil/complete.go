package cmdutil

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/query"
)

// Dynamic completion reads the host the command line selects so far: --sysfs or
// --demo given earlier on the line are already parsed when cobra calls these.

// CompleteDevPort completes DEV for the first argument and the device's ports for the
// second (`pkeys DEV PORT`).
func CompleteDevPort(f *Factory) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		host := f.Host()
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

// CompletePortArgs completes each argument as DEV or DEV/PORT.
func CompletePortArgs(f *Factory) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		devs, err := f.Host().Devices("")
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		given := map[string]bool{}
		for _, a := range args {
			given[a] = true
		}
		var out []cobra.Completion
		for _, d := range devs {
			desc := ""
			if d.NodeDesc.OK() {
				desc = d.NodeDesc.Value + " "
			}
			if !given[d.Name] {
				out = append(out, d.Name+"\t"+desc+"(every port)")
			}
			for _, p := range d.Ports {
				ref := d.Name + "/" + strconv.Itoa(p)
				if !given[ref] && strings.HasPrefix(ref, toComplete) {
					out = append(out, ref+"\t"+desc+"port "+strconv.Itoa(p))
				}
			}
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// SelectorFromArgs reads `DEV PORT`, `DEV/PORT`, `DEV` or nothing.
func SelectorFromArgs(args []string) (query.Selector, error) {
	switch len(args) {
	case 0:
		return query.Selector{}, nil
	case 1:
		return query.ParseSelector(args[0])
	}
	if strings.Contains(args[0], "/") {
		return query.Selector{}, &query.UsageError{Msg: fmt.Sprintf("unexpected %q after %q (accepted: DEV PORT or DEV/PORT)", args[1], args[0])}
	}
	sel, err := query.ParseSelector(args[0])
	if err != nil {
		return sel, err
	}
	n, err := query.ParsePortNum(args[1])
	if err != nil {
		return sel, err
	}
	sel.Port, sel.HasPort = n, true
	return sel, nil
}

// SelectorsFromArgs reads DEV or DEV/PORT arguments.
func SelectorsFromArgs(args []string) ([]query.Selector, error) {
	var out []query.Selector
	for _, a := range args {
		s, err := query.ParseSelector(a)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
