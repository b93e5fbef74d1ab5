package query

import (
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fsread"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// ReadFabricFile reads a saved sweep (`fabric discover -o json > FILE`). The read is
// bounded by fabric.MaxFabricFileSize and refuses FIFOs, devices and other special files
// without blocking (fsread); every problem is bad input (*UsageError, exit 2) wrapping a
// *FabricFileError that names the file. Node descriptions enter the model terminal-safe
// (textsafe.Normalize), as those read from the fabric do.
func ReadFabricFile(path string) (*fabric.Fabric, error) {
	fh, err := fsread.Open(path, fabric.MaxFabricFileSize, "a fabric file")
	if err != nil {
		return nil, fabricFileError(&FabricFileError{Err: err})
	}
	defer fh.Close()
	f, err := fabric.DecodeFabric(fh)
	if err != nil {
		return nil, fabricFileError(&FabricFileError{Path: path, Err: err})
	}
	for _, n := range f.Nodes {
		// The file holds what ibkey wrote (already escaped) or hand-edited text:
		// Normalize keeps the one and escapes the other.
		n.Description = textsafe.Normalize(n.Description)
	}
	return f, nil
}

func fabricFileError(e *FabricFileError) error {
	return &UsageError{Msg: textsafe.Message(e.Error()), Err: e}
}
