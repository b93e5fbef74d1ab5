package job

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ibkey/ibkey/internal/textsafe"
)

// libraryPrefixes are the prefixes of the variables each library reads (NCCL's
// ncclGetEnv names, UCX's "UCX_" config prefix, ...), compared case-insensitively.
var libraryPrefixes = []string{"NCCL_", "UCX_", "NVSHMEM_", "GASNET_", "MV2_", "OMPI_MCA_"}

// LookAlikes warns about variables that look like a library's P_Key setting but are
// read by no library: a name with a library's prefix that mentions PKEY (or P_KEY)
// and is none of the names the libraries read (NCCL_IB_PKEYS, nccl_ib_pkey,
// GASNET_PKEY), with the nearest name they do read. UCX's per-transport
// UCX_<TRANSPORT>_PKEY overrides are real settings and not reported.
func LookAlikes(env Env) []string {
	known := map[string]bool{}
	var pkeyNames []string
	for _, l := range Libraries() {
		for _, v := range slices.Concat(l.Vars, l.Modifiers) {
			known[v] = true
			if strings.Contains(strings.ToUpper(v), "PKEY") {
				pkeyNames = append(pkeyNames, v)
			}
		}
	}
	var out []string
	for _, name := range env.Names() {
		if known[name] || UCXPKeyVar(name) {
			continue
		}
		upper := strings.ToUpper(name)
		if !strings.Contains(upper, "PKEY") && !strings.Contains(upper, "P_KEY") {
			continue
		}
		i := slices.IndexFunc(libraryPrefixes, func(p string) bool { return strings.HasPrefix(upper, p) })
		if i < 0 {
			continue
		}
		prefix := libraryPrefixes[i]
		best, bestD := "", -1
		for _, k := range pkeyNames {
			if !strings.HasPrefix(strings.ToUpper(k), prefix) {
				continue
			}
			if d := textsafe.EditDistance(upper, strings.ToUpper(k)); bestD < 0 || d < bestD {
				best, bestD = k, d
			}
		}
		msg := fmt.Sprintf("%s=%s is read by no library ibkey knows", name, env[name])
		if best != "" {
			msg += fmt.Sprintf(": did you mean %s?", best)
		}
		out = append(out, msg)
	}
	return out
}

// UCXPKeyVar reports UCX_<TRANSPORT>_PKEY: UCX_IB_PKEY, or a per-transport override
// of it (ucs_config_apply_config_vars; src/ucs/config/parser.c). UCX's variable names
// are upper case.
func UCXPKeyVar(name string) bool {
	mid, ok := strings.CutPrefix(name, "UCX_")
	if !ok {
		return false
	}
	mid, ok = strings.CutSuffix(mid, "_PKEY")
	return ok && mid != "" && mid == strings.ToUpper(mid)
}
