// Package partconf reads OpenSM's partitions.conf the way OpenSM 3.3.23 reads it
// (osm_prtn_config.c), models the P_Key tables its Partition Manager programs from it,
// answers who can talk to whom, and lints the file. It does no I/O (it is given the
// file's bytes, and a swept fabric to compare), and imports only internal/check and
// internal/fabric of ibkey.
//
// Sources: OpenSM's osm_prtn_config.c (the parser), osm_prtn.c and osm_pkey_mgr.c (the
// tables), doc/partition-config.txt, opensm(8) PARTITION CONFIGURATION, and
// experiments with OpenSM 3.3.23 on the ibsim simulator (lab_test.go; the recorded
// tables are in model_test.go). Where they disagree the lab wins. What the lab showed:
//
//   - Any parse error: OpenSM logs "PARSE ERROR: line N" and "Partition configuration in
//     error; retrying with default config", and every port gets only 0xffff.
//   - Rejected: a line break before ':'; a ';' with nothing before it (a line holding
//     only ';', ";;", "; ;"); CRLF line ends ('\r' is not skipped); a member that is not
//     a keyword or a non-zero number (ALL_CAs, all, 0x0, 0x12x); a key that is not a
//     number; an invalid mgid; `mgid=GID;` with no group flag before the ';'; the
//     opensm(8) example `ShareIO = 0x80 : defmember=limited : ...` (two colons).
//   - Accepted: a line end ends a member like a comma (`0x1=full\n 0x2;`); empty items,
//     trailing commas and "=full" without a name are ignored, NONE and its prefixes too.
//   - Prefixes: the word written must be a prefix of the keyword: "=" and "=f" are full,
//     "=b" both, "=limi" limited, "=fullx" and "=FULL" limited; A is ALL, ALL_ and ALL_C
//     are ALL_CAS, S is SELF, d= is defmember=, i is ipoib. Not prefixes: mgid and indx0
//     are matched exactly.
//   - The last item naming a port wins inside a partition, across merged definitions and
//     over the implicit Default items: `Default=0x7fff : ALL=limited;` makes even the
//     SM's port limited (0x7fff), contrary to opensm(8).
//   - Keys: (uint16)strtoul then & 0x7fff: 0x18002 is 0x0002, 0x8001 is 0x0001, a name
//     starting with a digit is the key (`16 : ...` is 0x0010). A missing or 0 key takes
//     the partition with that name if there is one, else the next free key counting
//     from 0x0001 in file order.
//   - Table order, on a port whose table held 0xffff at index 0: the last indx0
//     partition at index 0, else the default entry stays at 0; then keys in OpenSM's map
//     order, the two bytes of the key swapped (0x0100, 0x0201, 0x0002, 0x0005); with -W
//     a key's limited entry comes before its full one. Entries past the table size are
//     dropped ("ERR 0512 ... Pkey table is full"), the last in that order.
//   - A switch's management port 0 gets every partition that names it (ALL,
//     ALL_SWITCHES), not only the default P_Key.
//   - Lines are read in 4094-byte pieces (fgets with sizeof(line) - 1 on 4096 bytes).
//   - A GUID without 0x is read by strtoull(…, 0): with a leading 0 it is octal
//     (0000000000100004 is 0x8004, and that port gets nothing), otherwise decimal.
//   - A `# comment` after an mgid value that ends the line's items is read as group
//     flags (parse_part_conf hands mgroup_create the bytes past the NUL written over
//     '#'): "unrecognized mgroup flag 'IGMP' - ignored", and `# mtu=2` sets the mtu.
//     After a flag (mgid=GID,sl=0 # ...) it is a comment.
//   - One partition split over definitions of the same name and key is merged
//     ("Duplicated partition definition ... Will use it"), as partition-config.txt says.
//   - Routers: ports are picked by node type for ALL_CAS and ALL_ROUTERS only; a router
//     port left out of a Default line of ALL_CAS keeps the implicit 0x7fff (limited).
//   - A running OpenSM (SIGHUP, any heavy sweep) re-reads the file and remembers, per
//     port, the index it gave every key since it started (accum_pkeys): a new key goes
//     after the last index it ever used, a key put back returns to its old index; and
//     it keeps its partition map, so a definition without a key finds the earlier
//     run's partition by name (Reconfigure). A new process fills a removed last key's
//     hole. The tables it works from are what it last set.
//   - opensm.conf (osmconf.go): with part_enforce off the switch ports facing CAs keep
//     0xffff only; with keep_pkey_indexes FALSE a kept key moves to the first free index
//     (a removed partition leaves no hole); a default key moved off index 0 behind the
//     SM's back is put back at index 0 on the next run.
package partconf
