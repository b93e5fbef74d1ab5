// Package slurm_test runs ibkey's Slurm scripts the way Slurm runs them (no search
// path, the environment prolog_epilog.html lists for each) against the simulated
// fabric with a running OpenSM.
package slurm_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// ibkeyBin builds the ibkey binary once per test binary.
var ibkeyBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ibkey-slurm-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ibkeyBin = filepath.Join(dir, "ibkey")
	out, err := exec.Command("go", "build", "-o", ibkeyBin, "github.com/ibkey/ibkey/cmd/ibkey").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cluster is the lab for these tests: cluster.net with OpenSM running, the port GUID
// and LID of each node, and a config file for the scripts.
type cluster struct {
	l     *lab.Lab
	sm    *lab.OpenSMDaemon
	guid  map[string]check.GUID // node01 -> port GUID
	lid   map[string]uint16
	conf  string
	state string
}

const baseConf = "Default=0x7fff, ipoib : ALL=full ;\n"

func startCluster(t *testing.T, extraConf string) *cluster {
	t.Helper()
	l := lab.Start(t, "testdata/cluster.net", nil)
	c := &cluster{l: l, guid: map[string]check.GUID{}, lid: map[string]uint16{}}
	c.sm = l.StartOpenSMDaemon(t, baseConf)
	tr := l.Dial(t, "", mad.Options{Timeout: 300 * time.Millisecond, Retries: 2})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f, err := query.Sweep(ctx, tr, query.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Nodes {
		if n.Type == check.NodeCA {
			host := strings.Fields(n.Description)[0]
			c.guid[host] = n.Port(1).GUID
			c.lid[host] = n.Port(1).LID
		}
	}
	c.state = filepath.Join(t.TempDir(), "run-ibkey")
	c.conf = filepath.Join(t.TempDir(), "slurm.conf")
	c.writeConf(t, extraConf)
	return c
}

// writeConf is the site's /etc/ibkey/slurm.conf for the tests: the binary just
// built, MADs through this lab's ibsim, the Prolog reading the fabric.
func (c *cluster) writeConf(t *testing.T, extra string) {
	t.Helper()
	conf := fmt.Sprintf("IBKEY=%s\nIBKEY_ARGS=(--ibsim=%s --mad-timeout 300ms)\nIBKEY_WAIT=25s\nIBKEY_SOURCE=fabric\nIBKEY_STATE_DIR=%s\n%s", ibkeyBin, c.l.SockName, c.state, extra)
	if err := os.WriteFile(c.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
}

// partition is a partitions.conf line putting hosts in 0x0042 as full members.
func (c *cluster) partition(hosts ...string) string {
	var gs []string
	for _, h := range hosts {
		gs = append(gs, c.guid[h].String())
	}
	return baseConf + "job42=0x0042, ipoib, defmember=full : " + strings.Join(gs, ", ") + " ;\n"
}

// run runs a script with only the environment Slurm gives it (no PATH) plus
// IBKEY_SLURM_CONF.
func (c *cluster) run(t *testing.T, script string, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("/bin/bash", script)
	cmd.Env = append([]string{"IBKEY_SLURM_CONF=" + c.conf}, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return out.String(), errOut.String(), code
}

// prologEnv is what slurmd 22.05 gives the Prolog and the Epilog on node
// (prep_script_slurmd.c, _build_env; the same names under TestRealSlurm): no PATH,
// the job's nodes in SLURM_NODELIST (SLURM_JOB_NODELIST too only from 23.11), and
// SLURM_JOB_COMMENT, from the job's credential, only when the job has a --comment.
// 22.05 has no --extra; SLURM_JOB_EXTRA comes with it in 23.02. TestRealSlurm checks
// these names against slurmd's (ctldEnv's against slurmctld's).
func prologEnv(node, comment string) []string {
	env := []string{"SLURMD_NODENAME=" + node, "SLURM_CLUSTER_NAME=lab", "SLURM_CONF=/etc/slurm/slurm.conf",
		"SLURM_JOBID=4242", "SLURM_JOB_ID=4242", "SLURM_JOB_CPUS_PER_NODE=1", "SLURM_JOB_GID=1000",
		"SLURM_JOB_NUM_NODES=2", "SLURM_JOB_PARTITION=gpu", "SLURM_JOB_RESTART_COUNT=0", "SLURM_JOB_STDIN=/dev/null",
		"SLURM_JOB_STDOUT=/home/alice/slurm-%j.out", "SLURM_JOB_UID=1000", "SLURM_JOB_USER=alice",
		"SLURM_JOB_WORK_DIR=/home/alice", "SLURM_NODELIST=node[02-03]", "SLURM_SCRIPT_CONTEXT=prolog_slurmd", "SLURM_UID=1000"}
	if comment != "" {
		env = append(env, "SLURM_JOB_COMMENT="+comment)
	}
	return env
}

// taskEnv is what slurmstepd gives the TaskProlog of a batch script: the job's
// environment (the one sbatch sent: the user's, with their PATH) and the step's
// SLURM_ variables (task.c: SLURM_SCRIPT_CONTEXT=prolog_task), but not
// SLURM_JOB_COMMENT. TestRealSlurm checks these names against slurmstepd's.
func taskEnv(node string) []string {
	return []string{"SLURM_JOB_ID=4242", "SLURM_JOBID=4242", "SLURMD_NODENAME=" + node, "SLURM_SCRIPT_CONTEXT=prolog_task",
		"SLURM_PROCID=0", "SLURM_LOCALID=0", "SLURM_NODEID=0", "SLURM_NNODES=2", "SLURM_JOB_NODELIST=node[02-03]",
		"SLURM_NODELIST=node[02-03]", "ENVIRONMENT=BATCH", "HOME=/home/alice", "PATH=/usr/bin:/bin"}
}

// ctldEnv is what slurmctld 22.05 gives PrologSlurmctld (job_mgr.c,
// job_common_env_vars, run by slurmscriptd; the same names under TestRealSlurm): no
// PATH and no SLURM_CONF; SLURM_JOB_ACCOUNT is "(null)" for a job without one.
func ctldEnv(comment string) []string {
	return []string{"SLURM_CLUSTER_NAME=lab", "SLURM_JOBID=4242", "SLURM_JOB_ID=4242", "SLURM_JOB_ACCOUNT=(null)",
		"SLURM_JOB_COMMENT=" + comment, "SLURM_JOB_CPUS_PER_NODE=1(x2)", "SLURM_JOB_GID=1000", "SLURM_JOB_GROUP=lab",
		"SLURM_JOB_NAME=train", "SLURM_JOB_NODELIST=node[02-03]", "SLURM_JOB_NUM_NODES=2", "SLURM_JOB_PARTITION=gpu",
		"SLURM_JOB_RESTART_COUNT=0", "SLURM_JOB_STDIN=/dev/null", "SLURM_JOB_STDOUT=/home/alice/slurm-%j.out",
		"SLURM_JOB_UID=1000", "SLURM_JOB_USER=alice", "SLURM_JOB_WORK_DIR=/home/alice", "SLURM_SCRIPT_CONTEXT=prolog_slurmctld"}
}

// The job's partition: a pkey= word of --comment (22.05's only field for it:
// `sbatch --extra=...` there is taken as --extra-node-info and refused) or of --extra
// (SLURM_JOB_EXTRA, 23.02 on), else IBKEY_PKEY; none: the job is not gated.
func TestJobPKey(t *testing.T) {
	for _, c := range []struct {
		env  []string
		conf string
		want string // "" : exit 1
	}{
		{prologEnv("node02", "pkey=0x0042"), "", "0x0042"},
		{prologEnv("node02", "train run pkey=0x8042 x"), "", "0x8042"},
		{prologEnv("node02", ""), "", ""},
		{prologEnv("node02", "no key here"), "IBKEY_PKEY=0x0007\n", "0x0007"},
		{append(prologEnv("node02", "pkey=0x0042"), "SLURM_JOB_EXTRA=pkey=0x0043"), "", "0x0043"},
		{ctldEnv("pkey=0x0042"), "", "0x0042"},
		// A word is not a file pattern: with a file "pkey=0x0099" in the working
		// directory, "pkey=*" was that file's name, a key the job never asked for.
		// Now it is "*", which ibkey job --want refuses (exit 2).
		{prologEnv("node02", "pkey=*"), "", "*"},
	} {
		dir := t.TempDir()
		conf := filepath.Join(dir, "slurm.conf")
		os.WriteFile(conf, []byte(c.conf), 0o644)
		os.WriteFile(filepath.Join(dir, "pkey=0x0099"), nil, 0o644)
		here, _ := os.Getwd()
		cmd := exec.Command("/bin/bash", "-uc", ". "+filepath.Join(here, "ibkey-slurm.sh")+"; ibkey_load_config; ibkey_job_pkey && echo shell still globs: pkey=*")
		cmd.Dir = dir
		cmd.Env = append([]string{"IBKEY_SLURM_CONF=" + conf}, c.env...)
		out, err := cmd.Output()
		got, rest, _ := strings.Cut(string(out), "shell still globs: ")
		if got = strings.TrimSpace(got); got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("%v %q: %q, %v; want %q", c.env[len(c.env)-1], c.conf, got, err, c.want)
		}
		// The set -f stays in the function's subshell: the scripts' own globs work.
		if c.want != "" && strings.TrimSpace(rest) != "pkey=0x0099" {
			t.Errorf("after ibkey_job_pkey the shell globs %q, want pkey=0x0099", rest)
		}
	}
}

// Bash before 4.4 (EL7's 4.2) takes "${a[@]}" of an empty array as an unbound
// variable under set -u, and the script stops (exit 1: a Prolog that fails drains
// the node). IBKEY_ARGS, the lib flags and the --node flags are empty by default,
// so every array the scripts expand must use ${a[@]+"${a[@]}"}, which every bash
// expands to nothing when a is empty. Bash 4.4 and later accept both, so the
// scripts are checked for the form.
func TestScriptsExpandEmptyArraysOnOldBash(t *testing.T) {
	scripts, err := filepath.Glob("*.sh")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	bare := regexp.MustCompile(`(.?)"\$\{(\w+)\[[@*]\]\}"`)
	checked := 0
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range bare.FindAllStringSubmatch(line, -1) {
				checked++
				if m[1] != "+" {
					t.Errorf("%s:%d: \"${%s[@]}\" stops the script under set -u on bash before 4.4 when the array is empty: use ${%s[@]+\"${%s[@]}\"}", s, i+1, m[2], m[2], m[2])
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no array expansion found: the pattern no longer matches the scripts")
	}
}

// Slurm sets the text after "export NAME=" as it is (task.c, _proc_stdout): the
// TaskProlog prints a value ibkey quoted for a shell without its quotes.
func TestTaskPrologUnquotes(t *testing.T) {
	dir := t.TempDir()
	c := &cluster{state: filepath.Join(dir, "run"), conf: filepath.Join(dir, "slurm.conf")}
	os.WriteFile(c.conf, []byte("IBKEY_STATE_DIR="+c.state+"\n"), 0o644)
	os.MkdirAll(c.state, 0o755)
	env := "export NCCL_IB_PKEY=1\nexport IBKEY_IPOIB_INTERFACE='ib-job#1'\nexport X='it'\\''s'\n"
	os.WriteFile(filepath.Join(c.state, "job-4242.env"), []byte(env), 0o644)
	out, errOut, code := c.run(t, "taskprolog.sh", taskEnv("node02")...)
	if want := "export NCCL_IB_PKEY=1\nexport IBKEY_IPOIB_INTERFACE=ib-job#1\nexport X=it's\n"; code != 0 || out != want {
		t.Errorf("exit %d\n%s\nwant\n%s\n%s", code, out, want, errOut)
	}
	// A value holding a newline would be a second line to Slurm, setting another
	// variable: refused, and nothing exported.
	env = "export NCCL_IB_PKEY=1\nexport X='a\nexport LD_PRELOAD=/tmp/x.so'\n"
	os.WriteFile(filepath.Join(c.state, "job-4242.env"), []byte(env), 0o644)
	out, errOut, code = c.run(t, "taskprolog.sh", taskEnv("node02")...)
	if code != 1 || strings.Contains(out, "export ") || !strings.Contains(out, "print ibkey: ") {
		t.Errorf("a value with a newline: exit %d\n%s\n%s", code, out, errOut)
	}
}

// The pair on one node: the Prolog waits while OpenSM programs 0x0042 (SIGHUP after
// it started), leaves the settings, the TaskProlog prints them as export lines
// (checked against smpquery), the Epilog removes them. TestRealSlurm runs the same
// under slurmd.
func TestPrologTaskPrologPair(t *testing.T) {
	c := startCluster(t, "")
	done := make(chan struct{})
	var out, errOut string
	var code int
	go func() {
		defer close(done)
		out, errOut, code = c.run(t, "prolog.sh", prologEnv("node02", "pkey=0x0042")...)
	}()
	time.Sleep(2 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, _, err := c.sm.Reprogram(ctx, c.partition("node02", "node03")); err != nil {
		t.Fatal(err)
	}
	<-done
	if code != 0 || out != "" {
		t.Fatalf("prolog: exit %d, stdout %q\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code = c.run(t, "taskprolog.sh", taskEnv("node02")...)
	if code != 0 {
		t.Fatalf("taskprolog: exit %d\n%s%s", code, out, errOut)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		kv, ok := strings.CutPrefix(line, "export ")
		k, v, ok2 := strings.Cut(kv, "=")
		if !ok || !ok2 {
			t.Fatalf("taskprolog printed %q, not an export line", line)
		}
		exports[k] = v
	}
	if exports["UCX_IB_PKEY"] != "0x0042" {
		t.Errorf("UCX_IB_PKEY=%q", exports["UCX_IB_PKEY"])
	}
	idx, err := strconv.Atoi(exports["NCCL_IB_PKEY"])
	if err != nil {
		t.Fatalf("NCCL_IB_PKEY=%q", exports["NCCL_IB_PKEY"])
	}
	tab, err := lab.ParsePKeys(c.l.MustTool("smpquery", "pkeys", strconv.Itoa(int(c.lid["node02"]))))
	if err != nil {
		t.Fatal(err)
	}
	if tab.Entries[idx]&0x7fff != 0x0042 {
		t.Errorf("NCCL_IB_PKEY=%d but smpquery shows %#04x there (%v)", idx, tab.Entries[idx], tab.Entries[:8])
	}
	if _, _, code := c.run(t, "epilog.sh", prologEnv("node02", "pkey=0x0042")...); code != 0 {
		t.Errorf("epilog: exit %d", code)
	}
	if ents, _ := os.ReadDir(c.state); len(ents) != 0 {
		t.Errorf("the Epilog left %v", ents)
	}
	// A job that asks for no partition is not gated: nothing is read or left.
	if out, errOut, code := c.run(t, "prolog.sh", prologEnv("node02", "")...); code != 0 || out != "" || errOut != "" {
		t.Errorf("no key: exit %d %q %q", code, out, errOut)
	}
	if out, _, code := c.run(t, "taskprolog.sh", taskEnv("node02")...); code != 0 || out != "" {
		t.Errorf("no key: taskprolog exit %d %q", code, out)
	}
}

// The partition never reaches node03: by default the Prolog succeeds (the node stays
// in service) and the TaskProlog cancels the tasks saying why; with
// IBKEY_ON_TIMEOUT=drain the Prolog fails, which makes Slurm drain the node.
func TestPrologTimeout(t *testing.T) {
	c := startCluster(t, "IBKEY_WAIT=2s\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, _, err := c.sm.Reprogram(ctx, c.partition("node02")); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := c.run(t, "prolog.sh", prologEnv("node03", "pkey=0x0042")...)
	if code != 0 || !strings.Contains(errOut, "exited 1") {
		t.Fatalf("prolog: exit %d\n%s", code, errOut)
	}
	out, _, code := c.run(t, "taskprolog.sh", taskEnv("node03")...)
	if code != 1 || !strings.Contains(out, "print ibkey: ibkey job --want 0x0042 on node03 exited 1:") || !strings.Contains(out, "print ibkey:   node03: node03:mlx5_0/1: no entry for partition 0x0042") || strings.Contains(out, "export ") {
		t.Errorf("taskprolog: exit %d\n%s", code, out)
	}
	c.writeConf(t, "IBKEY_WAIT=2s\nIBKEY_ON_TIMEOUT=drain\n")
	if _, errOut, code := c.run(t, "prolog.sh", prologEnv("node03", "pkey=0x0042")...); code != 1 {
		t.Errorf("drain: prolog exit %d\n%s", code, errOut)
	}
}

// The PrologSlurmctld checks every node of $SLURM_JOB_NODELIST (a hostlist) from the
// controller: exit 1 (Slurm requeues the job) while node03 lacks the key, 0 once
// OpenSM has programmed it while the script waits.
func TestPrologSlurmctld(t *testing.T) {
	c := startCluster(t, "IBKEY_WAIT=2s\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, _, err := c.sm.Reprogram(ctx, c.partition("node02")); err != nil {
		t.Fatal(err)
	}
	env := ctldEnv("pkey=0x0042")
	_, errOut, code := c.run(t, "prolog_slurmctld.sh", env...)
	if code != 1 || !strings.Contains(errOut, "node03: node03:mlx5_0/1: no entry for partition 0x0042") || strings.Contains(errOut, "node02: node02") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	c.writeConf(t, "IBKEY_WAIT=25s\n")
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, errOut, code = c.run(t, "prolog_slurmctld.sh", env...)
	}()
	time.Sleep(1500 * time.Millisecond)
	if _, _, err := c.sm.Reprogram(ctx, c.partition("node02", "node03")); err != nil {
		t.Fatal(err)
	}
	<-done
	if code != 0 || !strings.Contains(errOut, "partition 0x0042 ready after") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	// No fabric access (a socket nobody serves): not checked, the job runs
	// (IBKEY_STRICT=0) or is requeued (IBKEY_STRICT=1).
	c.writeConf(t, "IBKEY_ARGS=(--ibsim=nobody-serves-this --mad-timeout 100ms)\n")
	if _, errOut, code := c.run(t, "prolog_slurmctld.sh", env...); code != 0 || !strings.Contains(errOut, "could not check partition 0x0042") {
		t.Errorf("no fabric access: exit %d\n%s", code, errOut)
	}
	c.writeConf(t, "IBKEY_ARGS=(--ibsim=nobody-serves-this --mad-timeout 100ms)\nIBKEY_STRICT=1\n")
	if _, _, code := c.run(t, "prolog_slurmctld.sh", env...); code != 1 {
		t.Errorf("strict: exit %d", code)
	}
}

// A device of the node that could not be read (testdata/sysfs/dangling: scif0 is a
// dangling link) keeps the settings only when a library of the job could choose it:
// with NCCL_IB_HCA leaving it out the Prolog writes them and logs ibkey's warning;
// with NCCL_IB_HCA that may also pick it, ibkey exits 4 and the job runs without them
// (a warning for the TaskProlog), or its tasks fail with IBKEY_STRICT=1.
func TestPrologUnreadDevice(t *testing.T) {
	tree, err := filepath.Abs("../../testdata/sysfs/dangling")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		hca, strict, file string
	}{{"mlx4", "0", ".env"}, {"mlx4,scif0", "0", ".warn"}, {"mlx4,scif0", "1", ".fail"}} {
		cl := &cluster{state: filepath.Join(t.TempDir(), "run-ibkey"), conf: filepath.Join(t.TempDir(), "slurm.conf")}
		conf := fmt.Sprintf("IBKEY=%s\nIBKEY_ARGS=(--sysfs %s)\nIBKEY_WAIT=2s\nIBKEY_SOURCE=local\nIBKEY_LIBS=nccl\nIBKEY_STATE_DIR=%s\nIBKEY_STRICT=%s\n", ibkeyBin, tree, cl.state, c.strict)
		if err := os.WriteFile(cl.conf, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := cl.run(t, "prolog.sh", append(prologEnv("node02", "pkey=0x7fff"), "NCCL_IB_HCA="+c.hca)...)
		if code != 0 || out != "" || !strings.Contains(errOut, "not read: device scif0") {
			t.Fatalf("NCCL_IB_HCA=%s: prolog exit %d, stdout %q\nstderr:\n%s", c.hca, code, out, errOut)
		}
		if c.file == ".env" && !strings.Contains(errOut, "it does not change the answer") {
			t.Errorf("NCCL_IB_HCA=%s: the warning does not say why the device does not matter:\n%s", c.hca, errOut)
		}
		for _, f := range []string{".env", ".warn", ".fail"} {
			_, err := os.Stat(cl.state + "/job-4242" + f)
			if (err == nil) != (f == c.file) {
				t.Errorf("NCCL_IB_HCA=%s IBKEY_STRICT=%s: %s exists: %v", c.hca, c.strict, f, err == nil)
			}
		}
		if c.file == ".env" {
			b, _ := os.ReadFile(cl.state + "/job-4242.env")
			if !strings.Contains(string(b), "export NCCL_IB_PKEY=0\n") {
				t.Errorf("settings: %q", b)
			}
		}
	}
}

// slurmd gives the Prolog no HOME (prep_script_slurmd.c, _build_env), but the job's
// Open MPI reads its user's ~/.openmpi/mca-params.conf: the Prolog runs ibkey with
// SLURM_JOB_USER's home from the passwd database, and without HOME for a user it
// cannot look up.
func TestPrologJobUserHome(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "ibkey")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"warning: HOME=${HOME-unset}\" >&2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cl := &cluster{state: filepath.Join(dir, "run-ibkey"), conf: filepath.Join(dir, "slurm.conf")}
	if err := os.WriteFile(cl.conf, []byte("IBKEY="+fake+"\nIBKEY_STATE_DIR="+cl.state+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ user, want string }{{"root", "HOME=/root"}, {"no-such-user-ibkey", "HOME=unset"}} {
		env := append(prologEnv("node02", "pkey=0x7fff"), "SLURM_JOB_USER="+c.user) // the later one wins
		_, errOut, code := cl.run(t, "prolog.sh", env...)
		if code != 0 || !strings.Contains(errOut, "warning: "+c.want+"\n") {
			t.Errorf("SLURM_JOB_USER=%s: exit %d, stderr %q; want %s", c.user, code, errOut, c.want)
		}
	}
}

// IBKEY_LIB_VERSIONS reaches ibkey job as --lib-version, in the Prolog and the
// PrologSlurmctld alike (ibkey_lib_args).
func TestLibVersions(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "ibkey")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"warning: args: $*\" >&2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cl := &cluster{state: filepath.Join(dir, "run-ibkey"), conf: filepath.Join(dir, "slurm.conf")}
	conf := "IBKEY=" + fake + "\nIBKEY_STATE_DIR=" + cl.state + "\nIBKEY_LIBS=nccl,ucx\nIBKEY_LIB_VERSIONS=nccl=2.29.2,ucx=1.13.1\n"
	if err := os.WriteFile(cl.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, script := range []string{"prolog.sh", "prolog_slurmctld.sh"} {
		_, errOut, _ := cl.run(t, script, append(prologEnv("node02", "pkey=0x7fff"), "SLURM_JOB_NODELIST=node02")...)
		if !strings.Contains(errOut, "--lib nccl,ucx --lib-version nccl=2.29.2,ucx=1.13.1 ") {
			t.Errorf("%s: stderr %q", script, errOut)
		}
	}
}

// A Prolog killed at PrologEpilogTimeout (run_command.c, _kill_pg: SIGTERM to its
// process group, SIGKILL 10 ms later) leaves its temporary files (mktemp
// "$state.XXXXXX" and its .err): the Epilog removes every file of the job, and none
// of another job whose id starts with the same digits.
func TestEpilogRemovesKilledPrologFiles(t *testing.T) {
	dir := t.TempDir()
	c := &cluster{state: filepath.Join(dir, "run"), conf: filepath.Join(dir, "slurm.conf")}
	os.WriteFile(c.conf, []byte("IBKEY_STATE_DIR="+c.state+"\n"), 0o644)
	os.MkdirAll(c.state, 0o755)
	for _, f := range []string{"job-4242.env", "job-4242.Xy12Ab", "job-4242.Xy12Ab.err", "job-42421.env", "job-42421.Zz99Qq"} {
		os.WriteFile(filepath.Join(c.state, f), nil, 0o644)
	}
	if _, errOut, code := c.run(t, "epilog.sh", prologEnv("node02", "pkey=0x0042")...); code != 0 {
		t.Fatalf("epilog: exit %d\n%s", code, errOut)
	}
	var left []string
	ents, _ := os.ReadDir(c.state)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if strings.Join(left, " ") != "job-42421.Zz99Qq job-42421.env" {
		t.Errorf("the Epilog of job 4242 left %v", left)
	}
}
