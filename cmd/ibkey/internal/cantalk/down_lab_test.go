package cantalk

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/lab"
)

// TestLabCanTalkSADownPort (wave 19): HcaD's link goes down after a sweep was saved.
// OpenSM drops the port on its next sweep ("Removed port ... LID range [5, 5]") and
// then answers a PathRecord to LID 5 with ERR_NO_RECORDS and no line at its default
// log level (osm_sa_path_record.c osm_pr_get_end_points: "No dest port with LID",
// verbose); saquery finds no path. can-talk on the saved sweep says the SM does not
// confirm the file's yes (UNKNOWN, exit 4), that the file may be older, and, its log
// read and silent, that the SM may not know an end's LID; on a sweep now it names the
// LIDs there are (exit 3).
func TestLabCanTalkSADownPort(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	d := l.StartOpenSMDaemon(t, saLabConf)
	file, _ := savedSweep(t, l, "before.json", nil)
	// The log's size before the unlink: OpenSM may log the port's removal on its
	// own (a trap's sweep) before this goroutine runs again.
	from := d.LogSize()
	l.MustConsole(`Unlink "HcaD"[1]`)
	if err := d.Resweep(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := d.WaitLog("Removed port with GUID:0x0002c90300000231 LID range [5, 5]", from, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if out, err := l.ToolAt("HcaA", "saquery", "PR", "--slid", "3", "--dlid", "5", "--pkey", "0x8003"); err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("saquery PR 3 to 5: %q %v (want no path)", out, err)
	}
	attach := []string{"--ibsim=" + l.SockName, "--sim-node", "HcaA"}
	r := runIbkey(t, append([]string{"can-talk", "--fabric-file", file, "lid=3,pkey=0x8003", "lid=5,pkey=0x0003", "--sa", "--sm-log", d.Log, "-o", "json"}, attach...)...)
	var doc saDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("exit %d: %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	for _, w := range []string{file + " may be older than the fabric the Subnet Manager answers about now", "it does not know an end's LID", "it logged no reason"} {
		if !strings.Contains(doc.SA.Reason, w) {
			t.Errorf("sa reason %q lacks %q", doc.SA.Reason, w)
		}
	}
	if r.Code != 4 || doc.Verdict != "unknown" || doc.SA.Path || !doc.SA.Unknown || doc.SA.LogLine != "" {
		t.Errorf("exit %d, verdict %s, SA %+v: want UNKNOWN (exit 4), no path, no log line", r.Code, doc.Verdict, doc.SA)
	}
	r = runIbkey(t, append([]string{"can-talk", "lid=3,pkey=0x8003", "lid=5,pkey=0x0003", "--sa"}, attach...)...)
	if r.Code != 3 || !strings.Contains(r.Stderr, "no LID 5 in the sweep (LIDs: 1-4)") {
		t.Errorf("a sweep now: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
