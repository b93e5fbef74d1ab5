package job

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// NVSHMEM's configuration files (NVIDIA/nvshmem src/include/bootstrap_host_transport/
// env_defs_internal.h: nvshmemi_conf_get, nvshmemi_conf_parse_file,
// nvshmemi_getenv_helper; the NVSHMEM 3.6.5 release notes: "Added configuration file
// support"; v3.5.0 and v3.4.5 have none, and the 3.5.19 and 3.5.21 notes name none):
//
//   - The files, read once, in order: /etc/nvshmem.conf; "$HOME/.nvshmem.conf" when
//     HOME is set and not empty and the path fits 4,096 bytes (snprintf); then
//     $NVSHMEM_CONF_FILE when it is set and not empty. HOME and NVSHMEM_CONF_FILE
//     come from the environment only. A file fopen cannot open is skipped.
//   - Each KEY=VALUE is stored, a later one (in the same file or a later file)
//     replacing an earlier one (nvshmemi_conf_set): the last line wins.
//   - Every NVSHMEM variable is looked up in the files first and in the environment
//     only when no file sets it (nvshmemi_getenv_helper): the files beat the
//     environment, the opposite of NCCL's and MVAPICH2's setenv(..., 0), which is
//     why SetenvFiles is not used here.
//   - A line is read by fgets into 4,096 bytes (a longer one is read as several),
//     ends at a NUL (strlen), loses every trailing '\n' and '\r' and is trimmed of
//     isspace. Empty, or '#' first, it is nothing; without '=' it is nothing. The
//     key is the trimmed text before the first '=' (empty: nothing), the value the
//     trimmed text after it, cut at a '#' that follows a space (not its first
//     character), trimmed again. Keys are the variables' full names, compared
//     exactly (strcmp).

// nvshmemConfPathMax is the size of nvshmemi_conf_get's user_path.
const nvshmemConfPathMax = 4096

// nvshmemConfSince is the first release that reads the files (its release notes);
// nvshmemConfNone is the one after the last release known not to (3.5.21's notes):
// a version between the two is not placed.
const (
	nvshmemConfSince = "3.6.5"
	nvshmemConfNone  = "3.5.22"
)

// NVSHMEMFiles are NVSHMEM's configuration files as read for a job's environment.
type NVSHMEMFiles struct {
	// Values are the settings of NVSHMEM's variables (NVSHMEM.Vars) the files give:
	// the last line that sets each. They beat the environment.
	Values map[string]fileSet
	// Read are the files read (NVSHMEM skips one it cannot open; ibkey one that does
	// not exist).
	Read []string
	// unknown are why variables are not known: a file that could not be read, and
	// the variables no later file sets.
	unknown []fileUnknown
	// LookAlikes are lines that look like one of NVSHMEM's variables but set none.
	LookAlikes []string
}

// ReadNVSHMEMFiles reads the files NVSHMEM (3.6.5 and later) would read in the
// environment all (the whole environment) with fsys.
func ReadNVSHMEMFiles(all Env, fsys MCAFS) *NVSHMEMFiles {
	f := &NVSHMEMFiles{Values: map[string]fileSet{}}
	unknown := map[string]string{} // variable: why not known
	for _, path := range nvshmemConfPaths(all) {
		data, err := fsys.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			// It may set any variable, replacing what earlier files set.
			for _, name := range nvshmemVars {
				delete(f.Values, name)
				unknown[name] = fmt.Sprintf("%v: NVSHMEM 3.6.5 and later read it, and it beats the environment", err)
			}
			continue
		}
		f.Read = append(f.Read, path)
		lines, noEq := nvshmemConfLines(data)
		for _, l := range lines {
			if slices.Contains(nvshmemVars, l.name) {
				f.Values[l.name] = fileSet{Value: l.value, Where: fmt.Sprintf("%s:%d", path, l.line)}
				delete(unknown, l.name)
			} else if v := nvshmemLookAlike(l.name); v != "" {
				f.LookAlikes = append(f.LookAlikes, fmt.Sprintf("%s:%d: %q is not %s: NVSHMEM takes the text before the '=' as the name, exactly (spaces around it are dropped)", path, l.line, l.name, v))
			}
		}
		for _, l := range noEq {
			if v := nvshmemLookAlike(l.name); v != "" {
				f.LookAlikes = append(f.LookAlikes, fmt.Sprintf("%s:%d: a line without '=' sets nothing, not %s (NVSHMEM reads NAME=VALUE)", path, l.line, v))
			}
		}
	}
	for _, name := range nvshmemVars {
		if why, ok := unknown[name]; ok {
			i := slices.IndexFunc(f.unknown, func(u fileUnknown) bool { return u.why == why })
			if i < 0 {
				f.unknown = append(f.unknown, fileUnknown{why: why})
				i = len(f.unknown) - 1
			}
			f.unknown[i].vars = append(f.unknown[i].vars, name)
		}
	}
	return f
}

// nvshmemConfPaths are the paths nvshmemi_conf_get opens, in order, for the
// environment all.
func nvshmemConfPaths(all Env) []string {
	out := []string{"/etc/nvshmem.conf"}
	if home := all["HOME"]; home != "" && len(home)+len("/.nvshmem.conf") < nvshmemConfPathMax {
		out = append(out, home+"/.nvshmem.conf")
	}
	if f := all["NVSHMEM_CONF_FILE"]; f != "" {
		out = append(out, f)
	}
	return out
}

// nvshmemConfLines are the KEY=VALUE settings of one file as
// nvshmemi_conf_parse_file reads them, in order (the last of a key wins); noEq are
// the lines it skips for want of '=', by their first word (for look-alikes).
func nvshmemConfLines(b []byte) (out, noEq []fileLine) {
	for i, line := range bytes.SplitAfter(b, []byte("\n")) {
		for len(line) > 0 {
			chunk := line[:min(len(line), nvshmemConfPathMax-1)] // fgets
			line = line[len(chunk):]
			if k := bytes.IndexByte(chunk, 0); k >= 0 {
				chunk = chunk[:k]
			}
			chunk = bytes.TrimRight(chunk, "\r\n")
			chunk = bytes.Trim(chunk, cSpace)
			if len(chunk) == 0 || chunk[0] == '#' {
				continue
			}
			key, value, ok := bytes.Cut(chunk, []byte("="))
			if !ok {
				word := strings.Trim(strings.Fields(string(chunk))[0], ":")
				noEq = append(noEq, fileLine{name: word, line: i + 1})
				continue
			}
			key, value = bytes.Trim(key, cSpace), bytes.Trim(value, cSpace)
			if len(key) == 0 {
				continue
			}
			for c := 1; c < len(value); c++ {
				if value[c] == '#' && strings.IndexByte(cSpace, value[c-1]) >= 0 {
					value = bytes.Trim(value[:c], cSpace)
					break
				}
			}
			out = append(out, fileLine{name: string(key), value: string(value), line: i + 1})
		}
	}
	return out, noEq
}

// nvshmemLookAlike is the variable of NVSHMEM's that key, which NVSHMEM reads as
// written, looks like but is not ("" when none): another case, "export ", quotes, or
// no NVSHMEM_ prefix.
func nvshmemLookAlike(key string) string {
	bare := strings.TrimPrefix(key, "export ")
	bare = strings.Trim(strings.TrimSpace(bare), "\"'")
	if !strings.HasPrefix(strings.ToUpper(bare), "NVSHMEM_") {
		bare = "NVSHMEM_" + bare
	}
	i := slices.IndexFunc(nvshmemVars, func(v string) bool { return strings.EqualFold(v, bare) })
	if i < 0 {
		return ""
	}
	return nvshmemVars[i]
}

// env is the job's variables as NVSHMEM 3.6.5 and later take them: the files', then
// the environment's where no file sets them (nil f: e).
func (f *NVSHMEMFiles) env(e Env) Env {
	if f == nil || len(f.Values) == 0 {
		return e
	}
	out := Env{}
	for k, v := range e {
		out[k] = v
	}
	for k, v := range f.Values {
		out[k] = v.Value
	}
	return out
}

// unchecked says what in the files ibkey could not read: the variables it leaves
// not known, whatever the environment sets (the files beat it).
func (f *NVSHMEMFiles) unchecked() []string {
	if f == nil {
		return nil
	}
	var out []string
	for _, u := range f.unknown {
		if len(u.vars) == 1 {
			out = append(out, fmt.Sprintf("%s, so %s is not known", u.why, u.vars[0]))
		} else {
			out = append(out, fmt.Sprintf("%s, so %s are not known", u.why, strings.Join(u.vars, ", ")))
		}
	}
	return out
}

// known reports whether the files leave variable name known (nil f: yes).
func (f *NVSHMEMFiles) known(name string) bool {
	return f == nil || !slices.ContainsFunc(f.unknown, func(u fileUnknown) bool { return slices.Contains(u.vars, name) })
}

// where says where variable name comes from when a file sets it: " (FILE:LINE)".
func (f *NVSHMEMFiles) where(name string) string {
	if f == nil {
		return ""
	}
	if w := f.Values[name].Where; w != "" {
		return " (" + w + ")"
	}
	return ""
}
