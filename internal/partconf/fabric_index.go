package partconf

import (
	"fmt"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

// RuleIndexMoved: OpenSM, when it next reads the port's table, will put a key it holds
// at another index. Membership is not concerned (that is the other rules'); a job or
// interface that names an index is.
const RuleIndexMoved = "partitions-index-moved"

// compareIndexes reports the keys of an end port that OpenSM will move to another index
// (Model.Slots, with the sweep's tables as the tables before). OpenSM keeps a key at
// the index where it finds it (osm_pkey_mgr.c, pkey_mgr_process_physical_port: an
// existing key is "updated" in place), except at index 0, which holds the default
// partition (or the indx0 one): a key found there moves away and the default moves
// there. So a table with the same keys in another order is left as it is, unless index
// 0 is concerned.
//
// When that happens matters: a running OpenSM does not re-read a table it programmed
// (osm_port_info_rcv.c reads a port's P_Key table only when the port is new to it, comes
// back in INIT after a reset, or when OpenSM sweeps as a new master, e.g. after a
// restart), so kill -HUP leaves a table changed behind its back as it is (seen in the
// lab with OpenSM 3.3.23). And where a displaced key goes depends on what that OpenSM
// remembers (its accum_pkeys): a fresh one puts it after the last index it uses, which
// is the index the model gives; a running one may give it back an index it used before.
//
// Indexes matter: IPoIB's parent interface takes its P_Key from index 0 (the kernel's
// ipoib_pkey_dev_check_presence / ib_query_pkey(…, 0, …)), and NCCL_IB_PKEY,
// ibv_modify_qp's pkey_index and MPI's equivalents name an index, so a job pinned to an
// index changes partition when the key there moves.
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
	var moves []string
	var keys []check.PKey
	index0 := ""
	for i, e := range slots {
		if !e.PKey.Valid() || i >= len(p.PKeys) {
			continue
		}
		if p.PKeys[i].Valid() && p.PKeys[i].Partition() == e.PKey.Partition() {
			continue
		}
		j, ok := where[e.PKey.Partition()]
		if !ok || (j < len(slots) && slots[j].PKey.Partition() == p.PKeys[j].Partition()) {
			// Missing (partitions-missing-key), or the key found at j stays there and
			// this is the partition's other membership (-W, both), which the table
			// lacks (partitions-wrong-membership).
			continue
		}
		to := fmt.Sprintf("index %d", i)
		if j == 0 {
			// Displaced from index 0: where to depends on the running OpenSM.
			to = fmt.Sprintf("another index (%d when OpenSM starts afresh)", i)
		}
		moves = append(moves, fmt.Sprintf("%s from index %d to %s", p.PKeys[j], j, to))
		keys = append(keys, p.PKeys[j])
		if i == 0 {
			index0 = fmt.Sprintf("; IPoIB's parent interface takes its P_Key from index 0, so it is in %s now and will be in %s", describeAt(p.PKeys, 0), e.PKey.Partition().String())
		}
	}
	if len(moves) == 0 {
		return nil
	}
	return []check.Finding{{Severity: check.SeverityWarning, Rule: RuleIndexMoved,
		Ports: []check.FindingPort{f.FindingPort(id)}, PKeys: keys,
		Message: fmt.Sprintf("%s holds its keys from %s at other indexes than OpenSM keeps them (it keeps each key where it finds it, but index 0 for %s): when it next reads this table it moves %s%s",
			f.Label(id), m.Source.File, describeSlot0(slots), strings.Join(moves, " and "), index0),
		Action: "membership is right; the indexes will change when OpenSM re-reads the table (when it restarts or the port resets; a running OpenSM, even after kill -HUP, leaves it as it is), " +
			"and with them the partition of a job pinned to an index (NCCL_IB_PKEY, a QP's pkey_index): pin jobs by key (ibkey pkeys --find KEY), or restart OpenSM now to settle the indexes"}}
}

// describeSlot0 names the key the model puts at index 0.
func describeSlot0(slots []Entry) string {
	if len(slots) == 0 || !slots[0].PKey.Valid() {
		return "no key"
	}
	return slots[0].PKey.String()
}

func describeAt(t []check.PKey, i int) string {
	if i >= len(t) || !t[i].Valid() {
		return "no partition (an empty entry)"
	}
	return "partition " + t[i].Partition().String()
}
