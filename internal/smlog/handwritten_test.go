package smlog

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
)

// Hand-written log lines, for the messages the lab's OpenSM cannot be made to write.
// Each is OpenSM 3.3.23's format string filled in by hand (the source file is named)
// and says why the lab cannot produce it. Everything else is tested on logs the lab's
// own OpenSM wrote (lab_test.go, lab_verbose_test.go).
var handWritten = []struct {
	name, why, line string
	want            func(*Event) bool
}{
	{"0507", "osm_pkey_mgr.c pkey_mgr_update_peer_port logs it only when the switch port's PartitionEnforcementCap is not a multiple of 32 and the CA's last key lies past it in the table's last block (last_used_pkey_index); ibsim's is 64 (sim_net.c switchinfo[]), fixed",
		"Nov 28 10:00:00 000001 [AB12] 0x01 -> pkey_mgr_update_peer_port: ERR 0507: Not enough pkey entries (40 <= 47) on switch 0x0002c90000000001 port 7 (sw-leaf-1). Clearing Enforcement bit",
		func(e *Event) bool {
			return e.Kind == KindEnforcementOff && e.From.NodeGUID == 0x0002c90000000001 && e.From.Num == 7 && e.From.NodeDesc == "sw-leaf-1"
		}},
	{"1F1B", "osm_sa_path_record.c; the SA first checks osm_port_share_pkey and refuses silently (lab_verbose_test.go shows it); that check passes without a shared key only when a table is empty in OpenSM's view (osm_pkey.c osm_physp_share_pkey, \"HACK\"), and OpenSM gives every port the Default partition's 0x7fff at least (osm_prtn.c prtn_make_default; the lab: a file without a Default line too), so it needs a port whose table OpenSM never read",
		"Nov 28 10:00:00 000002 [AB12] 0x01 -> pr_rcv_get_path_parms: ERR 1F1B: Ports src 0x0002c90300000211 (HcaB port 1) and dst 0x0002c90300000221 (HcaC port 1) do not have any shared PKeys",
		func(e *Event) bool {
			return e.Kind == KindPathRefused && e.Code == "1F1B" && e.KeyType == "" && e.From.GUID == 0x0002c90300000211 && e.To.NodeDesc == "HcaC"
		}},
	{"1F1C", "osm_sa_path_record.c; needs a P_Key in OpenSM's view of two tables that no partition defines: its view is the tables it read in a heavy sweep (osm_port_info_rcv.c get_pkey_table) and then programmed (osm_pkey_mgr.c, which removes such a key) in the same sweep",
		"Nov 28 10:00:00 000003 [AB12] 0x01 -> pr_rcv_get_path_parms: ERR 1F1C: No partition found for PKey 0x0555 - using default SL 0 [HcaB port 1 <-> HcaC port 1]",
		func(e *Event) bool {
			return e.Kind == KindPathNoPartition && e.Key == 0x0555 && e.SL == 0 && e.From.NodeDesc == "HcaB" && e.To.Num == 1
		}},
	{"1F1D", "osm_sa_path_record.c; kept with its 'storage' level beside the lab's (lab_qos_test.go TestLabQoSPathRefusals)",
		`Nov 28 10:00:00 000004 [AB12] 0x01 -> pr_rcv_get_path_parms: ERR 1F1D: QoS level "storage" doesn't define specified PKey 0x8002 for ports 0x0002c90300000211 (HcaB port 1) and 0x0002c90300000221 (HcaC port 1)`,
		func(e *Event) bool {
			return e.Kind == KindPathRefused && e.QoSLevel == "storage" && e.Key == 0x8002 && e.To.GUID == 0x0002c90300000221
		}},
	{"1F1E", "osm_sa_path_record.c; as 1F1D",
		`Nov 28 10:00:00 000005 [AB12] 0x01 -> pr_rcv_get_path_parms: ERR 1F1E: Ports 0x0002c90300000211 (HcaB) and 0x0002c90300000221 (HcaC) do not share PKeys defined by QoS level "storage"`,
		func(e *Event) bool {
			return e.Kind == KindPathRefused && e.QoSLevel == "storage" && e.From.NodeDesc == "HcaB" && e.From.Num == -1
		}},
	{"4518", "osm_sa_multipath_record.c; kept beside the lab's (lab_multipath_test.go TestLabMultiPathRefusals: a GetMulti sent as one RMPP segment)",
		"Nov 28 10:00:00 000006 [AB12] 0x01 -> mpr_rcv_get_path_parms: ERR 4518: Ports src 0x0002c90300000211 (HcaB port 1) and dst 0x0002c90300000221 (HcaC port 1) do not share the specified PKey 0x0002",
		func(e *Event) bool { return e.Kind == KindPathRefused && e.Code == "4518" && e.Key == 0x0002 }},
	{"4519", "osm_sa_multipath_record.c; as 1F1B (mpr_rcv_get_path_parms checks osm_port_share_pkey first too)",
		"Nov 28 10:00:00 000007 [AB12] 0x01 -> mpr_rcv_get_path_parms: ERR 4519: Ports src 0x0002c90300000211 (HcaB port 1) and dst 0x0002c90300000221 (HcaC port 1) do not have any shared PKeys",
		func(e *Event) bool { return e.Kind == KindPathRefused && e.Code == "4519" && e.KeyType == "" }},
	{"451A", "osm_sa_multipath_record.c; as 1F1C",
		"Nov 28 10:00:00 000008 [AB12] 0x01 -> mpr_rcv_get_path_parms: ERR 451A: No partition found for PKey 0x0555 - using default SL 0 [HcaB port 1 <-> HcaC port 1]",
		func(e *Event) bool { return e.Kind == KindPathNoPartition && e.Code == "451A" }},
	{"451C", "osm_sa_multipath_record.c; kept with its 'storage' level beside the lab's (TestLabMultiPathRefusals)",
		`Nov 28 10:00:00 000009 [AB12] 0x01 -> mpr_rcv_get_path_parms: ERR 451C: Ports src 0x0002c90300000211 (HcaB port 1) and dst 0x0002c90300000221 (HcaC port 1) do not share specified PKey (0x0002) as defined by QoS level "storage"`,
		func(e *Event) bool { return e.Kind == KindPathRefused && e.QoSLevel == "storage" && e.Key == 0x0002 }},
	{"451D", "osm_sa_multipath_record.c; as 451C",
		`Nov 28 10:00:00 000010 [AB12] 0x01 -> mpr_rcv_get_path_parms: ERR 451D: Ports src 0x0002c90300000211 (HcaB port 1) and dst 0x0002c90300000221 (HcaC port 1) do not share a PKey as defined by QoS level "storage"`,
		func(e *Event) bool { return e.Kind == KindPathRefused && e.Code == "451D" && e.KeyType == "" }},
	{"1B31", "osm_sa_mcmember_record.c; kept beside the lab's (lab_join_test.go TestLabJoinLimitedGroup: a group created by a join with a limited P_Key keeps it)",
		"Nov 28 10:00:00 000011 [AB12] 0x01 -> validate_other_comp_fields: ERR 1B31: Both limited P_Keys: query 0x0001 group 0x0001",
		func(e *Event) bool { return e.Kind == KindJoinRefused && e.Code == "1B31" && e.Key == 0x0001 }},
	{"2F18", "osm_sminfo_rcv.c; the LID form, beside the lab's directed-route one (lab_sm_test.go TestLabSMKeyMismatch)",
		"Nov 28 10:00:00 000012 [AB12] 0x01 -> smi_rcv_process_get_response: ERR 2F18: Got SM (LID 7) with sm_key 0x0000000000000002 that doesn't match our local sm_key. Ignoring SMInfo",
		func(e *Event) bool { return e.Kind == KindSMKeyMismatch && e.Key == 2 && e.From.LID == 7 }},
	{"0502", "osm_pkey_mgr.c; an allocation failure",
		"Nov 28 10:00:00 000013 [AB12] 0x01 -> pkey_mgr_process_physical_port: ERR 0502: Failed to allocate new pending pkey entry for node 0x0002c90300000210 port 1",
		func(e *Event) bool {
			return e.Kind == KindProgramFailed && e.From.NodeGUID == 0x0002c90300000210 && e.From.Num == 1
		}},
	{"0505", "osm_pkey_mgr.c; an allocation failure",
		"Nov 28 10:00:00 000014 [AB12] 0x01 -> pkey_mgr_update_port: ERR 0505: Failed to set PKey 0x8001 in block 0 idx 3 for node 0x0002c90300000210 port 1 (HcaB)",
		func(e *Event) bool {
			return e.Kind == KindProgramFailed && e.Key == 0x8001 && e.From.NodeDesc == "HcaB"
		}},
	{"0506", "osm_pkey_mgr.c; a Set OpenSM could not send (not one that got no answer)",
		"Nov 28 10:00:00 000015 [AB12] 0x01 -> pkey_mgr_update_port: ERR 0506: pkey_mgr_update_pkey_entry() failed to update pkey table block 0 for node 0x0002c90300000210 port 1 (HcaB)",
		func(e *Event) bool { return e.Kind == KindProgramFailed && e.From.Num == 1 }},
	{"0511", "osm_pkey_mgr.c; as 0506",
		"Nov 28 10:00:00 000016 [AB12] 0x01 -> pkey_mgr_enforce_partition: ERR 0511: Failed to set PortInfo for node 0x0000000000200000 port 2 (Sw1)",
		func(e *Event) bool { return e.Kind == KindProgramFailed && e.From.NodeDesc == "Sw1" && e.From.Num == 2 }},
	{"0509", "osm_pkey_mgr.c update_peer_block (a switch port's table: the function's name has no pkey_mgr); as 0506",
		"Nov 28 10:00:00 000020 [AB12] 0x01 -> update_peer_block: ERR 0509: pkey_mgr_update_pkey_entry() failed to update pkey table block 0 for node 0x0000000000200000 port 2 (Sw1)",
		func(e *Event) bool {
			return e.Kind == KindProgramFailed && e.Code == "0509" && e.From.NodeDesc == "Sw1" && e.From.Num == 2
		}},
	{"0510", "osm_pkey_mgr.c osm_pkey_mgr_process; an allocation failure (osm_prtn.c prtn_make_default): no port is programmed in that sweep",
		"Nov 28 10:00:00 000021 [AB12] 0x01 -> osm_pkey_mgr_process: ERR 0510: osm_prtn_make_partitions() failed",
		func(e *Event) bool {
			ex := (&Explainer{R: NewResolver(nil, NewNames())}).Explain(e)
			return e.Kind == KindProgramFailed && e.Code == "0510" && strings.Contains(ex.Rule, "programmed no P_Key table")
		}},
	{"blocks", "osm_pkey_mgr.c; needs a port whose PartitionCap shrinks between sweeps",
		"Nov 28 10:00:00 000017 [AB12] 0x02 -> pkey_mgr_update_port: Max number of blocks reduced from 4 to 2 for node 0x0002c90300000210 port 1 (HcaB)",
		func(e *Event) bool {
			return e.Kind == KindTableShrunk && e.From.NodeDesc == "HcaB" && e.Detail == "from 4 to 2 blocks of 32 entries"
		}},
	{"mcgroup", "osm_prtn.c; an allocation failure",
		"Nov 28 10:00:00 000018 [AB12] 0x01 -> osm_prtn_add_mcgroup: Failed to create MC group (ff12:401b:8001::ffff:ffff) with pkey 0x8001",
		func(e *Event) bool {
			return e.Kind == KindProgramFailed && e.MGID == "ff12:401b:8001::ffff:ffff" && e.Key == 0x8001
		}},
	{"1A06", "osm_sa_mad_ctrl.c; kept beside the lab's (lab_traps_test.go TestLabReportUnanswered: a subscriber gone before OpenSM forwards it a notice), with another LID",
		"Nov 28 10:00:00 000024 [AB12] 0x01 -> sa_mad_ctrl_send_err_callback: ERR 1A06: MAD completed in error (IB_TIMEOUT): SubnAdmReport(Notice), attr_mod 0x0, LID 5, TID 0x2dab001",
		func(e *Event) bool {
			return e.Kind == KindNoticeNotForwarded && e.Code == "1A06" && e.To.LID == 5 && e.Detail == "IB_TIMEOUT"
		}},
	{"partition", "osm_prtn.c; an allocation failure",
		"Nov 28 10:00:00 000019 [AB12] 0x01 -> osm_prtn_make_new: Unable to create partition 'storage' (0x0002)",
		func(e *Event) bool { return e.Kind == KindProgramFailed && strings.Contains(e.Detail, "storage") }},
}

func TestHandWrittenLines(t *testing.T) {
	for _, c := range handWritten {
		t.Run(c.name, func(t *testing.T) {
			var evs []*Event
			a := NewAssembler(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.UTC, func(e *Event) { evs = append(evs, e) })
			if err := Read(context.Background(), strings.NewReader(c.line+"\n"), a); err != nil {
				t.Fatal(err)
			}
			if len(evs) != 1 || !c.want(evs[0]) {
				for _, e := range evs {
					t.Logf("%+v", *e)
				}
				t.Fatalf("%s (hand-written: %s): %d events, not the one wanted", c.name, c.why, len(evs))
			}
			ex := (&Explainer{R: NewResolver(nil, a.Names)}).Explain(evs[0])
			if ex.Rule == "" || ex.Fix == "" {
				t.Errorf("no rule or fix: %+v", ex)
			}
		})
	}
}

// TestAssembler: the lines of one event, whatever comes between them.
func TestAssembler(t *testing.T) {
	read := func(t *testing.T, log string, ref time.Time) []*Event {
		t.Helper()
		var evs []*Event
		a := NewAssembler(ref, time.UTC, func(e *Event) { evs = append(evs, e) })
		if err := Read(context.Background(), strings.NewReader(log), a); err != nil {
			t.Fatal(err)
		}
		return evs
	}
	ref := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	t.Run("interleaved threads", func(t *testing.T) {
		// Thread A's trap, thread B's 1F1A between its lines, thread B's own trap.
		log := `Nov 27 09:00:00 000001 [A] 0x01 -> log_trap_info: Received Generic Notice type:2 num:257 (Bad P_Key) Producer:1 (Channel Adapter) from LID:4 TID:0x1
Nov 27 09:00:00 000002 [B] 0x01 -> log_trap_info: Received Generic Notice type:2 num:258 (Bad Q_Key) Producer:1 (Channel Adapter) from LID:5 TID:0x2
Nov 27 09:00:00 000003 [A] 0x01 -> log_trap_info: Bad P_Key:0x8001 on SL:1 from LID1:3 QP1:0x345 to LID2:4 QP2:0x6
Nov 27 09:00:00 000004 [C] 0x01 -> pr_rcv_get_path_parms: ERR 1F1A: Ports 0x0000000000000011 (X port 1) and 0x0000000000000012 (Y port 1) do not share specified PKey 0x0002
Nov 27 09:00:00 000005 [B] 0x01 -> log_trap_info: Bad Q_Key:0x11 on SL:0 from LID1:3 QP1:0x7 to LID2:5 QP2:0x8
Nov 27 09:00:00 000006 [A] 0x02 -> log_notice: Reporting Security Notice "Bad P_Key" from LID 4, GUID 0x0000000000000004 : LID1 3, LID2 4, P_Key 0x8001, SL 1, QP1 0x12345, QP2 0x6, GID1 ::, GID2 ::
Nov 27 09:00:00 000007 [B] 0x02 -> log_notice: Reporting Security Notice "Bad Q_Key" from LID 5, GUID 0x0000000000000005 : LID1 3, LID2 5, Q_Key 0x11, SL 0, QP1 0x7, QP2 0x8, GID1 ::, GID2 ::
`
		evs := read(t, log, ref)
		if len(evs) != 3 || evs[0].Kind != KindBadPKey || evs[1].Kind != KindBadQKey || evs[2].Kind != KindPathRefused {
			t.Fatalf("%d events, want 257, 258, 1F1A in log order", len(evs))
		}
		if e := evs[0]; e.From.QP != 0x12345 || e.From.QPLow12 || len(e.Lines) != 3 || e.Reporter.GUID != 4 || e.Line != 1 {
			t.Errorf("257: %+v", e)
		}
		if e := evs[1]; e.Key != 0x11 || len(e.Lines) != 3 || e.Line != 2 {
			t.Errorf("258: %+v", e)
		}
	})
	t.Run("no report", func(t *testing.T) {
		// A trap OpenSM did not report: the next line of its thread ends it, and QP1
		// stays cut.
		log := `Nov 27 09:00:00 000001 [A] 0x01 -> log_trap_info: Received Generic Notice type:2 num:257 (Bad P_Key) Producer:1 (Channel Adapter) from LID:4 TID:0x1
Nov 27 09:00:00 000002 [A] 0x01 -> log_trap_info: Bad P_Key:0x8001 on SL:1 from LID1:3 QP1:0x345 to LID2:4 QP2:0x6
Nov 27 09:00:01 000003 [A] 0x02 -> osm_ucast_mgr_process: minhop tables configured on all switches
`
		evs := read(t, log, ref)
		if len(evs) != 1 || evs[0].From.QP != 0x345 || !evs[0].From.QPLow12 || len(evs[0].Lines) != 2 {
			t.Fatalf("%+v", evs)
		}
		ex := (&Explainer{R: NewResolver(nil, NewNames())}).Explain(evs[0])
		if len(ex.Notes) == 0 || !strings.Contains(ex.Notes[0], "low 12 bits (0x345)") {
			t.Errorf("notes: %v", ex.Notes)
		}
	})
	t.Run("year", func(t *testing.T) {
		// December then January: the year turns; a log whose first month is after
		// the reference's is last year's.
		log := `Dec 31 23:59:59 000001 [A] 0x01 -> osm_pkey_rec_rcv_process: ERR 4608: Ignoring PKeyRecord request from non-trusted requester with SM_Key 0x0000000000000000
Jan 01 00:00:01 000002 [A] 0x01 -> osm_pkey_rec_rcv_process: ERR 4608: Ignoring PKeyRecord request from non-trusted requester with SM_Key 0x0000000000000000
`
		evs := read(t, log, time.Date(2027, 1, 5, 0, 0, 0, 0, time.UTC))
		if len(evs) != 2 || evs[0].Time.Year() != 2026 || evs[1].Time.Year() != 2027 {
			t.Fatalf("%v %v", evs[0].Time, evs[1].Time)
		}
	})
	t.Run("odd lines", func(t *testing.T) {
		// CRLF ends, a line with no newline at the end, a short garbage line, a long
		// one, NUL bytes: none is an event, none stops the read.
		log := "garbage\r\n" + strings.Repeat("x", 3<<20) + "\n\x00\x00\x00\n" +
			"Nov 27 09:00:00 000001 [A] 0x01 -> osm_pkey_rec_rcv_process: ERR 4608: Ignoring PKeyRecord request from non-trusted requester with SM_Key 0x0000000000000000\r\n" +
			"Nov 27 09:00:00 000002 [A] 0x01 -> osm_pkey_rec_rcv_process: ERR 4608: Ignoring PKeyRecord request from non-trusted requester with SM_Key 0x0000000000000005"
		evs := read(t, log, ref)
		if len(evs) != 2 || evs[1].Key != 5 {
			t.Fatalf("%d events", len(evs))
		}
	})
	t.Run("glued", func(t *testing.T) {
		// ERR 4505's format has no newline (osm_sa_multipath_record.c): the next
		// record follows on the same line, and both are read, at that line; text
		// with an arrow that is not a record's start stays in the message.
		log := "Nov 27 09:00:00 000001 [A] 0x01 -> mpr_rcv_get_path_parms: ERR 4505: Can't find remote phys port of Sw1 (GUID 0x0000000000200000) port 4 while routing from LID 3 to LID 5" +
			"Nov 27 09:00:00 000002 [B] 0x01 -> pr_rcv_get_path_parms: ERR 1F1A: Ports 0x0000000000000011 (X port 1) and 0x0000000000000012 (Y [1] 0x01 -> port 1) do not share specified PKey 0x0002\n" +
			"Nov 27 09:00:01 000003 [A] 0x01 -> pr_rcv_get_path_parms: ERR 1F07: Dead end path on switch Sw1 (GUID: 0x0000000000200000) to LID 5\n"
		var evs []*Event
		a := NewAssembler(ref, time.UTC, func(e *Event) { evs = append(evs, e) })
		if err := Read(context.Background(), strings.NewReader(log), a); err != nil {
			t.Fatal(err)
		}
		if a.Lines() != 2 || a.Records() != 2 {
			t.Errorf("%d lines, %d in OpenSM's format; want 2 and 2 (a line of two records is one)", a.Lines(), a.Records())
		}
		if len(evs) != 3 || evs[0].Code != "4505" || evs[0].To.LID != 5 || evs[0].Line != 1 || !strings.HasSuffix(evs[0].Lines[0], "to LID 5") ||
			evs[1].Code != "1F1A" || evs[1].Line != 1 || evs[1].To.NodeDesc != "Y [1] 0x01 ->" || evs[1].Key != 2 || evs[2].Code != "1F07" || evs[2].Line != 2 {
			for _, e := range evs {
				t.Errorf("%+v", e)
			}
			t.Fatalf("%d events, want 4505 and 1F1A at line 1, 1F07 at line 2", len(evs))
		}
	})
	t.Run("glued AC02", func(t *testing.T) {
		// ERR AC02 (osm_qos_parser_y.y __validate_pkeys) has no newline either. OpenSM
		// 3.3.23 cannot log it: its only callers pass is_ipoib TRUE, so the branch is
		// dead, and Debian's 3.3.23 binary does not hold the string. Written by hand:
		// it is named as not explained (a P_Key, of another version), and the record
		// after it is read.
		log := "Nov 27 09:00:00 000001 [A] 0x01 -> __validate_pkeys: ERR AC02: pkey 0x0009 - partition doesn't exist" +
			"Nov 27 09:00:00 000002 [A] 0x01 -> pr_rcv_get_path_parms: ERR 1F1A: Ports 0x0000000000000011 (X port 1) and 0x0000000000000012 (Y port 1) do not share specified PKey 0x0002\n"
		var evs []*Event
		var unx []*Unexplained
		a := NewAssembler(ref, time.UTC, func(e *Event) { evs = append(evs, e) })
		a.Unexplained = func(u *Unexplained) { unx = append(unx, u) }
		if err := Read(context.Background(), strings.NewReader(log), a); err != nil {
			t.Fatal(err)
		}
		if len(unx) != 1 || unx[0].Code != "AC02" || unx[0].Line != 1 || unx[0].Message != "ERR AC02: pkey 0x0009 - partition doesn't exist" {
			t.Errorf("not explained: %+v", unx)
		}
		if len(evs) != 1 || evs[0].Code != "1F1A" || evs[0].Line != 1 || evs[0].Key != 2 {
			t.Errorf("events: %+v", evs)
		}
	})
	t.Run("qos policy cut off", func(t *testing.T) {
		// A QoS policy error whose ERR AC03 is not in the log, and an AC03 whose
		// error is not: each is a qos-policy-rejected event that says what it lacks.
		// The next sweep's AC03 closes its own error (it is no repeat of the first).
		log := "Nov 27 09:00:00 000001 [A] 0x01 -> yyerror: ERR AC05: Syntax error (line 3:1): syntax error\n" +
			"Nov 27 09:00:01 000002 [A] 0x01 -> osm_qos_parse_policy_file: ERR AC03: Failed parsing QoS policy file (/etc/opensm/qos-policy.conf)\n" +
			"Nov 27 09:00:02 000003 [A] 0x01 -> yyerror: ERR AC05: Syntax error (line 7:2): syntax error\n" +
			"Nov 27 09:00:02 000004 [A] 0x01 -> osm_qos_parse_policy_file: ERR AC03: Failed parsing QoS policy file (/etc/opensm/qos-policy.conf)\n"
		// The first AC05 is cut off from its AC03 by another line of its thread.
		log = strings.Replace(log, "\nNov 27 09:00:01", "\nNov 27 09:00:00 000009 [A] 0x02 -> osm_state_mgr_process: other\nNov 27 09:00:01", 1)
		var evs []*Event
		a := NewAssembler(ref, time.UTC, func(e *Event) { evs = append(evs, e) })
		a.Unexplained = func(u *Unexplained) { t.Errorf("not explained: %+v", u) }
		if err := Read(context.Background(), strings.NewReader(log), a); err != nil {
			t.Fatal(err)
		}
		x := &Explainer{R: NewResolver(nil, a.Names)}
		if len(evs) != 3 {
			t.Fatalf("%d events: %+v", len(evs), evs)
		}
		ex := []Explanation{x.Explain(evs[0]), x.Explain(evs[1]), x.Explain(evs[2])}
		if e := evs[0]; e.Kind != KindQoSRejected || e.Fallback || e.ConfLine != 3 || e.Detail != "syntax error (line 3, column 1)" ||
			len(ex[0].Notes) != 1 || !strings.Contains(ex[0].Rule, "could not use its QoS policy file: syntax error") || ex[0].FixAt != "" ||
			!strings.HasPrefix(ex[0].Fix, "fix line 3 of its QoS policy file, then SIGHUP OpenSM") {
			t.Errorf("AC05 alone: %+v\n%+v", e, ex[0])
		}
		if e := evs[1]; e.Kind != KindQoSRejected || !e.Fallback || e.Code != "AC03" || e.Detail != "/etc/opensm/qos-policy.conf" ||
			!strings.Contains(ex[1].Rule, "could not use /etc/opensm/qos-policy.conf: the line with the error is not in the log") || len(ex[1].Notes) != 0 {
			t.Errorf("AC03 alone: %+v\n%+v", e, ex[1])
		}
		if e := evs[2]; e.Code != "AC05" || !e.Fallback || e.Line != 4 || len(e.Lines) != 2 || ex[2].FixAt != "/etc/opensm/qos-policy.conf:7" {
			t.Errorf("AC05 and AC03: %+v\n%+v", e, ex[2])
		}
	})
	t.Run("group", func(t *testing.T) {
		// ERR 0512 for several keys of one port: one problem, every key listed.
		var b strings.Builder
		for _, k := range []string{"0x0101", "0x0102", "0x0101"} {
			b.WriteString("Nov 27 09:00:00 000001 [A] 0x01 -> pkey_mgr_update_port: ERR 0512: Failed to set PKey " + k + " because Pkey table is full for node 0x0000000000000010 port 1 (X)\n")
		}
		s := NewSummary()
		a := NewAssembler(ref, time.UTC, func(e *Event) { s.Add(e) })
		if err := Read(context.Background(), strings.NewReader(b.String()), a); err != nil {
			t.Fatal(err)
		}
		if len(s.Groups) != 1 || s.Groups[0].Count != 3 || len(s.Groups[0].Keys) != 2 {
			t.Fatalf("%+v", s.Groups)
		}
		ex := (&Explainer{R: NewResolver(nil, NewNames())}).ExplainGroup(s.Groups[0])
		if !strings.Contains(ex.Rule, "partitions 0x0101, 0x0102") {
			t.Errorf("rule: %s", ex.Rule)
		}
	})
}

// TestMGIDPartition: the partition and scope an IPoIB MGID names, and whether it is
// the broadcast group.
func TestMGIDPartition(t *testing.T) {
	for mgid, want := range map[string]struct {
		key       check.PartitionKey
		scope     uint8
		broadcast bool
	}{
		"ff12:401b:8001::ffff:ffff": {0x0001, 2, true}, "ff15:601b:ffff::1": {0x7fff, 5, false}, "ff12:401b:0002::1": {0x0002, 2, false},
		"ff15:401b:8002::ffff:ffff": {0x0002, 5, true}, "ff12:601b:8001::ffff:ffff": {0x0001, 2, false}, "ff12:401b:8001::1:ffff:ffff": {0x0001, 2, false},
	} {
		if k, scope, bc, ok := ipoibMGID(mgid); !ok || k.Partition() != want.key || scope != want.scope || bc != want.broadcast {
			t.Errorf("%s: %v %d %v %v, want %+v", mgid, k, scope, bc, ok, want)
		}
	}
	for _, mgid := range []string{"ff12:a01c:8001::42", "fe80::1", "nonsense", "1.2.3.4"} {
		if _, _, _, ok := ipoibMGID(mgid); ok {
			t.Errorf("%s: a partition", mgid)
		}
	}
}

// FuzzLine: no line panics the assembler, and what it reads it explains.
func FuzzLine(f *testing.F) {
	for _, c := range handWritten {
		f.Add(c.line)
	}
	f.Add("Nov 27 09:00:00 000001 [A] 0x01 -> log_trap_info: Bad P_Key:0x8001 on SL:1 from LID1:3 QP1:0x345 to LID2:4 QP2:0x6")
	f.Add("Nov 27 09:00:00 000001 [A] 0x02 -> log_notice: Reporting Security Notice \"x\" from switch LID 2, GUID 0x1 port 3 : data_valid 0x0001, LID1 3, LID2 5, PKey 0x0002, SL 1, QP1 0x1, QP2 0x2, GID1 ::, GID2 ::")
	// Two records on one line (ERR 4505's format has no newline).
	f.Add("Nov 27 09:00:00 000001 [A] 0x01 -> mpr_rcv_get_path_parms: ERR 4505: Can't find remote phys port of Sw1 (GUID 0x1) port 4 while routing from LID 3 to LID 5Nov 27 09:00:00 000002 [A] 0x01 -> umad_receiver: ERR 5407: invalid mad agent 7 - dropping")
	// The unpath notice's too (osm_inform.c log_notice; the lab's log), and a QoS
	// policy error with the line that closes it.
	f.Add("Nov 28 18:01:26 441798 [BA7A36C0] 0x02 -> log_notice: Reporting Informational Notice \"UnPath, Path no longer valid\"nNov 28 18:01:26 468870 [BA7A36C0] 0x01 -> pr_rcv_get_path_parms: ERR 1F1E: Ports 0x0002c90300000221 (HcaC) and 0x0002c90300000231 (HcaD) do not share PKeys defined by QoS level \"QC\"")
	f.Add("Nov 28 18:01:25 892648 [B879F6C0] 0x01 -> yyerror: ERR AC05: Syntax error (line 24:6): syntax error\nNov 28 18:01:25 892679 [B879F6C0] 0x01 -> osm_qos_parse_policy_file: ERR AC03: Failed parsing QoS policy file (/etc/opensm/qos-policy.conf)")
	f.Fuzz(func(t *testing.T, s string) {
		x := &Explainer{R: NewResolver(nil, NewNames())}
		a := NewAssembler(time.Now(), time.UTC, func(e *Event) { x.Explain(e) })
		for _, l := range strings.Split(s, "\n") {
			a.Line([]byte(l))
		}
		a.Flush()
	})
}

// unexplainedCases are TestUnexplained's lines: whether each is named not explained,
// and, for one written in another wording on purpose, why (TestWordingFromSource
// checks the others against OpenSM's source).
var unexplainedCases = []struct {
	line    string
	named   bool
	wording string
}{
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> osm_pkey_rcv_process: ERR 4807: Got invalid port number 9", true, ""},                                                                                                                                                   // osm_pkey_rcv.c
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> get_pkey_table: ERR 0F12: Failure initiating PKeyTable request (IB_TIMEOUT)", true, ""},                                                                                                                                 // osm_port_info_rcv.c
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> osm_smir_rcv_process: ERR 2805: Cannot get SMInfo record due to pkey violation", true, ""},                                                                                                                              // osm_sa_sminfo_record.c
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> validate_redir_pkey: ERR 541F: Failed to obtain P_Key 0x7fff block and index for PerfMgr port", true, ""},                                                                                                               // osm_perfmgr.c
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> pr_rcv_get_path_parms: ERR 1F1A: Ports 0x2 and 0x3 share no P_Key", true, "another wording"},                                                                                                                            // another wording
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> log_trap_info: Received Generic Notice type:2 num:257 from LID 4", true, "another wording"},                                                                                                                             // another wording
	{"Nov 28 10:00:00 000001 [AB12] 0x02 -> log_notice: Reporting Security Notice \"Bad P_Key\" from LID 4", true, "another wording"},                                                                                                                               // another wording
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> mcmr_rcv_join_mgrp: ERR 1B10: Failed to create multicast group because Join State != FullMember | SendOnlyFullMember - required for create, MGID: ff12:a01b::1 from port 0x0002c90300000211 (HcaB)", true, ""},          // osm_sa_mcmember_record.c
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> sm_mad_ctrl_send_err_cb: ERR 3120: Timeout while getting attribute 0x15 (PortInfo); Possible mis-set mkey?", false, ""},                                                                                                 // osm_sm_mad_ctrl.c: a get-timeout event (TestLabGetTimeout)
	{"Nov 28 10:00:00 000001 [AB12] 0x04 -> mpr_rcv_get_gids: ERR 451B: DGID 0xfe80000000000000 is multicast or non local subnet prefix", false, ""},                                                                                                                // osm_sa_multipath_record.c, verbose
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> mcmr_rcv_join_mgrp: ERR 1B11: Port 0x0002c90300000211 (HcaB) failed to join non-existing multicast group with MGID ff12:a01c::42, insufficient components specified for implicit create (comp_mask 0x10083)", true, ""}, // not a partition's group
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> mcast_mgr_set_mft_block: ERR 0A02: Sending multicast fwd. tbl. block 0x0 to Sw1 failed (IB_TIMEOUT)", false, ""},                                                                                                        // osm_mcast_mgr.c
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> distribute_lids_with_metis: ERR NUE20: metis partitioning failed (ret=-2)", false, ""},                                                                                                                                  // osm_ucast_nue.c
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> log_trap_info: Received Generic Notice type:1 num:128 (Link state change) Producer:2 (Switch) from LID:2 TID:0x0000000000000001", false, ""},
	{"Nov 28 10:00:00 000001 [AB12] 0x02 -> pkey_mgr_update_port: Reusing PKeyTable block index 0 pkey index 3 for pkey 0x8005 on 0x0002c90300000230 port 1 (HcaD)", false, ""},
	{"Nov 28 10:00:00 000001 [AB12] 0x04 -> osm_prtn_make_new: Duplicated partition definition: 'p1' (0x0001) prev name 'p1'.  Will use it", false, ""},
	// Messages of the key files that are not about keys (notKeys): neither, even
	// where a node's description says "pkey".
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> sa_mad_ctrl_process: ERR 1A01: Unsupported attribute 0xFF30 (UNKNOWN)", false, ""},
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> smi_rcv_process_set_request: ERR 2F04: Check legality failed. AttributeModifier:0x2 RemoteState:SM_STATE_STANDBY", false, ""},
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> smi_rcv_process_set_request: ERR 2F10: Error in SM state transition (IB_ERROR)", false, ""},
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> disable_port: ERR 3804: Port 0x2c90300000211 not found, port set failed", false, ""},
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> osm_pr_rcv_process: ERR 1F16: Cannot find requester physical port", false, ""},
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> pr_rcv_get_path_parms: ERR 1F2A: Requested SL (3) doesn't match SL calculatedby routing engine (1) [pkey-host1 port 1 <-> HcaC port 1]", false, ""},
	// And those that stay not explained: a MAD other than a Report(Notice) that got
	// no answer (the SA sends no other that wants one), a trap's
	// source not found (the trap line names the number), a join's SL against its
	// group's (partitions.conf sl=), M_Key authentication.
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> sa_mad_ctrl_send_err_callback: ERR 1A06: MAD completed in error (IB_TIMEOUT): SubnAdmGet(PathRecord), attr_mod 0x0, LID 5, TID 0x2dab001", true, ""},
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> trap_rcv_process_request: ERR 3809: Failed to find source physical port for trap", true, ""},
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> validate_other_comp_fields: ERR 1B34: SL mismatch: query 1 group 0", true, ""},
	{"Nov 28 10:00:00 000001 [AB12] 0x01 -> osm_sminfo_rcv_process: ERR 2F1B: SMInfo(SET) sender (LID 7) authentication failure.Ignoring SMInfo", true, ""},
}

// TestUnexplained: which lines no event holds are named as not explained: lines with
// a code of a source file about partitions or keys (keySources, whatever their
// words: 1B10, 1A06) but for the messages of those files notKeys passes over (the
// verbose 451B, 1A01, 2F10), error lines about P_Keys, Q_Keys, SM_Keys and
// partitions (by their words or their function's name), catalogue messages that do
// not read as their 3.3.23 format; not other files' errors, other traps or routine
// lines. The formats are OpenSM 3.3.23's (the source file is named), filled in by
// hand.
func TestUnexplained(t *testing.T) {
	for _, c := range unexplainedCases {
		var got []*Unexplained
		a := NewAssembler(time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), time.UTC, func(*Event) {})
		a.Unexplained = func(u *Unexplained) { got = append(got, u) }
		a.Line([]byte(c.line))
		a.Flush()
		if (len(got) == 1) != c.named || len(got) > 1 {
			t.Errorf("%s: %d named not explained, want %v", c.line, len(got), c.named)
		}
	}
}

// TestOtherTrapLines: the error lines osm_trap_rcv.c writes after a trap that is not
// a key's (128, 144: ERR 3809 for a source port it cannot find, 3802, 3812) are that
// trap's: neither an event nor not explained. The same 3809 after another line of
// its thread (a GSI trap logs no header) is not explained, and a key trap after is
// its event with its own 3809.
func TestOtherTrapLines(t *testing.T) {
	log := `Nov 28 10:00:00 000001 [A] 0x01 -> log_trap_info: Received Generic Notice type:1 num:128 (Link state change) Producer:2 (Switch) from LID:2 TID:0x0000000000000001
Nov 28 10:00:00 000002 [A] 0x01 -> trap_rcv_process_request: ERR 3809: Failed to find source physical port for trap
Nov 28 10:00:00 000003 [A] 0x01 -> trap_rcv_process_request: ERR 3802: Error sending response (IB_ERROR)
Nov 28 10:00:00 000004 [B] 0x01 -> log_trap_info: Received Generic Notice type:4 num:144 (Local Changes) Producer:1 (Channel Adapter) from LID:9 TID:0x0000000000000002
Nov 28 10:00:00 000005 [B] 0x01 -> trap_rcv_process_request: ERR 3809: Failed to find source physical port for trap
Nov 28 10:00:00 000006 [B] 0x01 -> trap_rcv_process_request: ERR 3812: No physical port found for trap 144: "node description update"
Nov 28 10:00:00 000007 [B] 0x01 -> mcast_mgr_set_mft_block: ERR 0A02: Sending multicast fwd. tbl. block 0x0 to Sw1 failed (IB_TIMEOUT)
Nov 28 10:00:00 000008 [B] 0x01 -> trap_rcv_process_request: ERR 3809: Failed to find source physical port for trap
Nov 28 10:00:00 000009 [A] 0x01 -> log_trap_info: Received Generic Notice type:2 num:257 (Bad P_Key) Producer:1 (Channel Adapter) from LID:4 TID:0x0000000000000003
Nov 28 10:00:00 000010 [A] 0x01 -> log_trap_info: Bad P_Key:0x8001 on SL:0 from LID1:3 QP1:0x1 to LID2:4 QP2:0x1
Nov 28 10:00:00 000011 [A] 0x01 -> trap_rcv_process_request: ERR 3809: Failed to find source physical port for trap
`
	var evs []*Event
	var unx []*Unexplained
	a := NewAssembler(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.UTC, func(e *Event) { evs = append(evs, e) })
	a.Unexplained = func(u *Unexplained) { unx = append(unx, u) }
	if err := Read(context.Background(), strings.NewReader(log), a); err != nil {
		t.Fatal(err)
	}
	if len(unx) != 1 || unx[0].Line != 8 || unx[0].Code != "3809" {
		t.Errorf("%d not explained (want line 8's 3809 only): %+v", len(unx), unx)
	}
	if len(evs) != 1 || evs[0].Kind != KindBadPKey || len(evs[0].Lines) != 3 {
		t.Errorf("%d events, want trap 257 with its 3809", len(evs))
	}
}
