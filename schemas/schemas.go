// Package schemas holds the JSON Schemas (draft 2020-12) of ibkey's JSON output, one
// file per document (<command>.schema.json) and common.schema.json for the shared
// vocabulary (cmd/ibkey/internal/cmdutil/jsonschema.go describes it). The tests
// validate every command's JSON against them; scripts may too.
package schemas

import "embed"

// FS holds the schema files.
//
//go:embed *.schema.json
var FS embed.FS

// Base is the URL the schemas' $id values start with.
const Base = "https://github.com/ibkey/ibkey/schemas/"
