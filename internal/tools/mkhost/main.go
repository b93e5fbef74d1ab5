// Command mkhost writes a fixture sysfs tree: `mkhost -fixture mlx5 -o DIR`, or the
// benchmark host `mkhost -large 16x2x128 -o DIR`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ibkey/ibkey/internal/fakesysfs"
)

// fixtures are the trees -fixture names.
var fixtures = map[string]func() fakesysfs.Host{
	"mlx5": fakesysfs.MLX5, "simulator": fakesysfs.Simulator, "cantalk": fakesysfs.CanTalk,
	"dangling": fakesysfs.Dangling, "odd": fakesysfs.Odd, "demo": fakesysfs.Demo,
}

func main() {
	fixture := flag.String("fixture", "", "mlx5, simulator, cantalk, dangling, odd or demo")
	large := flag.String("large", "", "DEVICESxPORTSxENTRIES, e.g. 16x2x128")
	out := flag.String("o", "", "output directory (must not exist)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "mkhost: -o DIR is required")
		os.Exit(2)
	}
	if _, err := os.Stat(*out); err == nil {
		fmt.Fprintf(os.Stderr, "mkhost: %s exists; remove it first\n", *out)
		os.Exit(2)
	}
	var h fakesysfs.Host
	if *large != "" {
		var d, p, e int
		if _, err := fmt.Sscanf(*large, "%dx%dx%d", &d, &p, &e); err != nil || d < 1 || p < 1 || e < 1 {
			fmt.Fprintf(os.Stderr, "mkhost: -large %q: want DEVICESxPORTSxENTRIES\n", *large)
			os.Exit(2)
		}
		h = fakesysfs.Large(d, p, e)
	} else if f := fixtures[*fixture]; f != nil {
		h = f()
	} else {
		fmt.Fprintf(os.Stderr, "mkhost: -fixture %q: want mlx5, simulator, cantalk, dangling, odd or demo\n", *fixture)
		os.Exit(2)
	}
	if err := fakesysfs.Write(*out, h); err != nil {
		fmt.Fprintln(os.Stderr, "mkhost:", err)
		os.Exit(1)
	}
}
