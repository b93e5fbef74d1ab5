package job

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
)

// SetenvFiles are a library's settings files as read for a job's environment, for a
// library that reads them before any variable and puts each NAME=VALUE they hold in
// its environment with setenv(NAME, VALUE, 0) (NCCL's nccl.conf, MVAPICH2's
// mvapich2.conf): the environment wins, even a variable set to "", then the first
// line, in file order, that names a variable.
type SetenvFiles struct {
	// Values are the settings of the library's variables that the files give and
	// the environment does not (as the library's current version reads them).
	Values map[string]fileSet
	// Read are the files read (the library skips one that does not exist, as ibkey
	// does).
	Read []string
	// unknown are why variables are not known (a file that may set them could not be
	// read); split, how older versions read the files differently. Each is said only
	// while the environment does not set its variables (unchecked).
	unknown []fileUnknown
	split   []fileUnknown
	// Assumption, when set, says what ibkey took without knowing it.
	Assumption string
	// LookAlikes are lines whose name is one of the library's variables but for
	// spaces around it, "export " or case, which the library reads as another name.
	LookAlikes []string
	// Reject, when set, is why the library stops at start-up whatever its settings
	// (MVAPICH2: a line it cannot read).
	Reject string
	// names are the variables read; readings each reading's (the first is the
	// current version's), for at.
	names    []string
	readings []map[string]fileVar
}

// fileUnknown is why variables are not known.
type fileUnknown struct {
	why  string
	vars []string
}

// fileSet is a variable's value and where it comes from ("" for the environment,
// else "FILE:LINE").
type fileSet struct{ Value, Where string }

// fileVar is one variable as a reading of the files leaves it.
type fileVar struct {
	fileSet
	set bool
	// unknown, when set, says why its value is not known (a file that may set it
	// could not be read).
	unknown string
}

// fileLine is one setting of a file: a name, a value and the line it is on.
type fileLine struct {
	name, value string
	line        int
	nameLen     int // before a cut (NCCL: 1,023 bytes)
}

// setenvReading is one way a library version finds and reads its files: the paths,
// in order, and a file's settings; stop, when set, says why reading ends after the
// settings given (what follows is undefined).
type setenvReading struct {
	paths []string
	lines func(path string, data []byte) (settings []fileLine, stop string)
}

// readSetenvFiles reads the files of each reading (the first is the library's
// current version) with fsys: the variables names of the whole environment all, then
// of the files. lib names the library in messages, hint says how it reads a name (for
// LookAlikes). It returns the files and each reading's variables.
func readSetenvFiles(lib, hint string, all Env, names []string, fsys MCAFS, readings []setenvReading) (*SetenvFiles, []map[string]fileVar) {
	n := &SetenvFiles{Values: map[string]fileSet{}}
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
	var out []map[string]fileVar
	for i, r := range readings {
		vars := map[string]fileVar{}
		for _, name := range names {
			if v, ok := all[name]; ok {
				vars[name] = fileVar{fileSet: fileSet{Value: v}, set: true}
			}
		}
		// unknown marks every variable neither the environment nor a file before
		// sets as not known, for why.
		unknown := func(why string) {
			for _, name := range names {
				if v := vars[name]; !v.set && v.unknown == "" {
					vars[name] = fileVar{unknown: why}
				}
			}
		}
		for _, path := range r.paths {
			f := read(path)
			switch {
			case errors.Is(f.err, fs.ErrNotExist):
				continue
			case f.err != nil:
				unknown(fmt.Sprintf("%v: %s reads it", f.err, lib))
				continue
			}
			lines, stop := r.lines(path, f.data)
			for _, l := range lines {
				if i == 0 {
					n.lookAlike(path, l, names, hint)
				}
				if v := vars[l.name]; slices.Contains(names, l.name) && !v.set && v.unknown == "" {
					vars[l.name] = fileVar{fileSet: fileSet{Value: l.value, Where: fmt.Sprintf("%s:%d", path, l.line)}, set: true}
				}
			}
			if stop != "" {
				maps.DeleteFunc(vars, func(_ string, v fileVar) bool { return v.Where != "" })
				unknown(stop)
				break
			}
		}
		out = append(out, vars)
	}
	n.names, n.readings = names, out
	n.unknown, n.Values = unknownIn(names, out), fromFiles(out[0])
	return n, out
}

// unknownIn is each reason a variable is not known in any of the readings, once,
// with the variables it leaves not known.
func unknownIn(names []string, readings []map[string]fileVar) []fileUnknown {
	may := map[string][]string{}
	for _, name := range names {
		for _, vars := range readings {
			if why := vars[name].unknown; why != "" && !slices.Contains(may[why], name) {
				may[why] = append(may[why], name)
			}
		}
	}
	var out []fileUnknown
	for why, vars := range may {
		out = append(out, fileUnknown{why, vars})
	}
	slices.SortFunc(out, func(a, b fileUnknown) int { return strings.Compare(a.why, b.why) })
	return out
}

// fromFiles are the settings a reading takes from the files.
func fromFiles(vars map[string]fileVar) map[string]fileSet {
	out := map[string]fileSet{}
	for name, v := range vars {
		if v.set && v.Where != "" {
			out[name] = v.fileSet
		}
	}
	return out
}

// at is n as its reading i alone reads the files (the library's version decides
// which, libVersion.reading; -1 or nil n: n): its values and what it could not
// read, with no split.
func (n *SetenvFiles) at(i int) *SetenvFiles {
	if n == nil || i < 0 || i >= len(n.readings) {
		return n
	}
	c := *n
	c.Values, c.unknown, c.split = fromFiles(n.readings[i]), unknownIn(n.names, n.readings[i:i+1]), nil
	return &c
}

// lookAlike notes a line whose name the library reads as written, which is one of its
// variables names only once spaces, "export " and case are set aside.
func (n *SetenvFiles) lookAlike(path string, l fileLine, names []string, hint string) {
	if slices.Contains(names, l.name) {
		return
	}
	bare := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l.name), "export "))
	if i := slices.IndexFunc(names, func(v string) bool { return strings.EqualFold(v, bare) }); i >= 0 {
		n.LookAlikes = append(n.LookAlikes, fmt.Sprintf("%s:%d: %q is not %s: %s", path, l.line, l.name, names[i], hint))
	}
}

// describe is the variable as the files leave it: `"VALUE" (FILE:LINE)` or unset.
func (v fileVar) describe() string {
	if !v.set {
		return "unset"
	}
	return fmt.Sprintf("%q (%s)", v.Value, v.Where)
}

// env is the job's variables: the environment's, and the files' where the
// environment does not set them.
func (n *SetenvFiles) env(e Env) Env {
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

// unchecked says what in the files ibkey could not read, or older versions read
// otherwise, for the variables the environment e does not set.
func (n *SetenvFiles) unchecked(e Env) []string {
	if n == nil {
		return nil
	}
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

// without is n with name set by no file (nil n: nil), for a gate's export, which
// beats them all (UCXFiles.without likewise): what the files leave open about it is
// no longer open.
func (n *SetenvFiles) without(name string) *SetenvFiles {
	if n == nil || name == "" {
		return n
	}
	c := *n
	c.Values = maps.Clone(n.Values)
	delete(c.Values, name)
	drop := func(us []fileUnknown) []fileUnknown {
		var out []fileUnknown
		for _, u := range us {
			if u.vars = slices.DeleteFunc(slices.Clone(u.vars), func(v string) bool { return v == name }); len(u.vars) > 0 {
				out = append(out, u)
			}
		}
		return out
	}
	c.unknown, c.split = drop(n.unknown), drop(n.split)
	return &c
}

// values are the files' settings (nil n: none).
func (n *SetenvFiles) values() map[string]fileSet {
	if n == nil {
		return nil
	}
	return n.Values
}

// where says where variable name comes from when a file sets it and the environment
// e does not: " (FILE:LINE)".
func (n *SetenvFiles) where(e Env, name string) string {
	if _, ok := e[name]; ok {
		return ""
	}
	if w := n.values()[name].Where; w != "" {
		return " (" + w + ")"
	}
	return ""
}
