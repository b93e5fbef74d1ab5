package kernellab_test

import (
	"strings"
	"testing"
)

// What a container sees, made by hand as a container runtime makes it: a network
// namespace of its own with a sysfs mounted in it (runc mounts a new sysfs; the
// RDMA device class is tagged by network namespace, drivers/infiniband/core/device.c
// ib_class.ns_type), and a /dev/infiniband holding only what the device plugin
// mounted. The gate runs as the init container does, as uid 65534.
const (
	// inPod runs a command in a new network and mount namespace with its own sysfs.
	inPod = "unshare -n -m sh -c 'mount -t sysfs sysfs /sys && "
	// noUverbs hides the uverbs device, as a pod without the device plugin's
	// resource has no /dev/infiniband/uverbsN.
	noUverbs = "unshare -m sh -c 'mount -t tmpfs tmpfs /dev/infiniband && "
	asNobody = "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "
)

func podPlan(ibkey string) []Command {
	job := asNobody + ibkey + " job --lib nccl"
	return []Command{
		// The kernel's default, shared mode: every device is in every namespace.
		{Name: "pod_shared_net", Script: inPod + "ls /sys/class/net'"},
		{Name: "pod_shared_ibv", Script: inPod + "ibv_devices'"},
		{Name: "pod_shared_job", Script: inPod + job + "'"},
		// No uverbs device: libibverbs lists nothing (try_access_device).
		{Name: "pod_nouverbs_ibv", Script: noUverbs + "ibv_devices'"},
		{Name: "pod_nouverbs_job", Script: noUverbs + job + "'"},
		// Exclusive mode (switching needs no namespace but the initial one: the ones
		// above go away asynchronously, hence the retries). rxe0 cannot be moved into
		// a namespace (no disassociate_ucontext), so the pod's namespace has none.
		{Name: "pod_exclusive", Script: `i=0; until rdma system set netns exclusive 2>/dev/null || [ $i -ge 20 ]; do sleep 0.5; i=$((i+1)); done
rdma system show; ip netns add pod; rdma dev set ` + dev + ` netns pod; echo "set_netns_exit=$?"`},
		{Name: "pod_exclusive_class", Script: "ip netns exec pod ls /sys/class/infiniband"},
		{Name: "pod_exclusive_ibv", Script: "ip netns exec pod ibv_devices"},
		{Name: "pod_exclusive_job", Script: "ip netns exec pod " + job},
	}
}

// ibvDevices lists the device names ibv_devices printed (after its two header lines).
func ibvDevices(out string) []string {
	var names []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && f[0] != "device" && !strings.HasPrefix(f[0], "-") {
			names = append(names, f[0])
		}
	}
	return names
}

// TestPodViewOnKernel: ibkey job's device list in a pod is libibverbs's. In shared
// mode a pod's own sysfs lists the node's rxe0 and libibverbs lists it too, so the
// job uses rxe0/1. Without the uverbs device, libibverbs lists nothing, and ibkey
// job says no device here can be opened by a library (exit 3): before, it answered
// for rxe0, which no library in that pod could open. In exclusive mode the pod's
// namespace holds no device, and ibkey says there is none (exit 3).
func TestPodViewOnKernel(t *testing.T) {
	if got := strings.Fields(mustSucceed(t, "pod_shared_net")); len(got) != 1 || got[0] != "lo" {
		t.Errorf("a new namespace's sysfs lists interfaces %q, want lo only (dummy0 stays outside)", got)
	}
	if got := ibvDevices(mustSucceed(t, "pod_shared_ibv")); len(got) != 1 || got[0] != dev {
		t.Errorf("shared mode: ibv_devices in the pod lists %q, want %s", got, dev)
	}
	if out := mustSucceed(t, "pod_shared_job"); !strings.Contains(out, dev+"/"+port) {
		t.Errorf("shared mode: ibkey job in the pod does not use %s/%s:\n%s", dev, port, out)
	}
	if got := ibvDevices(mustSucceed(t, "pod_nouverbs_ibv")); len(got) != 0 {
		t.Errorf("without uverbs0, ibv_devices lists %q, want none", got)
	}
	r := result(t, "pod_nouverbs_job")
	if r.Exit != 3 || !strings.Contains(r.Stderr, "no RDMA device here can be opened by a library: "+dev+": libibverbs does not list it here: /dev/infiniband/uverbs0: does not exist") {
		t.Errorf("without uverbs0, ibkey job exits %d, want 3 naming it\nstdout: %s\nstderr: %s", r.Exit, r.Stdout, r.Stderr)
	}
	ex := mustSucceed(t, "pod_exclusive")
	if !strings.Contains(ex, "netns exclusive") || !strings.Contains(ex, "set_netns_exit=") {
		t.Fatalf("exclusive mode not set: %s\n%s", ex, result(t, "pod_exclusive").Stderr)
	}
	t.Logf("rdma dev set %s netns pod: %s", dev, strings.TrimSpace(result(t, "pod_exclusive").Stderr))
	if strings.Contains(ex, "set_netns_exit=0") {
		t.Skipf("%s moved into the namespace: this kernel's rxe supports it; the checks below are for one that does not", dev)
	}
	if out := strings.TrimSpace(mustSucceed(t, "pod_exclusive_class")); out != "" {
		t.Errorf("exclusive mode, %s not moved: the pod's sysfs lists %q, want nothing", dev, out)
	}
	if got := ibvDevices(mustSucceed(t, "pod_exclusive_ibv")); len(got) != 0 {
		t.Errorf("exclusive mode: ibv_devices in the pod lists %q, want none", got)
	}
	if r := result(t, "pod_exclusive_job"); r.Exit != 3 || !strings.Contains(r.Stderr, "no RDMA devices in /sys/class/infiniband") {
		t.Errorf("exclusive mode: ibkey job in the pod exits %d, want 3 (no device)\nstdout: %s\nstderr: %s", r.Exit, r.Stdout, r.Stderr)
	}
}
