package devices

import (
	"encoding/json"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// TestJSONIncomplete: a device that cannot be read is named in the JSON's incomplete
// list (kind unread-device) and the exit is 4; a host read whole has none (the runner
// checks the rule of incomplete for every JSON run: devices exits only 0 or 4).
func TestJSONIncomplete(t *testing.T) {
	dir := unreadableDeviceTree(t)
	r := cmdtest.Run(t, root, false, nil, "--sysfs", dir, "devices", "-o", "json")
	var doc struct {
		Incomplete []struct{ Kind, Message string } `json:"incomplete"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if r.Code != 4 || len(doc.Incomplete) != 1 || doc.Incomplete[0].Kind != "unread-device" {
		t.Errorf("exit %d, incomplete %+v; want 4 and one unread-device\n%s", r.Code, doc.Incomplete, r.Stdout)
	}
}
