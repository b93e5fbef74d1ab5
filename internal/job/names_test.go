package job

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// TestNameAndShellSafe: validName and shellSafe accept exactly what the regular
// expressions they replaced accepted, on generated strings over the bytes that matter
// (and a few that do not: a space, quotes, non-ASCII).
func TestNameAndShellSafe(t *testing.T) {
	name := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	safe := regexp.MustCompile(`^[a-zA-Z0-9._\-+:/,@%=]+$`)
	alphabet := []rune("aZ09_.-+:/,@%= '\"$\\\té\x00")
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]rune, r.IntN(6))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		s := string(b)
		if validName(s) != name.MatchString(s) {
			t.Errorf("validName(%q) = %v", s, validName(s))
		}
		if shellSafe(s) != safe.MatchString(s) {
			t.Errorf("shellSafe(%q) = %v", s, shellSafe(s))
		}
	}
}
