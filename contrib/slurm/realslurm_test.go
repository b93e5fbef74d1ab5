package slurm_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/lab"
)

// slurmInstall provides what TestRealSlurm runs (Debian 12: Slurm 22.05).
const slurmInstall = "apt-get install -y slurmctld slurmd slurm-client munge"

// realSlurm is a Slurm cluster on this host, the test's own: munged with its own key
// and socket, slurmctld, and one slurmd per node name (slurmd -N NAME, each on its
// own port), all in the foreground, with every file under dir. It runs the scripts
// of contrib/slurm as slurm.conf's Prolog, TaskProlog, Epilog and (SetPrologSlurmctld)
// PrologSlurmctld, through wrappers that keep the environment Slurm gave the script
// and name the ibkey configuration (slurmd builds the Prolog's environment from
// nothing but the job: prep_script_slurmd.c, _build_env; so /etc/ibkey/slurm.conf
// cannot be replaced by an environment variable there).
type realSlurm struct {
	// conf is slurm.conf; ibkeyConf the scripts' configuration (the test writes it).
	dir, conf, ibkeyConf, confText string
	bin                            map[string]string
	env                            []string
	nobody                         *syscall.Credential
	stopCtld                       func()
}

// requireSlurm finds Slurm's and MUNGE's programs, or skips (fails under CI).
// slurmd must run as root: it starts the tasks as the job's user.
func requireSlurm(t *testing.T) map[string]string {
	t.Helper()
	bin := map[string]string{}
	var missing []string
	for _, p := range []string{"munged", "mungekey", "slurmctld", "slurmd", "sbatch", "scontrol", "scancel", "squeue", "sinfo", "srun"} {
		path, err := exec.LookPath(p)
		if err != nil {
			if st, e := os.Stat("/usr/sbin/" + p); e == nil && st.Mode()&0o111 != 0 {
				path, err = "/usr/sbin/"+p, nil
			}
		}
		if err != nil {
			missing = append(missing, p)
		}
		bin[p] = path
	}
	if len(missing) > 0 {
		lab.SkipUnlessCI(t, fmt.Errorf("Slurm is not installed: missing %s", strings.Join(missing, ", ")), slurmInstall)
	}
	if os.Geteuid() != 0 {
		lab.SkipUnlessCI(t, fmt.Errorf("slurmd must run as root to start a job's tasks as its user"), "run the test as root")
	}
	return bin
}

// freePorts are n TCP ports nothing listens on now.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// startSlurm starts munged, slurmctld and a slurmd for each of nodes, and stops them
// (and only them) in the test's cleanup, then removes their directory.
func startSlurm(t *testing.T, bin map[string]string, nodes ...string) *realSlurm {
	t.Helper()
	dir, err := os.MkdirTemp("", "ibkey-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &realSlurm{dir: dir, conf: filepath.Join(dir, "slurm.conf"), ibkeyConf: filepath.Join(dir, "ibkey.conf"), bin: bin}
	nb, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(nb.Uid)
	gid, _ := strconv.Atoi(nb.Gid)
	s.nobody = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	// The job's user (nobody) reaches the MUNGE socket, the ibkey configuration, the
	// scripts' state and its own output directory.
	for _, d := range []string{"", "munge-key", "munge", "spool", "state", "log", "bin", "jobs", "env"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Join(dir, "munge-key"), 0o700)
	os.Chown(filepath.Join(dir, "jobs"), uid, gid)
	os.Chown(filepath.Join(dir, "env"), uid, gid)
	key := filepath.Join(dir, "munge-key", "munge.key")
	if out, err := exec.Command(bin["mungekey"], "-c", "-k", key).CombinedOutput(); err != nil {
		t.Fatalf("mungekey: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "munge", "sock")
	// The cleanups stop the slurmds, then slurmctld (a slurmd stopping after it
	// waits for it), then munged.
	t.Cleanup(s.start(t, "munged", bin["munged"], "-F", "--force", "--socket="+sock, "--key-file="+key,
		"--pid-file="+filepath.Join(dir, "munge", "pid"), "--log-file="+filepath.Join(dir, "log", "munged.log"),
		"--seed-file="+filepath.Join(dir, "munge-key", "seed")))
	s.waitFor(t, "munged's socket", 10*time.Second, func() bool { _, err := os.Stat(sock); return err == nil })

	for _, script := range []string{"prolog", "taskprolog", "epilog", "prolog_slurmctld"} {
		src, err := filepath.Abs(script + ".sh")
		if err != nil {
			t.Fatal(err)
		}
		// Each wrapper keeps the environment Slurm gave the script, for the test to
		// compare with what the other tests give it (env/SCRIPT.JOBID.NODE.STEP).
		// slurmctld discards what PrologSlurmctld prints (slurmscriptd.c,
		// _run_script): its wrapper keeps that for the test's messages.
		keep := fmt.Sprintf("/usr/bin/env >%s/env/%s.$SLURM_JOB_ID.${SLURMD_NODENAME:-}.${SLURM_STEP_ID:-}\n", dir, script)
		w := fmt.Sprintf("#!/bin/sh\n%sIBKEY_SLURM_CONF=%s exec /bin/bash %s\n", keep, s.ibkeyConf, src)
		if script == "prolog_slurmctld" {
			w = fmt.Sprintf("#!/bin/sh\n%sIBKEY_SLURM_CONF=%s exec /bin/bash %s 2>>%s/log/prolog_slurmctld.log\n", keep, s.ibkeyConf, src, dir)
		}
		if err := os.WriteFile(filepath.Join(dir, "bin", script), []byte(w), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	ports := freePorts(t, 1+len(nodes))
	var b strings.Builder
	fmt.Fprintf(&b, `ClusterName=ibkeylab
SlurmctldHost=%[2]s(127.0.0.1)
SlurmctldPort=%[3]d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%[1]s/munge/sock,cred_expire=5
StateSaveLocation=%[1]s/state
SlurmdSpoolDir=%[1]s/spool/%%n
SlurmctldPidFile=%[1]s/slurmctld.pid
SlurmdPidFile=%[1]s/spool/slurmd.%%n.pid
SlurmctldLogFile=%[1]s/log/slurmctld.log
SlurmdLogFile=%[1]s/log/slurmd.%%n.log
SlurmdDebug=debug2
PlugStackConfig=%[1]s/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=2
MpiDefault=none
ReturnToService=2
Prolog=%[1]s/bin/prolog
TaskProlog=%[1]s/bin/taskprolog
Epilog=%[1]s/bin/epilog
PrologFlags=Alloc
`, dir, host, ports[0])
	for i, n := range nodes {
		fmt.Fprintf(&b, "NodeName=%s NodeHostname=%s NodeAddr=127.0.0.1 Port=%d CPUs=1 State=UNKNOWN\n", n, host, ports[1+i])
	}
	fmt.Fprintf(&b, "PartitionName=lab Nodes=%s Default=YES MaxTime=INFINITE State=UP\n", strings.Join(nodes, ","))
	s.confText = b.String()
	if err := os.WriteFile(s.conf, []byte(s.confText), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "plugstack.conf"), nil, 0o644)
	s.env = []string{"SLURM_CONF=" + s.conf, "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "LANG=C"}

	s.stopCtld = s.start(t, "slurmctld", bin["slurmctld"], "-D", "-i")
	t.Cleanup(func() { s.stopCtld() })
	for _, n := range nodes {
		t.Cleanup(s.start(t, "slurmd "+n, bin["slurmd"], "-D", "-N", n))
	}
	s.waitIdle(t)
	return s
}

// stepdListening reports whether a slurmstepd still listens in a spool directory
// (stepd_api.c: the socket NODENAME_JOBID.STEPID).
func (s *realSlurm) stepdListening() bool {
	names, _ := filepath.Glob(filepath.Join(s.dir, "spool", "*", "*_*.*"))
	for _, n := range names {
		if st, err := os.Lstat(n); err == nil && st.Mode()&os.ModeSocket != 0 {
			return true
		}
	}
	return false
}

func (s *realSlurm) waitIdle(t *testing.T) {
	t.Helper()
	s.waitFor(t, "the nodes to be idle", 30*time.Second, func() bool {
		out, _ := s.cmd("", "sinfo", "-h", "-o", "%t").Output()
		return strings.TrimSpace(string(out)) == "idle"
	})
}

// start runs a daemon in the foreground and returns what stops it (SIGTERM, then
// SIGKILL after 10 s, and waits for it).
func (s *realSlurm) start(t *testing.T, name, path string, args ...string) (stop func()) {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = []string{"SLURM_CONF=" + s.conf, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.Dir = s.dir
	out, err := os.OpenFile(filepath.Join(s.dir, "log", strings.ReplaceAll(name, " ", "-")+".out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); out.Close(); close(done) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		})
	}
	return stop
}

func (s *realSlurm) waitFor(t *testing.T, what string, timeout time.Duration, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(timeout); !ok(); {
		if time.Now().After(end) {
			t.Fatalf("waited %v for %s\nslurmctld log:\n%s", timeout, what, tail(s.log("slurmctld"), 3000))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// cmd is a Slurm client run as root, or (user "nobody") as the job's user.
func (s *realSlurm) cmd(asUser string, name string, args ...string) *exec.Cmd {
	path := s.bin[name]
	if path == "" {
		path = name
	}
	c := exec.Command(path, args...)
	c.Env = s.env
	c.Dir = filepath.Join(s.dir, "jobs")
	if asUser == "nobody" {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: s.nobody}
	}
	return c
}

// submit submits a batch job as nobody and returns its id.
func (s *realSlurm) submit(t *testing.T, args ...string) string {
	t.Helper()
	out, err := s.cmd("nobody", "sbatch", append([]string{"--parsable", "-o", "job-%j.out"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// job is `scontrol show job -o ID` as fields (JobState, Reason, Restarts, ...).
func (s *realSlurm) job(t *testing.T, id string) map[string]string {
	t.Helper()
	out, err := s.cmd("", "scontrol", "show", "job", "-o", id).CombinedOutput()
	if err != nil {
		t.Fatalf("scontrol show job %s: %v\n%s", id, err, out)
	}
	f := map[string]string{}
	for _, w := range strings.Fields(string(out)) {
		if k, v, ok := strings.Cut(w, "="); ok {
			f[k] = v
		}
	}
	return f
}

// waitState waits until the job is in one of states and returns its fields.
func (s *realSlurm) waitState(t *testing.T, id string, states ...string) map[string]string {
	t.Helper()
	var f map[string]string
	s.waitFor(t, "job "+id+" to be "+strings.Join(states, " or "), 60*time.Second, func() bool {
		f = s.job(t, id)
		for _, st := range states {
			if f["JobState"] == st {
				return true
			}
		}
		return false
	})
	return f
}

func (s *realSlurm) output(id string) string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "jobs", "job-"+id+".out"))
	return string(b)
}

func (s *realSlurm) log(name string) string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "log", name+".log"))
	return string(b)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// node is the node's state and reason (sinfo) once its jobs have completed.
func (s *realSlurm) node(t *testing.T, name string) string {
	t.Helper()
	var st string
	s.waitFor(t, name+" to complete its jobs", 30*time.Second, func() bool {
		out, err := s.cmd("", "sinfo", "-h", "-N", "-n", name, "-o", "%t %E").CombinedOutput()
		if err != nil {
			t.Fatalf("sinfo: %v\n%s", err, out)
		}
		st = strings.TrimSpace(string(out))
		return !strings.HasPrefix(st, "comp") && !strings.HasPrefix(st, "drng")
	})
	return st
}

// SetPrologSlurmctld adds PrologSlurmctld= and restarts slurmctld: `scontrol
// reconfigure` is not enough in 22.05, where prep/script decides when it is loaded,
// at slurmctld's start, whether there is a PrologSlurmctld to run (prep_script.c,
// init: have_prolog_slurmctld), while `scontrol show config` shows the new one.
func (s *realSlurm) SetPrologSlurmctld(t *testing.T) {
	t.Helper()
	text := s.confText + "PrologSlurmctld=" + filepath.Join(s.dir, "bin", "prolog_slurmctld") + "\n"
	if err := os.WriteFile(s.conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s.stopCtld()
	s.stopCtld = s.start(t, "slurmctld", s.bin["slurmctld"], "-D")
	s.waitIdle(t)
}

// envOf is the environment a wrapper kept (env/SCRIPT.JOBID.NODE.STEP).
func (s *realSlurm) envOf(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, "env", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// slurmNames are the names of Slurm's variables and PATH in env, sorted, one a line.
func slurmNames(env []string) string {
	var names []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SLURM") || k == "PATH" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return strings.Join(names, "\n")
}

// containsAll reports whether env has every name of want.
func containsAll(env, want []string) bool {
	for _, kv := range want {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") }) {
			return false
		}
	}
	return true
}

// settingRE is a line of `env` setting one of ibkey's variables.
var settingRE = regexp.MustCompile(`(?m)^(NCCL_IB_PKEY|UCX_IB_PKEY|NVSHMEM_IB_PKEY_INDEX|GASNET_IBV_PKEY|MV2_DEFAULT_PKEY|OMPI_MCA_btl_openib_pkey|IBKEY_IPOIB_INTERFACE)=(.*)$`)

// settings are the variables of ibkey that `env` printed in a job's output.
func settings(out string) map[string]string {
	got := map[string]string{}
	for _, m := range settingRE.FindAllStringSubmatch(out, -1) {
		got[m[1]] = m[2]
	}
	return got
}

// The launch gate under a real Slurm (slurmctld, slurmd, munged: Debian 12's 22.05),
// jobs submitted as nobody with the partition in --comment (22.05 has no --extra):
// the Prolog holds the job until OpenSM programs 0x0042 and the job's tasks (the
// batch step and an srun step) get the settings the TaskProlog printed, which
// smpquery confirms, as does an interactive srun; a job asking for no partition gets
// none; on a node that never gets the key the TaskProlog fails the job (the task
// never runs, the reason is in its output or on srun's terminal, the node stays in
// service); with IBKEY_ON_TIMEOUT=drain the Prolog
// fails, and Slurm drains the node and holds the job; without fabric access the job
// runs without the settings, its output saying why; with PrologSlurmctld a job on
// two nodes is requeued while one lacks the key, then runs on both once it has it.
func TestRealSlurm(t *testing.T) {
	bin := requireSlurm(t)
	c := startCluster(t, "")
	s := startSlurm(t, bin, "node02", "node03")
	// The configuration is bash: each node keeps its own state, as on a real cluster.
	c.conf = s.ibkeyConf
	c.state = filepath.Join(s.dir, "run", "${SLURMD_NODENAME:-slurmctld}")
	c.writeConf(t, "")
	// No job may run when the daemons stop, and no slurmstepd of ours outlive them:
	// each listens on a socket in its node's spool directory until it exits.
	t.Cleanup(func() {
		s.cmd("", "scancel", "-u", "nobody").Run()
		s.waitFor(t, "the jobs and their slurmstepd to end", 30*time.Second, func() bool {
			out, _ := s.cmd("", "squeue", "-h", "-t", "running,completing,configuring").Output()
			return len(strings.TrimSpace(string(out))) == 0 && !s.stepdListening()
		})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	script := "#!/bin/bash\necho task ran\nenv\nsrun -l sh -c 'echo UCX_IB_PKEY=${UCX_IB_PKEY-unset}'\n"

	// The Prolog waits for the key: no task runs before OpenSM has programmed it.
	a := s.submit(t, "-w", "node02", "--comment", "pkey=0x0042", "--wrap", script)
	s.waitState(t, a, "CONFIGURING", "RUNNING")
	time.Sleep(2 * time.Second)
	if f := s.job(t, a); f["JobState"] == "COMPLETED" || strings.Contains(s.output(a), "task ran") {
		t.Fatalf("job %s ran before its partition was programmed: %v\n%s", a, f["JobState"], s.output(a))
	}
	if _, _, err := c.sm.Reprogram(ctx, c.partition("node02")); err != nil {
		t.Fatal(err)
	}
	if f := s.waitState(t, a, "COMPLETED", "FAILED", "CANCELLED"); f["JobState"] != "COMPLETED" {
		t.Fatalf("job %s: %s %s\n%s\nslurmd log:\n%s", a, f["JobState"], f["Reason"], s.output(a), tail(s.log("slurmd.node02"), 3000))
	}
	out := s.output(a)
	got := settings(out)
	if got["UCX_IB_PKEY"] != "0x0042" || !strings.Contains(out, "0: UCX_IB_PKEY=0x0042") {
		t.Errorf("job %s: the task or its srun step lacks UCX_IB_PKEY=0x0042:\n%s", a, out)
	}
	idx, err := strconv.Atoi(got["NCCL_IB_PKEY"])
	if err != nil {
		t.Fatalf("job %s: NCCL_IB_PKEY=%q\n%s", a, got["NCCL_IB_PKEY"], out)
	}
	tab, err := lab.ParsePKeys(c.l.MustTool("smpquery", "pkeys", strconv.Itoa(int(c.lid["node02"]))))
	if err != nil {
		t.Fatal(err)
	}
	if tab.Entries[idx]&0x7fff != 0x0042 {
		t.Errorf("NCCL_IB_PKEY=%d but smpquery shows %#04x there", idx, tab.Entries[idx])
	}
	s.waitFor(t, "the Epilog to remove job "+a+"'s files", 20*time.Second, func() bool {
		ents, _ := os.ReadDir(filepath.Join(s.dir, "run", "node02"))
		return len(ents) == 0
	})
	// What slurmd gave the scripts is what the other tests give them.
	if got, want := slurmNames(s.envOf(t, "prolog."+a+".node02.")), slurmNames(prologEnv("node02", "pkey=0x0042")); got != want {
		t.Errorf("slurmd gave the Prolog\n%s\nthe tests give it\n%s", got, want)
	}
	if got := s.envOf(t, "epilog."+a+".node02."); !containsAll(got, prologEnv("node02", "pkey=0x0042")) {
		t.Errorf("slurmd gave the Epilog %s", slurmNames(got))
	}
	if got := s.envOf(t, "taskprolog."+a+".node02."); !containsAll(got, taskEnv("node02")) || slices.ContainsFunc(got, func(kv string) bool {
		return strings.HasPrefix(kv, "SLURM_JOB_COMMENT=")
	}) || !slices.Contains(got, "PATH=/usr/local/bin:/usr/bin:/bin") {
		t.Errorf("slurmstepd gave the TaskProlog %s", slurmNames(got))
	}

	// An interactive job (srun alone) gets them too.
	srun := func(node string) (string, error) {
		out, err := s.cmd("nobody", "srun", "-w", node, "--comment", "pkey=0x0042", "sh", "-c", "echo task ran UCX_IB_PKEY=${UCX_IB_PKEY-unset}").CombinedOutput()
		return string(out), err
	}
	if out, err := srun("node02"); err != nil || !strings.Contains(out, "task ran UCX_IB_PKEY=0x0042") {
		t.Errorf("srun on node02: %v\n%s", err, out)
	}

	// No partition asked for: not gated, no settings.
	n := s.submit(t, "-w", "node02", "--wrap", script)
	s.waitState(t, n, "COMPLETED")
	if out := s.output(n); len(settings(out)) > 0 || !strings.Contains(out, "0: UCX_IB_PKEY=unset") {
		t.Errorf("job %s asked for no partition:\n%s", n, out)
	}

	// node03 never gets the key: the TaskProlog fails the job before its task runs.
	c.writeConf(t, "IBKEY_WAIT=2s\n")
	b := s.submit(t, "-w", "node03", "--comment", "pkey=0x0042", "--wrap", script)
	f := s.waitState(t, b, "COMPLETED", "FAILED", "CANCELLED")
	out = s.output(b)
	if f["JobState"] != "FAILED" || strings.Contains(out, "task ran") || len(settings(out)) > 0 ||
		!strings.Contains(out, "ibkey: ibkey job --want 0x0042 on node03 exited 1:") ||
		!strings.Contains(out, "no entry for partition 0x0042") || !strings.Contains(out, "TaskProlog failed status=1") {
		t.Errorf("job %s on node03 without the key: %s %s\n%s", b, f["JobState"], f["Reason"], out)
	}
	// srun prints the reason on the user's terminal and exits 1.
	if out, err := srun("node03"); err == nil || strings.Contains(out, "task ran") || !strings.Contains(out, "no entry for partition 0x0042") {
		t.Errorf("srun on node03 without the key: %v\n%s", err, out)
	}
	if st := s.node(t, "node03"); !strings.HasPrefix(st, "idle") {
		t.Errorf("fail-tasks: node03 is %q, not idle", st)
	}
	// slurmd logs a Prolog that succeeded, and what it printed, only at debug2.
	if l := s.log("slurmd.node03"); !strings.Contains(l, "prolog success rc:0 output:ibkey job --want 0x0042 on node03 exited 1:") {
		t.Errorf("slurmd's log lacks the Prolog's reason:\n%s", tail(l, 3000))
	}

	// IBKEY_ON_TIMEOUT=drain: the Prolog fails; Slurm drains node03 and holds the job.
	c.writeConf(t, "IBKEY_WAIT=2s\nIBKEY_ON_TIMEOUT=drain\n")
	h := s.submit(t, "-w", "node03", "--comment", "pkey=0x0042", "--wrap", script)
	s.waitFor(t, "job "+h+" to be held", 60*time.Second, func() bool {
		f := s.job(t, h)
		return f["JobState"] == "PENDING" && f["Reason"] == "launch_failed_requeued_held"
	})
	if f := s.job(t, h); f["JobState"] != "PENDING" || f["Priority"] != "0" {
		t.Errorf("drain: job %s is %s with priority %s, not held", h, f["JobState"], f["Priority"])
	}
	if st := s.node(t, "node03"); !strings.HasPrefix(st, "drain") || !strings.Contains(st, "Prolog error") {
		t.Errorf("drain: node03 is %q", st)
	}
	if l := s.log("slurmd.node03"); !strings.Contains(l, "prolog failed: rc:1 output:ibkey job --want 0x0042 on node03 exited 1:") {
		t.Errorf("drain: slurmd's log lacks the reason:\n%s", tail(l, 3000))
	}
	if strings.Contains(s.output(h), "task ran") {
		t.Errorf("drain: job %s ran:\n%s", h, s.output(h))
	}
	s.cmd("", "scancel", h).Run()
	if out, err := s.cmd("", "scontrol", "update", "nodename=node03", "state=resume").CombinedOutput(); err != nil {
		t.Fatalf("resume node03: %v\n%s", err, out)
	}

	// No fabric access: not checked, so the job runs without the settings and its
	// output says why (IBKEY_STRICT=0).
	c.writeConf(t, "IBKEY_ARGS=(--ibsim=nobody-serves-this --mad-timeout 100ms)\nIBKEY_WAIT=2s\n")
	u := s.submit(t, "-w", "node02", "--comment", "pkey=0x0042", "--wrap", script)
	f = s.waitState(t, u, "COMPLETED", "FAILED", "CANCELLED")
	if out := s.output(u); f["JobState"] != "COMPLETED" || len(settings(out)) > 0 || !strings.Contains(out, "task ran") ||
		!regexp.MustCompile(`(?m)^ibkey: ibkey job --want 0x0042 on node02 exited [234]:$`).MatchString(out) {
		t.Errorf("job %s without fabric access: %s\n%s", u, f["JobState"], out)
	}

	// PrologSlurmctld: a job on both nodes is requeued while node03 lacks the key
	// (after cred_expire, 5 s here, it is tried again), and runs once it has it.
	c.writeConf(t, "IBKEY_WAIT=2s\n")
	s.SetPrologSlurmctld(t)
	d := s.submit(t, "-N", "2", "--comment", "pkey=0x0042", "--wrap", script)
	s.waitFor(t, "job "+d+" to be requeued", 60*time.Second, func() bool {
		f := s.job(t, d)
		return f["JobState"] == "PENDING" && f["Restarts"] != "0"
	})
	if out := s.output(d); strings.Contains(out, "task ran") {
		t.Errorf("PrologSlurmctld: job %s ran without the key on node03:\n%s", d, out)
	}
	if l := s.log("slurmctld"); !strings.Contains(l, "PrologSlurmctld exit status 1:0") {
		t.Errorf("slurmctld's log does not show the PrologSlurmctld failing:\n%s", tail(l, 3000))
	}
	if got, want := slurmNames(s.envOf(t, "prolog_slurmctld."+d+"..")), slurmNames(ctldEnv("pkey=0x0042")); got != want {
		t.Errorf("slurmctld gave PrologSlurmctld\n%s\nthe tests give it\n%s", got, want)
	}
	if _, _, err := c.sm.Reprogram(ctx, c.partition("node02", "node03")); err != nil {
		t.Fatal(err)
	}
	if f := s.waitState(t, d, "COMPLETED", "FAILED", "CANCELLED"); f["JobState"] != "COMPLETED" {
		t.Fatalf("job %s: %s %s\n%s", d, f["JobState"], f["Reason"], s.output(d))
	}
	if out := s.output(d); !strings.Contains(out, "0: UCX_IB_PKEY=0x0042") || !strings.Contains(out, "1: UCX_IB_PKEY=0x0042") {
		t.Errorf("job %s: a task on one of the nodes lacks UCX_IB_PKEY=0x0042:\n%s", d, out)
	}
}
