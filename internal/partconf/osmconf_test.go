package partconf

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/fabric"
)

func TestParseOpenSMConf(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		off        bool // part_enforce off in effect
		both, keep bool
		warn       string
	}{
		{"empty: defaults", "", false, false, true, ""},
		{"off", "part_enforce off\n", true, false, true, ""},
		{"in, comment", "  part_enforce in   # inbound only\n", false, false, true, ""},
		{"quoted", "part_enforce \"out\"\nallow_both_pkeys 'TRUE'\n", false, true, true, ""},
		{"deprecated switch wins", "part_enforce both\nno_partition_enforcement TRUE\n", true, false, true, ""},
		{"bad value falls back to both", "part_enforce OFF\n", false, false, true, "Invalid Cached Option Value"},
		{"only TRUE is true", "allow_both_pkeys true\nkeep_pkey_indexes FALSE\n", false, false, false, "anything but TRUE"},
		{"commented out", "#part_enforce off\n", false, false, true, ""},
		{"last wins", "part_enforce off\npart_enforce in\n", false, false, true, ""},
	} {
		c := ParseOpenSMConf("opensm.conf", []byte(tc.text))
		if c.EnforceOff != tc.off || c.AllowBoth != tc.both || c.KeepPKeyIndexes != tc.keep || !strings.Contains(strings.Join(c.Warnings, "\n"), tc.warn) {
			t.Errorf("%s: enforce off %v both %v keep %v warnings %v", tc.name, c.EnforceOff, c.AllowBoth, c.KeepPKeyIndexes, c.Warnings)
		}
		if tc.warn == "" && len(c.Warnings) > 0 {
			t.Errorf("%s: warnings %v", tc.name, c.Warnings)
		}
		if o := c.FabricModel(NoFile(), &fabric.Fabric{}, Options{AllowBoth: !tc.both, EnforceOff: true}).Options; o.AllowBoth != tc.both || o.EnforceOff != tc.off {
			t.Errorf("%s: Options %+v", tc.name, o)
		}
	}
}

// TestOpenSMConfDefaultsMatchOpenSM: the file `opensm -c` writes (every option at its
// default) parses to OpenSM's defaults.
func TestOpenSMConfDefaultsMatchOpenSM(t *testing.T) {
	needLab(t)
	file := filepath.Join(t.TempDir(), "opensm.conf")
	bin, err := exec.LookPath("opensm")
	if err != nil {
		bin = "/usr/sbin/opensm" // where Debian installs it, often not in PATH (lab.Require found it)
	}
	if out, err := exec.Command(bin, "-c", file).CombinedOutput(); err != nil {
		t.Fatalf("opensm -c: %v\n%s", err, out)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c := ParseOpenSMConf(file, data)
	for _, k := range []string{"part_enforce", "allow_both_pkeys", "keep_pkey_indexes", "partition_config_file", "no_partition_enforcement"} {
		if !regexp.MustCompile(`(?m)^` + k + `[ \t]`).Match(data) {
			t.Errorf("opensm -c does not write %s (OpenSM renamed it?)", k)
		}
	}
	if c.EnforceOff || c.AllowBoth || !c.KeepPKeyIndexes || c.PartitionConfigFile != "/etc/opensm/partitions.conf" || len(c.Warnings) > 0 {
		t.Errorf("defaults: %+v", c)
	}
}
