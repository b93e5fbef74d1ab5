// Package tools holds ibkey's development-only commands; none of them is part of the
// shipped binary (cmd/ibkey imports nothing below internal/tools):
//
//   - mkhost: writes the fixture sysfs trees and the demo host (`make fixtures`) and the
//     large benchmark hosts (scripts/bench).
//   - fattree: writes a two-level fat-tree topology for ibsim (scripts/bench-sweep).
//   - partconfgen: writes a large valid partitions.conf for benchmarks (scripts/bench).
package tools
