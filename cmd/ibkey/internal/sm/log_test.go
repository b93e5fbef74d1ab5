package sm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
	"github.com/ibkey/ibkey/internal/fabric"
)

// The log internal/smlog's TestLabLog recorded from the lab's OpenSM daemon, with the
// sweep of that fabric and the partitions file OpenSM ran with.
const (
	labdata   = "../../../../internal/smlog/testdata"
	labLog    = labdata + "/lab.log"
	labFabric = labdata + "/lab-fabric.json"
	labConf   = labdata + "/lab-partitions.conf"
	// labNoRouteLog is the log internal/smlog's TestLabPathNoRoute recorded: the SA
	// refusing paths for routing, OpenSM routing Sw1 from an LFT file that breaks
	// routes (same net, LIDs and GUIDs as labFabric's).
	labNoRouteLog = labdata + "/lab-noroute.log"
	labQoSLog     = labdata + "/lab-qos-rejected.log"
)

var root = cmdtest.WithCommands(func(f *cmdutil.Factory) *cobra.Command { return NewCmdSM(f) })

// opensm are the flags that say how the lab's OpenSM ran: its table size and port.
var opensm = []string{"--table-size", "64", "--sm-guid", "0x0002c90300000201"}

func TestLogGolden(t *testing.T) {
	all := append([]string{"--fabric-file", labFabric, "--partitions", labConf}, opensm...)
	cmdtest.Golden(t, root, []cmdtest.GoldenCase{
		{Name: "log_only_table", Args: []string{"sm", "log", labLog, "--year", "2026", "-o", "table"}, Code: 1},
		{Name: "fabric_table", Args: []string{"sm", "log", labLog, "--year", "2026", "--fabric-file", labFabric, "-o", "table"}, Code: 1},
		{Name: "partitions_table", Args: append([]string{"sm", "log", labLog, "--year", "2026", "-o", "table"}, all...), Code: 1},
		{Name: "partitions_plain", Args: append([]string{"sm", "log", labLog, "--year", "2026"}, all...), Code: 1},
		{Name: "partitions_json", Args: append([]string{"sm", "log", labLog, "--year", "2026", "-o", "json"}, all...), Code: 1},
		{Name: "each_kind_plain", Args: []string{"sm", "log", labLog, "--year", "2026", "--fabric-file", labFabric, "--each", "--kind", "bad-pkey,bad-switch-pkey"}, Code: 1},
		{Name: "kind_warning_only", Args: []string{"sm", "log", labLog, "--year", "2026", "--kind", "partitions-warning", "-o", "table"}, Code: 0},
	}, nil)
}

func TestLogErrors(t *testing.T) {
	cmdtest.Errors(t, root, []cmdtest.ErrorCase{
		{Args: []string{"sm", "log", "/nonexistent/opensm.log"}, Code: 2, Stderr: "no OpenSM log /nonexistent/opensm.log"},
		// --demo is not this machine: its log is not read.
		{Args: []string{"--demo", "sm", "log"}, Code: 3, Stderr: "no OpenSM log: the demo has none"},
		{Args: []string{"sm", "log", labLog, "--kind", "bad-pkeys"}, Code: 2, Stderr: `invalid --kind "bad-pkeys" (accepted: bad-pkey,`},
		{Args: []string{"sm", "log", labLog, "--since", "-1h"}, Code: 2, Stderr: "invalid --since"},
		{Args: []string{"sm", "log", labLog, "--year", "99"}, Code: 2, Stderr: "invalid --year 99"},
		{Args: []string{"sm", "log", "-", "--follow"}, Code: 2, Stderr: "--follow follows a file by name"},
		{Args: []string{"sm", "log", "/dev/null"}, Code: 2, Stderr: "/dev/null is not a regular file"},
		{Args: []string{"sm", "log", labLog, "--partitions", "/nonexistent.conf"}, Code: 2, Stderr: "partitions file:"},
		{Args: []string{"sm", "log", labLog, "--fabric-file", "/nonexistent.json"}, Code: 2, Stderr: "nonexistent.json"},
		{Args: []string{"sm", "log", "a", "b"}, Code: 2, Stderr: "accepts at most 1 arg"},
	})
}

// run runs a command line with stdin in and ctx.
func run(t *testing.T, ctx context.Context, in io.Reader, args ...string) (string, string, int) {
	t.Helper()
	return runAt(t, ctx, time.Now, in, args...)
}

// runAt is run with the clock now.
func runAt(t *testing.T, ctx context.Context, now func() time.Time, in io.Reader, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut strings.Builder
	streams := &cmdutil.IOStreams{In: in, Out: &out, ErrOut: &errOut}
	f := cmdutil.NewFactory(streams, func(string) string { return "" }, now)
	code := cmdutil.Execute(ctx, root(f), args, streams)
	jsonschematest.Stdout(t, args, out.String())
	return out.String(), errOut.String(), code
}

// TestLogSince: --since keeps the events logged in the last DURATION before now.
func TestLogSince(t *testing.T) {
	// The clock stands at the log's last event; --since keeps what is younger.
	events := func(now func() time.Time, args ...string) []time.Time {
		t.Helper()
		out, _, _ := runAt(t, context.Background(), now, strings.NewReader(""), append([]string{"sm", "log", labLog, "--year", "2026", "-o", "json"}, args...)...)
		var doc struct {
			Events []struct {
				LoggedAt time.Time `json:"logged_at"`
			} `json:"events"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		var ts []time.Time
		for _, e := range doc.Events {
			ts = append(ts, e.LoggedAt)
		}
		return ts
	}
	all := events(time.Now)
	if len(all) < 2 || !all[len(all)-1].After(all[0]) {
		t.Fatalf("the lab's log has %d events, over no time", len(all))
	}
	now := func() time.Time { return all[len(all)-1] }
	mid := all[len(all)-1].Sub(all[0]) / 2
	some := events(now, "--since", mid.String())
	if len(events(now, "--since", "1h")) != len(all) || len(some) == 0 || len(some) >= len(all) {
		t.Errorf("--since 1h kept not all %d events, or --since %v kept %d", len(all), mid, len(some))
	}
	for _, e := range some {
		if e.Before(now().Add(-mid)) {
			t.Errorf("--since %v kept an event of %v", mid, e)
		}
	}
	out, _, code := runAt(t, context.Background(), now, strings.NewReader(""), "sm", "log", labLog, "--year", "2025", "--since", "24h", "-o", "table")
	if code != 0 || !strings.Contains(out, "no partition or key event since") {
		t.Errorf("a year-old log with --since 24h: exit %d:\n%s", code, out)
	}
}

// TestLogStdin: - reads standard input, with the same result as the file.
func TestLogStdin(t *testing.T) {
	b, err := os.ReadFile(labLog)
	if err != nil {
		t.Fatal(err)
	}
	fromFile, _, code1 := run(t, context.Background(), strings.NewReader(""), "sm", "log", labLog, "--year", "2026", "-o", "json")
	fromStdin, _, code2 := run(t, context.Background(), strings.NewReader(string(b)), "sm", "log", "-", "--year", "2026", "-o", "json")
	if code1 != 1 || code2 != 1 {
		t.Fatalf("exit %d and %d, want 1", code1, code2)
	}
	if want := strings.Replace(fromFile, `"log": "`+labLog+`"`, `"log": "-"`, 1); fromStdin != want {
		t.Errorf("stdin and file differ:\n%s\n---\n%s", fromStdin, fromFile)
	}
}

// TestLogFollowRotation follows a log that OpenSM-like writes grow, that is renamed
// away and recreated (logrotate's create mode), and truncated in place (copytruncate,
// OpenSM's own log_max_size): every event is printed once, as it comes.
func TestLogFollowRotation(t *testing.T) {
	lines := labEventLines(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "opensm.log")
	write := func(name string, flag int, ls ...string) {
		t.Helper()
		f, err := os.OpenFile(name, flag|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			f.WriteString(l + "\n")
		}
		f.Close()
	}
	write(path, os.O_CREATE|os.O_TRUNC, lines[0]...)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var errOut strings.Builder
	done := make(chan int, 1)
	go func() {
		streams := &cmdutil.IOStreams{In: strings.NewReader(""), Out: outW, ErrOut: &errOut}
		f := cmdutil.NewFactory(streams, func(string) string { return "" }, time.Now)
		done <- cmdutil.Execute(ctx, root(f), []string{"sm", "log", "--follow", path, "--year", "2026", "-o", "json"}, streams)
		outW.Close()
	}()
	events := make(chan map[string]any, 100)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			jsonschematest.Validate(t, "sm-log-event", sc.Bytes())
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Error(err)
			}
			events <- m
		}
		close(events)
	}()
	next := func(wantKind string) {
		t.Helper()
		select {
		case m := <-events:
			if m["kind"] != wantKind {
				t.Fatalf("event %v, want %s", m["kind"], wantKind)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s event within 10s; stderr: %s", wantKind, errOut.String())
		}
	}
	next("bad-pkey") // already in the file
	write(path, os.O_APPEND, lines[1]...)
	next("path-refused") // appended
	// Rotated: renamed away, then a new file (the old one gets a last line first).
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	write(path+".1", os.O_APPEND, lines[2]...)
	time.Sleep(300 * time.Millisecond)
	write(path, os.O_CREATE|os.O_EXCL, lines[3]...)
	next("untrusted-request") // written to the old file after the rename
	next("partitions-rejected")
	// Truncated in place, then new lines.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	write(path, os.O_APPEND, lines[4]...)
	next("join-refused")
	cancel()
	select {
	case code := <-done:
		if code != 1 {
			t.Errorf("exit %d, want 1 (errors found); stderr: %s", code, errOut.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("--follow did not end when its context was cancelled")
	}
	for _, want := range []string{"was rotated", "was truncated"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q: %s", want, errOut.String())
		}
	}
}

// labEventLines are five events' log lines from the lab's log: a whole trap, a 1F1A,
// a 4608, a parse error with its fallback, a 1B14.
func labEventLines(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile(labLog)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Split(string(b), "\n")
	grab := func(from string, n int) []string {
		for i, l := range all {
			if strings.Contains(l, from) {
				return all[i : i+n]
			}
		}
		t.Fatalf("no %q in %s", from, labLog)
		return nil
	}
	return [][]string{
		grab("num:257", 3),
		grab("ERR 1F1A", 1),
		grab("ERR 4608", 1),
		grab("PARSE ERROR: line 3", 2),
		grab("ERR 1B14", 1),
	}
}

// TestLogPartitionsFromStdinOrPipe: --partitions is read as partitions and can-talk
// read theirs (issue 25 item 5): - is standard input when the log is a file, and the
// output names the lines of <stdin>; with the log on standard input, - is refused.
func TestLogPartitionsFromStdinOrPipe(t *testing.T) {
	conf, err := os.ReadFile(labConf)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"sm", "log", labLog, "--year", "2026", "--fabric-file", labFabric}, opensm...)
	fileOut, _, fileCode := run(t, context.Background(), strings.NewReader(""), append(args, "--partitions", labConf)...)
	stdinOut, stderr, code := run(t, context.Background(), bytes.NewReader(conf), append(args, "--partitions", "-")...)
	if code != fileCode || strings.ReplaceAll(stdinOut, "<stdin>", labConf) != fileOut {
		t.Errorf("--partitions -: exit %d (file: %d)\n%s%s\nfrom the file:\n%s", code, fileCode, stdinOut, stderr, fileOut)
	}
	log, err := os.ReadFile(labLog)
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, code = run(t, context.Background(), bytes.NewReader(log), "sm", "log", "-", "--partitions", "-")
	if code != 2 || !strings.Contains(stderr, "standard input is the log") {
		t.Errorf("log and partitions both on stdin: exit %d, %s", code, stderr)
	}
}

// TestLogNothingChecked: a log with no line of OpenSM's format (the wrong file, a
// syslog copy) or an empty one is not a log without events: nothing was checked,
// exit 4, in every format; one OpenSM line among others is enough to read it.
func TestLogNothingChecked(t *testing.T) {
	dir := t.TempDir()
	notOpenSM := filepath.Join(dir, "messages")
	syslog := "Nov 27 10:00:01 sm01 OpenSM[1234]: SUBNET UP\nNov 27 10:00:02 sm01 kernel: mlx5_core 0000:03:00.0: port 1 up\n\n"
	if err := os.WriteFile(notOpenSM, []byte(syslog), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.log")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"plain", "table", "json"} {
		for _, c := range []struct{ file, stderr, table string }{
			{notOpenSM, "none of its 3 lines is in OpenSM's log format", "nothing checked: no line is in OpenSM's log format; 3 lines read"},
			{empty, "it is empty, so nothing was checked", "nothing checked: the log is empty; 0 lines read"},
		} {
			out, errOut, code := run(t, context.Background(), nil, "sm", "log", c.file, "-o", format)
			if code != 4 || !strings.Contains(errOut, c.stderr) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("%s -o %s: exit %d, stderr %q; want exit 4 and one line with %q", c.file, format, code, errOut, c.stderr)
			}
			if format == "table" && !strings.Contains(out, c.table) {
				t.Errorf("%s -o table: %q, want %q", c.file, out, c.table)
			}
			if format == "json" && !strings.Contains(out, `"incomplete": [`) {
				t.Errorf("%s -o json: exit 4 without incomplete: %s", c.file, out)
			}
		}
	}
	// --follow is no exception: it reads the file from its start, and a follow that
	// ended without one OpenSM line checked nothing (its summary line said so, and it
	// exited 0).
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	out, errOut, code := run(t, ctx, nil, "sm", "log", "--follow", notOpenSM, "-o", "table")
	if code != 4 || !strings.Contains(errOut, "so nothing was checked") || !strings.Contains(out, "nothing checked: ") {
		t.Errorf("--follow %s: exit %d, stdout %q, stderr %q; want exit 4, nothing checked", notOpenSM, code, out, errOut)
	}
	// The same lines after one line of OpenSM's own: read, no event, exit 0.
	b, err := os.ReadFile(labLog)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	mixed := filepath.Join(dir, "mixed.log")
	if err := os.WriteFile(mixed, []byte(syslog+first+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := run(t, context.Background(), nil, "sm", "log", mixed, "-o", "table"); code != 0 || errOut != "" || !strings.Contains(out, "no partition or key event; 4 lines read") {
		t.Errorf("mixed log: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestLogNotExplained: lines about partitions or keys that no event holds (a message
// of another OpenSM version, an ERR code ibkey does not explain) are shown and make a
// log with no error exit 4, with the JSON's incomplete saying why; beside an error
// they are shown and the exit stays 1. The AC14 line is the lab's OpenSM's
// (internal/smlog TestLabQoSPathRefusals); the 0512 line is 3.3.23's with its words
// changed, as another version could write it.
func TestLogNotExplained(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(labLog)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	lines := first + "\n" +
		"Nov 28 08:41:52 848998 [54B5A6C0] 0x01 -> osm_qos_policy_validate: ERR AC14: pkey 0x0009 in match rule - partition doesn't exist\n" +
		"Nov 28 08:41:53 848998 [54B5A6C0] 0x01 -> osm_qos_policy_validate: ERR AC14: pkey 0x000a in match rule - partition doesn't exist\n" +
		"Nov 28 08:41:54 121204 [5735F6C0] 0x01 -> pkey_mgr_update_port: ERR 0512: Failed to add PKey 0x0005: the Pkey table is full for node 0x0002c90300000230 port 1 (HcaD)\n" +
		"Nov 28 08:41:55 121204 [5735F6C0] 0x01 -> osm_ucast_mgr_process: ERR 3A45: routing failed\n"
	path := filepath.Join(dir, "opensm.log")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, context.Background(), nil, "sm", "log", path, "-o", "table")
	if code != 4 || !strings.Contains(errOut, "3 lines about partitions or keys not explained (ERR AC14 x2 from line 2, ERR 0512 at line 4)") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"not explained (ERR AC14) x2  Nov 28 08:41:52 to Nov 28 08:41:53  line 2", "not explained (ERR 0512)  Nov 28 08:41:54  line 4",
		"no partition or key event; 3 lines not explained; 5 lines read"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "3A45") {
		t.Errorf("a routing error is not about partitions or keys:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 80 {
			t.Errorf("wider than 80 columns: %q", l)
		}
	}
	out, _, code = run(t, context.Background(), nil, "sm", "log", path, "-o", "json")
	var doc struct {
		NotExplained []struct {
			Code  string
			Count int
		} `json:"not_explained"`
		Incomplete []cmdutil.Incomplete
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if code != 4 || len(doc.NotExplained) != 2 || doc.NotExplained[0].Count != 2 || len(doc.Incomplete) != 1 || doc.Incomplete[0].Kind != cmdutil.IncompleteNotChecked {
		t.Errorf("json: exit %d, %+v", code, doc)
	}
	// Beside an error: shown, exit 1.
	if err := os.WriteFile(path, append(b, lines[len(first)+1:]...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(t, context.Background(), nil, "sm", "log", path, "-o", "plain")
	if code != 1 || !strings.Contains(out, "not-explained") || !strings.Contains(errOut, "not explained") {
		t.Errorf("with errors: exit %d, stderr %q", code, errOut)
	}
}

// TestLogNotAboutKeys: the messages of the key source files that are not about keys
// (internal/smlog notKeys: an SA attribute OpenSM does not serve, an SM handover, a
// noisy link-error port it could not disable, a requester not swept yet, a GID of
// another subnet) make no not-explained line and no exit 4, in every output and with
// --follow; beside them, one such file's message no event holds (ERR 2F1B, an M_Key
// check) is shown and exits 4 as before, and a routing refusal (ERR 1F07) is a
// path-no-route warning, shown and explained, exit 0 (no partition or key error).
func TestLogNotAboutKeys(t *testing.T) {
	b, err := os.ReadFile(labLog)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	notKeys := first + "\n" +
		"Nov 28 08:41:52 848998 [54B5A6C0] 0x01 -> sa_mad_ctrl_process: ERR 1A01: Unsupported attribute 0xFF30 (UNKNOWN)\n" +
		"Nov 28 08:41:53 848998 [54B5A6C0] 0x01 -> smi_rcv_process_set_request: ERR 2F10: Error in SM state transition (IB_ERROR)\n" +
		"Nov 28 08:41:54 848998 [54B5A6C0] 0x01 -> disable_port: ERR 3804: Port 0x2c90300000211 not found, port set failed\n" +
		"Nov 28 08:41:55 848998 [54B5A6C0] 0x01 -> osm_pr_rcv_process: ERR 1F16: Cannot find requester physical port\n" +
		"Nov 28 08:41:56 848998 [54B5A6C0] 0x04 -> mpr_rcv_get_gids: ERR 451B: DGID 0xfe80000000000000 is multicast or non local subnet prefix\n"
	dir := t.TempDir()
	path := filepath.Join(dir, "opensm.log")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(notKeys)
	for _, format := range []string{"plain", "table", "json"} {
		out, errOut, code := run(t, context.Background(), nil, "sm", "log", path, "-o", format)
		if code != 0 || errOut != "" || strings.Contains(out, "not explained") || strings.Contains(out, "not-explained") || format == "json" && !strings.Contains(out, `"not_explained": []`) {
			t.Errorf("-o %s: exit %d, stderr %q, stdout:\n%s", format, code, errOut, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if out, errOut, code := run(t, ctx, nil, "sm", "log", "--follow", path); code != 0 || strings.Contains(errOut, "not explained") {
		t.Errorf("--follow: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	mkey := "Nov 28 08:41:57 848998 [54B5A6C0] 0x01 -> osm_sminfo_rcv_process: ERR 2F1B: SMInfo(SET) sender (LID 7) authentication failure.Ignoring SMInfo\n"
	write(notKeys + mkey)
	if out, errOut, code := run(t, context.Background(), nil, "sm", "log", path, "-o", "table"); code != 4 || !strings.Contains(errOut, "1 line about partitions or keys not explained (ERR 2F1B at line 7)") || !strings.Contains(out, "not explained (ERR 2F1B)") || strings.Contains(out, "1A01") {
		t.Errorf("with 2F1B: exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if _, errOut, _ := run(t, ctx, nil, "sm", "log", "--follow", path); !strings.Contains(errOut, "2F1B") || strings.Contains(errOut, "2F10") {
		t.Errorf("--follow with 2F1B: stderr %q", errOut)
	}

	noRoute := "Nov 28 08:41:58 848998 [54B5A6C0] 0x01 -> pr_rcv_get_path_parms: ERR 1F07: Dead end path on switch Sw1 (GUID: 0x0000000000200000) to LID 5\n"
	write(notKeys + noRoute)
	for _, format := range []string{"plain", "json"} {
		if out, errOut, code := run(t, context.Background(), nil, "sm", "log", path, "-o", format); code != 0 || errOut != "" || !strings.Contains(out, "path-no-route") || strings.Contains(out, "not-explained") {
			t.Errorf("with 1F07, -o %s: exit %d, stderr %q, stdout:\n%s", format, code, errOut, out)
		}
	}
}

// TestLogNoRouteLab: the real daemon's routing refusals (ERR 1F02, 1F03, 1F05, 1F06,
// 1F07 and the MultiPathRecord's 4514, 4515, 4505, 4503, 4516; 4505 runs into the next
// record on one line) are path-no-route warnings, their ends named by the lab's sweep
// where the line gives only a LID (1F07 names only the destination), none not
// explained: exit 0 in every output, exit 1 being for partition and key errors.
func TestLogNoRouteLab(t *testing.T) {
	args := []string{"sm", "log", labNoRouteLog, "--year", "2026", "--fabric-file", labFabric}
	// The ten problems (1F05 twice is one); the table wraps the rule.
	for _, format := range []string{"plain", "table"} {
		out, errOut, code := run(t, context.Background(), nil, append(args, "-o", format)...)
		if code != 0 || strings.Contains(out, "not explained") || strings.Contains(out, "not-explained") || strings.Contains(errOut, "not explained") ||
			strings.Count(out, "path-no-route") != 10 || !strings.Contains(strings.Join(strings.Fields(out), " "), `from "HcaB"[1] to "HcaC"[1] the route leaves a switch by a port with no link`) {
			t.Errorf("-o %s: exit %d, stderr %q, stdout:\n%s", format, code, errOut, out)
		}
	}
	out, errOut, code := run(t, context.Background(), nil, append(args, "-o", "json")...)
	var doc struct {
		Events []struct {
			Kind, Severity, Code string
			From, To             *struct {
				LID      int    `json:"lid"`
				NodeDesc string `json:"node_desc"`
			}
		}
		NotExplained []json.RawMessage `json:"not_explained"`
		Errors       int
		Warnings     int
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("-o json: exit %d, %v, stderr %q", code, err, errOut)
	}
	end := func(p *struct {
		LID      int    `json:"lid"`
		NodeDesc string `json:"node_desc"`
	}) string {
		if p == nil {
			return "-"
		}
		return p.NodeDesc + "/" + strconv.Itoa(p.LID)
	}
	want := map[string]string{
		"1F07": "- HcaC/4", "4516": "- HcaC/4", "1F02": "Sw1/2 HcaC/4", "4514": "Sw1/2 HcaC/4", "1F03": "HcaB/3 Sw1/2", "4515": "HcaB/3 Sw1/2",
		"1F05": "HcaB/3 HcaC/4", "4505": "HcaB/3 HcaC/4", "1F06": "HcaB/3 HcaD/5", "4503": "HcaB/3 HcaD/5",
	}
	seen := map[string]bool{}
	for _, e := range doc.Events {
		if got := end(e.From) + " " + end(e.To); e.Kind != "path-no-route" || e.Severity != "warning" || got != want[e.Code] {
			t.Errorf("%s %s %s: %s, want %q", e.Kind, e.Severity, e.Code, got, want[e.Code])
		}
		seen[e.Code] = true
	}
	if len(seen) != len(want) || len(doc.NotExplained) != 0 || doc.Errors != 0 || doc.Warnings != 11 {
		t.Errorf("codes %v, want %d; %d not explained, %d errors, %d warnings (want 11)", seen, len(want), len(doc.NotExplained), doc.Errors, doc.Warnings)
	}
}

// TestLogQoSRejectedLab: the real daemon's QoS policy files it could not use (ERR
// AC05 then AC03; AC10, AC11, AC12, AC13 then AC04; AC01) are qos-policy-rejected errors, each one
// event with its file; the refusals logged on the line of an unpath or repath notice
// (whose format has no newline) are read; the good policy's ERR AC14 stays not
// explained. The JSON is checked against its schema (run).
func TestLogQoSRejectedLab(t *testing.T) {
	out, errOut, code := run(t, context.Background(), nil, "sm", "log", labQoSLog, "--year", "2026", "--each", "-o", "json")
	var doc struct {
		Events []struct {
			Kind, Severity, Code, Detail string
			Line                         int
			ConfLine                     *int     `json:"conf_line"`
			FixAt                        *string  `json:"fix_at"`
			LogLines                     []string `json:"log_lines"`
		}
		NotExplained []struct{ Code string } `json:"not_explained"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 1 {
		t.Fatalf("exit %d, %v, stderr %q", code, err, errOut)
	}
	var got []string
	for _, e := range doc.Events {
		switch e.Kind {
		case "qos-policy-rejected":
			at := "-"
			if e.FixAt != nil {
				at = (*e.FixAt)[strings.LastIndexByte(*e.FixAt, ':'):]
			}
			if e.Severity != "error" || !strings.HasSuffix(e.LogLines[len(e.LogLines)-1], "qos-policy.conf)") && e.Code != "AC01" {
				t.Errorf("%+v", e)
			}
			got = append(got, fmt.Sprintf("%s line %d at %s", e.Code, e.Line, at))
		case "path-refused":
			got = append(got, fmt.Sprintf("%s line %d", e.Code, e.Line))
		default:
			t.Errorf("%+v", e)
		}
	}
	want := []string{"1F1D line 15", "AC05 line 17 at :24", "AC11 line 21 at -", "AC10 line 25 at -", "AC12 line 29 at -", "AC13 line 33 at -",
		"AC05 line 37 at :28", "AC01 line 41 at -", "1F1D line 46", "1F1E line 48", "1F1E line 50"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(doc.NotExplained) != 1 || doc.NotExplained[0].Code != "AC14" {
		t.Errorf("not explained: %+v", doc.NotExplained)
	}
	// The sweep that read the good policy again (its SUBNET UP, line 45) logged no
	// QoS policy error: each event printed as it came gets its note then.
	if !strings.Contains(errOut, "note: qos-policy-rejected at line 17: OpenSM swept again after this and logged no QoS policy error (SUBNET UP at line 45,") {
		t.Errorf("stderr:\n%s", errOut)
	}
}

// TestLogPartialSweepJSON: a partial sweep naming the ports makes a log with no error
// exit 4, and the JSON's incomplete says so (it was only on stderr).
func TestLogPartialSweepJSON(t *testing.T) {
	f, err := cmdutil.ReadFabricFile(labFabric)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Nodes {
		if n.Description == "HcaD" {
			for _, p := range n.Ports {
				p.PKeys, p.PKeysError = nil, "timed out"
			}
		}
	}
	dir := t.TempDir()
	var b strings.Builder
	if err := fabric.EncodeFabric(&b, f); err != nil {
		t.Fatal(err)
	}
	fab := filepath.Join(dir, "fabric.json")
	log, err := os.ReadFile(labLog)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(log), "\n")
	path := filepath.Join(dir, "opensm.log")
	if os.WriteFile(fab, []byte(b.String()), 0o644) != nil || os.WriteFile(path, []byte(first+"\n"), 0o644) != nil {
		t.Fatal("write")
	}
	out, errOut, code := run(t, context.Background(), nil, "sm", "log", path, "--fabric-file", fab, "-o", "json")
	var doc struct{ Incomplete []cmdutil.Incomplete }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if code != 4 || len(doc.Incomplete) != 1 || doc.Incomplete[0].Kind != cmdutil.IncompletePartialSweep || !strings.Contains(errOut, "partial sweep") {
		t.Errorf("exit %d, incomplete %+v, stderr %q", code, doc.Incomplete, errOut)
	}
}

// TestLogSweptNoteEveryOutput: the note that a later sweep logged no partitions file
// error, which the summary gives each partitions-rejected problem, is said by every
// output that prints events as they come (--each, JSON's events, --follow), for each
// such event, in the same words, when that sweep comes.
func TestLogSweptNoteEveryOutput(t *testing.T) {
	out, _, _ := run(t, context.Background(), nil, "sm", "log", labLog, "--year", "2026", "-o", "json")
	var doc struct {
		Events []struct {
			Kind string `json:"kind"`
			Line int64  `json:"line"`
		} `json:"events"`
		Summary []struct {
			Kind     string   `json:"kind"`
			LastLine int64    `json:"last_line"`
			Notes    []string `json:"notes"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	notes := map[string]bool{}
	for _, g := range doc.Summary {
		for _, n := range g.Notes {
			if strings.HasPrefix(n, "OpenSM swept again") {
				notes[n] = true
			}
		}
	}
	var want []string
	for _, e := range doc.Events {
		if e.Kind == "partitions-rejected" {
			want = append(want, "note: partitions-rejected at line "+strconv.FormatInt(e.Line, 10)+": ")
		}
	}
	if len(notes) == 0 || len(want) == 0 {
		t.Fatalf("the lab's log has %d sweep notes, %d partitions-rejected events", len(notes), len(want))
	}
	dir := t.TempDir()
	followed := filepath.Join(dir, "opensm.log")
	b, err := os.ReadFile(labLog)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(followed, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{labLog, "--each"}, {labLog, "--each", "-o", "table"}, {labLog, "-o", "json"}, {followed, "--follow", "-o", "json"}, {followed, "--follow"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		_, errOut, _ := run(t, ctx, nil, append([]string{"sm", "log", "--year", "2026"}, args...)...)
		cancel()
		for _, w := range want {
			i := strings.Index(errOut, w)
			if i < 0 {
				t.Errorf("%v: no %q on stderr:\n%s", args, w, errOut)
				continue
			}
			line, _, _ := strings.Cut(errOut[i+len(w):], "\n")
			if !notes[line] {
				t.Errorf("%v: %q is not the summary's note (%v)", args, line, notes)
			}
		}
	}
}

// TestLogOpenSMConf: --opensm-conf gives what the flags would: its log_file is the log
// without FILE, its partition_config_file the partitions without --partitions, and its
// guid SELF's port; each said on stderr. A log_file OpenSM writes no file for, or one
// relative to its working directory, is bad usage saying what to give.
func TestLogOpenSMConf(t *testing.T) {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	log, parts := abs(labLog), abs(labConf)
	dir := t.TempDir()
	conf := func(text string) string {
		f, err := os.CreateTemp(dir, "opensm*.conf")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(text); err != nil {
			t.Fatal(err)
		}
		return f.Name()
	}
	full := conf("log_file " + log + "\npartition_config_file " + parts + "\nguid 0x0002c90300000201\n")
	base := []string{"sm", "log", "--year", "2026", "--fabric-file", labFabric, "--table-size", "64"}
	want := cmdtest.Run(t, root, false, nil, append(base, log, "--partitions", parts, "--sm-guid", "0x0002c90300000201")...)
	got := cmdtest.Run(t, root, false, nil, append(base, "--opensm-conf", full)...)
	if got.Code != want.Code || got.Stdout != want.Stdout {
		t.Errorf("sm log --opensm-conf: exit %d (flags: %d), stdout differs:\n%s\n--- with the flags:\n%s", got.Code, want.Code, got.Stdout, want.Stdout)
	}
	for _, note := range []string{"note: reading " + log + ", the log_file of " + full, "note: reading " + parts + ", the partition_config_file of " + full} {
		if !strings.Contains(got.Stderr, note) {
			t.Errorf("stderr lacks %q:\n%s", note, got.Stderr)
		}
	}
	for value, msg := range map[string]string{
		"stdout": `sets log_file "stdout": OpenSM writes its log to stdout (under systemd, the journal), not to a file: give it on standard input`,
		"(null)": `sets log_file "(null)": OpenSM writes its log to stdout`,
		"stderr": `sets log_file "stderr": OpenSM writes its log to stderr`,
		"o.log":  "sets log_file o.log, relative to OpenSM's working directory, which ibkey cannot see: give the log's path",
		`""`:     "sets log_file empty: OpenSM cannot open that and does not start",
	} {
		r := cmdtest.Run(t, root, false, nil, "sm", "log", "--opensm-conf", conf("log_file "+value+"\n"))
		if r.Code != 2 || !strings.Contains(r.Stderr, msg) {
			t.Errorf("log_file %s: exit %d, stderr %q; want exit 2 and %q", value, r.Code, r.Stderr, msg)
		}
	}
	// A log the conf names that is not here is this machine's, as the default log is:
	// exit 3.
	if r := cmdtest.Run(t, root, false, nil, "sm", "log", "--opensm-conf", conf("log_file /x/o.log\n")); r.Code != 3 || !strings.Contains(r.Stderr, "no OpenSM log /x/o.log") {
		t.Errorf("log_file /x/o.log: exit %d, stderr %q", r.Code, r.Stderr)
	}
	// A partitions.conf the conf names that cannot be read here: fixes name no line.
	for value, note := range map[string]string{
		"p.conf":    "names partition_config_file p.conf, relative to OpenSM's working directory, which ibkey cannot see (give --partitions)",
		"/x/p.conf": "names partition_config_file /x/p.conf, which is not here (give --partitions)",
		`""`:        "sets partition_config_file empty: OpenSM reads no partitions.conf",
	} {
		r := cmdtest.Run(t, root, false, nil, "sm", "log", "--year", "2026", "--opensm-conf", conf("log_file "+log+"\npartition_config_file "+value+"\n"))
		if r.Code != 1 || !strings.Contains(r.Stderr, note) {
			t.Errorf("partition_config_file %s: exit %d, stderr %q; want exit 1 and %q", value, r.Code, r.Stderr, note)
		}
	}
	// FILE given: the conf's log_file is not read.
	r := cmdtest.Run(t, root, false, nil, "sm", "log", log, "--year", "2026", "--opensm-conf", conf("log_file stdout\n"))
	if r.Code != 1 {
		t.Errorf("FILE and a conf logging to stdout: exit %d\n%s", r.Code, r.Stderr)
	}
}

// TestLogFollowNotExplainedNoFunction: --follow names a line not explained on stderr
// as OpenSM wrote it; one without a function's name (osm_log_v2 called directly, or
// another version's message) is its message alone, not ": MESSAGE".
func TestLogFollowNotExplainedNoFunction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opensm.log")
	if err := os.WriteFile(path, []byte("Nov 28 08:41:52 848998 [54B5A6C0] 0x01 -> pkey table of port 1 is bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, errOut, _ := run(t, ctx, nil, "sm", "log", "--follow", path)
	if !strings.Contains(errOut, "line 1 not explained: pkey table of port 1 is bad") {
		t.Errorf("stderr: %q", errOut)
	}
}
