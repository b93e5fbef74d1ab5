// Package manpage finishes the man pages cobra/doc generates, so they read like the
// pages of the tools ibkey sits beside (smpquery(8), rdma(8)): each page titled with its
// own name, lines filled without justification (groff's "cannot adjust line" warnings
// came from long JSON schemas), break points inside those schemas instead of
// hyphens, and the EXIT STATUS, ENVIRONMENT, FILES and SEE ALSO sections man-pages(7)
// lists for a command's page.
//
// It is used only when generating the pages (cmd/ibkey's gendocs test); the shipped
// binary does not import it.
package manpage

import (
	"bytes"
	"strings"
)

// environment is the ENVIRONMENT section shared by every page.
const environment = `.TP
\fBIBKEY_SYSFS\fP
The sysfs root to read instead of /sys (as --sysfs).
.TP
\fBIBKEY_DEMO\fP
Set to 1 to use the embedded demo host (as --demo).
.TP
\fBIBKEY_IBSIM\fP
Send MADs through the ibsim simulator with this socket base name (as --ibsim BASE).
.TP
\fBIBSIM_SOCKNAME\fP
The simulator's socket base name when --ibsim is given without one (default sim), as ibsim and its LD_PRELOAD shim read it.
.TP
\fBNO_COLOR\fP
Any value turns colour off (as --no-color; see \%https://no\-color.org).
`

// files is the FILES section shared by every page.
const files = `.TP
\fI/sys/class/infiniband/\fP
The ports, P_Key tables, GIDs and counters of the local devices (Documentation/ABI/stable/sysfs-class-infiniband in the kernel).
.TP
\fI/sys/class/net/\fP
IPoIB interfaces and the P_Keys they run with.
.TP
\fI/dev/infiniband/umad*\fP
MAD access to the fabric (SMPs and PMA queries; needs read-write access, usually root).
.TP
\fI/dev/infiniband/uverbs*\fP
Port counters through verbs (ibv_query_port), readable by every user.
.TP
\fI/etc/opensm/partitions.conf\fP
OpenSM's partition configuration, read by partitions and fabric check --partitions.
`

// seeAlso are the related tools every page points to, after ibkey's own pages, as man
// pages reference each other.
const seeAlso = `\fBsmpquery\fP(8), \fBperfquery\fP(8), \fBibnetdiscover\fP(8), \fBopensm\fP(8), \fBrdma\fP(8), \fBibv_devinfo\fP(1)`

// Fix returns page (cobra/doc's output for the page named name, "ibkey-pkeys.1")
// finished as the package comment says; exitStatus is the EXIT STATUS section's troff
// (cmd/ibkey's one exit-code table, which this package cannot import).
func Fix(name string, page []byte, exitStatus string) []byte {
	title := strings.ToUpper(strings.TrimSuffix(name, ".1"))
	lines := strings.Split(string(page), "\n")
	var out []string
	sawSeeAlso := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, ".TH "):
			// .TH "IBKEY" "1" ...: each page carries its own title; no justification
			// (ragged right, as most section 1 pages render at 80 columns) and no hyphens
			// inside JSON field names.
			l = strings.Replace(l, `"IBKEY"`, `"`+title+`"`, 1)
			out = append(out, l, ".ad l", ".nh") // .TH resets hyphenation: turn it off again
			continue
		case l == ".SH SEE ALSO":
			out = append(out, ".SH EXIT STATUS", strings.TrimSuffix(exitStatus, "\n"),
				"", ".SH ENVIRONMENT", strings.TrimSuffix(environment, "\n"),
				"", ".SH FILES", strings.TrimSuffix(files, "\n"), "")
			sawSeeAlso = true
		case sawSeeAlso && strings.HasPrefix(l, `\fB`):
			// The last line of cobra's SEE ALSO list: add the related tools after it.
		case !strings.HasPrefix(l, "."):
			l = breakable(l)
		}
		out = append(out, l)
	}
	s := strings.Join(out, "\n")
	if sawSeeAlso {
		s = strings.TrimRight(s, "\n") + ", " + seeAlso + "\n"
	}
	return []byte(s)
}

// breakable adds troff's zero-width break point (\:) after the commas and colons of
// a word longer than a short line, so a JSON schema wraps between fields instead of
// overflowing or being hyphenated inside a field name.
func breakable(l string) string {
	words := strings.Split(l, " ")
	for i, w := range words {
		if len(w) < 24 {
			continue
		}
		var b bytes.Buffer
		for j := 0; j < len(w); j++ {
			b.WriteByte(w[j])
			if (w[j] == ',' || w[j] == ':' || w[j] == '/') && j+1 < len(w) {
				b.WriteString(`\:`)
			}
		}
		words[i] = b.String()
	}
	return strings.Join(words, " ")
}
