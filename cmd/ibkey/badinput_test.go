package main

import (
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// TestBadInputFound: command lines TestBadInput's generator found breaking the rules,
// each with what its fix prints (cmdtest.Errors: the exit code, the text, one error
// line, nothing on stdout).
func TestBadInputFound(t *testing.T) {
	cmdtest.Errors(t, newRootCmd, []cmdtest.ErrorCase{
		// A newline in a token is shown as \n: never a second line reading as ibkey's.
		{Args: []string{"partitions", "check", "3\nibkey: fake"}, Code: 2, Stderr: `ibkey: partitions file: open 3\nibkey: fake: no such file or directory`},
		{Args: []string{"--demo", "pkeys", "--lid=3", "--ca=3\nibkey: fake"}, Code: 3, Stderr: `ibkey: the demo host's 3\nibkey: fake is not cabled`},
		// An empty file name is shown quoted.
		{Args: []string{"partitions", "check", ""}, Code: 2, Stderr: `ibkey: partitions file: open "": no such file or directory`},
		{Args: []string{"partitions", "show", "../../testdata/partitions/cluster.conf", "--previous="}, Code: 2, Stderr: "ibkey: --previous needs a value (given empty)"},
		// A port number out of a byte's range is bad input, not a missing port (exit 3).
		{Args: []string{"--demo", "pkeys", "--lid=3", "--ca=mlx5_0", "--ca-port=-1"}, Code: 2, Stderr: "ibkey: invalid --ca-port -1 (accepted: a port number 1-255 of --ca; 0 or unset for port 1)"},
		// The address flag given is named.
		{Args: []string{"--demo", "pkeys", "mlx5_0", "1", "--guid=0x1"}, Code: 2, Stderr: `ibkey: unexpected "mlx5_0 1" with --guid: a port is given either as DEV PORT`},
		// A missing --sm-log is refused before the endpoints are resolved and named.
		{Args: []string{"--demo", "can-talk", "node=storage01,pkey=0x8001", "lid=4,pkey=0x8001", "--sa", "--sm-log=/nonexistent/opensm.log"}, Code: 2, Stderr: "ibkey: --sm-log: stat /nonexistent/opensm.log: no such file or directory"},
		{Args: []string{"--demo", "exporter", "--once", "--sweep", "--partitions=-"}, Code: 2, Stderr: "ibkey: partitions file: - (standard input) cannot be read here: give the file's path"},
		// A simulator socket name too long to bind is bad input, not a failed bind (exit 3).
		{Args: []string{"--demo", "pkeys", "--lid=3", "--ibsim=" + strings.Repeat("s", 93)}, Code: 2, Stderr: "93 bytes, longer than the 92 an ibsim socket name holds"},
		// A value of a flag's plain type says what the type accepts.
		{Args: []string{"--demo", "pkeys", "--ca-port=x"}, Code: 2, Stderr: `strconv.ParseInt: parsing "x": invalid syntax (accepted: a whole number) (see 'ibkey pkeys --help')`},
		{Args: []string{"--demo", "pkeys", "--lid=3", "--mad-timeout=x"}, Code: 2, Stderr: "(accepted: a duration such as 500ms, 5s or 1m30s, or a plain number of milliseconds)"},
		{Args: []string{"--demo", "devices", "--no-color=x"}, Code: 2, Stderr: "(accepted: true or false; the flag alone is true)"},
		// A --node of blanks and commas names no host: bad input, not "no port found" (exit 3).
		{Args: []string{"--demo", "job", "--node= ,"}, Code: 2, Stderr: `ibkey: --node " ," names no host (accepted: names separated by commas`},
		// A GUID not in the fabric lists the nodes' GUIDs.
		{Args: []string{"--demo", "pkeys", "--guid=0x10000"}, Code: 3, Stderr: `node GUIDs: 0x0002c90200400100 "leaf01", 0x0002c90200400200 "leaf02"`},
	})
	// A job setting's value is shown escaped on stdout, never raw to the terminal.
	r := runIbkey(t, false, nil, "--demo", "job", "NCCL_IB_PKEY=\x1b[31m\u202e1")
	if strings.ContainsAny(r.stdout, "\x1b\u202e") || !strings.Contains(r.stdout, `NCCL_IB_PKEY=\x1b[31m\u202e1`) {
		t.Errorf("a setting's control characters reach stdout raw:\n%s", r.stdout)
	}
}
