package cantalk

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
)

// TestUncertainFileUnknown: a partitions file whose outcome in OpenSM cannot be
// predicted (it reads uninitialised bytes of its line buffer: partconf.Config.Uncertain)
// makes the verdict of an end taken from it UNKNOWN (exit 4), as partitions show,
// check and matrix say; it was YES (exit 0) from the file as written. The P_Key rule
// and each shared partition's works are null.
func TestUncertainFileUnknown(t *testing.T) {
	const file = "../partitions/testdata/uncertain.conf"
	text := runIbkey(t, "can-talk", "--partitions", file, "0x0002c90300000211", "0x0002c90300000212")
	if text.Code != 4 || !strings.HasPrefix(text.Stdout, "UNKNOWN: ") || !strings.Contains(text.Stdout, "cannot be predicted") {
		t.Errorf("exit %d:\n%s", text.Code, text.Stdout)
	}
	r := cmdtest.RunPartial(t, root, false, nil, "can-talk", "--partitions", file, "0x0002c90300000211", "0x0002c90300000212", "-o", "json")
	jsonschematest.Validate(t, "can-talk", []byte(r.Stdout))
	var d struct {
		CanTalk *bool `json:"can_talk"`
		AToB    struct {
			PKeyOK *bool `json:"pkey_ok"`
		} `json:"a_to_b"`
		Shared []struct {
			Works *bool `json:"works"`
		} `json:"shared_partitions"`
		Incomplete []struct{ Kind, Message string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		t.Fatal(err)
	}
	if r.Code != 4 || d.CanTalk != nil || d.AToB.PKeyOK != nil || len(d.Shared) == 0 || d.Shared[0].Works != nil ||
		len(d.Incomplete) == 0 || !strings.Contains(d.Incomplete[0].Message, "cannot be predicted") {
		t.Errorf("exit %d: %s", r.Code, r.Stdout)
	}
	// Ends that are not from the file keep their answer.
	if r := runIbkey(t, "can-talk", "--partitions", file, "0x8001", "0x0001"); r.Code != 0 {
		t.Errorf("P_Key values beside an unpredictable file: exit %d: %s", r.Code, r.Stdout)
	}
}

// TestUncertainFileUnresolved: the no of a pinned key the predicted table lacks is the
// file as written too: UNKNOWN (exit 4), can_talk null, the unresolved document with
// its incomplete; the same no from a predictable file stays a definite NO (exit 1).
func TestUncertainFileUnresolved(t *testing.T) {
	const file = "../partitions/testdata/uncertain.conf"
	text := runIbkey(t, "can-talk", "--partitions", file, "0x0002c90300000211,pkey=0x8005", "0x0002c90300000212")
	if text.Code != 4 || !strings.HasPrefix(text.Stdout, "UNKNOWN: ") || !strings.Contains(text.Stdout, "as written: ") {
		t.Errorf("exit %d:\n%s", text.Code, text.Stdout)
	}
	r := cmdtest.RunPartial(t, root, false, nil, "can-talk", "--partitions", file, "0x0002c90300000211,pkey=0x8005", "0x0002c90300000212", "-o", "json")
	jsonschematest.Validate(t, "can-talk", []byte(r.Stdout))
	var d struct {
		CanTalk    *bool  `json:"can_talk"`
		Verdict    string `json:"verdict"`
		Unresolved *struct{ Endpoint string }
		Incomplete []struct{ Kind, Message string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		t.Fatal(err)
	}
	if r.Code != 4 || d.CanTalk != nil || d.Verdict != "unknown" || d.Unresolved == nil || d.Unresolved.Endpoint != "a" || len(d.Incomplete) != 1 {
		t.Errorf("exit %d: %s", r.Code, r.Stdout)
	}
	if r := runIbkey(t, "can-talk", "--partitions", "../../../../testdata/partitions/cluster.conf", "0x0002c90300001011,pkey=0x8005", "0x0002c90300001012"); r.Code != 1 || !strings.HasPrefix(r.Stdout, "NO: ") {
		t.Errorf("predictable file: exit %d: %s", r.Code, r.Stdout)
	}
}
