package mad

import (
	"context"
	"fmt"
)

// GetPKeyTableLen (for the lab tests, which compare it with smpquery) returns the
// P_Key table length of port on the node at a,
// as smpquery decides it: SwitchInfo PartitionEnforcementCap for a switch's
// external ports, NodeInfo PartitionCap for CA ports and switch port 0.
func GetPKeyTableLen(ctx context.Context, t Transport, a Address, port uint8) (int, error) {
	ni, err := GetNodeInfo(ctx, t, a)
	if err != nil {
		return 0, err
	}
	if port > ni.NumPorts {
		return 0, fmt.Errorf("mad: %s: no port %d (the node has %d)", a, port, ni.NumPorts)
	}
	if ni.NodeType == NodeSwitch && port != 0 {
		si, err := GetSwitchInfo(ctx, t, a)
		if err != nil {
			return 0, err
		}
		return int(si.PartitionEnforcementCap), nil
	}
	return int(ni.PartitionCap), nil
}
