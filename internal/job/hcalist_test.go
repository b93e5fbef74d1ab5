package job

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// The libraries' own device-list code is not kept here: hcaListSources takes it
// from their sources, function by function, and hcaListHarness (ours) calls it.
// From NVIDIA/nccl: struct netIf (src/include/utils.h), MAX_IB_DEVS
// (src/transport/net_ib/common.h), parseStringList, matchIf, matchPort and matchIfList
// (src/misc/utils.cc). From NVIDIA/nvshmem: struct nvshmemt_hca_info and
// nvshmemt_parse_hca_list (src/modules/transport/common/transport_common.h and .cpp),
// MAX_NUM_HCAS and MAX_NUM_PES_PER_NODE (src/modules/transport/ibrc/ibrc.cpp).
type hcaListSource struct {
	git   string // a git directory of the repository (IBKEY_NCCL_GIT, IBKEY_NVSHMEM_GIT)
	file  string
	names []string // functions, structs ("struct X") and macros ("#define X") to take
}

var hcaListSources = []hcaListSource{
	{"nccl", "src/include/utils.h", []string{"struct netIf"}},
	{"nccl", "src/transport/net_ib/common.h", []string{"#define MAX_IB_DEVS"}},
	{"nccl", "src/misc/utils.cc", []string{"parseStringList", "matchIf", "matchPort", "matchIfList"}},
	{"nvshmem", "src/modules/transport/common/transport_common.h", []string{"struct nvshmemt_hca_info"}},
	{"nvshmem", "src/modules/transport/ibrc/ibrc.cpp", []string{"#define MAX_NUM_HCAS", "#define MAX_NUM_PES_PER_NODE"}},
	{"nvshmem", "src/modules/transport/common/transport_common.cpp", []string{"nvshmemt_parse_hca_list"}},
}

// hcaListHarness calls the libraries' code as they do. For each input line ("x" +
// hex of a value) it prints which of hcaListPorts each library uses: NCCL with
// NCCL_IB_HCA set to it ('^' then '=', as ncclIbInitDevices in
// src/transport/net_ib/init.cc), NVSHMEM with NVSHMEM_HCA_LIST, with
// NVSHMEM_HCA_PE_MAPPING, and with the value as the list and "mlx5_1" as the mapping
// (the list, else the mapping, and the port filter, as ibrc.cpp's init).
const hcaListHarness = `
static const char *devs[] = {"mlx5_0", "mlx5_0", "mlx5_1", "mlx5_10", "ib0", "rxe0"};
static const int ports[] = {1, 2, 1, 1, 1, 1};
#define NPORTS 6

static void nccl(const char *env) {
	struct netIf list[MAX_IB_DEVS];
	bool not = env[0] == '^';
	if (not) env++;
	bool exact = env[0] == '=';
	if (exact) env++;
	int n = parseStringList(env, list, MAX_IB_DEVS);
	putchar(' ');
	for (int d = 0; d < NPORTS; d++) {
		int id;
		putchar((matchIfList(devs[d], ports[d], list, n, exact, &id) ^ not) ? '1' : '0');
	}
}

static void nvshmem(const char *list, const char *mapping) {
	struct nvshmemt_hca_info l[MAX_NUM_HCAS], m[MAX_NUM_PES_PER_NODE];
	int nl = 0, nm = 0, not = 0;
	if (list) {
		not = list[0] == '^';
		nl = nvshmemt_parse_hca_list(list, l, MAX_NUM_HCAS, 0);
	}
	if (mapping && !nl) nm = nvshmemt_parse_hca_list(mapping, m, MAX_NUM_PES_PER_NODE, 0);
	putchar(' ');
	for (int d = 0; d < NPORTS; d++) {
		int allowed = 1;
		if (nl) {
			allowed = not;
			for (int j = 0; j < nl; j++)
				if (!strcmp(l[j].name, devs[d]) && (l[j].port == -1 || l[j].port == ports[d])) allowed = !not;
		} else if (nm) {
			allowed = 0;
			for (int j = 0; j < nm; j++)
				if (!strcmp(m[j].name, devs[d]) && (m[j].port == -1 || m[j].port == ports[d])) allowed = 1;
		}
		putchar(allowed ? '1' : '0');
	}
}

static int hexval(int c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

int main(void) {
	static char line[16384], s[8192];
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = 0;
		size_t k = 0;
		for (size_t i = 1; line[i] && line[i + 1]; i += 2) s[k++] = (char)(hexval(line[i]) * 16 + hexval(line[i + 1]));
		s[k] = 0;
		printf("%s", line);
		nccl(s);
		nvshmem(s, NULL);
		nvshmem(NULL, s);
		nvshmem(s, "mlx5_1");
		putchar('\n');
	}
	return 0;
}
`

// hcaListProgram builds the C program from the libraries' sources, or says why it
// cannot (a repository not found).
func hcaListProgram(t *testing.T) (string, error) {
	gitDirs := map[string]string{
		"nccl":    cmp.Or(os.Getenv("IBKEY_NCCL_GIT"), "/work/.mirror/NVIDIA+nccl/repo"),
		"nvshmem": cmp.Or(os.Getenv("IBKEY_NVSHMEM_GIT"), "/work/.mirror/NVIDIA+nvshmem/repo"),
	}
	var b strings.Builder
	b.WriteString("#define _DEFAULT_SOURCE\n#include <stdbool.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n")
	// What the taken code calls that is not taken: NCCL's strsep wrapper and logging.
	b.WriteString("#define ncclOsStrSep strsep\n#define INFO(...)\n")
	for _, src := range hcaListSources {
		out, err := exec.Command("git", "--git-dir="+gitDirs[src.git], "show", "HEAD:"+src.file).Output()
		if err != nil {
			return "", fmt.Errorf("%s from %s: %v", src.file, gitDirs[src.git], err)
		}
		for _, name := range src.names {
			code, err := cDefinition(string(out), name)
			if err != nil {
				return "", fmt.Errorf("%s: %v", src.file, err)
			}
			b.WriteString(code + "\n")
		}
		t.Logf("%s %s: %s", src.git, src.file, strings.Join(src.names, ", "))
	}
	return b.String() + hcaListHarness, nil
}

// cDefinition finds a definition in C or C++ source: a "#define NAME" line, a
// "struct NAME {...};", or a function NAME(...) {...} at the start of a line, its body
// up to the matching brace (the code taken has no brace in a string or comment).
func cDefinition(src, name string) (string, error) {
	if strings.HasPrefix(name, "#define ") {
		for line := range strings.Lines(src) {
			if f := strings.Fields(line); len(f) >= 3 && f[0] == "#define" && f[1] == strings.TrimPrefix(name, "#define ") {
				return line, nil
			}
		}
		return "", fmt.Errorf("no %s", name)
	}
	start := -1
	for off, line := range lineOffsets(src) {
		if strings.HasPrefix(name, "struct ") && strings.HasPrefix(line, name+" {") ||
			!strings.HasPrefix(name, "struct ") && !strings.HasPrefix(line, " ") && strings.Contains(line, " "+name+"(") && !strings.HasSuffix(strings.TrimSpace(line), ";") {
			start = off
			break
		}
	}
	if start < 0 {
		return "", fmt.Errorf("no definition of %s", name)
	}
	open := strings.IndexByte(src[start:], '{')
	depth := 0
	for i := start + open; i < len(src); i++ {
		switch src[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				end := i + 1
				if strings.HasPrefix(name, "struct ") {
					end++ // the ';'
				}
				return src[start:end], nil
			}
		}
	}
	return "", fmt.Errorf("%s: no closing brace", name)
}

// lineOffsets yields each line of s with its offset.
func lineOffsets(s string) func(func(int, string) bool) {
	return func(yield func(int, string) bool) {
		off := 0
		for line := range strings.Lines(s) {
			if !yield(off, line) {
				return
			}
			off += len(line)
		}
	}
}

// hcaListPorts are the ports the device lists are matched against: a prefix of
// another name (mlx5_1, mlx5_10), a device with two ports, and RoCE-style names.
var hcaListPorts = []struct {
	dev  string
	port int
}{{"mlx5_0", 1}, {"mlx5_0", 2}, {"mlx5_1", 1}, {"mlx5_10", 1}, {"ib0", 1}, {"rxe0", 1}}

// hcaListInputs are generated device lists: names, prefixes and lookalikes, ports
// (atoi: signs, text, 2^32+1), counts, empty items, '^' and '=' anywhere, a space
// after a comma and the CR a CRLF-saved file leaves, and lists longer than NCCL's 32
// and NVSHMEM's 32 and 48 entries. No name is longer than 63 bytes (NVSHMEM copies a
// longer one past its buffer: the job says not checked).
func hcaListInputs() []string {
	rng := rand.New(rand.NewPCG(23, 2026))
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	in := []string{"", "^", "=", "^=", "=^", ",", ",,", ":", "^:1", "mlx5_0", "=mlx5_1", "mlx5_1", "^mlx5_1:1", "mlx5_0:2:3,rxe0"}
	for _, n := range []int{31, 32, 33, 47, 48, 49} {
		in = append(in, strings.Repeat("ib9,", n)+"mlx5_0", strings.Repeat("ib9:1:1,", n)+"mlx5_1:1")
	}
	for len(in) < 3000 {
		var b strings.Builder
		b.WriteString(pick("", "", "", "^", "=", "^=", " "))
		for i := range rng.IntN(6) {
			if i > 0 {
				b.WriteString(pick(",", ",", ",", ", ", ",,", ":", "\r,"))
			}
			b.WriteString(pick("mlx5_0", "mlx5_1", "mlx5_10", "mlx5", "mlx5_", "ib0", "ib", "rxe0", "rxe", "MLX5_0", "", "^mlx5_0", "=ib0", " ib0", "mlx5_0\r"))
			if rng.IntN(2) == 0 {
				b.WriteString(":" + pick("1", "2", "0", "", "-1", "x", "1x", "+2", " 1", "4294967297", "1\r", "01"))
				if rng.IntN(3) == 0 {
					b.WriteString(":" + pick("1", "2", "", "y"))
					if rng.IntN(2) == 0 {
						b.WriteString(":" + pick("0", "1", ""))
					}
				}
			}
		}
		b.WriteString(pick("", "", "", ",", ":", "\r", " "))
		in = append(in, b.String())
	}
	return in
}

// ibkeyHCALists is what ibkey says for one input, in hcaListProgram's format: NCCL
// and NVSHMEM configured from the environment as a job's are, and each port asked.
func ibkeyHCALists(s string) string {
	var out strings.Builder
	out.WriteString("x" + hex.EncodeToString([]byte(s)))
	for _, c := range []struct {
		lib Library
		env Env
	}{
		{NCCL, Env{"NCCL_IB_HCA": s}},
		{NVSHMEM, Env{"NVSHMEM_HCA_LIST": s}},
		{NVSHMEM, Env{"NVSHMEM_HCA_PE_MAPPING": s}},
		{NVSHMEM, Env{"NVSHMEM_HCA_LIST": s, "NVSHMEM_HCA_PE_MAPPING": "mlx5_1"}},
	} {
		var st setup
		c.lib.configure(Inputs{Env: c.env}, &st)
		out.WriteByte(' ')
		for _, p := range hcaListPorts {
			ok, _ := st.allows(nil, p.dev, p.port)
			out.WriteString(map[bool]string{false: "0", true: "1"}[ok])
		}
	}
	return out.String()
}

// TestHCAListsAgainstLibraries runs NCCL_IB_HCA, NVSHMEM_HCA_LIST and
// NVSHMEM_HCA_PE_MAPPING values through the libraries' own parsing code (taken from
// their sources and compiled with the system's C compiler) and through ibkey's model,
// and compares the ports each selects. Without the sources or a compiler the
// committed table (testdata/TestHCAListsAgainstLibraries.golden, what the libraries'
// code gave) is compared; `-update` rewrites it and needs both.
func TestHCAListsAgainstLibraries(t *testing.T) {
	var input, got bytes.Buffer
	for _, s := range hcaListInputs() {
		fmt.Fprintln(&input, "x"+hex.EncodeToString([]byte(s)))
		fmt.Fprintln(&got, ibkeyHCALists(s))
	}
	update := flag.Lookup("update") != nil && flag.Lookup("update").Value.String() == "true"
	cc, err := exec.LookPath("cc")
	var prog string
	if err == nil {
		prog, err = hcaListProgram(t)
	}
	switch {
	case err != nil && update:
		t.Fatalf("-update needs a C compiler and the libraries' sources: %v", err)
	case err != nil:
		t.Logf("only the committed table is compared: %v", err)
	default:
		want, code := runC(t, cc, prog, &input)
		if code != 0 {
			t.Fatalf("the C program exited %d", code)
		}
		if string(want) != got.String() {
			w, g := strings.Split(string(want), "\n"), strings.Split(got.String(), "\n")
			bad := 0
			for i := range min(len(w), len(g)) {
				if w[i] != g[i] && bad < 10 {
					bad++
					s, _ := hex.DecodeString(strings.Fields(w[i])[0][1:])
					t.Errorf("%q: libraries %s, ibkey %s (NCCL_IB_HCA, NVSHMEM_HCA_LIST, _PE_MAPPING, list then mapping mlx5_1; ports %v)",
						s, strings.Fields(w[i])[1:], strings.Fields(g[i])[1:], hcaListPorts)
				}
			}
			if bad == 0 {
				t.Fatalf("the libraries gave %d lines, ibkey %d", len(w), len(g))
			}
			t.FailNow()
		}
	}
	golden.RequireEqual(t, got.String())
}

// A NVSHMEM list entry longer than its 63-byte name buffer is not checked: the
// library writes past the buffer.
func TestNVSHMEMHCAListLongName(t *testing.T) {
	var st setup
	NVSHMEM.configure(Inputs{Env: Env{"NVSHMEM_HCA_LIST": strings.Repeat("m", 64) + ",mlx5_0"}}, &st)
	if len(st.Unchecked) != 1 || !strings.Contains(st.Unchecked[0], "64 bytes") {
		t.Errorf("unchecked %q, want the 64-byte name", st.Unchecked)
	}
	st = setup{}
	NVSHMEM.configure(Inputs{Env: Env{"NVSHMEM_HCA_LIST": strings.Repeat("m", 63) + ",mlx5_0"}}, &st)
	if len(st.Unchecked) != 0 {
		t.Errorf("a 63-byte name: unchecked %q", st.Unchecked)
	}
}
