// Package kubernetes_test parses the manifests with a YAML parser, checks that their
// parts refer to each other, and runs the commands they hold with the ibkey binary:
// the init container's script on a saved host whose table holds the pod's
// partition, the main container sourcing what it wrote, the DaemonSet's exporter
// arguments. A cluster (kubelet, device plugin, Prometheus Operator) cannot run
// here; README.md says so.
package kubernetes_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ibkey/ibkey/internal/fakesysfs"
)

var ibkeyBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ibkey-k8s-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ibkeyBin = filepath.Join(dir, "ibkey")
	if out, err := exec.Command("go", "build", "-o", ibkeyBin, "github.com/ibkey/ibkey/cmd/ibkey").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Minimal shapes of the Kubernetes objects the manifests hold (only what the tests
// check).
type container struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name      string `yaml:"name"`
		ValueFrom struct {
			FieldRef struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
	Resources struct {
		Limits map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	SecurityContext *struct {
		RunAsNonRoot             bool  `yaml:"runAsNonRoot"`
		RunAsUser                int   `yaml:"runAsUser"`
		ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		Privileged               bool  `yaml:"privileged"`
		Capabilities             struct {
			Add  []string `yaml:"add"`
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
}

// readOnly reports what in c's securityContext gives ibkey more than reading: ibkey
// is read-only by construction (sysfs, Get MADs), and its containers run as a
// non-root user with no capability and no way to gain one, on a read-only root.
// The device plugin's character devices (umad, issm: 0600 root on the node) stay
// closed to that user.
func readOnly(c container) []string {
	sc := c.SecurityContext
	if sc == nil {
		return []string{"no securityContext"}
	}
	var bad []string
	if !sc.RunAsNonRoot || sc.RunAsUser == 0 {
		bad = append(bad, "not runAsNonRoot with a non-zero runAsUser")
	}
	if !sc.ReadOnlyRootFilesystem {
		bad = append(bad, "root file system writable")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Privileged {
		bad = append(bad, "privilege escalation not refused")
	}
	if len(sc.Capabilities.Add) > 0 || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		bad = append(bad, fmt.Sprintf("capabilities add %v drop %v, want drop [ALL]", sc.Capabilities.Add, sc.Capabilities.Drop))
	}
	return bad
}

// rdmaResources are the extended resources of c (a device plugin's, "vendor/name").
func rdmaResources(c container) map[string]string {
	out := map[string]string{}
	for k, v := range c.Resources.Limits {
		if strings.Contains(k, "/") {
			out[k] = v
		}
	}
	return out
}

type podSpec struct {
	HostNetwork    bool        `yaml:"hostNetwork"`
	InitContainers []container `yaml:"initContainers"`
	Containers     []container `yaml:"containers"`
	Volumes        []struct {
		Name     string    `yaml:"name"`
		EmptyDir *struct{} `yaml:"emptyDir"`
	} `yaml:"volumes"`
}

type object struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name        string            `yaml:"name"`
		Namespace   string            `yaml:"namespace"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Spec yaml.Node `yaml:"spec"`
}

// load decodes every document of a manifest, refusing fields the shapes do not know
// only at the top level (a typo in kind or metadata).
func load(t *testing.T, path string) []object {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var out []object
	for {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
			t.Fatalf("%s: a document without apiVersion, kind or name: %+v", path, o)
		}
		out = append(out, o)
	}
	return out
}

func decodeSpec(t *testing.T, n yaml.Node, v any) {
	t.Helper()
	if err := n.Decode(v); err != nil {
		t.Fatal(err)
	}
}

// The init container's script, run as the kubelet would (sh -c, the environment
// from the Downward API), on a saved host whose table holds the pod's partition;
// then the main container's script sources what it wrote.
func TestInitContainer(t *testing.T) {
	objs := load(t, "job-init-container.yaml")
	if len(objs) != 1 || objs[0].Kind != "Pod" {
		t.Fatalf("want one Pod, got %d objects", len(objs))
	}
	pod := objs[0]
	var spec podSpec
	decodeSpec(t, pod.Spec, &spec)
	if len(spec.InitContainers) != 1 || len(spec.Containers) != 1 {
		t.Fatalf("want one init container and one container")
	}
	ic, main := spec.InitContainers[0], spec.Containers[0]
	// The gate judges the devices whose uverbs device is in its own container
	// (libibverbs's list): the same RDMA resource as the main container's, whose
	// devices the kubelet reuses for it.
	if a, b := rdmaResources(ic), rdmaResources(main); len(a) == 0 || !maps.Equal(a, b) {
		t.Errorf("init container's RDMA resources %v, main container's %v: want the same", a, b)
	}
	if bad := readOnly(ic); bad != nil {
		t.Errorf("init container: %v", bad)
	}
	// The partition comes from the pod's own annotation.
	var env []string
	for _, e := range ic.Env {
		fp := e.ValueFrom.FieldRef.FieldPath
		key, ok := strings.CutPrefix(fp, "metadata.annotations['")
		key, ok2 := strings.CutSuffix(key, "']")
		if !ok || !ok2 {
			t.Fatalf("env %s: fieldPath %q is not an annotation", e.Name, fp)
		}
		v, ok := pod.Metadata.Annotations[key]
		if !ok {
			t.Fatalf("env %s reads annotation %q, which the pod does not have", e.Name, key)
		}
		env = append(env, e.Name+"="+v)
	}
	// Both containers mount the same emptyDir at the same place.
	mount := map[string]string{}
	for _, c := range []container{ic, main} {
		for _, m := range c.VolumeMounts {
			if prev, ok := mount[m.Name]; ok && prev != m.MountPath {
				t.Errorf("volume %s mounted at %s and %s", m.Name, prev, m.MountPath)
			}
			mount[m.Name] = m.MountPath
		}
	}
	if len(mount) != 1 || len(spec.Volumes) != 1 || spec.Volumes[0].EmptyDir == nil || mount[spec.Volumes[0].Name] == "" {
		t.Fatalf("the containers do not share one emptyDir: mounts %v, volumes %+v", mount, spec.Volumes)
	}
	dir := mount[spec.Volumes[0].Name]
	if len(ic.Command) != 3 || ic.Command[0] != "/bin/sh" || ic.Command[1] != "-c" {
		t.Fatalf("init container command %q: want /bin/sh -c SCRIPT", ic.Command)
	}
	shared := t.TempDir()
	script := strings.ReplaceAll(ic.Command[2], dir+"/", shared+"/")
	sys := filepath.Join(t.TempDir(), "sys")
	h := fakesysfs.MLX5()
	h.Devices = h.Devices[:1] // mlx5_0/1: 0xffff 0x8001 0x0002 0x0000 0x8005 ...
	h.Net = append(h.Net[:1], fakesysfs.NetIf{Name: "ib0.8005", Device: "mlx5_0", Type: "32",
		Address: fakesysfs.IPoIBAddress(0x1053, 0x0002c90300a1b2c1), PKey: "0x8005", Parent: "ib0", DevPort: "0", OperState: "up"})
	if err := fakesysfs.Write(sys, h); err != nil {
		t.Fatal(err)
	}
	run := func(script string, env ...string) (string, error) {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Env = append([]string{"PATH=" + filepath.Dir(ibkeyBin) + ":/usr/bin:/bin", "IBKEY_SYSFS=" + sys}, env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	// The annotation asks for 0x0042, which the host does not hold: the init
	// container fails at its timeout and writes nothing.
	short := strings.Replace(script, "--wait 120s", "--wait 1s", 1)
	if short == script {
		t.Fatalf("the script has no --wait 120s: %s", script)
	}
	out, err := run(short, env...)
	if err == nil || !strings.Contains(out, "no entry for partition 0x0042") {
		t.Errorf("partition missing: %v\n%s", err, out)
	}
	if ents, _ := os.ReadDir(shared); len(ents) != 0 {
		t.Errorf("a failed init container left %v", ents)
	}
	// A version ibkey does not take stops the gate (exit 2) and writes nothing.
	if out, err := run(script, "IBKEY_PKEY=0x0005", "IBKEY_LIB_VERSIONS=nccl=2.x"); err == nil || !strings.Contains(out, `invalid --lib-version "nccl=2.x"`) {
		t.Errorf("a bad version: %v\n%s", err, out)
	}
	// With the annotation of a partition the host holds (0x8005 at index 4), and
	// the pod's library versions.
	out, err = run(script, append(env, "IBKEY_PKEY=0x0005")...)
	if err != nil {
		t.Fatalf("init container: %v\n%s", err, out)
	}
	mainScript := strings.ReplaceAll(main.Command[2], dir+"/", shared+"/")
	mainScript = strings.Replace(mainScript, "exec python3 train.py", `echo "$NCCL_IB_PKEY $UCX_IB_PKEY $IBKEY_IPOIB_INTERFACE"`, 1)
	out, err = run(mainScript)
	if err != nil || out != "4 0x0005 ib0.8005\n" {
		t.Errorf("main container sees %q (%v), want NCCL_IB_PKEY=4, UCX_IB_PKEY=0x0005, IBKEY_IPOIB_INTERFACE=ib0.8005", out, err)
	}
}

// The DaemonSet's exporter arguments are ones ibkey takes (run once on the demo
// host), its port is the one it listens on, and the Service and ServiceMonitor find
// it by label and port name.
func TestExporterDaemonSet(t *testing.T) {
	objs := load(t, "exporter-daemonset.yaml")
	byKind := map[string]object{}
	for _, o := range objs {
		byKind[o.Kind] = o
	}
	ds, svc, sm := byKind["DaemonSet"], byKind["Service"], byKind["ServiceMonitor"]
	if ds.Kind == "" || svc.Kind == "" || sm.Kind == "" {
		t.Fatalf("want a DaemonSet, a Service and a ServiceMonitor, got %v", byKind)
	}
	var dsSpec struct {
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	}
	decodeSpec(t, ds.Spec, &dsSpec)
	podLabels := dsSpec.Template.Metadata.Labels
	if !subset(dsSpec.Selector.MatchLabels, podLabels) {
		t.Errorf("the DaemonSet's selector %v does not select its pods %v", dsSpec.Selector.MatchLabels, podLabels)
	}
	if !dsSpec.Template.Spec.HostNetwork {
		t.Errorf("without hostNetwork the exporter sees none of the node's IPoIB interfaces")
	}
	c := dsSpec.Template.Spec.Containers[0]
	if bad := readOnly(c); bad != nil {
		t.Errorf("exporter: %v", bad)
	}
	if len(c.Args) == 0 || c.Args[0] != "exporter" {
		t.Fatalf("args %q: want ibkey exporter ...", c.Args)
	}
	listen := ""
	for i, a := range c.Args {
		if a == "--listen" && i+1 < len(c.Args) {
			listen = c.Args[i+1]
		}
	}
	if len(c.Ports) != 1 || !strings.HasSuffix(listen, fmt.Sprintf(":%d", c.Ports[0].ContainerPort)) || strings.HasPrefix(listen, "127.") {
		t.Errorf("--listen %q and containerPort %+v: the exporter must listen on the port, not on loopback only", listen, c.Ports)
	}
	// Exit 4 is the demo host's violation counters, which host mode without
	// --portinfo does not read; every other code is the arguments'.
	cmd := exec.Command(ibkeyBin, append([]string{"--demo"}, append(c.Args, "--once")...)...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 4 && bytes.Contains(out, []byte("ibkey: pkey_violations, qkey_violations not read on")) {
		err = nil
	}
	if err != nil || !bytes.Contains(out, []byte("ibkey_pkey_entry_info{")) {
		t.Errorf("ibkey --demo %s --once: %v\n%s", strings.Join(c.Args, " "), err, out)
	}
	var svcSpec struct {
		Selector map[string]string `yaml:"selector"`
		Ports    []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
	}
	decodeSpec(t, svc.Spec, &svcSpec)
	if !subset(svcSpec.Selector, podLabels) || len(svcSpec.Ports) != 1 || svcSpec.Ports[0].TargetPort != c.Ports[0].Name {
		t.Errorf("the Service does not reach the exporter's pods or port: %+v", svcSpec)
	}
	var smSpec struct {
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		NamespaceSelector struct {
			MatchNames []string `yaml:"matchNames"`
		} `yaml:"namespaceSelector"`
		Endpoints []struct {
			Port string `yaml:"port"`
		} `yaml:"endpoints"`
	}
	decodeSpec(t, sm.Spec, &smSpec)
	if sm.APIVersion != "monitoring.coreos.com/v1" || !subset(smSpec.Selector.MatchLabels, svc.Metadata.Labels) ||
		len(smSpec.Endpoints) != 1 || smSpec.Endpoints[0].Port != svcSpec.Ports[0].Name ||
		len(smSpec.NamespaceSelector.MatchNames) != 1 || smSpec.NamespaceSelector.MatchNames[0] != svc.Metadata.Namespace {
		t.Errorf("the ServiceMonitor does not select the Service's metrics port: %+v, service labels %v", smSpec, svc.Metadata.Labels)
	}
}

func subset(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// An SR-IOV pod as ib-sriov-cni (rdmaIsolation: the kernel's exclusive RDMA
// namespace mode) and ib-kubernetes leave it before the init container runs: its
// sysfs holds only its VF (mlx5_4), whose IPoIB interface the CNI renamed net1, with
// the GUID ib-kubernetes chose. Until the SM brings the VF's port up, the gate waits
// and writes nothing; once the SM has programmed the VF's own table with the
// partition at index 0 (UFM plugin: "index0": true, full member), the main
// container gets index 0, the key, and net1.
func TestInitContainerSRIOVVF(t *testing.T) {
	pod := load(t, "job-init-container.yaml")[0]
	var spec podSpec
	decodeSpec(t, pod.Spec, &spec)
	ic, main := spec.InitContainers[0], spec.Containers[0]
	dir := ic.VolumeMounts[0].MountPath
	shared := t.TempDir()
	script := strings.ReplaceAll(ic.Command[2], dir+"/", shared+"/")
	mainScript := strings.ReplaceAll(main.Command[2], dir+"/", shared+"/")
	mainScript = strings.Replace(mainScript, "exec python3 train.py", `echo "$NCCL_IB_PKEY $UCX_IB_PKEY $IBKEY_IPOIB_INTERFACE"`, 1)
	const vfGUID = 0x0200000000000017 // from ib-kubernetes's pool (GUID_POOL_RANGE_START 02:00:...)
	vf := func(state string, table ...string) fakesysfs.Host {
		p := fakesysfs.Port{Num: 1, State: state, PhysState: "5: LinkUp", LID: "0x2a", SMLID: "0x1", LMC: "0",
			Rate: "200 Gb/sec (4X HDR)", LinkLayer: "InfiniBand", GIDs: []string{fakesysfs.GID0(vfGUID)},
			PKeys: fakesysfs.Table(64, table...)}
		return fakesysfs.Host{
			Devices: []fakesysfs.Device{{Name: "mlx5_4", PCI: "0000:03:00.5", NodeType: "1: CA", NodeGUID: fakesysfs.GUID(vfGUID),
				Driver: "mlx5_core", Ports: []fakesysfs.Port{p}}},
			Net: []fakesysfs.NetIf{{Name: "net1", Device: "mlx5_4", Type: "32", Address: fakesysfs.IPoIBAddress(0x1044, vfGUID),
				PKey: "0x8042", DevPort: "0", OperState: "up"}},
		}
	}
	run := func(h fakesysfs.Host, script string, env ...string) (string, error) {
		t.Helper()
		sys := filepath.Join(t.TempDir(), "sys")
		if err := fakesysfs.Write(sys, h); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Env = append([]string{"PATH=" + filepath.Dir(ibkeyBin) + ":/usr/bin:/bin", "IBKEY_SYSFS=" + sys}, env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	short := strings.Replace(script, "--wait 120s", "--wait 1s", 1)
	out, err := run(vf("2: INIT"), short, "IBKEY_PKEY=0x0042")
	if err == nil || !strings.Contains(out, "\n  this host: mlx5_4/1: port is INIT, not ACTIVE") || strings.Contains(out, "this host: this host") {
		t.Errorf("VF port INIT: %v\n%s", err, out)
	}
	t.Logf("VF port INIT:\n%s", out)
	if ents, _ := os.ReadDir(shared); len(ents) != 0 {
		t.Errorf("a failed init container left %v", ents)
	}
	if out, err = run(vf("4: ACTIVE", "0x8042"), script, "IBKEY_PKEY=0x0042"); err != nil {
		t.Fatalf("init container: %v\n%s", err, out)
	}
	if out, err = run(vf("4: ACTIVE", "0x8042"), mainScript); err != nil || out != "0 0x0042 net1\n" {
		t.Errorf("main container sees %q (%v), want NCCL_IB_PKEY=0, UCX_IB_PKEY=0x0042, IBKEY_IPOIB_INTERFACE=net1", out, err)
	}
}
