package kernellab_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// max_pkeys on the real kernel: ibkey reads the device's ibv_device_attr.max_pkeys
// through libibverbs (query.Host.MaxPKeys, as `ibkey job` builds its host: the real
// /sys and /dev/infiniband), and perftest's "Changing to 0" follows it
// (perftest_parameters.c ctx_chk_pkey_index). The value must be ibv_devinfo's; where
// it cannot be read (the static build, a uverbs device this user may not open, a saved
// tree) it is not read, with the reason, and ibkey's answer that needs it is not
// checked (exit 4), never decided from a value not read.

// maxPKeysResult is `probe maxpkeys DEV PORT`: what query.Host.MaxPKeys reads.
type maxPKeysResult struct {
	Read  bool   `json:"read"`
	Value int    `json:"value"`
	Why   string `json:"why,omitempty"`
}

// runMaxPKeys reads dev's max_pkeys as `ibkey job` does on this machine
// (cmdutil.Factory.Host: the real /sys, CharDevs /dev/infiniband).
func runMaxPKeys(dev string) maxPKeysResult {
	h := &query.Host{Sys: ibverbs.Open("/sys"), CharDevs: "/dev/infiniband"}
	read, unread := h.MaxPKeys([]string{dev})
	v, ok := read[dev]
	return maxPKeysResult{Read: ok, Value: v, Why: unread[dev]}
}

// noAccess runs script as uid 65534 while rxe0's uverbs device is mode 0600 (root's
// alone), then gives the mode back: a user who may not open the device.
func noAccess(script string) string {
	return "chmod 0600 /dev/infiniband/uverbs0 || exit 99\n" + asNobody + script + "\ns=$?; chmod 0666 /dev/infiniband/uverbs0; exit $s"
}

// maxPKeysPlan is this file's commands: the probe and `ibkey job --perftest` at
// max_pkeys-1 and max_pkeys, as root, as nobody, without access, from the static
// build and on the tree saved earlier in the boot (save_sysfs).
func maxPKeysPlan(bin string) []Command {
	ibkey := bin + "/ibkey"
	probe := bin + "/probe maxpkeys " + dev + " " + port
	job := func(ibkey, idx string) string {
		return ibkey + ` job --perftest "ib_send_bw -d ` + dev + ` -i ` + port + ` --pkey_index=` + idx + `" -o json`
	}
	m := "m=$(ibv_devinfo -v -d " + dev + " | awk '/max_pkeys/ {print $2}'); "
	return []Command{
		{Name: "maxpkeys_devinfo", Script: "ibv_devinfo -v -d " + dev, Nobody: true},
		{Name: "maxpkeys_probe_root", Script: probe},
		{Name: "maxpkeys_probe_nobody", Script: probe, Nobody: true},
		{Name: "maxpkeys_probe_static", Script: bin + "/probe-static maxpkeys " + dev + " " + port, Nobody: true},
		{Name: "maxpkeys_probe_noaccess", Script: noAccess(probe)},
		{Name: "maxpkeys_job_last", Script: m + job(ibkey, "$((m-1))"), Nobody: true},
		{Name: "maxpkeys_job_max", Script: m + job(ibkey, "$m")},
		{Name: "maxpkeys_job_static", Script: job(bin+"/ibkey-static", "1"), Nobody: true},
		{Name: "maxpkeys_job_noaccess", Script: noAccess(job(ibkey, "1"))},
		{Name: "maxpkeys_job_saved", Script: "IBKEY_SYSFS=/kl/work/sysfs-rxe " + job(ibkey, "1")},
	}
}

// TestMaxPKeysOnKernel: ibkey's max_pkeys is ibv_devinfo's on rxe (64, not the
// one-entry table), read as root and as any user; not read without the library or
// access, named so; and `ibkey job --perftest` decides the index at max_pkeys-1
// (kept: rxe takes it and sends 0xffff) and at max_pkeys (perftest changes it to 0)
// from that value, or says it is not checked where it was not read.
func TestMaxPKeysOnKernel(t *testing.T) {
	devinfo := mustSucceed(t, "maxpkeys_devinfo")
	mm := regexp.MustCompile(`(?m)^\s*max_pkeys:\s*(\d+)\s*$`).FindStringSubmatch(devinfo)
	if mm == nil {
		t.Fatalf("ibv_devinfo -v shows no max_pkeys:\n%s", devinfo)
	}
	want, _ := strconv.Atoi(mm[1])
	tbl := regexp.MustCompile(`(?m)^\s*pkey_tbl_len:\s*(\d+)\s*$`).FindStringSubmatch(devinfo)
	if tbl == nil || tbl[1] == mm[1] {
		t.Fatalf("ibv_devinfo: max_pkeys %s, pkey_tbl_len %v: rxe's differ (64, 1)", mm[1], tbl)
	}
	probe := func(name string) maxPKeysResult {
		var r maxPKeysResult
		decodeJSON(t, name, mustSucceed(t, name), &r)
		return r
	}
	for _, name := range []string{"maxpkeys_probe_root", "maxpkeys_probe_nobody"} {
		if r := probe(name); !r.Read || r.Value != want || r.Why != "" {
			t.Errorf("%s: ibkey read %+v, ibv_devinfo max_pkeys %d", name, r, want)
		}
	}
	for name, why := range map[string]string{
		"maxpkeys_probe_static": "max_pkeys not read: verbs unavailable: this ibkey is the static flavour",
		// libibverbs lists the device and its open fails with ENOENT.
		"maxpkeys_probe_noaccess": "max_pkeys not read: verbs: open " + dev + ": ",
	} {
		if r := probe(name); r.Read || r.Value != 0 || !strings.HasPrefix(r.Why, why) {
			t.Errorf("%s: %+v, want not read: %s...", name, r, why)
		} else {
			t.Logf("%s: %s", name, r.Why)
		}
	}
	job := func(name string, exit int) (outcome string, index int, pkey, text string) {
		t.Helper()
		r := result(t, name)
		var j jobJSON
		decodeJSON(t, name, r.Stdout, &j)
		if r.Exit != exit || len(j.Libraries) != 1 || len(j.Libraries[0].Ports) != 1 || !j.Libraries[0].Ports[0].Used {
			t.Fatalf("%s: exit %d (want %d), %+v\n%s", name, r.Exit, exit, j, r.Stderr)
		}
		p := j.Libraries[0].Ports[0]
		index = -1
		if p.Index != nil {
			index = *p.Index
		}
		outcome = p.Outcome
		if outcome == "" { // -o json leaves "uses" out
			outcome = "uses"
		}
		return outcome, index, p.PKey, p.Problem + "\n" + strings.Join(j.Libraries[0].Notes, "\n")
	}
	if o, i, k, text := job("maxpkeys_job_last", 0); o != "uses" || i != want-1 || k != "0xffff" {
		t.Errorf("--pkey_index=%d (max_pkeys-1): %s index %d %s, want uses index %d 0xffff (rxe takes it)\n%s", want-1, o, i, k, want-1, text)
	}
	if o, i, k, text := job("maxpkeys_job_max", 0); o != "uses" || i != 0 || k != "0xffff" || !strings.Contains(text, fmt.Sprintf("max_pkeys-1 (%d)", want-1)) {
		t.Errorf("--pkey_index=%d (max_pkeys): %s index %d %s, want index 0 after \"Changing to 0\" at ibkey's max_pkeys-1 %d\n%s", want, o, i, k, want-1, text)
	}
	for name, why := range map[string]string{
		"maxpkeys_job_static":   "this ibkey is the static flavour",
		"maxpkeys_job_noaccess": "max_pkeys not read: verbs: open " + dev + ": ",
		"maxpkeys_job_saved":    "/kl/work/sysfs-rxe is not this machine's /sys",
	} {
		if o, i, _, text := job(name, 4); o != "not-checked" || i != -1 || !strings.Contains(text, why) {
			t.Errorf("%s: %s index %d, want not checked naming %q\n%s", name, o, i, why, text)
		}
	}
}
