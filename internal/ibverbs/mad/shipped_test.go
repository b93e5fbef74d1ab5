package mad_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const shipped = "github.com/ibkey/ibkey/cmd/ibkey"

// TestShippedBinaryHasNoSetPath builds ibkey as `make build` does (minus the
// symbol stripping, so there is a symbol table to read) and checks that no
// Set encoder is linked in: the test-only Set helpers live in internal/lab,
// which the binary must not import, and the codec's MarshalTo (the only encoder
// of the transports) must be there to refuse anything but Get. It fails when a
// production package starts importing internal/lab or grows a Set helper.
func TestShippedBinaryHasNoSetPath(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	out, err := exec.Command("go", "list", "-deps", shipped).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", shipped, err, out)
	}
	deps := strings.Fields(string(out))
	hasMad := false
	for _, d := range deps {
		if d == "github.com/ibkey/ibkey/internal/lab" || strings.HasPrefix(d, "github.com/ibkey/ibkey/internal/tools") {
			t.Errorf("the shipped binary imports %s, which is test or development code (internal/lab holds the Set encoder)", d)
		}
		hasMad = hasMad || d == "github.com/ibkey/ibkey/internal/ibverbs/mad"
	}
	if !hasMad {
		t.Fatalf("go list -deps %s does not list internal/ibverbs/mad: the check above proves nothing", shipped)
	}

	bin := filepath.Join(t.TempDir(), "ibkey")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, shipped)
	build.Env = append(build.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err = exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	syms := string(out)
	const marshal = "github.com/ibkey/ibkey/internal/ibverbs/mad.(*Request).MarshalTo"
	if !strings.Contains(syms, marshal) {
		t.Fatalf("%s not in the binary's symbols: the check below proves nothing", marshal)
	}
	for _, line := range strings.Split(syms, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		name := f[len(f)-1]
		for _, bad := range []string{"ibkey/internal/lab.", "SetPKeyBlock", "SendTrap", "ForTest"} {
			if strings.Contains(name, bad) {
				t.Errorf("the shipped binary links %s (matches %q)", name, bad)
			}
		}
	}
}
