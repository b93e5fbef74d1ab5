//go:build linux

package fabric

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCheckPartitionsFromPipe: fabric check reads --partitions as partitions and
// can-talk do (query.ReadPartitions): a pipe (`--partitions <(ssh sm01 cat
// /etc/opensm/partitions.conf)`) gives the same audit as the file, and the file is
// named by its path.
func TestCheckPartitionsFromPipe(t *testing.T) {
	conf, err := os.ReadFile(fabricConf)
	if err != nil {
		t.Fatal(err)
	}
	file := runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--partitions", fabricConf)
	fifo := filepath.Join(t.TempDir(), "partitions.conf")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.Write(conf)
		w.Close()
	}()
	pipe := runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--partitions", fifo)
	if pipe.code != file.code || strings.ReplaceAll(pipe.stdout, fifo, fabricConf) != file.stdout {
		t.Errorf("from a pipe: exit %d\n%s%s\nfrom the file: exit %d\n%s", pipe.code, pipe.stdout, pipe.stderr, file.code, file.stdout)
	}
	if !strings.Contains(file.stdout, "partitions") {
		t.Errorf("the audit does not mention the partitions file:\n%s", file.stdout)
	}
}
