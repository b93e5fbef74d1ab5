package job

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// UCX's configuration files (ucx.conf), read as openucx/ucx src/ucs/config/parser.c
// reads them (checked with Debian 12's UCX 1.13.1, ucx_info -c):
//
//   - ucs_config_parse_config_files (UCX 1.12.0 and later, ucx 125542b14f) reads, in
//     order, UCX_CONFIG_DIR/ucx.conf (the directory compiled in: configure's
//     ${sysconfdir}/ucx, /etc/ucx in Debian's package, which ships no file), the
//     library's LIBDIR/../etc/ucx.conf (LIBDIR: where libucs is;
//     ../etc/ucx/ucx.conf from 1.17.0, ucx 2e8b1695d4), $HOME/ucx.conf, the
//     environment's $UCX_CONFIG_DIR/ucx.conf and ./ucx.conf, the process's working
//     directory. A file fopen cannot open is skipped without a word (ucs_debug);
//     each line replaces what an earlier one, in this file or an earlier one, set
//     (override 1).
//   - UCX 1.11 (9a090b9858) reads only UCX_CONF_DIR/ucx.conf (the same directory),
//     with override 0: a name's first line wins, a second is an error ("found
//     duplicate"). UCX before 1.11 reads no file.
//   - The environment beats every file: ucs_config_apply_config_vars takes getenv's
//     value, and a file's only for a name getenv does not find. The file's value
//     is then parsed as the environment's would be (ucs_config_parser_parse_field).
//   - The names are the variables' full names (UCX_IB_PKEY), compared exactly (a
//     khash of strings); sections are ignored, except that from UCX 1.17.0
//     (04cff00ba9) a line "CPU vendor", "CPU model" or "Product name" = pattern
//     leaves out the rest of its section where the host's CPU or DMI product name
//     does not match (fnmatch): ucxFilters.
//   - A file that does not parse (ucxINI's error) is warned about ("failed to parse
//     config file") and what it set is kept; Debian's 1.13.1 shows no warning
//     (ucx_info -c, even with UCX_LOG_LEVEL=info), only the values.
//   - The files are read once per process (UCS_INIT_ONCE), at its first
//     configuration read.

// UCXValue is one `name = value` line of a ucx.conf file.
type UCXValue struct {
	Value, File string
	Line        int
}

// UCXFiles are UCX's configuration files as read for a job's environment.
type UCXFiles struct {
	// Values are what the files set as UCX 1.12.0 and later read them (a name's
	// last line in the last file setting it); Early as UCX 1.11 reads them (a
	// name's first line in the configuration directory's file, the one it reads).
	Values, Early map[string]UCXValue
	// Filtered are the names set after a section's CPU or product filter line
	// (UCX 1.17.0 and later apply them only on a matching host), with the filter.
	Filtered map[string]string
	// fileReads are the files read, not there (UCX skips them too), not located and
	// not read; Errors the lines UCX's parser does not accept.
	fileReads
	Errors []string
}

// ucxConfigDir is Debian's and Ubuntu's packaged UCX's compiled-in UCX_CONFIG_DIR
// (configure.ac: ${sysconfdir}/ucx; strings on Debian 12's libucs.so.0: /etc/ucx).
const ucxConfigDir = "/etc/ucx"

// ucxConfFile is UCX_CONFIG_FILE_NAME (src/ucs/config/parser.h).
const ucxConfFile = "ucx.conf"

// ucxReadings are where UCX's readings of the files start (libVersion.reading):
// 1.12.0, every file (Values); 1.11.0, the directory's file (Early); before, none.
var ucxReadings = []string{"1.12.0", "1.11.0"}

// ReadUCXFiles reads the ucx.conf files UCX would read in the environment all (the
// whole environment), with fsys. ./ucx.conf is ibkey's working directory's: UCX
// opens it in each process's, so it is the job's only when ibkey runs where the
// job starts (ucxFilesNote says so); no other directory is the job's to guess.
func ReadUCXFiles(all Env, fsys MCAFS) *UCXFiles {
	u := &UCXFiles{Values: map[string]UCXValue{}, Early: map[string]UCXValue{}, Filtered: map[string]string{}}
	// The compiled-in directory; UCX 1.11 reads only this file, first line winning.
	u.readFile(fsys, ucxConfigDir+"/"+ucxConfFile, true)
	u.NotLocated = append(u.NotLocated, "LIBDIR/../etc/ucx.conf beside the job's libucs (from UCX 1.17.0 ../etc/ucx/ucx.conf; Debian's 1.13.1: /usr/lib/etc/ucx.conf)")
	// getenv: a variable set to "" is set ("/ucx.conf").
	for _, dir := range []string{"HOME", "UCX_CONFIG_DIR"} {
		if v, ok := all[dir]; ok {
			u.readFile(fsys, v+"/"+ucxConfFile, false)
		}
	}
	u.readFile(fsys, "./"+ucxConfFile, false)
	return u
}

// readFile reads one file as ucs_config_parse_config_file does (early: also as UCX
// 1.11's only file).
func (u *UCXFiles) readFile(fsys MCAFS, path string, early bool) {
	b, ok, _ := u.read(fsys, path)
	if !ok {
		return
	}
	var f ucxFilters
	bad := ucxINI(b, func(section, name, value string, line int) bool {
		v := UCXValue{Value: value, File: path, Line: line}
		if filter := f.check(section, name, value); filter != "" {
			u.Filtered[name] = fmt.Sprintf("%s line %d follows %q in section [%s]", path, line, filter, section)
		} else {
			delete(u.Filtered, name)
		}
		u.Values[name] = v
		if _, dup := u.Early[name]; early && !dup {
			u.Early[name] = v
		}
		return true
	})
	if bad != 0 {
		u.Errors = append(u.Errors, fmt.Sprintf("%s line %d", path, bad))
	}
}

// without is u with name set by no file (a gate's export, which beats them all).
func (u *UCXFiles) without(name string) *UCXFiles {
	c := *u
	c.Values, c.Early, c.Filtered = maps.Clone(u.Values), maps.Clone(u.Early), maps.Clone(u.Filtered)
	delete(c.Values, name)
	delete(c.Early, name)
	delete(c.Filtered, name)
	return &c
}

// sets says whether a file sets the variable name (for any UCX version).
func (u *UCXFiles) sets(name string) bool {
	_, late := u.Values[name]
	_, early := u.Early[name]
	return late || early
}

// ucxRelevant are the variables ibkey's UCX model reads: UCX_IB_PKEY, UCX_TLS,
// UCX_NET_DEVICES and each transport's PKEY.
func ucxRelevant(name string) bool {
	return name == "UCX_IB_PKEY" || name == "UCX_TLS" || name == "UCX_NET_DEVICES" || UCXPKeyVar(name)
}

// ucxMerge is env with what vals sets of the variables the model reads and env
// does not (the environment beats every file).
func ucxMerge(env Env, vals map[string]UCXValue) Env {
	out := maps.Clone(env)
	if out == nil {
		out = Env{}
	}
	for name, v := range vals {
		if _, set := env[name]; !set && ucxRelevant(name) {
			out[name] = v.Value
		}
	}
	return out
}

// ucxSame says whether a and b set the same variables of the model alike.
func ucxSame(a, b Env) bool {
	for _, e := range [][2]Env{{a, b}, {b, a}} {
		for name, v := range e[0] {
			if w, ok := e[1][name]; ucxRelevant(name) && (!ok || v != w) {
				return false
			}
		}
	}
	return true
}

// ucxFilters is a file's section filter state as UCX 1.17.0 and later keep it
// (ucs_config_parse_set_section_info, ucs_config_parse_check_filter): at a new
// section the first line decides, then each line until one is a filter (its name
// "CPU vendor", "CPU model" or "Product name": UCS_CPU_VENDOR_LABEL,
// UCS_CPU_MODEL_LABEL, UCS_SYS_DMI_PRODUCT_NAME_LABEL) whose pattern the host does
// not match, which leaves out the rest of the section. ibkey does not read the
// job's CPU: a line from a filter on is one UCX may leave out.
type ucxFilters struct {
	section, filter string
	started         bool
}

// check is the filter that may leave this line out ("" if none).
func (f *ucxFilters) check(section, name, value string) string {
	if !f.started || section != f.section {
		// ucs_strncpy_zero into a 64-byte name: inih's sections are 49 bytes at most.
		f.started, f.section, f.filter = true, section, ""
	}
	if f.filter == "" && slices.Contains([]string{"CPU vendor", "CPU model", "Product name"}, name) {
		f.filter = name + "=" + value
	}
	return f.filter
}

// iniMaxLine is INI_MAX_LINE (src/ucs/config/ini.h): fgets reads 199 bytes at most.
const iniMaxLine = 200

// ucxINI is inih's ini_parse_stream (src/ucs/config/ini.c, unchanged from UCX 1.11.0
// to 1.22.0) with ini.h's settings, calling handler for each name and value; it
// returns the number of the first line in error (0: none), as UCX's
// ini_parse_file does. Parsing goes on after an error (INI_STOP_ON_FIRST_ERROR 0).
//
//   - A line is what fgets reads into 200 bytes: up to 199, so a longer line is cut
//     into several, each numbered and read as a line of its own; what follows a NUL
//     byte is not read. A UTF-8 BOM is skipped on the first line.
//   - The line is stripped of C white space (CR included) at both ends. Empty, or
//     starting with ';' or '#': a comment.
//   - A line that had leading white space (or followed the BOM) after a name=value
//     line of the same section continues it (INI_ALLOW_MULTILINE): the handler
//     gets the previous name (its first 49 bytes) and the whole stripped line as the
//     value, inline comment and all; UCX then replaces the value.
//   - "[section]": the name up to ']' (49 bytes kept); no ']' (or "; " first) is an
//     error.
//   - Otherwise name, then '=' or ':' (whichever comes first), then the value: it
//     ends at a ';' that follows white space (INI_INLINE_COMMENT_PREFIXES ";"; '#'
//     is kept), both are stripped; quotes are kept. A line without '=' or ':' is an
//     error (INI_ALLOW_NO_VALUE 0) and sets nothing; so is a line whose handler
//     returns false (UCX 1.11's duplicate: the line sets nothing there).
func ucxINI(b []byte, handler func(section, name, value string, line int) bool) int {
	section, prev := "", ""
	lineno, errLine := 0, 0
	fail := func() {
		if errLine == 0 {
			errLine = lineno
		}
	}
	// Each read is a line of its own (ini.c's lineno).
	for _, read := range fgetsLines(b, iniMaxLine) {
		s := string(cString(read))
		lineno++
		lead := false
		if lineno == 1 && strings.HasPrefix(s, "\xef\xbb\xbf") {
			s, lead = s[3:], true
		}
		s = strings.TrimRight(s, cSpace)
		t := strings.TrimLeft(s, cSpace)
		lead = lead || len(t) < len(s)
		switch {
		case t == "" || t[0] == ';' || t[0] == '#':
		case prev != "" && lead:
			if !handler(section, prev, t, lineno) {
				fail()
			}
		case t[0] == '[':
			end := 1 + iniFind(t[1:], "]")
			if end < len(t) && t[end] == ']' {
				section, prev = iniCut(t[1:end]), ""
			} else {
				fail()
			}
		default:
			end := iniFind(t, "=:")
			if end == len(t) || t[end] == ';' {
				fail()
				continue
			}
			name, value := strings.TrimRight(t[:end], cSpace), t[end+1:]
			value = strings.Trim(value[:iniFind(value, "")], cSpace)
			prev = iniCut(name)
			if !handler(section, name, value, lineno) {
				fail()
			}
		}
	}
	return errLine
}

// iniFind is find_chars_or_comment: the index of the first byte of chars, or of a
// ';' after white space (an inline comment), or len(s).
func iniFind(s, chars string) int {
	space := false
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(chars, s[i]) >= 0 || space && s[i] == ';' {
			return i
		}
		space = strings.IndexByte(cSpace, s[i]) >= 0
	}
	return len(s)
}

// iniCut is strncpy0 into inih's 50-byte section and name buffers.
func iniCut(s string) string { return s[:min(len(s), 49)] }

// ucxVersions is what UCX's configuration files do to the setup s, configured
// from env (the environment and the files as UCX 1.12.0 and later read them):
// where a variable comes from a file, the answer is not checked where another
// UCX version's reading gives another one (ibkey does not know the job's UCX
// version); a file not read, or a line a section filter may leave out, leaves it
// not checked.
//
// With the job's UCX version (lv known), env is what that version reads (vals, the
// files' settings as it reads them): nothing is split, and a section filter or a
// file not read matters only to versions that have them or read it.
func ucxVersions(in Inputs, f *UCXFiles, env Env, vals map[string]UCXValue, lv libVersion, s *setup) {
	reading := lv.reading(ucxReadings...)
	if reading == 2 {
		// Before 1.11 no file is read: nothing in them can matter.
		if len(f.Values)+len(f.Unread)+len(f.Errors) > 0 {
			s.Notes = append(s.Notes, lv.String()+" reads no ucx.conf (UCX 1.11.0 and later do): what the files set is not used")
		}
		return
	}
	for _, name := range env.Names() {
		if _, set := in.Env[name]; !set {
			v := vals[name]
			s.Notes = append(s.Notes, fmt.Sprintf("%s=%s is from %s line %d (the environment, which beats every ucx.conf, does not set it)", name, v.Value, v.File, v.Line))
		}
	}
	if len(f.Errors) > 0 {
		s.Notes = append(s.Notes, "lines of ucx.conf UCX's parser (inih) does not accept, from the first in each file; UCX skips them and keeps the rest, as ibkey does: "+strings.Join(f.Errors, ", "))
	}
	early, none := ucxMerge(in.Env, f.Early), in.Env
	unread := "UCX's configuration files may set UCX_IB_PKEY, UCX_TLS, UCX_NET_DEVICES or a transport's PKEY in what could not be read (" + strings.Join(f.Unread, "; ") + ")"
	// The environment's UCX_TLS beats every file: an answer it decides (no
	// InfiniBand transport, or a value refused under it) stands whatever a file
	// says, hides or leaves to a section filter.
	alt := &setup{Result: Result{Library: s.Library}}
	ucxConfigure(none, lv, alt)
	if _, tls := in.Env["UCX_TLS"]; tls && s.Reject+s.Inactive != "" && s.Reject == alt.Reject && s.Inactive == alt.Inactive {
		if len(f.Unread) > 0 {
			s.Notes = append(s.Notes, unread+", which cannot change that")
		}
		return
	}
	const late, old = "UCX 1.12.0 and later", "UCX before 1.11.0 (it reads no ucx.conf)"
	only := "UCX 1.11 (it reads only " + ucxConfigDir + "/" + ucxConfFile + ", a name's first line)"
	switch {
	case ucxSame(env, none): // the files set nothing the model reads
	case reading >= 0:
		s.Notes = append(s.Notes, "ucx.conf files read as "+lv.String()+" reads them: "+[]string{late, only}[reading])
	case ucxSame(early, none):
		ucxSplit(s, none, late, "UCX before 1.12.0 (1.11 reads only "+ucxConfigDir+"/"+ucxConfFile+", older UCX no ucx.conf)")
	case ucxSame(early, env):
		ucxSplit(s, none, "UCX 1.11.0 and later", old)
	default:
		ucxSplit(s, early, late, only)
		ucxSplit(s, none, late, old)
	}
	filters, known := lv.since("1.17.0")
	version := ucxVersionUnknown
	if known {
		version = lv.String() + " is one of them"
	}
	for _, name := range slices.Sorted(maps.Keys(f.Filtered)) {
		if _, set := in.Env[name]; !set && ucxRelevant(name) && (filters || !known) {
			why := fmt.Sprintf("%s: %s, and UCX 1.17.0 and later leave the rest of such a section out on a host whose CPU or product name does not match, which ibkey does not read; %s", name, f.Filtered[name], version)
			s.Reject, s.Inactive = "", ""
			s.Unchecked = append(s.Unchecked, why)
			s.unknown = cmp.Or(s.unknown, why)
		}
	}
	if len(f.Unread) > 0 {
		// UCX 1.11 reads only the compiled-in directory's file, but which file
		// could not be read is not kept.
		s.Reject, s.Inactive = "", ""
		s.Unchecked = append(s.Unchecked, unread)
		s.unknown = "UCX's settings are not known (a ucx.conf file could not be read)"
	}
}

// ucxSplit makes s, UCX as version label reads its settings, not checked where
// UCX as version altLabel, reading altEnv, would do otherwise: refuse or not open
// its InfiniBand transports, use other ports, or take other entries.
func ucxSplit(s *setup, altEnv Env, label, altLabel string) {
	alt := &setup{Result: Result{Library: s.Library}}
	ucxConfigure(altEnv, libVersion{}, alt)
	for _, u := range alt.Unchecked {
		if !slices.Contains(s.Unchecked, u) {
			s.Unchecked = append(s.Unchecked, altLabel+": "+u)
		}
	}
	allows, route := s.allows, s.route
	s.allows = func(h []*Port, dev string, num int) (bool, string) {
		ok, why := allows(h, dev, num)
		if ok2, why2 := alt.allows(h, dev, num); ok2 != ok {
			return true, fmt.Sprintf("%s: %s; %s: %s", label, ucxUse(ok, why), altLabel, ucxUse(ok2, why2))
		}
		return ok, why
	}
	state := func(x *setup) string { return x.Reject + x.Inactive }
	if st, at := state(s), state(alt); st != "" || at != "" {
		if st == at {
			return
		}
		s.Setting = fmt.Sprintf("%s: %s; %s: %s", label, cmp.Or(st, s.Setting), altLabel, cmp.Or(at, alt.Setting))
		why := s.Setting + "; " + ucxVersionUnknown
		s.Reject, s.Inactive = "", ""
		s.Unchecked = append(s.Unchecked, why)
		s.unknown = cmp.Or(s.unknown, why)
		return
	}
	s.route = func(p *Port) (Pick, bool) {
		if route != nil {
			if pk, ok := route(p); ok {
				return pk, true
			}
		}
		// UCX's allows does not look at the host's other ports.
		ok, why := allows(nil, p.Device, p.Num)
		ok2, why2 := alt.allows(nil, p.Device, p.Num)
		if ok != ok2 {
			return Pick{Outcome: NotChecked, Index: -1, Problem: fmt.Sprintf("%s: %s; %s: %s; %s", label, ucxUse(ok, why), altLabel, ucxUse(ok2, why2), ucxVersionUnknown)}, true
		}
		// A pick not checked under label is not checked whatever alt does.
		a, b := ucxPick(s.value, p), ucxPick(alt.value, p)
		if a.Outcome == NotChecked || a.Outcome == b.Outcome && a.Index == b.Index && a.PKey == b.PKey {
			return Pick{}, false
		}
		return Pick{Outcome: NotChecked, Index: -1, Problem: fmt.Sprintf("%s: %s; %s: %s; %s", label, ucxPickText(a), altLabel, ucxPickText(b), ucxVersionUnknown)}, true
	}
}

func ucxUse(ok bool, why string) string {
	if ok {
		return "uses it"
	}
	return "does not use it (" + why + ")"
}

// ucxPickText is what UCX does on a port, for a reason naming two versions.
func ucxPickText(pk Pick) string {
	switch {
	case pk.Outcome == Uses && pk.Index < 0:
		return "an entry holding " + pk.PKey.String()
	case pk.Outcome == Uses || pk.Outcome == EmptyEntry:
		return fmt.Sprintf("index %d, %s", pk.Index, pk.PKey)
	}
	why, _, _ := strings.Cut(strings.TrimPrefix(pk.Problem, "UCX: "), "; ")
	return why
}

// ucxFilesNote is UCX's assumption note: what was read (f nil: the files were not
// read, the settings not coming from the environment).
func ucxFilesNote(f *UCXFiles) string {
	if f == nil {
		return "UCX: only the settings given are read: ucx.conf files (" + ucxConfigDir + "/ucx.conf, the one beside UCX's library, $HOME/ucx.conf, $UCX_CONFIG_DIR/ucx.conf and ./ucx.conf, which UCX 1.11 and later read for what the environment does not set) are read only with settings from the environment"
	}
	var parts []string
	if len(f.Read) > 0 {
		parts = append(parts, "read: "+strings.Join(f.Read, ", "))
	}
	if len(f.Missing) > 0 {
		parts = append(parts, "not present (UCX skips them too): "+strings.Join(f.Missing, ", "))
	}
	parts = append(parts, "not read: "+strings.Join(f.NotLocated, ", ")+", which ibkey cannot locate",
		ucxConfigDir+" taken as UCX's compiled-in directory (Debian's package)")
	// UCX opens ./ucx.conf, and $HOME/ucx.conf or $UCX_CONFIG_DIR/ucx.conf under a
	// relative name, in each process's working directory; ibkey can read only its
	// own.
	seen := slices.Concat(f.Read, f.Missing)
	if slices.Contains(seen, "./"+ucxConfFile) {
		parts = append(parts, "./ucx.conf is ibkey's working directory's, the job's only when ibkey runs where the job starts")
	}
	other := fileReads{Read: slices.DeleteFunc(seen, func(p string) bool { return p == "./"+ucxConfFile })}
	if rel := other.relative("UCX"); rel != "" {
		parts = append(parts, rel)
	}
	return "UCX: ucx.conf files, read for what the environment does not set: " + strings.Join(parts, "; ")
}
