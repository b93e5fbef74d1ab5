// Package fabric is the swept-fabric model: one sweep of an InfiniBand subnet (every
// node that answered, its ports with state, LIDs, links, partition enforcement bits and
// P_Key tables, and what could not be read and why), the rules over it (the partition
// audit of `ibkey fabric check`, partition members for `ibkey fabric pkeys`, subnet
// boundaries, the switch-port rule at a CA's first hop), the comparison of two sweeps
// (`ibkey fabric diff`) and the fabric file that `ibkey fabric discover -o json` writes
// and --fabric-file reads.
//
// A Fabric is a plain value, built by internal/query (a directed-route sweep) or
// decoded from a file (DecodeFabric). Nothing here talks to the fabric. The package
// imports only internal/check (keys, GUIDs, ports, findings and the switch-port rule),
// internal/jsondoc and internal/textsafe.
//
// Sources: IBA vol. 1 §10.9 (partitioning), §14.2.5 (NodeInfo, PortInfo, P_KeyTable,
// SwitchInfo), OpenSM osm_pkey_mgr.c (how an SM programs the tables it is audited
// against).
package fabric
