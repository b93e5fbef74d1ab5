package job

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// osMCA reads files as the OS does; no /etc/openmpi (the tests set OPAL_SYSCONFDIR).
type osMCA struct{}

func (osMCA) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }
func (osMCA) IsDir(string) bool                    { return false }

// mcaLines are the parameter file lines the comparison draws from: the variables
// ibkey reads under their short and long names and synonyms, valid and refused
// values, comments, quotes and odd spacing.
var mcaLines = []string{
	"btl_openib_pkey = 0x11", "btl_openib_ib_pkey_val=0x12", "opal_btl_openib_pkey   =   19", "ompi_btl_openib_ib_pkey_val = 0x14",
	" \t btl_openib_pkey\t=\t0x15  \t", `btl_openib_pkey = "0x16"`, "btl_openib_pkey = 0x17 # not a comment", "btl_openib_pkey = -1",
	"btl_openib_pkey =", "btl_openib_pkey = 0x18\r", "# btl_openib_pkey = 0x19", "// pml = cm", "",
	"btl = ^openib", "btl=self,vader", "btl = 'self,openib'", "opal_btl = self,openib,vader  ", "btl =", "btl = ^tcp,^openib",
	"pml = ucx", "pml=", "pml = ob1  ", "ompi_pml = cm", "pml = \"ob1\"",
	"btl_openib_allow_ib = yes", "btl_openib_allow_ib = junk", "btl_openib_allow_ib=0", "opal_btl_openib_allow_ib = true", "btl_openib_allow_ib = 1 # c",
}

// mcaEnv are the environment settings the comparison draws from.
var mcaEnv = []string{
	"OMPI_MCA_btl_openib_pkey=0x21", "OMPI_MCA_btl_openib_ib_pkey_val=0x22", "OMPI_MCA_opal_btl_openib_pkey=0x23", "OMPI_MCA_btl_openib_pkey=5g",
	"OMPI_MCA_btl=self,openib", "OMPI_MCA_opal_btl=^openib", "OMPI_MCA_pml=ob1", "OMPI_MCA_btl_openib_allow_ib=1", "OMPI_MCA_btl_openib_allow_ib=maybe",
}

// TestMCAFilesAgainstOmpiInfo compares ibkey's reading of Open MPI's MCA parameter
// files (ReadMCAFiles, ompiResolve) with the real Open MPI 4.1's: generated files in
// $HOME, sysconfdir (OPAL_SYSCONFDIR), the override file and a list of files
// (mca_base_param_files, its synonym mca_param_files, "none"), with the
// environment, and the values ompi_info shows for btl_openib_pkey (with its
// synonym ib_pkey_val), btl_openib_allow_ib, btl and pml, and where a string was
// set from a file.
func TestMCAFilesAgainstOmpiInfo(t *testing.T) {
	bin := ompiInfo(t)
	pick := func(i, n, k int, from []string) []string {
		var out []string
		for j := range n {
			out = append(out, from[(i*7+j*k+i*j*3)%len(from)])
		}
		return out
	}
	checked := 0
	for i := range 80 {
		home, sysconf, other := t.TempDir(), t.TempDir(), t.TempDir()
		write := func(path string, lines []string) {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(filepath.Join(home, ".openmpi", "mca-params.conf"), pick(i, 1+i%4, 5, mcaLines))
		write(filepath.Join(sysconf, "openmpi-mca-params.conf"), pick(i+3, 1+i%3, 11, mcaLines))
		if i%3 == 0 {
			write(filepath.Join(sysconf, "openmpi-mca-params-override.conf"), pick(i+5, 1+i%2, 13, mcaLines))
		}
		a, b := filepath.Join(other, "a.conf"), filepath.Join(other, "b.conf")
		write(a, pick(i+7, 2, 3, mcaLines))
		write(b, pick(i+9, 3, 17, mcaLines))
		env := []string{"HOME=" + home, "OPAL_SYSCONFDIR=" + sysconf}
		switch i % 5 {
		case 1:
			env = append(env, "OMPI_MCA_mca_base_param_files="+a+","+b)
		case 2:
			env = append(env, "OMPI_MCA_mca_param_files="+b+","+a+","+filepath.Join(other, "missing.conf"))
		case 3:
			env = append(env, "OMPI_MCA_mca_base_param_files=none")
		case 4:
			// "~/" is $HOME/ at the start of a list (var_set_string), not after a comma.
			c := filepath.Join(home, "p", "c.conf")
			write(c, pick(i+11, 2, 5, mcaLines))
			env = append(env, "OMPI_MCA_mca_base_param_files=~/p/c.conf,~/p/c.conf,"+a)
			if i%10 == 9 {
				env[len(env)-1] = "OMPI_MCA_mca_param_files=~/p/c.conf"
			}
		}
		env = append(env, pick(i+1, i%4, 7, mcaEnv)...)
		all := Env{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			all[k] = v
		}
		in := Inputs{Env: all, MCA: ReadMCAFiles(all, osMCA{})}
		if len(in.MCA.Unread) > 0 {
			continue // openib is not checked (what a line says is not interpreted)
		}
		checked++
		got, _, source, err := ompiRun(bin, env)
		var s setup
		OpenMPI.configure(in, &s)
		allow, _, _ := ompiAllowIB(in)
		btl, _ := ompiGet(in, "OMPI_MCA_opal_btl", "OMPI_MCA_btl")
		pml, _ := ompiGet(in, "OMPI_MCA_ompi_pml", "OMPI_MCA_pml")
		if strings.Contains(strings.TrimLeft(btl.Value, "^"), "^") {
			// ompi_info 4.1.4 crashes opening the BTLs ("too-many-negates").
			if err == nil {
				t.Errorf("case %d, %v: ibkey says Open MPI refuses the btl list, ompi_info shows btl %q", i, env, got["btl"])
			}
			continue
		}
		if err != nil {
			t.Fatalf("case %d: ompi_info with %v: %v", i, env, err)
		}
		files, _ := os.ReadFile(filepath.Join(home, ".openmpi", "mca-params.conf"))
		for _, c := range []struct {
			name, want string
			from       ompiSet
		}{
			{"btl_openib_pkey", strconv.Itoa(s.value), ompiSet{}},
			{"btl_openib_allow_ib", strconv.FormatBool(allow), ompiSet{}},
			{"btl", btl.Value, btl},
			{"pml", pml.Value, pml},
		} {
			if got[c.name] != c.want {
				t.Errorf("case %d, %v, home file %q: Open MPI's %s is %q, ibkey reads %q", i, env, files, c.name, got[c.name], c.want)
			}
			if c.from.File != "" && !c.from.Override && source[c.name] != fmt.Sprintf("file (%s:%d)", c.from.File, c.from.Line) {
				t.Errorf("case %d, %v: Open MPI's %s is from %s, ibkey reads it from %s line %d", i, env, c.name, source[c.name], c.from.File, c.from.Line)
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d cases of 80 compared", checked)
	}
}
