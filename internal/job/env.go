// Package job answers "which partition will my job actually use?": it reads the P_Key
// settings of the communication libraries HPC and AI jobs run on (NCCL, UCX, NVSHMEM,
// GASNet, MVAPICH2, Open MPI, perftest), resolves each against the P_Key tables of the
// ports the library would use, and says whether the partitions they land in can talk
// across the job's hosts; the inverse (Want) gives the settings that put every library
// in one partition.
//
// Every library rule cites the library's own source (file and function) next to it.
// The package is pure: ports and settings in, resolutions and findings out.
package job

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Env is the job's environment: variable name to value. Only the variables the
// libraries read matter; others are kept and ignored.
type Env map[string]string

// Names returns the variable names in order.
func (e Env) Names() []string { return slices.Sorted(maps.Keys(e)) }

// envError is a malformed setting line where ("argument 2", "job.env:7"): a KEY=VALUE
// argument or a line of --env FILE.
func envError(where, input, problem string) error {
	return fmt.Errorf("%s: invalid setting %q: %s (accepted: KEY=VALUE, e.g. NCCL_IB_PKEY=1; in a file also 'export KEY=VALUE' and # comments)", where, input, problem)
}

// ParseAssignment reads one KEY=VALUE. The key is a shell variable name; the value may
// be quoted with '...' or "..." as in a shell or an env file.
func ParseAssignment(where, s string) (string, string, error) {
	key, value, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", envError(where, s, "no '='")
	}
	if !validName(key) {
		return "", "", envError(where, s, fmt.Sprintf("%q is not a variable name (letters, digits and _, not starting with a digit)", key))
	}
	if n := len(value); n >= 2 && (value[0] == '"' || value[0] == '\'') && value[n-1] == value[0] {
		value = value[1 : n-1]
	}
	return key, value, nil
}

// validName reports whether s is a shell variable name: letters, digits and _, not
// starting with a digit (POSIX, Base Definitions 3.235 "Name").
func validName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0
}

// maxEnvLine bounds one line of an env file.
const maxEnvLine = 64 << 10

// ReadEnvFile reads the job's settings as a shell env file writes them: KEY=VALUE
// lines, `export KEY=VALUE`, quotes, '#' comment lines and blank lines. name labels
// errors. This is not how NCCL reads its nccl.conf files (ReadNCCLFiles: no quotes,
// no export, spaces kept), which are read as NCCL reads them with settings from the
// environment.
func ReadEnvFile(name string, r io.Reader) (Env, error) {
	env := Env{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxEnvLine)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(strings.TrimSuffix(sc.Text(), "\r"))
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		text = strings.TrimPrefix(text, "export ")
		k, v, err := ParseAssignment(fmt.Sprintf("%s:%d", name, line), strings.TrimSpace(text))
		if err != nil {
			return nil, err
		}
		env[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, envError(fmt.Sprintf("%s:%d", name, line+1), "", err.Error())
	}
	return env, nil
}
