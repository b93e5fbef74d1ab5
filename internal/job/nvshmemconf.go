package job

import (
	"bytes"
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
//     environment, the opposite of NCCL's and MVAPICH2's setenv(..., 0)
//     (confDecl.filesWin and lastWins).
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

// ReadNVSHMEMFiles reads the files NVSHMEM (3.6.5 and later) would read in the
// environment all (the whole environment) with fsys.
func ReadNVSHMEMFiles(all Env, fsys MCAFS) *ConfFiles {
	return readConfFiles(confDecl{
		names: nvshmemVars, filesWin: true, lastWins: true,
		readsIt: "NVSHMEM 3.6.5 and later read it, and it beats the environment",
		like:    nvshmemLookAlike, lib: "NVSHMEM",
		hint: "NVSHMEM takes the text before the '=' as the name, exactly (spaces around it are dropped)",
		readings: []confReading{{paths: nvshmemConfPaths(all), lines: func(_ string, data []byte) ([]fileLine, string) {
			lines, noEq := nvshmemConfLines(data)
			for i := range noEq {
				noEq[i].noEq = true
			}
			return append(lines, noEq...), ""
		}}},
	}, all, fsys)
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
	for no, line := range fgetsLines(b, 4096) {
		line = bytes.TrimRight(cString(line), "\r\n")
		line = bytes.Trim(line, cSpace)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		key, value, ok := bytes.Cut(line, []byte("="))
		if !ok {
			word := strings.Trim(strings.Fields(string(line))[0], ":")
			noEq = append(noEq, fileLine{name: word, line: no})
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
		out = append(out, fileLine{name: string(key), value: string(value), line: no})
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
