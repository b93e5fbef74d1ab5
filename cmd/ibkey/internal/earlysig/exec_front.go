//go:build ibkey_front

package earlysig

import (
	"os"
	"path/filepath"
	"syscall"
)

// execFull replaces the process with ibkey-full, beside this binary, when Delegates
// says so: same arguments, same environment. When ibkey-full is not there it says so
// and exits 3 (cmdutil.ExitEnv: the environment lacks something).
func execFull() {
	if !Delegates(os.Args[1:]) {
		return
	}
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	path := filepath.Join(filepath.Dir(self), Companion)
	err = syscall.Exec(path, os.Args, os.Environ())
	os.Stderr.WriteString("ibkey: this command runs in " + path + " (the complete ibkey: Prometheus exporter, verbs counters, the counters screen), which is not beside this ibkey: " + err.Error() + "; `make install` installs both, `go build ./cmd/ibkey` builds one binary with every command\n")
	os.Exit(3)
}
