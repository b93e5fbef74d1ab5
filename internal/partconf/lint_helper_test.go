package partconf

import "github.com/ibkey/ibkey/internal/check"

// Lint returns every finding for c: what OpenSM rejects (errors, line and column), and
// the mistakes it accepts silently (osm_prtn_config.c accepts them; lint.go's table
// says why each matters). The first finding is the rejection headline when OpenSM
// would drop the file. The tests' form of LintFindings, made all at once.
func Lint(c *Config, opt LintOptions) []check.Finding {
	f := LintFindings(c, opt)
	out := make([]check.Finding, 0, f.Len())
	for fd := range f.All() {
		out = append(out, fd)
	}
	return out
}
