package job

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
	"github.com/ibkey/ibkey/internal/job"
)

// TestJSONSchema: the JSON goldens follow schemas/job.schema.json, and so do generated
// runs (runJob validates every -o json output): each library's setting on the
// fixture host (found, empty entry, unreadable entry, out of range) in resolve mode,
// and --want for every library over the lab sweep.
func TestJSONSchema(t *testing.T) {
	jsonschematest.Goldens(t, "testdata")
	codes := map[int]int{}
	for _, setting := range []string{"NCCL_IB_PKEY=1", "NCCL_IB_PKEY=3", "NCCL_IB_PKEY=200", "UCX_IB_PKEY=0x8001", "UCX_IB_PKEY=auto",
		"NVSHMEM_IB_PKEY=2", "OMPI_MCA_btl_openib_pkey=0x0002", "MV2_DEFAULT_PKEY=0x7fff", "GASNET_IBV_PKEY=0x0005"} {
		// NCCL_IB_PKEY=3 uses the fixture's entry not read, mlx5_1/1's index 3; 200 is
		// beyond the RoCE port's one entry, where the driver decides (not read).
		read := jsonschematest.Complete
		if setting == "NCCL_IB_PKEY=3" || setting == "NCCL_IB_PKEY=200" {
			read = jsonschematest.Partial
		}
		r := runJobRead(t, read, nil, setting, "-o", "json")
		codes[r.code]++
	}
	for _, key := range []string{"0x0003", "0x8002", "0x0001", "0x7fff"} {
		r := runJob(t, nil, "--fabric-file", labFabric, "--node", "HcaA,HcaB,HcaC,HcaD", "--want", key, "-o", "json")
		codes[r.code]++
	}
	if codes[0] == 0 || codes[1] == 0 || codes[4] == 0 {
		t.Errorf("exit codes %v: the runs should include works, does-not-work and not-checked", codes)
	}
}

// TestJSONLeftOut: the local host's devices no library can open (job.HostPorts) are
// in the document as left_out, each with why, and follow the schema; none, no member.
func TestJSONLeftOut(t *testing.T) {
	rep := newReport(nil, 0)
	rep.Libraries = []libReport{}
	rep.LeftOut = []job.LeftOut{{Device: "mlx5_0", Why: "libibverbs does not list it here: /dev/infiniband/uverbs0: does not exist"}}
	doc, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	jsonschematest.Validate(t, "job", doc)
	if !strings.Contains(string(doc), `"left_out":[{"device":"mlx5_0","why":"libibverbs does not list it here: /dev/infiniband/uverbs0: does not exist"}]`) {
		t.Errorf("left_out missing or changed: %s", doc)
	}
	rep.LeftOut = nil
	if doc, _ = json.Marshal(rep); strings.Contains(string(doc), "left_out") {
		t.Errorf("no device left out, yet: %s", doc)
	}
}
