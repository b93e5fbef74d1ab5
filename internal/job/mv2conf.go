package job

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// MVAPICH2's configuration files (src/mpid/ch3/channels/common/src/util/mv2_config.c
// read_configuration_files, which MPID_Init calls first in the OFA-IB-CH3 build
// (CHANNEL_MRAIL), as mpirun_rsh does; MVAPICH2 2.3.7, from source only):
//
//   - The user's file, ~/.mvapich2.conf ($HOME; none when HOME is unset), or the
//     file MV2_USER_CONFIG names; then the system's, /etc/mvapich2.conf
//     (MV2_SYSTEM_CONFIG, compiled in). MV2_IGNORE_USER_CONFIG and
//     MV2_IGNORE_SYSTEM_CONFIG (atoi, not 0) skip one; the user's file may set the
//     second, as it is read first.
//   - Each line is trimmed of isspace; empty, or '#' first, it is nothing; else
//     PARAMETER = VALUE, both trimmed, is setenv(PARAMETER, VALUE, 0).
//   - A line without '=', or with an empty name or value, or one fgets cannot read
//     whole into BUFSIZ (8,192) bytes (a NUL before its newline too), or an
//     MV2_USER_CONFIG file fopen cannot open, makes MPID_Init print "[FILE:LINE]:
//     ..." and exit(EXIT_FAILURE): no process starts. A system file that cannot be
//     opened is skipped, as is a missing ~/.mvapich2.conf.

// mv2SystemConfig is MV2_SYSTEM_CONFIG's default.
const mv2SystemConfig = "/etc/mvapich2.conf"

// mv2BufSiz is glibc's BUFSIZ, read_config's line buffer.
const mv2BufSiz = 8192

// ReadMV2Files reads the files MVAPICH2 would read in the environment all (the whole
// environment) with fsys.
func ReadMV2Files(all Env, fsys MCAFS) *ConfFiles {
	var paths []string
	reject := ""
	user, named := all["MV2_USER_CONFIG"]
	ignoreSystem, ignoreSet := all["MV2_IGNORE_SYSTEM_CONFIG"]
	if atoi(all["MV2_IGNORE_USER_CONFIG"]) == 0 {
		if home, ok := all["HOME"]; ok && !named {
			user = home + "/.mvapich2.conf"
		}
		if named || user != "" {
			paths = append(paths, user)
			data, err := fsys.ReadFile(user)
			switch {
			case named && errors.Is(err, fs.ErrNotExist): // report_fopen_error
				reject = fmt.Sprintf("MVAPICH2 does not start: MV2_USER_CONFIG=%s names no file (\"[%s:0]: No such file or directory\", then \"Error processing configuration file\" and every process exits)", user, user)
			case err == nil && !ignoreSet:
				// The user's file may set it: setenv before read_system_config's getenv.
				for _, l := range mv2ConfLines(data, func(int, string) {}) {
					if l.name == "MV2_IGNORE_SYSTEM_CONFIG" {
						ignoreSystem = l.value
						break
					}
				}
			}
		}
	}
	if atoi(ignoreSystem) == 0 {
		paths = append(paths, mv2SystemConfig)
	}
	names := slices.Concat(MVAPICH2.Vars, MVAPICH2.Modifiers)
	n := readConfFiles(confDecl{
		names: names, readsIt: "MVAPICH2 reads it", like: setenvLike(names),
		hint: "MVAPICH2 takes the name before the '=' as written, but for spaces around it",
		readings: []confReading{{paths: paths, lines: func(path string, data []byte) ([]fileLine, string) {
			return mv2ConfLines(data, func(line int, why string) {
				if reject == "" {
					reject = fmt.Sprintf("MVAPICH2 does not start: %s line %d: %s (\"[%s:%d]: %s\", then \"Error processing configuration file\" and every process exits)", path, line, why, path, line, why)
				}
			}), ""
		}}},
	}, all, fsys)
	n.Reject = reject
	return n
}

// mv2ConfLines are the settings of one file as read_config and process_line read
// it; bad is told of the first line they refuse and why, after which MVAPICH2 reads
// nothing more.
func mv2ConfLines(data []byte, bad func(line int, why string)) []fileLine {
	var out []fileLine
	// fgets(lineptr, BUFSIZ): each line is one read, as MVAPICH2 stops at the
	// first that is not whole.
	for no, read := range fgetsLines(data, mv2BufSiz) {
		// feof: fgets met the end of the file, with no newline and fewer than
		// BUFSIZ-1 bytes left.
		eof := read[len(read)-1] != '\n' && len(read) < mv2BufSiz-1
		chunk := cString(read)
		// strchr(lineptr, '\n') || feof: a line whose C string holds no newline (one
		// too long, or a NUL before it) is refused unless the file ended there.
		if !bytes.Contains(chunk, []byte("\n")) && !eof {
			bad(no, "Line too long")
			return out
		}
		line := strings.Trim(string(chunk), cSpace)
		if line == "" || line[0] == '#' {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		key, value = strings.Trim(key, cSpace), strings.Trim(value, cSpace)
		if !ok || key == "" || value == "" {
			bad(no, "Line not of form `PARAMETER = VALUE'")
			return out
		}
		out = append(out, fileLine{name: key, value: value, line: no, nameLen: len(key)})
	}
	return out
}
