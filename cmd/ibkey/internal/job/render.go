package job

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"strconv"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/job"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// report is the JSON document and what the text renderers print.
type report struct {
	Schema       cmdutil.SchemaVersion `json:"schema_version"`
	Demo         bool                  `json:"demo,omitempty"`
	Via          string                `json:"via,omitempty"`
	Mode         string                `json:"mode"`
	Partition    string                `json:"partition,omitempty"`
	Hosts        int                   `json:"hosts"`
	PeersChecked bool                  `json:"peers_checked"`
	Libraries    []libReport           `json:"libraries"`
	Reach        []reachEntry          `json:"reach,omitempty"`
	// LeftOut: this machine's devices no library here can open (job.HostPorts).
	LeftOut []job.LeftOut `json:"left_out,omitempty"`
	// Incomplete: what was not read or checked, on exit 4 and beside a definite no
	// (exit 1); never on exit 0.
	Incomplete []cmdutil.Incomplete `json:"incomplete,omitempty"`
}

type libReport struct {
	Library  string       `json:"library"`
	Name     string       `json:"name"`
	Kind     string       `json:"kind"`
	Version  string       `json:"version,omitempty"`
	Setting  string       `json:"setting,omitempty"`
	Verdict  job.Verdict  `json:"verdict"`
	Inactive string       `json:"inactive,omitempty"`
	Same     string       `json:"same,omitempty"`
	Ports    []portReport `json:"ports"`
	// Aborts are the hosts where the library stops the process at start-up.
	Aborts      []job.Abort `json:"aborts,omitempty"`
	Findings    []string    `json:"findings"`
	Fixes       []string    `json:"fixes"`
	Unchecked   []string    `json:"unchecked"`
	Notes       []string    `json:"notes"`
	Assumptions []string    `json:"assumptions"`
	Source      string      `json:"source"`
}

type portReport struct {
	// Host is the job's host the port is on; "" (not written) for the local host.
	Host string `json:"host,omitempty"`
	// Device and Port name the port (over a sweep Device is the node description);
	// Name is DEV/PORT for the text.
	Device     string      `json:"device"`
	Port       int         `json:"port"`
	Name       string      `json:"-"`
	Used       bool        `json:"used"`
	Why        string      `json:"why,omitempty"`
	Outcome    job.Outcome `json:"outcome,omitempty"`
	Index      *int        `json:"index"`
	PKey       string      `json:"pkey,omitempty"`
	Membership string      `json:"membership,omitempty"`
	Setting    string      `json:"setting,omitempty"`
	Problem    string      `json:"problem,omitempty"`
	// key is the entry's P_Key that PKey shows (0 when none).
	key check.PKey
}

type reachEntry struct {
	Partition string `json:"partition"`
	Full      int    `json:"full"`
	Limited   int    `json:"limited"`
}

// newReport is the document of Resolve's results (key 0) or WantPartition's for key.
func newReport(rs []*job.Result, key check.PKey) report {
	rep := report{Mode: "resolve"}
	if key != 0 {
		rep.Mode, rep.Partition = "want", key.Partition().String()
	}
	for _, r := range rs {
		lr := libReport{Library: r.Library.ID, Name: r.Library.Name, Kind: r.Library.Kind.String(), Version: r.Version, Setting: r.Setting,
			Verdict: r.Verdict, Inactive: r.Inactive, Same: r.Same, Findings: cmdutil.List(r.Findings), Fixes: cmdutil.List(r.Fixes),
			Unchecked: cmdutil.List(r.Unchecked), Notes: cmdutil.List(r.Notes), Assumptions: cmdutil.List(r.Assumptions), Source: r.Library.Source,
			Aborts: r.Aborts, Ports: []portReport{}}
		for _, pr := range r.Ports {
			p := portReport{Host: pr.Port.Host, Device: pr.Port.Device, Port: pr.Port.Num, Name: pr.Port.Device + "/" + strconv.Itoa(pr.Port.Num),
				Used: pr.Used, Why: pr.Why, Setting: pr.Setting}
			if pr.Used { // what the library does there
				p.Outcome, p.Problem = pr.Outcome, pr.Problem
				if pr.Index >= 0 {
					p.Index = new(pr.Index)
				}
				if pr.Outcome == job.Uses || pr.Outcome == job.EmptyEntry {
					p.PKey, p.key = pr.PKey.String(), pr.PKey
					if pr.PKey.Valid() {
						p.Membership = pr.PKey.Membership().String()
					}
				}
			}
			lr.Ports = append(lr.Ports, p)
		}
		rep.Libraries = append(rep.Libraries, lr)
	}
	return rep
}

// addReach says, for each partition the libraries use, how many end ports of the
// sweep are full and limited members of it.
func (r *report) addReach(f *fabric.Fabric) {
	seen := map[string]bool{}
	for _, l := range r.Libraries {
		for _, p := range l.Ports {
			k := p.key
			if !k.Valid() || seen[k.Partition().String()] {
				continue
			}
			seen[k.Partition().String()] = true
			full, limited := job.Reach(f, k)
			r.Reach = append(r.Reach, reachEntry{Partition: k.Partition().String(), Full: full, Limited: limited})
		}
	}
}

func (r *report) exitCode() int {
	code := 0
	for _, l := range r.Libraries {
		switch l.Verdict {
		case job.DoesNotWork:
			return cmdutil.ExitNo
		case job.Incomplete:
			code = cmdutil.ExitIncomplete
		}
	}
	return code
}

func (r *report) unchecked() []string {
	var out []string
	for _, l := range r.Libraries {
		for _, u := range l.Unchecked {
			out = append(out, l.Name+": "+u)
		}
	}
	return out
}

func (r *report) assumptions() []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range r.Libraries {
		for _, a := range l.Assumptions {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}

func (r *report) render(w io.Writer, f cmdutil.Format) error {
	if f == cmdutil.FormatJSON {
		return cmdutil.WriteJSON(w, r)
	}
	header := []string{"LIBRARY", "HOST", "PORT", "USED", "INDEX", "PKEY", "MEMBER", "OUTCOME"}
	if r.Mode == "want" {
		header = []string{"LIBRARY", "HOST", "PORT", "SETTING", "INDEX", "PKEY", "MEMBER", "OUTCOME"}
	}
	// At a terminal's width a table leaves out, to fit, MEMBER first (the P_Key's
	// high bit says it), then INDEX (the setting or the P_Key names the entry); HOST
	// first of all when every row is this host's. -o plain keeps every column.
	g := cmdutil.Grid{Header: header, Required: []string{"LIBRARY", "HOST", "PORT", "OUTCOME"}, Optional: [][]string{{"MEMBER"}, {"INDEX"}}}
	local := true
	for _, l := range r.Libraries {
		if l.Inactive != "" {
			continue
		}
		for _, p := range l.Ports {
			host := cmp.Or(p.Host, "local")
			idx := ""
			if p.Index != nil {
				idx = strconv.Itoa(*p.Index)
			}
			out, second := "", "no"
			if p.Used {
				out, second = p.Outcome.String(), "yes"
			}
			if r.Mode == "want" {
				second = p.Setting
			}
			local = local && p.Host == ""
			g.Add(l.Library, host, p.Name, second, idx, p.PKey, p.Membership, out)
		}
		// A host where the library aborts: one row, whatever its ports (an abort on
		// a port's lookup is that port's row).
		for _, a := range l.Aborts {
			if a.Port != 0 {
				continue
			}
			host, dev := cmp.Or(a.Host, "local"), cmp.Or(a.Device, "-")
			local = local && a.Host == ""
			g.Add(l.Library, host, dev, "-", "", "", "", "aborts")
		}
	}
	if local {
		g.Required, g.Optional = []string{"LIBRARY", "PORT", "OUTCOME"}, append([][]string{{"HOST"}}, g.Optional...)
	}
	// The grid goes to w itself: a table fits w's width, and rows that cannot fit
	// even so are plain records, never wrapped (through a buffer they were wrapped
	// as prose, two lines a row at 80 columns).
	if err := g.Render(w, f); err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString("\n")
	for _, l := range r.Libraries {
		r.writeVerdict(&b, l)
	}
	for _, re := range r.Reach {
		fmt.Fprintf(&b, "partition %s in the sweep: %d end ports full members, %d limited\n", re.Partition, re.Full, re.Limited)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func (r *report) writeVerdict(b *bytes.Buffer, l libReport) {
	word := map[job.Verdict]string{job.Works: "works", job.DoesNotWork: "DOES NOT WORK", job.Incomplete: "NOT CHECKED", job.NotApplicable: "not applicable"}[l.Verdict]
	if l.Verdict == job.Works && !r.PeersChecked && r.Mode == "resolve" {
		word = "uses a valid entry (this host only)"
	}
	if l.Verdict == job.Works && r.Mode == "want" && l.Same == "" {
		word = "works with a value per port"
	}
	what := cmp.Or(l.Inactive, l.Setting)
	if r.Mode == "want" && l.Verdict != job.NotApplicable {
		what = "for partition " + r.Partition + ": " + l.Setting
	}
	// A setting quotes the user's value as given (NCCL_IB_PKEY=<ESC>[31m...):
	// textsafe shows its control and bidi characters escaped, never raw.
	line := func(format string, a ...any) { b.WriteString(textsafe.Text(fmt.Sprintf(format, a...)) + "\n") }
	line("%s: %s: %s", l.Name, word, what)
	for _, part := range []struct {
		label string
		lines []string
	}{{"problem", l.Findings}, {"fix", l.Fixes}, {"not checked", l.Unchecked}, {"note", l.Notes}} {
		for _, s := range part.lines {
			line("  %s: %s", part.label, s)
		}
	}
}
