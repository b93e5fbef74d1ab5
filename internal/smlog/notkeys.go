package smlog

// notKey is a message of a file about partitions or keys (keySources) that is not
// about them: a line that reads as it is neither an event nor "not explained".
type notKey struct {
	// Function logs it; Format is its OpenSM 3.3.23 format in scanf's words, each
	// conversion skipped (%*u), after "ERR XXXX: ". A line of the same code from
	// another function or in other words (another OpenSM version) stays not
	// explained.
	Function, Format string
	// Why it is not about partitions or keys, from the source.
	Why string
}

// notKeys are the messages of the key files (keySources) that no key, partition or
// trap problem can cause, by code (TestOpenSMErrorTable checks each against
// testdata/opensm-3.3.23-messages.tsv; docs/sm.md lists them). Each was read in
// OpenSM 3.3.23's source. Left out on purpose, so not explained: messages a
// partition's settings can cause (a QoS level picked by P_Key, 1F1F, 451E; a
// partition's SL, 1F24, 451F; a group's MTU, rate, SL, TClass or FlowLabel set in
// partitions.conf, 1B12, 1B26, 1B33-1B36; a group missing for want of ipoib, 1F09,
// 1F19, 1B10), checks that compare P_Keys at the debug level (1B13, 1B25, 4305,
// 2805), M_Key checks (2F1A, 2F1B), P_Key records and tables (4605, 4806, 4807),
// and the trap and notice messages (38nn but 3804, 3805, 3811, which only traps
// 129-131 reach; 0203; 1A06 but for a Report(Notice), an event).
var notKeys = map[string]notKey{
	// osm_sa_mad_ctrl.c: the SA's MAD layer.
	"1A01": {"sa_mad_ctrl_process", "Unsupported attribute 0x%*x (%*s)", "sa_mad_ctrl_process: a request for an SA attribute OpenSM does not serve"},
	"1A02": {"sa_mad_ctrl_process", "Dispatcher post message failed (%*s) for attribute 0x%*x (%*s)", "sa_mad_ctrl_process: OpenSM's dispatcher refused a request (internal)"},
	"1A05": {"sa_mad_ctrl_rcv_callback", "Unsupported method = 0x%*x", "sa_mad_ctrl_rcv_callback: an SA method OpenSM does not serve"},
	"1A07": {"sa_mad_ctrl_send_err_callback", "Dispatcher post message failed (%*s)", "sa_mad_ctrl_send_err_callback: OpenSM's dispatcher refused a send error (internal)"},
	"1A08": {"osm_sa_mad_ctrl_init", "Dispatcher registration failed", "osm_sa_mad_ctrl_init: the SA did not start (internal)"},
	"1A0A": {"osm_sa_mad_ctrl_init", "SA set dispatcher registration failed", "osm_sa_mad_ctrl_init: the SA did not start (internal)"},
	"1A09": {"osm_sa_mad_ctrl_bind", "Multiple binds not allowed", "osm_sa_mad_ctrl_bind: the SA was bound twice (internal)"},
	"1A10": {"osm_sa_mad_ctrl_bind", "Vendor specific bind failed (%*s)", "osm_sa_mad_ctrl_bind: the SA could not open its port (umad)"},
	"1A11": {"osm_sa_mad_ctrl_unbind", "No previous bind", "osm_sa_mad_ctrl_unbind: an unbind without a bind (internal)"},
	// osm_sa_informinfo.c: subscriptions. 4305 (validate_infr, whose
	// validate_ports_access_rights compares P_Keys at the debug level) is not here.
	"4301": {"validate_ports_access_rights", "Invalid port guid: 0x%*x", "validate_ports_access_rights: a subscription names a port GUID OpenSM does not know"},
	"4302": {"validate_ports_access_rights", "Given LIDs (%*u-%*u) are out of range (%*u)", "validate_ports_access_rights: a subscription's LID range is past OpenSM's LIDs"},
	"4303": {"infr_rcv_respond", "rec_item alloc failed", "infr_rcv_respond: an allocation failed"},
	"430D": {"sa_inform_info_rec_by_comp_mask", "Invalid subscriber port guid: 0x%*x", "sa_inform_info_rec_by_comp_mask: a subscription's port is gone from OpenSM's view"},
	"430E": {"sa_inform_info_rec_by_comp_mask", "rec_item alloc failed", "sa_inform_info_rec_by_comp_mask: an allocation failed"},
	"4309": {"infr_rcv_process_get_method", "Cannot find requester physical port", "infr_rcv_process_get_method: the requester's port is not in OpenSM's view (not swept yet, or gone)"},
	"4308": {"infr_rcv_process_set_method", "Subscribe Request from unknown LID: %*u", "infr_rcv_process_set_method: the requester's LID is not in OpenSM's view"},
	"430A": {"infr_rcv_process_set_method", "Invalid subscribe: %*d", "infr_rcv_process_set_method: a Subscribe field other than 0 or 1"},
	"4306": {"infr_rcv_process_set_method", "Failed to create a new inform object", "infr_rcv_process_set_method: an allocation failed"},
	"4307": {"infr_rcv_process_set_method", "Failed to UnSubscribe to non existing inform object", "infr_rcv_process_set_method: an unsubscribe from a subscription OpenSM does not hold"},
	// osm_sa_mcmember_record.c: joins. The P_Key, Q_Key and group-field checks
	// are events or not explained.
	"1B16": {"mcmr_rcv_respond", "rec_item alloc failed", "mcmr_rcv_respond: an allocation failed"},
	"1B01": {"validate_requested_mgid", "Invalid prefix 0x%*x in requested MGID, must be 0xFF", "validate_requested_mgid: the request's MGID is not a multicast GID"},
	"1B28": {"validate_requested_mgid", "Requested MGID invalid, uses Reserved Flags: flags=0x%*x", "validate_requested_mgid: the request's MGID sets reserved flags"},
	"1B24": {"validate_requested_mgid", "Requested MGID invalid, uses 0xA01B signature but with link-local scope", "validate_requested_mgid: an SA-assigned MGID signature with link-local scope"},
	"1B23": {"mcmr_rcv_create_new_mgrp", "cannot allocate unique MGID value", "mcmr_rcv_create_new_mgrp: no unique MGID left to assign"},
	"1B19": {"mcmr_rcv_create_new_mgrp", "get_new_mlid failed request mlid 0x%*x", "mcmr_rcv_create_new_mgrp: get_new_mlid found no free multicast LID"},
	"1B08": {"mcmr_rcv_create_new_mgrp", "osm_mgrp_new failed", "mcmr_rcv_create_new_mgrp: an allocation failed"},
	"1B41": {"mcmr_rcv_leave_mgrp", "PortGID subnet prefix 0x%*x does not match configured prefix 0x%*x", "mcmr_rcv_leave_mgrp: the request's PortGID is of another subnet prefix"},
	"1B02": {"mcmr_rcv_leave_mgrp", "Cannot find requester physical port", "mcmr_rcv_leave_mgrp: the requester's port is not in OpenSM's view (not swept yet, or gone)"},
	"1B40": {"mcmr_rcv_join_mgrp", "PortGID subnet prefix 0x%*x does not match configured prefix 0x%*x", "mcmr_rcv_join_mgrp: the request's PortGID is of another subnet prefix"},
	"1B03": {"mcmr_rcv_join_mgrp", "Cannot find requester physical port", "mcmr_rcv_join_mgrp: the requester's port is not in OpenSM's view (not swept yet, or gone)"},
	"1B06": {"mcmr_rcv_join_mgrp", "osm_mgrp_add_port failed", "mcmr_rcv_join_mgrp: osm_mgrp_add_port's allocation failed (NO_RESOURCES)"},
	"1B15": {"mcmr_rcv_new_mcmr", "rec_item alloc failed", "mcmr_rcv_new_mcmr: an allocation failed"},
	"1B04": {"mcmr_query_mgrp", "Cannot find requester physical port", "mcmr_query_mgrp: the requester's port is not in OpenSM's view (not swept yet, or gone)"},
	"1B18": {"osm_mcmr_rcv_process", "component mask = 0x%*x, expected comp mask = 0x%*x, MGID: %*s for PortGID: %*s", "osm_mcmr_rcv_process: a join without the components a join needs"},
	"1B20": {"osm_mcmr_rcv_process", "component mask = 0x%*x, expected comp mask = 0x%*x", "osm_mcmr_rcv_process: a leave without the components a leave needs"},
	"1B21": {"osm_mcmr_rcv_process", "Unsupported Method (%*s) for MCMemberRecord request", "osm_mcmr_rcv_process: a method OpenSM does not serve"},
	// osm_sa_multipath_record.c; its routing refusals are events (path-no-route).
	"4501": {"mpr_rcv_get_lid_pair_path", "Unable to allocate path record", "mpr_rcv_get_lid_pair_path: an allocation failed"},
	"451B": {"mpr_rcv_get_gids", "%*sGID 0x%*x is multicast or non local subnet prefix", "mpr_rcv_get_gids: the request names a GID of another subnet, or a multicast source"},
	"4506": {"mpr_rcv_get_gids", "No port with GUID 0x%*x", "mpr_rcv_get_gids: the request names a GUID OpenSM does not know"},
	"4510": {"osm_mpr_rcv_process", "Invalid request since RMPP_FLAG_ACTIVE is not set", "osm_mpr_rcv_process: a MultiPathRecord request not sent with RMPP"},
	"4513": {"osm_mpr_rcv_process", "Unsupported Method (%*s) for MultiPathRecord request", "osm_mpr_rcv_process: a method OpenSM does not serve"},
	"4517": {"osm_mpr_rcv_process", "Cannot find requester physical port", "osm_mpr_rcv_process: the requester's port is not in OpenSM's view (not swept yet, or gone)"},
	"4512": {"osm_mpr_rcv_process", "mpr_rcv_get_end_points failed, # GIDs found; src %*d; dest %*d)", "osm_mpr_rcv_process: the request names no source or no destination GID"},
	// osm_sa_path_record.c; its routing refusals are events (path-no-route).
	"1F2A": {"pr_rcv_get_path_parms", "Requested SL (%*u) doesn't match SL calculatedby routing engine (%*u) [%*s port %*d <-> %*s port %*d]", "pr_rcv_get_path_parms: the request's SL is not the one the routing engine gives (path_sl)"},
	"1F01": {"pr_rcv_get_lid_pair_path", "Unable to allocate path record", "pr_rcv_get_lid_pair_path: an allocation failed"},
	"1F18": {"pr_process_multicast", "Unable to allocate path record for MC group", "pr_process_multicast: an allocation failed"},
	"1F17": {"osm_pr_rcv_process", "Unsupported Method (%*s) for PathRecord request", "osm_pr_rcv_process: a method OpenSM does not serve"},
	"1F16": {"osm_pr_rcv_process", "Cannot find requester physical port", "osm_pr_rcv_process: the requester's port is not in OpenSM's view (not swept yet, or gone)"},
	// osm_sa_pkey_record.c: the requests; the SM_Key check is an event, and 4605
	// ("Unsupported Method (%s) for PKeyRecord request") names the P_Key record.
	"4602": {"sa_pkey_create", "rec_item alloc failed", "sa_pkey_create: an allocation failed"},
	"4603": {"sa_pkey_by_comp_mask", "Given Physical Port Number: 0x%*x is out of range should be < 0x%*x", "sa_pkey_by_comp_mask: the request names a port number the node does not have"},
	"4604": {"osm_pkey_rec_rcv_process", "Cannot find requester physical port", "osm_pkey_rec_rcv_process: the requester's port is not in OpenSM's view (not swept yet, or gone)"},
	"460B": {"osm_pkey_rec_rcv_process", "No port found with LID %*u", "osm_pkey_rec_rcv_process: the request names a LID OpenSM does not know"},
	// osm_sa_sminfo_record.c; its pkey check, 2805, is not here.
	"2801": {"smir_rcv_new_smir", "rec_item alloc failed", "smir_rcv_new_smir: an allocation failed"},
	"2810": {"sa_smir_by_comp_mask", "No port for remote sm", "sa_smir_by_comp_mask: a remote SM's port is gone from OpenSM's view"},
	"2804": {"osm_smir_rcv_process", "Unsupported Method (%*s) for SMInfoRecord request", "osm_smir_rcv_process: a method OpenSM does not serve"},
	"2803": {"osm_smir_rcv_process", "Cannot find requester physical port", "osm_smir_rcv_process: the requester's port is not in OpenSM's view (not swept yet, or gone)"},
	"2806": {"osm_smir_rcv_process", "No port found with LID %*u", "osm_smir_rcv_process: the request names a LID OpenSM does not know"},
	"2809": {"osm_smir_rcv_process", "No port found with GUID 0x%*x", "osm_smir_rcv_process: OpenSM's own port is not in its view (internal)"},
	"280A": {"osm_smir_rcv_process", "No remote SM for GUID 0x%*x", "osm_smir_rcv_process: the request names a port that runs no SM OpenSM knows"},
	// osm_sminfo_rcv.c: the SM election and handover. Its sm_key check is an event
	// (2F18); its M_Key checks (2F1A, 2F1B) are not here.
	"2F02": {"smi_rcv_process_get_request", "Error sending SMInfo response (%*s)", "smi_rcv_process_get_request: an SMInfo response was not sent"},
	"2F03": {"smi_rcv_process_set_request", "Unsupported set method 0x%*x", "smi_rcv_process_set_request: an SMInfo method OpenSM does not serve"},
	"2F04": {"smi_rcv_process_set_request", "Check legality failed. AttributeModifier:0x%*x RemoteState:%*s", "smi_rcv_process_set_request: smi_rcv_check_set_req_legality, a handover signal from an SM in the wrong state (it checks no SM_Key)"},
	"2F05": {"smi_rcv_process_set_request", "Error sending SMInfo response (%*s)", "smi_rcv_process_set_request: an SMInfo response was not sent"},
	"2F06": {"smi_rcv_process_set_request", "THIS CODE SHOULD NOT BE REACHED!!", "smi_rcv_process_set_request: an SMInfo attribute modifier past the legality check (internal)"},
	"2F07": {"smi_rcv_process_set_request", "Failed check of legality of needed SM transition. AttributeModifier:0x%*x RemoteState:%*s", "smi_rcv_process_set_request: osm_sm_state_mgr_check_legality, an SM state change not allowed from this state"},
	"2F08": {"smi_rcv_process_set_request", "Error sending SMInfo response (%*s)", "smi_rcv_process_set_request: an SMInfo response was not sent"},
	"2F09": {"smi_rcv_process_set_request", "Error sending SMInfo response (%*s)", "smi_rcv_process_set_request: an SMInfo response was not sent"},
	"2F10": {"smi_rcv_process_set_request", "Error in SM state transition (%*s)", "smi_rcv_process_set_request: osm_sm_state_mgr_process, an SM state change failed"},
	"2F11": {"smi_rcv_process_get_response", "Unsupported response method 0x%*x", "smi_rcv_process_get_response: an SMInfo response method OpenSM does not take"},
	"2F12": {"smi_rcv_process_get_response", "No port object for this SM", "smi_rcv_process_get_response: another SM's port is not in OpenSM's view"},
	"2F13": {"smi_rcv_process_get_response", "Bogus SM port GUID, Expected 0x%*x, Received 0x%*x", "smi_rcv_process_get_response: another SM's SMInfo names another port's GUID"},
	"2F14": {"smi_rcv_process_get_response", "Unable to allocate SM object", "smi_rcv_process_get_response: an allocation failed"},
	"2F16": {"smi_rcv_process_set_response", "Unsupported response method 0x%*x", "smi_rcv_process_set_response: an SMInfo response method OpenSM does not take"},
	"2F17": {"smi_rcv_process_set_response", "Unsupported attribute modifier 0x%*x, expected ATTR_MOD_HANDOVER", "smi_rcv_process_set_response: a response to a handover with another modifier"},
	"2F19": {"osm_sminfo_rcv_process", "Unexpected SM port GUID in response, Expected 0x%*x, Received 0x%*x", "osm_sminfo_rcv_process: an SMInfo response from another port than asked (a port moved)"},
	// osm_trap_rcv.c: disable_port and shutup_noisy_port run only for a noisy trap
	// 129, 130 or 131 (link integrity, buffer overrun, watchdog: a link's errors),
	// with babbling_port_policy for disable_port.
	"3804": {"disable_port", "Port 0x%*x not found, port set failed", "disable_port: a noisy link-error port (trap 129-131) to disable is not in OpenSM's view"},
	"3805": {"shutup_noisy_port", "Failed to find physical port by lid:%*u num:%*u", "shutup_noisy_port: a noisy link-error port (trap 129-131) is not in OpenSM's view"},
	"3811": {"shutup_noisy_port", "Failed to disable noisy physical port 0x%*x: lid %*u, num %*u", "shutup_noisy_port: disabling a noisy link-error port (trap 129-131) failed"},
}
