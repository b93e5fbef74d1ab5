package job

import (
	"strings"
	"testing"
)

// A settings file named by a relative path (NCCL_CONF_FILE, MV2_USER_CONFIG,
// NVSHMEM_CONF_FILE, or a relative HOME) is opened by fopen in each process's
// working directory (NCCL src/misc/param.cc setEnvFile, MVAPICH2 mv2_config.c
// read_configuration_files, NVSHMEM env_defs_internal.h nvshmemi_conf_get); ibkey
// looked in its own. The answer says so, read or not there, as Open MPI's does
// (TestOmpiFilesNoteRelative).
func TestConfFilesRelative(t *testing.T) {
	ports := []*Port{port("h", "mlx5_0", 1, 0xffff, 0x8002)}
	for _, c := range []struct {
		lib  *Library
		in   func(fsys MCAFS) Inputs
		name string
	}{
		{&NCCL, func(fsys MCAFS) Inputs {
			all := Env{"NCCL_CONF_FILE": "rel.conf"}
			return Inputs{Env: Env{}, NCCL: ReadNCCLFiles(all, fsys, "/home/u", true)}
		}, "NCCL"},
		{&MVAPICH2, func(fsys MCAFS) Inputs {
			all := Env{"MV2_USER_CONFIG": "rel.conf", "MV2_IGNORE_SYSTEM_CONFIG": "1"}
			return Inputs{Env: Env{}, MV2: ReadMV2Files(all, fsys)}
		}, "MVAPICH2"},
		{&NVSHMEM, func(fsys MCAFS) Inputs {
			all := Env{"NVSHMEM_CONF_FILE": "rel.conf"}
			return Inputs{Env: Env{}, NVSHMEM: ReadNVSHMEMFiles(all, fsys)}
		}, "NVSHMEM"},
	} {
		want := "rel.conf looked up in ibkey's working directory: " + c.name + " opens a relative name in each process's"
		for _, there := range []bool{true, false} {
			fsys := mapFS{files: map[string]string{}}
			if there {
				fsys.files["rel.conf"] = "OTHER=1\n"
			}
			if c.name == "MVAPICH2" && !there {
				continue // MVAPICH2 stops when MV2_USER_CONFIG names no file
			}
			r := Resolve([]*Library{c.lib}, c.in(fsys), ports)[0]
			if !strings.Contains(strings.Join(r.Assumptions, "\n"), c.name+": "+want) {
				t.Errorf("%s, file there %v: %q", c.name, there, r.Assumptions)
			}
		}
	}
	// An absolute path is not said.
	in := Inputs{Env: Env{}, NCCL: ReadNCCLFiles(Env{"NCCL_CONF_FILE": "/abs.conf"}, mapFS{}, "/home/u", true)}
	if r := Resolve([]*Library{&NCCL}, in, ports)[0]; strings.Contains(strings.Join(r.Assumptions, "\n"), "working directory") {
		t.Errorf("an absolute path: %q", r.Assumptions)
	}
}

// UCX likewise for $HOME/ucx.conf and $UCX_CONFIG_DIR/ucx.conf under a relative
// name (ucs_config_parse_config_files fopens them as they are); ./ucx.conf keeps its
// own note.
func TestUCXFilesRelative(t *testing.T) {
	u := ReadUCXFiles(Env{"HOME": "/home/u", "UCX_CONFIG_DIR": "cfg"}, mapMCA{files: map[string]string{"cfg/ucx.conf": "UCX_TLS=rc\n"}})
	got := ucxFilesNote(u)
	if !strings.Contains(got, "; cfg/ucx.conf looked up in ibkey's working directory: UCX opens a relative name in each process's") || strings.Contains(got, "./ucx.conf looked up") || !strings.Contains(got, "./ucx.conf is ibkey's working directory's") {
		t.Errorf("%s", got)
	}
	if got := ucxFilesNote(ReadUCXFiles(Env{"HOME": "/home/u"}, mapMCA{})); strings.Contains(got, "looked up in ibkey's working directory") {
		t.Errorf("absolute paths: %s", got)
	}
}

// With the job's NCCL version the note names only the files that version opens:
// NCCL before 2.23 does not read NCCL_CONF_FILE.
func TestConfFilesRelativeVersion(t *testing.T) {
	ports := []*Port{port("h", "mlx5_0", 1, 0xffff, 0x8002)}
	fsys := mapFS{files: map[string]string{"rel.conf": "OTHER=1\n"}}
	in := Inputs{Env: Env{}, NCCL: ReadNCCLFiles(Env{"NCCL_CONF_FILE": "rel.conf"}, fsys, "/home/u", true)}
	for version, want := range map[string]bool{"2.18.3": false, "2.23.4": true, "2.30.7": true} {
		v, _ := ParseVersion(version)
		in.Versions = Versions{"nccl": v}
		r := Resolve([]*Library{&NCCL}, in, ports)[0]
		if got := strings.Contains(strings.Join(r.Assumptions, "\n"), "rel.conf looked up in ibkey's working directory"); got != want {
			t.Errorf("NCCL %s: said %v, want %v: %q", version, got, want, r.Assumptions)
		}
	}
}
