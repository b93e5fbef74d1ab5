package smlog

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// countsOf is what Counts holds after reading log whole.
func countsOf(t *testing.T, logs ...[]byte) map[CountKey]uint64 {
	t.Helper()
	c := NewCounts()
	for _, log := range logs {
		a := c.NewAssembler(time.Now(), time.Local)
		if err := Read(context.Background(), bytes.NewReader(log), a); err != nil {
			t.Fatal(err)
		}
	}
	return snapshot(c)
}

func snapshot(c *Counts) map[CountKey]uint64 {
	m := map[CountKey]uint64{}
	c.Each(func(k CountKey, n uint64) { m[k] = n })
	return m
}

// TestFollowCounts: the counts of a followed log are those of every piece it was
// made of, across a log that appears late, grows, is rotated (with more than a
// buffer written to the old file after the rename) and truncated.
func TestFollowCounts(t *testing.T) {
	lab, err := os.ReadFile(filepath.Join("testdata", "lab.log"))
	if err != nil {
		t.Fatal(err)
	}
	verbose, err := os.ReadFile(filepath.Join("testdata", "lab-verbose.log"))
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat(lab, bufSize/len(lab)+2) // more than one read's buffer
	dir := t.TempDir()
	path := filepath.Join(dir, "opensm.log")
	c := NewCounts()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- FollowCounts(ctx, path, c, FollowOptions{Poll: 200 * time.Millisecond, Quiet: 50 * time.Millisecond, Notice: func(string) {}})
	}()
	waitFor := func(want map[CountKey]uint64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			got := snapshot(c)
			if fmt.Sprint(got) == fmt.Sprint(want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("counts\n%v\nwant\n%v", got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	appendTo := func(name string, b []byte) {
		t.Helper()
		f, err := os.OpenFile(name, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(b)
		f.Close()
	}
	time.Sleep(300 * time.Millisecond) // not there yet: waited for
	appendTo(path, lab)
	waitFor(countsOf(t, lab))
	appendTo(path, verbose)
	waitFor(countsOf(t, lab, verbose))
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	appendTo(path+".1", big) // within one poll: found with the new file
	appendTo(path, lab)
	waitFor(countsOf(t, lab, verbose, big, lab))
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	appendTo(path, verbose)
	waitFor(countsOf(t, lab, verbose, big, lab, verbose))
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Partition keys and the kinds without one.
	got := snapshot(c)
	if got[CountKey{KindBadPKey, "0x0001"}] == 0 || got[CountKey{KindConfigRejected, ""}] == 0 {
		t.Errorf("counts: %v", got)
	}
}

// TestFollowCountsNotRead: while the followed log is not there (not yet, or gone
// after a rotation and not back) Counts.NotRead says so, with the path; once it is
// read again, NotRead is "". Its events are counted either side.
func TestFollowCountsNotRead(t *testing.T) {
	lab, err := os.ReadFile(filepath.Join("testdata", "lab.log"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "opensm.log")
	c := NewCounts()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- FollowCounts(ctx, path, c, FollowOptions{Poll: 20 * time.Millisecond, Quiet: 20 * time.Millisecond, Notice: func(string) {}})
	}()
	waitFor := func(what string, ok func(notRead string) bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(c.NotRead()); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: NotRead %q", what, c.NotRead())
			}
		}
	}
	says := func(words string) func(string) bool {
		return func(s string) bool { return strings.Contains(s, path) && strings.Contains(s, words) }
	}
	read := func(want map[CountKey]uint64) func(string) bool {
		return func(s string) bool { return s == "" && fmt.Sprint(snapshot(c)) == fmt.Sprint(want) }
	}
	waitFor("before the log is there", says("not there yet"))
	if err := os.WriteFile(path, lab, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("once it is written", read(countsOf(t, lab)))
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	waitFor("rotated away", says("is gone"))
	if err := os.WriteFile(path, lab, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("back", read(countsOf(t, lab, lab)))
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestCountsCapKeys: past MaxCountKeys partitions of one kind, events are counted
// under "other".
func TestCountsCapKeys(t *testing.T) {
	c := NewCounts()
	for i := range MaxCountKeys + 10 {
		c.Add(&Event{Kind: KindBadPKey, KeyType: KeyPKey, Key: uint64(0x8000 | i)})
		c.Add(&Event{Kind: KindBadPKey, KeyType: KeyPKey, Key: uint64(i)}) // the same partition, limited
	}
	c.Add(&Event{Kind: KindBadQKey, KeyType: KeyQKey, Key: 0x1234})
	got := snapshot(c)
	if len(got) != MaxCountKeys+2 || got[CountKey{KindBadPKey, OtherKey}] != 20 || got[CountKey{KindBadPKey, "0x0000"}] != 2 ||
		got[CountKey{KindBadQKey, ""}] != 1 {
		t.Errorf("%d series; other %d", len(got), got[CountKey{KindBadPKey, OtherKey}])
	}
	var order []string
	c.Each(func(k CountKey, n uint64) { order = append(order, string(k.Kind)+"/"+k.Key) })
	if !strings.HasPrefix(order[0], "bad-pkey/0x0000") || order[len(order)-1] != "bad-qkey/" {
		t.Errorf("order: %v ... %v", order[:2], order[len(order)-1])
	}
}

// TestCountsNotExplained: a followed log's lines about partitions or keys that no
// event holds are counted (kind not-explained), as sm log shows them: a log of only
// such lines is not a quiet one. A message of those files that is not about keys
// (451B, notKeys) is not counted.
func TestCountsNotExplained(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opensm.log")
	log := "Nov 28 10:00:00 000001 [AB12] 0x01 -> mcmr_rcv_join_mgrp: ERR 1B10: Failed to create multicast group because Join State != FullMember | SendOnlyFullMember - required for create, MGID: ff12:a01b::1 from port 0x0002c90300000211 (HcaB)\n" +
		"Nov 28 10:00:01 000001 [AB12] 0x01 -> osm_pkey_rec_rcv_process: ERR 4608: Ignoring PKeyRecord request from non-trusted requester with SM_Key 0x0000000000000000\n" +
		"Nov 28 10:00:02 000001 [AB12] 0x04 -> mpr_rcv_get_gids: ERR 451B: DGID 0xfe80000000000000 is multicast or non local subnet prefix\n" +
		"Nov 28 10:00:03 000001 [AB12] 0x01 -> osm_sminfo_rcv_process: ERR 2F1B: SMInfo(SET) sender (LID 7) authentication failure.Ignoring SMInfo\n"
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	c := NewCounts()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- FollowCounts(ctx, path, c, FollowOptions{Poll: 50 * time.Millisecond, Quiet: 20 * time.Millisecond, Notice: func(string) {}})
	}()
	want := fmt.Sprint(map[CountKey]uint64{{Kind: "not-explained"}: 2, {Kind: KindUntrusted}: 1})
	deadline := time.Now().Add(10 * time.Second)
	for fmt.Sprint(snapshot(c)) != want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	if got := fmt.Sprint(snapshot(c)); got != want {
		t.Errorf("counts %s, want %s", got, want)
	}
}
