package partconf

import (
	"fmt"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

// RuleIndexMoved: a key is in the port's table, but not at the index OpenSM gives it.
const RuleIndexMoved = "partitions-index-moved"

// compareIndexes reports the keys of an end port that sit at another index than the one
// OpenSM programs (Model.Slots). Membership is compared elsewhere; here only where a
// key is. Indexes matter: the IPoIB parent interface takes its P_Key from index 0
// (the kernel's ipoib_pkey_dev_check_presence / ib_query_pkey(…, 0, …)), and
// NCCL_IB_PKEY, ibv_modify_qp's pkey_index and MPI's equivalents name an index, so a
// key at another index puts them in another partition or none.
func compareIndexes(f *fabric.Fabric, m *Model, id check.PortID, p *fabric.Port) []check.Finding {
	slots := m.Slots(p.GUID)
	where := map[check.PartitionKey]int{}
	for i, k := range p.PKeys {
		if k.Valid() {
			if _, ok := where[k.Partition()]; !ok {
				where[k.Partition()] = i
			}
		}
	}
	var out []check.Finding
	for i, e := range slots {
		if !e.PKey.Valid() || i >= len(p.PKeys) {
			continue
		}
		if p.PKeys[i].Valid() && p.PKeys[i].Partition() == e.PKey.Partition() {
			continue
		}
		j, ok := where[e.PKey.Partition()]
		if !ok {
			continue // missing: reported as partitions-missing-key
		}
		impact := fmt.Sprintf("a QP or NCCL_IB_PKEY=%d that means %s gets %s instead", i, e.PKey.Partition().String(), describeAt(p.PKeys, i))
		if i == 0 {
			impact = fmt.Sprintf("IPoIB's parent interface takes its P_Key from index 0, so it is in %s instead of %s", describeAt(p.PKeys, 0), e.PKey.Partition().String())
		}
		out = append(out, check.Finding{Severity: check.SeverityError, Rule: RuleIndexMoved,
			Ports: []check.FindingPort{f.FindingPort(id)}, PKeys: []check.PKey{p.PKeys[j]},
			Message: fmt.Sprintf("%s holds %s at index %d, but OpenSM programs it at index %d from %s: %s",
				f.Label(id), p.PKeys[j], j, i, m.Source.File, impact),
			Action: "let the SM rewrite the table (OpenSM: kill -HUP; the table was changed behind its back), and use the index OpenSM gives (ibkey pkeys --find KEY)"})
	}
	return out
}

func describeAt(t []check.PKey, i int) string {
	if i >= len(t) || !t[i].Valid() {
		return "no partition (an empty entry)"
	}
	return "partition " + t[i].Partition().String()
}
