// Command fattree writes a generated two-level fat tree topology (lab.FatTree) for ibsim,
// for scripts that start their own simulator (scripts/bench-sweep).
//
//	go run ./internal/tools/fattree -leaves 24 -spines 8 -hcas 20 > fattree-512.net
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ibkey/ibkey/internal/lab"
)

func main() {
	leaves := flag.Int("leaves", 4, "leaf switches")
	spines := flag.Int("spines", 2, "spine switches, each linked to every leaf")
	hcas := flag.Int("hcas", 8, "single-port CAs per leaf")
	flag.Parse()
	if *leaves < 1 || *spines < 1 || *hcas < 1 || *hcas+*spines > 254 || *leaves > 254 {
		fmt.Fprintln(os.Stderr, "gen: want leaves 1-254, spines >= 1, hcas >= 1, hcas+spines <= 254 (switch ports)")
		os.Exit(2)
	}
	fmt.Print(lab.FatTree(*leaves, *spines, *hcas))
}
