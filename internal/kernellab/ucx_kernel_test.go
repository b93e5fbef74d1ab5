package kernellab_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The real UCX (Debian 12's libucx0 and ucx-utils, UCX 1.13.1) against `ibkey job
// --lib ucx` on the same rxe port, case by case: for each generated environment the
// guest creates a UCP worker with ucx_info -w (ucp_worker_create opens an interface
// on every port UCX selects, and each runs uct_ib_iface_init_pkey, which logs
// "using pkey[INDEX] 0xPKEY on DEV:PORT" at debug level) and runs ibkey job with the
// same environment. The cases are generated from what UCX's parsers and lookup
// turn on: UCX_NET_DEVICES names (dev:port, a bare device, a port or device the
// host lacks, case, '^', and the decorations an env file adds: a space after a
// comma, a CR, empty names), UCX_IB_PKEY values in and beyond 15 bits and in forms
// ucs_config_sscanf_hex refuses, the verbs transports' own PKEY variables, UCX_TLS
// with and without InfiniBand transports, and a port that is not ACTIVE (the netdev
// down). A case (ucx_info -w and ibkey) takes one to two seconds under TCG.

// ucxCase is one environment: Env are NAME=VALUE (values may hold a CR or spaces);
// Down runs it with rxe0's netdev down (the port not ACTIVE).
type ucxCase struct {
	Name string
	Env  []string
	Down bool
}

// ucxCases generates the cases.
func ucxCases() []ucxCase {
	dp := dev + ":" + port
	var cs []ucxCase
	add := func(name string, down bool, env ...string) {
		cs = append(cs, ucxCase{name, env, down})
	}
	add("unset", false)
	// Device names: each form alone, then the decorations of the one that exists.
	for i, n := range []string{dp, dev, dev + ":2", strings.ToUpper(dp), "mlx5_0:1", "all", "^" + dp} {
		add("dev"+strconv.Itoa(i), false, "UCX_NET_DEVICES="+n)
	}
	for i, n := range []string{"lo, " + dp, dp + "\r", "," + dp + ",,", "", "all," + dp} {
		add("devform"+strconv.Itoa(i), false, "UCX_NET_DEVICES="+n)
	}
	// P_Key values: within and beyond 15 bits, then the forms of one value that the
	// parser refuses or reads partly.
	for _, v := range []string{"auto", "0x7fff", "0x1234", "0x8001", "0xffff", "0xfffe", "0x"} {
		add("pkey_"+v, false, "UCX_NET_DEVICES="+dp, "UCX_IB_PKEY="+v)
	}
	for i, f := range []string{"%04x", " 0x%04x", "0x%04x\r"} {
		add("pkeyform"+strconv.Itoa(i), false, "UCX_IB_PKEY="+fmt.Sprintf(f, 0x7fff))
	}
	// The verbs transports' own variables, and the one they inherit before
	// UCX_IB_PKEY.
	for _, n := range []string{"UCX_RC_VERBS_PKEY", "UCX_UD_VERBS_PKEY", "UCX_RC_PKEY", "UCX_UD_PKEY"} {
		add(strings.ToLower(n), false, n+"=8001")
	}
	add("ucx_rc_verbs_pkey_range", false, "UCX_RC_VERBS_PKEY=0x8001")
	// Transports: none of InfiniBand's (the P_Key then not read), a verbs one, and
	// all but one that is not.
	add("tls_tcp", false, "UCX_TLS=tcp")
	add("tls_tcp_pkey", false, "UCX_TLS=tcp", "UCX_IB_PKEY=8001")
	add("tls_rc_v", false, "UCX_TLS=rc_v", "UCX_IB_PKEY=0x8001")
	add("tls_not_tcp", false, "UCX_TLS=^tcp")
	add("tls_empty", false, "UCX_TLS=") // "The TLs list is empty"
	// The port not ACTIVE.
	add("down", true)
	return cs
}

// ucxDir is where the guest writes each case's files (under the run's work/).
const ucxDir = "ucx"

// shellBytes is s as a printf format that prints exactly s (octal escapes for every
// byte but letters and digits): values may hold CRs, spaces and quotes.
func shellBytes(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\%03o", c)
		}
	}
	return b.String()
}

// ucxScript runs every case in one guest command. For case NAME it writes NAME.ucx
// (ucx_info's "using pkey", warning and error lines), NAME.ucx_rc, NAME.json,
// NAME.ibkey_err and NAME.ibkey_rc. Both run with only PATH, HOME (an empty
// directory: no ucx.conf) and the case's variables. The netdev is brought down for
// the cases that want it and up again after them (the port ACTIVE before the next
// commands).
func ucxScript(ibkey string) string {
	var b strings.Builder
	b.WriteString(`t0=$(date +%s%N)
ibkey=/tmp/ibkey-ucx
cp ` + ibkey + ` $ibkey || exit 1
d=/kl/work/` + ucxDir + `
mkdir -p $d /tmp/ucxhome
state() { cat /sys/class/infiniband/` + dev + `/ports/` + port + `/state; }
waitstate() { i=0; while ! state | grep -q "$1" && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; state > $d/state.$1; }
run() { # NAME, then NAME=VALUE arguments
  n=$1; shift
  env -i PATH=$PATH HOME=/tmp/ucxhome UCX_LOG_LEVEL=debug "$@" ucx_info -w -u t > /tmp/ucx.log 2>&1; echo $? > $d/$n.ucx_rc
  grep -E 'using pkey|UCX  (WARN|ERROR)' /tmp/ucx.log > $d/$n.ucx
  env -i PATH=$PATH HOME=/tmp/ucxhome "$@" $ibkey job --lib ucx -o json > $d/$n.json 2> $d/$n.ibkey_err; echo $? > $d/$n.ibkey_rc
}
`)
	down := false
	for _, c := range ucxCases() {
		if c.Down != down {
			if c.Down {
				b.WriteString("ip link set dummy0 down; waitstate DOWN\n")
			} else {
				b.WriteString("ip link set dummy0 up; waitstate ACTIVE\n")
			}
			down = c.Down
		}
		b.WriteString("run " + c.Name)
		for _, e := range c.Env {
			fmt.Fprintf(&b, ` "$(printf '%s')"`, shellBytes(e))
		}
		b.WriteString("\n")
	}
	if down {
		b.WriteString("ip link set dummy0 up; waitstate ACTIVE\n")
	}
	b.WriteString("rm -f $ibkey\necho $(( ($(date +%s%N) - t0) / 1000000 )) > $d/ms\n")
	return b.String()
}

// ucxPlan is the UCX command, for plan.
func ucxPlan(ibkey string) []Command {
	return []Command{{Name: "ucx_pkey", Script: ucxScript(ibkey), Timeout: 180 * time.Second}}
}

// ucxUsing is uct_ib_iface_init_pkey's debug line (ib_iface.c).
var ucxUsing = regexp.MustCompile(`using pkey\[(\d+)\] (0x[0-9a-f]+) on ` + dev + `:` + port + `/`)

// ucxVersionOpen is how ibkey says that the answer depends on the job's UCX
// version; ucxUninterpreted, that it does not interpret a variable the case sets.
const (
	ucxVersionOpen   = "ibkey does not know the job's UCX version"
	ucxUninterpreted = "ibkey does not interpret it"
)

// TestUCXOnKernel: for every generated case, `ibkey job --lib ucx` says what the
// real UCX did on rxe: where the worker was not created, does not work (exit 1);
// where it was, whether it opened rxe0's port and with which index and P_Key
// (works, exit 0, when it did); "not checked" (exit 4) only where ibkey says the
// answer depends on the UCX version (this is 1.13.1), or, where UCX created its
// worker, on a variable ibkey does not interpret: one UCX could not parse stopped
// the worker, and ibkey must say so.
func TestUCXOnKernel(t *testing.T) {
	run := boot(t)
	r := result(t, "ucx_pkey")
	if r.Exit != 0 {
		t.Fatalf("the UCX cases did not run (exit %d):\n%s\n%s", r.Exit, r.Stdout, r.Stderr)
	}
	read := workFiles(t, run, ucxDir, "UCX case output")
	for _, s := range []string{"DOWN", "ACTIVE"} {
		if got := strings.TrimSpace(read("state." + s)); !strings.Contains(got, s) {
			t.Fatalf("the port did not go %s: %q", s, got)
		}
	}
	opened := 0
	for _, c := range ucxCases() {
		var u ucxRun
		u.c = c
		u.log = read(c.Name + ".ucx")
		u.ibkeyErr = read(c.Name + ".ibkey_err")
		if _, err := fmt.Sscan(read(c.Name+".ucx_rc"), &u.ucxExit); err != nil {
			t.Fatalf("%s: ucx_info's exit status: %v", c.Name, err)
		}
		if _, err := fmt.Sscan(read(c.Name+".ibkey_rc"), &u.ibkeyExit); err != nil {
			t.Fatalf("%s: ibkey's exit status: %v", c.Name, err)
		}
		decodeJSON(t, c.Name, read(c.Name+".json"), &u.ibkey)
		if ucxUsing.MatchString(u.log) {
			opened++
		}
		t.Run(c.Name, func(t *testing.T) { checkUCXCase(t, u) })
	}
	var ms int
	if _, err := fmt.Sscan(read("ms"), &ms); err != nil {
		t.Fatalf("time: %v", err)
	}
	t.Logf("%d UCX cases on %s, %.1fs in all", len(ucxCases()), dev, float64(ms)/1000)
	// The cases must reach both sides of UCX's answers, or they test nothing.
	if opened == 0 || opened == len(ucxCases()) {
		t.Errorf("UCX opened %s in %d of %d cases: the cases do not separate", dev, opened, len(ucxCases()))
	}
}

// ucxRun is one case's result, as read back from the guest's files.
type ucxRun struct {
	c                  ucxCase
	log, ibkeyErr      string
	ucxExit, ibkeyExit int
	ibkey              jobJSON
}

// checkUCXCase compares what UCX did in one case with ibkey's judgement.
func checkUCXCase(t *testing.T, u ucxRun) {
	t.Helper()
	ls := u.ibkey.Libraries
	if len(ls) == 1 && ls[0].Verdict == "not-applicable" {
		// UCX_TLS without an RDMA transport: UCX must open no RDMA port and start.
		if ucxUsing.MatchString(u.log) || u.ucxExit != 0 || u.ibkeyExit != 0 {
			t.Errorf("%q: ibkey says UCX uses no RDMA transport (exit %d); UCX exited %d\n%s", u.c.Env, u.ibkeyExit, u.ucxExit, u.log)
		}
		return
	}
	if len(ls) != 1 || ls[0].Library != "ucx" || len(ls[0].Ports) != 1 {
		t.Fatalf("%q: ibkey judged %+v, want UCX on %s/%s alone\n%s", u.c.Env, ls, dev, port, u.ibkeyErr)
	}
	l, p := ls[0], ls[0].Ports[0]
	created := u.ucxExit == 0
	m := ucxUsing.FindStringSubmatch(u.log)
	index := "-"
	if p.Index != nil {
		index = strconv.Itoa(*p.Index)
	}
	what := fmt.Sprintf("%q (port down %v): UCX worker created %v, %s opened %v %v; ibkey %s (exit %d), port used %v %s index %s %s",
		u.c.Env, u.c.Down, created, dev, m != nil, m, l.Verdict, u.ibkeyExit, p.Used, p.Outcome, index, p.PKey)
	open := l.Verdict == "not-checked" || u.ibkeyExit == 4
	if open {
		why := strings.Join(l.Unchecked, "\n")
		if u.ibkeyExit != 4 || !strings.Contains(why, ucxVersionOpen) && !(created && strings.Contains(why, ucxUninterpreted)) {
			t.Errorf("%s: ibkey leaves open what UCX decided, without saying it depends on the UCX version\nunchecked: %q", what, l.Unchecked)
		}
		return
	}
	switch {
	case !created:
		if l.Verdict != "does-not-work" || u.ibkeyExit != 1 {
			t.Errorf("%s: UCX's worker was not created; ibkey must say does not work (exit 1)", what)
		}
	case m == nil:
		if p.Used {
			t.Errorf("%s: UCX did not open %s/%s; ibkey says it is used", what, dev, port)
		}
	default:
		i, _ := strconv.Atoi(m[1])
		switch {
		case !p.Used || p.Outcome != "" && p.Outcome != "uses" || l.Verdict != "works" || u.ibkeyExit != 0:
			t.Errorf("%s: UCX opened %s/%s and created its worker; ibkey must say it uses it and works (exit 0)", what, dev, port)
		case p.Index == nil || *p.Index != i || p.PKey != m[2]:
			t.Errorf("%s: UCX's interface took index %d, %s", what, i, m[2])
		}
	}
	if t.Failed() {
		t.Logf("UCX: %s\nibkey: findings %q, unchecked %q, port %q %q\n%s", u.log, l.Findings, l.Unchecked, p.Why, p.Problem, u.ibkeyErr)
	}
}
