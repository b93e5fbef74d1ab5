package partconf

import (
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

func TestParseOpenSMConf(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		enforce    string // part_enforce in effect
		both, keep bool
		warn       string
		qos        bool
	}{
		{"empty: defaults", "", "both", false, true, "", false},
		{"off", "part_enforce off\n", "off", false, true, "", false},
		{"in, comment", "  part_enforce in   # inbound only\n", "in", false, true, "", false},
		{"quoted", "part_enforce \"out\"\nallow_both_pkeys 'TRUE'\n", "out", true, true, "", false},
		{"deprecated switch wins", "part_enforce both\nno_partition_enforcement TRUE\n", "off", false, true, "", false},
		{"deprecated switch wins over in", "part_enforce in\nno_partition_enforcement TRUE\n", "off", false, true, "", false},
		{"bad value falls back to both", "part_enforce OFF\n", "both", false, true, "Invalid Cached Option Value", false},
		{"only TRUE is true", "allow_both_pkeys true\nkeep_pkey_indexes FALSE\n", "both", false, false, "anything but TRUE", false},
		{"commented out", "#part_enforce off\n", "both", false, true, "", false},
		{"last wins", "part_enforce off\npart_enforce in\n", "in", false, true, "", false},
		{"qos", "qos TRUE\n", "both", false, true, "", true},
		{"qos: only TRUE", "qos true\n", "both", false, true, "anything but TRUE", false},
	} {
		c := ParseOpenSMConf("opensm.conf", []byte(tc.text))
		if c.PartEnforce != tc.enforce || c.AllowBoth != tc.both || c.KeepPKeyIndexes != tc.keep || c.QoS != tc.qos || !strings.Contains(strings.Join(c.Warnings, "\n"), tc.warn) {
			t.Errorf("%s: part_enforce %q both %v keep %v warnings %v", tc.name, c.PartEnforce, c.AllowBoth, c.KeepPKeyIndexes, c.Warnings)
		}
		if tc.warn == "" && len(c.Warnings) > 0 {
			t.Errorf("%s: warnings %v", tc.name, c.Warnings)
		}
		if o := c.FabricModel(NoFile(), &fabric.Fabric{}, Options{AllowBoth: !tc.both, EnforceOff: true}).Options; o.AllowBoth != tc.both || o.EnforceOff != (tc.enforce == "off") || o.QoS != tc.qos {
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
	for _, k := range []string{"part_enforce", "allow_both_pkeys", "keep_pkey_indexes", "qos", "partition_config_file", "no_partition_enforcement", "guid", "log_file"} {
		if !regexp.MustCompile(`(?m)^` + k + `[ \t]`).Match(data) {
			t.Errorf("opensm -c does not write %s (OpenSM renamed it?)", k)
		}
	}
	if c.PartEnforce != "both" || c.AllowBoth || !c.KeepPKeyIndexes || c.QoS || c.PartitionConfigFile != "/etc/opensm/partitions.conf" || c.LogFile != "/var/log/opensm.log" || c.GUID != 0 || len(c.Warnings) > 0 {
		t.Errorf("defaults: %+v", c)
	}
}

// osmConfInputs are generated opensm.conf files: the options the partition manager
// reads, an unknown one and look-alikes, values OpenSM takes and refuses (case,
// quotes, a lone quote, text after a boolean, an empty value, a NUL), spaces and tabs
// around them, the CR of a CRLF file (after a value, and after a name alone), comments
// after values and in paths, duplicate options, and lines longer than OpenSM's
// 1023-byte buffer.
func osmConfInputs() []string {
	rng := rand.New(rand.NewPCG(5, 2026))
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	values := map[string][]string{
		"part_enforce":             {"both", "in", "out", "off", "OFF", `"off"`, "'in'", "bogus", "", "off off", `"out`, `"`, "'"},
		"no_partition_enforcement": {"TRUE", "FALSE", "true", "1", `"TRUE"`, "TRUE junk", ""},
		"allow_both_pkeys":         {"TRUE", "FALSE", "true", "1", `'TRUE'`, "TRUE junk", ""},
		"keep_pkey_indexes":        {"TRUE", "FALSE", "false", "0", `"FALSE"`, "FALSE x", ""},
		"qos":                      {"TRUE", "FALSE", "true", "1", `"TRUE"`, "TRUE x", ""},
		"partition_config_file":    {"/x/p.conf", "/a b/c", "'/q r'", `"/s"`, "/with#hash", "", "/" + strings.Repeat("d", 1100), "/nul\x00/x", `"`},
		"log_file":                 {"/var/log/o.log", "(null)", "-", "stdout", "stderr", "", `"/q.log"`, "rel.log", "/a b.log"},
		"guid": {"0x0002c90300000201", "0X0002C90300000211", "0x0", "0", "1234567", "0755", "0x", "-1", "+0x10", "0x1g", "0x10000000000000000",
			"18446744073709551615", "18446744073709551616", `"0x42"`, "0x42 0x43", "zz", "", "0b101", "0x_1"},
		"Part_enforce":   {"off"},
		"#part_enforce":  {"off"},
		"part_enforce_x": {"off"},
		"sm_priority":    {"15"},
	}
	keys := slices.Sorted(maps.Keys(values))
	var out []string
	for range 1000 {
		var b strings.Builder
		for range rng.IntN(7) {
			switch rng.IntN(8) {
			case 0:
				b.WriteString(pick("", "# a comment", "   ", "\t#x") + pick("\n", "\r\n"))
				continue
			case 1:
				b.WriteString(strings.Repeat(" ", 1020+rng.IntN(8)) + "part_enforce off\n") // split by fgets
				continue
			}
			k := keys[rng.IntN(len(keys))]
			b.WriteString(pick("", "", "  ", "\t", "\v", "\r") + k)
			if v := values[k][rng.IntN(len(values[k]))]; v != "" || rng.IntN(2) == 0 {
				b.WriteString(pick(" ", " ", "\t", "  ", " \t ") + v)
			}
			b.WriteString(pick("", "", "", " ", "\t", " # note", "#x"))
			b.WriteString(pick("\n", "\n", "\r\n", " \r\n"))
		}
		out = append(out, b.String())
	}
	// A refused guid keeps the port an earlier line gave.
	for _, v := range []string{"", " ", `""`, "0x", "zz", "0x5 x", "-", "0x10000000000000000"} {
		out = append(out, "guid 0x0002c90300000201\nguid "+v+"\n")
	}
	return out
}

// TestOpenSMConfAgainstOpenSM reads generated opensm.conf files with
// ParseOpenSMConf and with OpenSM itself (`opensm -F FILE -c OUT` reads FILE, then
// writes every option as it holds it, in its own form) and compares what the
// partition manager uses: enforcement off, allow_both_pkeys, keep_pkey_indexes and
// the partitions.conf path.
func TestOpenSMConfAgainstOpenSM(t *testing.T) {
	needLab(t)
	bin, err := exec.LookPath("opensm")
	if err != nil {
		bin = "/usr/sbin/opensm"
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.conf"), filepath.Join(dir, "out.conf")
	bad := 0
	for i, text := range osmConfInputs() {
		if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(out)
		if b, err := exec.Command(bin, "-F", in, "-c", out).CombinedOutput(); err != nil {
			t.Fatalf("opensm -F -c: %v\n%s", err, b)
		}
		dump, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		// OpenSM's own form: "name value" per line, the value as it holds it.
		osm := map[string]string{}
		for line := range strings.Lines(string(dump)) {
			if k, v, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " "); ok && !strings.HasPrefix(k, "#") {
				osm[k] = v
			}
		}
		guid, err := strconv.ParseUint(osm["guid"], 0, 64)
		if err != nil {
			t.Fatalf("opensm -c wrote guid %q", osm["guid"])
		}
		want := OpenSMConf{
			GUID:                check.GUID(guid),
			PartEnforce:         partEnforceHeld(osm),
			AllowBoth:           osm["allow_both_pkeys"] == "TRUE",
			KeepPKeyIndexes:     osm["keep_pkey_indexes"] == "TRUE",
			QoS:                 osm["qos"] == "TRUE",
			PartitionConfigFile: osm["partition_config_file"],
			LogFile:             osm["log_file"],
		}
		c := ParseOpenSMConf("in.conf", []byte(text))
		got := OpenSMConf{GUID: c.GUID, PartEnforce: c.PartEnforce, AllowBoth: c.AllowBoth, KeepPKeyIndexes: c.KeepPKeyIndexes, QoS: c.QoS, PartitionConfigFile: c.PartitionConfigFile, LogFile: c.LogFile}
		if !reflect.DeepEqual(got, want) {
			if bad++; bad <= 5 {
				t.Errorf("file %d %q:\n ibkey  %+v\n OpenSM %+v", i, text, got, want)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%d files differ in all", bad)
	}
}

// With keep_pkey_indexes FALSE every key is new in every pass, so `both` on the
// default partition with -W writes 0xffff and 0x7fff in one pass: a port holding 0xffff
// only is not OpenSM's first pass (partitions-next-pass, onePassFrom0x7fff, holds for
// keep_pkey_indexes TRUE only) but a table the file does not give.
func TestFabricModelForgetIndexesNoNextPass(t *testing.T) {
	f := compareFabricFixture()
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			clear(p.PKeys)
			p.PKeys[0] = check.DefaultFull
		}
	}
	conf := Parse("p.conf", []byte("Default=0x7fff : ALL=both ;\n"))
	rules := func(osmConf string) []string {
		var got []string
		for _, fd := range CompareFabric(f, ParseOpenSMConf("opensm.conf", []byte(osmConf)).FabricModel(conf, f, Options{})) {
			got = append(got, fd.Rule)
		}
		return slices.Compact(got)
	}
	if got := rules("allow_both_pkeys TRUE\n"); !slices.Equal(got, []string{RuleNextPass}) {
		t.Errorf("keep_pkey_indexes TRUE: %v, want %s", got, RuleNextPass)
	}
	if got := rules("allow_both_pkeys TRUE\nkeep_pkey_indexes FALSE\n"); !slices.Equal(got, []string{RuleWrongMembership}) {
		t.Errorf("keep_pkey_indexes FALSE: %v, want %s", got, RuleWrongMembership)
	}
}

// partEnforceHeld is the enforcement OpenSM applies from what `opensm -c` wrote:
// no_partition_enforcement TRUE is off whatever part_enforce says, and a part_enforce
// other than both, in, out or off is both (osm_subnet.c).
func partEnforceHeld(osm map[string]string) string {
	switch v := osm["part_enforce"]; {
	case osm["no_partition_enforcement"] == "TRUE":
		return "off"
	case v == "in" || v == "out" || v == "off":
		return v
	}
	return "both"
}
