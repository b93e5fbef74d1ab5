package kernellab_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// The real perftest (Debian's package, upstream 4.5-0.17) against `ibkey job
// --perftest` on the same rxe port, case by case; ibkey judges each case's client
// line in the same guest. The cases are generated from where perftest's and the
// kernel's rules change: the port's table length, the device's max_pkeys
// (ibv_query_device; rxe: 64 with a 1-entry table), the uint16_t of
// ibv_qp_attr.pkey_index, the int of CHECK_VALUE, and values strtol takes partly.
//
// TCG is slow (a client and server pair takes 2-4 s, an rdma_cm one more), so every
// value runs as a probe: the client alone, towards a port nothing listens on. It
// parses its line and runs ctx_chk_pkey_index ("Changing to 0") before it connects
// (send_bw.c: check_link, then establish_connection), so it stops at "Couldn't
// connect" exactly when its options were taken, with the index its QPs would get
// known. What ibv_modify_qp then does with that index on rxe is TestPKeyIndexOnKernel's
// (it takes every index). A few values also run as a whole client/server pair (the
// client loops back to its own address), over RC, UD and rdma_cm, so that the
// inference is checked end to end where the index reaches the kernel beyond the table.

// perftestBase is every case's command line before the case's options: few small
// messages (TCG is slow), and -F (--CPU-freq): on a loaded host the guest's clock
// calibration can fail (get_clock.c: "Correlation coefficient r^2: ... < 0.9"), and
// without -F the report then exits 1 ("Can't produce a report",
// perftest_parameters.c) after a run whose P_Key index worked.
const perftestBase = "ib_send_bw -d " + dev + " -i " + port + " -n 5 -s 64 -F"

// perftestMode is how a case runs: a probe, or a pair over RC or UD, with or without
// rdma_cm.
type perftestMode struct{ name, opts string }

var (
	modeProbe = perftestMode{"probe", ""}
	modeRC    = perftestMode{"rc", ""}
	modeUD    = perftestMode{"ud", "-c UD"}
	modeRCCM  = perftestMode{"rccm", "-R"}
	modeUDCM  = perftestMode{"udcm", "-c UD -R"}
)

// perftestCase is one --pkey_index value: Value is shell text expanded in the guest
// ($m is max_pkeys, $n the table length), Given false for no --pkey_index at all;
// Pairs are the modes it also runs in as a pair.
type perftestCase struct {
	Name, Value string
	Given       bool
	Pairs       []perftestMode
}

// perftestCases are the values at each boundary.
func perftestCases() []perftestCase {
	return []perftestCase{
		{"none", "", false, nil},
		{"zero", "0", true, nil},
		{"empty", "", true, nil},
		{"tbl_len", "$n", true, []perftestMode{modeRC, modeUDCM}}, // the first index beyond the table
		{"max_minus_1", "$((m-1))", true, nil},                    // the last index ctx_chk_pkey_index keeps
		{"max", "$m", true, []perftestMode{modeRCCM}},             // the first it changes to 0
		{"max_hex", "$(printf 0x%x $m)", true, nil},               // strtol base 0
		{"u16_max", "65535", true, nil},                           // above any uint16_t max_pkeys-1
		{"u16_wrap", "65536", true, nil},                          // index 0 as a uint16_t, were it not changed
		{"minus_1", "-1", true, []perftestMode{modeUD}},           // skips the check; index 65535
		{"minus_u16", "-65536", true, nil},                        // skips the check; index 0
		{"int_min", "2147483648", true, nil},                      // (int)strtol: INT_MIN, index 0
		{"octal", "010", true, nil},                               // strtol base 0: 8
		{"garbage", "1x", true, nil},
		{"hex_prefix_only", "0x", true, nil},
		// -R: rdma_cm gives the QPs 0xffff's entry on RoCE, whatever --pkey_index says.
		{"cm_none", "", false, []perftestMode{modeUDCM}},
		{"cm_minus_1", "-1", true, []perftestMode{modeRCCM}},
	}
}

// modes are the runs of c: its probe first.
func (c perftestCase) modes() []perftestMode { return append([]perftestMode{modeProbe}, c.Pairs...) }

// perftestDir is where the guest writes each case's files (under the run's work/).
const perftestDir = "perftest"

// perftestScript runs every case in one guest command. For each run NAME it writes
// NAME.args (the --pkey_index option as run), NAME.client and NAME.server (output;
// no server for a probe), NAME.rc ("CLIENT SERVER" exit statuses, - for no server),
// NAME.json and NAME.ibkey_rc (ibkey job), NAME.ms (the run's wall time), and for a
// pair NAME.tries (how many times it ran: an -R pair rdma_cm rejected runs again).
// ibkey runs from a copy in the guest's tmpfs: from the shared directory (9p,
// uncached) each start reads the binary again, a second under TCG. rdma_cm needs an
// address on the rxe netdev: one is added for the cases and removed after them.
func perftestScript(ibkey string) string {
	var b strings.Builder
	b.WriteString(`ip link set lo up
ip addr add 192.0.2.1/24 dev dummy0 || exit 1
ibkey=/tmp/ibkey-perftest
cp ` + ibkey + ` $ibkey || exit 1
d=/kl/work/` + perftestDir + `
mkdir -p $d
m=$(ibv_devinfo -v -d ` + dev + ` | awk '/max_pkeys/ {print $2}')
n=$(ls /sys/class/infiniband/` + dev + `/ports/` + port + `/pkeys | wc -l)
echo "$m $n" > $d/limits
p=18600
judge() { # NAME LINE: ibkey job on the client's line
  $ibkey job --perftest "$2" -o json > $d/$1.json 2> $d/$1.ibkey_err; echo $? > $d/$1.ibkey_rc
  echo $(( ($(date +%s%N) - t0) / 1000000 )) > $d/$1.ms
}
probe() { # NAME PKEY_OPTION...: the client alone, towards a port nothing listens on
  name=$1; shift
  t0=$(date +%s%N)
  base="` + perftestBase + ` -p 18599"
  echo "$*" > $d/$name.args
  : > $d/$name.server
  timeout 20 $base "$@" 127.0.0.1 > $d/$name.client 2>&1; echo "$? -" > $d/$name.rc
  judge $name "$base $* 127.0.0.1"
}
pair() { # NAME MODE_OPTS CM PKEY_OPTION...
  name=$1; opts=$2; cm=$3; shift 3
  t0=$(date +%s%N)
  echo "$*" > $d/$name.args
  try=0
  while :; do
    try=$((try+1))
    p=$((p+1))
    base="` + perftestBase + ` -p $p $opts"
    timeout 20 $base > $d/$name.server 2>&1 &
    sp=$!
    host=127.0.0.1
    # Wait for the server's listener: rdma_cm's (rdma res) with -R, else its TCP port.
    if [ $cm = 1 ]; then
      host=192.0.2.1
      listening() { rdma res show cm_id 2>/dev/null | grep ":$p" | grep -q LISTEN; }
    else
      listening() { ss -ltn | grep -q ":$p "; }
    fi
    i=0; while ! listening && [ $i -lt 200 ] && kill -0 $sp 2>/dev/null; do sleep 0.05; i=$((i+1)); done
    timeout 20 $base "$@" $host > $d/$name.client 2>&1; c=$?
    [ $c = 0 ] || kill $sp 2>/dev/null
    wait $sp; s=$?
    # With -R the connection is rdma_cm's, which rejected it now and then under load
    # (the client got RDMA_CM_EVENT_REJECTED, then crashed): rdma_cm's outcome, not
    # --pkey_index's (the QPs are not made yet), so the pair runs again, 3 times at most.
    [ $cm = 1 ] && [ $c != 0 ] && [ $try -lt 3 ] && grep -q RDMA_CM_EVENT_REJECTED $d/$name.client && continue
    break
  done
  echo "$c $s" > $d/$name.rc; echo $try > $d/$name.tries
  judge $name "$base $* $host"
}
`)
	for _, c := range perftestCases() {
		opt := ""
		if c.Given {
			opt = `"--pkey_index=` + c.Value + `"`
		}
		for _, m := range c.modes() {
			if m == modeProbe {
				fmt.Fprintf(&b, "probe %s_%s %s\n", c.Name, m.name, opt)
				continue
			}
			cm := 0
			if strings.Contains(m.opts, "-R") {
				cm = 1
			}
			fmt.Fprintf(&b, "pair %s_%s '%s' %d %s\n", c.Name, m.name, m.opts, cm, opt)
		}
	}
	b.WriteString("ip addr del 192.0.2.1/24 dev dummy0; rm -f $ibkey\n")
	return b.String()
}

// perftestRun is one case's result, as read back from the guest's files.
type perftestRun struct {
	name, args             string
	client, server         string
	clientExit, serverExit int // serverExit -1: a probe
	ms                     int // the case's wall time in the guest, in milliseconds
	ibkeyExit              int
	ibkey                  jobJSON
}

// perftestValue is the --pkey_index perftest's parser accepted, as CHECK_VALUE makes
// it: (int)strtol(s, &end, 0), refused when anything follows the number. ok is false
// when it is refused. Go's base 0 agrees with strtol's for the values generated here
// (0x, a leading 0, a sign).
func perftestValue(s string) (v int32, ok bool) {
	if s == "" {
		return 0, true // strtol reads nothing, *end is NUL
	}
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// TestPerftestOnKernel: for every generated case, `ibkey job --perftest` says what
// the real perftest did on rxe. perftest refusing its line is ibkey's "fails" (exit 1)
// and nothing else is; where ibkey says "uses" perftest ran and put that index in its
// QPs (0 after "Changing to 0", else the uint16_t of the value) and the entry is the
// kernel's; never "not checked": max_pkeys is read, rxe's take on an index beyond
// the table and rdma_cm's route on RoCE are known;
// a "Changing to 0" note only where perftest printed it. With -R, rdma_cm's entry of
// 0xffff on RoCE (index 0 on rxe); nothing is left not checked on rxe.
func TestPerftestOnKernel(t *testing.T) {
	run := boot(t)
	r := result(t, "perftest_pkey")
	if r.Exit != 0 {
		t.Fatalf("the perftest cases did not run (exit %d):\n%s\n%s", r.Exit, r.Stdout, r.Stderr)
	}
	read := workFiles(t, run, perftestDir, "perftest case output")
	var maxPKeys, tblLen int
	if _, err := fmt.Sscan(read("limits"), &maxPKeys, &tblLen); err != nil || maxPKeys <= tblLen || tblLen != 1 {
		t.Fatalf("limits %q: want rxe's max_pkeys above its 1-entry table (%v)", read("limits"), err)
	}
	pkeys := rawValues(t)["ports/1/pkeys/0"]
	n, total := 0, 0
	for _, c := range perftestCases() {
		for _, m := range c.modes() {
			n++
			pr := perftestRun{name: c.Name + "_" + m.name}
			pr.args = strings.TrimSpace(read(pr.name + ".args"))
			pr.client, pr.server = read(pr.name+".client"), read(pr.name+".server")
			var server string
			if _, err := fmt.Sscan(read(pr.name+".rc"), &pr.clientExit, &server); err != nil {
				t.Fatalf("%s: exit statuses: %v", pr.name, err)
			}
			pr.serverExit = -1
			if m != modeProbe {
				var err error
				if pr.serverExit, err = strconv.Atoi(server); err != nil {
					t.Fatalf("%s: server exit status %q", pr.name, server)
				}
				if tries := strings.TrimSpace(read(pr.name + ".tries")); tries != "1" {
					t.Logf("%s: ran %s times (rdma_cm rejected the connection)", pr.name, tries)
				}
			}
			if _, err := fmt.Sscan(read(pr.name+".ms"), &pr.ms); err != nil {
				t.Fatalf("%s: time: %v", pr.name, err)
			}
			if _, err := fmt.Sscan(read(pr.name+".ibkey_rc"), &pr.ibkeyExit); err != nil {
				t.Fatalf("%s: ibkey's exit status: %v", pr.name, err)
			}
			decodeJSON(t, pr.name, read(pr.name+".json"), &pr.ibkey)
			t.Run(pr.name, func(t *testing.T) { checkPerftestCase(t, pr, c.Given, m, maxPKeys, tblLen, pkeys) })
			total += pr.ms
		}
	}
	t.Logf("%d perftest runs on %s (max_pkeys %d, %d-entry table), %.1fs in all", n, dev, maxPKeys, tblLen, float64(total)/1000)
}

// checkPerftestCase compares one run of perftest with ibkey's judgement of its line.
func checkPerftestCase(t *testing.T, pr perftestRun, given bool, m perftestMode, maxPKeys, tblLen int, pkey0 string) {
	t.Helper()
	value := strings.TrimPrefix(pr.args, "--pkey_index=")
	v, parsed := perftestValue(value)
	if !given {
		v, parsed = 0, true
	}
	// A pair ran when both ends exited 0; a probe took its options when it got as far
	// as connecting (its QPs come after: on rxe, any index is taken).
	ran := pr.clientExit == 0 && pr.serverExit == 0
	if m == modeProbe {
		ran = pr.clientExit == 1 && strings.Contains(pr.client, "Couldn't connect")
	}
	changed := strings.Contains(pr.client, "Changing to 0")
	refused := strings.Contains(pr.client, "should be int")
	if ls := pr.ibkey.Libraries; len(ls) != 1 || len(ls[0].Ports) != 1 || !ls[0].Ports[0].Used {
		t.Fatalf("%s: ibkey job judged %+v, want perftest on %s/%s alone\n%s", pr.name, ls, dev, port, pr.client)
	}
	l := pr.ibkey.Libraries[0]
	p := l.Ports[0]
	index := "-"
	if p.Index != nil {
		index = strconv.Itoa(*p.Index)
	}
	what := fmt.Sprintf("%s [%s]: perftest client exit %d, server exit %d (Changing to 0: %v); ibkey %s/%s index %s exit %d",
		pr.name, pr.args, pr.clientExit, pr.serverExit, changed, l.Verdict, p.Outcome, index, pr.ibkeyExit)
	// The test's own reading of perftest (CHECK_VALUE, ctx_chk_pkey_index) first.
	if parsed == refused || parsed && changed != (v > 0 && int(v) > maxPKeys-1) {
		t.Errorf("%s: perftest did not do what its source says (refused %v, changed %v, max_pkeys %d)\n%s", what, refused, changed, maxPKeys, pr.client)
	}
	cm := strings.Contains(m.opts, "-R")
	switch outcome := p.Outcome; {
	case refused || !ran:
		if l.Verdict != "does-not-work" || pr.ibkeyExit != 1 {
			t.Errorf("%s: perftest did not run; ibkey must say so (exit 1)\nclient: %s", what, pr.client)
		}
	case l.Verdict == "does-not-work" || pr.ibkeyExit == 1:
		t.Errorf("%s: perftest ran, ibkey says it does not work", what)
	case outcome == "" || outcome == "uses":
		want := int(uint16(v))
		if changed {
			want = 0
		}
		switch {
		case cm && (p.Index == nil || *p.Index != 0 || p.PKey != pkey0 || l.Verdict != "works" || pr.ibkeyExit != 0):
			// rdma_cm asks for 0xffff on RoCE (cma.c cma_ib_init_qp_attr): rxe's one
			// entry, index 0, whatever --pkey_index says.
			t.Errorf("%s: with -R rdma_cm takes 0xffff's entry, index 0 (%s), and perftest ran: ibkey must say works/exit 0", what, pkey0)
		case cm:
		case l.Verdict != "works" || pr.ibkeyExit != 0:
			t.Errorf("%s: ibkey uses an entry but does not say works/exit 0", what)
		case p.Index == nil || *p.Index != want:
			t.Errorf("%s: perftest's QPs took index %d", what, want)
		case p.PKey != pkey0: // want is 0: rxe's table has one entry
			t.Errorf("%s: index 0 holds %s (sysfs), ibkey says %s", what, pkey0, p.PKey)
		}
	case outcome == "not-checked":
		// Nothing is open on rxe: a value beyond the table is decided by the
		// max_pkeys ibkey reads (64) and rxe's take on any index (0xffff), and -R by
		// rdma_cm's 0xffff on RoCE (job.perftestPick, job.roceOutside,
		// job.perftestRDMACM).
		t.Errorf("%s: ibkey leaves open what it could have said", what)
	default:
		t.Errorf("%s: unexpected outcome %q", what, outcome)
	}
	noted := strings.Contains(strings.Join(l.Notes, "\n"), "Changing to 0")
	if noted && !changed {
		t.Errorf("%s: ibkey says perftest changes the index to 0; perftest did not\n%s", what, pr.client)
	}
	if t.Failed() {
		t.Logf("client: %s\nserver: %s", pr.client, pr.server)
	}
}

// pkeyIndexResult is testdata/pkeyindex.c's answer.
type pkeyIndexResult struct {
	MaxPKeys   int `json:"max_pkeys"`
	PKeyTblLen int `json:"pkey_tbl_len"`
	Index      []struct {
		Index      int `json:"index"`
		QueryRC    int `json:"query_rc"`
		QueryErrno int `json:"query_errno"`
		PKey       int `json:"pkey"`
		RCInit     int `json:"rc_init"`
		UDInit     int `json:"ud_init"`
	} `json:"index"`
}

// pkeyIndexes are the indexes the oracle tries: the table's, beyond it, max_pkeys'
// neighbours, the uint16_t's last, and -1 (stored as 65535, as perftest stores it).
const pkeyIndexes = "0 1 2 63 64 65 65535 -1"

// TestPKeyIndexOnKernel: what perftestPick's comment says of rxe (Linux 6.1), from
// the kernel itself: ibv_query_device's max_pkeys (64) is not the port's table size
// (pkey_tbl_len 1, one entry 0xffff); ibv_query_pkey answers only inside the table
// (rdma-core reads sysfs pkeys/N: ENOENT beyond); ibv_modify_qp to INIT takes any
// pkey_index on an RC and a UD QP (no check in rxe, and Debian's kernel has no
// CONFIG_SECURITY_INFINIBAND). Should a kernel change this, ibkey's perftest
// verdicts on RoCE must be looked at again.
func TestPKeyIndexOnKernel(t *testing.T) {
	var r pkeyIndexResult
	decodeJSON(t, "pkeyindex", mustSucceed(t, "pkeyindex"), &r)
	if r.MaxPKeys != 64 || r.PKeyTblLen != 1 {
		t.Errorf("max_pkeys %d, pkey_tbl_len %d; want rxe's 64 and 1", r.MaxPKeys, r.PKeyTblLen)
	}
	if len(r.Index) != len(strings.Fields(pkeyIndexes)) {
		t.Fatalf("%d answers for %q", len(r.Index), pkeyIndexes)
	}
	for _, e := range r.Index {
		inTable := e.Index >= 0 && e.Index < r.PKeyTblLen
		switch {
		case inTable && (e.QueryRC != 0 || e.PKey != 0xffff):
			t.Errorf("index %d: ibv_query_pkey %d (errno %d) %#x, want 0xffff", e.Index, e.QueryRC, e.QueryErrno, e.PKey)
		case !inTable && (e.QueryRC == 0 || e.QueryErrno != 2):
			t.Errorf("index %d: ibv_query_pkey %d (errno %d), want ENOENT beyond the table", e.Index, e.QueryRC, e.QueryErrno)
		}
		if e.RCInit != 0 || e.UDInit != 0 {
			t.Errorf("index %d: ibv_modify_qp to INIT: RC %d, UD %d; rxe took every index", e.Index, e.RCInit, e.UDInit)
		}
	}
}
