package job

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
)

// ConfFiles are a library's settings files as read for a job's environment: files
// of NAME=VALUE lines that set the library's environment variables (NCCL's
// nccl.conf, MVAPICH2's mvapich2.conf, NVSHMEM's nvshmem.conf), read by one engine
// (readConfFiles) from each library's declaration (confDecl).
type ConfFiles struct {
	// Values are the settings of the library's variables that the files give (as the
	// library's current version reads them), where the environment does not beat
	// them.
	Values map[string]fileSet
	// fileReads are the files read, not there and not read.
	fileReads
	// unknown are why variables are not known (a file that may set them could not be
	// read); split, how older versions read the files differently. Each is said only
	// while the environment does not set its variables, unless the files beat the
	// environment (unchecked).
	unknown []fileUnknown
	split   []fileUnknown
	// Assumption, when set, says what ibkey took without knowing it.
	Assumption string
	// LookAlikes are lines whose name looks like one of the library's variables
	// ("export ", spaces, case), which the library reads as another name.
	LookAlikes []string
	// Reject, when set, is why the library stops at start-up whatever its settings
	// (MVAPICH2: a line it cannot read).
	Reject string
	// filesWin: confDecl.filesWin. names are the variables read; readings each
	// reading's (the first is the current version's) and paths its files, for at.
	filesWin bool
	names    []string
	readings []map[string]fileVar
	paths    [][]string
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
	nameLen     int  // before a cut (NCCL: 1,023 bytes)
	noEq        bool // a line without '=', which sets nothing (NVSHMEM: its first word)
}

// confDecl declares how a library reads its settings files. The paths and each
// line's syntax stay a function per library: the libraries differ in whether an
// empty variable counts as set, in path and line caps, in an either-or between a
// variable and $HOME, and in a file deciding whether the next is read (MVAPICH2).
// Two libraries' files are read by their own readers on the same file record
// (fileReads), as their shape truly differs:
//   - UCX's ucx.conf (ReadUCXFiles): the environment beats it and the last line
//     wins, but its names are not a list (every transport's PKEY; every value is
//     kept for the device names it may hold), a file not read leaves all of UCX
//     not known, sections may filter lines (1.17.0), a line may fail to parse, and
//     1.11's reading splits the answer rather than a variable (ucxVersions).
//   - Open MPI's MCA files (ReadMCAFiles): two names per parameter, the leftmost
//     file winning but the last line within a file, a synonym's files after the
//     list's, and an override file that beats the environment.
type confDecl struct {
	// names are the variables the files may set that ibkey interprets.
	names []string
	// filesWin: a file's setting beats the environment's (NVSHMEM:
	// nvshmemi_getenv_helper looks in the files first). Else the environment wins,
	// even a variable set to "": setenv(NAME, VALUE, 0) (NCCL, MVAPICH2).
	filesWin bool
	// lastWins: a later line, in the same file or a later one, replaces an earlier
	// one (NVSHMEM). Else the first line, in file order, that names a variable wins
	// (setenv(..., 0)).
	lastWins bool
	// readsIt ends why a file that could not be read leaves variables not known:
	// "NCCL reads it".
	readsIt string
	// like is the variable a line's name looks like but is not ("": none); hint says
	// how the library reads a name (LookAlikes).
	like func(name string) string
	hint string
	// lib names the library in LookAlikes.
	lib string
	// readings are the ways the library's versions find and read the files, the
	// current version's first.
	readings []confReading
}

// confReading is one way a library version finds and reads its files: the paths,
// in order, and a file's settings; stop, when set, says why reading ends after the
// settings given (what follows is undefined).
type confReading struct {
	paths []string
	lines func(path string, data []byte) (settings []fileLine, stop string)
}

// fileReads is what became of the files a library reads, one record for every
// library: read, not there (each library skips such a file without a word, as
// ibkey does), not located (ibkey could not work out the path), or could not be
// read (Unread says why: what it may set is not known).
type fileReads struct {
	Read, Missing, NotLocated, Unread []string
}

// read reads path with fsys: its data when it was read (ok), and why when it could
// not be read (err).
func (r *fileReads) read(fsys MCAFS, path string) (data []byte, ok bool, err error) {
	data, err = fsys.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Missing = append(r.Missing, path)
		return nil, false, nil
	case err != nil:
		r.Unread = append(r.Unread, err.Error())
		return nil, false, err
	}
	r.Read = append(r.Read, path)
	return data, true, nil
}

// relative says which files were looked up by a relative name: in ibkey's working
// directory, which lib opens in each process's ("": none).
func (r *fileReads) relative(lib string) string {
	var rel []string
	for _, f := range slices.Concat(r.Read, r.Missing) {
		if !strings.HasPrefix(f, "/") {
			rel = append(rel, f)
		}
	}
	if len(rel) == 0 {
		return ""
	}
	return fmt.Sprintf("%s looked up in ibkey's working directory: %s opens a relative name in each process's", strings.Join(rel, ", "), lib)
}

// setenvLike is confDecl.like for a library that reads a name as written: the one
// of names that name is once spaces, "export " and case are set aside.
func setenvLike(names []string) func(string) string {
	return func(name string) string {
		bare := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), "export "))
		if i := slices.IndexFunc(names, func(v string) bool { return strings.EqualFold(v, bare) }); i >= 0 {
			return names[i]
		}
		return ""
	}
}

// readConfFiles reads the files of each of d's readings with fsys, in the
// environment all (the whole environment).
func readConfFiles(d confDecl, all Env, fsys MCAFS) *ConfFiles {
	n := &ConfFiles{Values: map[string]fileSet{}, filesWin: d.filesWin}
	type file struct {
		data []byte
		ok   bool
		err  error
	}
	files := map[string]file{} // each read once: the readings share files
	var out []map[string]fileVar
	for i, r := range d.readings {
		vars := map[string]fileVar{}
		for _, name := range d.names {
			if v, ok := all[name]; ok && !d.filesWin {
				vars[name] = fileVar{fileSet: fileSet{Value: v}, set: true}
			}
		}
		// open says whether a file may still give name a value: the environment
		// does not beat it, and (the first line winning) no line or unread file
		// before decided it.
		open := func(name string) bool {
			v := vars[name]
			if d.lastWins {
				return !v.set || v.Where != ""
			}
			return !v.set && v.unknown == ""
		}
		// unknown marks every variable still open as not known, for why.
		unknown := func(why string) {
			for _, name := range d.names {
				if open(name) {
					vars[name] = fileVar{unknown: why}
				}
			}
		}
		for _, path := range r.paths {
			f, seen := files[path]
			if !seen {
				f.data, f.ok, f.err = n.read(fsys, path)
				files[path] = f
			}
			if f.err != nil {
				unknown(fmt.Sprintf("%v: %s", f.err, d.readsIt))
			}
			if !f.ok {
				continue
			}
			lines, stop := r.lines(path, f.data)
			for _, l := range lines {
				if i == 0 {
					n.lookAlike(d, path, l)
				}
				if !l.noEq && slices.Contains(d.names, l.name) && open(l.name) {
					vars[l.name] = fileVar{fileSet: fileSet{Value: l.value, Where: fmt.Sprintf("%s:%d", path, l.line)}, set: true}
				}
			}
			if stop != "" {
				maps.DeleteFunc(vars, func(_ string, v fileVar) bool { return v.Where != "" })
				unknown(stop)
				break
			}
		}
		out, n.paths = append(out, vars), append(n.paths, r.paths)
	}
	n.names, n.readings = d.names, out
	n.unknown, n.Values = unknownIn(d.names, out), fromFiles(out[0])
	return n
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
// which, libVersion.reading; -1 or nil n: n): its values, the files it opens and
// what it could not read, with no split.
func (n *ConfFiles) at(i int) *ConfFiles {
	if n == nil || i < 0 || i >= len(n.readings) {
		return n
	}
	c := *n
	c.Values, c.unknown, c.split = fromFiles(n.readings[i]), unknownIn(n.names, n.readings[i:i+1]), nil
	other := func(p string) bool { return !slices.Contains(n.paths[i], p) }
	c.Read, c.Missing = slices.DeleteFunc(slices.Clone(n.Read), other), slices.DeleteFunc(slices.Clone(n.Missing), other)
	return &c
}

// lookAlike notes a line whose name the library reads as written, which looks like
// one of its variables but is not.
func (n *ConfFiles) lookAlike(d confDecl, path string, l fileLine) {
	switch v := d.like(l.name); {
	case v == "":
	case l.noEq:
		n.LookAlikes = append(n.LookAlikes, fmt.Sprintf("%s:%d: a line without '=' sets nothing, not %s (%s reads NAME=VALUE)", path, l.line, v, d.lib))
	case !slices.Contains(d.names, l.name):
		n.LookAlikes = append(n.LookAlikes, fmt.Sprintf("%s:%d: %q is not %s: %s", path, l.line, l.name, v, d.hint))
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
// environment does not set them or the files beat it.
func (n *ConfFiles) env(e Env) Env {
	if len(n.values()) == 0 {
		return e
	}
	out := Env{}
	maps.Copy(out, e)
	for k, v := range n.Values {
		if _, ok := e[k]; !ok || n.filesWin {
			out[k] = v.Value
		}
	}
	return out
}

// unchecked says what in the files ibkey could not read, or older versions read
// otherwise, for the variables the environment e does not set (all of them when
// the files beat it).
func (n *ConfFiles) unchecked(e Env) []string {
	if n == nil {
		return nil
	}
	unset := func(vars []string) []string {
		return slices.DeleteFunc(slices.Clone(vars), func(v string) bool { _, ok := e[v]; return ok && !n.filesWin })
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
// no longer open. Not for files that beat the environment (NVSHMEM's beat an
// export too).
func (n *ConfFiles) without(name string) *ConfFiles {
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

// assumptions are what ibkey took without knowing it, for lib's answers: a file
// looked up by a relative name in ibkey's working directory (the library opens it
// in each process's), and Assumption.
func (n *ConfFiles) assumptions(lib string) (out []string) {
	for _, a := range []string{n.relative(lib), n.Assumption} {
		if a != "" {
			out = append(out, lib+": "+a)
		}
	}
	return out
}

// known reports whether the files leave variable name known (nil n: yes).
func (n *ConfFiles) known(name string) bool {
	return n == nil || !slices.ContainsFunc(n.unknown, func(u fileUnknown) bool { return slices.Contains(u.vars, name) })
}

// values are the files' settings (nil n: none).
func (n *ConfFiles) values() map[string]fileSet {
	if n == nil {
		return nil
	}
	return n.Values
}

// where says where variable name comes from when a file sets it and the environment
// e does not beat it: " (FILE:LINE)".
func (n *ConfFiles) where(e Env, name string) string {
	if _, ok := e[name]; ok && (n == nil || !n.filesWin) {
		return ""
	}
	if w := n.values()[name].Where; w != "" {
		return " (" + w + ")"
	}
	return ""
}
