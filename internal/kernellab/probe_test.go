package kernellab_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/verbs"
	"github.com/ibkey/ibkey/internal/query"
)

// The probe is this test binary run in the guest under the name probe (TestMain
// dispatches on it): build builds it on the host with CGO_ENABLED=0, once as it is
// and once with ibkey_static, and the guest sees it through the shared root. Each
// subcommand prints one JSON object on stdout, which the tests decode into the same
// types and compare with the kernel's own tools:
//
//	probe verbs DEV PORT               ibkey's verbs reader: devices, port attributes, P_Key 0
//	probe watch DEV PORT -- CMD ARGS   the sampler with the verbs source, one sample
//	                                   before and one after running CMD (traffic), and
//	                                   the tracker's deltas
//	probe umad DEV PORT                the umad interface: ibkey's OpenUmad, and a GMP
//	                                   round trip between two agents on the port
//	probe maxpkeys DEV PORT            query.Host.MaxPKeys: the device's max_pkeys
func probeMain(args []string) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: probe verbs|watch|umad|maxpkeys DEV PORT [-- CMD...]")
		return 2
	}
	dev := args[1]
	port, err := strconv.Atoi(args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe: bad port:", err)
		return 2
	}
	var out any
	switch args[0] {
	case "verbs":
		out = runVerbs(dev, port)
	case "watch":
		if len(args) < 5 || args[3] != "--" {
			fmt.Fprintln(os.Stderr, "usage: probe watch DEV PORT -- CMD ARGS")
			return 2
		}
		out = runWatch(dev, port, args[4:])
	case "umad":
		out = runUmad(dev, port)
	case "maxpkeys":
		out = runMaxPKeys(dev) // maxpkeys_kernel_test.go
	default:
		fmt.Fprintln(os.Stderr, "probe: unknown subcommand", args[0])
		return 2
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		return 1
	}
	return 0
}

type verbsResult struct {
	Available bool              `json:"available"`
	Error     string            `json:"error,omitempty"`
	Devices   []string          `json:"devices"`
	Port      *verbs.PortAttr   `json:"port,omitempty"`
	PKey0     string            `json:"pkey0,omitempty"`
	Steps     map[string]string `json:"steps"`
}

func runVerbs(dev string, port int) verbsResult {
	r := verbsResult{Available: verbs.Available, Steps: map[string]string{}}
	l, err := verbs.Open()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer l.Close()
	if r.Devices, err = l.DeviceNames(); err != nil {
		r.Error = err.Error()
		return r
	}
	d, err := l.OpenDevice(dev)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer d.Close()
	a, err := d.QueryPort(port)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Port = &a
	if pk, err := d.QueryPKey(port, 0); err != nil {
		r.Steps["query_pkey"] = err.Error()
	} else {
		r.PKey0 = fmt.Sprintf("0x%04x", pk)
	}
	if _, err := d.QueryPort(port + 1); err != nil {
		r.Steps["query_port_missing"] = err.Error()
	}
	if _, err := l.OpenDevice(dev + "x"); err != nil {
		r.Steps["open_missing"] = err.Error()
	}
	return r
}

type counterJSON struct {
	Name        string `json:"name"`
	Source      string `json:"source"`
	Value       uint64 `json:"value"`
	HasDelta    bool   `json:"has_delta"`
	Delta       uint64 `json:"delta"`
	Unavailable string `json:"unavailable,omitempty"`
	Err         string `json:"error,omitempty"`
}

type watchResult struct {
	Error   string        `json:"error,omitempty"`
	Before  []counterJSON `json:"before"`
	After   []counterJSON `json:"after"`
	Traffic string        `json:"traffic"`
}

func runWatch(dev string, port int, traffic []string) watchResult {
	var r watchResult
	h := &query.Host{Sys: ibverbs.Open("/sys")}
	s, err := query.NewSampler(h, []query.Selector{{Device: dev, Port: port, HasPort: true}}, time.Now)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	vc := query.LocalVerbs(h) // as ibkey builds it: with the devices' drivers
	defer vc.Close()
	s.PreferVerbs(vc)
	tr := query.NewTracker()
	conv := func(snap *query.Snapshot) []counterJSON {
		var cs []counterJSON
		for _, p := range snap.Ports {
			for _, c := range p.Counters {
				cs = append(cs, counterJSON{c.Name, c.Source, c.Value, c.HasDelta, c.Delta, c.Unavailable, c.Err})
			}
		}
		return cs
	}
	r.Before = conv(tr.Add(s.Take(false)))
	out, err := exec.Command(traffic[0], traffic[1:]...).CombinedOutput()
	r.Traffic = string(out)
	if err != nil {
		r.Error = fmt.Sprintf("traffic: %v", err)
	}
	r.After = conv(tr.Add(s.Take(false)))
	return r
}
