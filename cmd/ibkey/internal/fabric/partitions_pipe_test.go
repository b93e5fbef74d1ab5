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
	if pipe.Code != file.Code || strings.ReplaceAll(pipe.Stdout, fifo, fabricConf) != file.Stdout {
		t.Errorf("from a pipe: exit %d\n%s%s\nfrom the file: exit %d\n%s", pipe.Code, pipe.Stdout, pipe.Stderr, file.Code, file.Stdout)
	}
	if !strings.Contains(file.Stdout, "partitions") {
		t.Errorf("the audit does not mention the partitions file:\n%s", file.Stdout)
	}
}
