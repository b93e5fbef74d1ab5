// Package kernellab runs commands on a real Linux RDMA stack for tests: QEMU (TCG)
// boots Debian's own kernel with the host's root file system shared read-only into the
// guest, loads the kernel's software RoCE driver (rdma_rxe) on a dummy netdev, runs a
// list of commands in one boot and brings each command's stdout, stderr and exit
// status back through a shared writable 9p directory. scripts/kernel-lab installs
// and boots; this package plans a boot and reads its results.
//
// TCG is slow, so a test builds everything it wants to run first (host binaries are
// visible in the guest at the same paths) and asks for one boot with many commands.
package kernellab

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// InstallHint is what provides the lab: the packages, and the current Debian kernel
// image unpacked into the user's cache.
const InstallHint = "scripts/kernel-lab install (apt-get install -y qemu-system-x86 kmod cpio busybox-static ibverbs-utils rdma-core libibverbs-dev gcc; then the linux-image package `apt-cache depends linux-image-amd64` names, unpacked under ~/.cache/ibkey-kernel-lab)"

// RxeSetup is the default setup: the rxe driver, umad and uverbs, and rxe0 on a dummy
// netdev (no address needed: GID 0 is the link-local one from the MAC). modprobe, not
// insmod: rdma_rxe needs the crc32 crypto module ("failed to init crc32 algorithm").
var RxeSetup = []string{
	"modprobe -a rdma_rxe ib_umad ib_uverbs",
	"ip link add dummy0 type dummy",
	"ip link set dummy0 up",
	"rdma link add rxe0 type rxe netdev dummy0",
}

// NobodyUID is the unprivileged user commands may run as (Debian's nobody).
const NobodyUID = 65534

// Command is one command run in the guest, in order, with sh in the run directory.
type Command struct {
	// Name identifies the result; unique within a plan.
	Name string
	// Script is shell text (sh -e is not implied).
	Script string
	// Nobody runs it as uid/gid 65534 with no supplementary groups.
	Nobody bool
	// Timeout bounds it in the guest (default 60s; TCG is slow).
	Timeout time.Duration
}

// Plan is what one boot does.
type Plan struct {
	// Setup runs first, as root; nil means RxeSetup. A failing setup step is recorded
	// in the "setup" result, and the commands still run.
	Setup []string
	// Commands run after the setup, in order.
	Commands []Command
	// Timeout bounds the whole boot on the host (default 300s).
	Timeout time.Duration
}

// Result is one command's output.
type Result struct {
	Name           string
	Stdout, Stderr string
	// Exit is the exit status; -1 when the command never ran (the guest stopped first).
	Exit int
}

// Ran reports whether the command ran to an exit status.
func (r *Result) Ran() bool { return r.Exit >= 0 }

// Run is one finished boot.
type Run struct {
	// Elapsed is the wall time of the boot, from qemu's start to its exit.
	Elapsed time.Duration
	// Dir is the shared directory (the guest's /kl).
	Dir string
	// Console is qemu's serial console output; Log is the guest script's own output.
	Console, Log string
	Setup        *Result
	results      map[string]*Result
}

// Result returns the result of the named command; Exit is -1 when it did not run.
func (r *Run) Result(name string) *Result {
	if res, ok := r.results[name]; ok {
		return res
	}
	return &Result{Name: name, Exit: -1}
}

// Lab is an installed kernel lab, driven by scripts/kernel-lab.
type Lab struct {
	Script string
}

// Find returns the lab whose script is at script, or an error naming what is missing.
func Find(script string) (*Lab, error) {
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("kernel lab: %w", err)
	}
	out, err := exec.Command(script, "check").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("kernel lab unavailable: %s", strings.TrimSpace(strings.ReplaceAll(string(out), "\n", "; ")))
	}
	return &Lab{Script: script}, nil
}

// Require returns the lab, or skips the test with the install line; under CI (the
// environment variable CI set) it fails instead: CI never skips.
func Require(t testing.TB, script string) *Lab {
	t.Helper()
	l, err := Find(script)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v (CI is set, so this fails instead of skipping); install with: %s", err, InstallHint)
		}
		t.Skipf("%v; install with: %s", err, InstallHint)
	}
	return l
}

// guestScript writes dir/guest.sh and dir/cmd/N.sh for plan.
func guestScript(dir string, plan Plan) error {
	setup := plan.Setup
	if setup == nil {
		setup = RxeSetup
	}
	// Commands run as nobody must reach cmd/ and the binaries the caller put in dir.
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	for _, d := range []string{"cmd", "out", "work"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o777); err != nil {
			return err
		}
	}
	// Commands run as nobody write their scratch files in work/.
	if err := os.Chmod(filepath.Join(dir, "work"), 0o1777); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("# generated by internal/kernellab\nexport PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\ncd /kl/work\n")
	b.WriteString("{\n")
	for _, s := range setup {
		fmt.Fprintf(&b, "echo '+ %s'\n%s || echo \"setup step failed: exit $?\"\n", strings.ReplaceAll(s, "'", ""), s)
	}
	b.WriteString("} > /kl/out/setup.stdout 2> /kl/out/setup.stderr; echo 0 > /kl/out/setup.rc\n")
	seen := map[string]bool{"setup": true}
	for i, c := range plan.Commands {
		if c.Name == "" || seen[c.Name] || strings.ContainsAny(c.Name, "/ \n") {
			return fmt.Errorf("kernel lab: command %d: name %q is empty, repeated or not a file name", i, c.Name)
		}
		seen[c.Name] = true
		if err := os.WriteFile(filepath.Join(dir, "cmd", c.Name+".sh"), []byte(c.Script+"\n"), 0o644); err != nil {
			return err
		}
		to := c.Timeout
		if to <= 0 {
			to = 60 * time.Second
		}
		run := fmt.Sprintf("/bin/sh /kl/cmd/%s.sh", c.Name)
		if c.Nobody {
			run = fmt.Sprintf("/usr/bin/setpriv --reuid=%d --regid=%d --clear-groups %s", NobodyUID, NobodyUID, run)
		}
		fmt.Fprintf(&b, "echo 'command %s'\n/usr/bin/timeout -k 5 %d %s < /dev/null > /kl/out/%s.stdout 2> /kl/out/%s.stderr; echo $? > /kl/out/%s.rc\n",
			c.Name, int(to.Seconds()+0.5), run, c.Name, c.Name, c.Name)
	}
	b.WriteString("sync\n")
	return os.WriteFile(filepath.Join(dir, "guest.sh"), []byte(b.String()), 0o644)
}

// GuestDir is where the guest sees the run directory. Files the caller puts there
// before Boot (binaries) are visible to the guest; the host's /tmp is not (the guest
// mounts its own tmpfs there).
const GuestDir = "/kl"

// Boot boots the guest once in dir (a fresh directory the caller owns), runs plan and
// reads every result back. An error means the boot itself failed (no qemu, timed out
// before the commands ended); a command that failed is a Result with its exit status.
func (l *Lab) Boot(ctx context.Context, dir string, plan Plan) (*Run, error) {
	if err := guestScript(dir, plan); err != nil {
		return nil, err
	}
	to := plan.Timeout
	if to <= 0 {
		to = 300 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, to+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.Script, "boot", dir)
	cmd.Env = append(os.Environ(), "KERNEL_LAB_TIMEOUT="+strconv.Itoa(int(to.Seconds())))
	var console bytes.Buffer
	cmd.Stdout, cmd.Stderr = &console, &console
	start := time.Now()
	err := cmd.Run()
	run := &Run{Elapsed: time.Since(start), Dir: dir, Console: console.String(), results: map[string]*Result{}}
	if b, rerr := os.ReadFile(filepath.Join(dir, "guest.log")); rerr == nil {
		run.Log = string(b)
	}
	read := func(name string) *Result {
		r := &Result{Name: name, Exit: -1}
		out := filepath.Join(dir, "out", name)
		if b, err := os.ReadFile(out + ".stdout"); err == nil {
			r.Stdout = string(b)
		}
		if b, err := os.ReadFile(out + ".stderr"); err == nil {
			r.Stderr = string(b)
		}
		if b, err := os.ReadFile(out + ".rc"); err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				r.Exit = n
			}
		}
		return r
	}
	run.Setup = read("setup")
	for _, c := range plan.Commands {
		run.results[c.Name] = read(c.Name)
	}
	if err != nil {
		return run, fmt.Errorf("kernel lab: boot failed after %v: %v; console tail:\n%s", run.Elapsed.Round(time.Second), err, tail(run.Console, 20))
	}
	if !strings.Contains(run.Console, "KERNEL-LAB-DONE") {
		return run, fmt.Errorf("kernel lab: the guest did not finish its commands; console tail:\n%s", tail(run.Console, 20))
	}
	return run, nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
