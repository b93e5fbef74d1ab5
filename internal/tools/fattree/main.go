// Command fattree writes a generated two-level fat tree: the topology for ibsim
// (lab.FatTree), for scripts that start their own simulator (scripts/bench-sweep), or
// with -fabric the fabric file a sweep of it gives (fabrictest.FatTree), for
// scripts/bench-fabric.
//
//	go run ./internal/tools/fattree -leaves 24 -spines 8 -hcas 20 > fattree-512.net
//	go run ./internal/tools/fattree -leaves 208 -spines 12 -hcas 23 -fabric > fabric-5004.json
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fabric/fabrictest"
	"github.com/ibkey/ibkey/internal/lab"
)

func main() {
	leaves := flag.Int("leaves", 4, "leaf switches")
	spines := flag.Int("spines", 2, "spine switches, each linked to every leaf")
	hcas := flag.Int("hcas", 8, "single-port CAs per leaf")
	asFabric := flag.Bool("fabric", false, "write the fabric file of a sweep of it, not the topology")
	flag.Parse()
	if *leaves < 1 || *spines < 1 || *hcas < 1 || *hcas+*spines > 254 || *leaves > 254 {
		fmt.Fprintln(os.Stderr, "gen: want leaves 1-254, spines >= 1, hcas >= 1, hcas+spines <= 254 (switch ports)")
		os.Exit(2)
	}
	if *asFabric {
		if err := fabric.EncodeFabric(os.Stdout, fabrictest.FatTree(*leaves, *spines, *hcas)); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	fmt.Print(lab.FatTree(*leaves, *spines, *hcas))
}
