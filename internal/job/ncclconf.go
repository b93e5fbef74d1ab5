package job

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
)

// NCCL's configuration files (NVIDIA/nccl src/misc/param.cc initEnvFunc and
// setEnvFile, src/os/linux.cc ncclOsSetEnv), read once before NCCL reads any variable
// (ncclEnvPluginInit; before 2.28 initEnv from ncclInit):
//
//   - The files: NCCL_CONF_FILE when it is set and not empty (from 2.23), else
//     ~/.nccl.conf; then /etc/nccl.conf. A file fopen cannot open is skipped. Each
//     path is formatted into 1,024 bytes (snprintf), so a longer one is cut.
//   - Each line NAME=VALUE is setenv(NAME, VALUE, 0): the environment wins, even a
//     variable set to "", then the first line, in file order, that names a variable.
//   - The name is everything before the line's first '=' (a space, a quote or
//     "export " stays part of it), cut to 1,023 bytes; the value everything after
//     it, quotes and spaces included, cut to 1,023 bytes. A line without '=' or with
//     '#' first sets nothing (before 2.26 "#NAME" is set, which no NCCL variable is);
//     "=VALUE" sets nothing (setenv refuses an empty name). The line is a C string: a
//     NUL ends it.
//   - From 2.30 ~ is $HOME (unset: no user file), a line is read by fgets into 4,096
//     bytes (a longer one is read as several lines), and a CR before the newline is
//     dropped. Before 2.30 ~ is the password database's home directory (getpwuid),
//     getline reads a whole line, and a CR stays in the value.
//
// ibkey reads the files as 2.30 and later do, and says a setting is not checked
// where an older NCCL would read the same files differently.

// ncclConfPathMax is the size of initEnvFunc's confFilePath.
const ncclConfPathMax = 1024

// ncclReading is how one range of NCCL versions finds and reads its files.
type ncclReading struct {
	versions string
	confFile bool // NCCL_CONF_FILE replaces ~/.nccl.conf (2.23)
	pwHome   bool // ~ is getpwuid's home directory, not $HOME (before 2.30)
	fgets    bool // fgets into 4,096 bytes and a CR dropped (2.30)
	// overflow: a name longer than 1,023 bytes is written past envVar[1024]
	// (envVar[s] = '\0'; std::min from 2.23.4): what follows is undefined.
	overflow bool
}

var ncclReadings = []ncclReading{
	{versions: "NCCL 2.30 and later", confFile: true, fgets: true},
	{versions: "NCCL 2.23 to 2.29", confFile: true, pwHome: true},
	{versions: "NCCL before 2.23", pwHome: true, overflow: true},
}

// NCCLFiles are NCCL's configuration files as read for a job's environment.
type NCCLFiles struct {
	// Values are the settings of NCCL's variables (ncclNames) that the files give and
	// the environment does not, as NCCL 2.30 and later read them.
	Values map[string]ncclSet
	// Read are the files read (NCCL skips one that does not exist, as ibkey does).
	Read []string
	// unknown are why variables are not known (a file that may set them could not be
	// read); split, how older NCCL versions read the files differently. Each is said
	// only while the environment does not set its variables (unchecked).
	unknown []ncclUnknown
	split   []ncclUnknown
	// Assumption, when set, says what ibkey took without knowing it.
	Assumption string
	// LookAlikes are lines whose name is one of NCCL's variables but for spaces
	// around it, "export " or case, which NCCL reads as another name.
	LookAlikes []string
}

// ncclUnknown is why variables are not known.
type ncclUnknown struct {
	why  string
	vars []string
}

// ncclSet is a variable's value and where it comes from ("" for the environment,
// else "FILE:LINE").
type ncclSet struct{ Value, Where string }

// ncclVar is one variable as a reading of the files leaves it.
type ncclVar struct {
	ncclSet
	set bool
	// unknown, when set, says why its value is not known (a file that may set it
	// could not be read).
	unknown string
}

// ncclConfLine is one setting of a file: a name, a value and the line it is on.
type ncclConfLine struct {
	name, value string
	line        int
	nameLen     int // before the cut to 1,023 bytes
}

// ReadNCCLFiles reads the files NCCL would read in the environment all (the whole
// environment) with fsys. pwHome is the home directory the password database gives
// the user, pwOK whether it could be looked up (NCCL before 2.30 reads ~/.nccl.conf
// there).
func ReadNCCLFiles(all Env, fsys MCAFS, pwHome string, pwOK bool) *NCCLFiles {
	n, _ := readNCCLFiles(all, fsys, pwHome, pwOK)
	return n
}

// readNCCLFiles is ReadNCCLFiles, with each reading's variables (ncclReadings'
// order).
func readNCCLFiles(all Env, fsys MCAFS, pwHome string, pwOK bool) (*NCCLFiles, []map[string]ncclVar) {
	n := &NCCLFiles{Values: map[string]ncclSet{}}
	if !pwOK {
		pwHome, pwOK = all["HOME"]
		n.Assumption = "NCCL before 2.30 reads ~/.nccl.conf in the home directory the password database gives, which ibkey could not look up: it read $HOME's for every version"
		if !pwOK {
			n.Assumption = "NCCL before 2.30 reads ~/.nccl.conf in the home directory the password database gives, which ibkey could not look up (nor is HOME set): that file was not read"
		}
	}
	type file struct {
		data []byte
		err  error
	}
	files := map[string]file{}
	read := func(path string) file {
		f, ok := files[path]
		if !ok {
			f.data, f.err = fsys.ReadFile(path)
			files[path] = f
			if f.err == nil {
				n.Read = append(n.Read, path)
			}
		}
		return f
	}
	var readings []map[string]ncclVar
	for i, r := range ncclReadings {
		vars := map[string]ncclVar{}
		for _, name := range ncclNames() {
			if v, ok := all[name]; ok {
				vars[name] = ncclVar{ncclSet: ncclSet{Value: v}, set: true}
			}
		}
		// unknown marks every variable neither the environment nor a file before
		// sets as not known, for why.
		unknown := func(why string) {
			for _, name := range ncclNames() {
				if v := vars[name]; !v.set && v.unknown == "" {
					vars[name] = ncclVar{unknown: why}
				}
			}
		}
	scan:
		for _, path := range r.files(all, pwHome, pwOK) {
			f := read(path)
			switch {
			case errors.Is(f.err, fs.ErrNotExist):
				continue
			case f.err != nil:
				unknown(fmt.Sprintf("%v: NCCL reads it", f.err))
				continue
			}
			for _, l := range ncclConfLines(f.data, r.fgets) {
				if i == 0 {
					n.lookAlike(path, l)
				}
				if r.overflow && l.nameLen > 1023 {
					for name, v := range vars {
						if v.Where != "" {
							delete(vars, name)
						}
					}
					unknown(fmt.Sprintf("%s:%d: a name over 1,023 bytes, which %s writes past its buffer (setEnvFile)", path, l.line, r.versions))
					break scan
				}
				if v := vars[l.name]; slices.Contains(ncclNames(), l.name) && !v.set && v.unknown == "" {
					vars[l.name] = ncclVar{ncclSet: ncclSet{Value: l.value, Where: fmt.Sprintf("%s:%d", path, l.line)}, set: true}
				}
			}
		}
		readings = append(readings, vars)
	}
	// Each reason once, with the variables it leaves not known in any reading.
	may := map[string][]string{}
	for _, name := range ncclNames() {
		for _, vars := range readings {
			if why := vars[name].unknown; why != "" && !slices.Contains(may[why], name) {
				may[why] = append(may[why], name)
			}
		}
	}
	for why, names := range may {
		n.unknown = append(n.unknown, ncclUnknown{why, names})
	}
	slices.SortFunc(n.unknown, func(a, b ncclUnknown) int { return strings.Compare(a.why, b.why) })
	for name, v := range readings[0] {
		if v.set && v.Where != "" {
			n.Values[name] = v.ncclSet
		}
	}
	for _, name := range []string{"NCCL_IB_PKEY", "NCCL_IB_HCA", "NCCL_IB_DISABLE", "NCCL_NET"} {
		now := readings[0][name]
		var older []string // what older versions read, where it differs
		for i, r := range ncclReadings[1:] {
			then := readings[i+1][name]
			if then.unknown != "" || now.unknown != "" || ncclSame(name, now, then) {
				continue // said once, in unknown
			}
			older = append(older, fmt.Sprintf("%s in %s", then.describe(), r.versions))
		}
		if len(older) == 2 && readings[1][name] == readings[2][name] {
			older = []string{readings[1][name].describe() + " in NCCL before 2.30"}
		}
		if len(older) > 0 {
			n.split = append(n.split, ncclUnknown{fmt.Sprintf("%s from NCCL's files: %s, %s in %s", name, strings.Join(older, ", "), now.describe(), ncclReadings[0].versions), []string{name}})
		}
	}
	return n, readings
}

// lookAlike notes a line whose name NCCL reads as written, which is one of its
// variables only once spaces, "export " and case are set aside.
func (n *NCCLFiles) lookAlike(path string, l ncclConfLine) {
	names := ncclNames()
	if slices.Contains(names, l.name) {
		return
	}
	bare := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l.name), "export "))
	if i := slices.IndexFunc(names, func(v string) bool { return strings.EqualFold(v, bare) }); i >= 0 {
		n.LookAlikes = append(n.LookAlikes, fmt.Sprintf("%s:%d: %q is not %s: NCCL takes everything before the '=' as the name (NAME=VALUE, nothing around the '=')", path, l.line, l.name, names[i]))
	}
}

// describe is the variable as the files leave it: `"VALUE" (FILE:LINE)` or unset.
func (v ncclVar) describe() string {
	if !v.set {
		return "unset"
	}
	return fmt.Sprintf("%q (%s)", v.Value, v.Where)
}

// ncclSame says whether two readings of variable name agree for ibkey's purpose:
// NCCL_IB_PKEY by the index it gives, NCCL_IB_DISABLE by its number, the others by
// their text.
func ncclSame(name string, a, b ncclVar) bool {
	switch name {
	case "NCCL_IB_PKEY":
		i, _ := ncclIndex(ncclEnvOf(a, name), "")
		j, _ := ncclIndex(ncclEnvOf(b, name), "")
		return i == j
	case "NCCL_IB_DISABLE":
		return ncclInt(a.Value, 0) == ncclInt(b.Value, 0)
	}
	return a.set == b.set && a.Value == b.Value
}

// ncclNames are the variables NCCL reads that ibkey interprets.
func ncclNames() []string { return slices.Concat(NCCL.Vars, NCCL.Modifiers) }

func ncclEnvOf(v ncclVar, name string) Env {
	if !v.set {
		return nil
	}
	return Env{name: v.Value}
}

// files are the paths NCCL opens, in order, for the environment all; pwHome is
// the password database's home directory (pwOK: known).
func (r ncclReading) files(all Env, pwHome string, pwOK bool) []string {
	var out []string
	home, ok := all["HOME"]
	if r.pwHome {
		home, ok = pwHome, pwOK
	}
	if f := all["NCCL_CONF_FILE"]; r.confFile && f != "" {
		out = append(out, f)
	} else if ok {
		out = append(out, home+"/.nccl.conf")
	}
	out = append(out, "/etc/nccl.conf")
	for i, p := range out {
		out[i] = p[:min(len(p), ncclConfPathMax-1)]
	}
	return out
}

// ncclConfLines are the settings of one file as setEnvFile reads it: fgets into a
// 4,096-byte buffer with the CR dropped (2.30), or getline.
func ncclConfLines(b []byte, fgets bool) []ncclConfLine {
	var out []ncclConfLine
	for i, line := range bytes.SplitAfter(b, []byte("\n")) {
		for len(line) > 0 {
			chunk := line
			if fgets {
				chunk = line[:min(len(line), 4095)]
			}
			line = line[len(chunk):]
			if k := bytes.IndexByte(chunk, 0); k >= 0 {
				chunk = chunk[:k]
			}
			chunk = bytes.TrimSuffix(chunk, []byte("\n"))
			if fgets {
				chunk = bytes.TrimSuffix(chunk, []byte("\r"))
			}
			name, value, ok := bytes.Cut(chunk, []byte("="))
			if !ok || len(name) == 0 || name[0] == '#' {
				continue
			}
			out = append(out, ncclConfLine{
				name:    string(name[:min(len(name), 1023)]),
				value:   string(value[:min(len(value), 1023)]),
				line:    i + 1,
				nameLen: len(name),
			})
		}
	}
	return out
}

// env is the job's NCCL variables: the environment's, and the files' where the
// environment does not set them.
func (n *NCCLFiles) env(e Env) Env {
	if len(n.values()) == 0 {
		return e
	}
	out := Env{}
	maps.Copy(out, e)
	for k, v := range n.Values {
		if _, ok := out[k]; !ok {
			out[k] = v.Value
		}
	}
	return out
}

// unchecked says what in the files ibkey could not read, or older NCCL versions read
// otherwise, for the variables the environment e does not set.
func (n *NCCLFiles) unchecked(e Env) []string {
	unset := func(vars []string) []string {
		return slices.DeleteFunc(slices.Clone(vars), func(v string) bool { _, ok := e[v]; return ok })
	}
	var out []string
	for _, u := range n.unknown {
		switch vars := unset(u.vars); len(vars) {
		case 0:
		case 1:
			out = append(out, fmt.Sprintf("%s, so %s is not known", u.why, vars[0]))
		default:
			out = append(out, fmt.Sprintf("%s, so %s are not known", u.why, strings.Join(vars, ", ")))
		}
	}
	for _, u := range n.split {
		if len(unset(u.vars)) > 0 {
			out = append(out, u.why)
		}
	}
	return out
}

// values are the files' settings (nil n: none).
func (n *NCCLFiles) values() map[string]ncclSet {
	if n == nil {
		return nil
	}
	return n.Values
}

// where says where NCCL's variable name comes from when a file sets it and the
// environment e does not: " (FILE:LINE)".
func (n *NCCLFiles) where(e Env, name string) string {
	if _, ok := e[name]; ok {
		return ""
	}
	if w := n.values()[name].Where; w != "" {
		return " (" + w + ")"
	}
	return ""
}
