package cmdutil

import (
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// SanitizeText is textsafe.String, the one sanitiser: everything a terminal would act
// on (C0/C1 controls, DEL, bytes that are not UTF-8, bidirectional overrides and other
// format characters) written as a visible escape. It is idempotent, so text that was
// already sanitised where it entered the model (sysfs, NodeDescription, fabric files)
// comes through unchanged. infiniband-diags' clean_nodedesc (rdma-core
// util/node_name_map.c) blanks the same characters; an escape shows what was there.
func SanitizeText(s string) string { return textsafe.String(s) }

// SanitizeFabric passes every node description of f through SanitizeText, so the
// labels, findings and tables made from it are safe to print (a sweep run now, or a
// node name map's names).
func SanitizeFabric(f *fabric.Fabric) {
	if f == nil {
		return
	}
	for _, n := range f.Nodes {
		n.Description = SanitizeText(n.Description)
	}
}
