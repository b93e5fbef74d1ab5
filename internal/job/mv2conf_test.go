package job

import (
	"fmt"
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
