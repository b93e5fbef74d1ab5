package job

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

func TestMV2ConfLines(t *testing.T) {
	long := strings.Repeat("x", mv2BufSiz-1)
	for _, c := range []struct {
		name, in, want, bad string
	}{
		{"trimmed", "  MV2_DEFAULT_PKEY = 0x8001 \r\n", "MV2_DEFAULT_PKEY=0x8001@1", ""},
		{"comments and blank lines", "# x\n\n   # y = 1\n\t\nA=1\n", "A=1@5", ""},
		{"no final newline", "A=1\nB = 2", "A=1@1 B=2@2", ""},
		{"first '=' splits", "A = b = c\n", "A=b = c@1", ""},
		{"export stays in the name", "export A=1\n", "export A=1@1", ""},
		{"no '='", "A=1\nB\nC=3\n", "A=1@1", "2: Line not of form `PARAMETER = VALUE'"},
		{"empty value", "A =  \n", "", "1: Line not of form `PARAMETER = VALUE'"},
		{"empty name", " = 1\n", "", "1: Line not of form `PARAMETER = VALUE'"},
		// fgets(BUFSIZ): a line fgets cannot read whole, unless the file ends there.
		{"long line", long + "=1\nA=1\n", "", "1: Line too long"},
		{"8,190 bytes at the end", "A=" + strings.Repeat("v", mv2BufSiz-4), "A=" + strings.Repeat("v", mv2BufSiz-4) + "@1", ""},
		{"8,191 bytes at the end", "A=" + strings.Repeat("v", mv2BufSiz-3), "", "1: Line too long"},
		{"a NUL hides the newline", "A=1\x00x\nB=2\n", "", "1: Line too long"},
		{"a NUL in the last line", "B=2\nA=1\x00x", "B=2@1 A=1@2", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			bad := ""
			for _, l := range mv2ConfLines([]byte(c.in), func(line int, why string) { bad = fmt.Sprint(line) + ": " + why }) {
				got = append(got, fmt.Sprintf("%s=%s@%d", l.name, l.value, l.line))
			}
			if strings.Join(got, " ") != c.want || bad != c.bad {
				t.Errorf("%q, bad %q; want %q, bad %q", strings.Join(got, " "), bad, c.want, c.bad)
			}
		})
	}
}

func TestReadMV2Files(t *testing.T) {
	const home, etc = "/home/u", "/etc/mvapich2.conf"
	user := home + "/.mvapich2.conf"
	t.Run("environment, user, system", func(t *testing.T) {
		fsys := mapFS{files: map[string]string{user: "MV2_DEFAULT_PKEY = 0x8002\n", etc: "MV2_DEFAULT_PKEY=0x8003\nMV2_IBA_HCA=mlx5_1\nMV2_DEFAULT_PORT=1\n"}}
		n := ReadMV2Files(Env{"HOME": home, "MV2_DEFAULT_PORT": "2"}, fsys)
		if fmt.Sprint(n.Values) != fmt.Sprint(map[string]fileSet{"MV2_DEFAULT_PKEY": {"0x8002", user + ":1"}, "MV2_IBA_HCA": {"mlx5_1", etc + ":2"}}) || n.Reject != "" {
			t.Errorf("%+v", n)
		}
	})
	t.Run("ignored files", func(t *testing.T) {
		fsys := mapFS{files: map[string]string{user: "MV2_DEFAULT_PKEY=0x8002\n", etc: "MV2_IBA_HCA=mlx5_1\n"}}
		if n := ReadMV2Files(Env{"HOME": home, "MV2_IGNORE_USER_CONFIG": "1"}, fsys); len(n.Read) != 1 || n.Read[0] != etc {
			t.Errorf("%+v", n)
		}
		if n := ReadMV2Files(Env{"HOME": home, "MV2_IGNORE_SYSTEM_CONFIG": "yes"}, fsys); len(n.Read) != 2 { // atoi("yes") is 0
			t.Errorf("%+v", n)
		}
		// The user's file may say to ignore the system's; the environment wins.
		fsys.files[user] += "MV2_IGNORE_SYSTEM_CONFIG = 1\n"
		if n := ReadMV2Files(Env{"HOME": home}, fsys); len(n.Read) != 1 || n.Read[0] != user {
			t.Errorf("%+v", n)
		}
		if n := ReadMV2Files(Env{"HOME": home, "MV2_IGNORE_SYSTEM_CONFIG": "0"}, fsys); len(n.Read) != 2 {
			t.Errorf("%+v", n)
		}
		// No HOME: no user file.
		if n := ReadMV2Files(Env{}, fsys); len(n.Read) != 1 || n.Read[0] != etc {
			t.Errorf("%+v", n)
		}
	})
	t.Run("MV2_USER_CONFIG", func(t *testing.T) {
		fsys := mapFS{files: map[string]string{"/job.conf": "MV2_DEFAULT_PKEY=0x8004\n", user: "MV2_DEFAULT_PKEY=0x8002\n"}}
		if n := ReadMV2Files(Env{"HOME": home, "MV2_USER_CONFIG": "/job.conf"}, fsys); n.Values["MV2_DEFAULT_PKEY"].Value != "0x8004" || n.Reject != "" {
			t.Errorf("%+v", n)
		}
		// A file it names that does not exist, or empty, stops every process.
		for _, f := range []string{"/nofile", ""} {
			if n := ReadMV2Files(Env{"HOME": home, "MV2_USER_CONFIG": f}, fsys); !strings.Contains(n.Reject, "MV2_USER_CONFIG="+f+" names no file") {
				t.Errorf("%q: %+v", f, n)
			}
		}
	})
	t.Run("a bad line stops every process", func(t *testing.T) {
		fsys := mapFS{files: map[string]string{etc: "MV2_DEFAULT_PKEY=0x8002\nMV2_IBA_HCA mlx5_0\n"}}
		n := ReadMV2Files(Env{"MV2_DEFAULT_PKEY": "0x8001"}, fsys)
		if !strings.Contains(n.Reject, "MVAPICH2 does not start: /etc/mvapich2.conf line 2: Line not of form `PARAMETER = VALUE'") {
			t.Errorf("%+v", n)
		}
	})
	t.Run("unread", func(t *testing.T) {
		fsys := mapFS{deny: []string{etc}}
		n := ReadMV2Files(Env{"MV2_DEFAULT_PKEY": "0x8001"}, fsys)
		if u := n.unchecked(Env{"MV2_DEFAULT_PKEY": "0x8001"}); len(u) != 1 || !strings.Contains(u[0], "permission denied: MVAPICH2 reads it, so MV2_DEFAULT_PKEY_IX, MV2_IBA_HCA") || strings.Contains(u[0], "MV2_DEFAULT_PKEY,") {
			t.Errorf("%q", u)
		}
	})
	t.Run("look-alikes", func(t *testing.T) {
		fsys := mapFS{files: map[string]string{etc: "mv2_default_pkey = 0x8002\nexport MV2_IBA_HCA=mlx5_0\n"}}
		if n := ReadMV2Files(Env{}, fsys); len(n.LookAlikes) != 2 || len(n.Values) != 0 {
			t.Errorf("%+v", n)
		}
	})
}

// TestMV2FilesChangeTheVerdict: the files' MV2_DEFAULT_PKEY is MVAPICH2's key, the
// environment's wins, a bad line stops the job whatever the key (the gate exports
// nothing), and a gate's export beats the files.
func TestMV2FilesChangeTheVerdict(t *testing.T) {
	ports := []*Port{port("h", "mlx5_0", 1, 0xffff, 0x8002)}
	fsys := mapFS{files: map[string]string{"/etc/mvapich2.conf": "MV2_DEFAULT_PKEY = 0x8005\n"}}
	in := Inputs{Env: Env{}, MV2: ReadMV2Files(Env{}, fsys)}
	r := Resolve([]*Library{&MVAPICH2}, in, ports)[0]
	if r.Verdict != DoesNotWork || !strings.Contains(r.Setting, "MV2_DEFAULT_PKEY=0x8005 (/etc/mvapich2.conf:1)") {
		t.Errorf("%s: %s", r.Verdict, r.Setting)
	}
	if !MVAPICH2.Mentioned(in) {
		t.Error("a file's MV2_DEFAULT_PKEY does not mention MVAPICH2")
	}
	if w := WantPartition([]*Library{&MVAPICH2}, in, check.PKey(0x8002), ports)[0]; w.Verdict != Works {
		t.Errorf("gate: %s: %s %q", w.Verdict, w.Setting, w.Unchecked)
	}
	in.Env["MV2_DEFAULT_PKEY"] = "0x8002"
	if r := Resolve([]*Library{&MVAPICH2}, in, ports)[0]; r.Verdict != Works {
		t.Errorf("the environment does not win: %s: %s", r.Verdict, r.Setting)
	}
	fsys.files["/etc/mvapich2.conf"] += "oops\n"
	in.MV2 = ReadMV2Files(in.Env, fsys)
	if r := Resolve([]*Library{&MVAPICH2}, in, ports)[0]; r.Verdict != DoesNotWork || !strings.Contains(r.Setting, "MVAPICH2 does not start") {
		t.Errorf("a bad line: %s: %s", r.Verdict, r.Setting)
	}
	if w := WantPartition([]*Library{&MVAPICH2}, in, check.PKey(0x8002), ports)[0]; w.Verdict != DoesNotWork {
		t.Errorf("gate with a bad line: %s: %s", w.Verdict, w.Setting)
	}
}

// mv2LinesProgram is read_config's loop and process_line's checks (mv2_config.c,
// MVAPICH2 2.3.7), written here, run on glibc: its fgets into BUFSIZ bytes, feof,
// strchr and isspace. For each file named on stdin it prints each setting as
// " HEX(name)=HEX(value)@LINE", then " badN:long" or " badN:form" where MVAPICH2
// stops.
const mv2LinesProgram = `
#include <ctype.h>
#include <stdio.h>
#include <string.h>
static char *trim(char *s) {
	while (isspace((unsigned char)*s)) s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1])) n--;
	s[n] = 0;
	return s;
}
static void hex(const char *s) { for (; *s; s++) printf("%02x", (unsigned char)*s); }
int main(void) {
	char path[4096];
	while (fgets(path, sizeof path, stdin)) {
		path[strcspn(path, "\n")] = 0;
		FILE *f = fopen(path, "r");
		char b[BUFSIZ];
		int n = 0;
		while (f && fgets(b, BUFSIZ, f)) {
			n++;
			if (!(strchr(b, '\n') || feof(f))) { printf(" bad%d:long", n); break; }
			char *line = trim(b), *eq = strchr(line, '=');
			if (!line[0] || line[0] == '#') continue;
			if (!eq) { printf(" bad%d:form", n); break; }
			*eq = 0;
			char *k = trim(line), *v = trim(eq + 1);
			if (!k[0] || !v[0]) { printf(" bad%d:form", n); break; }
			printf(" "); hex(k); printf("="); hex(v); printf("@%d", n);
		}
		if (f) fclose(f);
		printf("\n");
	}
	return BUFSIZ == 8192 ? 0 : 3;
}
`

// TestMV2ConfLinesAgainstLibc reads generated files with mv2ConfLines and with
// read_config's loop on glibc (mv2LinesProgram): white space of every kind, '#',
// '=' anywhere, empty names and values, NULs, and lines around BUFSIZ, with and
// without a final newline.
func TestMV2ConfLinesAgainstLibc(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc)")
	}
	rng := rand.New(rand.NewPCG(7, 2026))
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	dir := t.TempDir()
	var input bytes.Buffer
	var got []string
	for i := range 400 {
		var b strings.Builder
		for range rng.IntN(5) {
			b.WriteString(pick("", " ", "\t", "\r", "\v", "\f", "#", "  # x = 1") + pick("MV2_DEFAULT_PKEY", "A", "", "A B", "=") +
				pick("", " ", "\t") + pick("=", "=", " = ", "", "==") + pick("", " ", "\r") + pick("0x8001", "1", "", "v w", "#2", "\x00x", strings.Repeat("z", 8186+rng.IntN(8))) +
				pick("\n", "\n", "\r\n", "\n\n", ""))
		}
		path := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&input, path)
		var line strings.Builder
		stop := ""
		for _, l := range mv2ConfLines([]byte(b.String()), func(no int, why string) {
			stop = fmt.Sprintf(" bad%d:%s", no, map[string]string{"Line too long": "long", "Line not of form `PARAMETER = VALUE'": "form"}[why])
		}) {
			fmt.Fprintf(&line, " %x=%x@%d", l.name, l.value, l.line)
		}
		got = append(got, line.String()+stop)
	}
	out, code := runC(t, cc, mv2LinesProgram, &input)
	if code == 3 {
		t.Skip("BUFSIZ is not 8192 here (not glibc)")
	}
	want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(want) != len(got) {
		t.Fatalf("glibc gave %d lines, ibkey %d", len(want), len(got))
	}
	bad := 0
	for i := range want {
		if want[i] != got[i] {
			data, _ := os.ReadFile(filepath.Join(dir, fmt.Sprint(i)))
			t.Errorf("file %d (%q):\nglibc %s\nibkey %s", i, data[:min(len(data), 200)], want[i][:min(len(want[i]), 300)], got[i][:min(len(got[i]), 300)])
			if bad++; bad == 5 {
				break
			}
		}
	}
}
