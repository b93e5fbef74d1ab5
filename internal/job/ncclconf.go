package job

import (
	"bytes"
	"fmt"
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
	since    string // the first release of the reading ("" the oldest)
	confFile bool   // NCCL_CONF_FILE replaces ~/.nccl.conf (2.23)
	pwHome   bool   // ~ is getpwuid's home directory, not $HOME (before 2.30)
	fgets    bool   // fgets into 4,096 bytes and a CR dropped (2.30)
	// overflow: a name longer than 1,023 bytes is written past envVar[1024]
	// (envVar[s] = '\0'; std::min from 2.23.4): what follows is undefined.
	overflow bool
}

var ncclReadings = []ncclReading{
	{versions: "NCCL 2.30 and later", since: "2.30", confFile: true, fgets: true},
	{versions: "NCCL 2.23 to 2.29", since: "2.23", confFile: true, pwHome: true},
	{versions: "NCCL before 2.23", pwHome: true, overflow: true},
}

// ReadNCCLFiles reads the files NCCL would read in the environment all (the whole
// environment) with fsys, each reading (ncclReadings) to its variables. pwHome is
// the home directory the password database gives the user, pwOK whether it could
// be looked up (NCCL before 2.30 reads ~/.nccl.conf there).
func ReadNCCLFiles(all Env, fsys MCAFS, pwHome string, pwOK bool) *ConfFiles {
	assumption := ""
	if !pwOK {
		pwHome, pwOK = all["HOME"]
		assumption = "NCCL before 2.30 reads ~/.nccl.conf in the home directory the password database gives, which ibkey could not look up: it read $HOME's for every version"
		if !pwOK {
			assumption = "NCCL before 2.30 reads ~/.nccl.conf in the home directory the password database gives, which ibkey could not look up (nor is HOME set): that file was not read"
		}
	}
	d := confDecl{
		names: ncclNames(), readsIt: "NCCL reads it", like: setenvLike(ncclNames()),
		hint: "NCCL takes everything before the '=' as the name (NAME=VALUE, nothing around the '=')",
	}
	for _, r := range ncclReadings {
		d.readings = append(d.readings, confReading{paths: r.files(all, pwHome, pwOK), lines: func(path string, data []byte) ([]fileLine, string) {
			lines := ncclConfLines(data, r.fgets)
			if r.overflow {
				if i := slices.IndexFunc(lines, func(l fileLine) bool { return l.nameLen > 1023 }); i >= 0 {
					return lines[:i], fmt.Sprintf("%s:%d: a name over 1,023 bytes, which %s writes past its buffer (setEnvFile)", path, lines[i].line, r.versions)
				}
			}
			return lines, ""
		}})
	}
	n := readConfFiles(d, all, fsys)
	n.Assumption = assumption
	readings := n.readings
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
			n.split = append(n.split, fileUnknown{fmt.Sprintf("%s from NCCL's files: %s, %s in %s", name, strings.Join(older, ", "), now.describe(), ncclReadings[0].versions), []string{name}})
		}
	}
	return n
}

// ncclSame says whether two readings of variable name agree for ibkey's purpose:
// NCCL_IB_PKEY by the index it gives, NCCL_IB_DISABLE by its number, the others by
// their text.
func ncclSame(name string, a, b fileVar) bool {
	switch name {
	case "NCCL_IB_PKEY": // unset and empty are both index 0
		i, _ := ncclIndex(Env{name: a.Value}, "")
		j, _ := ncclIndex(Env{name: b.Value}, "")
		return i == j
	case "NCCL_IB_DISABLE":
		return ncclInt(a.Value, 0) == ncclInt(b.Value, 0)
	}
	return a.set == b.set && a.Value == b.Value
}

// ncclNames are the variables NCCL reads that ibkey interprets.
func ncclNames() []string { return slices.Concat(NCCL.Vars, NCCL.Modifiers) }

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
func ncclConfLines(b []byte, fgets bool) []fileLine {
	var out []fileLine
	size := 0 // getline
	if fgets {
		size = 4096
	}
	for no, line := range fgetsLines(b, size) {
		line = bytes.TrimSuffix(cString(line), []byte("\n"))
		if fgets {
			line = bytes.TrimSuffix(line, []byte("\r"))
		}
		name, value, ok := bytes.Cut(line, []byte("="))
		if !ok || len(name) == 0 || name[0] == '#' {
			continue
		}
		out = append(out, fileLine{
			name:    string(name[:min(len(name), 1023)]),
			value:   string(value[:min(len(value), 1023)]),
			line:    no,
			nameLen: len(name),
		})
	}
	return out
}
