package query

import (
	"errors"
	"fmt"

	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fsread"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// ReadFabricFile reads a saved sweep (`fabric discover -o json > FILE`) for
// --fabric-file. The read is bounded by fabric.MaxFabricFileSize and refuses FIFOs,
// devices and other special files without blocking (fsread); every problem is bad input
// (*UsageError, exit 2) naming the file. Node descriptions enter the model
// terminal-safe (textsafe.String), as those read from the fabric do.
func ReadFabricFile(path string) (*fabric.Fabric, error) {
	fh, err := fsread.Open(path, fabric.MaxFabricFileSize, "a fabric file")
	if err != nil {
		return nil, &UsageError{Msg: textsafe.Message(fmt.Sprintf("--fabric-file: %v", err))}
	}
	defer fh.Close()
	f, err := fabric.DecodeFabric(fh)
	if err != nil {
		var fe *fabric.FabricFileError
		if errors.As(err, &fe) {
			return nil, &UsageError{Msg: textsafe.Message(fmt.Sprintf("--fabric-file %s: %s", path, fe.Problem))}
		}
		return nil, &UsageError{Msg: textsafe.Message(fmt.Sprintf("--fabric-file %s: %v", path, err))}
	}
	for _, n := range f.Nodes {
		n.Description = textsafe.String(n.Description)
	}
	return f, nil
}
