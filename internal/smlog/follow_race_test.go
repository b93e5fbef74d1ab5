package smlog

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestFollowSurvivesRotationRace: a log that vanishes again right after it came back
// (a second rotation, or a log being recreated while Follow looks at it) is waited
// for, never an error: Follow decides what it follows from the file it opened, so
// there is no moment between looking at the path and opening it.
func TestFollowSurvivesRotationRace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "opensm.log")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	opened := make(chan struct{})
	var once sync.Once
	go func() {
		a := NewAssembler(time.Now(), time.Local, func(*Event) {})
		done <- Follow(ctx, path, a, FollowOptions{Poll: time.Microsecond, Quiet: time.Millisecond, Notice: func(string) {},
			// "" once the log is read: the first open, before any rotation (a log
			// missing at the start is an error without Wait, as it should be).
			NotRead: func(why string) {
				if why == "" {
					once.Do(func() { close(opened) })
				}
			}})
	}()
	select {
	case <-opened:
	case err := <-done:
		t.Fatalf("Follow returned %v before it opened the log", err)
	}
	// Rotate as fast as the machine can: the path is missing about half the time,
	// and each new file is a different file. Stop after enough rotations to have
	// hit the window many times over, or at Follow's first error.
	for i := 0; i < 20000; i++ {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("Follow returned %v after %d rotations, want it to wait for the log", err, i)
		default:
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Follow returned %v", err)
	}
}
