package cantalk

import (
	"errors"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/query"
)

// TestSourceFlags: an endpoint whose source was not given gets, from can-talk, the
// whole message with the flags that give it (query's error names none), exit 2.
func TestSourceFlags(t *testing.T) {
	cmdtest.Errors(t, root, []cmdtest.ErrorCase{
		{Args: []string{"can-talk", "0x8001", "0x0002c90300000204"}, Code: 2, Stderr: "ibkey: " + wantGUID + "\n"},
		{Args: []string{"can-talk", "0x10000", "0x8001"}, Code: 2, Stderr: `ibkey: endpoint "0x10000" is a port GUID (0x0000000000010000) (if you meant a P_Key: a P_Key is at most 0xffff): resolving a GUID needs --partitions FILE (the tables the SM would program), --fabric-file FILE (a saved sweep) or a fabric to sweep (--ibsim, --ca); or use DEV/PORT for a local port or a P_Key value` + "\n"},
		{Args: []string{"can-talk", "--partitions", clusterConf, "0x0002c90300001021,index=1", "0x8001"}, Code: 2, Stderr: `ibkey: endpoint "0x0002c90300001021,index=1": index= and port= need a port of a sweep; with --partitions a GUID is a partitions.conf member, which has no table index` + "\n"},
	})
	// lid= and node= always get a fabric from can-talk (MADs or --fabric-file), so
	// their messages are checked on the errors query returns.
	for _, tc := range []struct{ token, want string }{
		{"0x0002c90300000204", wantGUID},
		{"lid=3", `endpoint "lid=3" is a port read over the fabric (LID 3): it needs fabric access (MADs via umad or --ibsim) or --fabric-file FILE; use DEV/PORT for a local port or the P_Key the remote QP uses`},
		{"node=HcaA", `endpoint "node=HcaA" names a node of the fabric: it needs a sweep (fabric access via umad or --ibsim, or --fabric-file FILE)`},
	} {
		spec, err := check.ParseEndpoint(tc.token)
		if err != nil {
			t.Fatal(err)
		}
		qerr := query.CheckResolvable(tc.token, spec)
		err = withSourceFlags(qerr)
		var src *query.EndpointSourceError
		if err == nil || err.Error() != tc.want || !errors.As(err, &src) || cmdutil.ExitCode(err) != cmdutil.ExitUsage {
			t.Errorf("%s: %v (exit %d), want %q (exit 2, an *EndpointSourceError inside)", tc.token, err, cmdutil.ExitCode(err), tc.want)
		}
		if !errors.Is(err, src.Need) {
			t.Errorf("%s: not %v", tc.token, src.Need)
		}
	}
	// Other errors pass as they are.
	other := &query.NotFoundError{What: "device", Name: "mlx5_9"}
	if err := withSourceFlags(other); err != other {
		t.Errorf("withSourceFlags(%v) = %v", other, err)
	}
	if err := withSourceFlags(nil); err != nil {
		t.Errorf("withSourceFlags(nil) = %v", err)
	}
}

const wantGUID = `endpoint "0x0002c90300000204" is a port GUID (0x0002c90300000204): resolving a GUID needs --partitions FILE (the tables the SM would program), --fabric-file FILE (a saved sweep) or a fabric to sweep (--ibsim, --ca); or use DEV/PORT for a local port or a P_Key value`

// TestUnusedFlagsChecked (issue 28 item 7): a bad --timeout or --table-size is bad
// input (exit 2) even when the endpoints need no sweep and no partitions file.
func TestUnusedFlagsChecked(t *testing.T) {
	cmdtest.Errors(t, root, []cmdtest.ErrorCase{
		{Args: []string{"can-talk", "--timeout", "-1s", "0x8001", "0x0001"}, Code: 2, Stderr: "ibkey: invalid --timeout -1s (accepted: a positive duration, e.g. 30s)\n"},
		{Args: []string{"can-talk", "--table-size", "0", "0x8001", "0x0001"}, Code: 2, Stderr: "ibkey: invalid --table-size 0 (accepted: 1-65535, the port's PartitionCap)\n"},
	})
}

// TestSMLogNotReadable: an --sm-log that cannot be read as a log (a directory, a file
// that is not there) is bad input, exit 2 naming it, before anything is asked: a log
// not read must not be said to give no reason for a refusal.
func TestSMLogNotReadable(t *testing.T) {
	dir := t.TempDir()
	base := []string{"can-talk", "--fabric-file", smallFabric, "lid=1,pkey=0x8002", "lid=4,pkey=0x0002", "--sa", "--sm-log"}
	cmdtest.Errors(t, root, []cmdtest.ErrorCase{
		{Args: append(base[:len(base):len(base)], dir), Code: 2, Stderr: "ibkey: --sm-log: " + dir + ": is a directory, not a regular file"},
		{Args: append(base[:len(base):len(base)], dir+"/opensm.log"), Code: 2, Stderr: "ibkey: --sm-log: open " + dir + "/opensm.log: no such file or directory"},
	})
}

// TestSAPortWithoutLID: --sa with an end that exists and has no LID (a DOWN port of
// the sweep) keeps the verdict, NO (NOT ACTIVE), exit 1, and says the Subnet Manager
// was not asked (the SA answers by LID); it is no missing port (exit 3), and nothing
// is sent to ask it.
func TestSAPortWithoutLID(t *testing.T) {
	for _, ends := range [][2]string{{"node=HcaA,port=2,pkey=0x8002", "lid=4,pkey=0x0002"}, {"lid=4,pkey=0x0002", "node=HcaC,port=2,pkey=0x8002"}} {
		r := cmdtest.Run(t, root, false, nil, "can-talk", "--fabric-file", smallFabric, ends[0], ends[1], "--sa")
		if r.Code != 1 || !strings.HasPrefix(r.Stdout, "NO (NOT ACTIVE)") || !strings.Contains(r.Stdout, "the Subnet Manager was not asked") ||
			!strings.Contains(r.Stderr, "warning: not checked: the Subnet Manager was not asked") {
			t.Errorf("%v: exit %d, want 1, NOT ACTIVE and the SM not asked\n%s%s", ends, r.Code, r.Stdout, r.Stderr)
		}
	}
}
