package mad

import (
	"strconv"
	"strings"
)

// FormatDRPath prints a directed route as infiniband-diags does (ibnetdiscover,
// smpquery -D): "0" for the local node, "0,1,3" out through port 1, then port 3. It is
// ibkey's one directed-route formatter: Address.String, the fabric file's "dr_path" and
// the lab's topologies use it.
func FormatDRPath(path []uint8) string {
	var b strings.Builder
	b.WriteString("0")
	for _, p := range path {
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(int(p)))
	}
	return b.String()
}
