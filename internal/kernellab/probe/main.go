// Command probe is a test-only program the kernel-lab test runs inside the guest (built
// with CGO_ENABLED=0 on the host, visible in the guest through the shared root). Each
// subcommand prints one JSON object on stdout for the test to compare with the
// kernel's own tools:
//
//	probe verbs DEV PORT               ibkey's verbs reader: devices, port attributes, P_Key 0
//	probe watch DEV PORT -- CMD ARGS   the sampler with the verbs source, one sample
//	                                   before and one after running CMD (traffic), and
//	                                   the tracker's deltas
//	probe umad DEV PORT                the umad interface: ibkey's OpenUmad, and a GMP
//	                                   round trip between two agents on the port
package main

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

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: probe verbs|watch|umad DEV PORT [-- CMD...]")
		os.Exit(2)
	}
	dev := os.Args[2]
	port, err := strconv.Atoi(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe: bad port:", err)
		os.Exit(2)
	}
	var out any
	switch os.Args[1] {
	case "verbs":
		out = probeVerbs(dev, port)
	case "watch":
		if len(os.Args) < 6 || os.Args[4] != "--" {
			fmt.Fprintln(os.Stderr, "usage: probe watch DEV PORT -- CMD ARGS")
			os.Exit(2)
		}
		out = probeWatch(dev, port, os.Args[5:])
	case "umad":
		out = probeUmad(dev, port)
	default:
		fmt.Fprintln(os.Stderr, "probe: unknown subcommand", os.Args[1])
		os.Exit(2)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(1)
	}
}

type verbsResult struct {
	Available bool              `json:"available"`
	Error     string            `json:"error,omitempty"`
	Devices   []string          `json:"devices"`
	Port      *verbs.PortAttr   `json:"port,omitempty"`
	PKey0     string            `json:"pkey0,omitempty"`
	Steps     map[string]string `json:"steps"`
}

func probeVerbs(dev string, port int) verbsResult {
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

func probeWatch(dev string, port int, traffic []string) watchResult {
	var r watchResult
	h := &query.Host{Sys: ibverbs.Open("/sys")}
	s, err := query.NewSampler(h, []query.Selector{{Device: dev, Port: port, HasPort: true}}, time.Now)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	lib, oerr := query.OpenVerbs()
	vc := query.NewVerbsCounters(lib, oerr)
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
