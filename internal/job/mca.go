package job

import (
	"fmt"
	"slices"
	"strings"
)

// Open MPI 4.1's MCA parameter files (opal/mca/base/mca_base_var.c
// mca_base_var_cache_files, read_files, var_set_initial; checked with ompi_info
// 4.1.4):
//
//   - The files are the comma-separated list mca_base_param_files (environment
//     OMPI_MCA_mca_base_param_files, or its long name
//     OMPI_MCA_opal_mca_base_param_files); default
//     $HOME/.openmpi/mca-params.conf,$sysconfdir/openmpi-mca-params.conf. "none"
//     reads no file, not even the override file. A file that does not exist or
//     cannot be opened is skipped (opal_util_keyval_parse).
//   - Either list is a string variable, so a leading "~/" (and ":~/") in it is
//     $HOME's (var_set_string): ompiTilde.
//   - Its synonym mca_param_files (OMPI_MCA_mca_param_files), when set, replaces
//     the value only after mca_base_envar_files copied it: the files of the list
//     before the synonym are read first (mca_base_envar_file_values, looked up
//     first by var_set_initial), then the synonym's ("none" from the synonym
//     reads none).
//   - read_files reads them right to left into one list (mca_base_parse_paramfile
//     save_value): a name already in the list has its value replaced where it is, so
//     the leftmost file wins and, within a file, the last line.
//   - $sysconfdir/openmpi-mca-params-override.conf, read when it exists, beats the
//     environment (var_set_initial).
//   - sysconfdir is compiled in (Debian and Ubuntu: /etc/openmpi) and moved by
//     OPAL_SYSCONFDIR (opal/mca/installdirs/env); $HOME is opal_home_directory's.

// MCAFS reads the files of a host: ReadFile as os.ReadFile, IsDir whether a
// directory exists (an injected reader keeps tests off this machine's files).
type MCAFS interface {
	ReadFile(name string) ([]byte, error)
	IsDir(name string) bool
}

// MCAValue is one `name = value` line of an MCA parameter file.
type MCAValue struct {
	Name, Value string
	File        string
	Line        int
}

// MCAFiles are Open MPI's MCA parameter files as read for a job's environment.
type MCAFiles struct {
	// Values are the parameter files' lines, in Open MPI's list order (the leftmost
	// file's value in the place the name was first read); Override the override
	// file's.
	Values, Override []MCAValue
	// Later are the files of mca_param_files, looked up after Values.
	Later []MCAValue
	// fileReads are the files read, not there (Open MPI skips them too), not
	// located ("$HOME/.openmpi/mca-params.conf: HOME is not set") and not read; Unread
	// also holds the lines ibkey does not interpret, with why.
	fileReads
	// OverrideUnread: what Unread says includes the override file.
	OverrideUnread bool
	// Crash, when set, says why every Open MPI process crashes as it starts.
	Crash string
}

// debianSysconfdir is Debian's and Ubuntu's packaged Open MPI's compiled-in
// sysconfdir (openmpi-bin: /etc/openmpi/openmpi-mca-params.conf).
const debianSysconfdir = "/etc/openmpi"

// ReadMCAFiles reads the MCA parameter files Open MPI 4.1 would read in the
// environment all (the whole environment), with fsys.
func ReadMCAFiles(all Env, fsys MCAFS) *MCAFiles {
	m := &MCAFiles{}
	// An empty OPAL_SYSCONFDIR is unset (opal_installdirs_env.c SET_FIELD).
	sysconf := all["OPAL_SYSCONFDIR"]
	hasSysconf := sysconf != ""
	if !hasSysconf && fsys.IsDir(debianSysconfdir) {
		sysconf, hasSysconf = debianSysconfdir, true
	}
	const noSysconf = "Open MPI's sysconfdir (compiled in; set OPAL_SYSCONFDIR to name it)"
	// The variable (long name first), then its synonym, which wins when set.
	name, list, set := ompiVar(all, "OMPI_MCA_opal_mca_base_param_files", "OMPI_MCA_mca_base_param_files")
	synName, synList, synSet := ompiVar(all, "OMPI_MCA_opal_mca_param_files", "OMPI_MCA_mca_param_files")
	// An empty string variable is NULL (var_set_string), which
	// mca_base_var_cache_files then strdups and strcmps: every Open MPI process
	// (mpirun, ompi_info, the job's) dies with SIGSEGV in opal_init (4.1.4 here;
	// the code is the same in 5.0).
	for _, v := range []struct {
		name, value string
		set         bool
	}{{name, list, set}, {synName, synList, synSet}} {
		if v.set && v.value == "" && m.Crash == "" {
			m.Crash = v.name + " is empty: every Open MPI process crashes as it starts (SIGSEGV in mca_base_var_cache_files, which reads the NULL an empty string variable becomes); unset it, or set it to none"
		}
	}
	if synSet && synList == "none" || !synSet && list == "none" {
		return m
	}
	list, synList = ompiTilde(all, list), ompiTilde(all, synList)
	// Aggregate parameter sets (mca_base_var_cache_files: resolve_relative_paths
	// over mca_base_param_file_path, the amca-param-sets directory) are not read.
	for _, n := range [][2]string{{"OMPI_MCA_opal_mca_base_param_file_prefix", "OMPI_MCA_mca_base_param_file_prefix"}, {"OMPI_MCA_opal_mca_base_envar_file_prefix", "OMPI_MCA_mca_base_envar_file_prefix"}} {
		if name, v, ok := ompiVar(all, n[0], n[1]); ok {
			m.Unread = append(m.Unread, fmt.Sprintf("%s=%s names aggregate parameter files (amca-param-sets), which ibkey does not read", name, v))
		}
	}
	var files []string
	if set {
		files = strings.Split(list, ",")
	} else {
		// asprintf("%s/.openmpi/mca-params.conf", opal_home_directory()), which is
		// getenv("HOME").
		if home, ok := all["HOME"]; ok {
			files = append(files, home+"/.openmpi/mca-params.conf")
		} else {
			m.NotLocated = append(m.NotLocated, "$HOME/.openmpi/mca-params.conf (HOME is not set)")
		}
		if hasSysconf {
			files = append(files, sysconf+"/openmpi-mca-params.conf")
		} else {
			m.NotLocated = append(m.NotLocated, "openmpi-mca-params.conf in "+noSysconf)
		}
	}
	m.Values = m.readFiles(fsys, files)
	if synSet {
		m.Later = m.readFiles(fsys, strings.Split(synList, ","))
	}
	if hasSysconf {
		m.Override = m.readFile(fsys, sysconf+"/openmpi-mca-params-override.conf", nil, true)
	} else {
		m.NotLocated = append(m.NotLocated, "openmpi-mca-params-override.conf in "+noSysconf)
	}
	return m
}

// ompiTilde is the "~/" expansion var_set_string (mca_base_var.c) gives every
// string MCA variable as it is set, the file lists included: a leading "~/" becomes
// $HOME/ (without HOME it is dropped) and each ":~/" becomes ":$HOME/" (":" without
// HOME); a "~/" after a comma stays as written.
func ompiTilde(all Env, v string) string {
	home, ok := all["HOME"]
	if ok {
		home += "/"
	}
	if rest, found := strings.CutPrefix(v, "~/"); found {
		v = home + rest
	}
	return strings.ReplaceAll(v, ":~/", ":"+home)
}

// readFiles is read_files: the files right to left into one list.
func (m *MCAFiles) readFiles(fsys MCAFS, files []string) []MCAValue {
	var list []MCAValue
	for i := len(files) - 1; i >= 0; i-- {
		if files[i] != "" {
			list = m.readFile(fsys, files[i], list, false)
		}
	}
	return list
}

// readFile reads one parameter file into list as save_value does.
func (m *MCAFiles) readFile(fsys MCAFS, path string, list []MCAValue, override bool) []MCAValue {
	b, ok, err := m.read(fsys, path)
	m.OverrideUnread = m.OverrideUnread || override && err != nil
	if !ok {
		return list
	}
	for i, line := range strings.Split(string(b), "\n") {
		name, value, ok := parseMCALine(line)
		if !ok {
			m.Unread = append(m.Unread, fmt.Sprintf("%s line %d (%q): a line ibkey does not interpret", path, i+1, line))
			m.OverrideUnread = m.OverrideUnread || override
			continue
		}
		if name == "" {
			continue
		}
		v := MCAValue{Name: name, Value: value, File: path, Line: i + 1}
		if k := indexMCA(list, name); k >= 0 {
			list[k] = v
		} else {
			list = append(list, v)
		}
	}
	return list
}

func indexMCA(list []MCAValue, name string) int {
	return slices.IndexFunc(list, func(v MCAValue) bool { return v.Name == name })
}

// parseMCALine reads one line as the keyval lexer (opal/util/keyval/keyval_lex.l)
// and parse_line (opal/util/keyval_parse.c) do: blank lines ({WHITE}*, WHITE being
// space, tab, \f and \v) and # or // comments set nothing (name ""); otherwise NAME
// ([A-Za-z0-9_.-]+), {WHITE}*={WHITE}*, and the value: the rest of the line without
// trailing spaces and tabs (quotes and # kept). ok is false for any other line
// (block comments, the --mca and -x forms, lexer errors), which ibkey does not
// interpret.
func parseMCALine(line string) (name, value string, ok bool) {
	const white = " \t\f\v"
	t := strings.TrimLeft(line, white)
	if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "//") {
		return "", "", true
	}
	end := strings.IndexFunc(t, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	})
	if end <= 0 || t[0] == '-' {
		return "", "", false
	}
	rest := strings.TrimLeft(t[end:], white)
	if !strings.HasPrefix(rest, "=") {
		return "", "", false
	}
	return t[:end], strings.TrimRight(strings.TrimLeft(rest[1:], white), " \t"), true
}

// sets says whether a parameter file sets the variable of environment name v.
func (m *MCAFiles) sets(v string) bool {
	n := strings.TrimPrefix(v, "OMPI_MCA_")
	return indexMCA(m.Values, n) >= 0 || indexMCA(m.Later, n) >= 0 || indexMCA(m.Override, n) >= 0
}
