package partconf

import (
	"fmt"

	"github.com/ibkey/ibkey/internal/check"
)

// PosText is where an item of c is written. Items without a line are OpenSM's: the
// implicit Default items it applies before the file (ALL=limited, SELF=full), or its
// fallback for a rejected file (ALL=full).
func (c *Config) PosText(p check.FilePos) string {
	switch {
	case p.Line == 0 && c.Rejected:
		return c.File + ":(fallback)"
	case p.Line == 0:
		return c.File + ":(implicit)"
	}
	return p.String()
}

// Unpredictable says that what OpenSM does with c's file cannot be predicted (Uncertain),
// naming the file and where; "" when it can be.
func (c *Config) Unpredictable() string {
	if c.Uncertain == "" {
		return ""
	}
	return fmt.Sprintf("%s: what OpenSM 3.3.23 does with this file cannot be predicted (%s: %s)", c.File, c.UncertainAt, c.Uncertain)
}
