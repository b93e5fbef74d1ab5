package job

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
)

// TestMain lets this test binary be the MPI program of TestComponentListsAgainstMPIInit:
// with IBKEY_TEST_MPI_INIT set it only runs MPI_Init and MPI_Finalize.
func TestMain(m *testing.M) {
	if os.Getenv("IBKEY_TEST_MPI_INIT") != "" {
		os.Exit(mpiInit())
	}
	os.Exit(m.Run())
}

// mpiInit calls the real Open MPI's MPI_Init(NULL, NULL) and MPI_Finalize, loaded
// from Debian's libopenmpi3 (what openmpi-bin depends on; no compiler or headers
// needed), and prints "init ok" when MPI_Init returned. Open MPI prints its own error
// and exits when MPI_Init fails.
func mpiInit() int {
	lib, err := purego.Dlopen("libmpi.so.40", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dlopen libmpi.so.40:", err)
		return 3
	}
	var initFn func(argc, argv uintptr) int32
	var finalize func() int32
	purego.RegisterLibFunc(&initFn, lib, "MPI_Init")
	purego.RegisterLibFunc(&finalize, lib, "MPI_Finalize")
	if rc := initFn(0, 0); rc != 0 {
		fmt.Fprintln(os.Stderr, "MPI_Init returned", rc)
		return 1
	}
	fmt.Println("init ok")
	finalize()
	return 0
}

// Open MPI reads the btl and pml lists' names as they are (ompiSelects): a name no
// component can have (a space after a comma, the CR of a file saved with CRLF line
// ends) in an include list stops MPI_Init, and ibkey says Open MPI refuses the list;
// the same name excluded ('^') excludes nothing. Generated lists, each run by the
// real mpirun (Open MPI 4.1.4) on this binary (TestMain), which must fail at
// MPI_Init with "A requested component was not found" exactly where ibkey says so.
func TestComponentListsAgainstMPIInit(t *testing.T) {
	ompiInfo(t) // skipped (failed under CI) without Debian's openmpi-bin
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatal("ompi_info but no mpirun:", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(4, 2026))
	btlNames := []string{"self", "vader", "tcp", "openib", " vader", "tcp ", "vader\r", "self\r", ""}
	pmlNames := []string{"ob1", "cm", " ob1", "ob1\r"}
	list := func(pool []string, n int) string {
		var names []string
		for range n {
			names = append(names, pool[r.IntN(len(pool))])
		}
		s := strings.Join(names, ",")
		if r.IntN(4) == 0 {
			s = "^" + s
		}
		return s
	}
	type listCase struct {
		btl, pml string
		both     bool // btl_openib_if_include and _if_exclude both set
		allow    bool // btl_openib_allow_ib=1
	}
	cases := []listCase{{btl: "self,vader", allow: true}, {btl: "self,vader\r", allow: true}, {pml: " ob1", allow: true},
		{btl: "^vader\r", allow: true}, {btl: "self, vader", pml: "cm"}, {btl: "self,vader,openib", both: true},
		{btl: "self,vader", both: true, allow: true}}
	for range 10 {
		c := listCase{btl: "self," + list(btlNames, 1+r.IntN(2)), both: r.IntN(4) == 0, allow: r.IntN(3) > 0}
		if r.IntN(3) == 0 {
			c.btl = list(btlNames, 1+r.IntN(3))
		}
		if r.IntN(3) == 0 {
			c.pml = list(pmlNames, 1)
		}
		cases = append(cases, c)
	}
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "IBKEY_TEST_MPI_INIT=1",
		"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_mca_base_param_files=none", "OPAL_SYSCONFDIR=" + t.TempDir()}
	refused := 0 // by a component not found or not opened
	for _, c := range cases {
		env := Env{}
		for k, v := range map[string]string{"OMPI_MCA_btl": c.btl, "OMPI_MCA_pml": c.pml} {
			if v != "" {
				env[k] = v
			}
		}
		if c.both {
			env["OMPI_MCA_btl_openib_if_include"], env["OMPI_MCA_btl_openib_if_exclude"] = "mlx5_0", "mlx5_1"
		}
		if c.allow {
			env["OMPI_MCA_btl_openib_allow_ib"] = "1"
		}
		var s setup
		OpenMPI.configure(Inputs{Env: env}, &s)
		says := strings.Contains(s.Reject, "is named") || strings.Contains(s.Reject, "unable to be opened")

		// Open MPI's diagnostics do not always reach mpirun (show_help.c: "ORTE_ERROR_LOG:
		// Data unpack would read past end of buffer" in their place): run again then.
		var out []byte
		var fails, notFound bool
		for try := 0; try < 4; try++ {
			cmd := exec.Command(mpirun, "-np", "1", self)
			cmd.Env = base
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, _ = cmd.CombinedOutput()
			fails = !strings.Contains(string(out), "init ok")
			notFound = strings.Contains(string(out), "A requested component was not found") || strings.Contains(string(out), `Returned "Not found" (-13)`)
			if !fails || notFound || strings.Contains(string(out), "single negation operator") {
				break
			}
		}
		if fails != (s.Reject != "") || notFound != says {
			t.Errorf("%+v: ibkey refuses: %q; the real MPI_Init fails: %v, a component not found or opened: %v\n%s", c, s.Reject, fails, notFound, out)
		}
		if notFound {
			refused++
		}
	}
	if refused == 0 || refused == len(cases) {
		t.Errorf("%d of %d cases refused: the generator must give both", refused, len(cases))
	}
}
