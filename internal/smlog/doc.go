// Package smlog reads OpenSM's log and finds in it every event about partitions and
// keys: the security traps OpenSM receives (256-259), the SA's refusals for a
// partition or a key (PathRecord, MultiPathRecord, MCMemberRecord, P_KeyTableRecord,
// InformInfo), what it says of partitions.conf, and what its Partition Manager says
// of the tables it programs, and a QoS policy file it could not use (whose
// qos-levels limit paths to their P_Keys). Each event is one Event however many lines OpenSM
// wrote for it (a trap's error-level lines and its info-level report, a parse error
// and the fallback after it), with its ports named (Names: a sweep, then the log's
// own GUID lines) and explained (Explain: the rule in can-talk's words, the fix, the
// partitions.conf line to edit).
//
// The catalogue, OpenSM 3.3.23 (the messages and their format strings):
//
//	osm_trap_rcv.c         "Received Generic Notice type:%u num:%u (...) Producer:%u (...) from LID:%u TID:0x%016x"
//	                       "Bad P_Key:0x%x on SL:%d from LID1:%u QP1:0x%x to LID2:%u QP2:0x%x" (and Q_Key)
//	                       "Reporting Security Notice from node 0x... (...) ..." (info: whole QPs, trap 259's port)
//	                       "Generic Notice dump:" (verbose), "Ignoring noisy traps." (verbose),
//	                       "Cannot find port corresponding to lid:%u", ERR 3802, 3809 (and 3803, 3812,
//	                       3813 held with a trap that is not a key's)
//	osm_sa_path_record.c   ERR 1F1A 1F1B 1F1C 1F1D 1F1E; routing 1F02 1F03 1F05 1F06 1F07 1F25
//	osm_sa_multipath_record.c ERR 4518 4519 451A 451C 451D; routing 4514 4515 4505 4503 4516 4520
//	osm_sa_mcmember_record.c ERR 1B14 1B30 1B31 1B32 (1B1A/1B1C merged), 1B11 1B1B (IPoIB broadcast groups), verbose
//	                       "Port and requester don't share PKey", "Invalid PKey supplied in request"
//	osm_sa_pkey_record.c   ERR 4608;  osm_sa_informinfo.c ERR 430B
//	osm_sa_mad_ctrl.c      ERR 1A04, 1A06 (a Report(Notice));  osm_sminfo_rcv.c ERR 2F18
//	osm_prtn_config.c      "PARSE ERROR: line %d: ...", "PARSE WARN: line %d: ...",
//	                       "Partition configuration %s is not accessible (%s)", "Duplicated partition
//	                       definition: %s (0x%04x) vs %s (0x%04x)", "IP MC group (...) invalid pkey/rate/mtu"
//	osm_prtn.c             "Partition configuration in error; retrying with default config",
//	                       "Partition configuration was not fully processed", "Failed to create MC group",
//	                       "Unable to create partition", "realloc error to create MC group"
//	osm_pkey_mgr.c         ERR 0502 0503 0505 0506 0507 0508 0509 0510 0511 0512, "Max number of blocks reduced"
//	osm_inform.c           "MGID ... and port ... do not share same pkey" (info), "Pkey mismatch on
//	                       lid_range_begin != 0xFFFF. Need to remove this informInfo from db" (verbose)
//	osm_qos_parser_y.y     ERR AC05 (yyerror) then AC03, AC01; osm_qos_policy.c ERR AC10-AC13 then AC04
//
// docs/sm.md has the whole table: what each means, how ibkey explains it, and the
// messages left out, with why; notKeys (notkeys.go) the messages of those files that
// are not about partitions or keys.
package smlog
