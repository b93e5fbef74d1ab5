package partconf

import (
	"slices"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

// AuditFabric is the one audit of a sweep, `ibkey fabric check`'s and the exporter's:
// the fabric rules under what osm says about OpenSM (nil: OpenSM's defaults), and with
// conf (nil: none) the comparison with the tables OpenSM programs from it
// (CompareFabric; osm's options win over allowBoth, OpenSMConf.Options) and the GUIDs
// it names that the fabric lacks (UnknownGUIDs). With conf, what index 0 of a port
// should hold is known (the default partition, or an indx0 one), and the comparison
// says whether OpenSM will change it (partitions-index-moved): the audit's guess,
// default-not-at-index-0, goes for the ports the file models. The result's Findings
// are all of them, unsorted; model is the one compared with (nil without conf).
func AuditFabric(f *fabric.Fabric, conf *Config, osm *OpenSMConf, allowBoth bool) (res fabric.AuditResult, model *Model) {
	var opt fabric.AuditOptions
	if osm != nil {
		opt.PartEnforce = osm.PartEnforce
	}
	res = fabric.AuditFabric(f, opt)
	if conf == nil {
		return res, nil
	}
	base := Options{AllowBoth: allowBoth}
	if osm != nil {
		model = osm.FabricModel(conf, f, base)
	} else {
		model = NewFabricModel(conf, f, base)
	}
	res.Findings = slices.DeleteFunc(res.Findings, func(fd check.Finding) bool {
		if fd.Rule != fabric.RuleDefaultNotIndex0 || len(fd.Ports) != 1 {
			return false
		}
		p := f.Port(fd.Ports[0].PortID)
		return p != nil && p.GUID != 0
	})
	res.Findings = append(res.Findings, CompareFabric(f, model)...)
	res.Findings = append(res.Findings, UnknownGUIDs(conf, f)...)
	return res, model
}

// AuditRule is one rule of AuditFabric with the severity of its findings.
type AuditRule struct {
	Rule     string
	Severity check.Severity
}

// AuditRules are the rules AuditFabric can report, the fabric's first; with
// partitions (a conf given) also the comparison's. It is the one list: `fabric check
// --ignore` accepts these (and its SA rules), and the exporter exports each at 0 when
// nothing was found, so an alert on it has a series to look at.
func AuditRules(partitions bool) []AuditRule {
	rules := []AuditRule{
		{fabric.RuleHCAKeyNotOnSwitch, check.SeverityError}, {fabric.RuleSwitchKeyNotOnHCA, check.SeverityWarning},
		{fabric.RuleLimitedOnly, check.SeverityWarning}, {fabric.RuleEnforcementOff, check.SeverityWarning},
		{fabric.RuleTableFull, check.SeverityWarning}, {fabric.RulePortNotActive, check.SeverityWarning},
		{fabric.RuleNotRead, check.SeverityWarning}, {fabric.RuleSweepIncomplete, check.SeverityWarning},
		{fabric.RuleDefaultNotIndex0, check.SeverityWarning}, {fabric.RuleEnforcingBetweenSwitches, check.SeverityWarning},
	}
	if partitions {
		rules = append(rules,
			AuditRule{RuleIndexMoved, check.SeverityWarning}, AuditRule{RuleNextPass, check.SeverityWarning},
			AuditRule{RuleGUIDNotInFabric, check.SeverityWarning},
			AuditRule{RuleMissingKey, check.SeverityError}, AuditRule{RuleExtraKey, check.SeverityError},
			AuditRule{RuleWrongMembership, check.SeverityError}, AuditRule{RuleTableOverflow, check.SeverityError},
			AuditRule{RuleFileRejected, check.SeverityError})
	}
	return rules
}
