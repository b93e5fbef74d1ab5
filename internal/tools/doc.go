// Package tools holds ibkey's development-only code; none of it is part of the shipped
// binary (only cmd/ibkey's tests import anything below internal/tools):
//
//   - mkhost: writes the fixture sysfs trees and the demo host (`make fixtures`) and the
//     large benchmark hosts (scripts/bench).
//   - fattree: writes a two-level fat-tree topology for ibsim (scripts/bench-sweep).
//   - partconfgen: writes a large valid partitions.conf for benchmarks (scripts/bench).
//   - manpage: finishes the man pages cmd/ibkey's gendocs test generates.
package tools
